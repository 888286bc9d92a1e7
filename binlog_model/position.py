"""Where an event starts in the binlog, and the order of binlog files and positions across rotated files.

Binlog file names end in a zero-padded sequence number (``mysql-bin.000042``), so ordering by
(sequence, name, offset) matches the server's write order. Names without a numeric suffix sort by name.
``file_key`` and ``position_key`` are those orders as plain tuples; ``EventPosition`` is a place an event
starts at (what the schema history is keyed by), ordered by ``position_key``. The output model's position
of an event (file, offset, next offset, index inside a compressed transaction) is the protobuf message
``binlog_model.messages.BinlogPosition``; where a run stopped, and resumes, is ``runs.source.Position``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = ["EventPosition", "file_key", "file_sequence", "position_key"]

_SEQ = re.compile(r"\.(\d+)$")


@functools.lru_cache(maxsize=4096)     # asked per event and per row batch, of a handful of names
def file_sequence(name: str) -> int:
    """The numeric suffix of a binlog file name (``mysql-bin.000042`` -> 42), or -1 when there is none."""
    base = name.rsplit("/", 1)[-1]
    m = _SEQ.search(base)
    return int(m.group(1)) if m else -1


def file_key(name: str) -> tuple[int, str]:
    """A binlog file's place in rotation order: (numeric suffix, base name) of a name, path or URI."""
    base = name.rsplit("/", 1)[-1]
    return (file_sequence(base), base)


def position_key(file: str, offset: int) -> tuple[int, str, int]:
    """The place of ``offset`` of ``file`` in binlog order, across rotated files."""
    return (*file_key(file), offset)


@dataclass(frozen=True, slots=True)
class EventPosition:
    """Where an event starts: file base name and byte offset of its first header byte, ordered across
    rotated files (``position_key``)."""

    file: str
    offset: int

    def sort_key(self) -> tuple[int, str, int]:
        return position_key(self.file, self.offset)

    def __lt__(self, other: EventPosition) -> bool:
        return self.sort_key() < other.sort_key()

    def __le__(self, other: EventPosition) -> bool:
        return self.sort_key() <= other.sort_key()

    def __gt__(self, other: EventPosition) -> bool:
        return self.sort_key() > other.sort_key()

    def __ge__(self, other: EventPosition) -> bool:
        return self.sort_key() >= other.sort_key()

    def __str__(self) -> str:
        return f"{self.file}:{self.offset}"
