"""The DDL pre-pass and the slicing of binlog files into independent units of work.

Strategy: a binlog file can be decoded on its own once the schema in force at each of its positions is known,
because a transaction never spans files. ``scan_file`` reads one file cheaply as an event source
(``io.file_source.FileSource``, the one file reader) passing over the DDL pass's types
(``ddl_pass.DDL_SKIP_TYPES``: every TABLE_MAP and rows event walked by its length, body not parsed,
checksum not checked: the tasks decode and check every event of their slice), and it keeps only what the
schema replay needs (FORMAT_DESCRIPTION, GTID, QUERY, XID events) plus what the source's markers say: the
offsets where transactions start, the file's FORMAT_DESCRIPTION bytes and where its last event ends. A scan
for the history only (``row_transactions=False``) has the decoder pass over each transaction of rows only
whole (``SkippedTransaction``: its start, its GTID, BEGIN and XID not parsed), which is most of a binlog.
A file that scan fails on is scanned again checking every checksum, so its error is the first damage's.
Scans are independent, so they run in a thread pool (the Spark driver) or anywhere. ``build_history`` then
replays the kept events of every file in binlog order through the one DDL pass
(``resolve.assembler.replay_ddl``, what the ``schema`` CLI and the library run too), giving a
``SchemaHistory`` that executors receive as JSON. ``plan_slices`` cuts each file at transaction starts into
slices of about ``slice_bytes``; ``slice_source`` reads one as the same event source (a byte range of the
file: a slice after the first resumes the decoder with the file's FORMAT_DESCRIPTION bytes), so a read
failure, gzip corruption included, is the reader's ``DecodeError``. """

from __future__ import annotations

import base64
import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from binlog_model.errors import BinlogError, ConfigError
from binlog_model.io.file_source import FileSource
from binlog_model.io.files import binlog_size, expand_paths, is_uri
from binlog_model.resolve.assembler import replay_ddl
from binlog_model.resolve.ddl_pass import DDL_SKIP_TYPES
from binlog_model.resolve.transactions import QueryKind, classify_query
from binlog_model.runs.source import (
    BOUNDARY_TYPES,
    FileEnd,
    FormatDescription,
    TransactionEnd,
    TransactionStart,
)
from binlog_model.wire import events as ev
from schema_tracker.history import SchemaHistory

if TYPE_CHECKING:
    from binlog_model.resolve.options import AssemblerOptions

__all__ = ["MIN_AUTO_SLICE_BYTES", "FileScan", "Slice", "auto_slice_bytes", "build_history", "expand_paths",
           "fork_scans", "iter_slice_events", "plan_slices", "scan_file", "scan_file_or_none", "scan_files",
           "slice_source"]

# What the DDL replay needs; FORMAT_DESCRIPTION too: its server version picks the DDL rules (MySQL 8+ or
# MariaDB) the history follows. A file's PREVIOUS_GTIDS / GTID_LIST: the one GtidRecorder makes a state's
# GTID set complete from them, as events --state does. Rows and table maps are skipped unparsed
# (DDL_SKIP_TYPES).
KEEP_TYPES = (ev.FormatDescriptionEvent, ev.GtidEvent, ev.MariadbGtidEvent, ev.QueryEvent, ev.XidEvent,
              ev.XaPrepareEvent, ev.PreviousGtidsEvent, ev.GtidListEvent)
_CHUNK = 1 << 20
# Below this a task's fixed cost (worker hand-off, history lookup, decoder set-up) starts to show.
MIN_AUTO_SLICE_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class FileScan:
    """What the pre-pass learned about one file. ``events``: the GTID/QUERY/XID events in file order;
    ``tx_starts``: offsets where a transaction (its GTID, or BEGIN without GTID) or a DDL starts; ``size``:
    the stored file's bytes; ``end``: where its last event ends, in binlog positions (a gzip file's
    decompressed length)."""

    path: str
    size: int
    format_description: bytes | None
    events: tuple[Any, ...]
    tx_starts: tuple[int, ...]
    end: int = 0


@dataclass(frozen=True, slots=True)
class Slice:
    """A byte range ``[start, end)`` of one file to decode independently. ``end`` is None for "to EOF".
    ``file_index`` is the file's place in binlog order (the first field of the ordering key)."""

    path: str
    file_index: int
    start: int
    end: int | None
    format_description: bytes | None

    def to_json(self) -> dict[str, Any]:
        """The slice as a JSON object (the FORMAT_DESCRIPTION base64): how a plan file and the stream's
        task rows carry it."""
        fde = self.format_description
        return {"path": self.path, "file_index": self.file_index, "start": self.start, "end": self.end,
                "format_description": None if fde is None else base64.b64encode(fde).decode("ascii")}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Slice:
        fde = doc["format_description"]
        return cls(doc["path"], doc["file_index"], doc["start"], doc["end"],
                   None if fde is None else base64.b64decode(fde))


def scan_file(path: str | os.PathLike[str], *, verify_checksum: bool = True,
              row_transactions: bool = True) -> FileScan:
    """The cheap pass over one file (rows and table maps skipped by their header length), read as an
    ``EventSource``: transaction starts, the FORMAT_DESCRIPTION bytes and the decoded end come from the
    source's markers. ``row_transactions=False``: leave out of ``events`` the units of work of rows only (see
    ``_rows_only``; the units are the ones the source's ``TransactionStart`` / ``TransactionEnd`` markers
    delimit), for a caller that needs only the schema history, not every GTID. Raises the
    reader's ``DecodeError`` for the first damaged event, skipped ones included."""
    name = os.fspath(path)
    try:
        return _scan(name, verify_checksum, row_transactions, lean=True)
    except BinlogError:
        # The lean walk checks less (no checksum of what it skips): the full one names the first damage.
        return _scan(name, verify_checksum, row_transactions, lean=False)


def _scan(name: str, verify_checksum: bool, row_transactions: bool, *, lean: bool) -> FileScan:
    """``scan_file``'s pass; ``lean``: skipped events' checksums not checked, and (``row_transactions``
    False) transactions of rows only passed over whole by the decoder (the reference: neither)."""
    source = FileSource([name], verify_checksum=verify_checksum, skip_types=DDL_SKIP_TYPES, drop_skipped=True,
                        chunk_size=_CHUNK, sort=False, verify_skipped=not lean,
                        skip_transactions=lean and not row_transactions)
    kept: list[Any] = []
    unit: list[Any] | None = None   # the kept events of the unit of work open (None: between units)
    starts: list[int] = []
    fde: bytes | None = None
    end = 0
    for item in source.read():
        kind = type(item)
        if kind not in BOUNDARY_TYPES:
            if kind is ev.SkippedTransaction or (isinstance(item, KEEP_TYPES)
                                                 and item.header.inner_index is None):
                (kept if unit is None else unit).append(item)
        elif isinstance(item, TransactionStart):
            if unit:                # a unit that never ended (a GTID over an open one): kept as it is
                kept.extend(unit)
            unit = []
            starts.append(item.offset)
        elif isinstance(item, TransactionEnd):
            if unit is not None and (row_transactions or not _rows_only(unit)):
                kept.extend(unit)
            unit = None
        elif isinstance(item, FormatDescription):
            fde = item.raw
        elif isinstance(item, FileEnd):
            end = item.offset
    if unit:                        # the file ends inside a transaction
        kept.extend(unit)
    return FileScan(name, binlog_size(name), fde, tuple(kept), tuple(sorted(set(starts))), end)


def _rows_only(unit: list[Any]) -> bool:
    """A unit of work whose kept events are only its GTID, BEGIN and commit (XID or COMMIT), or one the
    decoder passed over whole (``SkippedTransaction``): a transaction of rows (skipped unparsed), which
    changes no schema. Most of a binlog is those, so a scan for the history leaves them out, and the
    history's replay, and a pre-pass that ships its events between processes, do a fraction of the work.
    Anything else in a unit (a DDL, a SAVEPOINT, a statement-based DML, XA, a ROLLBACK) keeps it whole."""
    if len(unit) == 1 and type(unit[0]) is ev.SkippedTransaction:
        return True
    *envelope, last = unit
    if not (isinstance(last, ev.XidEvent)
            or (isinstance(last, ev.QueryEvent) and classify_query(last.query) is QueryKind.COMMIT)):
        return False
    if envelope and isinstance(envelope[0], ev.GtidEvent | ev.MariadbGtidEvent):
        envelope = envelope[1:]
    return not envelope or (len(envelope) == 1 and isinstance(envelope[0], ev.QueryEvent)
                            and classify_query(envelope[0].query) is QueryKind.BEGIN)


def scan_file_or_none(path: str, verify_checksum: bool = True, row_transactions: bool = True
                      ) -> FileScan | None:
    """``scan_file`` as a Spark task runs it: None for a file whose bytes fail (the driver scans that file
    again itself, so its typed error reads exactly as a scan on the driver gives it)."""
    try:
        return scan_file(path, verify_checksum=verify_checksum, row_transactions=row_transactions)
    except BinlogError:
        return None


def scan_files(paths: Sequence[str | os.PathLike[str]], *, verify_checksum: bool = True,
               workers: int | None = None, row_transactions: bool = True) -> list[FileScan]:
    """``scan_file`` on every file, in parallel threads; results in the order of ``paths``."""
    def scan(path: str | os.PathLike[str]) -> FileScan:
        return scan_file(path, verify_checksum=verify_checksum, row_transactions=row_transactions)
    if len(paths) <= 1:
        return [scan(p) for p in paths]
    with ThreadPoolExecutor(max_workers=workers or min(8, len(paths))) as pool:
        return list(pool.map(scan, paths))


def fork_scans(paths: Sequence[str], *, verify_checksum: bool = True, processes: int = 2,
               row_transactions: bool = True) -> Callable[[], list[FileScan]]:
    """Start the scans of local ``paths`` in ``processes`` forked children now (the scan is CPU-bound: threads
    only take turns at it); return what waits for the results (in the order of ``paths``). Call it from
    the main thread before other threads or a JVM start, as any fork wants (Linux only; elsewhere the
    scans run in threads when the results are asked for). The largest files go first to whoever is least
    loaded, so the last to finish is not a large file started late. A child sends each result down its
    pipe as it is done. A file a child could not scan (its bytes fail, or the child died) is scanned again
    by the waiting call, so its typed error reads as a scan in this process gives it."""
    import multiprocessing

    names = [os.fspath(p) for p in paths]
    options = {"verify_checksum": verify_checksum, "row_transactions": row_transactions}
    if sys.platform != "linux" or processes < 2 or len(names) < 2 or any(is_uri(n) for n in names):
        return lambda: scan_files(names, **options)
    context = multiprocessing.get_context("fork")
    shares: list[list[int]] = [[] for _ in range(min(processes, len(names)))]
    loads = [0] * len(shares)
    for index in sorted(range(len(names)), key=lambda i: -binlog_size(names[i])):
        least = loads.index(min(loads))
        shares[least].append(index)
        loads[least] += binlog_size(names[index])
    children = []
    for share in shares:
        receive, send = context.Pipe(duplex=False)
        child = context.Process(target=_scan_share, args=([names[i] for i in share], share, options, send),
                                daemon=True, name="binlog-model-prepass")
        child.start()
        send.close()
        children.append((child, receive))

    def results() -> list[FileScan]:
        found: list[FileScan | None] = [None] * len(names)
        for child, receive in children:
            with receive, contextlib.suppress(EOFError, OSError):   # a child that died: its files below
                while True:
                    index, scan = receive.recv()
                    found[index] = scan
            child.join()
        return [scan if scan is not None else scan_file(path, **options)
                for path, scan in zip(names, found, strict=True)]
    return results


def _scan_share(paths: list[str], indexes: list[int], options: dict[str, bool], send: Any) -> None:
    """A child of ``fork_scans``: scan its files, send each result (None for a file whose bytes fail)."""
    with send:
        for path, index in zip(paths, indexes, strict=True):
            send.send((index, scan_file_or_none(path, **options)))


def build_history(scans: Sequence[FileScan], *, history: SchemaHistory | None = None,
                  options: AssemblerOptions | None = None) -> SchemaHistory:
    """Replay the DDL of ``scans`` (in binlog order) onto ``history`` with real positions and GTIDs: the
    one DDL pass (``replay_ddl``), so the history is the one the non-Spark pipeline builds (GTID tags,
    the server charset adopted from the first QUERY). ``options``: only ``source`` is used."""
    return replay_ddl((event for scan in scans for event in scan.events), history,
                      source=options.source if options is not None else "")


def auto_slice_bytes(total: int, slice_bytes: int, min_slices: int) -> int:
    """``slice_bytes``, made smaller (not below ``MIN_AUTO_SLICE_BYTES``) when ``total`` bytes cut into
    slices of it would give fewer than ``min_slices``: the batch planner's and the stream's rule."""
    if min_slices <= 1:
        return slice_bytes
    return min(slice_bytes, max(MIN_AUTO_SLICE_BYTES, total // min_slices))


def plan_slices(scans: Sequence[FileScan], *, slice_bytes: int = 64 << 20, min_slices: int = 1
                ) -> list[Slice]:
    """Cut each file at transaction starts into slices of at least ``slice_bytes`` (the last may be
    shorter). The first slice of a file starts at 0 and reads the file header itself. ``min_slices``: make
    slices smaller (down to ``MIN_AUTO_SLICE_BYTES``) when the input would give fewer, so every core gets
    work (a few large files on many cores)."""
    if slice_bytes < 1 or min_slices < 1:
        raise ConfigError(f"slice_bytes and min_slices must be positive, got {slice_bytes}, {min_slices}")
    slice_bytes = auto_slice_bytes(sum(scan.size for scan in scans), slice_bytes, min_slices)
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


def slice_source(piece: Slice, *, verify_checksum: bool = True,
                 drop_types: frozenset[int] = frozenset()) -> FileSource:
    """One slice as an ``EventSource``: the byte range of its file (``FileSource.byte_range``), what a
    task runs through the ``Runner``. ``drop_types``: event types passed over unparsed (their checksums
    still checked), for a reader whose output never holds what they carry."""
    return FileSource.byte_range(piece.path, piece.start, piece.end, piece.format_description,
                                 verify_checksum=verify_checksum, chunk_size=_CHUNK, skip_types=drop_types,
                                 drop_skipped=bool(drop_types))


def iter_slice_events(piece: Slice, *, verify_checksum: bool = True) -> Iterator[ev.Event]:
    """The decoded events of one slice (every event, rows included; the source's markers left out).
    Raises the file reader's errors: a ``DecodeError`` naming the file and offset for a read that fails,
    gzip/zlib corruption included."""
    for item in slice_source(piece, verify_checksum=verify_checksum).read():
        if type(item) not in BOUNDARY_TYPES:
            yield item  # type: ignore[misc]  # an event: the markers are left out above
