"""MySQL's binary JSON format (``json_binary.cc``) and the partial-update diff format.

Strategy: a recursive reader over one bounds-checked buffer. Objects and arrays hold a header (count,
total size) and fixed-size entries whose offsets are relative to the container start; small containers
use 2-byte fields and large ones 4-byte. Scalars small enough to fit an entry (literals, int16/uint16,
and int32/uint32 in large containers) are inlined. Opaque values keep MySQL's in-memory packed form for
DECIMAL and temporal types, which are turned into Decimal/date/time/datetime; other opaque types stay
``JsonOpaque``. Every read is checked, so a lying offset raises ``TruncatedEventError``.
"""

from __future__ import annotations

from typing import Any

from binlog_model.errors import DecodeError, TruncatedEventError
from binlog_model.wire.codecs.numeric import newdecimal_size, parse_packed_decimal
from binlog_model.wire.codecs.temporal import datetime_from_packed, time_from_packed
from binlog_model.wire.structs import F64, I16, I32, I64, U16, U32, U64
from binlog_model.wire.values import InvalidDate, InvalidDateTime, JsonDiff, JsonDiffs, JsonOpaque

__all__ = ["parse_json_binary", "parse_json_diffs"]

_SMALL_OBJECT = 0x00
_LARGE_OBJECT = 0x01
_SMALL_ARRAY = 0x02
_LARGE_ARRAY = 0x03
_LITERAL = 0x04
_INT16 = 0x05
_UINT16 = 0x06
_INT32 = 0x07
_UINT32 = 0x08
_INT64 = 0x09
_UINT64 = 0x0A
_DOUBLE = 0x0B
_STRING = 0x0C
_OPAQUE = 0x0F


# MySQL field types that JSON opaque values decode specially.
_MYSQL_NEWDECIMAL = 246
_MYSQL_DATE = 10
_MYSQL_TIME = 11
_MYSQL_DATETIME = 12
_MYSQL_TIMESTAMP = 7

_DIFF_OPERATIONS = ("REPLACE", "INSERT", "REMOVE")
# Fixed-width scalars: their layout and the name a truncation error gives.
_SCALARS = {_INT16: (I16, "int16"), _UINT16: (U16, "uint16"), _INT32: (I32, "int32"),
            _UINT32: (U32, "uint32"), _INT64: (I64, "int64"), _UINT64: (U64, "uint64"),
            _DOUBLE: (F64, "double")}


def _need(buf: memoryview, pos: int, n: int, what: str) -> None:
    if n < 0 or pos + n > len(buf):
        raise TruncatedEventError(
            f"JSON {what} needs {n} bytes at offset {pos} of a {len(buf)}-byte value", expected=what
        )


def parse_json_binary(data: bytes | memoryview) -> Any:
    """Decode one binary JSON document into a Python tree.

    Objects become dicts (key order as stored), arrays lists, JSON null ``None``. An empty input (a JSON
    column holding the empty binary value) is ``None``. Raises ``TruncatedEventError`` when an offset
    or length points outside the value, ``DecodeError`` for an unknown type byte or invalid UTF-8.
    """
    buf = data if isinstance(data, memoryview) else memoryview(data)
    if len(buf) == 0:
        return None
    # Entries of a real document occupy distinct bytes, so it has fewer entries than bytes. Offsets that
    # share a child (a DAG) would be followed once per path, exponentially: the budget refuses them.
    return _value(buf, buf[0], 1, len(buf) - 1, 0, [len(buf)])


def _value(buf: memoryview, t: int, start: int, size: int, depth: int, budget: list[int]) -> Any:
    # ``start`` is where the value's bytes begin (after its type byte); ``size`` bounds containers.
    if depth > 100:
        raise DecodeError("JSON nesting deeper than 100 levels", expected="JSON depth <= 100")
    if t in (_SMALL_OBJECT, _LARGE_OBJECT, _SMALL_ARRAY, _LARGE_ARRAY):
        return _container(buf, t, start, depth, budget)
    if t == _LITERAL:
        _need(buf, start, 1, "literal")
        return _literal(buf[start])
    scalar = _SCALARS.get(t)
    if scalar is not None:
        layout, what = scalar
        _need(buf, start, layout.size, what)
        return layout.unpack_from(buf, start)[0]
    if t == _STRING:
        n, pos = _varlen(buf, start)
        _need(buf, pos, n, "string")
        return _utf8(buf[pos:pos + n])
    if t == _OPAQUE:
        _need(buf, start, 1, "opaque type")
        mysql_type = buf[start]
        n, pos = _varlen(buf, start + 1)
        _need(buf, pos, n, "opaque value")
        return _opaque(mysql_type, bytes(buf[pos:pos + n]))
    raise DecodeError(f"unknown JSON value type 0x{t:02x} at offset {start - 1}",
                      expected="a JSON binary type byte")


def _literal(b: int) -> Any:
    if b == 0x00:
        return None
    if b == 0x01:
        return True
    if b == 0x02:
        return False
    raise DecodeError(f"unknown JSON literal 0x{b:02x}", expected="JSON literal 0, 1 or 2")


def _utf8(raw: memoryview) -> str:
    try:
        return str(raw, "utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"JSON string is not valid UTF-8: {exc}", expected="UTF-8") from exc


def _varlen(buf: memoryview, pos: int) -> tuple[int, int]:
    # Lengths of strings and opaques: 7 bits per byte, low bits first, high bit = more (at most 5 bytes).
    n = 0
    for i in range(5):
        _need(buf, pos + i, 1, "variable-length length")
        b = buf[pos + i]
        n |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            return n, pos + i + 1
    raise DecodeError("JSON variable-length length longer than 5 bytes", expected="at most 5 bytes")


def _container(buf: memoryview, t: int, start: int, depth: int, budget: list[int]) -> Any:
    large = t in (_LARGE_OBJECT, _LARGE_ARRAY)
    is_object = t in (_SMALL_OBJECT, _LARGE_OBJECT)
    w = 4 if large else 2
    read = U32.unpack_from if large else U16.unpack_from
    _need(buf, start, 2 * w, "container header")
    count = read(buf, start)[0]
    size = read(buf, start + w)[0]
    _need(buf, start, size, "container")
    end = start + size
    key_entry = w + 2
    value_entry = 1 + w
    header = 2 * w + (count * key_entry if is_object else 0) + count * value_entry
    if header > size:
        raise TruncatedEventError(f"JSON container of {count} entries does not fit its {size} bytes",
                                  expected="container entries within its size")
    budget[0] -= count
    if budget[0] < 0:
        raise DecodeError(f"JSON containers share entries: more entries than the value's {len(buf)} bytes",
                          expected="each JSON value stored once")
    keys: list[str] = []
    if is_object:
        for i in range(count):
            e = start + 2 * w + i * key_entry
            koff = read(buf, e)[0]
            klen = U16.unpack_from(buf, e + w)[0]
            if start + koff + klen > end:
                raise TruncatedEventError("JSON object key points past its container",
                                          expected="key within container")
            keys.append(_utf8(buf[start + koff:start + koff + klen]))
    values_at = start + 2 * w + (count * key_entry if is_object else 0)
    items: list[Any] = []
    for i in range(count):
        e = values_at + i * value_entry
        vt = buf[e]
        if vt == _LITERAL:
            items.append(_literal(buf[e + 1]))
        elif vt == _INT16:
            items.append(I16.unpack_from(buf, e + 1)[0])
        elif vt == _UINT16:
            items.append(U16.unpack_from(buf, e + 1)[0])
        elif large and vt == _INT32:
            items.append(I32.unpack_from(buf, e + 1)[0])
        elif large and vt == _UINT32:
            items.append(U32.unpack_from(buf, e + 1)[0])
        else:
            voff = read(buf, e + 1)[0]
            if voff >= size:
                raise TruncatedEventError("JSON value offset points past its container",
                                          expected="value within container")
            # Bound nested reads by the container, so a bad offset cannot read a sibling's bytes.
            items.append(_value(buf[:end], vt, start + voff, end - start - voff, depth + 1, budget))
    if is_object:
        return dict(zip(keys, items, strict=True))
    return items


_TEMPORAL_NAMES = {_MYSQL_DATE: "DATE", _MYSQL_DATETIME: "DATETIME", _MYSQL_TIMESTAMP: "TIMESTAMP",
                   _MYSQL_TIME: "TIME"}


def _opaque(mysql_type: int, raw: bytes) -> Any:
    # DECIMAL and temporal opaques have a fixed layout: a payload too short for it is corrupt, never a
    # value to pass on as base64 text.
    if mysql_type == _MYSQL_NEWDECIMAL:
        if len(raw) < 2:
            raise DecodeError(f"JSON opaque DECIMAL of {len(raw)} bytes lacks its precision and scale",
                              expected="precision, scale and packed digits")
        precision, scale = raw[0], raw[1]
        size = newdecimal_size(precision, scale) if precision >= scale else 0
        if size <= 0 or len(raw) - 2 < size:
            raise DecodeError(f"JSON opaque DECIMAL({precision},{scale}) has {len(raw) - 2} bytes of digits",
                              expected=f"{size} bytes of packed digits" if size > 0 else "scale <= precision")
        return parse_packed_decimal(raw[2:2 + size], precision, scale)
    if mysql_type in _TEMPORAL_NAMES:
        if len(raw) < 8:
            raise DecodeError(f"JSON opaque {_TEMPORAL_NAMES[mysql_type]} of {len(raw)} bytes",
                              expected="an 8-byte packed temporal value")
        packed = I64.unpack_from(raw, 0)[0]
        if mysql_type == _MYSQL_TIME:
            return time_from_packed(packed)
        value = datetime_from_packed(packed)
        if mysql_type != _MYSQL_DATE:
            return value
        if isinstance(value, InvalidDateTime):
            return InvalidDate(value.year, value.month, value.day)
        return value.date()
    return JsonOpaque(mysql_type, raw)


def parse_json_diffs(data: bytes | memoryview) -> JsonDiffs:
    """The partial JSON update of one column (PARTIAL_UPDATE_ROWS_EVENT after-image).

    Each diff: operation (u8: 0 REPLACE, 1 INSERT, 2 REMOVE), path (length-encoded), and for REPLACE and
    INSERT a length-encoded binary JSON value. Returns them as ``JsonDiffs``. Raises
    ``TruncatedEventError``/``DecodeError``.
    """
    buf = data if isinstance(data, memoryview) else memoryview(data)
    pos = 0
    diffs: list[JsonDiff] = []
    while pos < len(buf):
        op = buf[pos]
        if op >= len(_DIFF_OPERATIONS):
            raise DecodeError(f"unknown JSON diff operation {op} at offset {pos}",
                              expected="0 (REPLACE), 1 (INSERT) or 2 (REMOVE)")
        n, pos = _lenenc(buf, pos + 1)
        _need(buf, pos, n, "diff path")
        path = _utf8(buf[pos:pos + n])
        pos += n
        value: Any = None
        if _DIFF_OPERATIONS[op] != "REMOVE":
            n, pos = _lenenc(buf, pos)
            _need(buf, pos, n, "diff value")
            value = parse_json_binary(buf[pos:pos + n])
            pos += n
        diffs.append(JsonDiff(_DIFF_OPERATIONS[op], path, value))
    return JsonDiffs(diffs)


def _lenenc(buf: memoryview, pos: int) -> tuple[int, int]:
    _need(buf, pos, 1, "length-encoded integer")
    first = buf[pos]
    if first < 0xFB:
        return first, pos + 1
    width = {0xFC: 2, 0xFD: 3, 0xFE: 8}.get(first)
    if width is None:
        raise DecodeError(f"invalid length-encoded integer prefix 0x{first:02x}",
                          expected="length-encoded integer")
    _need(buf, pos + 1, width, "length-encoded integer")
    return int.from_bytes(buf[pos + 1:pos + 1 + width], "little"), pos + 1 + width
