"""The replica's side of a run: the runner's ``BinlogEvent`` s in, Delta commits out, at the runner's commits.

Strategy: the runner (``runs.runner.Runner``) yields events and calls for a commit at transaction
boundaries. ``ReplicaWriter.write`` only takes the event, with the table's schema as it is at that event
(the assembler's history has replayed every DDL before it, none after). ``commit(upto, checkpoint)``
applies the first ``upto`` events taken since the last commit, in order: row changes go into one
``TableBatch`` per table, and a DDL of a table first flushes that table's batch, then changes the table
(create, reshape, truncate, drop, rename) in a commit of its own; at the end every table's batch is merged,
one Delta commit per table. Each commit's transaction version is the order of the position it covers: a
table's changes before its version are skipped, so a run resumed from an older state applies nothing
twice (``sinks.delta``).

A commit can run elsewhere: ``detach`` drains the events before the commit point into the batches and
hands back the merges as a job, which the run gives its committer thread (``runs.committer``) while the
next events are taken into new batches. What touches the replica while that job may run (a DDL, a table
seen for the first time, a batch of a new layout) first calls ``settle``, which waits for the job: the
replica's tables are only ever changed by one thread at a time, in the source's order.

This is not an ``EventSink``: a sink appends encoded records to a stream and a commit makes a byte length
durable, while the replica needs the schema in force at each event and commits per table, by key.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.compiled import speedups
from binlog_model.replica.batch import Meta, ReplicaError, TableBatch
from binlog_model.replica.defaults import default_value
from binlog_model.replica.layout import KEYLESS, META, TableLayout, position_order
from binlog_model.sinks.delta import DeltaReplica
from binlog_model.spark.typed_values import InvalidValue, coerce_value
from schema_tracker.history import SchemaHistory
from schema_tracker.model import TableSchema

__all__ = ["ApplyStats", "ReplicaWriter"]

_SCHEMA = pb.BinlogEvent.SCHEMA
_EVENT_HEADER = getattr(speedups, "event_header", None)


class _RowEvent(NamedTuple):
    """A serialized row event's own fields (``_speedups.event_header``): its rows are read from its bytes."""

    db: str
    table: str
    operation: int
    gtid: str
    file: str
    offset: int
    rows: int


@dataclass
class ApplyStats:
    row_changes: int = 0
    skipped: int = 0              # changes a commit before this run had applied already
    delta_commits: int = 0
    tables: set[tuple[str, str]] = field(default_factory=set)


class ReplicaWriter:
    """Events → the replica's Delta tables (see the module docstring). ``history``: the run's schema
    history (read at each ``write``); ``select(db, table)``: whether a table is replicated."""

    def __init__(self, replica: DeltaReplica, history: Callable[[], SchemaHistory],
                 select: Callable[[str, str], bool] | None = None,
                 settle: Callable[[], None] | None = None) -> None:
        self.replica = replica
        #: waits for a detached commit still running (see the module docstring)
        self.settle = settle or (lambda: None)
        self.history = history
        self.select = select or (lambda db, table: True)
        # (index, event, schema, its bytes or None) of the open transaction
        self._pending: list[tuple[int, Any, Any, bytes | None]] = []
        self._current: str | None = None      # its GTID
        self._batches: dict[tuple[str, str], TableBatch] = {}
        self.taken = 0
        self._drained = 0       # the run's index of the last event drained into the batches
        self.stats = ApplyStats()
        self._position = ""
        self._gtids = ""
        self._layouts: dict[int, tuple[TableSchema, TableLayout]] = {}

    # --- the runner's side --------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        """Events taken so far: the runner's output length, which a commit says how much of to apply."""
        return self.taken

    def write(self, event: Any) -> None:
        data = head = None
        if isinstance(event, bytes | bytearray | memoryview):
            # a row event's own fields are read from its bytes (``event_header``), its rows later in C
            data = bytes(event)
            head = _EVENT_HEADER(data) if _EVENT_HEADER is not None else None
            if head is None or head[2] == _SCHEMA:
                event, head = pb.BinlogEvent.FromString(data), None
        if head is not None:
            db, table, operation, gtid = head[0], head[1], head[2], head[7]
        else:
            db, table, operation, gtid = event.db, event.table, event.operation, event.gtid
        self.taken += 1
        if not self.select(db, table) and not (operation == _SCHEMA
                                               and _renames_into_selection(event, self.select)):
            return
        # An event of the next transaction: the one before it is whole, and goes into the batches now (they
        # hold a value per key, not the events: memory stays bounded by the keys a commit changes).
        # Without GTIDs the transactions are not told apart here: the events wait for the commit. (A GTID's
        # text holds its transaction number.)
        if gtid and gtid != self._current:
            self._drain(self._pending)
            if self._pending:
                self._drained = self._pending[-1][0]
            self._pending = []
        self._current = gtid
        catalog = self.history().catalog
        if operation == _SCHEMA:
            tables = {(db, table): catalog.table(db, table)}
            for change in event.schema_changes:
                if change.HasField("rename_table"):
                    r = change.rename_table
                    tables[(r.new_db, r.new_table)] = catalog.table(r.new_db, r.new_table)
            self._pending.append((self.taken, event, tables, None))
        else:
            self._pending.append((self.taken, _RowEvent(db, table, operation, gtid, head[4], head[5], head[3])
                                  if head is not None else event, catalog.table(db, table), data))

    def commit(self, upto: int, position: str, gtids: str) -> None:
        """Apply the first ``upto`` events taken (counted from the run's start) to the replica; the rest
        (an open transaction at the end of the input) is dropped."""
        self.detach(upto, position, gtids)()

    def detach(self, upto: int, position: str, gtids: str) -> Callable[[], None]:
        """``commit``'s work in two: the events up to ``upto`` are taken into the tables' batches here (a
        DDL among them is applied here), and the batches' merges are returned as a job to run before the
        state names ``position``. The caller runs no other replica work until the job ended, but for
        what calls ``settle`` first."""
        self._position, self._gtids = position, gtids
        if self._drained > upto:
            # a commit point is a transaction boundary, and a drained transaction is whole: it lies before
            # the point, or the tables would hold changes past the position they say
            raise ReplicaError(f"a commit at {position} comes before a transaction already taken into the "
                               f"tables' batches (event {self._drained} of the run; the commit covers "
                               f"{upto}): the input has a transaction without its end before this point")
        self._drain([item for item in self._pending if item[0] <= upto])
        self._pending, self._current = [], None
        batches, self._batches = self._batches, {}

        def merge() -> None:
            for batch in batches.values():
                self._merge(batch, position, gtids)
        return merge

    def _drain(self, items: list[tuple[int, Any, Any, bytes | None]]) -> None:
        for _index, event, schema, data in items:
            if event.operation == _SCHEMA:
                self._schema_event(event, schema)
            else:
                self._rows(event, schema, data)

    def close(self) -> None:
        self._pending.clear()

    # --- rows ---------------------------------------------------------------------------------------------

    def _rows(self, event: Any, schema: TableSchema | None, data: bytes | None = None) -> None:
        """A row event (a ``BinlogEvent``, or a ``_RowEvent`` with its ``data``) into its table's batch."""
        if isinstance(event, _RowEvent):
            db, table, file, offset, rows = event.db, event.table, event.file, event.offset, event.rows
        else:
            db, table, rows = event.db, event.table, len(event.rows)
            file, offset = event.position.file, event.position.offset
        order = position_order(file, offset)
        replica = self.replica
        version = replica.cached_version(db, table)
        if version is None or version < 0:
            self.settle()       # the replica is read (or a table created) here
            version = replica.version(db, table)
        if order < version or (version < 0 and order < replica.gone_at(db, table)):
            self.stats.skipped += rows
            return
        if schema is None:
            raise ReplicaError(f"{db}.{table} at {file}:{offset}: rows of a table the schema history "
                               "does not know")
        layout = self._layout(schema)
        batch = self._batches.get((db, table))
        if batch is None or (batch.layout is not layout and batch.layout != layout):
            if batch is not None:
                self.settle()
                self._flush(db, table, batch, f"{file}:{offset}")
            if version < 0:
                replica.create(layout, f"{file}:{offset}", self._gtids)
                self.stats.delta_commits += 1
            batch = self._batches[(db, table)] = TableBatch(layout)
        batch.add(event, Meta(order, event.gtid, file, offset), data)
        self.stats.row_changes += rows
        self.stats.tables.add((db, table))

    def _layout(self, schema: TableSchema) -> TableLayout:
        """The layout of a table schema (schemas are immutable: one layout per schema object)."""
        cached = self._layouts.get(id(schema))
        if cached is None or cached[0] is not schema:
            if len(self._layouts) > 4096:
                self._layouts.clear()       # old schemas of a long run (DDL made new ones)
            cached = self._layouts[id(schema)] = (schema, TableLayout.of(schema))
        return cached[1]

    def _flush(self, db: str, table: str, batch: TableBatch, at: str) -> None:
        """Merge ``batch`` into the table now (before a DDL or a new layout of it)."""
        self._batches.pop((db, table), None)
        self._merge(batch, at, self._gtids)

    def _merge(self, batch: TableBatch, at: str, gtids: str) -> None:
        """Merge ``batch`` into its table: a commit saying it holds every change before ``at``."""
        if not batch:
            return
        replica, layout = self.replica, batch.layout
        if layout.keyless:
            source = batch.keyless_rows(lambda digests: replica.copies(layout, digests))
        else:
            needed = batch.needs_base()
            if needed:
                batch.fill(replica.rows_by_key(layout, needed))
            source = batch.keyed_rows()
        # the changes are in the MERGE's source now: their objects are freed before the MERGE runs (with
        # the next batch filling beside it, both would otherwise be held at its peak)
        batch.clear()
        if source.num_rows:
            replica.merge(layout, source, at, gtids)
            self.stats.delta_commits += 1

    # --- DDL ----------------------------------------------------------------------------------------------

    def _schema_event(self, event: pb.BinlogEvent, schemas: dict[tuple[str, str], TableSchema | None]
                      ) -> None:
        db, table = event.db, event.table
        order = position_order(event.position.file, event.position.offset)
        at = f"{event.position.file}:{event.position.offset}"       # before the DDL
        done = f"{event.position.file}:{event.position.next_offset}"   # after it: its own commit's
        replica = self.replica
        self.settle()
        batch = self._batches.get((db, table))
        if batch is not None:
            self._flush(db, table, batch, at)
        kinds = {c.WhichOneof("change") for c in event.schema_changes}
        if "drop_database" in kinds:
            for other_db, other in replica.tables():
                if other_db == db and replica.version(other_db, other) <= order:
                    self._flush(other_db, other, self._batches.get((other_db, other)) or _EMPTY, at)
                    replica.drop(other_db, other, order)
            return
        if "rename_table" in kinds:
            kinds.discard("rename_table")
            for change in event.schema_changes:
                if change.HasField("rename_table"):
                    # ALTER TABLE … RENAME TO with column changes: they apply under the new name, in the
                    # commit that marks the table done up to the DDL
                    self._rename(change.rename_table, order, at, None if kinds else done)
                    db, table = change.rename_table.new_db, change.rename_table.new_table
            if not kinds:
                return
        if not self.select(db, table):
            return
        version = replica.version(db, table)
        if "drop_table" in kinds:
            if version >= 0 and version <= order:
                replica.drop(db, table, order)
            return
        schema = schemas.get((db, table))
        if schema is None or version > order or (version < 0 and replica.gone_at(db, table) > order):
            return      # applied by an earlier run (or the table is gone again later in the binlog)
        layout = TableLayout.of(schema)
        if "create_table" in kinds or version < 0:
            replica.create(layout, done, self._gtids)
        elif "truncate_table" in kinds:
            replica.overwrite(layout, layout.arrow_schema().empty_table(), done, self._gtids)
        else:
            renamed = {c.rename_column.new_column_name.lower(): c.rename_column.old_column_name
                       for c in event.schema_changes if c.HasField("rename_column")}
            if not renamed and replica.schema(db, table).equals(layout.arrow_schema()):
                return      # the same columns and types (an index, a longer VARCHAR, a new key): no commit
            replica.overwrite(layout, reshape(replica.read(db, table), layout, renamed), done, self._gtids)
        self.stats.delta_commits += 1

    def _rename(self, change: Any, order: int, at: str, done: str | None) -> None:
        replica = self.replica
        old, new = (change.old_db, change.old_table), (change.new_db, change.new_table)
        batch = self._batches.get(old)
        if batch is not None:
            self._flush(*old, batch, at)
        version = replica.version(*old)
        if version < 0 or version > order:
            return      # renamed by an earlier run
        replica.rename(*old, *new, order)
        if not self.select(*new):
            replica.drop(*new, order)
            return
        if done is not None:
            replica.mark(*new, done, self._gtids)
            self.stats.delta_commits += 1


_EMPTY = TableBatch(TableLayout("", "", (), (), ()))


def _renames_into_selection(event: Any, select: Callable[[str, str], bool]) -> bool:
    return event.operation == _SCHEMA and any(
        c.HasField("rename_table") and select(c.rename_table.new_db, c.rename_table.new_table)
        for c in event.schema_changes)


def reshape(data: pa.Table, layout: TableLayout, renamed: dict[str, str]) -> pa.Table:
    """A replica table's rows under a new layout (after ALTER TABLE): each column from the old column of
    its name (or the name it had before a rename), converted to the new type by the typed tables' rules;
    a new column holds its default for every row. A value that cannot be converted, or a default that is
    not known here, is null and listed in ``binlog_invalid``."""
    old = {name.lower(): name for name in data.column_names}
    n = data.num_rows
    invalid: list[set[str]] = [set(v or ()) for v in data.column("binlog_invalid").to_pylist()] \
        if "binlog_invalid" in data.column_names else [set() for _ in range(n)]
    kept = {c.name.lower() for c in layout.columns} | {k.lower() for k in renamed.values()}
    for marks in invalid:
        for name in list(marks):
            if name.lower() not in kept:
                marks.discard(name)
    columns: list[pa.Array] = []
    for column, kind in zip(layout.columns, layout.types, strict=True):
        source = old.get(renamed.get(column.name.lower(), column.name).lower())
        if source is None:
            known, value = default_value(column, kind)
            if not known:
                for marks in invalid:
                    marks.add(column.name)
            columns.append(pa.array([value] * n, type=kind))
            continue
        for marks in invalid:
            if source in marks and source != column.name:
                marks.discard(source)
                marks.add(column.name)
        columns.append(_convert(data.column(source), kind, column.name, invalid))
    meta = {name: data.column(name) if name in data.column_names else pa.nulls(n, kind)
            for name, kind in META}
    meta["binlog_invalid"] = pa.array([sorted(m) for m in invalid], type=pa.list_(pa.string()))
    arrays = columns + [meta[name] for name, _ in META]
    if layout.keyless:
        arrays += _keyless_columns(layout, columns)
    return pa.Table.from_arrays([a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in arrays],
                                schema=layout.arrow_schema())


def _convert(values: Any, kind: pa.DataType, name: str, invalid: list[set[str]]) -> pa.Array:
    if values.type == kind:
        return values
    try:
        return pc.cast(values, kind, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    out = []
    for i, value in enumerate(values.to_pylist()):
        try:
            out.append(None if value is None else coerce_value(value, kind))
        except InvalidValue:
            out.append(None)
            invalid[i].add(name)
    return pa.array(out, type=kind)


def _keyless_columns(layout: TableLayout, columns: list[Any]) -> list[pa.Array]:
    rows = list(zip(*(c.to_pylist() for c in columns), strict=True)) if columns else []
    seen: dict[bytes, int] = {}
    digests, copies = [], []
    for row in rows:
        digest = layout.row_hash(list(row))
        seen[digest] = seen.get(digest, 0) + 1
        digests.append(digest)
        copies.append(seen[digest])
    return [pa.array(digests, type=KEYLESS[0][1]), pa.array(copies, type=KEYLESS[1][1])]
