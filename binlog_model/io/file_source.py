"""Binlog files as an ``EventSource`` (``binlog_model.runs.source``): whole files, local or URIs, resumed at
a saved position, or one byte range of a file (a Spark slice).

Strategy: the one file reader (``io.files.SliceReader``: fixed-size chunks into a fresh ``BinlogDecoder``
per file) with a ``BoundaryTracker`` per file, so the markers come from what the decoder read: the
FORMAT_DESCRIPTION's raw bytes right after its event, ROTATE's target, transaction starts and ends, and
after each file a ``FileEnd`` saying where decoding stopped and how many trailing bytes were a partial
event. A file is resumed at an event boundary with the raw bytes of its FORMAT_DESCRIPTION
(``BinlogDecoder.resume``); ``plan`` checks the files given against the ``Resume`` (none missing before the
position, the resumed file the same one: its FORMAT_DESCRIPTION and size). With ``partial_tail`` the last
file may end inside an event (the active binlog of a running server): decoding stops before it instead of
raising ``TruncatedEventError``, and the next run resumes there.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from binlog_model.errors import ConfigError, DecodeError, TruncatedEventError
from binlog_model.io.files import SliceReader, base_name, binlog_size, is_uri, open_binlog, sort_binlog_names
from binlog_model.io.state import StateMismatchError
from binlog_model.position import file_key
from binlog_model.runs.source import (
    Boundary,
    FileBegin,
    FileEnd,
    FormatDescription,
    Resume,
)
from binlog_model.runs.transactions import BoundaryTracker
from binlog_model.wire.decoder import Lane
from binlog_model.wire.events import Event
from binlog_model.wire.parsers.control import format_description_difference

__all__ = ["FileSource", "FileStart", "format_description_of"]

PathLike = str | os.PathLike[str]


@dataclass(frozen=True, slots=True)
class FileStart:
    """Where to read one file: from ``offset`` (0: its magic; else an event boundary, with the file's
    FORMAT_DESCRIPTION bytes) to ``end`` (None: the end of the file)."""

    path: str
    offset: int = 0
    format_description: bytes | None = None
    end: int | None = None


class FileSource:
    """Binlog files (or one byte range) as an ``EventSource``. ``paths``: files in any order (read in
    rotation order unless ``sort`` is False); names as given, local paths normalised as ``Path`` spells
    them, URIs untouched. ``partial_tail``: the last file may end inside an event (see the module
    docstring). ``skip_types``, ``drop_skipped``, ``verify_skipped``, ``skip_transactions`` and
    ``raw_undecodable`` are ``io.files.SliceReader``'s.
    ``bytes_read``, ``files_done``, ``total_bytes`` and ``file_count`` are for a progress display."""

    def __init__(self, paths: PathLike | Iterable[PathLike], *, verify_checksum: bool = True,
                 partial_tail: bool = False, chunk_size: int = 1 << 20, sort: bool = True,
                 skip_types: frozenset[int] = frozenset(), raw_undecodable: bool = False,
                 drop_skipped: bool = False, verify_skipped: bool = True,
                 skip_transactions: bool = False) -> None:
        given = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
        names = [os.fspath(p) if is_uri(p) else str(Path(p)) for p in given]
        self.names = sort_binlog_names(dict.fromkeys(names)) if sort else names
        self.verify_checksum = verify_checksum
        self.partial_tail = partial_tail
        self.chunk_size = chunk_size
        self.skip_types = skip_types
        self.drop_skipped = drop_skipped
        self.verify_skipped = verify_skipped
        self.skip_transactions = skip_transactions
        self.raw_undecodable = raw_undecodable
        self.files_done = 0
        self.lane: Lane | None = None     # the assembler's, set by the runner (resolve.lane)
        self._range: FileStart | None = None
        self._planned: tuple[Resume | None, list[FileStart]] | None = None
        self._reader: SliceReader | None = None
        self._done_bytes = 0

    @classmethod
    def byte_range(cls, path: PathLike, start: int, end: int | None, format_description: bytes | None, *,
                   verify_checksum: bool = True, chunk_size: int = 1 << 20,
                   skip_types: frozenset[int] = frozenset(), drop_skipped: bool = False,
                   partial_tail: bool = False) -> FileSource:
        """The events of ``[start, end)`` of one file (a Spark slice): ``start`` 0 or an event boundary
        with the file's FORMAT_DESCRIPTION bytes. ``partial_tail``: the range may end inside an event (a
        file still being written)."""
        source = cls([path], verify_checksum=verify_checksum, chunk_size=chunk_size, skip_types=skip_types,
                     drop_skipped=drop_skipped, partial_tail=partial_tail)
        source._range = FileStart(source.names[0], start, format_description, end)
        return source

    @property
    def total_bytes(self) -> int | None:
        """The bytes a read covers: the planned files from their start offsets (a gzip file's offsets count
        decompressed bytes, so its share is approximate), or the byte range."""
        if self._range is not None and self._range.end is not None:
            return self._range.end - self._range.offset
        starts = self._planned[1] if self._planned is not None else [FileStart(n) for n in self.names]
        return sum(max(binlog_size(s.path) - s.offset, 0) for s in starts)

    @property
    def file_count(self) -> int:
        """How many files a read covers (the planned ones once planned)."""
        return len(self._planned[1]) if self._planned is not None else len(self.names)

    @property
    def bytes_read(self) -> int:
        """Bytes read so far (whole chunks: updated as the reader reads, not per event)."""
        reader = self._reader
        return self._done_bytes + (reader.read_until - reader.start if reader is not None else 0)

    # --- planning -----------------------------------------------------------------------------------------

    def plan(self, resume: Resume | None = None) -> list[FileStart]:
        """The files (and the offset in each) a read starts at, checked against ``resume``: none missing,
        none changed under the saved position. Raises ``StateMismatchError``."""
        if self._planned is not None and self._planned[0] is resume:
            return self._planned[1]
        starts = self._plan(resume)
        self._planned = (resume, starts)
        return starts

    def _plan(self, resume: Resume | None) -> list[FileStart]:
        if self._range is not None:
            return [self._range]
        if resume is None:              # not a run that continues: no state to check against
            return [FileStart(n) for n in self.names]
        names = [base_name(n) for n in self.names]
        if len(set(names)) != len(names):   # a run's state knows files by their base name
            twice = sorted(n for n in names if names.count(n) > 1)
            raise ConfigError(f"two binlog files share a name: {twice}")
        pos = resume.position
        if pos is None:
            return [FileStart(n) for n in self.names]
        here = file_key(pos.file)
        starts: list[FileStart] = []
        for path in self.names:
            name = base_name(path)
            key = file_key(name)
            if key < here:
                if name not in resume.files:
                    raise StateMismatchError(f"{path} comes before the state's position {pos} but was never "
                                             "processed: this state started later in the sequence")
                continue
            if key == here:
                _check_same_file(path, pos.offset, pos.format_description)
                # Stopped before the file's FORMAT_DESCRIPTION was whole: read it from the start again.
                starts.append(FileStart(path, pos.offset if pos.offset > 4 else 0, pos.format_description))
            else:
                if not starts and pos.rotated_to not in (None, name):
                    raise StateMismatchError(f"the state stopped at {pos}, which rotates to "
                                             f"{pos.rotated_to}, but the next file given is {name}")
                if not starts and pos.rotated_to is None:
                    raise StateMismatchError(f"the state resumes inside {pos.file} at offset {pos.offset}: "
                                             "give that file too (its tail may hold more events)")
                starts.append(FileStart(path))
        return starts

    # --- reading ------------------------------------------------------------------------------------------

    def read(self, resume: Resume | None = None) -> Iterator[Event | Boundary]:
        return self.read_planned(self.plan(resume))

    def read_planned(self, starts: Sequence[FileStart]) -> Iterator[Event | Boundary]:
        """The events and markers of each planned file. ``partial_tail`` applies to the last file only: a
        truncated event anywhere else is damage and raises."""
        for n, start in enumerate(starts):
            last = n == len(starts) - 1
            try:
                yield from self._read_one(start, self.partial_tail and last)
            except TruncatedEventError as err:
                if last and not self.partial_tail and "input ends" in err.reason and self._range is None:
                    err.reason += ("; the last file ends inside an event (a binlog still being written?): "
                                   "pass --allow-incomplete-tail (allow_incomplete_tail=True) to stop before "
                                   "it")
                    err.args = (err._render(),)
                raise

    def _read_one(self, start: FileStart, partial_tail: bool) -> Iterator[Event | Boundary]:
        name = start.path
        if start.offset and start.format_description is None:
            raise DecodeError("resuming inside a file needs its FORMAT_DESCRIPTION event", file=name,
                              offset=start.offset)
        reader = SliceReader(name, start.offset, start.end, start.format_description,
                             verify_checksum=self.verify_checksum, chunk_size=self.chunk_size,
                             partial_tail=partial_tail, skip_types=self.skip_types,
                             raw_undecodable=self.raw_undecodable, drop_skipped=self.drop_skipped,
                             verify_skipped=self.verify_skipped, skip_transactions=self.skip_transactions)
        if self.lane is not None:
            reader.decoder.use_lane(self.lane)
        yield FileBegin(name, start.offset)
        if start.offset:
            yield FormatDescription(name, start.offset, start.format_description)
        self._reader = reader
        yield from BoundaryTracker(name).wrap(reader, reader.decoder)
        self._reader = None
        self._done_bytes += reader.read_until - start.offset
        self.files_done += 1
        decoder = reader.decoder
        yield FileEnd(name, decoder.offset, reader.read_until - decoder.offset)


def format_description_of(path: PathLike) -> bytes | None:
    """The raw FORMAT_DESCRIPTION event of a binlog file (header, body and checksum: what a read that starts
    inside the file needs, ``FileStart.format_description``), from the ``FormatDescription`` marker of a
    read of its head. None when the file has none among its first events (a binlog v1/v3 file, or one too
    short yet). Raises ``ConfigError`` for an unreadable file."""
    head = FileSource.byte_range(path, 0, None, None, verify_checksum=False, chunk_size=1 << 16,
                                 partial_tail=True)
    # (the read is left unfinished: its generator, and the file with it, close when this returns)
    for seen, item in enumerate(head.read()):
        if type(item) is FormatDescription:
            return item.raw
        if seen >= 8:        # the FORMAT_DESCRIPTION is a file's first event, right after FileBegin
            break
    return None


def _check_same_file(path: str, offset: int, fde: bytes | None) -> None:
    """The resumed file is the one the state read: at least as long as the saved offset, with the same
    FORMAT_DESCRIPTION."""
    with open_binlog(path) as fh:            # gunzips a compressed archive file transparently
        head = fh.read(4 + len(fde)) if fde is not None else b""
        gzipped = not isinstance(fh, io.BufferedReader)
    size = binlog_size(path)
    if not gzipped and size < offset:
        raise StateMismatchError(f"{path} has {size} bytes but the state has processed {offset} of it: the "
                                 "file was replaced or truncated (start a new --state directory)")
    differ = None if fde is None else format_description_difference(fde, head[4:])
    if differ is not None:
        raise StateMismatchError(f"{path} is not the file the state processed: its FORMAT_DESCRIPTION event "
                                 f"differs in {differ} (was the server reset, or the file replaced?); start "
                                 "a new --state directory")
