"""View messages: serialized ``BinlogEvent``s split into whole columns by protobuf's own parser.

Strategy: protobuf's parser (upb, compiled) walks the wire bytes; Python touches each event, not each row or
value. The bytes are re-read through *view* messages: the same field numbers as the model, with the nested
messages declared ``repeated bytes`` or ``repeated`` scalars, so one parse of a concatenation gives whole
columns at once:

- ``EventView`` is ``BinlogEvent`` with ``rows`` as raw bytes (the event-level fields, once per event);
- the rows of a batch, each preceded by a *sentinel* (``ROW_SENTINEL``: an explicit zero ``row_index`` and an
  empty entry in ``primary_key``, ``before`` and ``after``: a serializer never writes either, so each marks
  a row start), parse as one ``RowsView``: the column entries of every row, and row boundaries from the
  sentinels' places (``boundaries``);
- every column entry of one map concatenated parses as ``ColumnsView`` (names, value bytes), and all value
  bytes concatenated as ``ValuesView``: one list per value kind, in order; each value's kind is its first
  byte (its field tag, ``kinds_of``), so per-kind results are put back in place (``scatter``).

``event_header`` reads an event's own fields and counts its rows without making its rows Python objects: the
compiled core's reader (``_speedups.event_header``) where it is built and follows the bytes, else an
``EventView``, which it keeps for the caller that needs the rows.

Nested DATE/DATETIME/SET values take the sentinel trick once more (``DATETIME_SENTINEL``,
``LABEL_SENTINEL``). A count that does not match (bytes a serializer would not write) raises ``Mismatch``:
the callers then take their per-value reference path, never a wrong row. Shared by the data source's
batches (``arrow_batch``) and the typed job's (``typed_arrow``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.compiled import speedups

__all__ = ["DATETIME_NAMES", "DATETIME_SENTINEL", "LABEL_SENTINEL", "LABEL_SENTINEL_TEXT", "ROW_SENTINEL",
           "VALUE_FIELDS", "ColumnsView", "DateTimeView", "EventHeader", "EventView", "LabelsView",
           "Mismatch", "RowsView", "ValuesView", "after_zero_sentinels", "arange", "binary_array",
           "boundaries", "concatenated", "event_header", "kinds_of", "scatter"]

# -- view messages ------------------------------------------------------------------------------------------

_F = descriptor_pb2.FieldDescriptorProto
_REPEATED = _F.LABEL_REPEATED
# Value's oneof members as repeated fields of the wire type each kind is read as.
VALUE_FIELDS: list[tuple[int, str, int]] = [
    (1, "null_value", _F.TYPE_INT32), (2, "int_value", _F.TYPE_INT32), (3, "long_value", _F.TYPE_INT64),
    (4, "string_value", _F.TYPE_STRING), (5, "bytes_value", _F.TYPE_BYTES),
    (6, "decimal_value", _F.TYPE_STRING), (7, "double_value", _F.TYPE_DOUBLE),
    (8, "float_value", _F.TYPE_FLOAT), (9, "datetime_value", _F.TYPE_BYTES),
    (10, "date_value", _F.TYPE_BYTES),
    (11, "timestamp_micros", _F.TYPE_INT64), (12, "time_micros", _F.TYPE_INT64),
    (13, "uint64_value", _F.TYPE_UINT64), (14, "json_value", _F.TYPE_STRING),
    (15, "set_value", _F.TYPE_BYTES),
    (16, "bit_value", _F.TYPE_UINT64), (17, "geometry_value", _F.TYPE_BYTES),
    (18, "vector_value", _F.TYPE_BYTES), (19, "raw_text_value", _F.TYPE_BYTES),
    (20, "json_diff", _F.TYPE_BYTES),
]
DATETIME_NAMES = ("year", "month", "day", "hour", "minute", "second", "micros")


def _view_classes() -> dict[str, Any]:
    file = descriptor_pb2.FileDescriptorProto(name="binlog_model/spark/arrow_batch_views.proto",
                                              package="binlog_model.spark.views", syntax="proto3")
    file.dependency.extend([pb.DESCRIPTOR.name, "google/protobuf/timestamp.proto"])
    event = file.message_type.add()
    pb.BinlogEvent.DESCRIPTOR.CopyToProto(event)
    event.name = "EventView"
    for f in event.field:
        if f.number == pb.BinlogEvent.ROWS_FIELD_NUMBER:
            f.type = _F.TYPE_BYTES
            f.ClearField("type_name")

    def add(name: str, fields: Sequence[tuple[int, str, int]]) -> None:
        message = file.message_type.add(name=name)
        for number, field_name, kind in fields:
            message.field.add(name=field_name, number=number, type=kind, label=_REPEATED)

    add("RowsView", [(1, "row_index", _F.TYPE_UINT64), (2, "primary_key", _F.TYPE_BYTES),
                     (3, "before", _F.TYPE_BYTES), (4, "after", _F.TYPE_BYTES)])
    add("ColumnsView", [(1, "name", _F.TYPE_STRING), (2, "value", _F.TYPE_BYTES),
                        (3, "invisible", _F.TYPE_BOOL)])
    add("ValuesView", VALUE_FIELDS)
    add("DateTimeView", [(i + 1, n, _F.TYPE_UINT32) for i, n in enumerate(DATETIME_NAMES)])
    add("LabelsView", [(1, "labels", _F.TYPE_STRING)])
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(file.name)
    except KeyError:
        pool.AddSerializedFile(file.SerializeToString())
    return {m.name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{file.package}.{m.name}"))
            for m in file.message_type}


_VIEWS = _view_classes()
EventView = _VIEWS["EventView"]
RowsView = _VIEWS["RowsView"]
ColumnsView = _VIEWS["ColumnsView"]
ValuesView = _VIEWS["ValuesView"]
DateTimeView = _VIEWS["DateTimeView"]
LabelsView = _VIEWS["LabelsView"]

# An explicit zero row_index and an empty entry in each column list: written by no serializer.
ROW_SENTINEL = b"\x08\x00\x12\x00\x1a\x00\x22\x00"
DATETIME_SENTINEL = b"".join(bytes([(n << 3), 0]) for n in range(1, 8))   # every field an explicit zero
LABEL_SENTINEL_TEXT = "\x00binlog-model:sentinel\x00"
LABEL_SENTINEL = b"\x0a" + bytes([len(LABEL_SENTINEL_TEXT)]) + LABEL_SENTINEL_TEXT.encode()


class EventHeader(NamedTuple):
    """A serialized event's own fields, as its ``EventView`` reads them, and its count of rows. ``inner``:
    the position's inner_index, -1 when absent; ``view``: the ``EventView`` when the header was read
    through one (the rows' bytes are then at hand)."""

    db: str
    table: str
    operation: int
    rows: int
    file: str
    offset: int
    inner: int
    gtid: str
    seconds: int
    nanos: int
    event_index: int
    row_index: int
    view: Any = None


_EVENT_HEADER = getattr(speedups, "event_header", None)


def event_header(payload: bytes) -> EventHeader:
    """The header of one serialized ``BinlogEvent`` (its rows counted, not parsed)."""
    if _EVENT_HEADER is not None:
        found = _EVENT_HEADER(payload)
        if found is not None:
            return EventHeader(*found)
    view = EventView.FromString(payload)
    position, stamp = view.position, view.utc_timestamp
    return EventHeader(view.db, view.table, view.operation, len(view.rows), position.file, position.offset,
                       position.inner_index if position.HasField("inner_index") else -1, view.gtid,
                       stamp.seconds, stamp.nanos, view.event_index, view.row_index, view)


class Mismatch(Exception):
    """Bytes the bulk path cannot split exactly (a serializer would not write them): use the reference."""


# -- bulk helpers -------------------------------------------------------------------------------------------

def arange(n: int) -> pa.Array:
    return pa.array(range(n), pa.int64())


def boundaries(is_sentinel: pa.Array, groups: int) -> pa.Array:
    """Offsets (int32, ``groups + 1``) of the entries between sentinels, counted without the sentinels."""
    where = pc.indices_nonzero(is_sentinel)
    if len(where) != groups:
        raise Mismatch
    starts = pc.subtract(pc.cast(where, pa.int64()), arange(groups))
    total = len(is_sentinel) - groups
    return pa.concat_arrays([pc.cast(starts, pa.int32()), pa.array([total], pa.int32())])


def after_zero_sentinels(values: Sequence[int], groups: int, kind: pa.DataType) -> pa.Array:
    """``values`` is, per group, a zero sentinel and then the group's one value when it is not zero (proto3
    omits zeros): the value per group, 0 when absent."""
    arr = pa.array(values, kind)
    is_sentinel = pc.equal(arr, 0)
    if pc.sum(is_sentinel).as_py() != groups:
        raise Mismatch
    following = pa.concat_arrays([arr.slice(1), pa.array([0], kind)])
    picked = pc.filter(following, is_sentinel)
    if pc.count(arr).as_py() - groups != pc.sum(pc.not_equal(picked, 0)).as_py():
        raise Mismatch               # two values in a group: not what a serializer writes
    return picked


# A value's first byte is its field tag's first byte: distinct for all 20 kinds.
def _first_byte(number: int, kind: int) -> bytes:
    wire = {_F.TYPE_DOUBLE: 1, _F.TYPE_FLOAT: 5, _F.TYPE_STRING: 2, _F.TYPE_BYTES: 2}.get(kind, 0)
    tag = (number << 3) | wire
    return bytes([tag & 0x7F | (0x80 if tag > 0x7F else 0)])


_TAGS = pa.array([_first_byte(n, k) for n, _, k in VALUE_FIELDS], pa.binary())


def binary_array(values: Sequence[bytes] | pa.Array) -> pa.Array:
    """``values`` as an Arrow binary array (each bytes object made once, from a protobuf container)."""
    return values if isinstance(values, pa.Array) else pa.array(list(values), pa.binary())


def concatenated(values: pa.Array) -> memoryview:
    """The bytes of every element of a binary array, back to back (its data buffer: no join)."""
    if not len(values):
        return memoryview(b"")
    _, offsets, data = values.buffers()
    if data is None:
        return memoryview(b"")
    bounds = memoryview(offsets).cast("i")       # int32 offsets (binary, not large_binary)
    return memoryview(data)[bounds[values.offset]:bounds[values.offset + len(values)]]


def kinds_of(values: pa.Array) -> pa.Array:
    """Per serialized Value, the index of its kind in ``VALUE_FIELDS`` (null: no kind, or unknown)."""
    return pc.index_in(pc.binary_slice(values, 0, 1), value_set=_TAGS)


def scatter(pieces: list[pa.Array], kinds: pa.Array) -> pa.Array:
    """Per-kind results (``pieces``, in kind order, each in value order) back in value order: the stable
    sort of the kinds puts the values in the pieces' order, and its inverse takes them back."""
    order = pc.sort_indices(kinds)
    return pc.take(pa.concat_arrays(pieces), pc.sort_indices(order))


