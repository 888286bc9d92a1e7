"""The BinlogEvent messages: the generated protobuf classes, their JSON and dict forms, and Python values.

Strategy: the messages are the generated ``binlog_model._pb.binlog_event_pb2`` classes, re-exported here so
no caller imports generated code directly. (This module was ``binlog_model.model``; it is named for what it
holds so it no longer shares a name with ``schema_tracker.model``, the tracked schema.) Writing streams of
messages (JSON lines, length-delimited protobuf, Parquet) is ``binlog_model.sinks``. The helpers are thin
and strict:

- JSON / dict: protobuf's canonical proto3 JSON mapping (``json_format``). Field names are lowerCamelCase
  (``utcTimestamp``, ``serverUuid``: the spec's names, derived from the snake_case proto fields); 64-bit
  integers are JSON strings (``"transactionId": "8"``), as the proto3 JSON spec requires so values above
  2^53 survive JavaScript; enums are names (``"operation": "INSERT"``); the timestamp is RFC 3339 text;
  fields at their default value are omitted unless ``include_defaults=True``. ``to_json`` writes one compact
  line (JSON Lines friendly) with non-ASCII text as is. A ``BinlogEvent``'s dict is built by
  ``binlog_model.json_encoder`` (the same dict, several times faster); ``reference=True`` or
  ``BINLOG_MODEL_JSON_REFERENCE=1`` builds it with ``json_format`` itself.
- ``python_value`` turns a model ``Value`` back into the Python value the wire layer decoded.
- ``to_display_dict`` is a readable view close to the spec's listings (columns as ``name → plain value``);
  it is for people and logs, not for round trips (it drops the Integer/Long distinction).
"""

from __future__ import annotations

import base64
import datetime
import json
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from binlog_model import json_encoder as _json_encoder
from binlog_model._pb.binlog_event_pb2 import (
    AlterDatabase,
    BinlogEvent,
    BinlogPosition,
    Column,
    ColumnDefinition,
    ColumnType,
    CreateDatabase,
    CreateOrModifyColumn,
    CreateTable,
    Date,
    DateTime,
    DropColumn,
    DropDatabase,
    DropTable,
    Geometry,
    JsonDiff,
    JsonDiffOperation,
    PrimaryKeyChanged,
    RawText,
    RenameColumn,
    RenameTable,
    Row,
    SchemaChange,
    SetValue,
    SkippedStatement,
    TableCharsetChanged,
    TruncateTable,
    Value,
    Vector,
)
from binlog_model.errors import DecodeError
from binlog_model.wire import values as _wire_values
from binlog_model.wire.codecs.temporal import make_date, make_datetime

__all__ = [
    "AlterDatabase",
    "BinlogEvent",
    "BinlogPosition",
    "Column",
    "ColumnDefinition",
    "ColumnType",
    "CreateDatabase",
    "CreateOrModifyColumn",
    "CreateTable",
    "Date",
    "DateTime",
    "DropColumn",
    "DropDatabase",
    "DropTable",
    "Geometry",
    "JsonDiff",
    "JsonDiffOperation",
    "PrimaryKeyChanged",
    "RawText",
    "RenameColumn",
    "RenameTable",
    "Row",
    "SchemaChange",
    "SetValue",
    "SkippedStatement",
    "TableCharsetChanged",
    "TruncateTable",
    "Value",
    "Vector",
    "from_dict",
    "from_json",
    "python_value",
    "to_dict",
    "to_dict_with",
    "to_display_dict",
    "to_json",
]

_UTC = datetime.UTC
_REFERENCE = _json_encoder.REFERENCE
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=_UTC)
_DIFF_OP_NAMES = {JsonDiffOperation.REPLACE: "REPLACE", JsonDiffOperation.INSERT: "INSERT",
                  JsonDiffOperation.REMOVE: "REMOVE"}


# -- JSON and dicts --------------------------------------------------------------------------------------


def to_dict(event: Message, *, include_defaults: bool = False, reference: bool = False) -> dict[str, Any]:
    """The canonical proto3-JSON dict of ``event`` (any model message), lowerCamelCase names.

    A ``BinlogEvent``'s is built by ``json_encoder.event_dict`` (``event_dict_with_defaults``; the same
    dict, faster); ``reference=True`` (or ``BINLOG_MODEL_JSON_REFERENCE=1``) always uses
    protobuf's ``json_format``, the reference it is tested against."""
    return to_dict_with(event, include_defaults=include_defaults, reference=reference)


def to_dict_with(event: Message, *, include_defaults: bool = False, reference: bool = False,
                 columns: Callable[[Any], Any] | None = None) -> dict[str, Any]:
    """``to_dict``, with each row image of a ``BinlogEvent`` (its ``primaryKey``, ``before``, ``after``)
    replaced by ``columns(image)`` when ``columns`` is given (the JSON lines sink's ``plain`` values)."""
    if not (reference or _REFERENCE) and _json_encoder.SCHEMA_OK and type(event) is BinlogEvent:
        build = _json_encoder.event_dict_with_defaults if include_defaults else _json_encoder.event_dict
        try:
            return build(event, columns or _json_encoder.typed_columns)
        except Exception as exc:    # json_format decides: the same dict, or its own error
            _json_encoder.FALLBACKS[type(exc).__name__] += 1
    out = json_format.MessageToDict(event, always_print_fields_with_no_presence=include_defaults)
    if columns is not None and isinstance(event, BinlogEvent):
        for row, doc in zip(event.rows, out.get("rows", ()), strict=True):
            for key, image in (("primaryKey", row.primary_key), ("before", row.before), ("after", row.after)):
                if key in doc:
                    doc[key] = columns(image)
    return out


def to_json(event: Message, *, include_defaults: bool = False, indent: int | None = None,
            reference: bool = False) -> str:
    """Canonical proto3 JSON of ``event``: one compact line unless ``indent`` is given. ``reference``:
    built by protobuf's ``json_format`` (see ``to_dict``); the text is the same either way."""
    separators = (",", ":") if indent is None else (",", ": ")
    return json.dumps(to_dict(event, include_defaults=include_defaults, reference=reference),
                      ensure_ascii=False, indent=indent, separators=separators)


def from_dict(data: dict[str, Any]) -> BinlogEvent:
    """Parse a proto3-JSON dict (as ``to_dict`` makes) into a ``BinlogEvent``.

    Raises ``DecodeError`` naming the problem for unknown fields or values of the wrong type.
    """
    try:
        return json_format.ParseDict(data, BinlogEvent())
    except (json_format.ParseError, TypeError, ValueError) as exc:
        raise DecodeError(f"not a BinlogEvent dict: {exc}", expected="BinlogEvent proto3 JSON") from exc


def from_json(text: str | bytes) -> BinlogEvent:
    """Parse proto3 JSON (as ``to_json`` writes) into a ``BinlogEvent``; raises ``DecodeError``."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DecodeError(f"not JSON: {exc}", expected="BinlogEvent proto3 JSON") from exc
    if not isinstance(data, dict):
        raise DecodeError(f"JSON {type(data).__name__} is not a BinlogEvent object",
                          expected="BinlogEvent proto3 JSON")
    return from_dict(data)


# -- values back to Python ---------------------------------------------------------------------------------


def python_value(value: Value) -> Any:
    """The Python value of a model ``Value`` (the wire layer's vocabulary, after the schema applied).

    null → None; integer kinds and bit → int; decimal → ``Decimal``; float/double → float; string/json
    → str; bytes → bytes; raw_text → its bytes; date/datetime → ``datetime.date``/``datetime.datetime``
    or the wire's ``InvalidDate``/``InvalidDateTime`` for zero and invalid ones; timestamp → aware UTC
    ``datetime`` (0 → ``InvalidDateTime`` of zeros); time → ``timedelta``; set → tuple of labels;
    geometry → the wire's ``Geometry``; vector → tuple of floats; json_diff → tuple of the wire's
    ``JsonDiff`` (value as JSON text, None for REMOVE).
    """
    kind = value.WhichOneof("kind")
    if kind is None or kind == "null_value":
        return None
    if kind in ("int_value", "long_value", "uint64_value", "bit_value", "string_value", "bytes_value",
                "double_value", "float_value", "json_value"):
        return getattr(value, kind)
    if kind == "decimal_value":
        return Decimal(value.decimal_value)
    if kind == "date_value":
        d = value.date_value
        return make_date(d.year, d.month, d.day)
    if kind == "datetime_value":
        t = value.datetime_value
        return make_datetime(t.year, t.month, t.day, t.hour, t.minute, t.second, t.micros)
    if kind == "timestamp_micros":
        if value.timestamp_micros == 0:
            return _wire_values.InvalidDateTime(0, 0, 0)
        return _EPOCH + datetime.timedelta(microseconds=value.timestamp_micros)
    if kind == "time_micros":
        return datetime.timedelta(microseconds=value.time_micros)
    if kind == "set_value":
        return tuple(value.set_value.labels)
    if kind == "geometry_value":
        return _wire_values.Geometry(value.geometry_value.srid, value.geometry_value.wkb)
    if kind == "vector_value":
        return tuple(value.vector_value.values)
    if kind == "raw_text_value":
        return value.raw_text_value.data
    if kind == "json_diff":
        # The operations with each value as JSON text (as json_value is text), None for REMOVE.
        return tuple(_wire_values.JsonDiff(_DIFF_OP_NAMES[op.op], op.path,
                                           op.value if op.HasField("value") else None)
                     for op in value.json_diff.operations)
    raise DecodeError(f"unknown Value kind {kind!r}")  # a newer proto than this code


# -- the readable view -------------------------------------------------------------------------------------


def _display(value: Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind is None or kind == "null_value":
        return None
    if kind in ("int_value", "long_value", "uint64_value", "bit_value", "string_value", "double_value",
                "float_value", "decimal_value", "json_value"):
        return getattr(value, kind)
    if kind == "bytes_value":
        return {"base64": base64.b64encode(value.bytes_value).decode("ascii")}
    if kind == "raw_text_value":
        raw = value.raw_text_value
        return {"base64": base64.b64encode(raw.data).decode("ascii"), "charset": raw.charset}
    if kind == "date_value":
        d = value.date_value
        return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"
    if kind == "datetime_value":
        t = value.datetime_value
        text = f"{t.year:04d}-{t.month:02d}-{t.day:02d} {t.hour:02d}:{t.minute:02d}:{t.second:02d}"
        return f"{text}.{t.micros:06d}" if t.micros else text
    if kind == "timestamp_micros":
        if value.timestamp_micros == 0:
            return "0000-00-00 00:00:00"
        stamp = _EPOCH + datetime.timedelta(microseconds=value.timestamp_micros)
        return stamp.isoformat().replace("+00:00", "Z")
    if kind == "time_micros":
        micros = value.time_micros
        sign = "-" if micros < 0 else ""
        secs, frac = divmod(abs(micros), 1_000_000)
        text = f"{sign}{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}"
        return f"{text}.{frac:06d}" if frac else text
    if kind == "set_value":
        return list(value.set_value.labels)
    if kind == "geometry_value":
        g = value.geometry_value
        return {"srid": g.srid, "wkb": base64.b64encode(g.wkb).decode("ascii")}
    if kind == "vector_value":
        return list(value.vector_value.values)
    if kind == "json_diff":
        return {"json_diff": [{"op": _DIFF_OP_NAMES[op.op], "path": op.path,
                               **({"value": op.value} if op.HasField("value") else {})}
                              for op in value.json_diff.operations]}
    return to_dict(value)


def _columns(columns: Iterable[Column]) -> dict[str, Any]:
    return {c.name: _display(c.value) for c in columns}


def to_display_dict(event: BinlogEvent) -> dict[str, Any]:
    """A readable dict close to the spec's listings: rows as ordered ``name → plain value`` dicts.

    Integers are JSON numbers, DECIMAL text, temporal values MySQL's text forms, bytes base64. Not for
    round trips: use ``to_dict``/``to_json`` for that.
    """
    out = to_dict(event)
    if event.HasField("utc_timestamp"):
        out["utcTimestamp"] = event.utc_timestamp.ToDatetime(_UTC).strftime("%Y-%m-%d %H:%M:%S")
    for key in ("transactionId", "rowIndex"):
        if key in out:
            out[key] = int(out[key])
    out["rows"] = [
        {"rowIndex": row.row_index, "primaryKey": _columns(row.primary_key), "before": _columns(row.before),
         "after": _columns(row.after)}
        for row in event.rows
    ]
    return out
