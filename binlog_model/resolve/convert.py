"""Decoded column values (the wire layer's vocabulary) + one plan column → typed protobuf ``Value``.

Strategy: the per-value work is one closure call. ``value_setter(plan_column)`` reads one ``PlanColumn``
(plain data: kind, unsignedness and integer width, charset, ENUM/SET labels, BINARY padding) once and returns
a closure specialised for it that writes a non-NULL value into an existing ``Value`` in place, so building a
row costs no dict lookups of type names and no message copies (``row.after.add()`` then ``.value`` is filled
directly; about 2.5x faster than building a ``Value`` and copying it in). SQL NULL never reaches these
closures: the row builder (``resolve.rows``) sets ``null_value`` itself, in one place. ``make_setter`` /
``make_converter`` / ``to_value`` are the one-off forms for a tracked column (they handle NULL the same way).

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
from binlog_model.charsets import make_text_decoder
from binlog_model.errors import ConfigError, SchemaMismatchError
from binlog_model.resolve.plan import PlanColumn, PlanKind, plan_column
from binlog_model.resolve.types import ColumnLike
from binlog_model.wire.values import (
    NOT_PRESENT,
    Geometry,
    InvalidDate,
    InvalidDateTime,
    JsonDiff,
    JsonDiffs,
    JsonDocument,
)

__all__ = ["Converter", "Setter", "make_converter", "make_setter", "to_value", "value_setter"]

Converter = Callable[[Any], pb.Value]
Setter = Callable[[pb.Value, Any], None]

_Value = pb.Value
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_EPOCH_NAIVE = datetime.datetime(1970, 1, 1)
_MICROSECOND = datetime.timedelta(microseconds=1)
_SRID = struct.Struct("<I")
_DEFAULT_CHARSET = "utf8mb4"
_NULL = NULL_VALUE


def to_value(raw: Any, column: ColumnLike) -> pb.Value:
    """Convert one decoded value of ``column`` to a protobuf ``Value``.

    Raises ``ConfigError`` for ``NOT_PRESENT`` and ``SchemaMismatchError`` when ``raw`` cannot be a value of
    ``column`` (see the module docstring). Prefer ``make_setter``/``make_converter`` in loops.
    """
    return make_converter(column)(raw)


def make_setter(column: ColumnLike) -> Setter:
    """A function ``set(target, raw)`` writing the decoded value ``raw`` of ``column`` into ``target``.

    The fast path for building rows: ``set(row.after.add(name=name).value, raw)`` fills the message in
    place instead of building a ``Value`` and copying it into the row. Raises ``SchemaError`` for a data
    type the model does not map (at build time); the setter raises as ``to_value`` does.
    """
    return _cached_setter(column)


def make_converter(column: ColumnLike) -> Converter:
    """A function converting decoded values of ``column`` to new protobuf ``Value`` messages.

    Raises ``SchemaError`` for a data type the model does not map; the function raises as ``to_value``.
    """
    set_value = _cached_setter(column)

    def convert(raw: Any) -> pb.Value:
        v = _Value()
        set_value(v, raw)
        return v
    return convert


def value_setter(column: PlanColumn) -> Setter:
    """The function writing a non-NULL decoded value of the plan column ``column`` into a ``Value`` (the
    caller handles ``None``). Cached per plan column, so a layout seen again reuses its closures."""
    return _value_setter(column)


@functools.lru_cache(maxsize=4096)
def _value_setter(column: PlanColumn) -> Setter:
    return _FACTORIES[column.kind](column)


def _cached_setter(column: ColumnLike) -> Setter:
    try:
        return _setter_cache(column)  # type: ignore[arg-type]  # unhashable columns: below
    except TypeError:
        return _with_null(value_setter(plan_column(column)))


@functools.lru_cache(maxsize=4096)
def _setter_cache(column: ColumnLike) -> Setter:
    return _with_null(value_setter(plan_column(column)))


def _with_null(set_value: Setter) -> Setter:
    def set_or_null(v: pb.Value, raw: Any) -> None:
        if raw is None:
            v.null_value = _NULL
        else:
            set_value(v, raw)
    return set_or_null


# -- failures ------------------------------------------------------------------------------------------


def _fail(column: PlanColumn, raw: Any, why: str = "") -> NoReturn:
    if raw is NOT_PRESENT:
        raise ConfigError(f"column {column.name!r}: NOT_PRESENT (not in the row image) is not a value; "
                          f"omit the column instead of converting it")
    shown = repr(raw)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    detail = f": {why}" if why else ""
    raise SchemaMismatchError(f"column {column.name!r} ({column.data_type}) cannot hold the binlog value "
                              f"{shown} of type {type(raw).__name__}{detail}")


# -- numbers -------------------------------------------------------------------------------------------


def _set_int(v: pb.Value, raw: int) -> None:
    v.int_value = raw


def _set_long(v: pb.Value, raw: int) -> None:
    v.long_value = raw


def _set_uint64(v: pb.Value, raw: int) -> None:
    v.uint64_value = raw


def _set_float(v: pb.Value, raw: float) -> None:
    v.float_value = raw


def _set_double(v: pb.Value, raw: float) -> None:
    v.double_value = raw


_BUILDERS: dict[str, Callable[[pb.Value, Any], None]] = {
    "int_value": _set_int, "long_value": _set_long, "uint64_value": _set_uint64,
    "float_value": _set_float, "double_value": _set_double,
}


def _integer(field: str) -> Callable[[PlanColumn], Setter]:
    build = _BUILDERS[field]

    def factory(column: PlanColumn) -> Setter:
        offset = 1 << column.int_bits if column.unsigned else 0

        def set_value(v: pb.Value, raw: Any) -> None:
            if type(raw) is int:
                if raw < 0 and offset:
                    raw += offset
                try:
                    build(v, raw)
                    return
                except ValueError:
                    _fail(column, raw, f"out of range for {field}")
            _fail(column, raw)
        return set_value
    return factory


def _decimal(column: PlanColumn) -> Setter:
    def set_value(v: pb.Value, raw: Any) -> None:
        if type(raw) is Decimal:
            if not raw.is_finite():
                _fail(column, raw, "DECIMAL values are finite")
            if raw.is_zero() and raw.is_signed():
                raw = raw.copy_abs()  # MySQL has no negative zero
            v.decimal_value = format(raw, "f")
            return
        _fail(column, raw)
    return set_value


def _floating(field: str) -> Callable[[PlanColumn], Setter]:
    build = _BUILDERS[field]

    def factory(column: PlanColumn) -> Setter:
        def set_value(v: pb.Value, raw: Any) -> None:
            if type(raw) is float:
                build(v, raw)
                return
            _fail(column, raw)
        return set_value
    return factory


def _bit(column: PlanColumn) -> Setter:
    def set_value(v: pb.Value, raw: Any) -> None:
        if type(raw) is int and raw >= 0:
            try:
                v.bit_value = raw
                return
            except ValueError:
                _fail(column, raw, "BIT is at most 64 bits")
        if type(raw) is bytes and len(raw) <= 8:
            v.bit_value = int.from_bytes(raw, "big")
            return
        _fail(column, raw)
    return set_value


# -- text and bytes ------------------------------------------------------------------------------------


def _text(column: PlanColumn) -> Setter:
    charset = column.charset
    decode = make_text_decoder(charset)

    def set_value(v: pb.Value, raw: Any) -> None:
        if type(raw) is not bytes:
            if isinstance(raw, bytearray | memoryview):
                raw = bytes(raw)
            elif type(raw) is str:
                v.string_value = raw
                return
            else:
                _fail(column, raw)
        if decode is not None:
            try:
                v.string_value = decode(raw)
                return
            except UnicodeDecodeError:
                pass
        v.raw_text_value.CopyFrom(pb.RawText(data=raw, charset=charset))
    return set_value


def _enum(column: PlanColumn) -> Setter:
    labels = ("", *column.labels)  # index 0 is the empty "invalid value" MySQL stores for bad input

    def set_value(v: pb.Value, raw: Any) -> None:
        if type(raw) is int:
            if 0 <= raw < len(labels):
                v.string_value = labels[raw]
                return
            _fail(column, raw, f"the tracked ENUM has {len(labels) - 1} members")
        _fail(column, raw)
    return set_value


def _set(column: PlanColumn) -> Setter:
    labels = column.labels
    limit = 1 << len(labels)
    chosen: dict[int, list[str]] = {}     # bitmask -> its labels (tables reuse a few combinations)

    def set_value(v: pb.Value, raw: Any) -> None:
        if type(raw) is int:
            if 0 <= raw < limit:
                members = chosen.get(raw)
                if members is None:
                    members = [label for i, label in enumerate(labels) if raw >> i & 1]
                    if len(chosen) < 4096:
                        chosen[raw] = members
                target = v.set_value
                target.SetInParent()            # an empty SET is still a set_value
                target.labels[:] = members
                return
            _fail(column, raw, f"the tracked SET has {len(labels)} members")
        _fail(column, raw)
    return set_value


def _bytes(column: PlanColumn) -> Setter:
    pad_to = column.pad_to    # the trailing 0x00 bytes the binlog drops of fixed-length binary values

    def set_value(v: pb.Value, raw: Any) -> None:
        if type(raw) is not bytes:
            if not isinstance(raw, bytearray | memoryview):
                _fail(column, raw)
            raw = bytes(raw)
        if pad_to and len(raw) < pad_to:
            raw = raw.ljust(pad_to, b"\x00")
        v.bytes_value = raw
    return set_value


def _json(column: PlanColumn) -> Setter:
    def set_value(v: pb.Value, raw: Any) -> None:
        if type(raw) is JsonDocument:
            v.json_value = raw.to_json()
            return
        if isinstance(raw, bytes | bytearray | memoryview):  # MariaDB: JSON is LONGTEXT (utf8mb4)
            data = bytes(raw)
            try:
                v.json_value = data.decode("utf-8")
                return
            except UnicodeDecodeError:
                v.raw_text_value.CopyFrom(pb.RawText(data=data, charset=_DEFAULT_CHARSET))
                return
        if type(raw) is str:
            v.json_value = raw
            return
        if type(raw) is JsonDiffs:
            # A partial JSON update whose before image lacks the column (MINIMAL): the diff itself.
            _json_diff(v.json_diff, raw)
            return
        _fail(column, raw)
    return set_value


_DIFF_OPS = {"REPLACE": pb.JsonDiffOperation.REPLACE, "INSERT": pb.JsonDiffOperation.INSERT,
             "REMOVE": pb.JsonDiffOperation.REMOVE}


def _json_diff(target: pb.JsonDiff, diffs: tuple[JsonDiff, ...]) -> None:
    target.SetInParent()  # an empty diff list is still a json_diff value
    for diff in diffs:
        op = target.operations.add()
        op.op = _DIFF_OPS[diff.operation]
        op.path = diff.path
        if diff.operation != "REMOVE":
            op.value = JsonDocument(diff.value).to_json()


# -- dates and times -----------------------------------------------------------------------------------


def _date(column: PlanColumn) -> Setter:
    def set_value(v: pb.Value, raw: Any) -> None:
        if type(raw) is datetime.date or type(raw) is InvalidDate:
            # Fields set in place (SetInParent keeps an all-zero date present): no message built and copied.
            d = v.date_value
            d.SetInParent()
            d.year, d.month, d.day = raw.year, raw.month, raw.day
            return
        _fail(column, raw)
    return set_value


def _datetime(column: PlanColumn) -> Setter:
    def set_value(v: pb.Value, raw: Any) -> None:
        if type(raw) is datetime.datetime or type(raw) is InvalidDateTime:
            t = v.datetime_value
            t.SetInParent()
            t.year, t.month, t.day = raw.year, raw.month, raw.day
            t.hour, t.minute, t.second, t.micros = raw.hour, raw.minute, raw.second, raw.microsecond
            return
        _fail(column, raw)
    return set_value


def _timestamp(column: PlanColumn) -> Setter:
    def set_value(v: pb.Value, raw: Any) -> None:
        if type(raw) is datetime.datetime:
            # The wire layer gives UTC; a naive value is read as UTC too (never as local time).
            epoch = _EPOCH_NAIVE if raw.tzinfo is None else _EPOCH_UTC
            v.timestamp_micros = (raw - epoch) // _MICROSECOND
            return
        if type(raw) is InvalidDateTime:
            if raw == _ZERO_DATETIME:
                v.timestamp_micros = 0  # MySQL's zero TIMESTAMP is stored as 0
                return
            _fail(column, raw, "only the zero TIMESTAMP may be invalid")
        _fail(column, raw)
    return set_value


_ZERO_DATETIME = InvalidDateTime(0, 0, 0)


def _time(column: PlanColumn) -> Setter:
    def set_value(v: pb.Value, raw: Any) -> None:
        if type(raw) is datetime.timedelta:
            v.time_micros = raw // _MICROSECOND
            return
        _fail(column, raw)
    return set_value


# -- spatial and vectors -------------------------------------------------------------------------------


def _geometry(column: PlanColumn) -> Setter:
    def set_value(v: pb.Value, raw: Any) -> None:
        if type(raw) is Geometry:
            v.geometry_value.CopyFrom(pb.Geometry(srid=raw.srid, wkb=raw.wkb))
            return
        if isinstance(raw, bytes | bytearray | memoryview) and len(raw) >= 4:
            data = bytes(raw)  # the stored form: 4-byte little-endian SRID, then WKB
            v.geometry_value.CopyFrom(pb.Geometry(srid=_SRID.unpack_from(data)[0], wkb=data[4:]))
            return
        _fail(column, raw)
    return set_value


def _vector(column: PlanColumn) -> Setter:
    def set_value(v: pb.Value, raw: Any) -> None:
        if type(raw) is tuple or type(raw) is list:
            try:
                v.vector_value.CopyFrom(pb.Vector(values=raw))
                return
            except (TypeError, ValueError):
                _fail(column, raw, "a VECTOR holds floats")
        _fail(column, raw)
    return set_value


def _hidden(column: PlanColumn) -> Setter:
    def set_value(v: pb.Value, raw: Any) -> None:   # pragma: no cover - the builders skip hidden columns
        raise AssertionError(f"column {column.name!r} is hidden: its value is never emitted")
    return set_value


_FACTORIES: dict[PlanKind, Callable[[PlanColumn], Setter]] = {
    PlanKind.NONE: _hidden,
    PlanKind.INT: _integer("int_value"),
    PlanKind.LONG: _integer("long_value"),
    PlanKind.UINT64: _integer("uint64_value"),
    PlanKind.DECIMAL: _decimal,
    PlanKind.FLOAT: _floating("float_value"),
    PlanKind.DOUBLE: _floating("double_value"),
    PlanKind.BIT: _bit,
    PlanKind.TEXT: _text,
    PlanKind.ENUM: _enum,
    PlanKind.BYTES: _bytes,
    PlanKind.SET: _set,
    PlanKind.JSON: _json,
    PlanKind.DATE: _date,
    PlanKind.DATETIME: _datetime,
    PlanKind.TIMESTAMP: _timestamp,
    PlanKind.TIME: _time,
    PlanKind.GEOMETRY: _geometry,
    PlanKind.VECTOR: _vector,
}
