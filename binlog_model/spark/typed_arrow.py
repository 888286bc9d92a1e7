"""Typed per-table rows as Arrow record batches, built in bulk from the serialized ``BinlogEvent``s.

Strategy: the typed job's ``mapInArrow`` hands this module batches of the data source's ``event`` column
(the serialized event, on the first row of each event). Per event, Python reads the header fields and
looks up the column version in force (``TableLineage.lookup``); everything per row and per value is bulk:
the row images are split with the view messages and sentinels of ``wire_views`` (the after image, or the
before image for DELETE events, which are handled as a sub-batch of their own), each column entry
gets its output column from (version, logged name) with one ``index_in``, and the values of one output
column are converted per value kind with Arrow compute (integers with range checks, decimals by Arrow's
exact cast, DATE/DATETIME by civil-day arithmetic with validity checks, TIMESTAMP, text, bytes, SET). A
kind/type pair without a bulk rule (GEOMETRY, VECTOR, widened string columns ...) is converted per value by
the reference ``typed_values.convert_value``, so the result is the reference's in every case: a value the
Spark type cannot hold is null and its column is listed in ``binlog_invalid``, in image order.

About 560 lines: one bulk rule per column kind, each checked against the reference in the same place;
they share the column buffers, so they stay together.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from google.protobuf.internal.type_checkers import ToShortestFloat

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.compiled import speedups
from binlog_model.position import file_sequence, position_key
from binlog_model.resolve.compiled_rows import RawImagesRefused
from binlog_model.spark.typed import META_FIELDS, TableLineage, typed_schema
from binlog_model.spark.typed_values import _INT_RANGE, _Invalid, convert_value
from binlog_model.spark.value_json import OPERATIONS, value_json
from binlog_model.spark.wire_views import (
    DATETIME_NAMES,
    DATETIME_SENTINEL,
    LABEL_SENTINEL,
    LABEL_SENTINEL_TEXT,
    ROW_SENTINEL,
    VALUE_FIELDS,
    ColumnsView,
    DateTimeView,
    EventHeader,
    EventView,
    LabelsView,
    Mismatch,
    RowsView,
    ValuesView,
    after_zero_sentinels,
    arange,
    binary_array,
    boundaries,
    concatenated,
    event_header,
    kinds_of,
)

__all__ = ["compiled_typing", "convert_values", "map_in_arrow", "typed_batch", "typed_batches", "typed_frame"]

_DELETE = pb.BinlogEvent.DELETE
_SCHEMA = pb.BinlogEvent.SCHEMA
_I64 = pa.int64()


def _i(values: Any) -> pa.Array:
    return pc.cast(values, _I64)


def _false(n: int) -> pa.Array:
    return pa.array([False] * n, pa.bool_())


# -- values -------------------------------------------------------------------------------------------------

def _civil_days(year: pa.Array, month: pa.Array, day: pa.Array) -> tuple[pa.Array, pa.Array]:
    """(days since 1970-01-01, valid) of proleptic Gregorian dates; valid as Python's ``datetime.date``
    (year 1..9999, a real month and day)."""
    y, m, d = _i(year), _i(month), _i(day)
    leap = pc.and_(pc.equal(pc.modulo(y, 4), 0),
                   pc.or_(pc.not_equal(pc.modulo(y, 100), 0), pc.equal(pc.modulo(y, 400), 0)))
    month_days = pc.take(pa.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], _I64),
                         pc.subtract(pc.min_element_wise(pc.max_element_wise(m, 1), 12), 1))
    month_days = pc.add(month_days, pc.cast(pc.and_(leap, pc.equal(m, 2)), _I64))
    valid = pc.and_(pc.and_(pc.greater_equal(y, 1), pc.less_equal(y, 9999)),
                    pc.and_(pc.and_(pc.greater_equal(m, 1), pc.less_equal(m, 12)),
                            pc.and_(pc.greater_equal(d, 1), pc.less_equal(d, month_days))))
    # Days from civil (H. Hinnant's algorithm); every term is non-negative for year >= 1.
    y = pc.if_else(valid, y, 1970)
    m = pc.if_else(valid, m, 1)
    d = pc.if_else(valid, d, 1)
    y = pc.subtract(y, pc.cast(pc.less_equal(m, 2), _I64))
    era = pc.divide(y, 400)
    yoe = pc.subtract(y, pc.multiply(era, 400))
    mp = pc.if_else(pc.greater(m, 2), pc.subtract(m, 3), pc.add(m, 9))
    doy = pc.add(pc.divide(pc.add(pc.multiply(mp, 153), 2), 5), pc.subtract(d, 1))
    doe = pc.add(pc.subtract(pc.add(pc.multiply(yoe, 365), pc.divide(yoe, 4)), pc.divide(yoe, 100)), doy)
    return pc.subtract(pc.add(pc.multiply(era, 146097), doe), 719468), valid


def _temporal_fields(payloads: Sequence[bytes], names: tuple[str, ...]) -> list[pa.Array]:
    sentinel = DATETIME_SENTINEL[:2 * len(names)]
    view = DateTimeView.FromString(sentinel + sentinel.join(payloads))
    for name in DATETIME_NAMES[len(names):]:
        if len(getattr(view, name)):
            raise Mismatch
    return [after_zero_sentinels(getattr(view, name), len(payloads), pa.uint32()) for name in names]


def _dates(payloads: Sequence[bytes], target: pa.DataType) -> tuple[pa.Array, pa.Array] | None:
    days, valid = _civil_days(*_temporal_fields(payloads, DATETIME_NAMES[:3]))
    if target == pa.date32():
        values = pc.cast(days, pa.int32()).cast(pa.date32())
    elif pa.types.is_timestamp(target) and target.tz is None:       # a widened DATE/DATETIME column
        values = pc.multiply(days, 86_400_000_000).cast(target)
    else:
        return None
    return pc.if_else(valid, values, pa.scalar(None, target)), pc.invert(valid)


def _datetimes(payloads: Sequence[bytes], target: pa.DataType) -> tuple[pa.Array, pa.Array] | None:
    if not (pa.types.is_timestamp(target) and target.tz is None):
        return None
    fields = _temporal_fields(payloads, DATETIME_NAMES)
    year, month, day, hour, minute, second, micros = (_i(f) for f in fields)
    days, valid = _civil_days(year, month, day)
    valid = pc.and_(valid, pc.and_(pc.and_(pc.less(hour, 24), pc.less(minute, 60)),
                                   pc.and_(pc.less(second, 60), pc.less(micros, 1_000_000))))
    seconds = pc.add(pc.add(pc.multiply(days, 86400), pc.multiply(hour, 3600)),
                     pc.add(pc.multiply(minute, 60), second))
    values = pc.add(pc.multiply(seconds, 1_000_000), micros).cast(target)
    return pc.if_else(valid, values, pa.scalar(None, target)), pc.invert(valid)


def _integers(values: Sequence[int], source: pa.DataType, target: pa.DataType
              ) -> tuple[pa.Array, pa.Array] | None:
    arr = pa.array(values, source)
    if pa.types.is_integer(target):
        lo, hi = _INT_RANGE[target.bit_width]
        if source == pa.uint64():
            bad = pc.greater(arr, pa.scalar(hi, source))
        else:
            wide = _i(arr)
            bad = pc.or_(pc.greater(wide, pa.scalar(hi, _I64)), pc.less(wide, pa.scalar(lo, _I64)))
    elif pa.types.is_decimal(target):
        limit = 10 ** (target.precision - target.scale)
        if source == pa.uint64():
            bad = pc.greater_equal(arr, pa.scalar(limit, source)) if limit < 2**64 else _false(len(arr))
        else:
            wide = _i(arr)
            bad = (pc.or_(pc.greater_equal(wide, limit), pc.less_equal(wide, -limit)) if limit < 2**63
                   else _false(len(arr)))
    elif pa.types.is_floating(target):
        exact = 2 ** (24 if target == pa.float32() else 53)
        big = (pc.greater(arr, pa.scalar(exact, source)) if source == pa.uint64()
               else pc.or_(pc.greater(_i(arr), exact), pc.less(_i(arr), -exact)))
        if pc.any(big).as_py():
            return None                 # may not be exact in the float type: the reference decides
        bad = _false(len(arr))
    elif pa.types.is_string(target):
        return pc.cast(arr, target), _false(len(arr))
    else:
        return None
    good = pc.invert(bad)
    kept = pc.if_else(good, arr, pa.scalar(0, source))         # what does not fit is null, never cut
    if pa.types.is_decimal(target):
        kept = pc.cast(kept, pa.decimal128(38, target.scale))    # Arrow casts integers to wide decimals only
    return pc.if_else(good, pc.cast(kept, target), pa.scalar(None, target)), bad


def _convert_kind(number: int, items: Sequence[Any], target: pa.DataType) -> tuple[pa.Array, pa.Array] | None:
    """The values of one kind (Value field ``number``) as ``target``, with the invalid mask; None when
    there is no bulk rule for this pair."""
    n = len(items)
    none = _false(n)
    if number == 1:
        return pa.nulls(n, target), none
    if number in (2, 3, 12, 13, 16):
        source = pa.uint64() if number in (13, 16) else pa.int32() if number == 2 else _I64
        return _integers(items, source, target)
    if number == 11:
        if target != pa.timestamp("us", tz="UTC"):
            return None
        micros = pa.array(items, _I64)
        zero = pc.equal(micros, 0)               # the zero TIMESTAMP has no instant
        return pc.if_else(zero, pa.scalar(None, target), micros.cast(target)), zero
    if number in (4, 14):
        if pa.types.is_string(target):
            return pa.array(items, pa.string()), none
        if pa.types.is_binary(target):
            return pa.array(items, pa.string()).cast(pa.binary()), none
        return None
    if number == 5:
        if pa.types.is_binary(target):
            return pa.array(items, pa.binary()), none
        return None
    if number == 6 and pa.types.is_decimal(target):
        try:
            return pc.cast(pa.array(items, pa.string()), target), none
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None                 # some value does not fit exactly: the reference marks which
    if number == 8 and target == pa.float64():
        # A FLOAT in a widened DOUBLE column: the shortest decimal that reads back as the float, as the
        # value JSON has it (not the float's exact binary value).
        return pa.array([ToShortestFloat(v) if math.isfinite(v) else v for v in items], target), none
    if number in (7, 8) and pa.types.is_floating(target) and (number == 8 or target == pa.float64()):
        return pa.array(items, pa.float32() if number == 8 else pa.float64()).cast(target), none
    if number == 9:
        return _datetimes(items, target)
    if number == 10:
        return _dates(items, target)
    if number == 15 and pa.types.is_string(target):
        view = LabelsView.FromString(LABEL_SENTINEL + LABEL_SENTINEL.join(items))
        labels = pa.array(view.labels, pa.string())
        is_sentinel = pc.equal(labels, LABEL_SENTINEL_TEXT)
        members = pa.ListArray.from_arrays(boundaries(is_sentinel, n),
                                           pc.filter(labels, pc.invert(is_sentinel)))
        return pc.binary_join(members, ","), none
    return None


def convert_values(values: Sequence[bytes] | pa.Array, target: pa.DataType) -> tuple[pa.Array, pa.Array]:
    """Serialized ``Value``s → (``target`` array, invalid mask), as ``typed_values.convert_value`` gives one
    by one."""
    n = len(values)
    out = pa.nulls(n, target)
    invalid = _false(n)
    if not n:
        return out, invalid
    values = binary_array(values)
    if pa.types.is_nested(target):        # VECTOR: rare, and Arrow cannot scatter lists in place
        return _one_by_one(values.to_pylist(), target)
    kinds = kinds_of(values)
    view = ValuesView.FromString(concatenated(values))
    slow = pc.is_null(kinds)
    for index, (number, name, _) in enumerate(VALUE_FIELDS):
        mask = pc.fill_null(pc.equal(kinds, index), False)
        items = getattr(view, name)
        if (pc.sum(mask).as_py() or 0) != len(items):
            raise Mismatch
        if not len(items):
            continue
        done = _convert_kind(number, items, target)
        if done is None:
            slow = pc.or_(slow, mask)
            continue
        out = pc.replace_with_mask(out, mask, done[0])
        invalid = pc.replace_with_mask(invalid, mask, done[1])
    if pc.any(slow).as_py():
        picked, flags = _one_by_one(pc.filter(values, slow).to_pylist(), target)
        out = pc.replace_with_mask(out, slow, picked)
        invalid = pc.replace_with_mask(invalid, slow, flags)
    return out, invalid


def _one_by_one(values: Sequence[bytes], target: pa.DataType) -> tuple[pa.Array, pa.Array]:
    """The reference conversion, value by value."""
    picked, flags = [], []
    for value in values:
        try:
            picked.append(convert_value(value_json(pb.Value.FromString(value)), target))
            flags.append(False)
        except _Invalid:
            picked.append(None)
            flags.append(True)
    return pa.array(picked, target), pa.array(flags, pa.bool_())


# -- rows ---------------------------------------------------------------------------------------------------

_TYPED_COLUMNS = getattr(speedups, "typed_columns", None)
_T_OTHER = 11       # VECTOR: every value handed back to the reference


def _target_code(arrow: pa.DataType) -> tuple[int, int, int]:
    """A column's Arrow type as the C code's (target code, precision, scale) (typed_columns.c, ``T_*``)."""
    if pa.types.is_decimal(arrow):
        return 5, arrow.precision, arrow.scale
    if pa.types.is_timestamp(arrow):
        return (8 if arrow.tz is not None else 7), 0, 0
    simple = {pa.int32(): 1, pa.int64(): 2, pa.float32(): 3, pa.float64(): 4, pa.date32(): 6, pa.string(): 9,
              pa.binary(): 10}
    return simple.get(arrow, _T_OTHER), 0, 0


def compiled_typing(schema: pa.Schema, lineage: TableLineage) -> bool:
    """Whether the C code types every column of this table (else the batch is typed the Python way)."""
    if _TYPED_COLUMNS is None:
        return False
    arrows = [schema.field(j).type for j in range(len(lineage.columns))]
    return not any(_target_code(a)[0] == _T_OTHER and not pa.types.is_nested(a) for a in arrows)


def _buffer(data: Any) -> pa.Buffer | None:
    return None if data is None else pa.py_buffer(data)


def _labels(labels: Sequence[tuple[int, int, int, bytes | None]], n: int, lineage: TableLineage) -> pa.Array:
    """binlog_invalid from (row, entry ordinal, output column or -1, logged name) labels: per row, the
    logged names no version knows and the columns whose value the type cannot hold, in image order."""
    if not labels:
        offsets = pa.Array.from_buffers(pa.int32(), n + 1, [None, pa.py_buffer(bytes(4 * (n + 1)))])
        return pa.ListArray.from_arrays(offsets, pa.array([], pa.string()))
    ordered = sorted(labels, key=lambda item: (item[0], item[1]))
    counts = [0] * (n + 1)
    for row, _, _, _ in ordered:
        counts[row + 1] += 1
    texts = [name.decode("utf-8") if column < 0 and name is not None else lineage.columns[column].name
             for _, _, column, name in ordered]
    offsets = pc.cast(pc.cumulative_sum(pa.array(counts, pa.int64())), pa.int32())
    return pa.ListArray.from_arrays(offsets, pa.array(texts, pa.string()))


class _Rows:
    """The typed rows of the events of one batch that read the same image (after, or before for DELETE)."""

    _META = ("operation", "file", "offset", "gtid", "ts", "seq", "inner", "event_index", "generation",
             "version")

    def __init__(self) -> None:
        self.payloads: list[bytes] = []
        self.events: list[EventHeader] = []
        self.counts: list[int] = []         # per event: its rows (1 for an event without rows)
        self.size = 0
        self.meta: dict[str, list[Any]] = {k: [] for k in self._META}      # per event

    def add(self, payload: bytes, event: EventHeader, version: int, generation: int) -> None:
        n = event.rows or 1             # an event without rows: one row of nulls, as the change rows give it
        meta = self.meta
        for key, value in (("operation", OPERATIONS[event.operation]), ("file", event.file),
                           ("offset", event.offset), ("gtid", event.gtid),
                           ("ts", event.seconds * 1_000_000 + event.nanos // 1000),
                           ("seq", file_sequence(event.file)), ("inner", event.inner),
                           ("event_index", event.event_index), ("generation", generation),
                           ("version", version)):
            meta[key].append(value)
        self.payloads.append(payload)
        self.events.append(event)
        self.counts.append(n)
        self.size += n

    def build(self, image: str, lineage: TableLineage, versions: list[dict[str, str]], schema: pa.Schema,
              contexts: list[tuple[Any, bytes]] | None) -> pa.RecordBatch:
        if _TYPED_COLUMNS is not None:
            built = self._compiled(image, lineage, versions, schema, contexts)
            if built is not None:
                return built
        if contexts is not None:
            raise RawImagesRefused(f"the compiled typing refuses a batch of `{lineage.db}`.`{lineage.table}`")
        return self._bulk(image, lineage, versions, schema)

    def _compiled(self, image: str, lineage: TableLineage, versions: list[dict[str, str]], schema: pa.Schema,
                  contexts: list[tuple[Any, bytes]] | None) -> pa.RecordBatch | None:
        """The batch from the C code's buffers (``_speedups.typed_columns``); the value kinds it leaves to
        Python are converted by the reference and put in place. None for bytes it refuses."""
        order_of = {c.name: i for i, c in enumerate(lineage.columns)}

        def resolve(version: int, name: bytes) -> int:
            return order_of.get(versions[version].get(name.decode("utf-8").lower(), ""), -1)

        if not compiled_typing(schema, lineage):
            return None         # a column type the C code does not write
        arrows = [schema.field(j).type for j in range(len(lineage.columns))]
        targets = [_target_code(a) for a in arrows]
        assert _TYPED_COLUMNS is not None
        built = _TYPED_COLUMNS(self.payloads, 3 if image == "before" else 4, self.meta["version"], targets,
                               resolve, self.size, contexts or [])
        if built is None or built[0] != self.size:
            return None
        n, row_event, row_index, columns, labels = built
        out: list[pa.Array] = []
        for j, (arrow, (valid, data, offsets, slow)) in enumerate(zip(arrows, columns, strict=True)):
            if pa.types.is_nested(arrow):        # VECTOR: every value comes from the reference
                values: list[Any] = [None] * n
                if slow:
                    picked, flags = _one_by_one([v for _, _, v in slow], arrow)
                    for (row, _, _), value in zip(slow, picked.to_pylist(), strict=True):
                        values[row] = value
                out.append(pa.array(values, arrow))
            else:
                buffers = [_buffer(valid), pa.py_buffer(data)] if offsets is None else \
                    [_buffer(valid), pa.py_buffer(offsets), pa.py_buffer(data)]
                column = pa.Array.from_buffers(arrow, n, buffers)
                if slow:
                    picked, flags = _one_by_one([v for _, _, v in slow], arrow)
                    mask = [False] * n
                    for row, _, _ in slow:
                        mask[row] = True
                    column = pc.replace_with_mask(column, pa.array(mask, pa.bool_()), picked)
                out.append(column)
            if slow:
                labels = [*labels, *((row, k, j, None) for (row, k, _), flag in
                                     zip(slow, flags.to_pylist(), strict=True) if flag)]
        invalid = _labels(labels, n, lineage)
        event_of = pa.Array.from_buffers(pa.int32(), n, [None, pa.py_buffer(row_event)])
        meta = self.meta

        def per_row(key: str, kind: pa.DataType) -> pa.Array:
            return pc.take(pa.array(meta[key], kind), event_of)

        offset = per_row("offset", _I64)
        order = pa.StructArray.from_arrays(
            [per_row("seq", _I64), offset, per_row("inner", pa.int32()), per_row("event_index", pa.int32()),
             pa.Array.from_buffers(_I64, n, [None, pa.py_buffer(row_index)])], fields=list(META_FIELDS[5][2]))
        out += [per_row("operation", pa.string()), per_row("file", pa.string()), offset,
                per_row("gtid", pa.string()), per_row("ts", _I64).cast(META_FIELDS[4][2]), order, invalid,
                per_row("generation", pa.int32())]
        return pa.RecordBatch.from_arrays(out, schema=schema)

    def _bulk(self, image: str, lineage: TableLineage, versions: list[dict[str, str]], schema: pa.Schema
              ) -> pa.RecordBatch:
        """The batch with Arrow compute over protobuf views (the pure-Python path)."""
        n = self.size
        blobs = []
        for header, payload in zip(self.events, self.payloads, strict=True):
            event = header.view if header.view is not None else EventView.FromString(payload)
            if event.rows:
                blobs.append(ROW_SENTINEL + ROW_SENTINEL.join(event.rows))
            else:
                own = RowsView(row_index=[event.row_index]).SerializeToString() if event.row_index else b""
                blobs.append(ROW_SENTINEL + own)
        meta = {key: [v for v, count in zip(values, self.counts, strict=True) for _ in range(count)]
                for key, values in self.meta.items()}
        view = RowsView.FromString(b"".join(blobs))
        row_index = pc.cast(after_zero_sentinels(view.row_index, n, pa.uint64()), _I64)
        entries = binary_array(getattr(view, image))
        is_sentinel = pc.equal(pc.binary_length(entries), 0)
        offsets = boundaries(is_sentinel, n)
        entry_row = pc.filter(pc.subtract(pc.cumulative_sum(pc.cast(is_sentinel, _I64)), 1),
                              pc.invert(is_sentinel))
        columns = ColumnsView.FromString(concatenated(entries))
        total = len(entries) - n
        if len(columns.name) != total or len(columns.value) != total:
            raise Mismatch
        names = pa.array(columns.name, pa.string()).dictionary_encode()
        logged = names.dictionary.to_pylist()
        # Output column per entry, from (the row's version, the logged name): -1 when the version has no
        # such name (listed in binlog_invalid under its logged name).
        order_of = {c.name: i for i, c in enumerate(lineage.columns)}
        version = pc.take(pa.array(meta["version"], _I64), entry_row)
        combo = pc.add(pc.multiply(version, len(logged)), _i(names.indices))
        seen = pc.unique(combo).to_pylist()
        targets = [order_of.get(versions[c // len(logged)].get(logged[c % len(logged)].lower(), ""), -1)
                   for c in seen]
        target = pc.take(pa.array(targets, _I64), pc.index_in(combo, value_set=pa.array(seen, _I64)))
        label = pc.if_else(pc.equal(target, -1), pc.cast(names, pa.string()), pa.scalar(None, pa.string()))
        values = pa.array(columns.value, pa.binary())
        out: list[pa.Array] = []
        for j, column in enumerate(lineage.columns):
            mask = pc.equal(target, j)
            arrow = schema.field(j).type
            if not pc.any(mask).as_py():
                out.append(pa.nulls(n, arrow))
                continue
            rows_j = pc.filter(entry_row, mask)
            if len(pc.unique(rows_j)) != len(rows_j):
                raise Mismatch
            converted, bad = convert_values(pc.filter(values, mask), arrow)
            if len(rows_j) == n:        # in every row (entries come in row order): no scatter
                out.append(converted)
            else:
                out.append(pc.replace_with_mask(pa.nulls(n, arrow), pc.is_in(arange(n), value_set=rows_j),
                                                converted))
            if pc.any(bad).as_py():
                label = pc.replace_with_mask(label, mask, pc.if_else(bad, column.name,
                                                                     pa.scalar(None, pa.string())))
        # binlog_invalid: the labelled entries of each row, in image order.
        has_label = pc.is_valid(label)
        counted = pa.concat_arrays([pa.array([0], _I64), pc.cumulative_sum(pc.cast(has_label, _I64))])
        invalid = pa.ListArray.from_arrays(pc.cast(pc.take(counted, offsets), pa.int32()),
                                           pc.filter(label, has_label))
        order = pa.StructArray.from_arrays(
            [pa.array(meta["seq"], _I64), pa.array(meta["offset"], _I64), pa.array(meta["inner"], pa.int32()),
             pa.array(meta["event_index"], pa.int32()), row_index], fields=list(META_FIELDS[5][2]))
        out += [pa.array(meta["operation"], pa.string()), pa.array(meta["file"], pa.string()),
                pa.array(meta["offset"], _I64), pa.array(meta["gtid"], pa.string()),
                pa.array(meta["ts"], _I64).cast(META_FIELDS[4][2]), order, invalid,
                pa.array(meta["generation"], pa.int32())]
        return pa.RecordBatch.from_arrays(out, schema=schema)


def _reference_batch(payloads: Sequence[bytes], lineage: TableLineage, schema: pa.Schema) -> pa.RecordBatch:
    """The per-value reference (``typed_rows`` over ``event_rows``), for bytes the bulk path cannot split."""
    from binlog_model.spark.typed import typed_rows
    from binlog_model.spark.value_json import event_rows

    rows = [dict(r, before=dict(r["before"]) if r["before"] is not None else None,
                 after=dict(r["after"]) if r["after"] is not None else None,
                 orderKey=tuple(r["orderKey"].values()))
            for p in payloads for r in event_rows(pb.BinlogEvent.FromString(p)) if r["operation"] != "SCHEMA"]
    typed = list(typed_rows(rows, lineage))
    order_names = [f.name for f in META_FIELDS[5][2]]
    arrays = []
    for i, field in enumerate(schema):
        column = [row[i] for row in typed]
        if field.name == "binlog_order":
            column = [None if k is None else dict(zip(order_names, k, strict=True)) for k in column]
        arrays.append(pa.array(column, field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def typed_batch(payloads: Sequence[bytes], lineage: TableLineage, schema: pa.Schema,
                headers: Sequence[EventHeader] | None = None, contexts: list[tuple[Any, bytes]] | None = None
                ) -> list[pa.RecordBatch]:
    """The typed rows of serialized events (of this lineage's logged names, not SCHEMA), in ``schema``.
    ``headers``: the payloads' ``event_header``s when the caller read them already. ``contexts``: those of
    the raw row images the events may hold (``compiled_rows.RawImages``); only the C code reads those, so
    any other way raises ``RawImagesRefused``."""
    versions: list[dict[str, str]] = []
    version_ids: dict[int, int] = {}
    groups = {"after": _Rows(), "before": _Rows()}
    for i, payload in enumerate(payloads):
        event = headers[i] if headers is not None else event_header(payload)
        if event.operation == _SCHEMA:
            continue
        found = lineage.lookup(event.db, event.table, position_key(event.file, event.offset))
        if found is None:
            continue        # logged under this name when it belonged to another table's lineage
        names, generation = found
        vid = version_ids.get(id(names))
        if vid is None:
            vid = version_ids[id(names)] = len(versions)
            versions.append(names)
        groups["before" if event.operation == _DELETE else "after"].add(payload, event, vid, generation)
    try:
        return [g.build(image, lineage, versions, schema, contexts) for image, g in groups.items() if g.size]
    except Mismatch:
        if contexts is not None:
            raise RawImagesRefused(f"a batch of `{lineage.db}`.`{lineage.table}` needs the reference typing"
                                   ) from None
        return [_reference_batch(payloads, lineage, schema)]


def typed_batches(batches: Iterator[pa.RecordBatch], lineage: TableLineage, schema: pa.Schema
                  ) -> Iterator[pa.RecordBatch]:
    """``mapInArrow``'s function: batches holding the ``event`` column → typed batches."""
    for batch in batches:
        payloads = [p for p in batch.column("event").to_pylist() if p is not None]
        yield from typed_batch(payloads, lineage, schema)


def typed_frame(changes: Any, lineage: TableLineage) -> Any:
    """The typed DataFrame of one table from the data source's change rows (any ``operation`` other than
    SCHEMA; call with the rows of this table only)."""
    from pyspark.sql import functions as F

    ddl, schema = typed_schema(lineage)
    logged = F.lit(False)
    for db, table in lineage.logged_names:
        logged = logged | ((F.col("db") == db) & (F.col("table") == table))
    # The serialized event rides on the first change row of each event: typed in bulk from its bytes.
    events = changes.where(logged & (F.col("operation") != "SCHEMA") & F.col("event").isNotNull())
    return map_in_arrow(events.select("event"), lambda batches: typed_batches(batches, lineage, schema), ddl)


def map_in_arrow(frame: Any, func: Any, ddl: str) -> Any:
    """``frame.mapInArrow(func, ddl)`` without pandas: pyspark's method builds its UDF through
    ``pandas_udf``, which refuses to run without pandas although an Arrow map never uses it; the same UDF
    is built here directly (pyarrow only, as the data source)."""
    from pyspark.sql import DataFrame
    from pyspark.sql.udf import UserDefinedFunction
    from pyspark.util import PythonEvalType

    udf = UserDefinedFunction(func, returnType=ddl, evalType=PythonEvalType.SQL_MAP_ARROW_ITER_UDF)
    column = udf(*[frame[name] for name in frame.columns])
    return DataFrame(frame._jdf.mapInArrow(column._jc, False, None), frame.sparkSession)
