"""Reading binlog files from disk: a thin loop around the sans-IO ``BinlogDecoder``.

Strategy: each file is read in fixed-size chunks (memory stays flat whatever the file size) and fed to a
fresh decoder, since every binlog file starts with its own magic and FORMAT_DESCRIPTION. Many files are
read in rotation order (numeric suffix, as the server numbers them). gzip-compressed files are detected
by their magic bytes and read transparently. Errors come from the decoder with the file name filled in.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from binlog_model.errors import ConfigError, DecodeError, DecoderStateError
from binlog_model.position import file_sequence
from binlog_model.wire.decoder import NEED_DATA, BinlogDecoder
from binlog_model.wire.events import RotateEvent

__all__ = ["iter_events", "open_binlog", "sort_binlog_files"]

_GZIP_MAGIC = b"\x1f\x8b"

PathLike = str | os.PathLike[str]


def sort_binlog_files(paths: Iterable[PathLike]) -> list[Path]:
    """Order binlog files as the server wrote them: by numeric suffix, then by name."""
    return sorted((Path(p) for p in paths), key=lambda p: (file_sequence(p.name), p.name))


def open_binlog(path: PathLike) -> IO[bytes] | gzip.GzipFile:
    """Open a binlog file for reading, gunzipping it transparently when it starts with the gzip magic.

    Raises ``ConfigError`` when the file cannot be opened."""
    try:
        fh: IO[bytes] = open(path, "rb")  # noqa: SIM115 - returned to the caller, who closes it
        magic = fh.read(2)
        fh.seek(0)
    except OSError as err:
        raise ConfigError(f"cannot open binlog file {path}: {err}") from err
    if magic == _GZIP_MAGIC:
        return gzip.GzipFile(fileobj=fh, mode="rb")
    return fh


def iter_events(paths: PathLike | Iterable[PathLike], *, verify_checksum: bool = True,
                chunk_size: int = 1 << 20, skip_types: frozenset[int] = frozenset(),
                sort: bool = True, strict_rotation: bool = False,
                raw_undecodable: bool = False) -> Iterator[Any]:
    """Yield the events of one binlog file, or of several in rotation order.

    Each event's ``header.file`` is the file's path as given and ``header.offset`` its position there.
    With ``sort`` (default) several files are ordered by numeric suffix; pass ``sort=False`` to keep the
    given order. With ``strict_rotation`` a ROTATE_EVENT at the end of a file must name the next file
    given, else ``DecoderStateError`` (a gap in the sequence). ``raw_undecodable`` (diagnostics only) yields
    an event whose body does not decode as ``UndecodableEvent`` and goes on (see ``BinlogDecoder``).

    Raises ``ConfigError`` (unreadable file, bad chunk size) and the decoder's ``DecodeError`` subclasses
    (``BadMagicError``, ``TruncatedEventError``, ``ChecksumMismatchError`` ...) naming the file. gzip
    corruption becomes a ``DecodeError``.
    """
    if chunk_size <= 0:
        raise ConfigError(f"chunk_size must be positive, got {chunk_size}")
    if isinstance(paths, str | os.PathLike):
        files = [Path(paths)]
    else:
        files = sort_binlog_files(paths) if sort else [Path(p) for p in paths]
    expected_next: str | None = None
    for path in files:
        name = str(path)
        if strict_rotation and expected_next is not None and path.name != expected_next:
            raise DecoderStateError(f"the previous file rotates to {expected_next!r} but the next file "
                                    f"given is {path.name!r}: files are missing from the sequence")
        expected_next = None
        for event in _iter_file(path, name, verify_checksum, chunk_size, skip_types, raw_undecodable):
            if isinstance(event, RotateEvent) and event.header.inner_index is None:
                expected_next = event.next_file
            yield event


def _iter_file(path: Path, name: str, verify_checksum: bool, chunk_size: int,
               skip_types: frozenset[int], raw_undecodable: bool = False) -> Iterator[Any]:
    decoder = BinlogDecoder(file=name, verify_checksum=verify_checksum, skip_types=skip_types,
                            raw_undecodable=raw_undecodable)
    with open_binlog(path) as fh:
        while True:
            try:
                chunk = fh.read(chunk_size)
            except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as err:
                raise DecodeError(f"cannot read the file: {err}", file=name, offset=decoder.offset) from err
            decoder.receive_data(chunk)
            while (event := decoder.next_event()) is not NEED_DATA:
                yield event
            if not chunk:
                return
