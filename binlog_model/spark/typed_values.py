"""One change value → a Python value of a typed column's Arrow type: the per-value reference.

Strategy: ``convert_value`` reads one canonical value JSON (``{"intValue":5}``, the data source's map
values) and coerces it to the column's type, raising ``_Invalid`` for a value the type cannot hold (it is
then null and listed in ``binlog_invalid``). The typed job converts in bulk (``typed_arrow``) and falls back
to this, per value, for the rare kind/type pairs it has no bulk rule for; the tests compare the two.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import re
from decimal import Decimal
from typing import Any

import pyarrow as pa

__all__ = ["InvalidValue", "coerce_value", "convert_value", "message_converters", "message_value"]

_UTC = datetime.UTC
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=_UTC)
# Room for every digit of a DECIMAL(38, s) (the default context holds 28: a wider value that fits its column
# would be rejected by quantize).
_EXACT = decimal.Context(prec=80)


class _Invalid(Exception):
    """A value the Spark type cannot hold."""


InvalidValue = _Invalid     # the public name (the replica tables list such values in binlog_invalid too)


def convert_value(text: str, arrow: pa.DataType) -> Any:
    """One canonical value JSON (``{"intValue":5}``) → a Python value for ``arrow``. Raises ``_Invalid``
    for a value the type cannot hold."""
    doc = json.loads(text)
    if not doc:
        return None
    (kind, raw), = doc.items()
    value = _plain(kind, raw)
    if value is None:
        return None
    return _coerce(value, arrow)


def message_value(value: Any, arrow: pa.DataType) -> Any:
    """One model ``Value`` message → a Python value for ``arrow``: ``convert_value``'s rules, read from the
    message instead of its JSON (the replica tables' writer has messages). Raises ``_Invalid`` likewise."""
    kind = value.WhichOneof("kind")
    if kind is None or kind == "null_value":
        return None
    raw = getattr(value, kind)
    if kind in ("date_value", "datetime_value", "geometry_value", "vector_value", "set_value", "json_diff",
                "raw_text_value"):
        raw = _MESSAGE_AS_JSON[kind](raw)
    elif kind == "bytes_value":
        return _coerce(raw, arrow)
    plain = _plain(_CAMEL[kind], raw)
    return None if plain is None else _coerce(plain, arrow)


def message_converters(arrow: pa.DataType) -> dict[str, Any]:
    """Shortcuts of ``message_value`` for a column of type ``arrow``: value kind → a function of the
    message's field (``getattr(value, kind)``) giving exactly what ``message_value`` gives for it, or
    raising ``_Invalid`` likewise, without its general dispatch (the replica's writer converts every value
    of a row image; tests/unit/test_typed_values_shortcuts.py holds them to ``message_value``). Kinds not
    here go through ``message_value``."""
    out: dict[str, Any] = {}
    if pa.types.is_decimal(arrow):
        places, precision = arrow.scale, arrow.precision
        # plain text at the column's scale whose digits fit (the whole part without its leading zeros has
        # at most precision - scale digits): quantize would change nothing
        fits = re.compile(rf"-?(?=[0-9])0*[0-9]{{0,{precision - places}}}"
                          + (rf"\.[0-9]{{{places}}}" if places else "")).fullmatch

        def decimal_text(raw: str) -> Decimal:
            if fits(raw):
                return Decimal(raw)
            try:
                value = Decimal(raw)
            except ArithmeticError as err:      # not a number's text
                raise _Invalid from err
            return _coerce(value, arrow)
        out["decimal_value"] = decimal_text
        if arrow.scale == 0 and precision >= 20:
            out["uint64_value"] = Decimal       # every uint64 has at most 20 digits
    elif pa.types.is_integer(arrow):
        lo, hi = _INT_RANGE[arrow.bit_width]

        def in_range(raw: int) -> int:
            if lo <= raw <= hi:
                return raw
            raise _Invalid
        for kind in ("int_value", "long_value", "uint64_value", "bit_value", "time_micros"):
            out[kind] = in_range
    elif pa.types.is_floating(arrow):
        out["float_value"] = out["double_value"] = float
    elif pa.types.is_date32(arrow):
        def date(raw: Any) -> datetime.date:
            try:
                return datetime.date(raw.year, raw.month, raw.day)
            except (ValueError, OverflowError) as err:
                raise _Invalid from err
        out["date_value"] = date
    elif pa.types.is_timestamp(arrow) and arrow.tz is None:
        def naive(raw: Any) -> datetime.datetime:
            try:
                return datetime.datetime(raw.year, raw.month, raw.day, raw.hour, raw.minute, raw.second,
                                         raw.micros)
            except (ValueError, OverflowError) as err:
                raise _Invalid from err
        out["datetime_value"] = naive
    elif pa.types.is_timestamp(arrow):
        def instant(raw: int) -> datetime.datetime:
            if raw == 0:
                raise _Invalid
            try:
                return _EPOCH + datetime.timedelta(microseconds=raw)
            except OverflowError as err:        # past any date's range (year 9999)
                raise _Invalid from err
        out["timestamp_micros"] = instant
    return out


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


_CAMEL = {name: _camel(name) for name in (
    "int_value", "long_value", "string_value", "bytes_value", "decimal_value", "double_value", "float_value",
    "datetime_value", "date_value", "timestamp_micros", "time_micros", "uint64_value", "json_value",
    "set_value", "bit_value", "geometry_value", "vector_value", "raw_text_value", "json_diff")}
# message fields as the canonical JSON has them (dates by their parts; WKB base64 as in the JSON)
_MESSAGE_AS_JSON: dict[str, Any] = {
    "date_value": lambda m: {"year": m.year, "month": m.month, "day": m.day},
    "datetime_value": lambda m: {"year": m.year, "month": m.month, "day": m.day, "hour": m.hour,
                                 "minute": m.minute, "second": m.second, "micros": m.micros},
    "geometry_value": lambda m: {"wkb": base64.b64encode(m.wkb).decode()},
    "vector_value": lambda m: {"values": list(m.values)},
    "set_value": lambda m: {"labels": list(m.labels)},
    "json_diff": lambda m: m,
    "raw_text_value": lambda m: m,
}


def _plain(kind: str, raw: Any) -> Any:
    if kind == "nullValue":
        return None
    if kind in ("intValue", "longValue", "uint64Value", "bitValue", "timeMicros"):
        return int(raw)
    if kind == "decimalValue":
        try:
            return Decimal(raw)
        except ArithmeticError as err:      # not a number's text
            raise _Invalid from err
    if kind in ("floatValue", "doubleValue"):
        return float(raw)
    if kind in ("stringValue", "jsonValue"):
        return raw
    if kind == "bytesValue":
        return base64.b64decode(raw)
    if kind == "setValue":
        return ",".join(raw.get("labels", []))
    if kind == "dateValue":
        try:
            return datetime.date(raw.get("year", 0), raw.get("month", 0), raw.get("day", 0))
        except (ValueError, OverflowError) as err:     # no such date (a field past any date's range)
            raise _Invalid from err
    if kind == "datetimeValue":
        try:
            return datetime.datetime(raw.get("year", 0), raw.get("month", 0), raw.get("day", 0),
                                     raw.get("hour", 0), raw.get("minute", 0), raw.get("second", 0),
                                     raw.get("micros", 0))
        except (ValueError, OverflowError) as err:     # no such date (a field past any date's range)
            raise _Invalid from err
    if kind == "timestampMicros":
        micros = int(raw)
        if micros == 0:
            raise _Invalid
        try:
            return _EPOCH + datetime.timedelta(microseconds=micros)
        except OverflowError as err:        # past any date's range (year 9999)
            raise _Invalid from err
    if kind == "geometryValue":
        return base64.b64decode(raw.get("wkb", ""))
    if kind == "vectorValue":
        return [float(v) for v in raw.get("values", [])]
    if kind == "jsonDiff":
        raise _Invalid   # operations, not a document: a typed JSON column cannot hold them
    raise _Invalid      # rawTextValue: bytes not valid in the column charset


_INT_RANGE = {8: (-(2**7), 2**7 - 1), 16: (-(2**15), 2**15 - 1), 32: (-(2**31), 2**31 - 1),
              64: (-(2**63), 2**63 - 1)}


def coerce_value(value: Any, arrow: pa.DataType) -> Any:
    """A plain Python value (int, Decimal, float, str, bytes, date, datetime) → ``arrow``'s value, by the
    typed tables' one set of rules; ``_Invalid`` when the type cannot hold it."""
    return _coerce(value, arrow)


def _coerce(value: Any, arrow: pa.DataType) -> Any:
    # A column whose type changed is typed to hold every definition (``widen``): convert each value to it,
    # and never write one that does not fit (it becomes null and is listed in binlog_invalid).
    try:
        if pa.types.is_decimal(arrow):
            if isinstance(value, float | str | bytes) and not isinstance(value, Decimal):
                value = Decimal(str(value)) if not isinstance(value, bytes) else Decimal(value.decode())
            quantized = Decimal(value).quantize(Decimal(1).scaleb(-arrow.scale), context=_EXACT)
            if quantized != value or len(quantized.as_tuple().digits) > arrow.precision:
                raise _Invalid
            return quantized
        if pa.types.is_integer(arrow):
            number = int(value)
            if number != value:
                raise _Invalid
            lo, hi = _INT_RANGE[arrow.bit_width]
            if not lo <= number <= hi:
                raise _Invalid
            return number
        if pa.types.is_floating(arrow):
            real = float(value)
            if isinstance(value, int | Decimal) and real != value:
                raise _Invalid
            return real
        if pa.types.is_string(arrow):
            if isinstance(value, bytes):
                return value.decode("utf-8")         # strict: bytes that are not text do not fit
            if isinstance(value, list):
                return json.dumps(value)
            return value if isinstance(value, str) else str(value)
        if pa.types.is_binary(arrow):
            return value.encode("utf-8") if isinstance(value, str) else value
        if pa.types.is_timestamp(arrow) and arrow.tz is None and isinstance(value, datetime.date) \
                and not isinstance(value, datetime.datetime):
            return datetime.datetime.combine(value, datetime.time())
    except (ValueError, TypeError, ArithmeticError, UnicodeDecodeError) as err:
        raise _Invalid from err
    return value
