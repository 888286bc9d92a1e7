"""Codecs for integer, floating point, DECIMAL, YEAR, BIT and VECTOR columns.

Strategy: one pure function per (type, signedness) so the row decoder picks the right one once per
TABLE_MAP instead of branching per value. Integers are little-endian; BIT and the packed NEWDECIMAL are
big-endian. Signed is the default because TABLE_MAP only says "unsigned" through MySQL 8 optional
metadata (the resolver re-applies signedness from the tracked schema otherwise). Fixed-width codecs
compare lengths inline (the hot path) and call ``need`` only to raise the error.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from decimal import Decimal
from typing import TypeVar

from binlog_model.errors import UnsupportedEventError
from binlog_model.wire.codecs._bounds import Buffer, need, prefixed
from binlog_model.wire.structs import F32, F64, I8, I16, I32, I64, U8, U16, U32, U64

__all__ = [
    "decode_bit",
    "decode_decimal_old",
    "decode_double",
    "decode_float",
    "decode_int24",
    "decode_int24_unsigned",
    "decode_long",
    "decode_long_unsigned",
    "decode_longlong",
    "decode_longlong_unsigned",
    "decode_newdecimal",
    "decode_short",
    "decode_short_unsigned",
    "decode_tiny",
    "decode_tiny_unsigned",
    "decode_vector",
    "decode_year",
    "newdecimal_size",
    "parse_packed_decimal",
]

_N = TypeVar("_N", int, float)


def _fixed(layout: struct.Struct, what: str, name: str) -> Callable[[Buffer, int, int], tuple[_N, int]]:
    """The codec of a fixed-width little-endian column: one definition of the check, the read and the
    step for all ten integer and float types (``layout`` and its size are bound once, as locals)."""
    size, unpack = layout.size, layout.unpack_from

    def decode(buf: Buffer, pos: int, meta: int) -> tuple[_N, int]:
        if pos + size > len(buf):
            need(buf, pos, size, what)
        return unpack(buf, pos)[0], pos + size

    decode.__name__ = decode.__qualname__ = name
    return decode


_IntCodec = Callable[[Buffer, int, int], tuple[int, int]]
_FloatCodec = Callable[[Buffer, int, int], tuple[float, int]]
decode_tiny: _IntCodec = _fixed(I8, "TINY", "decode_tiny")
decode_tiny_unsigned: _IntCodec = _fixed(U8, "TINY UNSIGNED", "decode_tiny_unsigned")
decode_short: _IntCodec = _fixed(I16, "SHORT", "decode_short")
decode_short_unsigned: _IntCodec = _fixed(U16, "SHORT UNSIGNED", "decode_short_unsigned")
decode_long: _IntCodec = _fixed(I32, "LONG", "decode_long")
decode_long_unsigned: _IntCodec = _fixed(U32, "LONG UNSIGNED", "decode_long_unsigned")
decode_longlong: _IntCodec = _fixed(I64, "LONGLONG", "decode_longlong")
decode_longlong_unsigned: _IntCodec = _fixed(U64, "LONGLONG UNSIGNED", "decode_longlong_unsigned")
decode_float: _FloatCodec = _fixed(F32, "FLOAT", "decode_float")
decode_double: _FloatCodec = _fixed(F64, "DOUBLE", "decode_double")


def decode_int24(buf: Buffer, pos: int, meta: int) -> tuple[int, int]:
    if pos + 3 > len(buf):
        need(buf, pos, 3, "INT24")
    v = buf[pos] | (buf[pos + 1] << 8) | (buf[pos + 2] << 16)
    return (v - 0x1000000 if v & 0x800000 else v), pos + 3


def decode_int24_unsigned(buf: Buffer, pos: int, meta: int) -> tuple[int, int]:
    if pos + 3 > len(buf):
        need(buf, pos, 3, "INT24 UNSIGNED")
    return buf[pos] | (buf[pos + 1] << 8) | (buf[pos + 2] << 16), pos + 3








def decode_bit(buf: Buffer, pos: int, meta: int) -> tuple[int, int]:
    """BIT(n): meta is ``bytes << 8 | extra_bits``; the value is big-endian."""
    n = (meta >> 8) + (1 if meta & 0xFF else 0)
    if pos + n > len(buf):
        need(buf, pos, n, "BIT")
    return int.from_bytes(buf[pos:pos + n], "big"), pos + n


# Bytes taken by a leftover group of 0..9 decimal digits in the packed DECIMAL format.
_DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


def newdecimal_size(precision: int, scale: int) -> int:
    """Bytes of a packed DECIMAL(precision, scale) value (``decimal_bin_size``)."""
    intg = precision - scale
    return (intg // 9) * 4 + _DIG2BYTES[intg % 9] + (scale // 9) * 4 + _DIG2BYTES[scale % 9]


def parse_packed_decimal(raw: bytes | bytearray | memoryview, precision: int, scale: int) -> Decimal:
    """The packed binary DECIMAL (``decimal2bin``) as an exact Decimal.

    Groups of 9 digits are 4 big-endian bytes; leftover digits take fewer bytes. The sign is the
    inverted top bit, and negative values have every byte inverted.
    """
    # Fast path: the whole value as one integer, groups peeled off with shifts. A group holding more
    # digits than it may (corrupt bytes) goes to the digit-string path, which keeps such values as logged.
    n = len(raw)
    intg = precision - scale
    if n != newdecimal_size(precision, scale) or not n:
        return _parse_packed_decimal_text(raw, precision, scale)
    v = int.from_bytes(raw, "big")
    top = 1 << (8 * n - 1)
    negative = not v & top
    v ^= top
    if negative:
        v ^= (top << 1) - 1
    tail = scale % 9
    frac = 0
    if tail:
        tail_bytes = _DIG2BYTES[tail]
        frac = v & ((1 << 8 * tail_bytes) - 1)
        if frac >= _POW10[tail]:
            return _parse_packed_decimal_text(raw, precision, scale)
        v >>= 8 * tail_bytes
    weight = _POW10[tail]
    for _ in range(scale // 9):
        group = v & 0xFFFFFFFF
        if group >= 1_000_000_000:
            return _parse_packed_decimal_text(raw, precision, scale)
        frac += group * weight
        weight *= 1_000_000_000
        v >>= 32
    whole = 0
    weight = 1
    for _ in range(intg // 9):
        group = v & 0xFFFFFFFF
        if group >= 1_000_000_000:
            return _parse_packed_decimal_text(raw, precision, scale)
        whole += group * weight
        weight *= 1_000_000_000
        v >>= 32
    if intg % 9:
        if v >= _POW10[intg % 9]:
            return _parse_packed_decimal_text(raw, precision, scale)
        whole += v * weight
    sign = "-" if negative else ""
    if scale:
        return Decimal(f"{sign}{whole}.{frac:0{scale}d}")
    return Decimal(f"{sign}{whole}")


_POW10 = tuple(10 ** i for i in range(10))


def _parse_packed_decimal_text(raw: bytes | bytearray | memoryview, precision: int, scale: int) -> Decimal:
    data = bytearray(raw)
    negative = not data[0] & 0x80
    data[0] ^= 0x80
    if negative:
        data = bytearray(b ^ 0xFF for b in data)
    intg = precision - scale
    pos = 0
    digits: list[str] = []
    lead = _DIG2BYTES[intg % 9]
    if lead:
        digits.append(str(int.from_bytes(data[pos:pos + lead], "big")))
        pos += lead
    for _ in range(intg // 9):
        digits.append(f"{int.from_bytes(data[pos:pos + 4], 'big'):09d}")
        pos += 4
    frac: list[str] = []
    for _ in range(scale // 9):
        frac.append(f"{int.from_bytes(data[pos:pos + 4], 'big'):09d}")
        pos += 4
    tail = scale % 9
    if tail:
        frac.append(f"{int.from_bytes(data[pos:pos + _DIG2BYTES[tail]], 'big'):0{tail}d}")
    text = ("-" if negative else "") + ("".join(digits) or "0")
    if scale:
        text += "." + "".join(frac)
    return Decimal(text)


def decode_newdecimal(buf: Buffer, pos: int, meta: int) -> tuple[Decimal, int]:
    """NEWDECIMAL: meta is ``precision << 8 | scale``."""
    precision, scale = meta >> 8, meta & 0xFF
    n = newdecimal_size(precision, scale)
    if pos + n > len(buf):
        need(buf, pos, n, "NEWDECIMAL")
    return parse_packed_decimal(buf[pos:pos + n], precision, scale), pos + n


def decode_decimal_old(buf: Buffer, pos: int, meta: int) -> tuple[Decimal, int]:
    # Pre-5.0 DECIMAL stores digits as text of the column's display width, but TABLE_MAP carries no
    # metadata for it, so the value's length cannot be known.
    raise UnsupportedEventError("old DECIMAL (type 0) columns carry no length in TABLE_MAP",
                                expected="a column type with a known length")


def decode_vector(buf: Buffer, pos: int, meta: int) -> tuple[tuple[float, ...], int]:
    """MySQL 9 VECTOR: a length prefix of ``meta`` bytes, then little-endian float32 values."""
    start, end = prefixed(buf, pos, meta, "VECTOR")
    n = end - start
    if n % 4:
        raise UnsupportedEventError(f"VECTOR value of {n} bytes is not a whole number of float32",
                                    expected="a multiple of 4 bytes")
    return struct.unpack_from(f"<{n // 4}f", buf, start), end


def decode_year(buf: Buffer, pos: int, meta: int) -> tuple[int, int]:
    """YEAR: one byte, 0 for ``0000`` else ``1900 + value``."""
    if pos + 1 > len(buf):
        need(buf, pos, 1, "YEAR")
    v = buf[pos]
    return (1900 + v if v else 0), pos + 1
