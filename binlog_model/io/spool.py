"""``tail --spool DIR``: a raw mirror of the server's binlog files, as received over the replication protocol.

Strategy: every packet that is file content (``ReplicationPacket``, not the server's framing) is appended to
``DIR/<file name>`` at its offset, after the 4-byte magic for a file received from its start, so a closed
file is byte-identical to the server's and every batch command (and the Spark source) reads the spool as
an archive. A file switch fsyncs and closes the previous file; a commit of the tail fsyncs the open one
first (``sync``), so the spool always holds at least what the state committed. A restart cuts the spool
back to the committed position (``recover``: the resumed file truncated there, files after it removed),
and the resumed dump rewrites the rest: a torn tail from a kill never survives. A packet that lands
before the end of its file (the server re-sending after a reconnect) truncates the file there first.

Which files are whole is journalled in ``DIR/.spool.json`` (written atomically when a file is closed
after the server moved on to the next one). ``recover`` removes any file before the committed position
that the journal does not list (one a run without ``--spool``, or a GTID dump, went past), so every
binlog-named file in the spool is whole, except the one being written.

A file the dump did not send from its start (``--from FILE:POS`` inside a file, or a GTID dump that skips
transactions on a server the state was not built on, or a run without ``--spool`` in between) cannot be
mirrored byte for byte: it is left out (listed in ``skipped``, and an older partial copy removed), never
written with a hole. (On the server the state was built on, what a GTID dump re-sends before the
committed position never reaches the spool: ``ReplicationSource`` drops it; what it skips past that
position, the rest of the file or the events up to the next transaction, ``ReplicationSource`` reads by
position for the spool.)

One spool mirrors one server (``follow``: its ``server_uuid``, or its address, kept in the journal): after
a failover the new server's files would carry the same names with other bytes, so the tail is told to use
another directory.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import IO, Any, Final

from binlog_model.errors import ConfigError, ReplicationError
from binlog_model.io.documents import fsync_dir, read_json, write_json_atomic

__all__ = ["Spool"]

MAGIC: Final = b"\xfebin"
JOURNAL: Final = ".spool.json"
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}")


class Spool:
    """The mirror directory (see the module docstring)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        if self.directory.exists() and not self.directory.is_dir():
            raise ConfigError(f"--spool must be a directory: {self.directory} is a file")
        self.directory.mkdir(parents=True, exist_ok=True)
        self._file: str | None = None
        self._fh: IO[bytes] | None = None
        self._size = 0
        self._closed = ""
        self.skipped: list[str] = []
        journal = self.directory / JOURNAL
        try:
            saved = read_json(journal) if journal.exists() else {}
            self.whole: set[str] = set(saved.get("whole", ()))
            self.server: str | None = saved.get("server")
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
            raise ConfigError(f"cannot read the spool journal {journal}: {err}") from err

    def follow(self, server: str) -> None:
        """The server whose files this spool mirrors (its ``server_uuid``, or its address for MariaDB):
        recorded once; another server (the tail moved to a replica) is a ``ConfigError``, since its files
        carry the same names with other bytes."""
        if self.server is None:
            self.server = server
            self._journal()
        elif self.server != server:
            raise ConfigError(f"the spool {self.directory} mirrors the binlogs of {self.server}, and the "
                              f"tail now follows {server} (another server: a failover?); give it a new "
                              "--spool directory")

    def _path(self, name: str) -> Path:
        if not _NAME.fullmatch(name):
            raise ReplicationError(f"the server named a binlog file {name!r}, which is no plain file name: "
                                   "not written to the spool")
        return self.directory / name

    def recover(self, file: str, offset: int) -> None:
        """Cut the spool back to the committed position ``file:offset``: that file truncated there (when
        longer), later files removed."""
        from binlog_model.position import file_key
        here = file_key(file)
        for path in self.directory.iterdir():
            if not path.is_file() or not _NAME.fullmatch(path.name):
                continue
            try:
                key = file_key(path.name)
            except Exception:       # not a binlog name: not ours
                continue
            if key > here or (key < here and path.name not in self.whole):
                path.unlink()           # past the commit, or a file some run went past without spooling
                self.whole.discard(path.name)
            elif path.name == file and path.stat().st_size > offset:
                with open(path, "r+b") as fh:
                    fh.truncate(offset)
                    os.fsync(fh.fileno())
        self._journal()
        fsync_dir(self.directory)

    def _journal(self) -> None:
        write_json_atomic(self.directory / JOURNAL, {"whole": sorted(self.whole), "server": self.server})

    def write(self, packet: Any) -> None:
        """Append one content packet (``file``, ``offset``, ``raw``) at its place."""
        if packet.file != self._file:
            self._open(packet.file, packet.offset)
        if self._fh is None:
            return                          # a file not received from its start: left out
        if packet.offset != self._size:
            if packet.offset > self._size:
                # a GTID dump skipping the transactions of its set (the first file of a dump on a server
                # the state was not built on): this file cannot be a byte-identical copy; left out
                self._leave_out(packet.file)
                return
            self._fh.truncate(packet.offset)
            self._fh.seek(packet.offset)
            self._size = packet.offset
        self._fh.write(packet.raw)
        self._size += len(packet.raw)

    def _open(self, name: str, offset: int) -> None:
        if self._fh is not None and self._file is not None:
            # the server moved on to the next file: the one before is whole
            self.close()
            assert self._file is None
            self.whole.add(self._closed)
            self._journal()
        self.close()
        self._file = name
        path = self._path(name)
        size = path.stat().st_size if path.exists() else 0
        if offset > max(size, 4) or (offset > 4 and size < 4):
            # the dump starts past what we have of this file: it cannot become a byte-identical copy
            self._leave_out(name)
            return
        fh = open(path, "r+b" if path.exists() else "w+b")   # noqa: SIM115 - kept open across writes
        if size < 4:
            fh.truncate(0)
            fh.write(MAGIC)
            size = 4
        fh.seek(size)
        self._fh, self._size = fh, size
        fsync_dir(self.directory)

    def ended(self, name: str, size: int) -> None:
        """The tail committed at the end of ``name`` (past its ROTATE): a copy of exactly ``size`` bytes is
        whole, even when the next file's first packet, which would have told, never arrives in this run (a
        kill right after the commit)."""
        if name in self.whole or (self._fh is not None and self._file == name and self._size != size):
            return
        path = self._path(name)
        if path.is_file() and path.stat().st_size == size:
            self.whole.add(name)
            self._journal()

    def _leave_out(self, name: str) -> None:
        """``name`` is not mirrored (listed in ``skipped``): what the spool had of it goes, and packets of
        it are ignored until the next file."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        self.skipped.append(name)
        self.whole.discard(name)
        self._path(name).unlink(missing_ok=True)

    def sync(self) -> None:
        """Flush and fsync the open file (before the tail commits its state)."""
        if self._fh is not None:
            self._fh.flush()
            os.fsync(self._fh.fileno())

    def flushed_fd(self) -> int | None:
        """Flush the open file to the OS and return a new descriptor of it, for an fsync on another thread
        (the caller closes it); None when no file is open."""
        if self._fh is None:
            return None
        self._fh.flush()
        return os.dup(self._fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self.sync()
            self._fh.close()
        self._closed = self._file or ""
        self._fh, self._file, self._size = None, None, 0
