"""The immutable schema catalog: databases, tables, ordered columns.

Strategy: plain frozen slotted dataclasses and read-only mappings. A schema transition never mutates; it
builds a new ``Catalog`` that shares every unchanged ``TableSchema`` with the old one, so keeping one
catalog per DDL in a history costs little.

Name rules follow MySQL/MariaDB on Linux with ``lower_case_table_names=0`` (the default there): database
and table names are case-SENSITIVE, column names are case-INSENSITIVE. ``Catalog(lower_case_table_names=1)``
folds database and table names to lower case instead (the Windows/macOS behaviour).

Charsets and collations are resolved when a column is defined (column → table → database → server
default), as the server does: a later change of the table default does not touch existing columns.
``utf8`` is recorded as ``utf8mb3``, as MariaDB 10.6+ and MySQL 8 report it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from binlog_model.charsets import collation_name_for_id, stored_text

__all__ = [
    "Catalog",
    "ColumnSchema",
    "DatabaseSchema",
    "ServerSession",
    "TableSchema",
    "charset_of_collation",
    "default_collation",
    "normalize_charset",
]

# The default collation of each charset (MariaDB 10.11 / MySQL 5.7); charsets not listed use <cs>_general_ci.
_DEFAULT_COLLATION: Mapping[str, str] = MappingProxyType({
    "latin1": "latin1_swedish_ci",
    "binary": "binary",
    "ascii": "ascii_general_ci",
    "utf8mb3": "utf8mb3_general_ci",
    "utf8mb4": "utf8mb4_general_ci",
    "ucs2": "ucs2_general_ci",
    "utf16": "utf16_general_ci",
    "utf32": "utf32_general_ci",
    "big5": "big5_chinese_ci",
    "gbk": "gbk_chinese_ci",
    "gb2312": "gb2312_chinese_ci",
    "sjis": "sjis_japanese_ci",
    "ujis": "ujis_japanese_ci",
    "euckr": "euckr_korean_ci",
    "latin2": "latin2_general_ci",
    "cp1250": "cp1250_general_ci",
    "cp1251": "cp1251_general_ci",
    "koi8r": "koi8r_general_ci",
    "gb18030": "gb18030_chinese_ci",
    "cp932": "cp932_japanese_ci",
    "eucjpms": "eucjpms_japanese_ci",
    "tis620": "tis620_thai_ci",
    "hebrew": "hebrew_general_ci",
    "greek": "greek_general_ci",
    "cp1256": "cp1256_general_ci",
    "cp1257": "cp1257_general_ci",
    "latin5": "latin5_turkish_ci",
    "latin7": "latin7_general_ci",
    "armscii8": "armscii8_general_ci",
    "geostd8": "geostd8_general_ci",
    "keybcs2": "keybcs2_general_ci",
    "macce": "macce_general_ci",
    "macroman": "macroman_general_ci",
    "swe7": "swe7_swedish_ci",
    "utf16le": "utf16le_general_ci",
    "dec8": "dec8_swedish_ci",
    "hp8": "hp8_english_ci",
    "koi8u": "koi8u_general_ci",
    "cp850": "cp850_general_ci",
    "cp852": "cp852_general_ci",
    "cp866": "cp866_general_ci",
})

# Bytes per character, to pick TEXT/BLOB sizes from a length and for CONVERT TO CHARACTER SET.
_MBMAXLEN: Mapping[str, int] = MappingProxyType({
    "utf8mb3": 3, "utf8mb4": 4, "ucs2": 2, "utf16": 4, "utf16le": 4, "utf32": 4,
    "big5": 2, "gbk": 2, "gb2312": 2, "sjis": 2, "cp932": 2, "ujis": 3, "eucjpms": 3, "euckr": 2,
    "gb18030": 4,
})

_INT_WIDTH: Mapping[str, tuple[int, int]] = MappingProxyType({  # (signed, unsigned) display width
    "tinyint": (4, 3), "smallint": (6, 5), "mediumint": (9, 8), "int": (11, 10), "bigint": (20, 20),
})

# Types whose values carry a charset (information_schema shows CHARACTER_SET_NAME for them).
TEXTUAL_TYPES = frozenset({"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set"})


# sql_mode bits that change how DDL text reads (the same bits on MySQL and MariaDB).
SQL_MODE_REAL_AS_FLOAT = 1
SQL_MODE_ANSI_QUOTES = 4
SQL_MODE_INTERPRET_UTF8_AS_UTF8MB4 = 1 << 33  # MySQL 9: ``utf8`` names utf8mb4, not utf8mb3

def collation_name(collation_id: int | None, *, mariadb: bool = False) -> str | None:
    """The name of collation ``collation_id`` on MySQL or MariaDB (``255`` → ``utf8mb4_0900_ai_ci``), else
    None."""
    return None if collation_id is None else collation_name_for_id(collation_id, mariadb=mariadb)


def is_mysql8(server_version: str) -> bool:
    """Whether ``server_version`` (FORMAT_DESCRIPTION's or ``VERSION()``) names MySQL 8.0 or later, whose
    DDL rules differ from MariaDB's and MySQL 5.7's (no integer display widths, ``utf8mb4_0900_ai_ci``)."""
    if not server_version or "mariadb" in server_version.lower():
        return False
    head = server_version.split(".", 1)[0]
    return head.isdigit() and int(head) >= 8


@dataclass(frozen=True, slots=True)
class ServerSession:
    """What the server and the statement's session decide that DDL text leaves open.

    ``server_version`` comes from the binlog's FORMAT_DESCRIPTION event: where MySQL and MariaDB disagree
    (integer display widths, YEAR(4), the utf8mb4 default collation, GEOMCOLLECTION's name), the tracker
    follows the server named there. ``sql_mode`` is the QUERY event's (ANSI_QUOTES makes ``"x"`` a name,
    REAL_AS_FLOAT makes REAL a FLOAT). ``utf8mb4_collation`` is MySQL's ``default_collation_for_utf8mb4``
    of the session (a 5.7 source replicating to 8.0 logs ``utf8mb4_general_ci`` there).
    ``server_defaults`` is the session's (``character_set_server``, ``collation_server``) as its QUERY event
    logged them: a CREATE DATABASE without a charset takes them (None: not logged, the catalog's apply).
    ``charset_collations`` is MariaDB 11's ``character_set_collations``: the collation a charset named
    without one gets (``utf8mb4`` → ``utf8mb4_uca1400_ai_ci``).
    """

    server_version: str = ""
    sql_mode: int = 0
    utf8mb4_collation: str | None = None
    server_defaults: tuple[str, str] | None = None
    charset_collations: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def mysql8(self) -> bool:
        return is_mysql8(self.server_version)

    @property
    def ansi_quotes(self) -> bool:
        return bool(self.sql_mode & SQL_MODE_ANSI_QUOTES)

    @property
    def real_as_float(self) -> bool:
        return bool(self.sql_mode & SQL_MODE_REAL_AS_FLOAT)

    @property
    def utf8_is_utf8mb4(self) -> bool:
        return self.mysql8 and bool(self.sql_mode & SQL_MODE_INTERPRET_UTF8_AS_UTF8MB4)

    def charset(self, name: str) -> str:
        """A charset name as this session reads it (``utf8`` is utf8mb3, or utf8mb4 under MySQL 9's
        INTERPRET_UTF8_AS_UTF8MB4)."""
        if self.utf8_is_utf8mb4 and name.lower() == "utf8":
            return "utf8mb4"
        return normalize_charset(name)

    def collation(self, name: str) -> str:
        """A collation name as this session reads it (``utf8_bin`` is utf8mb3_bin, or utf8mb4_bin)."""
        if self.utf8_is_utf8mb4 and name.lower().startswith("utf8_"):
            return "utf8mb4_" + name[5:].lower()
        return normalize_collation(name)

    def default_collation(self, charset: str) -> str:
        """The collation a column or table of ``charset`` gets when none is named."""
        charset = normalize_charset(charset)
        if charset == "utf8mb4" and self.mysql8:
            return self.utf8mb4_collation or "utf8mb4_0900_ai_ci"
        return self.charset_collations.get(charset) or default_collation(charset)


def normalize_charset(name: str) -> str:
    """Lower-case a charset name and spell the ``utf8`` alias as ``utf8mb3``."""
    name = name.lower()
    return "utf8mb3" if name == "utf8" else name


def default_collation(charset: str) -> str:
    """The default collation of ``charset`` (``utf8mb4`` → ``utf8mb4_general_ci``)."""
    charset = normalize_charset(charset)
    return _DEFAULT_COLLATION.get(charset, f"{charset}_general_ci")


def charset_of_collation(collation: str) -> str:
    """The charset a collation belongs to (``utf8mb4_bin`` → ``utf8mb4``, ``utf8_bin`` → ``utf8mb3``)."""
    collation = collation.lower()
    if collation == "binary":
        return "binary"
    return normalize_charset(collation.split("_", 1)[0])


def normalize_collation(collation: str) -> str:
    """Lower-case a collation name and spell the ``utf8_`` prefix as ``utf8mb3_``."""
    collation = collation.lower()
    return "utf8mb3_" + collation[5:] if collation.startswith("utf8_") else collation


def mbmaxlen(charset: str | None) -> int:
    """Maximum bytes per character of ``charset`` (1 for single-byte and unknown charsets)."""
    return _MBMAXLEN.get(charset or "", 1)


@dataclass(frozen=True, slots=True)
class ColumnSchema:
    """One column, with every attribute information_schema.COLUMNS reports.

    ``data_type`` is the lowercase MySQL type name (``int``, ``varchar``, ``enum``...). ``length`` is the
    display width of integer types, the length of string/BIT types; ``precision``/``scale`` belong to
    DECIMAL/FLOAT/DOUBLE; ``fsp`` to TIME/DATETIME/TIMESTAMP. ``enum_values`` holds ENUM and SET members.
    ``charset``/``collation`` are None for non-textual types. ``default`` is the default's SQL text
    (``has_default`` tells an explicit ``DEFAULT NULL`` from no default). VECTOR(n) keeps its dimension
    count ``n`` in ``length``.

    Columns that are in the row image but not in ``SELECT *``, kept at their binlog position:
    ``invisible`` marks user INVISIBLE columns (MySQL 8.0.23+, MariaDB 10.3+) and the generated invisible
    primary key ``my_row_id`` (GIPK); ``hidden`` marks the hidden generated columns MySQL adds for
    functional index parts (``INDEX ((a+b))``), which no statement can ever select.
    """

    name: str
    data_type: str
    length: int | None = None
    precision: int | None = None
    scale: int | None = None
    fsp: int | None = None
    unsigned: bool = False
    zerofill: bool = False
    enum_values: tuple[str, ...] = ()
    charset: str | None = None
    collation: str | None = None
    nullable: bool = True
    default: str | None = None
    has_default: bool = False
    auto_increment: bool = False
    generated: str | None = None
    generated_stored: bool = False
    invisible: bool = False
    hidden: bool = False

    def __post_init__(self) -> None:
        if self.enum_values and self.charset:
            # the server keeps a label in the column's charset: what it cannot hold becomes '?'
            object.__setattr__(self, "enum_values",
                               tuple(stored_text(v, self.charset) for v in self.enum_values))

    @property
    def column_type(self) -> str:
        """The full type as information_schema.COLUMNS.COLUMN_TYPE shows it on MariaDB 10.11."""
        t = self.data_type
        if t in _INT_WIDTH:
            text = f"{t}({self.length})" if self.length is not None else t
        elif t in ("decimal", "float", "double"):
            if self.precision is not None and self.scale is not None:
                text = f"{t}({self.precision},{self.scale})"
            else:
                text = t
        elif t in ("enum", "set"):
            # the server doubles quotes and escapes backslashes in COLUMN_TYPE
            quoted = ("'" + v.replace("\\", "\\\\").replace("'", "''") + "'" for v in self.enum_values)
            text = t + "(" + ",".join(quoted) + ")"
        elif t in ("time", "datetime", "timestamp"):
            text = f"{t}({self.fsp})" if self.fsp else t
        elif (t in ("char", "varchar", "binary", "varbinary", "bit", "year", "vector")
              and self.length is not None):
            text = f"{t}({self.length})"
        else:
            text = t
        if self.unsigned:
            text += " unsigned"
        if self.zerofill:
            text += " zerofill"
        return text

    def key(self) -> str:
        """The case-insensitive lookup key of this column's name."""
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class TableSchema:
    """One table: ordered columns, ordered primary key, default charset/collation and engine.

    ``uncertain`` is set when a statement touching this table was skipped in lenient mode: its columns
    may be wrong, so the resolver refuses its rows (``UncertainSchemaError``).

    ``unique_keys`` are the table's UNIQUE keys made of whole columns, ``(name, columns)`` in the server's
    order. Without a PRIMARY KEY, MySQL and MariaDB treat the first of them whose columns are all NOT NULL
    as the primary key (information_schema says PRI); it is then the row's identity, so ``primary_key``
    holds it and ``implicit_primary_key`` is set.
    """

    db: str
    name: str
    columns: tuple[ColumnSchema, ...] = ()
    primary_key: tuple[str, ...] = ()
    charset: str | None = None
    collation: str | None = None
    engine: str | None = None
    uncertain: bool = False
    unique_keys: tuple[tuple[str, tuple[str, ...]], ...] = ()
    implicit_primary_key: bool = False

    def implied_primary_key(self) -> tuple[str, ...]:
        """The first UNIQUE key whose columns are all NOT NULL (the key the server treats as primary
        when there is no PRIMARY KEY), or ``()``."""
        for _name, cols in self.unique_keys:
            found = [self.column(c) for c in cols]
            # a VIRTUAL generated column cannot be part of the clustered key
            if found and all(c is not None and not c.nullable
                             and (c.generated is None or c.generated_stored) for c in found):
                return tuple(c.name for c in found if c is not None)
        return ()

    def index_of(self, name: str) -> int:
        """Position of the column called ``name`` (case-insensitive), or -1."""
        key = name.lower()
        for i, col in enumerate(self.columns):
            if col.name.lower() == key:
                return i
        return -1

    def column(self, name: str) -> ColumnSchema | None:
        """The column called ``name`` (case-insensitive), or None."""
        i = self.index_of(name)
        return self.columns[i] if i >= 0 else None

    @property
    def qualified_name(self) -> str:
        return f"{self.db}.{self.name}"

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)


@dataclass(frozen=True, slots=True)
class DatabaseSchema:
    """A database (schema) and its default charset/collation."""

    name: str
    charset: str
    collation: str


def _frozen(d: Mapping[Any, Any] | None) -> MappingProxyType[Any, Any]:
    return MappingProxyType(dict(d or {}))


@dataclass(frozen=True, slots=True)
class Catalog:
    """Every known database and table, immutable.

    ``server_charset``/``server_collation`` are the server defaults that a CREATE DATABASE without a
    charset inherits (MariaDB 10.11 ships latin1/latin1_swedish_ci unless configured). Tables are looked
    up by ``(db, table)``; see the module docstring for case rules.
    """

    databases: Mapping[str, DatabaseSchema] = field(default_factory=lambda: MappingProxyType({}))
    tables: Mapping[tuple[str, str], TableSchema] = field(default_factory=lambda: MappingProxyType({}))
    server_charset: str = "latin1"
    server_collation: str | None = None
    lower_case_table_names: int = 0
    # View names per database: views have no rows, but a name taken by a view is no table's (CREATE TABLE IF
    # NOT EXISTS over a view changes nothing; RENAME TABLE may move a view).
    views: Mapping[str, frozenset[str]] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "databases", _frozen(self.databases))
        object.__setattr__(self, "tables", _frozen(self.tables))
        object.__setattr__(self, "views", _frozen({k: frozenset(v) for k, v in self.views.items() if v}))
        object.__setattr__(self, "server_charset", normalize_charset(self.server_charset))
        collation = self.server_collation or default_collation(self.server_charset)
        object.__setattr__(self, "server_collation", normalize_collation(collation))

    # --- names -----------------------------------------------------------------------------------------

    def fold(self, name: str) -> str:
        """A database or table name as it is compared (lower-cased only when lower_case_table_names)."""
        return name.lower() if self.lower_case_table_names else name

    def table_key(self, db: str, table: str) -> tuple[str, str]:
        return (self.fold(db), self.fold(table))

    # --- lookups ---------------------------------------------------------------------------------------

    def table(self, db: str, table: str) -> TableSchema | None:
        """The table ``db.table``, or None when unknown."""
        return self.tables.get(self.table_key(db, table))

    def database(self, db: str) -> DatabaseSchema | None:
        return self.databases.get(self.fold(db))

    def database_defaults(self, db: str) -> tuple[str, str]:
        """(charset, collation) a new table in ``db`` inherits; the server default for unknown databases."""
        known = self.database(db)
        if known is not None:
            return known.charset, known.collation
        return self.server_charset, self.server_collation or default_collation(self.server_charset)

    def iter_tables(self) -> Iterator[TableSchema]:
        """Every table, sorted by (db, name) for stable output."""
        for key in sorted(self.tables):
            yield self.tables[key]

    # --- copies ----------------------------------------------------------------------------------------

    def with_table(self, table: TableSchema) -> Catalog:
        tables = dict(self.tables)
        tables[self.table_key(table.db, table.name)] = table
        return replace(self, tables=tables)

    def without_table(self, db: str, table: str) -> Catalog:
        tables = dict(self.tables)
        tables.pop(self.table_key(db, table), None)
        return replace(self, tables=tables)

    def with_database(self, database: DatabaseSchema) -> Catalog:
        databases = dict(self.databases)
        databases[self.fold(database.name)] = database
        return replace(self, databases=databases)

    def without_database(self, db: str) -> Catalog:
        databases = dict(self.databases)
        databases.pop(self.fold(db), None)
        key = self.fold(db)
        tables = {k: v for k, v in self.tables.items() if k[0] != key}
        views = {k: v for k, v in self.views.items() if k != key}
        return replace(self, databases=databases, tables=tables, views=views)

    def is_view(self, db: str, name: str) -> bool:
        return self.fold(name) in self.views.get(self.fold(db), frozenset())

    def with_views(self, db: str, names: frozenset[str]) -> Catalog:
        views = dict(self.views)
        views[self.fold(db)] = frozenset(self.fold(n) for n in names)
        return replace(self, views=views)
