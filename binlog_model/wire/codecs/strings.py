"""Codecs for CHAR/VARCHAR/BINARY/TEXT/BLOB and the ENUM/SET columns packed into STRING.

Strategy: values stay ``bytes``; the charset is applied later by the resolver, which knows the column's
collation. STRING (254) metadata packs the real type (ENUM/SET/STRING) and the byte length, with the top
bits of lengths above 255 hidden in the real-type byte (``Field_string::do_save_field_metadata``);
``split_string_meta`` undoes that once per TABLE_MAP column.
"""

from __future__ import annotations

from collections.abc import Callable

from binlog_model.wire.codecs._bounds import Buffer, need
from binlog_model.wire.structs import U16, U32

__all__ = [
    "decode_blob",
    "decode_blob1",
    "decode_blob2",
    "decode_blob4",
    "decode_enum",
    "decode_enum1",
    "decode_set",
    "decode_set1",
    "decode_string",
    "decode_varchar",
    "decode_varchar1",
    "decode_varchar2",
    "split_string_meta",
]


def split_string_meta(meta: int) -> tuple[int, int]:
    """STRING/ENUM/SET metadata ``byte0 << 8 | byte1`` as ``(real_type, length)``.

    CHAR lengths above 255 store bits 8-9 of the length, inverted, in bits 4-5 of the type byte.
    """
    byte0, byte1 = meta >> 8, meta & 0xFF
    if byte0 and (byte0 & 0x30) != 0x30:
        return byte0 | 0x30, byte1 | (((byte0 & 0x30) ^ 0x30) << 4)
    return byte0, byte1


def decode_varchar(buf: Buffer, pos: int, meta: int) -> tuple[bytes, int]:
    """VARCHAR/VAR_STRING: meta is the maximum byte length; 1 length byte up to 255, else 2."""
    if meta > 255:
        if pos + 2 > len(buf):
            need(buf, pos, 2, "VARCHAR length")
        n = buf[pos] | (buf[pos + 1] << 8)
        pos += 2
    else:
        if pos + 1 > len(buf):
            need(buf, pos, 1, "VARCHAR length")
        n = buf[pos]
        pos += 1
    if pos + n > len(buf):
        need(buf, pos, n, "VARCHAR")
    return bytes(buf[pos:pos + n]), pos + n


def decode_string(buf: Buffer, pos: int, meta: int) -> tuple[bytes, int]:
    """CHAR/BINARY with the already split byte length as meta (see ``split_string_meta``)."""
    return decode_varchar(buf, pos, meta)


def decode_enum(buf: Buffer, pos: int, meta: int) -> tuple[int, int]:
    """ENUM: meta is the storage size (1 or 2 bytes); the value is the 1-based index."""
    if pos + meta > len(buf):
        need(buf, pos, meta, "ENUM")
    return int.from_bytes(buf[pos:pos + meta], "little"), pos + meta


def decode_enum1(buf: Buffer, pos: int, meta: int) -> tuple[int, int]:
    """``decode_enum`` for 1-byte storage (up to 255 members), picked per TABLE_MAP."""
    if pos + 1 > len(buf):
        need(buf, pos, 1, "ENUM")
    return buf[pos], pos + 1


def decode_set1(buf: Buffer, pos: int, meta: int) -> tuple[int, int]:
    """``decode_set`` for 1-byte storage (up to 8 members), picked per TABLE_MAP."""
    if pos + 1 > len(buf):
        need(buf, pos, 1, "SET")
    return buf[pos], pos + 1


def decode_set(buf: Buffer, pos: int, meta: int) -> tuple[int, int]:
    """SET: meta is the storage size (1-8 bytes); the value is the member bitmask."""
    if pos + meta > len(buf):
        need(buf, pos, meta, "SET")
    return int.from_bytes(buf[pos:pos + meta], "little"), pos + meta


def _length_prefixed(width: int, what: str) -> Callable[[Buffer, int, int], tuple[bytes, int]]:
    """A codec for bytes behind a little-endian length prefix of ``width`` (1, 2 or 4) bytes, picked once
    per TABLE_MAP so the row loop does not re-read the prefix size from the metadata for every value."""
    read_length = {1: None, 2: U16.unpack_from, 4: U32.unpack_from}[width]
    label = f"{what} length"

    if read_length is None:
        def decode(buf: Buffer, pos: int, meta: int) -> tuple[bytes, int]:
            if pos + 1 > len(buf):
                need(buf, pos, 1, label)
            n = buf[pos]
            pos += 1
            if pos + n > len(buf):
                need(buf, pos, n, what)
            return bytes(buf[pos:pos + n]), pos + n
    else:
        def decode(buf: Buffer, pos: int, meta: int) -> tuple[bytes, int]:
            if pos + width > len(buf):
                need(buf, pos, width, label)
            n = read_length(buf, pos)[0]
            pos += width
            if pos + n > len(buf):
                need(buf, pos, n, what)
            return bytes(buf[pos:pos + n]), pos + n
    decode.__doc__ = f"{what} with a {width}-byte length prefix."
    return decode


# VARCHAR by its length-byte count (1 up to 255 bytes, else 2); TINYBLOB/BLOB/LONGBLOB (MariaDB's JSON too).
decode_varchar1 = _length_prefixed(1, "VARCHAR")
decode_varchar2 = _length_prefixed(2, "VARCHAR")
decode_blob1 = _length_prefixed(1, "BLOB")
decode_blob2 = _length_prefixed(2, "BLOB")
decode_blob4 = _length_prefixed(4, "BLOB")


def decode_blob(buf: Buffer, pos: int, meta: int) -> tuple[bytes, int]:
    """BLOB/TEXT: meta is the size of the little-endian length prefix (1-4 bytes)."""
    # Inline, not ``_bounds.prefixed``: MEDIUMBLOB/MEDIUMTEXT (a 3-byte prefix) take this codec per value.
    if pos + meta > len(buf):
        need(buf, pos, meta, "BLOB length")
    n = int.from_bytes(buf[pos:pos + meta], "little")
    pos += meta
    if pos + n > len(buf):
        need(buf, pos, n, "BLOB")
    return bytes(buf[pos:pos + n]), pos + n
