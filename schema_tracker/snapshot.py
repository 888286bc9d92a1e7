"""Starting catalogs: from a live server's information_schema, or from a ``mysqldump --no-data`` file.

Strategy: the dump path reuses ``ddl.apply`` statement by statement (following ``USE``), so a dump and a
binlog go through the same code. The live path reads information_schema with plain queries through a
DB-API connection the caller owns (pymysql), and builds the same model objects; COLUMN_TYPE is parsed back
with ``ddl`` so both paths agree on every attribute.
"""

from __future__ import annotations

import re
from typing import Any

from binlog_model.errors import SchemaError
from schema_tracker.changes import CreateTable, apply_change
from schema_tracker.model import Catalog, DatabaseSchema, ServerSession, TableSchema, charset_of_collation

__all__ = ["catalog_from_dump", "catalog_from_server", "dump_header_database", "dump_server_version"]

_SYSTEM_DBS = ("information_schema", "performance_schema", "mysql", "sys")


# mysqldump / mariadb-dump of one database write no USE line, only this header comment.
_DUMP_HEADER_DB = re.compile(r"^-- Host: .*?\bDatabase: (\S+)\s*$", re.M)


def dump_header_database(text: str) -> str | None:
    """The database a ``mysqldump``/``mariadb-dump`` header names (``-- Host: h    Database: ppc``), which
    is the only trace of it in a dump of a single database (no ``USE`` line)."""
    m = _DUMP_HEADER_DB.search(text[:4096])
    return m.group(1) if m else None


def catalog_from_dump(text: str, catalog: Catalog | None = None, *, default_db: str | None = None,
                      lenient: bool = False, server_version: str = "") -> Catalog:
    """The catalog a ``mysqldump --no-data`` script (or any DDL script) leaves behind.

    Statements before any ``USE`` belong to ``default_db``, else to the database the dump's header
    comment names (a single-database dump has no ``USE``). ``server_version`` names the server that wrote
    the dump (its ``-- Server version`` header line is read when not given), so MySQL 8's rules apply to a
    MySQL 8 dump. Raises ``UnsupportedDDLError``/``SchemaError`` (with the statement) on DDL the tracker
    cannot follow, unless ``lenient``; a table with no database to belong to is a ``SchemaError`` saying to
    pass the database.
    """
    from schema_tracker import ddl  # sqlglot, only once a snapshot is read

    session = ServerSession(server_version or dump_server_version(text))
    cat = catalog if catalog is not None else Catalog()
    db = default_db or dump_header_database(text)
    for sql in ddl.split_statements(text):
        used = ddl.parse_use(sql)
        if used is not None:
            db = used
            continue
        try:
            cat, _ = ddl.apply(cat, sql, db, lenient=lenient, session=session)
        except SchemaError as err:
            if db is None and "no database selected" in str(err):
                raise SchemaError(
                    f"{err.reason}: the snapshot has no USE statement and its header names no database "
                    "(a dump of one database, e.g. mysqldump --no-data DB); give the database with "
                    "--database DB (database= in the library)", statement=sql) from err
            raise
    return cat


def dump_server_version(text: str) -> str:
    """The version in a dump's ``-- Server version\t9.7.4`` header line ('' when there is none)."""
    for line in text[:4000].splitlines():
        if line.startswith("-- Server version"):
            return line.split(None, 3)[-1].strip() if len(line.split()) > 3 else ""
    return ""


def catalog_from_server(connection: Any, *, databases: list[str] | None = None,
                        catalog: Catalog | None = None) -> Catalog:
    """The catalog of a live server, read from information_schema through a DB-API ``connection``.

    ``databases`` limits the snapshot (default: every non-system database). The server default charset
    comes from ``@@character_set_server``/``@@collation_server`` unless ``catalog`` is given.
    """
    cur = connection.cursor()
    try:
        cur.execute("SELECT VERSION()")
        session = ServerSession(str(cur.fetchone()[0]))
        if catalog is None:
            cur.execute("SELECT @@character_set_server, @@collation_server, @@lower_case_table_names")
            cs, coll, lctn = cur.fetchone()
            catalog = Catalog(server_charset=cs, server_collation=coll, lower_case_table_names=int(lctn))
        cur.execute("SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME "
                    "FROM information_schema.SCHEMATA")
        wanted = set(databases) if databases is not None else None
        dbs = [r for r in cur.fetchall()
               if (r[0] in wanted if wanted is not None else r[0] not in _SYSTEM_DBS)]
        for name, cs, coll in dbs:
            catalog = catalog.with_database(DatabaseSchema(name, cs, coll))
        for (db, *_rest) in dbs:
            cur.execute("SELECT TABLE_NAME, ENGINE, TABLE_COLLATION FROM information_schema.TABLES "
                        "WHERE TABLE_SCHEMA=%s AND TABLE_TYPE='BASE TABLE'", (db,))
            for table, engine, coll in cur.fetchall():
                catalog = _read_table(cur, catalog, db, table, engine, coll, session)
    finally:
        cur.close()
    return catalog


def _read_table(cur: Any, catalog: Catalog, db: str, table: str, engine: str | None,
                collation: str | None, session: ServerSession) -> Catalog:
    cur.execute("SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, CHARACTER_SET_NAME, COLLATION_NAME, EXTRA, "
                "COLUMN_DEFAULT, GENERATION_EXPRESSION, COLUMN_KEY FROM information_schema.COLUMNS "
                "WHERE TABLE_SCHEMA=%s AND TABLE_NAME=%s ORDER BY ORDINAL_POSITION", (db, table))
    rows = cur.fetchall()
    cur.execute("SELECT INDEX_NAME, COLUMN_NAME, SUB_PART FROM information_schema.STATISTICS "
                "WHERE TABLE_SCHEMA=%s AND TABLE_NAME=%s AND NON_UNIQUE=0 ORDER BY INDEX_NAME, SEQ_IN_INDEX",
                (db, table))
    indexes: dict[str, list[str | None]] = {}
    for index, column, sub_part in cur.fetchall():
        indexes.setdefault(index, []).append(column if sub_part is None else None)
    pk = tuple(c for c in indexes.pop("PRIMARY", []) if c is not None)
    # Whole-column UNIQUE keys; the one information_schema marks PRI (no PRIMARY KEY) goes first.
    pri = {r[0].lower() for r in rows if r[8] == "PRI"}
    unique = sorted(((name, tuple(c for c in cols if c is not None)) for name, cols in indexes.items()
                     if cols and None not in cols),
                    key=lambda k: {c.lower() for c in k[1]} != pri)
    # Rebuild each column by parsing its COLUMN_TYPE with the same DDL code the binlog path uses.
    parts = []
    for name, ctype, nullable, cs, coll, extra, _default, gen, _key in rows:
        part = f"`{name.replace('`', '``')}` {ctype}"
        if cs and coll:
            part += f" CHARACTER SET {cs} COLLATE {coll}"
        if gen and session.mysql8:
            gen = gen.replace("\\'", "'")  # MySQL 8 escapes the quotes of GENERATION_EXPRESSION
        if gen:
            part += f" AS ({gen})" + (" STORED" if "STORED" in (extra or "").upper() else "")
        elif nullable == "NO":
            part += " NOT NULL"
        if "auto_increment" in (extra or "").lower():
            part += " AUTO_INCREMENT"
        if "INVISIBLE" in (extra or "").upper():
            part += " INVISIBLE"
        parts.append(part)
    shell = Catalog(server_charset=catalog.server_charset, server_collation=catalog.server_collation)
    sql = f"CREATE TABLE `_db`.`_t` ({', '.join(parts)})"
    from schema_tracker import ddl

    _, changes = ddl.apply(shell, sql, None, session=session)
    created = next(c for c in changes if isinstance(c, CreateTable))
    charset = charset_of_collation(collation) if collation else None
    t = TableSchema(db, table, created.columns, pk, charset, collation, engine, unique_keys=tuple(unique))
    implicit = not pk and bool(t.implied_primary_key())
    return apply_change(catalog, CreateTable(t.db, t.name, t.columns, pk or t.implied_primary_key(),
                                             t.charset, t.collation, t.engine, unique_keys=t.unique_keys,
                                             implicit_primary_key=implicit))
