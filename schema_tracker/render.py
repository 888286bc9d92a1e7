"""A catalog as the CREATE DATABASE / CREATE TABLE statements that make it again on MySQL or MariaDB.

Strategy: one pure function per object over the immutable ``Catalog``. The text holds exactly what the
catalog tracks (columns with every attribute, the primary key, UNIQUE keys, engine, charsets); what it does
not track (secondary non-unique indexes, CHECK and FOREIGN KEY constraints, comments, ``ON UPDATE``,
partitioning, the engine, table options such as ROW_FORMAT) is not invented. Every charset and collation is
written out at the table, and at a column whose differ from its table's, so the statements do not depend
on the target server's defaults.

Integer display widths follow the target: MySQL 8.0.19+ stopped writing them (``bigint``), except for
ZEROFILL columns and the boolean ``tinyint(1)``; MariaDB and MySQL 5.7 write them (``bigint(20)``). The
catalog stores widths as its source server stores them, so a column is re-spelt when the target differs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from schema_tracker.model import _INT_WIDTH, Catalog, ColumnSchema, DatabaseSchema, TableSchema, is_mysql8

__all__ = ["column_type_for", "iter_create_statements", "render_column", "render_create_database",
           "render_create_table"]


def quote_name(name: str) -> str:
    """A MySQL identifier in backquotes (a backquote in the name is doubled)."""
    return "`" + name.replace("`", "``") + "`"


def column_type_for(col: ColumnSchema, *, mysql8: bool) -> str:
    """``col``'s COLUMN_TYPE as a MySQL 8.0.19+ server (``mysql8``) or a MariaDB / MySQL 5.7 server
    writes it: ``bigint`` there, ``bigint(20)`` here; YEAR and GEOMETRYCOLLECTION likewise."""
    t = col.data_type
    if mysql8:
        boolean = t == "tinyint" and col.length == 1 and not col.unsigned
        if (t in _INT_WIDTH and not col.zerofill and not boolean) or t == "year":
            col = replace(col, length=None)
        elif t == "geometrycollection":
            col = replace(col, data_type="geomcollection")
    else:
        if t in _INT_WIDTH and col.length is None:
            col = replace(col, length=_INT_WIDTH[t][1 if col.unsigned else 0])
        elif t == "year" and col.length is None:
            col = replace(col, length=4)
        elif t == "geomcollection":
            col = replace(col, data_type="geometrycollection")
    return col.column_type


def render_column(col: ColumnSchema, *, mysql8: bool, table: TableSchema | None = None) -> str:
    """One column definition, in the order both servers' grammars accept. A charset or collation equal to
    ``table``'s default is left to it: MySQL remembers a column's explicit charset and shows it again."""
    parts = [quote_name(col.name), column_type_for(col, mysql8=mysql8)]
    if col.charset and col.data_type != "json":
        if table is None or col.charset != table.charset:
            parts.append(f"CHARACTER SET {col.charset} COLLATE {col.collation}")
        elif col.collation != table.collation:
            parts.append(f"COLLATE {col.collation}")
    if col.generated is not None:
        kind = "STORED" if col.generated_stored else "VIRTUAL"
        parts.append(f"GENERATED ALWAYS AS ({col.generated}) {kind}")
    if not col.nullable:
        parts.append("NOT NULL")
    elif col.data_type == "timestamp" and col.generated is None:
        # without NULL, a TIMESTAMP column is NOT NULL where explicit_defaults_for_timestamp is off
        parts.append("NULL")
    if col.has_default and col.generated is None:
        parts.append(f"DEFAULT {col.default if col.default is not None else 'NULL'}")
    if col.auto_increment:
        parts.append("AUTO_INCREMENT")
    if col.invisible:
        parts.append("INVISIBLE")
    return " ".join(parts)


def render_create_database(database: DatabaseSchema) -> str:
    """``CREATE DATABASE `db` CHARACTER SET cs COLLATE coll``."""
    return (f"CREATE DATABASE {quote_name(database.name)} CHARACTER SET {database.charset} "
            f"COLLATE {database.collation}")


def render_create_table(table: TableSchema, *, mysql8: bool) -> str:
    """``CREATE TABLE `db`.`t` (...)`` with the columns in order, the primary key (unless the server only
    implies it from a UNIQUE key), the UNIQUE keys and the table's charset and collation.

    The hidden columns of MySQL's functional indexes are left out: no statement can create them but the
    index, which the catalog does not track."""
    lines = [render_column(c, mysql8=mysql8, table=table) for c in table.columns if not c.hidden]
    if table.primary_key and not table.implicit_primary_key:
        lines.append(f"PRIMARY KEY ({', '.join(quote_name(c) for c in table.primary_key)})")
    for name, cols in table.unique_keys:
        lines.append(f"UNIQUE KEY {quote_name(name)} ({', '.join(quote_name(c) for c in cols)})")
    body = ",\n  ".join(lines)
    # No ENGINE: the tracker reads it at CREATE but does not follow ALTER TABLE ... ENGINE=, so the target's
    # default engine is a truer answer than a possibly stale one.
    options = []
    if table.charset:
        options.append(f"DEFAULT CHARSET={table.charset}")
    if table.collation:
        options.append(f"COLLATE={table.collation}")
    name = f"{quote_name(table.db)}.{quote_name(table.name)}"
    return f"CREATE TABLE {name} (\n  {body}\n)" + (" " + " ".join(options) if options else "")


def iter_create_statements(catalog: Catalog, *, server_version: str) -> Iterator[str]:
    """Every database, then each of its tables (sorted by name), as statements (without ``;``) that make
    ``catalog`` again on the server ``server_version`` names (a MySQL 8+ version drops integer widths).

    A table whose database the catalog does not know (the snapshot held the table only) gets a
    ``CREATE DATABASE IF NOT EXISTS`` with the server defaults."""
    mysql8 = is_mysql8(server_version)
    known = {catalog.fold(d.name) for d in catalog.databases.values()}
    for key in sorted(catalog.databases):
        yield render_create_database(catalog.databases[key])
    for db in sorted({t.db for t in catalog.iter_tables() if catalog.fold(t.db) not in known}):
        yield f"CREATE DATABASE IF NOT EXISTS {quote_name(db)}"
    for table in catalog.iter_tables():
        yield render_create_table(table, mysql8=mysql8)
