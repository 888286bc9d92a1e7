"""Decoded column values (the wire layer's vocabulary) + the tracked column → typed protobuf ``Value``.

Strategy: the per-value work is one closure call. ``make_converter(column)`` looks the column up in the type
table once (``types.map_column``) and returns a closure specialised for it (unsignedness offset, text
decoder, ENUM/SET labels, BINARY padding), so the assembler builds one converter per column per schema
version and converting a value costs no dict lookups of type names. ``to_value`` is the convenience form.

Decisions (see also the README type table):
- ``None`` (SQL NULL) → ``Value(null_value=NULL_VALUE)`` for every column type. ``NOT_PRESENT`` is never
  converted: the caller omits the column, and passing it raises ``ConfigError``.
- Integers arrive signed unless TABLE_MAP said unsigned; an unsigned column adds ``1 << bits`` to a negative
  value (bits from the data type: 8/16/24/32/64), so BIGINT UNSIGNED -1 becomes 2^64-1 exactly.
- Text is decoded with the column charset (``charsets.make_text_decoder``). Bytes that are invalid in the
  charset, or a charset without a faithful Python codec, give ``raw_text_value`` (the exact bytes and the
  charset name): lossless and impossible to mistake for text. A text column whose charset the schema does
  not know is decoded as utf8mb4.
- A raw value of the wrong Python type for the column (an int for a DATE column...) means the tracked
  schema and the binlog disagree: ``SchemaMismatchError`` naming the column. So do an ENUM index or SET
  bit beyond the tracked members and an integer outside the model type's range.
"""

from __future__ import annotations

import datetime
import functools
import struct
from collections.abc import Callable
from decimal import Decimal
from typing import Any, NoReturn

from google.protobuf.struct_pb2 import NULL_VALUE

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.charsets import make_text_decoder, normalize_charset
from binlog_model.errors import ConfigError, SchemaMismatchError
from binlog_model.types import ColumnLike, ValueKind, canonical_data_type, integer_bits, map_column
from binlog_model.wire.values import NOT_PRESENT, Geometry, InvalidDate, InvalidDateTime, JsonDocument

__all__ = ["Converter", "make_converter", "to_value"]

Converter = Callable[[Any], pb.Value]

_Value = pb.Value
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_EPOCH_NAIVE = datetime.datetime(1970, 1, 1)
_MICROSECOND = datetime.timedelta(microseconds=1)
_SRID = struct.Struct("<I")
_DEFAULT_CHARSET = "utf8mb4"


def to_value(raw: Any, column: ColumnLike) -> pb.Value:
    """Convert one decoded value of ``column`` to a protobuf ``Value``.

    Raises ``ConfigError`` for ``NOT_PRESENT`` and ``SchemaMismatchError`` when ``raw`` cannot be a value of
    ``column`` (see the module docstring). Prefer ``make_converter`` in loops.
    """
    return _converter_for(column)(raw)


def _converter_for(column: ColumnLike) -> Converter:
    try:
        return _cached_converter(column)  # type: ignore[arg-type]  # unhashable columns: below
    except TypeError:  # an unhashable column object: build the converter uncached
        return make_converter(column)


@functools.lru_cache(maxsize=4096)
def _cached_converter(column: ColumnLike) -> Converter:
    return make_converter(column)


def make_converter(column: ColumnLike) -> Converter:
    """A function converting decoded values of ``column`` to protobuf ``Value`` messages.

    Raises ``SchemaError`` for a data type the model does not map. The returned function raises as
    ``to_value`` does.
    """
    kind = map_column(column).value_kind
    data_type = canonical_data_type(column.data_type)
    factory = _FACTORIES[kind]
    return factory(column, data_type)


# -- failures ------------------------------------------------------------------------------------------


def _fail(column: ColumnLike, raw: Any, why: str = "") -> NoReturn:
    if raw is NOT_PRESENT:
        raise ConfigError(f"column {column.name!r}: NOT_PRESENT (not in the row image) is not a value; "
                          f"omit the column instead of converting it")
    shown = repr(raw)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    detail = f": {why}" if why else ""
    raise SchemaMismatchError(f"column {column.name!r} ({column.data_type}) cannot hold the binlog value "
                              f"{shown} of type {type(raw).__name__}{detail}")


def _null() -> pb.Value:
    return _Value(null_value=NULL_VALUE)


# -- numbers -------------------------------------------------------------------------------------------


_BUILDERS: dict[str, Callable[[Any], pb.Value]] = {
    "int_value": lambda v: _Value(int_value=v),
    "long_value": lambda v: _Value(long_value=v),
    "uint64_value": lambda v: _Value(uint64_value=v),
    "float_value": lambda v: _Value(float_value=v),
    "double_value": lambda v: _Value(double_value=v),
}


def _integer(field: str) -> Callable[[ColumnLike, str], Converter]:
    build = _BUILDERS[field]

    def factory(column: ColumnLike, data_type: str) -> Converter:
        bits = integer_bits(data_type) or 32  # YEAR is the only non-integer type with an integer kind
        offset = 1 << bits if column.unsigned else 0

        def convert(raw: Any) -> pb.Value:
            if type(raw) is int:
                if raw < 0 and offset:
                    raw += offset
                try:
                    return build(raw)
                except ValueError:
                    _fail(column, raw, f"out of range for {field}")
            if raw is None:
                return _null()
            _fail(column, raw)
        return convert
    return factory


def _decimal(column: ColumnLike, data_type: str) -> Converter:
    def convert(raw: Any) -> pb.Value:
        if type(raw) is Decimal:
            if not raw.is_finite():
                _fail(column, raw, "DECIMAL values are finite")
            if raw.is_zero() and raw.is_signed():
                raw = raw.copy_abs()  # MySQL has no negative zero
            return _Value(decimal_value=format(raw, "f"))
        if raw is None:
            return _null()
        _fail(column, raw)
    return convert


def _floating(field: str) -> Callable[[ColumnLike, str], Converter]:
    build = _BUILDERS[field]

    def factory(column: ColumnLike, data_type: str) -> Converter:
        def convert(raw: Any) -> pb.Value:
            if type(raw) is float:
                return build(raw)
            if raw is None:
                return _null()
            _fail(column, raw)
        return convert
    return factory


def _bit(column: ColumnLike, data_type: str) -> Converter:
    def convert(raw: Any) -> pb.Value:
        if type(raw) is int and raw >= 0:
            try:
                return _Value(bit_value=raw)
            except ValueError:
                _fail(column, raw, "BIT is at most 64 bits")
        if type(raw) is bytes and len(raw) <= 8:
            return _Value(bit_value=int.from_bytes(raw, "big"))
        if raw is None:
            return _null()
        _fail(column, raw)
    return convert


# -- text and bytes ------------------------------------------------------------------------------------


def _string(column: ColumnLike, data_type: str) -> Converter:
    if data_type == "enum":
        return _enum(column)
    charset = normalize_charset(column.charset or _DEFAULT_CHARSET)
    decode = make_text_decoder(charset)

    def convert(raw: Any) -> pb.Value:
        if type(raw) is not bytes:
            if raw is None:
                return _null()
            if isinstance(raw, bytearray | memoryview):
                raw = bytes(raw)
            elif type(raw) is str:
                return _Value(string_value=raw)
            else:
                _fail(column, raw)
        if decode is not None:
            try:
                return _Value(string_value=decode(raw))
            except UnicodeDecodeError:
                pass
        return _Value(raw_text_value=pb.RawText(data=raw, charset=charset))
    return convert


def _enum(column: ColumnLike) -> Converter:
    labels = ("", *column.enum_values)  # index 0 is the empty "invalid value" MySQL stores for bad input

    def convert(raw: Any) -> pb.Value:
        if type(raw) is int:
            if 0 <= raw < len(labels):
                return _Value(string_value=labels[raw])
            _fail(column, raw, f"the tracked ENUM has {len(labels) - 1} members")
        if raw is None:
            return _null()
        _fail(column, raw)
    return convert


def _set(column: ColumnLike, data_type: str) -> Converter:
    labels = column.enum_values
    limit = 1 << len(labels)

    def convert(raw: Any) -> pb.Value:
        if type(raw) is int:
            if 0 <= raw < limit:
                return _Value(set_value=pb.SetValue(
                    labels=[label for i, label in enumerate(labels) if raw >> i & 1]))
            _fail(column, raw, f"the tracked SET has {len(labels)} members")
        if raw is None:
            return _null()
        _fail(column, raw)
    return convert


def _bytes(column: ColumnLike, data_type: str) -> Converter:
    # The binlog drops BINARY(N)'s trailing 0x00 padding; SELECT returns it, so put it back.
    pad_to = column.length if data_type == "binary" and column.length else 0

    def convert(raw: Any) -> pb.Value:
        if type(raw) is not bytes:
            if raw is None:
                return _null()
            if not isinstance(raw, bytearray | memoryview):
                _fail(column, raw)
            raw = bytes(raw)
        if pad_to and len(raw) < pad_to:
            raw = raw.ljust(pad_to, b"\x00")
        return _Value(bytes_value=raw)
    return convert


def _json(column: ColumnLike, data_type: str) -> Converter:
    def convert(raw: Any) -> pb.Value:
        if type(raw) is JsonDocument:
            return _Value(json_value=raw.to_json())
        if raw is None:
            return _null()
        if isinstance(raw, bytes | bytearray | memoryview):  # MariaDB: JSON is LONGTEXT (utf8mb4)
            data = bytes(raw)
            try:
                return _Value(json_value=data.decode("utf-8"))
            except UnicodeDecodeError:
                return _Value(raw_text_value=pb.RawText(data=data, charset=_DEFAULT_CHARSET))
        if type(raw) is str:
            return _Value(json_value=raw)
        _fail(column, raw)
    return convert


# -- dates and times -----------------------------------------------------------------------------------


def _date(column: ColumnLike, data_type: str) -> Converter:
    def convert(raw: Any) -> pb.Value:
        if type(raw) is datetime.date or type(raw) is InvalidDate:
            return _Value(date_value=pb.Date(year=raw.year, month=raw.month, day=raw.day))
        if raw is None:
            return _null()
        _fail(column, raw)
    return convert


def _datetime(column: ColumnLike, data_type: str) -> Converter:
    def convert(raw: Any) -> pb.Value:
        if type(raw) is datetime.datetime or type(raw) is InvalidDateTime:
            return _Value(datetime_value=pb.DateTime(
                year=raw.year, month=raw.month, day=raw.day, hour=raw.hour, minute=raw.minute,
                second=raw.second, micros=raw.microsecond))
        if raw is None:
            return _null()
        _fail(column, raw)
    return convert


def _timestamp(column: ColumnLike, data_type: str) -> Converter:
    def convert(raw: Any) -> pb.Value:
        if type(raw) is datetime.datetime:
            # The wire layer gives UTC; a naive value is read as UTC too (never as local time).
            epoch = _EPOCH_NAIVE if raw.tzinfo is None else _EPOCH_UTC
            return _Value(timestamp_micros=(raw - epoch) // _MICROSECOND)
        if raw is None:
            return _null()
        if type(raw) is InvalidDateTime:
            if raw == _ZERO_DATETIME:
                return _Value(timestamp_micros=0)  # MySQL's zero TIMESTAMP is stored as 0
            _fail(column, raw, "only the zero TIMESTAMP may be invalid")
        _fail(column, raw)
    return convert


_ZERO_DATETIME = InvalidDateTime(0, 0, 0)


def _time(column: ColumnLike, data_type: str) -> Converter:
    def convert(raw: Any) -> pb.Value:
        if type(raw) is datetime.timedelta:
            return _Value(time_micros=raw // _MICROSECOND)
        if raw is None:
            return _null()
        _fail(column, raw)
    return convert


# -- spatial and vectors -------------------------------------------------------------------------------


def _geometry(column: ColumnLike, data_type: str) -> Converter:
    def convert(raw: Any) -> pb.Value:
        if type(raw) is Geometry:
            return _Value(geometry_value=pb.Geometry(srid=raw.srid, wkb=raw.wkb))
        if raw is None:
            return _null()
        if isinstance(raw, bytes | bytearray | memoryview) and len(raw) >= 4:
            data = bytes(raw)  # the stored form: 4-byte little-endian SRID, then WKB
            return _Value(geometry_value=pb.Geometry(srid=_SRID.unpack_from(data)[0], wkb=data[4:]))
        _fail(column, raw)
    return convert


def _vector(column: ColumnLike, data_type: str) -> Converter:
    def convert(raw: Any) -> pb.Value:
        if type(raw) is tuple or type(raw) is list:
            try:
                return _Value(vector_value=pb.Vector(values=raw))
            except (TypeError, ValueError):
                _fail(column, raw, "a VECTOR holds floats")
        if raw is None:
            return _null()
        _fail(column, raw)
    return convert


_FACTORIES: dict[ValueKind, Callable[[ColumnLike, str], Converter]] = {
    ValueKind.INT: _integer("int_value"),
    ValueKind.LONG: _integer("long_value"),
    ValueKind.UINT64: _integer("uint64_value"),
    ValueKind.DECIMAL: _decimal,
    ValueKind.FLOAT: _floating("float_value"),
    ValueKind.DOUBLE: _floating("double_value"),
    ValueKind.BIT: _bit,
    ValueKind.STRING: _string,
    ValueKind.BYTES: _bytes,
    ValueKind.SET: _set,
    ValueKind.JSON: _json,
    ValueKind.DATE: _date,
    ValueKind.DATETIME: _datetime,
    ValueKind.TIMESTAMP: _timestamp,
    ValueKind.TIME: _time,
    ValueKind.GEOMETRY: _geometry,
    ValueKind.VECTOR: _vector,
}
