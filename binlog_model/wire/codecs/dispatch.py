"""Pick the codec of every column of a TABLE_MAP once, so row decoding is a loop over a table.

Strategy: ``build_row_plan`` turns (type, metadata, signedness) into ``(codec, meta)`` pairs; STRING
metadata is split into real type and length here, so no codec branches on the type of a value. A type
this library cannot decode gets a codec that raises ``UnsupportedEventError`` naming it, so the
TABLE_MAP itself still parses and only rows of that table fail.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from binlog_model.errors import UnsupportedEventError
from binlog_model.wire.codecs import json as json_codecs
from binlog_model.wire.codecs import numeric, spatial, strings, temporal
from binlog_model.wire.codecs._bounds import Buffer
from binlog_model.wire.column_types import ColumnType as T
from binlog_model.wire.column_types import type_name

__all__ = ["Codec", "build_row_plan", "codec_for"]

Codec = Callable[[Buffer, int, int], tuple[Any, int]]

_SIGNED: dict[int, Codec] = {
    T.TINY: numeric.decode_tiny,
    T.SHORT: numeric.decode_short,
    T.INT24: numeric.decode_int24,
    T.LONG: numeric.decode_long,
    T.LONGLONG: numeric.decode_longlong,
}
_UNSIGNED: dict[int, Codec] = {
    T.TINY: numeric.decode_tiny_unsigned,
    T.SHORT: numeric.decode_short_unsigned,
    T.INT24: numeric.decode_int24_unsigned,
    T.LONG: numeric.decode_long_unsigned,
    T.LONGLONG: numeric.decode_longlong_unsigned,
}
_OTHER: dict[int, Codec] = {
    T.FLOAT: numeric.decode_float,
    T.DOUBLE: numeric.decode_double,
    T.NEWDECIMAL: numeric.decode_newdecimal,
    T.DECIMAL: numeric.decode_decimal_old,
    T.YEAR: numeric.decode_year,
    T.BIT: numeric.decode_bit,
    T.DATE: temporal.decode_date,
    T.NEWDATE: temporal.decode_date,
    T.TIME: temporal.decode_time,
    T.TIME2: temporal.decode_time2,
    T.DATETIME: temporal.decode_datetime,
    T.DATETIME2: temporal.decode_datetime2,
    T.TIMESTAMP: temporal.decode_timestamp,
    T.TIMESTAMP2: temporal.decode_timestamp2,
    T.VARCHAR: strings.decode_varchar,
    T.VAR_STRING: strings.decode_varchar,
    T.BLOB: strings.decode_blob,
    T.TINY_BLOB: strings.decode_blob,
    T.MEDIUM_BLOB: strings.decode_blob,
    T.LONG_BLOB: strings.decode_blob,
    T.GEOMETRY: spatial.decode_geometry,
    T.JSON: json_codecs.decode_json,
    T.VECTOR: numeric.decode_vector,
    T.NULL: lambda buf, pos, meta: (None, pos),
}
_FSP_TYPES = frozenset((T.TIME2, T.DATETIME2, T.TIMESTAMP2))
_BLOB_TYPES = frozenset((T.BLOB, T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB))
_BLOB_BY_PREFIX: dict[int, Codec] = {
    1: strings.decode_blob1, 2: strings.decode_blob2, 4: strings.decode_blob4,
}


def _unsupported(reason: str) -> Codec:
    def fail(buf: Buffer, pos: int, meta: int) -> tuple[Any, int]:
        raise UnsupportedEventError(reason, expected="a supported column type")
    return fail


def codec_for(column_type: int, meta: int, unsigned: bool = False) -> tuple[Codec, int]:
    """The codec and the metadata it expects for one TABLE_MAP column."""
    if column_type in _SIGNED:
        return (_UNSIGNED if unsigned else _SIGNED)[column_type], meta
    if column_type in (T.STRING, T.ENUM, T.SET):
        real, length = strings.split_string_meta(meta)
        if real == T.ENUM:
            if length not in (1, 2):
                return _unsupported(f"ENUM column with storage size {length} (expected 1 or 2)"), length
            return (strings.decode_enum1 if length == 1 else strings.decode_enum), length
        if real == T.SET:
            if not 1 <= length <= 8:
                return _unsupported(f"SET column with storage size {length} (expected 1-8)"), length
            return (strings.decode_set1 if length == 1 else strings.decode_set), length
        return strings.decode_string, length
    if column_type == T.NEWDECIMAL:
        precision, scale = meta >> 8, meta & 0xFF
        if not (1 <= precision <= 65 and scale <= 30 and scale <= precision):
            return _unsupported(f"NEWDECIMAL with precision {precision} and scale {scale}"), meta
    if column_type in _FSP_TYPES and not 0 <= meta <= 6:
        return _unsupported(f"{type_name(column_type)} with fractional precision {meta} (max 6)"), meta
    if column_type in (T.BLOB, T.GEOMETRY, T.JSON, T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB, T.VECTOR) \
            and not 1 <= meta <= 4:
        return _unsupported(f"{type_name(column_type)} with length-prefix size {meta} (expected 1-4)"), meta
    if column_type in (T.VARCHAR, T.VAR_STRING):
        return (strings.decode_varchar2 if meta > 255 else strings.decode_varchar1), meta
    if column_type in _BLOB_TYPES:
        # The length-prefix size is fixed per column: pick a codec that does not branch on it per value.
        return _BLOB_BY_PREFIX.get(meta, strings.decode_blob), meta
    codec = _OTHER.get(column_type)
    if codec is None:
        return _unsupported(f"column type {type_name(column_type)} ({column_type}) in a row event"), meta
    return codec, meta


def build_row_plan(column_types: Sequence[int], column_metas: Sequence[int],
                   signedness: Sequence[bool | None] | None) -> tuple[tuple[Codec, int], ...]:
    """One ``(codec, meta)`` per column; ``signedness[i]`` True selects the unsigned integer codec."""
    return tuple(
        codec_for(t, m, bool(signedness and signedness[i]))
        for i, (t, m) in enumerate(zip(column_types, column_metas, strict=True))
    )
