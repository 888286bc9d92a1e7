"""TABLE_MAP_EVENT: the table id, names, column types and metadata that row events refer to.

Strategy: parse the fixed layout (table id, flags, names, types, per-type metadata, NULL bitmap) with a
bounds-checked ``Cursor``, then the MySQL 8 / MariaDB 10.5+ optional metadata TLVs, which are expanded
to tuples aligned with the columns (``None`` where a field does not apply to a column). The per-column
metadata sizes follow ``Table_map_log_event``: 1 byte for FLOAT/DOUBLE/BLOB/GEOMETRY/JSON/VECTOR and the
fsp of TIME2/DATETIME2/TIMESTAMP2; 2 bytes for VARCHAR/VAR_STRING/BIT (little-endian), NEWDECIMAL
(precision, scale) and STRING/ENUM/SET (real type, length). The row codecs are chosen here once.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from binlog_model.compiled import maker
from binlog_model.errors import DecodeError
from binlog_model.wire.codecs.dispatch import Codec, build_row_plan
from binlog_model.wire.codecs.strings import split_string_meta
from binlog_model.wire.column_types import ColumnType as T
from binlog_model.wire.cursor import Cursor
from binlog_model.wire.header import EventHeader

__all__ = ["OptionalMetadataType", "TableMapEvent", "parse_table_map_event", "real_type"]


class OptionalMetadataType:
    """TABLE_MAP optional metadata TLV types (``Table_map_event::Optional_metadata_field_type``)."""

    SIGNEDNESS = 1
    DEFAULT_CHARSET = 2
    COLUMN_CHARSET = 3
    COLUMN_NAME = 4
    SET_STR_VALUE = 5
    ENUM_STR_VALUE = 6
    GEOMETRY_TYPE = 7
    SIMPLE_PRIMARY_KEY = 8
    PRIMARY_KEY_WITH_PREFIX = 9
    ENUM_AND_SET_DEFAULT_CHARSET = 10
    ENUM_AND_SET_COLUMN_CHARSET = 11
    COLUMN_VISIBILITY = 12
    VECTOR_DIMENSIONALITY = 13


_ONE_BYTE_META = frozenset((T.FLOAT, T.DOUBLE, T.BLOB, T.GEOMETRY, T.JSON, T.TIMESTAMP2, T.DATETIME2,
                            T.TIME2, T.VECTOR, T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB, T.BLOB_COMPRESSED))
_LE_TWO_BYTE_META = frozenset((T.VARCHAR, T.VAR_STRING, T.BIT, T.VARCHAR_COMPRESSED))
_BE_TWO_BYTE_META = frozenset((T.NEWDECIMAL, T.STRING, T.ENUM, T.SET))
# Columns with a SIGNEDNESS bit (``has_signedess_information_type``): YEAR and old DECIMAL included
# (MySQL writes 0 for YEAR, MariaDB 1); skipping YEAR would shift every later column's bit.
_NUMERIC = frozenset((T.TINY, T.SHORT, T.INT24, T.LONG, T.LONGLONG, T.FLOAT, T.DOUBLE, T.NEWDECIMAL,
                      T.YEAR, T.DECIMAL))
# The columns the DEFAULT_CHARSET / COLUMN_CHARSET blocks count (the servers' ``is_character_type`` over the
# real type; ENUM/SET have their own blocks, JSON none). The servers differ: MariaDB counts GEOMETRY (its
# class derives from BLOB), MySQL does not (geometry has its own GEOMETRY_TYPE block) and, from 9.0, counts
# VECTOR. Checked on real TABLE_MAPs of MySQL 9.7 and MariaDB with every column type.
_TEXT_AND_BLOB = (T.STRING, T.VAR_STRING, T.VARCHAR, T.BLOB, T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB)
_CHARACTER_MYSQL = frozenset((*_TEXT_AND_BLOB, T.VECTOR))
_CHARACTER_MARIADB = frozenset((*_TEXT_AND_BLOB, T.GEOMETRY, T.VARCHAR_COMPRESSED, T.BLOB_COMPRESSED))


def real_type(column_type: int, meta: int) -> int:
    """The real type of a column: ENUM/SET for a STRING whose metadata says so, else ``column_type``."""
    if column_type in (T.STRING, T.ENUM, T.SET):
        real, _ = split_string_meta(meta)
        if real in (T.ENUM, T.SET, T.STRING):
            return real
    return column_type


@dataclass(frozen=True, slots=True)
class TableMapEvent:
    """A parsed TABLE_MAP_EVENT. Optional-metadata fields are None when the server did not send them.

    ``signedness``, ``charsets``, ``enum_set_charsets``, ``enum_values``, ``set_values``,
    ``geometry_types``, ``vector_dimensions`` and ``visibility`` have one entry per column (None where
    it does not apply, e.g. signedness of a VARCHAR). ``primary_key`` lists column indexes;
    ``primary_key_prefixes`` the prefix length of each (0 = whole column). ``unknown_metadata`` keeps
    TLVs of unknown type raw.
    """

    header: EventHeader
    table_id: int
    flags: int
    schema: str
    table: str
    column_types: tuple[int, ...]
    column_metas: tuple[int, ...]
    nullable: tuple[bool, ...]
    signedness: tuple[bool | None, ...] | None = None
    charsets: tuple[int | None, ...] | None = None
    enum_set_charsets: tuple[int | None, ...] | None = None
    column_names: tuple[str, ...] | None = None
    enum_values: tuple[tuple[bytes, ...] | None, ...] | None = None
    set_values: tuple[tuple[bytes, ...] | None, ...] | None = None
    geometry_types: tuple[int | None, ...] | None = None
    primary_key: tuple[int, ...] | None = None
    primary_key_prefixes: tuple[int, ...] | None = None
    visibility: tuple[bool, ...] | None = None
    vector_dimensions: tuple[int | None, ...] | None = None
    unknown_metadata: tuple[tuple[int, bytes], ...] = ()
    row_plan: tuple[tuple[Codec, int], ...] = field(default=(), repr=False, compare=False)

    @property
    def column_count(self) -> int:
        return len(self.column_types)

    def real_type(self, i: int) -> int:
        """Real type of column ``i`` (ENUM/SET packed into STRING metadata are unpacked)."""
        return real_type(self.column_types[i], self.column_metas[i])

    def with_header(self, header: EventHeader) -> TableMapEvent:
        """This table map found again at ``header`` (the same bytes logged before the next statement):
        ``dataclasses.replace(self, header=header)``, without its per-call introspection."""
        return _new_table_map(header, *_AFTER_HEADER(self))


# TableMapEvent(...) with every field given in order (made in C where the core is on), and the fields after
# the header, read at once.
_new_table_map = maker(TableMapEvent)
_AFTER_HEADER = operator.attrgetter(*(f.name for f in fields(TableMapEvent) if f.name != "header"))
assert fields(TableMapEvent)[0].name == "header"


# MySQL's and MariaDB's hard limit of columns per table (MAX_FIELDS).
MAX_COLUMNS = 4096


def parse_table_map_event(header: EventHeader, body: memoryview, post_header_len: int, *,
                          mariadb: bool = False) -> TableMapEvent:
    """Parse a TABLE_MAP_EVENT body (after the common header, before the checksum).

    ``post_header_len`` is 6 for servers with 4-byte table ids, else 8. ``mariadb`` selects MariaDB's
    rule for which columns the charset blocks count (the FORMAT_DESCRIPTION's server version says).
    Raises ``TruncatedEventError`` when a length points past the body and ``DecodeError`` for invalid
    names or metadata; both carry the header's file and offset.
    """
    try:
        return _parse(header, body, post_header_len, mariadb)
    except DecodeError as exc:
        raise exc.located(file=getattr(header, "file", None), offset=getattr(header, "offset", None),
                          event_type="TABLE_MAP_EVENT") from None


def _name(raw: bytes, what: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"{what} is not valid UTF-8: {raw!r}", expected="a UTF-8 name") from exc


def _parse(header: EventHeader, body: memoryview, post_header_len: int, mariadb: bool) -> TableMapEvent:
    cur = Cursor(body)
    table_id = cur.uint(4 if post_header_len == 6 else 6, "table_id")
    flags = cur.u16("flags")
    schema_len = cur.u8("schema name length")
    schema = _name(cur.bytes(schema_len, "schema name"), "schema name")
    cur.skip(1, "schema name terminator")
    table_len = cur.u8("table name length")
    table = _name(cur.bytes(table_len, "table name"), "table name")
    cur.skip(1, "table name terminator")
    count = cur.lenenc_int("column count")
    if count < 0:
        raise DecodeError("column count is NULL", expected="a column count")
    if count > MAX_COLUMNS:
        # Every row image becomes a tuple of ``count`` slots: a lying count would multiply memory.
        raise DecodeError(f"column count {count} is above MySQL's limit of {MAX_COLUMNS}",
                          expected=f"at most {MAX_COLUMNS} columns")
    types = tuple(cur.bytes(count, "column types"))
    meta_len = cur.lenenc_int("metadata length")
    meta_cur = cur.sub(max(meta_len, 0), "column metadata")
    metas = tuple(_column_meta(meta_cur, t, i) for i, t in enumerate(types))
    nullable = cur.bitmap(count, "NULL bitmap")
    opt = _parse_optional(cur, types, metas, _CHARACTER_MARIADB if mariadb else _CHARACTER_MYSQL)
    plan = build_row_plan(types, metas, opt.get("signedness"))
    return TableMapEvent(header=header, table_id=table_id, flags=flags, schema=schema, table=table,
                         column_types=types, column_metas=metas, nullable=nullable, row_plan=plan, **opt)


def _column_meta(cur: Cursor, t: int, i: int) -> int:
    what = f"metadata of column {i}"
    if t in _ONE_BYTE_META:
        return cur.u8(what)
    if t in _LE_TWO_BYTE_META:
        return cur.u16(what)
    if t in _BE_TWO_BYTE_META:
        return cur.uint_be(2, what)
    return 0


def _msb_bitmap(raw: bytes, n: int) -> list[bool]:
    # Optional-metadata bitmaps are most-significant-bit first, unlike row bitmaps.
    if len(raw) * 8 < n:
        raise DecodeError(f"optional metadata bitmap of {len(raw)} bytes is too short for {n} columns",
                          expected=f"{(n + 7) // 8} bytes")
    return [bool(raw[k >> 3] & (0x80 >> (k & 7))) for k in range(n)]


def _spread(indexes: Sequence[int], values: Sequence[Any], count: int, what: str) -> tuple[Any, ...]:
    if len(values) != len(indexes):
        raise DecodeError(f"{what} has {len(values)} entries for {len(indexes)} columns",
                          expected=f"{len(indexes)} entries")
    out: list[Any] = [None] * count
    for i, v in zip(indexes, values, strict=True):
        out[i] = v
    return tuple(out)


def _lenenc(cur: Cursor, what: str) -> int:
    v = cur.lenenc_int(what)
    if v < 0:
        raise DecodeError(f"{what} is NULL", expected=what)
    return v


def _charsets(cur: Cursor, default_form: bool, n: int, what: str) -> list[int]:
    if not default_form:
        out = []
        while cur.remaining:
            out.append(_lenenc(cur, what))
        return out
    default = _lenenc(cur, f"{what} default")
    result = [default] * n
    while cur.remaining:
        idx = _lenenc(cur, f"{what} column index")
        coll = _lenenc(cur, what)
        if idx >= n:
            raise DecodeError(f"{what} names column {idx} of {n}", expected=f"an index below {n}")
        result[idx] = coll
    return result


def _str_values(cur: Cursor, what: str) -> list[tuple[bytes, ...]]:
    out = []
    while cur.remaining:
        k = _lenenc(cur, f"{what} count")
        out.append(tuple(cur.bytes(_lenenc(cur, what), what) for _ in range(k)))
    return out


def _parse_optional(cur: Cursor, types: tuple[int, ...], metas: tuple[int, ...],
                    character_types: frozenset[int]) -> dict[str, Any]:
    count = len(types)
    reals = [real_type(t, m) for t, m in zip(types, metas, strict=True)]
    numeric = [i for i, t in enumerate(types) if t in _NUMERIC]
    character = [i for i, r in enumerate(reals) if r in character_types]
    enum_set = [i for i, r in enumerate(reals) if r in (T.ENUM, T.SET)]
    enums = [i for i, r in enumerate(reals) if r == T.ENUM]
    sets = [i for i, r in enumerate(reals) if r == T.SET]
    geoms = [i for i, t in enumerate(types) if t == T.GEOMETRY]
    vectors = [i for i, t in enumerate(types) if t == T.VECTOR]
    opt: dict[str, Any] = {}
    unknown: list[tuple[int, bytes]] = []
    M = OptionalMetadataType
    while cur.remaining:
        kind = cur.u8("optional metadata type")
        length = _lenenc(cur, "optional metadata length")
        sub = cur.sub(length, f"optional metadata field {kind}")
        if kind == M.SIGNEDNESS:
            bits = _msb_bitmap(sub.rest(), len(numeric))
            opt["signedness"] = _spread(numeric, bits, count, "SIGNEDNESS")
        elif kind in (M.DEFAULT_CHARSET, M.COLUMN_CHARSET):
            vals = _charsets(sub, kind == M.DEFAULT_CHARSET, len(character), "charset")
            opt["charsets"] = _spread(character, vals, count, "charsets")
        elif kind in (M.ENUM_AND_SET_DEFAULT_CHARSET, M.ENUM_AND_SET_COLUMN_CHARSET):
            vals = _charsets(sub, kind == M.ENUM_AND_SET_DEFAULT_CHARSET, len(enum_set), "enum/set charset")
            opt["enum_set_charsets"] = _spread(enum_set, vals, count, "enum/set charsets")
        elif kind == M.COLUMN_NAME:
            names = []
            while sub.remaining:
                names.append(_name(sub.bytes(_lenenc(sub, "column name length"), "column name"),
                                   "column name"))
            if len(names) != count:
                raise DecodeError(f"COLUMN_NAME has {len(names)} names for {count} columns",
                                  expected=f"{count} names")
            opt["column_names"] = tuple(names)
        elif kind == M.ENUM_STR_VALUE:
            opt["enum_values"] = _spread(enums, _str_values(sub, "ENUM value"), count, "ENUM_STR_VALUE")
        elif kind == M.SET_STR_VALUE:
            opt["set_values"] = _spread(sets, _str_values(sub, "SET value"), count, "SET_STR_VALUE")
        elif kind == M.GEOMETRY_TYPE:
            gvals = []
            while sub.remaining:
                gvals.append(_lenenc(sub, "geometry type"))
            opt["geometry_types"] = _spread(geoms, gvals, count, "GEOMETRY_TYPE")
        elif kind == M.SIMPLE_PRIMARY_KEY:
            pk = []
            while sub.remaining:
                pk.append(_lenenc(sub, "primary key column"))
            opt["primary_key"] = tuple(pk)
            opt["primary_key_prefixes"] = tuple(0 for _ in pk)
        elif kind == M.PRIMARY_KEY_WITH_PREFIX:
            pk, prefixes = [], []
            while sub.remaining:
                pk.append(_lenenc(sub, "primary key column"))
                prefixes.append(_lenenc(sub, "primary key prefix"))
            opt["primary_key"] = tuple(pk)
            opt["primary_key_prefixes"] = tuple(prefixes)
        elif kind == M.COLUMN_VISIBILITY:
            opt["visibility"] = tuple(_msb_bitmap(sub.rest(), count))
        elif kind == M.VECTOR_DIMENSIONALITY:
            dims = []
            while sub.remaining:
                dims.append(_lenenc(sub, "vector dimensionality"))
            opt["vector_dimensions"] = _spread(vectors, dims, count, "VECTOR_DIMENSIONALITY")
        else:
            unknown.append((kind, sub.rest()))
    for key in ("primary_key",):
        for idx in opt.get(key) or ():
            if idx >= count:
                raise DecodeError(f"primary key names column {idx} of {count}",
                                  expected=f"an index below {count}")
    if unknown:
        opt["unknown_metadata"] = tuple(unknown)
    return opt
