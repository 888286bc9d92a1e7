"""Reading binlog files from a saved position, and up to a half-written last event.

Strategy: the one file reader (``io.files.SliceReader``: fixed-size chunks into a fresh ``BinlogDecoder``
per file), with two additions that incremental runs need. A file can be resumed at an event boundary with
the raw bytes of its FORMAT_DESCRIPTION (``BinlogDecoder.resume``), and after each file a ``FileEnd``
marker says where decoding stopped, what the file rotates to, and how many trailing bytes were a partial
event. With ``partial_tail`` the last file may end inside an event (the active binlog of a running
server): decoding stops before it instead of raising ``TruncatedEventError``, and the next run resumes
there. ``StatementAssembler.feed`` ignores the markers, so the stream can be fed to it unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from binlog_model.errors import DecodeError, TruncatedEventError
from binlog_model.io.files import SliceReader
from binlog_model.wire.events import RotateEvent

__all__ = ["FileEnd", "FileStart", "format_description_of", "iter_from"]


@dataclass(frozen=True, slots=True)
class FileStart:
    """Where to start reading one file: ``offset`` 0 (from its magic) or an event boundary, with the
    file's FORMAT_DESCRIPTION bytes."""

    path: str
    offset: int = 0
    format_description: bytes | None = None


@dataclass(frozen=True, slots=True)
class FileEnd:
    """Emitted after the last whole event of a file. ``offset``: the end of that event (where a later run
    resumes); ``partial_bytes``: bytes after it that are an incomplete event (only with ``partial_tail``);
    ``rotated_to``: the next file named by a ROTATE event at the end, if any."""

    path: str
    offset: int
    partial_bytes: int
    rotated_to: str | None
    format_description: bytes | None


def iter_from(starts: Sequence[FileStart], *, verify_checksum: bool = True, partial_tail: bool = False,
              chunk_size: int = 1 << 20) -> Iterator[Any]:
    """The events of each file from its start, each file followed by its ``FileEnd``. ``partial_tail``
    applies to the last file only: a truncated event anywhere else is damage and raises."""
    for n, start in enumerate(starts):
        last = n == len(starts) - 1
        try:
            yield from _iter_one(start, verify_checksum, partial_tail and last, chunk_size)
        except TruncatedEventError as err:
            if last and not partial_tail and "input ends" in err.reason:
                err.reason += ("; the last file ends inside an event (a binlog still being written?): pass "
                               "--allow-incomplete-tail (allow_incomplete_tail=True) to stop before it")
                err.args = (err._render(),)
            raise


def _iter_one(start: FileStart, verify_checksum: bool, partial_tail: bool, chunk_size: int) -> Iterator[Any]:
    name = os.fspath(start.path)
    if start.offset and start.format_description is None:
        raise DecodeError("resuming inside a file needs its FORMAT_DESCRIPTION event", file=name,
                          offset=start.offset)
    reader = SliceReader(name, start.offset, None, start.format_description, verify_checksum=verify_checksum,
                         chunk_size=chunk_size, partial_tail=partial_tail)
    rotated_to: str | None = None
    for event in reader:
        if isinstance(event, RotateEvent) and event.header.inner_index is None:
            rotated_to = event.next_file
        yield event
    decoder = reader.decoder
    fde = start.format_description if start.offset else decoder.format_description_bytes
    yield FileEnd(name, decoder.offset, reader.read_until - decoder.offset, rotated_to, fde)


def format_description_of(path: str | os.PathLike[str]) -> bytes | None:
    """The raw FORMAT_DESCRIPTION event of a binlog file (what ``BinlogDecoder.resume`` needs), read from
    its first events; None for a file without one (binlog v1/v3)."""
    reader = SliceReader(path, verify_checksum=False, chunk_size=1 << 16, partial_tail=True)
    for seen, _ in enumerate(reader, start=1):
        # FORMAT_DESCRIPTION is the first event (after a v4 START on the oldest servers): stop early.
        if reader.decoder.format_description_bytes is not None or seen >= 4:
            break
    return reader.decoder.format_description_bytes
