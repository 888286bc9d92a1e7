"""Which events of the input a run outputs, as ``mysqlbinlog`` names the range: ``--start-position``,
``--stop-position``, ``--start-datetime``, ``--stop-datetime``.

Strategy: an ``EventRange`` is asked about every event in binlog order (``admits``) and answers as
``mysqlbinlog`` (MySQL 9.7's and MariaDB's, checked against both) decides what to print:
- ``--start-position N`` applies to the first file given: its events that start before ``N`` are left out
  (``mysqlbinlog`` seeks there after the FORMAT_DESCRIPTION, which it prints all the same).
- ``--stop-position N`` applies to the last file given: the first event there that starts at ``N`` or later
  ends the output.
- ``--start-datetime T``: the output starts at the first event whose timestamp is ``T`` or later; the events
  after it are output whatever their own timestamps (a latch, not a per-event test).
- ``--stop-datetime T``: the first event whose timestamp is ``T`` or later ends the output.
Datetimes are read in the machine's local time zone, as ``mysqlbinlog`` reads them, unless they carry an
offset (``2026-11-28 10:00:00+00:00``). The range only decides what is output: ``events`` still replays the
DDL before the start, so the schema stays right (see ``StatementAssembler``).
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field

from binlog_model.errors import ConfigError

__all__ = ["EventRange", "parse_datetime"]


def parse_datetime(text: str, *, option: str) -> int:
    """Epoch seconds of ``2026-11-28 10:00:00`` (local time) or ``2026-11-28T10:00:00+02:00``;
    ``ConfigError`` naming ``option`` otherwise."""
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ConfigError(f"{option} takes a date and time such as '2026-11-28 10:00:00' (local time, as "
                          f"mysqlbinlog reads it) or '2026-11-28T10:00:00+00:00', got {text!r}") from None
    return int(when.timestamp())     # a naive datetime is local time


@dataclass
class EventRange:
    """The range of one run over ``files`` (in rotation order: the first and last by base name)."""

    start_position: int | None = None
    stop_position: int | None = None
    start_datetime: int | None = None     # epoch seconds
    stop_datetime: int | None = None
    first_file: str = ""
    last_file: str = ""
    stopped: bool = field(default=False, init=False)
    _started: bool = field(default=False, init=False)

    @classmethod
    def parse(cls, files: list[str] | tuple[str, ...], *, start_position: int | None = None,
              stop_position: int | None = None, start_datetime: str | None = None,
              stop_datetime: str | None = None) -> EventRange | None:
        """The range the options give over ``files`` (rotation order), or None when none is given.
        ``ConfigError`` for a datetime that does not parse or a range that is empty by construction."""
        if start_position is stop_position is start_datetime is stop_datetime is None:
            return None
        names = [os.path.basename(os.fspath(f).rstrip("/")) for f in files]
        start = None if start_datetime is None else parse_datetime(start_datetime, option="--start-datetime")
        stop = None if stop_datetime is None else parse_datetime(stop_datetime, option="--stop-datetime")
        found = cls(start_position, stop_position, start, stop, names[0] if names else "",
                    names[-1] if names else "")
        if (len(names) == 1 and start_position is not None and stop_position is not None
                and stop_position <= start_position):
            raise ConfigError(f"--stop-position {stop_position} is not after --start-position "
                              f"{start_position} in the one file given: nothing would be output")
        if (found.start_datetime is not None and found.stop_datetime is not None
                and found.stop_datetime <= found.start_datetime):
            raise ConfigError("--stop-datetime is not after --start-datetime: nothing would be output")
        return found

    def admits(self, file: str | None, offset: int, timestamp: int, *, always: bool = False) -> bool:
        """Whether the event at ``offset`` of ``file`` (base name or path), stamped ``timestamp``, is output.
        Call it for every event in binlog order. ``always``: a FORMAT_DESCRIPTION, which ``mysqlbinlog``
        prints unless the output has stopped."""
        name = os.path.basename(file) if file else ""
        if (self.start_position is not None and name == self.first_file and offset < self.start_position
                and not always):
            return False                 # never read by mysqlbinlog: it cannot stop or start anything
        if self.stopped:
            return False
        if ((self.stop_datetime is not None and timestamp >= self.stop_datetime)
                or (self.stop_position is not None and name == self.last_file
                    and offset >= self.stop_position)):
            self.stopped = True
            return False
        if self.start_datetime is not None and not self._started:
            if timestamp < self.start_datetime:
                return always
            self._started = True
        return True

    def admitted_until(self, file: str | None, offset: int) -> int | None:
        """Where the events from ``offset`` of ``file`` on stop being output for sure: every event that
        starts before the returned offset (-1: no bound in this file) is admitted, and asking ``admits``
        about it would change nothing. None when that cannot be said from here (a datetime bound, or before
        the start position): then every event must be asked about. For the statement lane
        (``resolve.lane``), which reads runs of events without asking about each."""
        name = os.path.basename(file) if file else ""
        if (self.stopped or self.stop_datetime is not None
                or (self.start_datetime is not None and not self._started)
                or (self.start_position is not None and name == self.first_file
                    and offset < self.start_position)):
            return None
        if self.stop_position is not None and name == self.last_file:
            return self.stop_position
        return -1
