"""binlog_model.resolve.convert: decoded wire values + tracked column → typed protobuf Value.

Inputs are the wire layer's decoded Python values (docs/contracts.md "Decoded values"); columns are
hand-written ColumnSchema values. The edge values are the ones peers get wrong: unsigned wrap-around, exact
DECIMAL(65,30), negative TIME with micros, zero dates, charsets, ENUM 0, SET bits, BIT(64).
``tests/differential/test_convert_server.py`` checks the same conversions against a real MariaDB.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.errors import ConfigError, SchemaError, SchemaMismatchError
from binlog_model.model import python_value
from binlog_model.resolve.convert import make_converter, make_setter, to_value
from binlog_model.resolve.types import ValueKind, map_column
from binlog_model.wire.values import NOT_PRESENT, Geometry, InvalidDate, InvalidDateTime, JsonDocument
from schema_tracker.model import ColumnSchema as C

CURRENCY = ("RUB", "UAH", "KZT", "USD", "EUR", "YND_FIXED", "CHF", "TRY", "BYN")


def kind_and_value(v: pb.Value) -> tuple[str | None, Any]:
    kind = v.WhichOneof("kind")
    return kind, (getattr(v, kind) if kind else None)


# --- integers --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("column", "raw", "kind", "expected"), [
    (C("u", "bigint", unsigned=True), -1, "uint64_value", 2**64 - 1),
    (C("u", "bigint", unsigned=True), -(2**63), "uint64_value", 2**63),
    (C("u", "bigint", unsigned=True), 2**64 - 1, "uint64_value", 2**64 - 1),  # already unsigned
    (C("s", "bigint"), -(2**63), "long_value", -(2**63)),
    (C("u", "int", unsigned=True), -1, "long_value", 4294967295),
    (C("s", "int"), -(2**31), "int_value", -(2**31)),
    (C("u", "mediumint", unsigned=True), -1, "int_value", 2**24 - 1),
    (C("u", "smallint", unsigned=True), -2, "int_value", 65534),
    (C("u", "tinyint", unsigned=True), -128, "int_value", 128),
    (C("s", "tinyint"), -128, "int_value", -128),
    (C("y", "year"), 0, "int_value", 0),
    (C("y", "year"), 2155, "int_value", 2155),
])
def test_integers(column: C, raw: int, kind: str, expected: int) -> None:
    assert kind_and_value(to_value(raw, column)) == (kind, expected)


def test_integer_out_of_range_is_a_schema_mismatch() -> None:
    # An INT column receiving a BIGINT-sized value: the tracked type is wrong.
    with pytest.raises(SchemaMismatchError, match=r"'s'.*out of range"):
        to_value(2**31, C("s", "int"))


# --- exact numbers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "text"), [
    (Decimal("12345678901234567890123456789012345.123456789012345678901234567890"),
     "12345678901234567890123456789012345.123456789012345678901234567890"),
    (Decimal("-0.000000000000000000000000000001"), "-0.000000000000000000000000000001"),
    (Decimal("0E-30"), "0.000000000000000000000000000000"),
    (Decimal("-0E-30"), "0.000000000000000000000000000000"),
    (Decimal("1E+2"), "100"),
])
def test_decimal_65_30_exact(raw: Decimal, text: str) -> None:
    v = to_value(raw, C("d", "decimal", precision=65, scale=30))
    assert kind_and_value(v) == ("decimal_value", text)
    assert python_value(v) == raw


def test_float_and_double_keep_their_precision() -> None:
    assert kind_and_value(to_value(0.1, C("d", "double"))) == ("double_value", 0.1)
    f = to_value(1.5, C("f", "float"))
    assert kind_and_value(f) == ("float_value", 1.5)


def test_bit64() -> None:
    assert kind_and_value(to_value(2**64 - 1, C("b", "bit", length=64))) == ("bit_value", 2**64 - 1)
    assert kind_and_value(to_value(5, C("b", "bit", length=3))) == ("bit_value", 5)
    assert kind_and_value(to_value(b"\x01\x00", C("b", "bit", length=9))) == ("bit_value", 256)
    with pytest.raises(SchemaMismatchError):
        to_value(2**64, C("b", "bit", length=64))


# --- dates and times -------------------------------------------------------------------------------------


def test_negative_time_with_micros() -> None:
    raw = -dt.timedelta(hours=838, minutes=59, seconds=59, microseconds=1)  # beyond the range on purpose
    v = to_value(raw, C("t", "time", fsp=6))
    assert kind_and_value(v) == ("time_micros", -(838 * 3600 + 59 * 60 + 59) * 1_000_000 - 1)
    assert python_value(v) == raw
    assert to_value(-dt.timedelta(microseconds=500_000), C("t", "time", fsp=1)).time_micros == -500_000


def test_zero_and_invalid_dates_are_kept() -> None:
    zero = to_value(InvalidDate(0, 0, 0), C("d", "date"))
    assert zero.WhichOneof("kind") == "date_value"
    assert (zero.date_value.year, zero.date_value.month, zero.date_value.day) == (0, 0, 0)
    assert python_value(zero) == InvalidDate(0, 0, 0)
    bad = to_value(InvalidDate(2020, 2, 31), C("d", "date"))
    assert python_value(bad) == InvalidDate(2020, 2, 31)
    assert python_value(to_value(dt.date(1000, 1, 1), C("d", "date"))) == dt.date(1000, 1, 1)


def test_datetime_with_micros_and_zero() -> None:
    raw = dt.datetime(9999, 12, 31, 23, 59, 59, 999999)
    v = to_value(raw, C("d", "datetime", fsp=6))
    assert v.datetime_value.micros == 999999 and python_value(v) == raw
    zero = InvalidDateTime(0, 0, 0, 0, 0, 0, 0)
    assert python_value(to_value(zero, C("d", "datetime"))) == zero
    partial = InvalidDateTime(2020, 0, 15, 10, 11, 12, 13)
    assert python_value(to_value(partial, C("d", "datetime", fsp=6))) == partial


def test_timestamp_is_utc_micros() -> None:
    raw = dt.datetime(2018, 5, 29, 6, 22, 10, 123456, tzinfo=dt.UTC)
    v = to_value(raw, C("t", "timestamp", fsp=6))
    assert kind_and_value(v) == ("timestamp_micros", 1527574930_123456)
    assert python_value(v) == raw
    # Another zone is converted, not re-labelled.
    plus3 = raw.astimezone(dt.timezone(dt.timedelta(hours=3)))
    assert to_value(plus3, C("t", "timestamp")).timestamp_micros == 1527574930_123456
    # The zero TIMESTAMP is stored as 0; any other invalid value is not a TIMESTAMP.
    assert kind_and_value(to_value(InvalidDateTime(0, 0, 0), C("t", "timestamp"))) == ("timestamp_micros", 0)
    assert python_value(pb.Value(timestamp_micros=0)) == InvalidDateTime(0, 0, 0)
    with pytest.raises(SchemaMismatchError):
        to_value(InvalidDateTime(2020, 0, 1), C("t", "timestamp"))


# --- text, bytes, ENUM, SET ------------------------------------------------------------------------------


def test_utf8mb4_emoji_and_latin1() -> None:
    assert kind_and_value(to_value("😀 ok".encode(), C("s", "varchar", charset="utf8mb4"))) == (
        "string_value", "😀 ok")
    assert kind_and_value(to_value(b"\xe9", C("s", "varchar", charset="latin1"))) == ("string_value", "é")
    # MySQL latin1 is cp1252: 0x80 is the euro sign, and the five bytes cp1252 leaves undefined map to
    # the C1 controls of the same number.
    assert to_value(b"\x80\x81\x9d", C("s", "text", charset="latin1")).string_value == "€\x81\x9d"
    assert to_value("Ж".encode("cp1251"), C("s", "text", charset="cp1251")).string_value == "Ж"
    assert to_value("Ж".encode("utf-16-be"), C("s", "text", charset="ucs2")).string_value == "Ж"
    assert to_value(b"abc", C("s", "text", charset="utf8")).string_value == "abc"


def test_invalid_text_is_kept_as_raw_text() -> None:
    v = to_value(b"ok\xff", C("s", "varchar", charset="utf8mb4"))
    assert v.WhichOneof("kind") == "raw_text_value"
    assert (v.raw_text_value.data, v.raw_text_value.charset) == (b"ok\xff", "utf8mb4")
    assert python_value(v) == b"ok\xff"
    # A charset with no faithful Python codec is never guessed at.
    v = to_value(b"\xe9", C("s", "varchar", charset="dec8"))
    assert (v.WhichOneof("kind"), v.raw_text_value.charset) == ("raw_text_value", "dec8")


def test_binary_charset_and_blobs_stay_bytes() -> None:
    assert kind_and_value(to_value(b"\xff\x00", C("b", "blob"))) == ("bytes_value", b"\xff\x00")
    assert kind_and_value(to_value(b"\xff", C("b", "varchar", length=4, charset="binary"))) == (
        "bytes_value", b"\xff")
    # BINARY(N): the binlog drops trailing 0x00; SELECT shows N bytes.
    assert to_value(b"ab", C("b", "binary", length=4)).bytes_value == b"ab\x00\x00"
    assert to_value(b"ab", C("b", "char", length=3, charset="binary")).bytes_value == b"ab\x00"
    assert to_value(memoryview(b"ab"), C("b", "varbinary", length=4)).bytes_value == b"ab"
    # MariaDB's UUID/INET6/INET4 are fixed-length binary too (seen on MariaDB 10.11: a UUID ending in 0000
    # is logged as 14 bytes).
    uuid = bytes.fromhex("123e4567e89b12d3a456426655440000")
    assert to_value(uuid[:14], C("u", "uuid")).bytes_value == uuid
    assert to_value(b"\n", C("u", "inet4")).bytes_value == b"\n\x00\x00\x00"


def test_enum_labels() -> None:
    column = C("currency", "enum", enum_values=CURRENCY, charset="latin1")
    conv = make_converter(column)
    assert [conv(i).string_value for i in (1, 4, 9)] == ["RUB", "USD", "BYN"]
    assert kind_and_value(conv(0)) == ("string_value", "")  # MySQL's empty "invalid value"
    with pytest.raises(SchemaMismatchError, match="9 members"):
        conv(10)


def test_set_labels() -> None:
    column = C("s", "set", enum_values=("a", "b", "c", "d"), charset="utf8mb4")
    assert list(to_value(0b1010, column).set_value.labels) == ["b", "d"]
    empty = to_value(0, column)
    assert empty.WhichOneof("kind") == "set_value" and list(empty.set_value.labels) == []
    big = C("s", "set", enum_values=tuple(f"m{i}" for i in range(64)))
    assert list(to_value(-1 & (2**64 - 1), big).set_value.labels) == [f"m{i}" for i in range(64)]
    with pytest.raises(SchemaMismatchError, match="4 members"):
        to_value(0b10000, column)


# --- JSON, spatial, vector -------------------------------------------------------------------------------


def test_json_is_text() -> None:
    doc = JsonDocument({"a": [1, True, None], "b": Decimal("1.50")})
    expected = '{"a": [1, true, null], "b": 1.50}'
    assert kind_and_value(to_value(doc, C("j", "json"))) == ("json_value", expected)
    # JSON null inside a document is not SQL NULL.
    assert kind_and_value(to_value(JsonDocument(None), C("j", "json"))) == ("json_value", "null")
    # MariaDB logs JSON as LONGTEXT bytes.
    assert to_value('{"k": "ё"}'.encode(), C("j", "json")).json_value == '{"k": "ё"}'


def test_geometry_and_vector() -> None:
    wkb = bytes.fromhex("0101000000000000000000f03f0000000000000040")  # POINT(1 2)
    v = to_value(Geometry(4326, wkb), C("g", "point"))
    assert (v.geometry_value.srid, v.geometry_value.wkb) == (4326, wkb)
    assert python_value(v) == Geometry(4326, wkb)
    stored = (4326).to_bytes(4, "little") + wkb
    assert python_value(to_value(stored, C("g", "geometry"))) == Geometry(4326, wkb)
    vec = to_value((1.0, -2.5, 0.25), C("v", "vector", length=3))
    assert python_value(vec) == (1.0, -2.5, 0.25)


# --- NULL, absence, wrong input --------------------------------------------------------------------------

EVERY_TYPE = [C("a", t) for t in ("tinyint", "int", "bigint", "decimal", "float", "double", "bit", "year",
                                  "date", "datetime", "timestamp", "time", "char", "varchar", "text",
                                  "binary", "blob", "json", "geometry", "vector")] + [
    C("a", "bigint", unsigned=True), C("a", "enum", enum_values=("x",)), C("a", "set", enum_values=("x",))]


@pytest.mark.parametrize("column", EVERY_TYPE, ids=[c.column_type for c in EVERY_TYPE])
def test_null_for_every_type(column: C) -> None:
    v = to_value(None, column)
    assert v.WhichOneof("kind") == "null_value"
    assert python_value(v) is None


@pytest.mark.parametrize("column", EVERY_TYPE, ids=[c.column_type for c in EVERY_TYPE])
def test_not_present_is_never_converted(column: C) -> None:
    with pytest.raises(ConfigError, match="NOT_PRESENT"):
        to_value(NOT_PRESENT, column)


@pytest.mark.parametrize(("column", "raw"), [
    (C("d", "date"), 20200101),
    (C("i", "int"), "7"),
    (C("i", "int"), True),
    (C("s", "varchar", charset="utf8mb4"), 7),
    (C("d", "decimal"), 1.5),
    (C("t", "time"), dt.datetime(2020, 1, 1)),
    (C("e", "enum", enum_values=("x",)), b"x"),
])
def test_wrong_python_type_is_a_schema_mismatch_naming_the_column(column: C, raw: Any) -> None:
    with pytest.raises(SchemaMismatchError, match=f"'{column.name}' \\({column.data_type}\\)"):
        to_value(raw, column)


def test_unknown_type_fails_when_the_converter_is_built() -> None:
    with pytest.raises(SchemaError, match="hologram"):
        make_converter(C("h", "hologram"))


def test_converter_kind_agrees_with_the_type_table() -> None:
    samples: dict[ValueKind, Any] = {
        ValueKind.INT: 1, ValueKind.LONG: 1, ValueKind.UINT64: 1, ValueKind.DECIMAL: Decimal(1),
        ValueKind.FLOAT: 1.0, ValueKind.DOUBLE: 1.0, ValueKind.BIT: 1, ValueKind.STRING: b"x",
        ValueKind.BYTES: b"x", ValueKind.SET: 1, ValueKind.JSON: JsonDocument(1),
        ValueKind.DATE: dt.date(2000, 1, 1), ValueKind.DATETIME: dt.datetime(2000, 1, 1),
        ValueKind.TIMESTAMP: dt.datetime(2000, 1, 1, tzinfo=dt.UTC), ValueKind.TIME: dt.timedelta(1),
        ValueKind.GEOMETRY: Geometry(0, b""), ValueKind.VECTOR: (1.0,),
    }
    for column in EVERY_TYPE:
        kind = map_column(column).value_kind
        raw = 1 if column.data_type == "enum" else samples[kind]
        assert to_value(raw, column).WhichOneof("kind") == kind.value, column.column_type


def test_setter_fills_a_row_in_place_like_the_converter() -> None:
    column = C("s", "set", enum_values=("a", "b"))
    raws: list[Any] = [None, 0, 3, 1]
    row = pb.Row()
    set_value = make_setter(column)
    for raw in raws:
        set_value(row.after.add(name="s").value, raw)
    assert [c.value for c in row.after] == [to_value(raw, column) for raw in raws]
    assert [c.value.WhichOneof("kind") for c in row.after] == ["null_value", "set_value", "set_value",
                                                              "set_value"]
    # A value already holding another kind is overwritten, not merged.
    target = pb.Value(string_value="old")
    make_setter(C("d", "date"))(target, InvalidDate(0, 0, 0))
    assert target.WhichOneof("kind") == "date_value" and not target.string_value
    # A failed conversion leaves the target untouched.
    target = pb.Value(int_value=7)
    with pytest.raises(SchemaMismatchError):
        make_setter(C("i", "int"))(target, 2**40)
    assert target == pb.Value(int_value=7)


# --- properties ------------------------------------------------------------------------------------------

_INT_TYPES = [("tinyint", 8), ("smallint", 16), ("mediumint", 24), ("int", 32), ("bigint", 64)]


@given(st.sampled_from(_INT_TYPES), st.booleans(), st.data())
def test_integers_round_trip_from_their_signed_wire_form(spec: tuple[str, int], unsigned: bool,
                                                         data: st.DataObject) -> None:
    data_type, bits = spec
    if unsigned:
        value = data.draw(st.integers(0, 2**bits - 1))
        raw = value - 2**bits if value >= 2 ** (bits - 1) else value  # how the wire gives it without metadata
    else:
        value = raw = data.draw(st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1))
    assert python_value(to_value(raw, C("i", data_type, unsigned=unsigned))) == value


_DECIMAL_65_30_MAX = Decimal("1e35") - Decimal("1e-30")


@given(st.decimals(min_value=-_DECIMAL_65_30_MAX, max_value=_DECIMAL_65_30_MAX, places=30, allow_nan=False,
                   allow_infinity=False))
def test_decimal_round_trips_exactly(value: Decimal) -> None:
    v = to_value(value, C("d", "decimal", precision=65, scale=30))
    assert Decimal(v.decimal_value) == value
    assert "E" not in v.decimal_value and "e" not in v.decimal_value


@given(st.timedeltas(min_value=-dt.timedelta(hours=838, minutes=59, seconds=59),
                     max_value=dt.timedelta(hours=838, minutes=59, seconds=59)))
def test_time_round_trips(value: dt.timedelta) -> None:
    assert python_value(to_value(value, C("t", "time", fsp=6))) == value


@given(st.datetimes(min_value=dt.datetime(1970, 1, 1, 0, 0, 1), max_value=dt.datetime(2038, 1, 19, 3, 14, 7)))
def test_timestamp_and_datetime_round_trip(value: dt.datetime) -> None:
    assert python_value(to_value(value, C("d", "datetime", fsp=6))) == value
    aware = value.replace(tzinfo=dt.UTC)
    assert python_value(to_value(aware, C("t", "timestamp", fsp=6))) == aware


@given(st.text())
def test_utf8mb4_text_round_trips(text: str) -> None:
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates cannot be stored by MySQL either
        return
    assert to_value(data, C("s", "text", charset="utf8mb4")).string_value == text


@given(st.binary(max_size=64), st.sampled_from(["latin1", "utf8mb4", "cp1251", "greek", "sjis", "ascii"]))
def test_any_bytes_in_a_text_column_are_kept_losslessly(data: bytes, charset: str) -> None:
    v = to_value(data, C("s", "varchar", charset=charset))
    if v.WhichOneof("kind") == "raw_text_value":
        assert v.raw_text_value.data == data and v.raw_text_value.charset == charset
    else:
        assert v.WhichOneof("kind") == "string_value"
        if charset == "latin1":
            assert len(v.string_value) == len(data)  # single-byte: every byte is one character
