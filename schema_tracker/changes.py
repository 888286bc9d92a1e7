"""Typed schema changes, and the pure transition that applies one to a catalog.

Strategy: ``ddl.apply`` turns SQL into a tuple of these changes; ``apply_change`` is the only code that
builds a new ``Catalog`` from them. So a saved history (changes only) replays without sqlglot, and what a
consumer sees in ``BinlogEvent.schemaChanges`` is exactly what moved the catalog.

Emission rules (the spec's vocabulary):
- CREATE TABLE → ``CreateTable`` with every column and the primary key.
- ADD COLUMN and MODIFY → ``CreateOrModifyColumn`` (full new definition, ``first``/``after``).
- CHANGE old new … → ``RenameColumn`` when the name differs (case-insensitively), plus
  ``CreateOrModifyColumn`` only when the definition (type, nullability, default, charset, flags, position)
  differs from the old column. CHANGE to the same name therefore behaves like MODIFY, and
  ``CHANGE baz hurrdurr text not null`` on an identical ``baz`` yields only ``RenameColumn``.
- ALTER COLUMN SET/DROP DEFAULT → ``CreateOrModifyColumn`` keeping the position.
- ``CreateOrModifyColumn`` with ``first=False, after=None`` keeps an existing column where it is and
  appends a new one.

Implicit effects applied here, not emitted separately: a dropped column leaves the primary key (the PK
disappears with its last column), a renamed column is renamed in the PK, and PK columns become NOT NULL.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from binlog_model.charsets import normalize_charset, reread_text
from binlog_model.errors import SchemaError, UnsupportedDDLError
from schema_tracker.model import (
    TEXTUAL_TYPES,
    Catalog,
    ColumnSchema,
    DatabaseSchema,
    TableSchema,
    mbmaxlen,
)

__all__ = [
    "AlterDatabase",
    "CreateDatabase",
    "CreateOrModifyColumn",
    "CreateTable",
    "DropColumn",
    "DropDatabase",
    "DropTable",
    "PrimaryKeyChanged",
    "RenameColumn",
    "RenameTable",
    "SchemaChange",
    "SkippedStatement",
    "TableCharsetChanged",
    "TruncateTable",
    "UniqueKeysChanged",
    "ViewsChanged",
    "apply_change",
    "visible_changes",
]


@dataclass(frozen=True, slots=True)
class CreateTable:
    db: str
    table: str
    columns: tuple[ColumnSchema, ...]
    primary_key: tuple[str, ...]
    charset: str | None = None
    collation: str | None = None
    engine: str | None = None
    unique_keys: tuple[tuple[str, tuple[str, ...]], ...] = ()
    implicit_primary_key: bool = False  # primary_key is the first UNIQUE NOT NULL key (no PRIMARY KEY)


@dataclass(frozen=True, slots=True)
class CreateOrModifyColumn:
    db: str
    table: str
    column: ColumnSchema
    first: bool = False
    after: str | None = None

    @property
    def column_name(self) -> str:
        return self.column.name

    @property
    def nullable(self) -> bool:
        return self.column.nullable


@dataclass(frozen=True, slots=True)
class RenameColumn:
    db: str
    table: str
    old_name: str
    new_name: str


@dataclass(frozen=True, slots=True)
class DropColumn:
    db: str
    table: str
    column_name: str


@dataclass(frozen=True, slots=True)
class DropTable:
    db: str
    table: str


@dataclass(frozen=True, slots=True)
class RenameTable:
    db: str
    table: str
    new_db: str
    new_table: str


@dataclass(frozen=True, slots=True)
class TruncateTable:
    db: str
    table: str


@dataclass(frozen=True, slots=True)
class PrimaryKeyChanged:
    """The row identity changed. ``implicit``: no PRIMARY KEY, the key is the first UNIQUE NOT NULL one."""

    db: str
    table: str
    primary_key: tuple[str, ...]
    implicit: bool = False


@dataclass(frozen=True, slots=True)
class UniqueKeysChanged:
    """The table's UNIQUE keys (``TableSchema.unique_keys``) changed. Internal bookkeeping for the implicit
    primary key: consumers see its effect as ``PrimaryKeyChanged`` (``visible_changes`` leaves it out)."""

    db: str
    table: str
    unique_keys: tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True, slots=True)
class ViewsChanged:
    """The views of database ``db`` (internal bookkeeping, like ``UniqueKeysChanged``: never shown)."""

    db: str
    views: tuple[str, ...]
    table: str = ""


@dataclass(frozen=True, slots=True)
class TableCharsetChanged:
    """The table's default charset changed (existing columns keep theirs; CONVERT TO also emits
    ``CreateOrModifyColumn`` for every converted column)."""

    db: str
    table: str
    charset: str
    collation: str


@dataclass(frozen=True, slots=True)
class CreateDatabase:
    db: str
    charset: str
    collation: str
    table: str = ""


@dataclass(frozen=True, slots=True)
class AlterDatabase:
    db: str
    charset: str
    collation: str
    table: str = ""


@dataclass(frozen=True, slots=True)
class DropDatabase:
    db: str
    table: str = ""


@dataclass(frozen=True, slots=True)
class SkippedStatement:
    """Lenient mode: a schema-changing statement was not understood; ``table`` (if known) is uncertain.
    With no ``table``, a record only: a statement the schema was already past (``reason`` names
    ``SchemaNewerThanBinlogError``), which the replay followed as the server ran it."""

    db: str
    table: str
    reason: str


SchemaChange = (
    CreateTable | CreateOrModifyColumn | RenameColumn | DropColumn | DropTable | RenameTable
    | TruncateTable | PrimaryKeyChanged | TableCharsetChanged | CreateDatabase | AlterDatabase
    | DropDatabase | SkippedStatement | UniqueKeysChanged | ViewsChanged
)


HIDDEN_PREFIX = "!hidden!"


def visible_changes(changes: tuple[SchemaChange, ...]) -> tuple[SchemaChange, ...]:
    """The changes a consumer sees (``BinlogEvent.schema_changes``): all but internal bookkeeping (unique
    keys) and the hidden columns of functional indexes, which are never part of a table's visible schema
    (``CreateTable`` still lists them, flagged ``hidden``)."""
    def visible(c: SchemaChange) -> bool:
        if isinstance(c, UniqueKeysChanged | ViewsChanged):
            return False
        if isinstance(c, CreateOrModifyColumn):
            return not c.column.hidden
        if isinstance(c, DropColumn):
            return not c.column_name.startswith(HIDDEN_PREFIX)
        return True
    return tuple(c for c in changes if visible(c))


def _rename_in_keys(keys: tuple[tuple[str, tuple[str, ...]], ...], old: str, new: str
                    ) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple((n, tuple(new if c.lower() == old.lower() else c for c in cols)) for n, cols in keys)


def _drop_from_keys(keys: tuple[tuple[str, tuple[str, ...]], ...], gone: str
                    ) -> tuple[tuple[str, tuple[str, ...]], ...]:
    # The server removes a dropped column from its keys, and a key left with no column disappears.
    out = ((n, tuple(c for c in cols if c.lower() != gone.lower())) for n, cols in keys)
    return tuple((n, cols) for n, cols in out if cols)


def _need(catalog: Catalog, db: str, table: str) -> TableSchema:
    found = catalog.table(db, table)
    if found is None:
        raise SchemaError("table is not known to the schema tracker", table=f"{db}.{table}")
    return found


def _force_pk_not_null(t: TableSchema) -> TableSchema:
    keys = {k.lower() for k in t.primary_key}
    if not keys or t.implicit_primary_key:  # an implicit key is NOT NULL by choice, never by force
        return t
    cols = tuple(replace(c, nullable=False) if c.key() in keys and c.nullable else c for c in t.columns)
    return replace(t, columns=cols)


def apply_change(catalog: Catalog, change: SchemaChange) -> Catalog:
    """Return the catalog after ``change``. Raises ``SchemaError`` when it names an unknown table/column."""
    if isinstance(change, CreateTable):
        t = TableSchema(change.db, change.table, change.columns, change.primary_key, change.charset,
                        change.collation, change.engine, unique_keys=change.unique_keys,
                        implicit_primary_key=change.implicit_primary_key)
        return catalog.with_table(_force_pk_not_null(t))
    if isinstance(change, CreateOrModifyColumn):
        return catalog.with_table(_put_column(_need(catalog, change.db, change.table), change))
    if isinstance(change, RenameColumn):
        t = _need(catalog, change.db, change.table)
        i = t.index_of(change.old_name)
        if i < 0:
            raise SchemaError(f"unknown column {change.old_name!r}", table=t.qualified_name)
        j = t.index_of(change.new_name)
        if j >= 0 and j != i:
            # Only a swap inside one ALTER (a TO b, b TO a) gets here; renamed one after the other, the
            # columns would come out in the wrong places, so fail loudly instead (lenient: uncertain).
            raise UnsupportedDDLError(f"RENAME COLUMN {change.old_name!r} TO {change.new_name!r}: a column "
                                      f"{change.new_name!r} still exists (column swaps within one ALTER "
                                      "are not followed)", table=t.qualified_name)
        cols = list(t.columns)
        cols[i] = replace(cols[i], name=change.new_name)
        old = change.old_name.lower()
        pk = tuple(change.new_name if k.lower() == old else k for k in t.primary_key)
        keys = _rename_in_keys(t.unique_keys, change.old_name, change.new_name)
        return catalog.with_table(replace(t, columns=tuple(cols), primary_key=pk, unique_keys=keys))
    if isinstance(change, DropColumn):
        t = _need(catalog, change.db, change.table)
        i = t.index_of(change.column_name)
        if i < 0:
            raise SchemaError(f"unknown column {change.column_name!r}", table=t.qualified_name)
        gone = change.column_name.lower()
        pk = tuple(k for k in t.primary_key if k.lower() != gone)
        return catalog.with_table(replace(t, columns=t.columns[:i] + t.columns[i + 1:], primary_key=pk,
                                          unique_keys=_drop_from_keys(t.unique_keys, gone)))
    if isinstance(change, DropTable):
        return catalog.without_table(change.db, change.table)
    if isinstance(change, RenameTable):
        t = _need(catalog, change.db, change.table)
        moved = replace(t, db=change.new_db, name=change.new_table)
        return catalog.without_table(change.db, change.table).with_table(moved)
    if isinstance(change, TruncateTable):
        return catalog
    if isinstance(change, PrimaryKeyChanged):
        t = _need(catalog, change.db, change.table)
        for k in change.primary_key:
            if t.index_of(k) < 0:
                raise SchemaError(f"primary key names unknown column {k!r}", table=t.qualified_name)
        return catalog.with_table(_force_pk_not_null(replace(t, primary_key=change.primary_key,
                                                             implicit_primary_key=change.implicit)))
    if isinstance(change, ViewsChanged):
        return catalog.with_views(change.db, frozenset(change.views))
    if isinstance(change, UniqueKeysChanged):
        t = _need(catalog, change.db, change.table)
        return catalog.with_table(replace(t, unique_keys=change.unique_keys))
    if isinstance(change, TableCharsetChanged):
        t = _need(catalog, change.db, change.table)
        return catalog.with_table(replace(t, charset=change.charset, collation=change.collation))
    if isinstance(change, CreateDatabase | AlterDatabase):
        return catalog.with_database(DatabaseSchema(change.db, change.charset, change.collation))
    if isinstance(change, DropDatabase):
        return catalog.without_database(change.db)
    if isinstance(change, SkippedStatement):
        skipped = catalog.table(change.db, change.table) if change.table else None
        if skipped is None:
            return catalog
        return catalog.with_table(replace(skipped, uncertain=True))
    raise TypeError(f"not a schema change: {change!r}")  # pragma: no cover - closed union


def is_gipk(col: ColumnSchema) -> bool:
    """MySQL's generated invisible primary key column (``sql_generate_invisible_primary_key``)."""
    return col.name.lower() == "my_row_id" and col.invisible and col.auto_increment \
        and col.data_type == "bigint" and col.unsigned


def _put_column(t: TableSchema, change: CreateOrModifyColumn) -> TableSchema:
    cols = list(t.columns)
    i = t.index_of(change.column.name)
    if i >= 0:
        del cols[i]
    if change.first:
        # MySQL keeps a generated invisible primary key first: FIRST places a column after it
        at = 1 if cols and is_gipk(cols[0]) and not is_gipk(change.column) else 0
    elif change.after is not None:
        j = next((n for n, c in enumerate(cols) if c.key() == change.after.lower()), -1)
        if j < 0:
            raise SchemaError(f"AFTER names unknown column {change.after!r}", table=t.qualified_name)
        at = j + 1
    else:
        at = i if i >= 0 else len(cols)
    cols.insert(at, change.column)
    # MODIFY C spelled differently (c → C) renames the column, in the primary key too
    key = change.column.key()
    pk = tuple(change.column.name if k.lower() == key else k for k in t.primary_key)
    keys = _rename_in_keys(t.unique_keys, change.column.name, change.column.name)
    return _force_pk_not_null(replace(t, columns=tuple(cols), primary_key=pk, unique_keys=keys))


def converted_column(col: ColumnSchema, charset: str, collation: str) -> ColumnSchema:
    """``col`` after ALTER TABLE … CONVERT TO CHARACTER SET: textual columns take the new charset, and a
    TEXT type grows (TEXT → MEDIUMTEXT) when its character capacity no longer fits, as the server does."""
    if col.data_type not in TEXTUAL_TYPES:
        return col
    data_type = col.data_type
    sizes = ("tinytext", "text", "mediumtext", "longtext")
    if data_type in sizes:
        limits = (255, 65535, 16777215, 4294967295)
        chars = limits[sizes.index(data_type)] // mbmaxlen(col.charset)
        need = chars * mbmaxlen(charset)
        data_type = next((s for s, lim in zip(sizes, limits, strict=True) if need <= lim), "longtext")
    labels = col.enum_values
    if labels and col.charset and normalize_charset(col.charset) != normalize_charset(charset):
        # the servers keep an ENUM/SET label's bytes and read them in the new charset
        reread = [reread_text(label, col.charset, charset) for label in labels]
        if any(r is None for r in reread):
            raise UnsupportedDDLError(f"CONVERT TO CHARACTER SET {charset} re-reads the bytes of column "
                                      f"{col.name!r}'s labels in {charset}, where they are not valid text")
        labels = tuple(r for r in reread if r is not None)
    return replace(col, data_type=data_type, charset=charset, collation=collation, enum_values=labels)
