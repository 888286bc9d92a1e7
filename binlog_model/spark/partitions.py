"""The DDL pre-pass and the slicing of binlog files into independent units of work.

Strategy: a binlog file can be decoded on its own once the schema in force at each of its positions is
known, because a transaction never spans files. ``scan_file`` reads one file cheaply: every TABLE_MAP and
rows event is returned by the decoder as a ``SkippedEvent`` (header and checksum checked, body not
parsed), and it keeps only what the schema replay needs (GTID, QUERY, XID events) plus the offsets where
transactions start and the file's FORMAT_DESCRIPTION bytes. Scans are independent, so they run in a
thread pool (the Spark driver) or anywhere. ``build_history`` then replays the kept events of every file
in binlog order through a ``StatementAssembler`` (the same DDL code path as the non-Spark pipeline, with
real positions), giving a ``SchemaHistory`` that executors receive as JSON. ``plan_slices`` cuts each file
at transaction starts into slices of about ``slice_bytes``; a slice after the first resumes the decoder
with the file's FORMAT_DESCRIPTION bytes (``BinlogDecoder.resume``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from binlog_model.errors import ConfigError, DecodeError
from binlog_model.io.files import binlog_size, list_binlog_files, open_binlog, sort_binlog_names
from binlog_model.resolve.assembler import StatementAssembler
from binlog_model.resolve.options import AssemblerOptions
from binlog_model.wire import NEED_DATA, BinlogDecoder, EventType
from binlog_model.wire import events as ev
from binlog_model.wire.events import ROWS_EVENT_TYPES
from schema_tracker.history import SchemaHistory

__all__ = ["MIN_AUTO_SLICE_BYTES", "FileScan", "Slice", "build_history", "expand_paths", "iter_slice_events",
           "plan_slices", "scan_file", "scan_files"]

# Row data and table maps are all the bytes of a binlog that the DDL replay never needs.
SKIP_FOR_DDL: frozenset[int] = frozenset(ROWS_EVENT_TYPES) | {int(EventType.TABLE_MAP_EVENT)}
# FORMAT_DESCRIPTION too: its server version picks the DDL rules (MySQL 8+ or MariaDB) the history follows.
_KEEP = (ev.FormatDescriptionEvent, ev.GtidEvent, ev.MariadbGtidEvent, ev.QueryEvent, ev.XidEvent,
         ev.XaPrepareEvent)
_CHUNK = 1 << 20
# Below this a task's fixed cost (worker hand-off, history lookup, decoder set-up) starts to show.
MIN_AUTO_SLICE_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class FileScan:
    """What the pre-pass learned about one file. ``events``: the GTID/QUERY/XID events in file order;
    ``tx_starts``: offsets where a transaction (its GTID, or BEGIN without GTID) or a DDL starts."""

    path: str
    size: int
    format_description: bytes | None
    events: tuple[Any, ...]
    tx_starts: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Slice:
    """A byte range ``[start, end)`` of one file to decode independently. ``end`` is None for "to EOF".
    ``file_index`` is the file's place in binlog order (the first field of the ordering key)."""

    path: str
    file_index: int
    start: int
    end: int | None
    format_description: bytes | None


def expand_paths(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[str]:
    """Files named by ``paths`` (local paths or URIs such as ``s3://bucket/binlogs/``): files, directories
    or prefixes (every ``*.NNNNNN`` binlog file in them) or globs, in binlog order. Local paths come back
    absolute, so executors in other working directories open the same files. Raises ``ConfigError`` when
    nothing matches."""
    items = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    found: list[str] = []
    for item in items:
        found.extend(list_binlog_files(item))
    if not found:
        raise ConfigError(f"no binlog files found in {[os.fspath(i) for i in items]}")
    return sort_binlog_names(dict.fromkeys(found))


def scan_file(path: str | os.PathLike[str], *, verify_checksum: bool = True) -> FileScan:
    """The cheap pass over one file (rows and table maps skipped by their header length)."""
    name = os.fspath(path)
    decoder = BinlogDecoder(file=name, verify_checksum=verify_checksum, skip_types=SKIP_FOR_DDL)
    kept: list[Any] = []
    starts: list[int] = []
    open_tx = False
    with open_binlog(name) as fh:
        while True:
            try:
                chunk = fh.read(_CHUNK)
            except (OSError, EOFError) as err:
                raise DecodeError(f"cannot read the file: {err}", file=name, offset=decoder.offset) from err
            decoder.receive_data(chunk)
            while (event := decoder.next_event()) is not NEED_DATA:
                if not isinstance(event, _KEEP) or event.header.inner_index is not None:
                    continue
                after_gtid = bool(kept) and isinstance(kept[-1], ev.GtidEvent | ev.MariadbGtidEvent)
                kept.append(event)
                offset = event.header.offset
                if isinstance(event, ev.FormatDescriptionEvent):
                    continue
                if isinstance(event, ev.GtidEvent | ev.MariadbGtidEvent):
                    starts.append(offset)
                    open_tx = True
                elif isinstance(event, ev.QueryEvent):
                    word = event.query.lstrip().split(None, 1)[0].upper() if event.query.strip() else ""
                    if word in ("COMMIT", "ROLLBACK"):
                        open_tx = False
                    elif not open_tx and not after_gtid:
                        starts.append(offset)      # BEGIN without GTID, or DDL as its own unit
                        open_tx = word in ("BEGIN", "XA")
                    elif after_gtid and word not in ("BEGIN", "XA"):
                        open_tx = False            # GTID + DDL: the DDL commits implicitly
                else:
                    open_tx = False
            if not chunk:
                break
    return FileScan(name, binlog_size(name), decoder.format_description_bytes, tuple(kept),
                    tuple(sorted(set(starts))))


def scan_files(paths: Sequence[str | os.PathLike[str]], *, verify_checksum: bool = True,
               workers: int | None = None) -> list[FileScan]:
    """``scan_file`` on every file, in parallel threads; results in the order of ``paths``."""
    if len(paths) <= 1:
        return [scan_file(p, verify_checksum=verify_checksum) for p in paths]
    with ThreadPoolExecutor(max_workers=workers or min(8, len(paths))) as pool:
        return list(pool.map(lambda p: scan_file(p, verify_checksum=verify_checksum), paths))


def build_history(scans: Sequence[FileScan], *, history: SchemaHistory | None = None,
                  options: AssemblerOptions | None = None) -> SchemaHistory:
    """Replay the DDL of ``scans`` (in binlog order) onto ``history`` with real positions and GTIDs.

    It runs the assembler itself on the kept events, so DDL is applied exactly as the non-Spark pipeline
    applies it (including the server charset adopted from the first QUERY). A transaction left open at the
    end is tolerated here: the real decode reports it."""
    base = options or AssemblerOptions()
    replay = StatementAssembler(history if history is not None else SchemaHistory(),
                                AssemblerOptions(source=base.source, allow_incomplete_tail=True))
    for scan in scans:
        for event in scan.events:
            for _ in replay.feed(event):
                pass
    for _ in replay.close():
        pass
    return replay.history


def plan_slices(scans: Sequence[FileScan], *, slice_bytes: int = 64 << 20, min_slices: int = 1
                ) -> list[Slice]:
    """Cut each file at transaction starts into slices of at least ``slice_bytes`` (the last may be
    shorter). The first slice of a file starts at 0 and reads the file header itself. ``min_slices``: make
    slices smaller (down to ``MIN_AUTO_SLICE_BYTES``) when the input would give fewer, so every core gets
    work (a few large files on many cores)."""
    if slice_bytes < 1 or min_slices < 1:
        raise ConfigError(f"slice_bytes and min_slices must be positive, got {slice_bytes}, {min_slices}")
    if min_slices > 1:
        total = sum(scan.size for scan in scans)
        slice_bytes = min(slice_bytes, max(MIN_AUTO_SLICE_BYTES, total // min_slices))
    out: list[Slice] = []
    for index, scan in enumerate(scans):
        cuts = [0]
        for start in scan.tx_starts:
            if start - cuts[-1] >= slice_bytes and scan.format_description is not None:
                cuts.append(start)
        for i, start in enumerate(cuts):
            end = cuts[i + 1] if i + 1 < len(cuts) else None
            out.append(Slice(scan.path, index, start, end, scan.format_description))
    return out


def iter_slice_events(piece: Slice, *, verify_checksum: bool = True) -> Iterator[Any]:
    """The decoded events of one slice (every event, rows included)."""
    name = piece.path
    if piece.start == 0:
        decoder = BinlogDecoder(file=name, verify_checksum=verify_checksum)
    else:
        assert piece.format_description is not None
        decoder = BinlogDecoder.resume(piece.format_description, piece.start, file=name,
                                       verify_checksum=verify_checksum)
    remaining = None if piece.end is None else piece.end - piece.start
    with open_binlog(name) as fh:
        if piece.start:
            fh.seek(piece.start)
        while True:
            size = _CHUNK if remaining is None else min(_CHUNK, remaining)
            try:
                chunk = fh.read(size) if size else b""
            except (OSError, EOFError) as err:
                raise DecodeError(f"cannot read the file: {err}", file=name, offset=decoder.offset) from err
            if remaining is not None:
                remaining -= len(chunk)
            decoder.receive_data(chunk)
            while (event := decoder.next_event()) is not NEED_DATA:
                yield event
            if not chunk:
                return
