"""A fast proto3-JSON dict of a ``BinlogEvent``: the same dict protobuf's ``json_format.MessageToDict`` makes,
built by code that knows the schema.

Strategy: ``json_format`` walks every message through its descriptors in Python (``ListFields``, a field
descriptor per value, its type looked up per value): about 90% of an ``events --format jsonl`` run. Here
each hot message (``BinlogEvent``, ``BinlogPosition``, ``Row``, ``Column``, ``Value``, ``Date``,
``DateTime``) has a function that reads its fields by name and applies json_format's rules for exactly
those fields: names are the descriptors' ``json_name`` (read once, at import), fields in field-number
order (``ListFields``' order), implicit-presence fields left out at their default, explicitly present ones
(``optional``, oneof members, messages) kept even at zero, 64-bit integers as strings, enums as names
(an unknown number as the number), bytes as base64, floats as json_format writes them (NaN and the
infinities as strings, a float32 as the shortest double that rounds to it), the Timestamp by its own
``ToJsonString``. Messages that are rare in a binlog (schema changes, ``statement_raw``, and the Value
kinds SET, GEOMETRY, VECTOR, raw text and JSON diff) are given to ``json_format`` itself, message by
message: its dict of a sub-message is exactly the part of the parent's dict. Where this module cannot
answer exactly (another message type, a schema this code was not written for,
anything that raises) the caller uses ``json_format`` for the whole event; ``FALLBACKS`` counts why.
``event_dict_with_defaults`` adds json_format's defaults (``--json-defaults``) to that dict, message by
message, where json_format puts them: after each message's set fields, in declaration order.

The reference stays ``json_format`` (``binlog_model.messages.to_dict(..., reference=True)``, or every
call with ``BINLOG_MODEL_JSON_REFERENCE=1`` in the environment); tests/unit/test_json_encoder.py compares
the two byte for byte on the golden fixtures, the shared corpus and generated messages.
"""

from __future__ import annotations

import base64
import json
import math
import os
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from google.protobuf import json_format
from google.protobuf.internal.type_checkers import ToShortestFloat
from google.protobuf.message import DecodeError

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.compiled import speedups

__all__ = ["COMPILED", "FALLBACKS", "REFERENCE", "REFERENCE_ENV", "SCHEMA_OK", "compiled_line", "event_dict",
           "typed_columns", "use_reference", "value_text"]

REFERENCE_ENV = "BINLOG_MODEL_JSON_REFERENCE"

# Why an event went to json_format whole (the option, or the exception's type name).
FALLBACKS: Counter[str] = Counter()

# The fields each function below writes, by message: checked against the descriptors at import, so a
# proto change this code does not know sends every event to json_format instead of losing a field.
_KNOWN: dict[Any, tuple[str, ...]] = {
    pb.BinlogEvent: ("utc_timestamp", "source", "server_uuid", "transaction_id", "query_index", "row_index",
                     "trace_info", "db", "table", "operation", "rows", "schema_changes", "position", "gtid",
                     "statement", "event_index", "last_in_statement", "server_id", "gtid_domain_id",
                     "statement_raw"),
    pb.BinlogPosition: ("file", "offset", "next_offset", "inner_index"),
    pb.Row: ("row_index", "primary_key", "before", "after"),
    pb.Column: ("name", "value", "invisible"),
    pb.Value: ("null_value", "int_value", "long_value", "string_value", "bytes_value", "decimal_value",
               "double_value", "float_value", "datetime_value", "date_value", "timestamp_micros",
               "time_micros", "uint64_value", "json_value", "set_value", "bit_value", "geometry_value",
               "vector_value", "raw_text_value", "json_diff"),
    pb.Date: ("year", "month", "day"),
    pb.DateTime: ("year", "month", "day", "hour", "minute", "second", "micros"),
}


def _schema_ok() -> bool:
    for cls, names in _KNOWN.items():
        fields = cls.DESCRIPTOR.fields
        if tuple(f.name for f in sorted(fields, key=lambda f: f.number)) != names:
            return False
        if any(f.is_extension or (f.message_type is not None and f.message_type.GetOptions().map_entry)
               for f in fields):
            return False
    return True


SCHEMA_OK = _schema_ok()


def _json_names(cls: Any) -> dict[str, str]:
    return {f.name: f.json_name for f in cls.DESCRIPTOR.fields}


_E = _json_names(pb.BinlogEvent)
_P = _json_names(pb.BinlogPosition)
_R = _json_names(pb.Row)
_C = _json_names(pb.Column)
_V = _json_names(pb.Value)
_D = _json_names(pb.Date)
_T = _json_names(pb.DateTime)
_OPERATIONS = {v.number: v.name for v in pb.BinlogEvent.Operation.DESCRIPTOR.values}
_to_dict = json_format.MessageToDict


def use_reference() -> bool:
    """Whether ``BINLOG_MODEL_JSON_REFERENCE`` (any value but "", "0") asks for json_format everywhere."""
    return os.environ.get(REFERENCE_ENV, "") not in ("", "0")


REFERENCE = use_reference()         # read once, at import
_JSONL_EVENT = None if REFERENCE or not SCHEMA_OK else getattr(speedups, "jsonl_event", None)
# Whether the compiled encoder runs (the compiled core is on, and the reference is not asked for).
COMPILED = _JSONL_EVENT is not None


def compiled_line(body: bytes) -> bytes | None:
    """The JSON line (typed values, no defaults, "\n" included) of the serialized ``BinlogEvent`` ``body``
    written by the compiled core (``_speedups.jsonl_event``: the same bytes as ``json_format``'s); None
    without the compiled core, or for an event it leaves to Python (counted in ``FALLBACKS``: schema
    changes, ``statement_raw``, bytes a serializer would not write)."""
    if _JSONL_EVENT is None:
        return None
    try:
        line: bytes | None = _JSONL_EVENT(body, value_text)
    except DecodeError:     # a rare Value kind protobuf cannot parse: so the whole event, which decides
        line = None
    if line is None:
        FALLBACKS["compiled_refused"] += 1
    return line


def value_text(data: bytes) -> str:
    """The compact proto3 JSON of one serialized ``Value`` (the kinds the compiled encoder leaves to
    Python: FLOAT, GEOMETRY, VECTOR, raw text, JSON diff, an empty Value)."""
    return json.dumps(_value(pb.Value.FromString(data)), ensure_ascii=False, separators=(",", ":"))


# -- values -------------------------------------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("utf-8")


def _double(v: float) -> float | str:
    if v != v:                                  # NaN
        return "NaN"
    if math.isinf(v):
        return "-Infinity" if v < 0 else "Infinity"
    return v


def _float(v: float) -> float | str:
    if v != v:
        return "NaN"
    if math.isinf(v):
        return "-Infinity" if v < 0 else "Infinity"
    return ToShortestFloat(v)


def _date(d: pb.Date) -> dict[str, int]:
    out = {}
    if d.year:
        out[_D["year"]] = d.year
    if d.month:
        out[_D["month"]] = d.month
    if d.day:
        out[_D["day"]] = d.day
    return out


_DATETIME_FIELDS = tuple((name, _T[name]) for name in _KNOWN[pb.DateTime])


def _datetime(t: pb.DateTime) -> dict[str, int]:
    out = {}
    for name, key in _DATETIME_FIELDS:
        n = getattr(t, name)
        if n:
            out[key] = n
    return out


def _null(_v: int) -> None:
    return None     # google.protobuf.NullValue is JSON null


def _same(v: Any) -> Any:
    return v


# oneof member -> (its JSON name, the function of its value); the members missing here (SET, GEOMETRY,
# VECTOR, raw text, JSON diff: rare in a binlog) are json_format's.
_VALUE_KINDS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "null_value": (_V["null_value"], _null),
    "int_value": (_V["int_value"], _same),
    "long_value": (_V["long_value"], str),
    "string_value": (_V["string_value"], _same),
    "bytes_value": (_V["bytes_value"], _b64),
    "decimal_value": (_V["decimal_value"], _same),
    "double_value": (_V["double_value"], _double),
    "float_value": (_V["float_value"], _float),
    "datetime_value": (_V["datetime_value"], _datetime),
    "date_value": (_V["date_value"], _date),
    "timestamp_micros": (_V["timestamp_micros"], str),
    "time_micros": (_V["time_micros"], str),
    "uint64_value": (_V["uint64_value"], str),
    "json_value": (_V["json_value"], _same),
    "bit_value": (_V["bit_value"], str),
}


def _value(v: pb.Value) -> dict[str, Any]:
    kind = v.WhichOneof("kind")
    if kind is None:
        return {}
    known = _VALUE_KINDS.get(kind)
    if known is None:
        return _to_dict(v)
    key, encode = known
    return {key: encode(getattr(v, kind))}


_NAME, _VALUE, _INVISIBLE = _C["name"], _C["value"], _C["invisible"]


def typed_columns(columns: Iterable[pb.Column]) -> list[dict[str, Any]]:
    """The proto3-JSON list of a row image (``Column`` s)."""
    out = []
    for c in columns:
        doc: dict[str, Any] = {}
        name = c.name
        if name:
            doc[_NAME] = name
        if c.HasField("value"):
            doc[_VALUE] = _value(c.value)
        if c.invisible:
            doc[_INVISIBLE] = True
        out.append(doc)
    return out


# -- events -------------------------------------------------------------------------------------------------


def _position(p: pb.BinlogPosition) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if p.file:
        out[_P["file"]] = p.file
    if p.offset:
        out[_P["offset"]] = str(p.offset)
    if p.next_offset:
        out[_P["next_offset"]] = str(p.next_offset)
    if p.HasField("inner_index"):
        out[_P["inner_index"]] = p.inner_index
    return out


_ROW_INDEX, _PRIMARY_KEY, _BEFORE, _AFTER = _R["row_index"], _R["primary_key"], _R["before"], _R["after"]


def _rows(rows: Iterable[pb.Row], columns: Callable[[Any], Any]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        doc: dict[str, Any] = {}
        if row.row_index:
            doc[_ROW_INDEX] = str(row.row_index)
        if row.primary_key:
            doc[_PRIMARY_KEY] = columns(row.primary_key)
        if row.before:
            doc[_BEFORE] = columns(row.before)
        if row.after:
            doc[_AFTER] = columns(row.after)
        out.append(doc)
    return out


def event_dict(event: pb.BinlogEvent, columns: Callable[[Any], Any] = typed_columns) -> dict[str, Any]:
    """``json_format.MessageToDict(event)`` (no defaults, lowerCamelCase names), built directly; each row
    image (a repeated ``Column``) becomes ``columns(image)`` (default: its proto3-JSON list, ``typed``).

    Raises what json_format would not for the same event only through a bug: callers catch everything and
    use json_format (``binlog_model.messages.to_dict``)."""
    e = event
    out: dict[str, Any] = {}
    if e.HasField("utc_timestamp"):
        out[_E["utc_timestamp"]] = e.utc_timestamp.ToJsonString()
    if e.source:
        out[_E["source"]] = e.source
    if e.server_uuid:
        out[_E["server_uuid"]] = e.server_uuid
    if e.transaction_id:
        out[_E["transaction_id"]] = str(e.transaction_id)
    if e.query_index:
        out[_E["query_index"]] = e.query_index
    if e.row_index:
        out[_E["row_index"]] = str(e.row_index)
    if e.HasField("trace_info"):
        out[_E["trace_info"]] = e.trace_info
    if e.db:
        out[_E["db"]] = e.db
    if e.table:
        out[_E["table"]] = e.table
    if e.operation:
        out[_E["operation"]] = _OPERATIONS.get(e.operation, e.operation)
    if e.rows:
        out[_E["rows"]] = _rows(e.rows, columns)
    if e.schema_changes:
        out[_E["schema_changes"]] = [_to_dict(sc) for sc in e.schema_changes]
    if e.HasField("position"):
        out[_E["position"]] = _position(e.position)
    if e.gtid:
        out[_E["gtid"]] = e.gtid
    if e.HasField("statement"):
        out[_E["statement"]] = e.statement
    if e.event_index:
        out[_E["event_index"]] = e.event_index
    if e.last_in_statement:
        out[_E["last_in_statement"]] = True
    if e.server_id:
        out[_E["server_id"]] = e.server_id
    if e.gtid_domain_id:
        out[_E["gtid_domain_id"]] = e.gtid_domain_id
    if e.HasField("statement_raw"):
        out[_E["statement_raw"]] = _to_dict(e.statement_raw)
    return out


# -- defaults (--json-defaults) ------------------------------------------------------------------------------

# json_format with always_print_fields_with_no_presence: each message's set fields, then every field
# without presence that is missing, in declaration order, at its default's JSON (0, "0", "", false, the
# enum's zero name, []). Taken from json_format itself, once per message type.
_WKT = {"google.protobuf.Timestamp"}


def _all_messages(d: Any, found: dict[str, Any]) -> dict[str, Any]:
    if d.full_name not in found and d.full_name not in _WKT:
        found[d.full_name] = d
        for f in d.fields:
            if f.message_type is not None:
                _all_messages(f.message_type, found)
    return found


def _defaults_by_type() -> dict[str, tuple[tuple[str, Any], ...]]:
    from google.protobuf.message_factory import GetMessageClass

    out = {}
    for name, d in _all_messages(pb.BinlogEvent.DESCRIPTOR, {}).items():
        doc = json_format.MessageToDict(GetMessageClass(d)(), always_print_fields_with_no_presence=True)
        out[name] = tuple(doc.items())
    return out


_DEFAULTS = _defaults_by_type()
_ROW_IMAGES = frozenset((_R["primary_key"], _R["before"], _R["after"]))


# message type -> its message fields json_format recurses into: (JSON name, their type, repeated)
_CHILDREN = {name: tuple((f.json_name, f.message_type.full_name, f.is_repeated) for f in d.fields
                         if f.message_type is not None and f.message_type.full_name not in _WKT)
             for name, d in _all_messages(pb.BinlogEvent.DESCRIPTOR, {}).items()}
_COLUMN, _ROW = pb.Column.DESCRIPTOR.full_name, pb.Row.DESCRIPTOR.full_name


def _fill(doc: dict[str, Any], name: str, columns: Callable[[Any], Any]) -> None:
    for key, sub, repeated in _CHILDREN[name]:
        value = doc.get(key)
        if value is None or (sub == _COLUMN and columns is not typed_columns):
            continue        # absent, or plain row images (name -> value objects, no messages)
        for item in value if repeated else (value,):
            _fill(item, sub, columns)
    is_row = name == _ROW
    for key, default in _DEFAULTS[name]:
        if key not in doc:
            if is_row and key in _ROW_IMAGES:
                doc[key] = columns(())         # [] typed; {} plain, as the images the event has
            else:
                doc[key] = [] if type(default) is list else default


def event_dict_with_defaults(event: pb.BinlogEvent,
                             columns: Callable[[Any], Any] = typed_columns) -> dict[str, Any]:
    """``json_format.MessageToDict(event, always_print_fields_with_no_presence=True)``: ``event_dict``,
    then the defaults of every message in it added where json_format adds them."""
    doc = event_dict(event, columns)
    _fill(doc, pb.BinlogEvent.DESCRIPTOR.full_name, columns)
    return doc

