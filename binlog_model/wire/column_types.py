"""MySQL column type codes as written in TABLE_MAP events.

Strategy: one IntEnum with the upstream ``MYSQL_TYPE_*`` names (``enum_field_types`` in MySQL's
``field_types.h``), so code and tests read next to the server sources. TABLE_MAP never carries
TINY_BLOB..LONG_BLOB (all BLOBs are 252 with the length-prefix size in the metadata), and ENUM/SET
usually arrive as STRING (254) with the real type packed into the metadata.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["ColumnType", "type_name"]


class ColumnType(IntEnum):
    """``enum_field_types`` codes."""

    DECIMAL = 0
    TINY = 1
    SHORT = 2
    LONG = 3
    FLOAT = 4
    DOUBLE = 5
    NULL = 6
    TIMESTAMP = 7
    LONGLONG = 8
    INT24 = 9
    DATE = 10
    TIME = 11
    DATETIME = 12
    YEAR = 13
    NEWDATE = 14
    VARCHAR = 15
    BIT = 16
    TIMESTAMP2 = 17
    DATETIME2 = 18
    TIME2 = 19
    TYPED_ARRAY = 20
    # MariaDB's COMPRESSED columns (VARCHAR/BLOB ... COMPRESSED), logged with their own codes.
    VARCHAR_COMPRESSED = 140
    BLOB_COMPRESSED = 141
    VECTOR = 242
    INVALID = 243
    BOOL = 244
    JSON = 245
    NEWDECIMAL = 246
    ENUM = 247
    SET = 248
    TINY_BLOB = 249
    MEDIUM_BLOB = 250
    LONG_BLOB = 251
    BLOB = 252
    VAR_STRING = 253
    STRING = 254
    GEOMETRY = 255


_NAMES = {t.value: t.name for t in ColumnType}


def type_name(code: int) -> str:
    """Upstream name without the ``MYSQL_TYPE_`` prefix, or ``TYPE_<code>`` for unknown codes."""
    return _NAMES.get(code, f"TYPE_{code}")
