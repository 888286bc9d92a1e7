"""``spark.readStream.format("mysql-binlog")``: the source over a binlog archive that grows.

Strategy: the stream is the batch source cut at transaction boundaries. An offset is a place between two
transactions (``stream_offsets.StreamOffset``: the file's name, the decoded position just after the last
event read there, the GTIDs seen so far and the digest of the schema history in force there), printed as
JSON with its keys in one fixed order, so the same place always prints the same text (Spark compares
offsets as text).

The driver-side reader (one long-lived Python process per query) advances from an offset by reading the
archive as the batch source's pre-pass does (``io.file_source.FileSource``, rows and table maps skipped
unparsed, or decoded only to count rows when ``maxRowsPerTrigger`` asks for it): it lists the archive, reads
each file from where the stream stands (the newest file, possibly still written, up to its last complete
event), and admits whole units of work, as the source's ``TransactionStart`` / ``TransactionEnd`` markers
(``runs.transactions``) delimit them, up to the last one the read limits admit (at least one, so a stream
always moves); the events between units (FORMAT_DESCRIPTION, PREVIOUS_GTIDS, ROTATE ...) are admitted one
by one. On the way it replays the DDL of what it admits into the schema history (the same
``StatementAssembler`` as every DDL pass), adds the GTIDs (``runs.transactions.GtidRecorder``), keeps each
file's FORMAT_DESCRIPTION from the source's marker, and notes where slices may be cut. A batch
``(start, end)`` then becomes slices of the batch source (``reading.SlicePartition``: a byte range of one
file plus the packed history at ``end``), so ``read()`` on the executors is the batch source's and is
stateless: the same ``(start, end)`` gives the same rows.

A restarted query gives the reader offsets it never computed. The history at an offset is found by its
digest: in the reader's memory, in ``schemaLocation`` (a folder where every history the stream reached is
kept, compressed, by digest: ``stream_schemas``; ``resolve --stream`` puts it in its checkpoint), or else
rebuilt by reading the archive again from the stream's origin, and checked against the digest (a different
snapshot or a pruned archive is then an error, never a wrong schema). A batch of a restarted query that
Spark runs again is planned by reading its range again, which must end exactly at the checkpoint's end
offset.

``Trigger.AvailableNow`` (``prepareForTriggerAvailableNow``) records the files present and the size of
every plain (not gzip) file at that moment: the stream then reads no other file and no byte past those
sizes, so it stops at the last complete transaction that existed when the query started.
"""

from __future__ import annotations

import gzip
import itertools
import json
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadLimit,
    SupportsTriggerAvailableNow,
)

from binlog_model.errors import ConfigError, IncompleteTransactionError
from binlog_model.gtid import GtidSet
from binlog_model.io.file_source import FileSource, format_description_of
from binlog_model.io.files import (
    base_name,
    binlog_size,
    list_binlog_files,
    missing_local_path,
    open_binlog,
    sort_binlog_names,
)
from binlog_model.io.snapshots import load_snapshot
from binlog_model.position import file_key, file_sequence
from binlog_model.resolve.assembler import StatementAssembler
from binlog_model.resolve.ddl_pass import DDL_SKIP_TYPES
from binlog_model.resolve.options import ResolveOptions
from binlog_model.runs.source import (
    BOUNDARY_TYPES,
    FileEnd,
    FormatDescription,
    TransactionEnd,
    TransactionStart,
)
from binlog_model.runs.transactions import GtidRecorder
from binlog_model.spark.partitions import KEEP_TYPES, MIN_AUTO_SLICE_BYTES, Slice, auto_slice_bytes
from binlog_model.spark.reading import ReadOptions, SlicePartition, pack_history, prepare_worker, read_slice
from binlog_model.spark.stream_offsets import StreamLimits, StreamOffset, history_digest
from binlog_model.spark.stream_schemas import SchemaStore, unpack_history
from binlog_model.wire import events as ev
from binlog_model.wire.rows import RowsEvent
from schema_tracker.history import SchemaHistory

__all__ = ["TASKS_DDL", "BinlogStreamReader"]

# The rows of ``_output=tasks`` (``resolve --stream`` asks for the plan, not the rows): one per slice, the
# slice as JSON (``Slice.to_json``) and the packed schema history at the batch's end.
TASKS_DDL = "piece string, history binary"
_CHUNK = 1 << 20


@dataclass
class _Range:
    """One file's part of a batch: decoded bytes ``[start, end)``, with the cut points for slices."""

    name: str
    path: str
    start: int
    end: int
    fde: bytes | None
    cuts: list[int] = field(default_factory=list)


@dataclass
class _Planned:
    start: str
    end: StreamOffset
    ranges: list[_Range]
    packed: bytes


class _Cursor:
    """Where the driver stands: an offset, with the live history, its DDL replay and the GTIDs."""

    def __init__(self, offset: StreamOffset, history: SchemaHistory, source: str) -> None:
        self.offset = offset
        self.history = history
        self.replay = StatementAssembler(history, ResolveOptions(source=source, allow_incomplete_tail=True))
        self.gtids = GtidSet.parse(offset.gtids)
        self.recorder = GtidRecorder(self.gtids, previous=False)
        self._known: tuple[tuple[int, Any, str], str, bytes] | None = None
        # Until a DDL changes the history, offsets keep the digest they started from: the same place then
        # always prints the same text, whatever process computed it.
        self._base = (self._key(), offset.schema)

    def _key(self) -> tuple[int, Any, str]:
        return (len(self.history.entries), self.history.initial, self.history.server_version)

    def digest_and_pack(self) -> tuple[str, bytes]:
        """The history's digest and packed bytes, recomputed only when a DDL changed it."""
        key = self._key()
        if self._known is None or self._known[0] != key:
            doc = self.history.to_json()
            digest = self._base[1] if key == self._base[0] and self._base[1] else history_digest(doc)
            self._known = (key, digest, pack_history(doc))
        return self._known[1], self._known[2]


@dataclass(frozen=True)
class _StreamOptions:
    read: ReadOptions
    limits: StreamLimits
    schema_location: str | None
    tasks: bool = False     # ``_output=tasks``: one row per slice for resolve --stream, not decoded rows

    @classmethod
    def parse(cls, options: dict[str, str]) -> _StreamOptions:
        opts = {k.lower(): v for k, v in options.items()}
        for key in ("stopposition", "planfile"):
            if opts.get(key):
                raise ConfigError(f"mysql-binlog stream: option {key} is for batch reads only")
        read = ReadOptions.parse(options)
        if read.resolve.allow_incomplete_tail:
            raise ConfigError("mysql-binlog stream: allowIncompleteTail is for batch reads; a stream always "
                              "stops before an incomplete transaction and reads it when it is complete")
        return cls(read, StreamLimits.parse(opts), opts.get("schemalocation") or None,
                   opts.get("_output") == "tasks")


class BinlogStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The stream reader of the ``mysql-binlog`` source (options in docs/streaming.md)."""

    def __init__(self, options: dict[str, str]) -> None:
        self.options = _StreamOptions.parse(options)
        read = self.options.read
        for path in read.paths:
            if missing_local_path(path):
                raise ConfigError(f"mysql-binlog stream: {path} does not exist (give the folder the binlogs "
                                  "arrive in; it may be empty)")
        self._store = SchemaStore(self.options.schema_location)
        self._cursor: _Cursor | None = None
        self._planned: OrderedDict[tuple[str, str], _Planned] = OrderedDict()
        self._fdes: dict[str, bytes | None] = {}
        self._target: dict[str, int | None] | None = None
        self._origin: StreamOffset | None = None
        self._origin_history: bytes | None = None

    # --- the archive ----------------------------------------------------------------------------------------

    def _files(self) -> list[tuple[str, str]]:
        """(base name, path) of every binlog file of the archive now, in binlog order, from the start
        position's file on (as the batch source)."""
        found: list[str] = []
        for path in self.options.read.paths:
            try:
                found.extend(list_binlog_files(path))
            except ConfigError as err:
                if "no binlog files match" not in str(err):
                    raise
        names = sort_binlog_names(dict.fromkeys(found))
        out: list[tuple[str, str]] = []
        seen: set[str] = set()
        start = self.options.read.start
        for path in names:
            name = base_name(path)
            if name in seen:
                raise ConfigError(f"mysql-binlog stream: two files are named {name} in "
                                  f"{self.options.read.paths}: an offset names a file by its name, so give "
                                  "one server's binlogs")
            seen.add(name)
            if start is not None and file_sequence(name) < file_sequence(start.file):
                continue
            out.append((name, path))
        return out

    def _fde(self, name: str, path: str) -> bytes | None:
        """The file's raw FORMAT_DESCRIPTION (what resuming inside it needs), read once per file."""
        if name not in self._fdes:
            self._fdes[name] = format_description_of(path)
        return self._fdes[name]

    # --- offsets --------------------------------------------------------------------------------------------

    def _origin_cursor(self) -> _Cursor:
        """The stream's origin: before the first file (of the start position's file on), with the snapshot."""
        if self._origin_history is None:
            read = self.options.read
            history = load_snapshot(read.snapshot, lenient=read.lenient_ddl)
            doc = history.to_json()
            self._origin_history = pack_history(doc)
            self._origin = StreamOffset("", 0, "", history_digest(doc))
            self._store.put(self._origin.schema, self._origin_history)
        assert self._origin is not None
        return _Cursor(self._origin, unpack_history(self._origin_history), self.options.read.source)

    def initialOffset(self) -> dict[str, Any]:
        cursor = self._origin_cursor()
        start = self.options.read.start
        if start is not None:
            planned = self._advance(cursor, StreamLimits(), until=(start.file, start.offset))
            if (planned.end.file, planned.end.offset) != (start.file, start.offset):
                raise ConfigError(f"mysql-binlog stream: startPosition {start.file}:{start.offset} is not a "
                                  "transaction boundary of the archive (or its file is not there yet)")
        self._cursor = cursor
        return cursor.offset.to_json()

    def _cursor_at(self, offset: StreamOffset) -> _Cursor:
        """A cursor at ``offset``: the current one, or one with the history found by the offset's digest
        (memory, ``schemaLocation``), or rebuilt by reading from the origin."""
        if self._cursor is not None and self._cursor.offset == offset:
            return self._cursor
        packed = self._store.get(offset.schema)
        if packed is not None:
            cursor = _Cursor(offset, unpack_history(packed), self.options.read.source)
        else:
            cursor = self._origin_cursor()
            if offset.file:
                self._advance(cursor, StreamLimits(), until=(offset.file, offset.offset))
            if cursor.offset.text() != offset.text():
                raise ConfigError(
                    f"mysql-binlog stream: cannot find the schema history of the checkpoint's offset "
                    f"{offset.file}:{offset.offset}: it is not in schemaLocation "
                    f"({self.options.schema_location or 'not set'}) and reading the archive again from its "
                    f"start gives another one ({cursor.offset.file}:{cursor.offset.offset}, schema "
                    f"{cursor.offset.schema}, not {offset.schema}): were files removed, or the snapshot "
                    "changed? Set schemaLocation, or start over with a new checkpoint")
        self._cursor = cursor
        return cursor

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        begin = StreamOffset.from_json(start)
        cursor = self._cursor_at(begin)
        planned = self._advance(cursor, self.options.limits.combined(limit))
        return planned.end.to_json()

    def getDefaultReadLimit(self) -> ReadLimit:
        return self.options.limits.default()

    def prepareForTriggerAvailableNow(self) -> None:
        target: dict[str, int | None] = {}
        for name, path in self._files():
            with open_binlog(path) as fh:
                gzipped = isinstance(fh, gzip.GzipFile)
            # A plain file's stored size is its decoded size; a gzip file is an archived, whole file.
            target[name] = None if gzipped else binlog_size(path)
        self._target = target

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        begin, finish = StreamOffset.from_json(start), StreamOffset.from_json(end)
        if begin == finish:
            return []
        planned = self._planned.get((begin.text(), finish.text()))
        if planned is None:
            # A batch of the checkpoint that this process did not plan (a restart): read its range again.
            cursor = self._cursor_at(begin)
            planned = self._advance(cursor, StreamLimits(), until=(finish.file, finish.offset), target=False)
            if planned.end != finish:
                raise ConfigError(
                    f"mysql-binlog stream: the archive no longer gives the checkpoint's batch "
                    f"{begin.file}:{begin.offset} .. {finish.file}:{finish.offset} (reading it again ends at "
                    f"{planned.end.file}:{planned.end.offset}, schema {planned.end.schema}): were files "
                    "replaced or removed? Start over with a new checkpoint")
        read = self.options.read
        return [SlicePartition(piece, planned.packed)
                for piece in _slices(planned, read.slice_bytes, read.min_slices)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch | tuple[Any, ...]]:
        assert isinstance(partition, SlicePartition)
        if self.options.tasks:
            yield json.dumps(partition.piece.to_json()), partition.history
            return
        prepare_worker()
        yield from read_slice(partition.piece, partition.history, _slice_options(self.options.read))

    def commit(self, end: dict[str, Any]) -> None:
        finish = StreamOffset.from_json(end)
        self._planned = OrderedDict((k, v) for k, v in self._planned.items()
                                    if v.end.place > finish.place)
        keep = {finish.schema} | {p.end.schema for p in self._planned.values()}
        if self._cursor is not None:
            keep.add(self._cursor.offset.schema)
        self._store.keep_only(keep)

    # --- reading ahead --------------------------------------------------------------------------------------

    def _advance(self, cursor: _Cursor, limits: StreamLimits, *, until: tuple[str, int] | None = None,
                 target: bool = True) -> _Planned:
        """Read from ``cursor`` to the last transaction boundary the limits admit (or ``until``), moving
        the cursor there; the batch's ranges and the history at its end are remembered for
        ``partitions``."""
        begin = cursor.offset
        ranges = _Advance(self, cursor, limits, until, self._target if target else None).run()
        digest, packed = cursor.digest_and_pack()
        end = StreamOffset(cursor.offset.file, cursor.offset.offset, str(cursor.gtids), digest)
        cursor.offset = end
        self._store.put(digest, packed)
        planned = _Planned(begin.text(), end, ranges, packed)
        if end != begin:
            self._planned[(begin.text(), end.text())] = planned
            while len(self._planned) > 16:
                self._planned.popitem(last=False)
        return planned


class _Advance:
    """One read ahead from a cursor (``BinlogStreamReader._advance``)."""

    def __init__(self, reader: BinlogStreamReader, cursor: _Cursor, limits: StreamLimits,
                 until: tuple[str, int] | None, target: dict[str, int | None] | None) -> None:
        self.reader, self.cursor, self.limits, self.until, self.target = reader, cursor, limits, until, target
        self.count_rows = limits.rows is not None
        self.ranges: list[_Range] = []
        self.bytes = 0
        self.rows = 0
        self.done = False

    def run(self) -> list[_Range]:
        start = self.cursor.offset
        files = self.reader._files()
        names = [name for name, _ in files]
        if start.file:
            if start.file not in names:
                raise ConfigError(f"mysql-binlog stream: {start.file}, where the stream stands, is no longer "
                                  f"in {list(self.reader.options.read.paths)}")
            files = files[names.index(start.file):]
        if self.until is not None:
            files = [f for f in files if file_key(f[0]) <= file_key(self.until[0])]
        if self.target is not None:
            files = [f for f in files if f[0] in self.target]
        newest = files[-1][0] if files else None
        for name, path in files:
            self._file(name, path, start.offset if name == start.file else 0, name == newest)
            if self.done:
                break
        return [r for r in self.ranges if r.end > r.start]

    def _file(self, name: str, path: str, offset: int, newest: bool) -> None:
        cursor = self.cursor
        cap = self.target.get(name) if self.target is not None else None
        if cap is not None and offset >= cap:
            return
        fde = self.reader._fde(name, path) if offset else None
        skip = frozenset() if self.count_rows else DDL_SKIP_TYPES
        # Only the newest file may end inside an event or a transaction (being written; under AvailableNow:
        # the newest at the query's start, read up to its size then); in any other file that is damage.
        source = FileSource.byte_range(path, offset, cap, fde, skip_types=skip, chunk_size=_CHUNK,
                                       partial_tail=newest)
        rng = _Range(name, path, offset, offset, fde)
        last_cut = offset
        pending: list[Any] = []     # the open unit's events the DDL replay needs
        cut_candidates: list[int] = []
        unit_rows = 0
        top_end = offset
        in_unit = False             # between the source's TransactionStart and TransactionEnd markers
        # Candidate cuts: every slice_bytes, or every MiB when minSlices may ask for smaller slices.
        read = self.reader.options.read
        slice_bytes = (read.slice_bytes if read.min_slices <= 1
                       else min(read.slice_bytes, MIN_AUTO_SLICE_BYTES))
        for item in source.read():
            if type(item) in BOUNDARY_TYPES:
                if isinstance(item, TransactionStart):
                    in_unit = True
                    if item.offset - last_cut >= slice_bytes:
                        cut_candidates.append(item.offset)
                    continue
                if isinstance(item, FormatDescription) and item.raw is not None:
                    fde = rng.fde = item.raw
                    self.reader._fdes.setdefault(name, fde)
                elif isinstance(item, FileEnd) and in_unit and not newest:
                    raise IncompleteTransactionError(
                        "a binlog file that is not the newest ends inside a transaction (a transaction never "
                        "spans files: the file is damaged, or was copied into the archive before it was "
                        "whole)", file=name, offset=rng.end)
                if not isinstance(item, TransactionEnd):
                    continue
                in_unit = False
            else:
                h = item.header     # type: ignore[union-attr]  # an event: the markers are handled above
                inner = h.inner_index is not None
                if not inner:
                    top_end = h.offset + h.event_size
                    if isinstance(item, KEEP_TYPES):
                        pending.append(item)
                if self.count_rows:
                    if isinstance(item, RowsEvent):
                        unit_rows += len(item.rows)
                    elif isinstance(item, ev.QueryEvent) and not inner:
                        unit_rows += 1 if _is_ddl(item) else 0
                if in_unit:
                    continue
            if top_end <= rng.end:
                continue
            # A boundary: admit the unit [rng.end, top_end) if the limits allow.
            size = top_end - rng.end
            if self.bytes or self.rows or any(r.end > r.start for r in self.ranges):
                files = len([r for r in self.ranges if r.end > r.start]) + (1 if rng.end == rng.start else 0)
                if ((self.limits.bytes is not None and self.bytes + size > self.limits.bytes)
                        or (self.limits.rows is not None and self.rows + unit_rows > self.limits.rows)
                        or (self.limits.files is not None and files > self.limits.files)):
                    self.done = True
                    break
            if rng not in self.ranges:
                self.ranges.append(rng)
            for kept in pending:
                cursor.recorder.see(kept)
                for _ in cursor.replay.feed(kept):
                    pass
            cursor.recorder.record()
            for cut in cut_candidates:
                rng.cuts.append(cut)
                last_cut = cut
            pending.clear()
            cut_candidates.clear()
            self.bytes += size
            self.rows += unit_rows
            unit_rows = 0
            rng.end = top_end
            cursor.offset = replace(cursor.offset, file=name, offset=top_end)
            if self.until is not None and (name, top_end) == self.until:
                self.done = True
                break
            if self.until is not None and name == self.until[0] and top_end > self.until[1]:
                raise ConfigError(f"mysql-binlog stream: {name}:{self.until[1]} is not a transaction "
                                  "boundary")


def _is_ddl(event: ev.QueryEvent) -> bool:
    from binlog_model.resolve.transactions import QueryKind, classify_query

    return classify_query(event.query) is QueryKind.SCHEMA


def _slice_options(options: ReadOptions) -> ReadOptions:
    # The slices are the batch's exact range: no position filter (the gtidSet filter stays).
    return replace(options, start=None, stop=None)


def _slices(planned: _Planned, slice_bytes: int, min_slices: int) -> list[Slice]:
    """The batch's ranges cut at transaction starts into slices of at least ``slice_bytes``, made smaller
    (not below ``MIN_AUTO_SLICE_BYTES``) when the batch would give fewer than ``min_slices`` (as the batch
    source's ``plan_slices``)."""
    slice_bytes = auto_slice_bytes(sum(r.end - r.start for r in planned.ranges), slice_bytes, min_slices)
    out: list[Slice] = []
    for rng in planned.ranges:
        points = [rng.start]
        for cut in rng.cuts:
            if cut - points[-1] >= slice_bytes and cut < rng.end:
                points.append(cut)
        points.append(rng.end)
        for a, b in itertools.pairwise(points):
            if b > a:
                out.append(Slice(rng.path, file_sequence(rng.name), a, b, rng.fde if a else None))
    return out
