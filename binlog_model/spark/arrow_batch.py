"""Serialized ``BinlogEvent``s → Arrow record batches of the data source's row layout, in bulk.

Strategy: with the compiled core, one C pass over the events' wire bytes writes every column's Arrow
buffers (``_speedups.arrow_columns``). Without it, protobuf's own parser splits rows, columns and values
into whole columns through the view messages of ``wire_views``, and Arrow compute formats each kind's
values at once (``value_texts``); Python touches each event, not each row or value. Bytes the views cannot
split exactly (a serializer would not write them) never give a wrong row: the batch is built by the
per-value reference (``value_json``) instead. Kinds that are rare in binlogs (GEOMETRY, VECTOR, raw text,
JSON diff) and floating values are formatted per value, exactly as ``json_format``. The compiled row
builder's serialized events take the same path (``add``).
"""

from __future__ import annotations

import binascii
import functools
import math
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from google.protobuf.internal.type_checkers import ToShortestFloat

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.compiled import speedups
from binlog_model.position import file_sequence
from binlog_model.spark import wire_views
from binlog_model.spark.value_json import OPERATIONS, value_json

__all__ = ["ARROW_SCHEMA", "MAP_TYPE", "ArrowBatch", "value_texts"]

MAP_TYPE = pa.map_(pa.string(), pa.string())
ORDER_KEY = pa.struct([("fileSeq", pa.int64()), ("offset", pa.int64()), ("innerIndex", pa.int32()),
                       ("eventIndex", pa.int32()), ("rowIndex", pa.int64())])
ARROW_SCHEMA = pa.schema([
    ("source", pa.string()), ("serverUuid", pa.string()), ("transactionId", pa.int64()),
    ("queryIndex", pa.int32()), ("eventIndex", pa.int32()), ("rowIndex", pa.int64()),
    ("lastInStatement", pa.bool_()), ("file", pa.string()), ("offset", pa.int64()),
    ("nextOffset", pa.int64()), ("innerIndex", pa.int32()), ("utcTimestamp", pa.timestamp("us", tz="UTC")),
    ("db", pa.string()), ("table", pa.string()), ("operation", pa.string()), ("gtid", pa.string()),
    ("gtidDomainId", pa.int32()), ("serverId", pa.int64()), ("statement", pa.string()),
    ("traceInfo", pa.string()), ("primaryKey", MAP_TYPE), ("before", MAP_TYPE), ("after", MAP_TYPE),
    ("orderKey", ORDER_KEY), ("event", pa.binary()),
])

_ESCAPES = [("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t"), ("\b", "\\b"),
            ("\f", "\\f")] + [(chr(c), f"\\u{c:04x}") for c in range(0x20) if chr(c) not in "\n\r\t\b\f"]


def _quoted(texts: pa.Array) -> pa.Array:
    """JSON string literals of ``texts``, as ``json.dumps(text, ensure_ascii=False)`` writes them."""
    needs = pc.match_substring_regex(texts, r'[\x00-\x1f\\"]')
    if pc.any(needs).as_py():
        subset = pc.filter(texts, needs)
        for raw, escaped in _ESCAPES:          # backslash first, so later escapes are not doubled
            subset = pc.replace_substring(subset, raw, escaped)
        texts = pc.replace_with_mask(texts, needs, subset)
    return pc.binary_join_element_wise('"', texts, '"', "")


def _wrap(prefix: str, texts: pa.Array, suffix: str) -> pa.Array:
    return pc.binary_join_element_wise(prefix, texts, suffix, "")


def _ints(prefix: str, values: Sequence[int], kind: pa.DataType, quote: bool) -> pa.Array:
    text = pc.cast(pa.array(values, kind), pa.string())
    return _wrap(prefix + ('"' if quote else ""), text, ('"' if quote else "") + "}")


def _floats(prefix: str, values: Sequence[float], single: bool) -> pa.Array:
    # json_format: NaN and infinities as strings; a float as the shortest double that rounds to it.
    def text(v: float) -> str:
        if math.isfinite(v):
            return repr(ToShortestFloat(v) if single else v)
        return '"NaN"' if math.isnan(v) else ('"Infinity"' if v > 0 else '"-Infinity"')
    return _wrap(prefix, pa.array(list(map(text, values)), pa.string()), "}")


_B64 = functools.partial(binascii.b2a_base64, newline=False)


def _bytes(values: Sequence[bytes]) -> pa.Array:
    encoded = pa.array(list(map(_B64, values)), pa.binary()).cast(pa.string())
    return _wrap('{"bytesValue":"', encoded, '"}')


def _datetimes(prefix: str, payloads: Sequence[bytes], names: tuple[str, ...]) -> pa.Array:
    n = len(payloads)
    sentinel = wire_views.DATETIME_SENTINEL[:2 * len(names)]
    view = wire_views.DateTimeView.FromString(sentinel + sentinel.join(payloads))
    parts = []
    for name in names:
        values = wire_views.after_zero_sentinels(getattr(view, name), n, pa.uint32())
        part = _wrap(f'"{name}":', pc.cast(values, pa.string()), ",")
        parts.append(pc.if_else(pc.not_equal(values, 0), part, ""))     # proto3 JSON omits zero fields
    for name in wire_views.DATETIME_NAMES[len(names):]:
        if len(getattr(view, name)):
            raise wire_views.Mismatch              # a DATE with time fields is not a Date
    inner = pc.utf8_rtrim(pc.binary_join_element_wise(*parts, ""), characters=",")
    return _wrap(prefix + "{", inner, "}}")


def _sets(payloads: Sequence[bytes]) -> pa.Array:
    n = len(payloads)
    sentinel = wire_views.LABEL_SENTINEL
    view = wire_views.LabelsView.FromString(sentinel + sentinel.join(payloads))
    labels = pa.array(view.labels, pa.string())
    is_sentinel = pc.equal(labels, wire_views.LABEL_SENTINEL_TEXT)
    offsets = wire_views.boundaries(is_sentinel, n)
    members = pa.ListArray.from_arrays(offsets, _quoted(pc.filter(labels, pc.invert(is_sentinel))))
    listed = _wrap('{"setValue":{"labels":[', pc.binary_join(members, ","), "]}}")
    return pc.if_else(pc.greater(pc.list_value_length(members), 0), listed, '{"setValue":{}}')


def _kind_texts(number: int, values: Sequence[Any]) -> pa.Array | None:
    """The canonical JSON of ``values``, all of Value field ``number``; None: format one by one."""
    if number == 1:
        return pa.array(['{"nullValue":null}'] * len(values), pa.string())
    if number == 2:
        return _ints('{"intValue":', values, pa.int32(), quote=False)
    if number in _QUOTED_INTS:
        prefix, kind = _QUOTED_INTS[number]
        return _ints(prefix, values, kind, quote=True)
    if number in _STRINGS:
        return _wrap(_STRINGS[number], _quoted(pa.array(values, pa.string())), "}")
    if number == 5:
        return _bytes(values)
    if number == 7:
        return _floats('{"doubleValue":', values, single=False)
    if number == 8:
        return _floats('{"floatValue":', values, single=True)
    if number == 9:
        return _datetimes('{"datetimeValue":', values, wire_views.DATETIME_NAMES)
    if number == 10:
        return _datetimes('{"dateValue":', values, wire_views.DATETIME_NAMES[:3])
    if number == 15:
        return _sets(values)
    return None


_QUOTED_INTS = {3: ('{"longValue":', pa.int64()), 11: ('{"timestampMicros":', pa.int64()),
                12: ('{"timeMicros":', pa.int64()), 13: ('{"uint64Value":', pa.uint64()),
                16: ('{"bitValue":', pa.uint64())}
_STRINGS = {4: '{"stringValue":', 6: '{"decimalValue":', 14: '{"jsonValue":'}
_NO_KIND = len(wire_views.VALUE_FIELDS)


def value_texts(values: Sequence[bytes] | pa.Array) -> pa.Array:
    """The canonical value JSON (``value_json``) of each serialized ``Value`` in ``values``, as one Arrow
    string array, built per kind."""
    values = wire_views.binary_array(values)
    n = len(values)
    if not n:
        return pa.array([], pa.string())
    kinds = pc.fill_null(wire_views.kinds_of(values), _NO_KIND)
    view = wire_views.ValuesView.FromString(wire_views.concatenated(values))
    counts = {row["values"]: row["counts"] for row in pc.value_counts(kinds).to_pylist()}
    pieces: list[pa.Array] = []
    for index, (number, name, _) in enumerate(wire_views.VALUE_FIELDS):
        items = getattr(view, name)
        if counts.get(index, 0) != len(items):
            raise wire_views.Mismatch
        if not len(items):
            continue
        texts = _kind_texts(number, items)
        if texts is None:
            texts = _texts_one_by_one(pc.filter(values, pc.equal(kinds, index)))
        pieces.append(texts)
    if counts.get(_NO_KIND):
        pieces.append(_texts_one_by_one(pc.filter(values, pc.equal(kinds, _NO_KIND))))
    return wire_views.scatter(pieces, kinds)


def _texts_one_by_one(values: pa.Array) -> pa.Array:
    return pa.array([value_json(pb.Value.FromString(v)) for v in values.to_pylist()], pa.string())


def _map_column(entries: Sequence[bytes], rows: int, null: list[bool]) -> pa.Array:
    """One ``map<string,string>`` column from the column entries of ``rows`` rows, each row's entries
    after an empty sentinel entry."""
    arr = wire_views.binary_array(entries)
    offsets = wire_views.boundaries(pc.equal(pc.binary_length(arr), 0), rows)
    columns = wire_views.ColumnsView.FromString(wire_views.concatenated(arr))
    total = len(arr) - rows
    if len(columns.name) != total or len(columns.value) != total:
        raise wire_views.Mismatch
    return pa.MapArray.from_arrays(offsets, pa.array(columns.name, pa.string()), value_texts(columns.value),
                                   type=MAP_TYPE, mask=pa.array(null, pa.bool_()))


# -- the compiled path -------------------------------------------------------------------------------------

_ARROW_COLUMNS = getattr(speedups, "arrow_columns", None)
_ENTRY = pa.struct([MAP_TYPE.key_field, MAP_TYPE.item_field])


def _fallback_text(value: bytes) -> str:
    """The kinds the C code leaves to Python (FLOAT, GEOMETRY, VECTOR, raw text, JSON diff)."""
    return value_json(pb.Value.FromString(value))


def _buffer(data: bytes | None) -> pa.Buffer | None:
    return None if data is None else pa.py_buffer(data)


def _compiled_batch(payloads: list[bytes], events_mode: bool, rows: int) -> pa.RecordBatch | None:
    """The batch straight from the C code's Arrow buffers (``_speedups.arrow_columns``); None without the
    compiled core, or for bytes it leaves to the Python path."""
    if _ARROW_COLUMNS is None:
        return None
    built = _ARROW_COLUMNS(payloads, events_mode, _fallback_text, file_sequence)
    if built is None or built[0] != rows:
        return None
    specs = built[1]

    def plain(name: str, kind: pa.DataType) -> pa.Array:
        return pa.Array.from_buffers(kind, rows, [_buffer(b) for b in specs[name]])

    def strings(count: int, offsets: bytes, data: bytes) -> pa.Array:
        return pa.Array.from_buffers(pa.string(), count, [None, pa.py_buffer(offsets), pa.py_buffer(data)])

    columns: dict[str, pa.Array] = {}
    for name in ("primaryKey", "before", "after"):
        valid, offsets, entries, key_offsets, keys, value_offsets, values = specs[name]
        entry = pa.StructArray.from_arrays(
            [strings(entries, key_offsets, keys), strings(entries, value_offsets, values)],
            fields=list(_ENTRY))
        columns[name] = pa.Array.from_buffers(MAP_TYPE, rows, [_buffer(valid), pa.py_buffer(offsets)],
                                              children=[entry])
    for field in ARROW_SCHEMA:
        if field.name not in columns and field.name != "orderKey":
            columns[field.name] = plain(field.name, field.type)
    columns["orderKey"] = pa.StructArray.from_arrays(
        [plain("fileSeq", pa.int64()), columns["offset"], plain("orderInner", pa.int32()),
         columns["eventIndex"], columns["rowIndex"]], fields=list(ORDER_KEY))
    return pa.RecordBatch.from_arrays([columns[f.name] for f in ARROW_SCHEMA], schema=ARROW_SCHEMA)


# -- batches ------------------------------------------------------------------------------------------------

_PLAIN = [f.name for f in ARROW_SCHEMA if f.name not in ("primaryKey", "before", "after", "orderKey",
                                                          "rowIndex")]
_INSERT = pb.BinlogEvent.INSERT
_DELETE = pb.BinlogEvent.DELETE


class ArrowBatch:
    """Output rows of serialized events, as Arrow columns of ``ARROW_SCHEMA``. ``add`` takes one event's
    bytes (a row per row change; one row for an event without rows, or every event in ``events`` mode);
    ``build`` makes the record batch: from the C code's buffers with the compiled core, else in Python,
    where an event's fields are kept once per event and repeated per row by Arrow (``take``). The
    statement text and the event bytes ride on an event's first row only."""

    def __init__(self, events_mode: bool = False) -> None:
        self.events_mode = events_mode
        self.size = 0
        self.payloads: list[bytes] = []
        self.counts: list[int] = []          # per event: its output rows

    def add(self, payload: bytes) -> None:
        # Parsed here (protobuf checks every field) whichever path builds the batch.
        event = wire_views.EventView.FromString(payload)
        n = 1 if self.events_mode or not event.rows else len(event.rows)
        self.payloads.append(payload)
        self.counts.append(n)
        self.size += n

    def build(self) -> pa.RecordBatch:
        compiled = _compiled_batch(self.payloads, self.events_mode, self.size)
        return compiled if compiled is not None else self._python_batch()

    def _python_batch(self) -> pa.RecordBatch:
        views = [wire_views.EventView.FromString(payload) for payload in self.payloads]
        try:
            maps, row_index = self._maps(views)
        except wire_views.Mismatch:
            maps, row_index = self._maps_one_by_one()
        fields = self._event_fields(views)
        per_row = pa.array([i for i, n in enumerate(self.counts) for _ in range(n)], pa.int32())
        first = pa.array([i if k == 0 else None for i, n in enumerate(self.counts) for k in range(n)],
                         pa.int32())

        def repeated(name: str, kind: pa.DataType) -> pa.Array:
            return pc.take(pa.array(fields[name], kind), first if name in ("statement", "event") else per_row)

        columns: list[pa.Array] = []
        for field in ARROW_SCHEMA:
            name = field.name
            if name in maps:
                columns.append(maps[name])
            elif name == "rowIndex":
                columns.append(row_index)
            elif name == "orderKey":
                columns.append(pa.StructArray.from_arrays(
                    [repeated("fileSeq", pa.int64()), repeated("offset", pa.int64()),
                     repeated("inner", pa.int32()), repeated("eventIndex", pa.int32()), row_index],
                    fields=list(ORDER_KEY)))
            else:
                columns.append(repeated(name, field.type))
        return pa.RecordBatch.from_arrays(columns, schema=ARROW_SCHEMA)

    def _event_fields(self, views: list[Any]) -> dict[str, list[Any]]:
        """Per event (``views``: the events parsed as ``EventView``), the values of its own columns."""
        fields: dict[str, list[Any]] = {name: [] for name in (*_PLAIN, "fileSeq", "inner")}
        for payload, event in zip(self.payloads, views, strict=True):
            pos = event.position
            inner = pos.inner_index if pos.HasField("inner_index") else None
            ts = event.utc_timestamp
            for name, value in (
                    ("source", event.source), ("serverUuid", event.server_uuid),
                    ("transactionId", event.transaction_id), ("queryIndex", event.query_index),
                    ("eventIndex", event.event_index), ("lastInStatement", event.last_in_statement),
                    ("file", pos.file), ("offset", pos.offset), ("nextOffset", pos.next_offset),
                    ("innerIndex", inner), ("utcTimestamp", ts.seconds * 1_000_000 + ts.nanos // 1000),
                    ("db", event.db), ("table", event.table), ("operation", OPERATIONS[event.operation]),
                    ("gtid", event.gtid), ("gtidDomainId", event.gtid_domain_id),
                    ("serverId", event.server_id),
                    ("traceInfo", event.trace_info if event.HasField("trace_info") else None),
                    ("statement", event.statement if event.HasField("statement") else None),
                    ("event", payload), ("fileSeq", file_sequence(pos.file)),
                    ("inner", -1 if inner is None else inner)):
                fields[name].append(value)
        return fields

    def _maps(self, views: list[Any]) -> tuple[dict[str, pa.Array], pa.Array]:
        """The Python bulk path: the rows of every event after a sentinel, parsed as one ``RowsView``."""
        blobs: list[bytes] = []
        null_pk: list[bool] = []
        null_before: list[bool] = []
        null_after: list[bool] = []
        for event in views:
            rows = event.rows
            if self.events_mode or not rows:
                # One output row: the event's own row_index, no column entries.
                own = (wire_views.RowsView(row_index=[event.row_index]).SerializeToString() if event.row_index
                       else b"")
                blobs.append(wire_views.ROW_SENTINEL + own)
                null_pk.append(True)
                null_before.append(True)
                null_after.append(True)
            else:
                n = len(rows)
                blobs.append(wire_views.ROW_SENTINEL + wire_views.ROW_SENTINEL.join(rows))
                null_pk.extend([False] * n)
                null_before.extend([event.operation == _INSERT] * n)
                null_after.extend([event.operation == _DELETE] * n)
        view = wire_views.RowsView.FromString(b"".join(blobs))
        row_index = wire_views.after_zero_sentinels(view.row_index, self.size, pa.uint64())
        row_index = pc.cast(row_index, pa.int64())
        maps = {"primaryKey": _map_column(view.primary_key, self.size, null_pk),
                "before": _map_column(view.before, self.size, null_before),
                "after": _map_column(view.after, self.size, null_after)}
        return maps, row_index

    def _maps_one_by_one(self) -> tuple[dict[str, pa.Array], pa.Array]:
        """The reference path (``value_json`` per value), for bytes the bulk path cannot split."""
        from binlog_model.spark.value_json import event_rows

        mode = "events" if self.events_mode else "rows"
        rows = [r for p in self.payloads for r in event_rows(pb.BinlogEvent.FromString(p), mode=mode)]
        maps = {}
        for name in ("primaryKey", "before", "after"):
            maps[name] = pa.array([r[name] for r in rows], MAP_TYPE)
        return maps, pa.array([r["rowIndex"] for r in rows], pa.int64())
