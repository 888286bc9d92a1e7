"""Binlog positions: where an event starts, ordered across rotated files.

Binlog file names end in a zero-padded sequence number (``mysql-bin.000042``), so ordering by
(sequence, name, offset) matches the server's write order. Names without a numeric suffix sort by name.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = ["BinlogPosition", "file_sequence"]

_SEQ = re.compile(r"\.(\d+)$")


@functools.lru_cache(maxsize=4096)     # asked per event and per row batch, of a handful of names
def file_sequence(name: str) -> int:
    """The numeric suffix of a binlog file name (``mysql-bin.000042`` -> 42), or -1 when there is none."""
    base = name.rsplit("/", 1)[-1]
    m = _SEQ.search(base)
    return int(m.group(1)) if m else -1


@dataclass(frozen=True, slots=True)
class BinlogPosition:
    """A point in the binlog: file base name and byte offset of an event's first header byte."""

    file: str
    offset: int

    def sort_key(self) -> tuple[int, str, int]:
        base = self.file.rsplit("/", 1)[-1]
        return (file_sequence(base), base, self.offset)

    def __lt__(self, other: BinlogPosition) -> bool:
        return self.sort_key() < other.sort_key()

    def __le__(self, other: BinlogPosition) -> bool:
        return self.sort_key() <= other.sort_key()

    def __gt__(self, other: BinlogPosition) -> bool:
        return self.sort_key() > other.sort_key()

    def __ge__(self, other: BinlogPosition) -> bool:
        return self.sort_key() >= other.sort_key()

    def __str__(self) -> str:
        return f"{self.file}:{self.offset}"
