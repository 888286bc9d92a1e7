"""MySQL column types → the model's ColumnType and Value kind, and TABLE_MAP type checks.

Strategy: ONE table (``_RULES``) keyed by the lowercase MySQL data type says everything this library needs
about a type: the model ColumnType and Value kind for signed and unsigned columns, the integer width, and
which TABLE_MAP type codes may carry it. ``map_column`` and ``binlog_type_mismatch`` only read that table,
and ``type_mapping_markdown`` renders it for the README, so the code and the documentation cannot drift.
The spec pins the integer mapping: INT UNSIGNED → LONG (int64), INT → INTEGER (int32); BIGINT UNSIGNED gets
UINT64 so 2^64-1 stays exact. Text types in the ``binary`` charset are BYTES, like BINARY/VARBINARY/BLOB.

Columns are typed against ``ColumnLike`` (the attributes of ``schema_tracker.model.ColumnSchema`` this module
reads), so any object with those attributes works.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.charsets import CHARSET_MAXLEN, is_binary_charset, normalize_charset
from binlog_model.errors import SchemaError
from binlog_model.wire.codecs.strings import split_string_meta
from binlog_model.wire.column_types import ColumnType as T

__all__ = [
    "ColumnLike",
    "MappedType",
    "ValueKind",
    "binlog_type_matches",
    "binlog_type_mismatch",
    "canonical_data_type",
    "column_type_name",
    "describe_binlog_column",
    "integer_bits",
    "map_column",
    "type_mapping_markdown",
]


class ColumnLike(Protocol):
    """The column attributes the model layer reads (a subset of ``schema_tracker.model.ColumnSchema``)."""

    @property
    def name(self) -> str: ...
    @property
    def data_type(self) -> str: ...
    @property
    def length(self) -> int | None: ...
    @property
    def precision(self) -> int | None: ...
    @property
    def scale(self) -> int | None: ...
    @property
    def fsp(self) -> int | None: ...
    @property
    def unsigned(self) -> bool: ...
    @property
    def enum_values(self) -> tuple[str, ...]: ...
    @property
    def charset(self) -> str | None: ...


class ValueKind(StrEnum):
    """The ``Value.kind`` oneof field names: ``value.WhichOneof("kind") == ValueKind.INT``."""

    NULL = "null_value"
    INT = "int_value"
    LONG = "long_value"
    STRING = "string_value"
    BYTES = "bytes_value"
    DECIMAL = "decimal_value"
    DOUBLE = "double_value"
    FLOAT = "float_value"
    DATETIME = "datetime_value"
    DATE = "date_value"
    TIMESTAMP = "timestamp_micros"
    TIME = "time_micros"
    UINT64 = "uint64_value"
    JSON = "json_value"
    SET = "set_value"
    BIT = "bit_value"
    GEOMETRY = "geometry_value"
    VECTOR = "vector_value"
    RAW_TEXT = "raw_text_value"
    JSON_DIFF = "json_diff"


@dataclass(frozen=True, slots=True)
class MappedType:
    """How one column appears in the model: ``column_type`` is a ``ColumnType`` enum number."""

    column_type: int
    value_kind: ValueKind


@dataclass(frozen=True, slots=True)
class _Rule:
    signed: MappedType
    unsigned: MappedType | None     # None: the type has no UNSIGNED form (same as signed)
    binlog_codes: frozenset[int]    # TABLE_MAP codes (after unpacking ENUM/SET from STRING metadata)
    textual: bool = False           # the charset decides STRING vs BYTES
    note: str = ""                  # README remark
    unsigned_note: str = ""


def _m(column_type: int, kind: ValueKind) -> MappedType:
    return MappedType(column_type, kind)


_INTEGER = _m(pb.INTEGER, ValueKind.INT)
_LONG = _m(pb.LONG, ValueKind.LONG)
_UINT64 = _m(pb.UINT64, ValueKind.UINT64)
_STRING = _m(pb.STRING, ValueKind.STRING)
_BYTES = _m(pb.BYTES, ValueKind.BYTES)
_GEOMETRY = _m(pb.GEOMETRY, ValueKind.GEOMETRY)

_TEXT_NOTE = "text in the column charset; invalid bytes → `raw_text_value`; charset binary → BYTES"
_GEOMETRY_NOTE = "SRID + OGC WKB"

_RULES: dict[str, _Rule] = {
    "tinyint": _Rule(_INTEGER, _INTEGER, frozenset({T.TINY})),
    "smallint": _Rule(_INTEGER, _INTEGER, frozenset({T.SHORT})),
    "mediumint": _Rule(_INTEGER, _INTEGER, frozenset({T.INT24})),
    "int": _Rule(_INTEGER, _LONG, frozenset({T.LONG}), note="spec: INT → Integer",
                 unsigned_note="spec: INT UNSIGNED → Long"),
    "bigint": _Rule(_LONG, _UINT64, frozenset({T.LONGLONG}), unsigned_note="exact up to 2^64-1"),
    "decimal": _Rule(_m(pb.DECIMAL, ValueKind.DECIMAL), None, frozenset({T.NEWDECIMAL, T.DECIMAL}),
                     note='exact plain text, e.g. "-12.340"'),
    "float": _Rule(_m(pb.FLOAT, ValueKind.FLOAT), None, frozenset({T.FLOAT})),
    "double": _Rule(_m(pb.DOUBLE, ValueKind.DOUBLE), None, frozenset({T.DOUBLE})),
    "bit": _Rule(_m(pb.BIT, ValueKind.BIT), None, frozenset({T.BIT}),
                 note="the bits as an unsigned integer (b'101' → 5)"),
    "year": _Rule(_INTEGER, None, frozenset({T.YEAR}), note="0 for YEAR 0000"),
    "date": _Rule(_m(pb.DATE, ValueKind.DATE), None, frozenset({T.DATE, T.NEWDATE}),
                  note="{year, month, day}; zero/invalid dates kept as stored"),
    "datetime": _Rule(_m(pb.DATETIME, ValueKind.DATETIME), None, frozenset({T.DATETIME, T.DATETIME2}),
                      note="naive {year..second, micros}; zero/invalid kept as stored"),
    "timestamp": _Rule(_m(pb.TIMESTAMP, ValueKind.TIMESTAMP), None, frozenset({T.TIMESTAMP, T.TIMESTAMP2}),
                       note="microseconds since the epoch, UTC; 0 is the zero timestamp"),
    "time": _Rule(_m(pb.TIME, ValueKind.TIME), None, frozenset({T.TIME, T.TIME2}),
                  note="signed microseconds"),
    "char": _Rule(_STRING, None, frozenset({T.STRING}), textual=True, note=_TEXT_NOTE),
    "varchar": _Rule(_STRING, None, frozenset({T.VARCHAR, T.VAR_STRING}), textual=True, note=_TEXT_NOTE),
    "tinytext": _Rule(_STRING, None, frozenset({T.BLOB}), textual=True, note=_TEXT_NOTE),
    "text": _Rule(_STRING, None, frozenset({T.BLOB}), textual=True, note=_TEXT_NOTE),
    "mediumtext": _Rule(_STRING, None, frozenset({T.BLOB}), textual=True, note=_TEXT_NOTE),
    "longtext": _Rule(_STRING, None, frozenset({T.BLOB}), textual=True, note=_TEXT_NOTE),
    "binary": _Rule(_BYTES, None, frozenset({T.STRING}), note="BINARY(N) right-padded with 0x00 to N"),
    "varbinary": _Rule(_BYTES, None, frozenset({T.VARCHAR, T.VAR_STRING})),
    "tinyblob": _Rule(_BYTES, None, frozenset({T.BLOB})),
    "blob": _Rule(_BYTES, None, frozenset({T.BLOB})),
    "mediumblob": _Rule(_BYTES, None, frozenset({T.BLOB})),
    "longblob": _Rule(_BYTES, None, frozenset({T.BLOB})),
    "enum": _Rule(_STRING, None, frozenset({T.ENUM}), note="the label; index 0 (invalid value) → \"\""),
    "set": _Rule(_m(pb.SET, ValueKind.SET), None, frozenset({T.SET}),
                 note="`set_value.labels`, in definition order"),
    # MariaDB has no JSON type: JSON is LONGTEXT with a CHECK, logged as BLOB (text in json_value).
    "json": _Rule(_m(pb.JSON, ValueKind.JSON), None, frozenset({T.JSON, T.BLOB}),
                  note="the document as JSON text (MySQL's rendering); a partial update whose old document "
                       "is not in the log: `json_diff` (see Row semantics)"),
    "geometry": _Rule(_GEOMETRY, None, frozenset({T.GEOMETRY}), note=_GEOMETRY_NOTE),
    "point": _Rule(_GEOMETRY, None, frozenset({T.GEOMETRY}), note=_GEOMETRY_NOTE),
    "linestring": _Rule(_GEOMETRY, None, frozenset({T.GEOMETRY}), note=_GEOMETRY_NOTE),
    "polygon": _Rule(_GEOMETRY, None, frozenset({T.GEOMETRY}), note=_GEOMETRY_NOTE),
    "multipoint": _Rule(_GEOMETRY, None, frozenset({T.GEOMETRY}), note=_GEOMETRY_NOTE),
    "multilinestring": _Rule(_GEOMETRY, None, frozenset({T.GEOMETRY}), note=_GEOMETRY_NOTE),
    "multipolygon": _Rule(_GEOMETRY, None, frozenset({T.GEOMETRY}), note=_GEOMETRY_NOTE),
    "geometrycollection": _Rule(_GEOMETRY, None, frozenset({T.GEOMETRY}), note=_GEOMETRY_NOTE),
    "vector": _Rule(_m(pb.VECTOR, ValueKind.VECTOR), None, frozenset({T.VECTOR}), note="float32 values"),
    # MariaDB data-type plugins, logged as fixed-length binary strings: kept as their stored bytes.
    "uuid": _Rule(_BYTES, None, frozenset({T.STRING}), note="MariaDB: the 16 stored bytes"),
    "inet6": _Rule(_BYTES, None, frozenset({T.STRING}), note="MariaDB: the 16 stored bytes"),
    "inet4": _Rule(_BYTES, None, frozenset({T.STRING}), note="MariaDB: the 4 stored bytes"),
}

# Spellings the servers accept for the types above.
_ALIASES: dict[str, str] = {
    "integer": "int", "int1": "tinyint", "int2": "smallint", "int3": "mediumint", "int4": "int",
    "int8": "bigint", "middleint": "mediumint", "bool": "tinyint", "boolean": "tinyint",
    "dec": "decimal", "numeric": "decimal", "fixed": "decimal", "real": "double",
    "double precision": "double", "float4": "float", "float8": "double",
    "character": "char", "nchar": "char", "national char": "char", "nvarchar": "varchar",
    "national varchar": "varchar", "character varying": "varchar", "long": "mediumtext",
    "long varchar": "mediumtext", "long varbinary": "mediumblob", "geomcollection": "geometrycollection",
}

_INT_BITS = {"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "bigint": 64}
_BLOB_PACK_LENGTH = {"tinytext": 1, "tinyblob": 1, "text": 2, "blob": 2, "mediumtext": 3, "mediumblob": 3,
                     "longtext": 4, "longblob": 4, "json": 4}
_COLUMN_TYPE_NAMES = {v.number: v.name for v in pb.ColumnType.DESCRIPTOR.values}


def canonical_data_type(data_type: str) -> str:
    """The table key for a data type name: lowercase, aliases resolved (``integer`` → ``int``)."""
    lowered = " ".join(data_type.lower().split())
    return _ALIASES.get(lowered, lowered)


def _rule(column: ColumnLike) -> tuple[str, _Rule]:
    name = canonical_data_type(column.data_type)
    rule = _RULES.get(name)
    if rule is None:
        raise SchemaError(f"column {column.name!r} has data type {column.data_type!r}, which the model "
                          f"does not map (known: {', '.join(sorted(_RULES))})")
    return name, rule


def map_column(column: ColumnLike) -> MappedType:
    """The model ColumnType and Value kind of ``column``.

    Raises ``SchemaError`` for a data type the table does not know.
    """
    _, rule = _rule(column)
    if rule.textual and is_binary_charset(column.charset):
        return _BYTES
    if column.unsigned and rule.unsigned is not None:
        return rule.unsigned
    return rule.signed


def column_type_name(column_type: int) -> str:
    """The enum name of a ColumnType number (``7`` → ``"STRING"``)."""
    return _COLUMN_TYPE_NAMES.get(column_type, f"COLUMN_TYPE_{column_type}")


def integer_bits(data_type: str) -> int | None:
    """Storage width in bits of an integer data type (``mediumint`` → 24), None for other types."""
    return _INT_BITS.get(canonical_data_type(data_type))


def binlog_type_matches(type_code: int, meta: int, column: ColumnLike) -> bool:
    """True when a TABLE_MAP column (type code and metadata) can carry values of ``column``."""
    return binlog_type_mismatch(type_code, meta, column) is None


def binlog_type_mismatch(type_code: int, meta: int, column: ColumnLike) -> str | None:
    """Why a TABLE_MAP column (``type_code``, ``meta``) disagrees with ``column``, or None if it agrees.

    ``meta`` uses mysqlbinlog's convention (ENUM(1 byte) is 63233 = 0xF701; NEWDECIMAL is
    ``precision << 8 | scale``; BIT is ``bytes << 8 | extra_bits``). ENUM and SET arrive as STRING (254)
    with their real type in ``meta >> 8``. Besides the type code, the checks cover what changes decoding or
    meaning: DECIMAL precision/scale, fractional-second precision, BLOB/TEXT size, ENUM/SET storage size,
    BIT width and the byte length of CHAR/VARCHAR/BINARY/VARBINARY (length x charset max bytes) whenever
    the tracked column knows them. An unknown data type is reported as a mismatch.
    """
    try:
        name, rule = _rule(column)
    except SchemaError as exc:
        return exc.reason
    code, low = type_code, meta
    if type_code == T.STRING:
        code, low = split_string_meta(meta)  # ENUM/SET/CHAR: (real type, pack length or byte length)
    if code not in rule.binlog_codes:
        return (f"binlog type {_type_name(code)} cannot carry {name} column {column.name!r}"
                f" (expected {' or '.join(sorted(_type_name(c) for c in rule.binlog_codes))})")
    problem = _meta_problem(name, code, meta, low, column)
    if problem is None:
        return None
    what, tracked, logged = problem
    return f"column {column.name!r} ({name}): {what} is {logged} in the binlog but {tracked} in the schema"


def _meta_problem(name: str, code: int, meta: int, low: int,
                  column: ColumnLike) -> tuple[str, object, object] | None:
    # (what, tracked, logged) for the first metadata fact that disagrees, or None.
    if code == T.NEWDECIMAL:
        logged = (meta >> 8, meta & 0xFF)
        if column.precision is not None and column.scale is not None \
                and (column.precision, column.scale) != logged:
            return "DECIMAL(precision, scale)", (column.precision, column.scale), logged
    elif code in (T.TIME2, T.DATETIME2, T.TIMESTAMP2):
        if (column.fsp or 0) != meta:
            return "fractional-second precision", column.fsp or 0, meta
    elif code == T.FLOAT or code == T.DOUBLE:
        float_size = 4 if code == T.FLOAT else 8
        if meta != float_size:
            return "storage size", float_size, meta
    elif code == T.BLOB:
        pack_length = _BLOB_PACK_LENGTH.get(name)
        if pack_length is not None and meta != pack_length:
            return "BLOB/TEXT length-prefix size", pack_length, meta
    elif code == T.ENUM:
        if column.enum_values:
            size = 1 if len(column.enum_values) < 256 else 2
            if low != size:
                return "ENUM storage size", size, low
    elif code == T.SET:
        if column.enum_values:
            size = (len(column.enum_values) + 7) // 8
            size = 8 if size > 4 else size
            if low != size:
                return "SET storage size", size, low
    elif code == T.BIT:
        bits = (meta >> 8) * 8 + (meta & 0xFF)
        if bits != (column.length or 1):
            return "BIT width", column.length or 1, bits
    elif code in (T.STRING, T.VARCHAR, T.VAR_STRING):
        byte_length = _byte_length(name, column)
        logged_length = low if code == T.STRING else meta
        if byte_length is not None and byte_length != logged_length:
            return "maximum byte length", byte_length, logged_length
    return None


def _byte_length(name: str, column: ColumnLike) -> int | None:
    # CHAR/VARCHAR lengths count characters; the binlog counts bytes (length x charset max bytes).
    if column.length is None:
        return None
    if name in ("binary", "varbinary"):
        return column.length
    if name in ("char", "varchar"):
        if column.charset is None:
            return None
        charset = normalize_charset(column.charset)
        return column.length * CHARSET_MAXLEN.get(charset, 1)
    return None


def _type_name(code: int) -> str:
    try:
        return T(code).name
    except ValueError:
        return f"TYPE_{code}"


def type_mapping_markdown() -> str:
    """The type-mapping table as Markdown (pasted into the README; generated from ``_RULES``)."""
    lines = ["| MySQL type | model ColumnType | Value kind (`Value.kind`) | notes |", "|---|---|---|---|"]
    for name, rule in _RULES.items():
        variants = [(name, rule.signed, rule.note)]
        if rule.unsigned is not None:
            variants.append((f"{name} unsigned", rule.unsigned, rule.unsigned_note))
        for label, mapped, note in variants:
            lines.append(f"| {label} | {column_type_name(mapped.column_type)} | `{mapped.value_kind.value}` "
                         f"| {note} |")
    return "\n".join(lines) + "\n"


_BINLOG_TYPE_TEXT: dict[int, str] = {
    T.TINY: "TINYINT", T.SHORT: "SMALLINT", T.INT24: "MEDIUMINT", T.LONG: "INT", T.LONGLONG: "BIGINT",
    T.FLOAT: "FLOAT", T.DOUBLE: "DOUBLE", T.YEAR: "YEAR", T.DATE: "DATE", T.NEWDATE: "DATE",
    T.TIMESTAMP: "TIMESTAMP", T.DATETIME: "DATETIME", T.TIME: "TIME", T.JSON: "JSON",
    T.GEOMETRY: "GEOMETRY", T.VECTOR: "VECTOR", T.DECIMAL: "DECIMAL (old)", T.NULL: "NULL",
}
_BLOB_TEXT = {1: "TINYBLOB/TINYTEXT", 2: "BLOB/TEXT", 3: "MEDIUMBLOB/MEDIUMTEXT", 4: "LONGBLOB/LONGTEXT"}


def describe_binlog_column(type_code: int, meta: int) -> str:
    """A TABLE_MAP column as a MySQL type, for messages: ``VARCHAR(384 bytes)``, ``DECIMAL(10,2)``,
    ``DATETIME(3)``, ``ENUM (1-byte)`` ... (the binlog knows storage, not the declared type, so lengths are
    in bytes and BLOB and TEXT look alike)."""
    code, low = type_code, meta
    if type_code == T.STRING:
        code, low = split_string_meta(meta)
    if code in _BINLOG_TYPE_TEXT:
        return _BINLOG_TYPE_TEXT[code]
    if code == T.NEWDECIMAL:
        return f"DECIMAL({meta >> 8},{meta & 0xFF})"
    if code in (T.TIMESTAMP2, T.DATETIME2, T.TIME2):
        base = {T.TIMESTAMP2: "TIMESTAMP", T.DATETIME2: "DATETIME", T.TIME2: "TIME"}[T(code)]
        return f"{base}({meta})" if meta else base
    if code in (T.VARCHAR, T.VAR_STRING):
        return f"VARCHAR/VARBINARY({meta} bytes)"
    if code == T.STRING:
        return f"CHAR/BINARY({low} bytes)"
    if code == T.BLOB:
        return _BLOB_TEXT.get(meta, f"BLOB ({meta}-byte length)")
    if code == T.ENUM:
        return f"ENUM ({low}-byte)"
    if code == T.SET:
        return f"SET ({low}-byte)"
    if code == T.BIT:
        return f"BIT({(meta >> 8) * 8 + (meta & 0xFF)})"
    return f"{_type_name(code)} (meta {meta})"
