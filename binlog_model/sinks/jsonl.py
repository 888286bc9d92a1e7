"""JSON Lines of ``BinlogEvent`` s: one canonical proto3-JSON object per line, UTF-8.

Strategy: each line is ``binlog_model.messages.to_json`` (compact, non-ASCII text as is) plus ``\\n``,
written as UTF-8 bytes so the byte count is exact (incremental runs commit output by length). With the
compiled core on, the sink takes the runner's serialized events and C writes the same line from their bytes
(``json_encoder.compiled_line``, typed values without defaults); otherwise, and for what C leaves to
Python, ``json_encoder.event_dict`` builds json_format's dict directly. ``BINLOG_MODEL_JSON_REFERENCE=1``
writes every line with protobuf's ``json_format``, the reference both are tested against.

Column values come in two forms (``JSON_VALUES``). ``typed`` (the default) is the proto3 JSON of each
``Value``, lossless and tagged with its kind (``{"intValue": 3}``). ``plain`` (``plain_values``) writes each
row image as a ``name → value`` object of plain JSON values, for jq and the like; the rules, for what JSON
numbers cannot hold, are the table in docs/contracts.md ("Plain JSON values").
"""

from __future__ import annotations

import base64
import datetime
import json
from collections.abc import Iterable
from typing import IO, Any

from google.protobuf.message import Message

from binlog_model import json_encoder
from binlog_model._pb.binlog_event_pb2 import BinlogEvent, Column, Value
from binlog_model.errors import ConfigError
from binlog_model.messages import to_dict, to_dict_with, to_json
from binlog_model.sinks.base import EventSink

__all__ = ["JSON_VALUES", "JsonlSink", "encode_jsonl", "encode_jsonl_serialized", "plain_value",
           "plain_values"]

JSON_VALUES = ("typed", "plain")

# The largest integer every JSON reader holds exactly (an IEEE double's 53-bit significand).
_EXACT_INT = 2 ** 53
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _integer(n: int) -> int | str:
    return n if -_EXACT_INT <= n <= _EXACT_INT else str(n)


def _base64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _time(micros: int) -> str:
    # MySQL's TIME is a signed duration up to 838:59:59: ISO-8601's hh:mm:ss[.ffffff] inside a day, the
    # same shape (more hours, a sign) outside it, as MySQL prints it
    sign = "-" if micros < 0 else ""
    secs, frac = divmod(abs(micros), 1_000_000)
    text = f"{sign}{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}"
    return f"{text}.{frac:06d}" if frac else text


def plain_value(value: Value) -> Any:
    """One column value as a plain JSON value (the rules of docs/contracts.md, "Plain JSON values").

    NULL → null; integers, BIT and YEAR → a number within ±2^53, a string beyond; DECIMAL → a string;
    FLOAT/DOUBLE → a number; text → a string; binary → base64; DATE → ``YYYY-MM-DD``; DATETIME →
    ``YYYY-MM-DDThh:mm:ss[.ffffff]``; TIMESTAMP → the same in UTC with ``Z``; TIME → ``[-]hh:mm:ss[.ffffff]``;
    zero and invalid dates keep their digits (``0000-00-00``); SET → a list of labels; ENUM → its label;
    JSON → its text; text undecodable in its charset → ``{"base64", "charset"}``; geometry →
    ``{"srid", "wkb"}`` (WKB in base64); VECTOR → a list of numbers; a partial JSON update → its
    operations as ``typed`` writes them."""
    kind = value.WhichOneof("kind")
    if kind is None or kind == "null_value":
        return None
    if kind in ("int_value", "long_value", "uint64_value", "bit_value"):
        return _integer(getattr(value, kind))
    if kind in ("string_value", "decimal_value", "json_value", "double_value", "float_value"):
        return getattr(value, kind)
    if kind == "bytes_value":
        return _base64(value.bytes_value)
    if kind == "date_value":
        d = value.date_value
        return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"
    if kind == "datetime_value":
        t = value.datetime_value
        text = f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
        return f"{text}.{t.micros:06d}" if t.micros else text
    if kind == "timestamp_micros":
        if value.timestamp_micros == 0:       # MySQL's zero TIMESTAMP
            return "0000-00-00T00:00:00Z"
        stamp = _EPOCH + datetime.timedelta(microseconds=value.timestamp_micros)
        return stamp.isoformat().replace("+00:00", "Z")
    if kind == "time_micros":
        return _time(value.time_micros)
    if kind == "set_value":
        return list(value.set_value.labels)
    if kind == "raw_text_value":
        return {"base64": _base64(value.raw_text_value.data), "charset": value.raw_text_value.charset}
    if kind == "geometry_value":
        return {"srid": value.geometry_value.srid, "wkb": _base64(value.geometry_value.wkb)}
    if kind == "vector_value":
        return list(value.vector_value.values)
    return to_dict(value)    # json_diff: the operations, as the typed form has them


def _columns(columns: Iterable[Column]) -> dict[str, Any]:
    return {c.name: plain_value(c.value) for c in columns}


def plain_values(event: BinlogEvent, *, include_defaults: bool = False,
                 reference: bool = False) -> dict[str, Any]:
    """``event``'s proto3-JSON dict (``to_dict``) with each row's ``primaryKey``, ``before`` and ``after``
    as ``{name: plain_value}`` objects in column order. Lossy by design: the value's kind and a column's
    ``invisible`` flag are not written (``typed`` keeps both)."""
    return to_dict_with(event, include_defaults=include_defaults, reference=reference, columns=_columns)


def encode_jsonl(event: Message, *, include_defaults: bool = False, json_values: str = "typed",
                 reference: bool = False) -> bytes:
    """One JSON line (with its newline) of ``event`` as UTF-8 bytes, its values ``typed`` or ``plain``.
    ``reference``: the dict built by protobuf's ``json_format`` (``messages.to_dict``); the same bytes.
    A ``BinlogEvent`` with typed values and no defaults is written by the compiled core when it is on
    (``json_encoder.compiled_line``), else by ``json_encoder.event_dict``."""
    if json_values == "typed" and not (include_defaults or reference) and type(event) is BinlogEvent \
            and json_encoder.COMPILED:
        line = json_encoder.compiled_line(event.SerializeToString())
        if line is not None:
            return line
    return _python_line(event, include_defaults, json_values, reference)


def encode_jsonl_serialized(body: bytes | bytearray | memoryview, *, include_defaults: bool = False,
                            json_values: str = "typed") -> bytes:
    """``encode_jsonl`` of the ``BinlogEvent`` serialized in ``body``, parsed only when the compiled core
    does not write the line itself."""
    if json_values == "typed" and not include_defaults:
        line = json_encoder.compiled_line(body)     # type: ignore[arg-type]
        if line is not None:
            return line
    return _python_line(BinlogEvent.FromString(bytes(body)), include_defaults, json_values, False)


def _python_line(event: Message, include_defaults: bool, json_values: str, reference: bool) -> bytes:
    if json_values == "plain" and isinstance(event, BinlogEvent):
        text = json.dumps(plain_values(event, include_defaults=include_defaults, reference=reference),
                          ensure_ascii=False, separators=(",", ":"))
    else:
        text = to_json(event, include_defaults=include_defaults, reference=reference)
    return (text + "\n").encode("utf-8")


class JsonlSink(EventSink):
    """``BinlogEvent`` s as JSON lines on a binary stream. ``include_defaults`` also writes fields at their
    default value (0, false, empty); ``json_values`` is ``typed`` or ``plain`` (``plain_values``)."""

    format_name = "jsonl"
    suffix = "jsonl"
    # With the compiled core the runner hands over serialized events: C writes their lines from the bytes
    # (typed values, no defaults); the other forms parse them first.
    takes_serialized = json_encoder.COMPILED

    def __init__(self, stream: IO[bytes], *, owns_stream: bool = False, include_defaults: bool = False,
                 json_values: str = "typed") -> None:
        if json_values not in JSON_VALUES:
            raise ConfigError(f"unknown JSON values form {json_values!r}: expected typed or plain")
        super().__init__(stream, owns_stream=owns_stream)
        self.include_defaults = include_defaults
        self.json_values = json_values

    def encode(self, event: Message) -> bytes:
        return encode_jsonl(event, include_defaults=self.include_defaults, json_values=self.json_values)

    def write_serialized(self, body: bytes | bytearray | memoryview) -> int:
        return self._append(encode_jsonl_serialized(body, include_defaults=self.include_defaults,
                                                    json_values=self.json_values))
