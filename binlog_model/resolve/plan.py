"""Row plans: for one TABLE_MAP under one schema version, every column described as plain data.

A ``RowPlan`` is built once per TABLE_MAP layout and read by both row builders: the pure-Python reference
(``resolve.rows``) and the compiled one (``binlog_model._speedups``), which cannot call Python closures. So
everything a builder needs to turn one logged value into a ``Value`` is a field here: the binlog codec (type
code and metadata), what the model makes of it (``PlanKind``), signedness, charset, ENUM/SET labels, padding,
and the column's name, key position and visibility. Nothing here holds behaviour.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum

from binlog_model.charsets import (
    charset_for_collation_id,
    is_binary_charset,
    make_text_decoder,
    normalize_charset,
)
from binlog_model.errors import SchemaMismatchError
from binlog_model.position import EventPosition
from binlog_model.resolve.statement_text import printable
from binlog_model.resolve.types import (
    ColumnLike,
    ValueKind,
    binlog_type_mismatch,
    canonical_data_type,
    describe_binlog_column,
    integer_bits,
    map_column,
)
from binlog_model.wire.table_map import TableMapEvent, real_type
from schema_tracker.model import TEXTUAL_TYPES, ColumnSchema, TableSchema

__all__ = ["ColumnMark", "PlanColumn", "PlanKind", "RowPlan", "build_plan", "plan_column"]


class PlanKind(IntEnum):
    """How a logged value becomes a ``Value``: one case per builder (the C switch uses these numbers)."""

    NONE = 0         # a HIDDEN column: never converted, so never mapped
    INT = 1          # int_value (TINYINT..INT signed, smaller unsigned, YEAR)
    LONG = 2         # long_value (INT UNSIGNED, BIGINT signed)
    UINT64 = 3       # uint64_value (BIGINT UNSIGNED)
    DECIMAL = 4      # decimal_value, exact plain text
    FLOAT = 5
    DOUBLE = 6
    TEXT = 7         # string_value in the column charset, else raw_text_value
    ENUM = 8         # string_value: the label (index 0 is "")
    SET = 9          # set_value: the member labels
    BYTES = 10       # bytes_value, right-padded to ``pad_to``
    BIT = 11
    DATE = 12
    DATETIME = 13
    TIMESTAMP = 14
    TIME = 15
    JSON = 16
    GEOMETRY = 17
    VECTOR = 18


class ColumnMark(IntEnum):
    USER = 0         # emitted as is
    INVISIBLE = 1    # emitted with ``Column.invisible``
    HIDDEN = 2       # a functional index's generated column: never emitted


@dataclass(frozen=True, slots=True)
class PlanColumn:
    index: int                      # position in the row image (TABLE_MAP order)
    name: str
    type_code: int                  # the binlog column type (TABLE_MAP; ENUM/SET unpacked from STRING)
    meta: int                       # the TABLE_MAP metadata of that type
    kind: PlanKind
    unsigned: bool
    int_bits: int                   # integer width for the unsigned offset: 8/16/24/32/64, 0 for non-integers
    charset: str                    # normalised charset of a text column ("" for other kinds)
    labels: tuple[str, ...]         # ENUM/SET members in definition order
    pad_to: int                     # fixed-length binary: right-pad with 0x00 to this length (0: never)
    mark: ColumnMark
    pk_position: int                # position in the primary key, -1 for other columns
    always: bool                    # in every UPDATE/DELETE before image (always-include; all without PK)
    data_type: str = ""             # the tracked data type as written (``int``, ``varchar``): error messages


@dataclass(frozen=True, slots=True)
class RowPlan:
    db: str
    table: str
    columns: tuple[PlanColumn, ...]
    primary_key: tuple[int, ...]    # image indexes of the key columns, in key order
    always: tuple[int, ...]         # image indexes of the always-included columns, ascending
    has_marks: bool                 # any column INVISIBLE or HIDDEN


# --- building -------------------------------------------------------------------------------------------

_DEFAULT_CHARSET = "utf8mb4"           # a text column whose charset the schema does not know
_FIXED_BINARY_LENGTH = {"uuid": 16, "inet6": 16, "inet4": 4}
_KINDS = {
    ValueKind.INT: PlanKind.INT, ValueKind.LONG: PlanKind.LONG, ValueKind.UINT64: PlanKind.UINT64,
    ValueKind.DECIMAL: PlanKind.DECIMAL, ValueKind.FLOAT: PlanKind.FLOAT, ValueKind.DOUBLE: PlanKind.DOUBLE,
    ValueKind.STRING: PlanKind.TEXT, ValueKind.SET: PlanKind.SET, ValueKind.BYTES: PlanKind.BYTES,
    ValueKind.BIT: PlanKind.BIT, ValueKind.DATE: PlanKind.DATE, ValueKind.DATETIME: PlanKind.DATETIME,
    ValueKind.TIMESTAMP: PlanKind.TIMESTAMP, ValueKind.TIME: PlanKind.TIME, ValueKind.JSON: PlanKind.JSON,
    ValueKind.GEOMETRY: PlanKind.GEOMETRY, ValueKind.VECTOR: PlanKind.VECTOR,
}
_INTEGER_KINDS = (PlanKind.INT, PlanKind.LONG, PlanKind.UINT64)
_BYTE_STRING_TYPES = frozenset({"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})
# The types whose TABLE_MAP signedness bit must equal the tracked UNSIGNED.
_SIGNED_TYPES = frozenset({"tinyint", "smallint", "mediumint", "int", "bigint", "decimal", "float", "double"})


def plan_column(column: ColumnLike, *, index: int = 0, type_code: int = 0, meta: int = 0,
                mark: ColumnMark = ColumnMark.USER, pk_position: int = -1,
                always: bool = False, stated_labels: tuple[str, ...] | None = None) -> PlanColumn:
    """One tracked column as plan data. Raises ``SchemaError`` for a data type the model does not map
    (a HIDDEN column is never mapped: its type is the server's, and it is never emitted)."""
    if mark == ColumnMark.HIDDEN:
        return PlanColumn(index, column.name, type_code, meta, PlanKind.NONE, column.unsigned, 0, "", (), 0,
                          mark, pk_position, always, column.data_type)
    data_type = canonical_data_type(column.data_type)
    kind = _KINDS[map_column(column).value_kind]
    if kind == PlanKind.TEXT and data_type == "enum":
        kind = PlanKind.ENUM
    int_bits = (integer_bits(data_type) or 32) if kind in _INTEGER_KINDS else 0  # YEAR: an INT, 32 bits
    charset = normalize_charset(column.charset or _DEFAULT_CHARSET) if kind == PlanKind.TEXT else ""
    labels = (stated_labels or tuple(column.enum_values)) if kind in (PlanKind.ENUM, PlanKind.SET) else ()
    pad_to = 0
    if kind == PlanKind.BYTES:
        # The binlog drops the trailing 0x00 bytes of fixed-length binary values (BINARY(N), MariaDB's UUID,
        # INET6, INET4); SELECT returns all N bytes, so the builders put them back.
        fixed = data_type == "binary" or (data_type == "char" and is_binary_charset(column.charset))
        pad_to = (column.length or 0) if fixed else _FIXED_BINARY_LENGTH.get(data_type, 0)
    return PlanColumn(index, column.name, type_code, meta, kind, column.unsigned, int_bits, charset, labels,
                      pad_to, mark, pk_position, always, column.data_type)


def build_plan(table_map: TableMapEvent, schema: TableSchema, always_include: Sequence[str],
               position: EventPosition) -> RowPlan:
    """The RowPlan of ``table_map`` under the tracked ``schema`` (the catalog in force at ``position``).

    ``always_include``: the column names always put in UPDATE/DELETE before images (lowercase).
    Raises ``SchemaMismatchError`` (with the table, position and both column lists) when the TABLE_MAP and
    the schema disagree, or a key or always-include column is not in the table; ``SchemaError`` for a data
    type the model does not map.
    """
    columns = logged_columns(table_map, schema)
    check_table_map(table_map, schema, position, columns)
    lowered = [c.name.lower() for c in columns]
    pk = _indexes(schema.primary_key, lowered, "primary key", schema.qualified_name, position)
    # A name the table lacks: SchemaMismatchError with the table, the position and its real columns.
    always = tuple(sorted(_indexes(always_include, lowered, "always-include", schema.qualified_name,
                                   position)))
    marks = [ColumnMark.HIDDEN if getattr(c, "hidden", False) else ColumnMark.INVISIBLE if c.invisible
             else ColumnMark.USER for c in columns]
    if not pk:
        # Without a primary key the before image is the row's only identity: keep all of it.
        always = tuple(i for i, m in enumerate(marks) if m != ColumnMark.HIDDEN)
    key_position = {index: n for n, index in enumerate(pk)}
    kept = set(always)
    plan_columns = tuple(
        plan_column(c, index=i, type_code=real_type(table_map.column_types[i], table_map.column_metas[i]),
                    meta=table_map.column_metas[i], mark=marks[i], pk_position=key_position.get(i, -1),
                    always=i in kept, stated_labels=logged_labels(table_map, i))
        for i, c in enumerate(columns))
    return RowPlan(schema.db, schema.name, plan_columns, pk, always, any(marks))


def logged_columns(table_map: TableMapEvent, schema: TableSchema) -> Sequence[ColumnSchema]:
    """The tracked columns the TABLE_MAP logs. MySQL 8.0.17 logged the hidden generated columns of
    functional indexes; later servers leave them out, so when the counts say so they are dropped here."""
    columns = schema.columns
    if len(columns) != table_map.column_count and any(getattr(c, "hidden", False) for c in columns):
        visible = [c for c in columns if not getattr(c, "hidden", False)]
        if len(visible) == table_map.column_count:
            return visible
    return columns


def check_table_map(table_map: TableMapEvent, schema: TableSchema, position: EventPosition,
                    columns: Sequence[ColumnSchema]) -> None:
    """``SchemaMismatchError`` when the TABLE_MAP's column count, names (FULL metadata) or types disagree
    with the tracked ``columns``."""
    tracked = [f"{c.name} {c.column_type}" for c in columns]
    logged = [f"@{i + 1} {describe_binlog_column(t, m)}"
              for i, (t, m) in enumerate(zip(table_map.column_types, table_map.column_metas, strict=True))]
    if len(columns) != len(table_map.column_types):
        raise SchemaMismatchError(
            f"TABLE_MAP has {len(table_map.column_types)} columns, the tracked schema {len(columns)}",
            table=schema.qualified_name, position=position, tracked=tracked, binlog=logged)
    if table_map.column_names is not None:
        # FULL row metadata names the columns: a tracked schema with other names at this position is wrong
        # even when the types agree (e.g. two same-typed columns swapped).
        logged_names = [n.lower() for n in table_map.column_names]
        if logged_names != [c.name.lower() for c in columns]:
            raise SchemaMismatchError("TABLE_MAP column names differ from the tracked schema",
                                      table=schema.qualified_name, position=position, tracked=tracked,
                                      binlog=list(table_map.column_names))
    for i, column in enumerate(columns):
        if getattr(column, "hidden", False):
            continue   # a functional index's expression column: its type is the server's, never emitted
        problem = binlog_type_mismatch(table_map.column_types[i], table_map.column_metas[i], column) \
            or _metadata_mismatch(table_map, i, column)
        if problem:
            raise SchemaMismatchError(f"column {i + 1} ({column.name}): {problem}",
                                      table=schema.qualified_name, position=position,
                                      tracked=tracked, binlog=logged)


def _metadata_mismatch(table_map: TableMapEvent, i: int, column: ColumnSchema) -> str | None:
    """What the TABLE_MAP's optional metadata states about column ``i`` that the tracked ``column``
    contradicts: its charset (MySQL 8+ logs it even with binlog_row_metadata=MINIMAL, MariaDB with FULL:
    a text value is never decoded in a charset the log contradicts) or its signedness; else None."""
    logged_id = table_map.charsets[i] if table_map.charsets else None
    if logged_id is None and table_map.enum_set_charsets:
        logged_id = table_map.enum_set_charsets[i]
    logged = charset_for_collation_id(logged_id) if logged_id is not None else None
    tracked = tracked_charset(column)
    if logged is not None and tracked is not None and tracked != logged:
        return f"charset is {logged} in the binlog (collation id {logged_id}) but {tracked} in the schema"
    labels = logged_labels(table_map, i)
    if labels is not None and tuple(column.enum_values) != labels and not _lost_in_a_dump(column, labels):
        return (f"ENUM/SET labels are {list(labels)} in the binlog but {list(column.enum_values)} in the "
                "schema")
    unsigned = table_map.signedness[i] if table_map.signedness else None
    if unsigned is not None and bool(column.unsigned) != unsigned \
            and canonical_data_type(column.data_type) in _SIGNED_TYPES:  # MariaDB logs YEAR as unsigned
        return f"{'UNSIGNED' if unsigned else 'signed'} in the binlog but not in the schema"
    return None


def logged_labels(table_map: TableMapEvent, i: int) -> tuple[str, ...] | None:
    """Column ``i``'s ENUM/SET labels as FULL row metadata states them, as text in the column's logged
    charset (bytes the charset cannot read stay visible as escapes); None when not logged."""
    raw_labels = (table_map.enum_values[i] if table_map.enum_values else None) or \
        (table_map.set_values[i] if table_map.set_values else None)
    charset_id = (table_map.charsets[i] if table_map.charsets else None) or \
        (table_map.enum_set_charsets[i] if table_map.enum_set_charsets else None)
    charset = charset_for_collation_id(charset_id) if charset_id is not None else None
    if raw_labels is None or charset is None:
        return None
    decode = make_text_decoder(charset)
    out = []
    for raw in raw_labels:
        try:
            out.append(decode(raw) if decode is not None else raw.decode("utf-8"))
        except (UnicodeError, ValueError):
            out.append(repr(raw))
    return tuple(out)


def _lost_in_a_dump(column: ColumnSchema, logged: tuple[str, ...]) -> bool:
    """Whether the tracked labels differ from the logged ones only where a 4-byte character is ``?``: both
    servers print such a label character as ``?`` in SHOW CREATE TABLE and information_schema, so no dump
    or live snapshot can carry it; the binlog's labels are the stored ones (``build_plan`` takes them)."""
    if len(column.enum_values) != len(logged):
        return False
    return all(mine == theirs or mine == "".join("?" if ord(ch) > 0xFFFF else ch for ch in theirs)
               for mine, theirs in zip(column.enum_values, logged, strict=True))


def tracked_charset(column: ColumnLike) -> str | None:
    """The charset the builders decode a string ``column`` in: its own, the default for a text column the
    schema gave none, ``binary`` for byte strings; None for other types (MariaDB's JSON is a utf8mb4
    LONGTEXT on the wire, its INET6 and UUID binary strings: their values do not decode by charset)."""
    data_type = canonical_data_type(column.data_type)
    if data_type in TEXTUAL_TYPES:
        return normalize_charset(column.charset or _DEFAULT_CHARSET)
    return "binary" if data_type in _BYTE_STRING_TYPES else None


def _indexes(wanted: Sequence[str], lowered: Sequence[str], what: str, table: str,
             position: EventPosition) -> tuple[int, ...]:
    """Column indexes of ``wanted`` names (case-insensitive); a name the table lacks is an error."""
    out = []
    for name in wanted:
        try:
            out.append(lowered.index(name.lower()))
        except ValueError:
            raise SchemaMismatchError(f"{what} column {printable(name)!r} is not a column of the table",
                                      table=table, position=position, tracked=list(lowered)) from None
    return tuple(out)
