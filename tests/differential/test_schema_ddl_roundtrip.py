"""``schema --ddl`` round trip: the tracked schema, written as DDL and run on a fresh server, is the schema.

The DDL differential's corpus (tests/ddl_corpus/differential.sql, in each server's dialect) runs on a real
server and through the tracker. The source server's ``SHOW CREATE TABLE`` of every table is kept, both
databases are dropped, ``iter_create_statements`` of the tracker's final catalog runs on that server, and
``SHOW CREATE TABLE`` there must be the source's, text for text, once the parts the catalog does not track
by design are taken out of both sides (``_UNTRACKED``: secondary indexes, CHECK/FOREIGN KEY constraints,
comments, ``ON UPDATE``, partitioning, the engine, the AUTO_INCREMENT/ROW_FORMAT table options, key prefix
lengths, and whether a column named its table's own charset).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import replace
from typing import Any

import pytest

from schema_tracker.ddl import ServerSession, apply, split_statements
from schema_tracker.model import Catalog, ColumnSchema
from schema_tracker.render import column_type_for, iter_create_statements
from tests.differential.test_schema_differential import CORPUS, _dialect

pytestmark = pytest.mark.server

# Lines and clauses of SHOW CREATE TABLE that hold what the catalog does not track.
_UNTRACKED_LINES = re.compile(r"^\s*(KEY|FULLTEXT KEY|SPATIAL KEY|VECTOR KEY|INDEX|CONSTRAINT|FOREIGN KEY)\b")
_UNTRACKED = [
    re.compile(r" COMMENT[= ]'(?:[^'\\]|''|\\.)*'"),
    re.compile(r" ON UPDATE current_timestamp(?:\(\d?\))?", re.IGNORECASE),
    re.compile(r" (ENGINE|AUTO_INCREMENT|ROW_FORMAT|PAGE_CHECKSUM|STATS_\w+)=\w+"),
    re.compile(r"\s*/\*!50100 PARTITION BY.*?\*/", re.DOTALL),
    re.compile(r"\s*PARTITION BY .*", re.DOTALL),
]


_KEY_PREFIX = re.compile(r"(`(?:[^`]|``)*`)\(\d+\)")
_COLUMN_CHARSET = re.compile(r" (CHARACTER SET|COLLATE) \w+")


def _normalized(create: str) -> str:
    lines = [ln for ln in create.splitlines() if not _UNTRACKED_LINES.match(ln)]
    # key prefix lengths (``v(10)``): the catalog keeps a key's columns, not their prefixes
    lines = [_KEY_PREFIX.sub(r"\1", ln) if ln.lstrip().startswith(("PRIMARY KEY", "UNIQUE KEY")) else ln
             for ln in lines]
    # A column's charset and collation are compared as information_schema has them (``_show_create``):
    # MySQL shows them again where a statement named them, even as the table's own, which the catalog
    # does not record.
    lines = [_COLUMN_CHARSET.sub("", ln) if ln.startswith("  `") else ln for ln in lines]
    text = "\n".join(lines)
    for pattern in _UNTRACKED:
        text = pattern.sub("", text)
    return re.sub(r",\n\)", "\n)", text)   # the line before a dropped last one lost its successor


def _show_create(cur: Any, databases: list[str]) -> dict[tuple[str, str], str]:
    """``SHOW CREATE TABLE`` of every table, normalized, with each column's charset and collation."""
    out = {}
    for db in databases:
        cur.execute("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA=%s "
                    "AND TABLE_TYPE='BASE TABLE'", (db,))
        for (name,) in cur.fetchall():
            cur.execute(f"SHOW CREATE TABLE `{db}`.`{name}`")
            text = _normalized(cur.fetchone()[1])
            cur.execute("SELECT COLUMN_NAME, CHARACTER_SET_NAME, COLLATION_NAME "
                        "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA=%s AND TABLE_NAME=%s "
                        "ORDER BY ORDINAL_POSITION", (db, name))
            charsets = [f"-- {col}: {cs} {coll}" for col, cs, coll in cur.fetchall()
                        if cs is not None]
            out[(db, name)] = "\n".join([text, *charsets])
    return out


def _renamed(catalog: Catalog, names: dict[str, str]) -> Catalog:
    """``catalog`` with its databases ``names`` renamed (the targets live next to the sources)."""
    out = Catalog(server_charset=catalog.server_charset, server_collation=catalog.server_collation)
    for database in catalog.databases.values():
        if database.name in names:
            out = out.with_database(replace(database, name=names[database.name]))
    for table in catalog.iter_tables():
        if table.db in names:
            out = out.with_table(replace(table, db=names[table.db]))
    return out


def _round_trip(cur: Any, catalog: Catalog, version: str, names: dict[str, str]) -> set[tuple[str, str]]:
    """Run our DDL of the tables of ``names`` into the target databases and compare; the tables compared."""
    source = _show_create(cur, [n for n in names if catalog.database(n) is not None])
    try:
        for sql in iter_create_statements(_renamed(catalog, names), server_version=version):
            try:
                cur.execute(sql)
            except Exception as err:
                raise AssertionError(f"the server refused our DDL: {sql}: {err}") from err
        made = _show_create(cur, list(names.values()))
    finally:
        for target in names.values():
            cur.execute(f"DROP DATABASE IF EXISTS `{target}`")
    back = {v: k for k, v in names.items()}
    made = {(back[db], table): text for (db, table), text in made.items()}
    assert sorted(made) == sorted(source)
    problems = [f"{key}:\n--- source\n{source[key]}\n--- from our DDL\n{made[key]}"
                for key in sorted(source) if made[key] != source[key]]
    assert not problems, "\n".join(problems)
    return set(source)


def test_ddl_of_the_tracked_schema_recreates_the_servers_tables(server: Any) -> None:
    db, db2 = f"rt_{secrets.token_hex(3)}", f"rt2_{secrets.token_hex(3)}"
    names = {db: f"{db}_copy", db2: f"{db2}_copy"}
    text = CORPUS.read_text(encoding="utf-8").replace("{db2}", db2).replace("{db}", db)
    statements = _dialect(server, split_statements(text))
    conn = server.connect()
    cur = conn.cursor()
    cur.execute("SELECT VERSION(), @@character_set_server, @@collation_server")
    version, cs, coll = cur.fetchone()
    pairs: dict[str, str] = {}
    cur.execute("SHOW VARIABLES LIKE 'character_set_collations'")
    for _, value in cur.fetchall():
        pairs = dict(item.split("=", 1) for item in value.split(",") if "=" in item)
    session = ServerSession(version, server_defaults=(cs, coll), charset_collations=pairs)
    catalog = Catalog(server_charset=cs, server_collation=coll)
    current = None
    compared: set[tuple[str, str]] = set()
    try:
        for sql in statements:
            # every table is compared before a statement drops it, and what is left at the end
            if re.match(r"DROP\s+(TABLE|DATABASE|SCHEMA)\b", sql, re.IGNORECASE):
                compared |= _round_trip(cur, catalog, version, names)
            cur.execute(sql)
            if current is None and sql.upper().startswith("CREATE DATABASE") and f" {db} " in f" {sql} ":
                current = db
                conn.select_db(db)
            catalog, _ = apply(catalog, sql, current, session=session)
        compared |= _round_trip(cur, catalog, version, names)
        assert len(compared) >= 40, sorted(compared)
    finally:
        for name in (db, db2, *names.values()):
            cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
        conn.close()


@pytest.mark.parametrize(("col", "mysql8", "expected"), [
    (ColumnSchema("a", "bigint", length=20), True, "bigint"),
    (ColumnSchema("a", "bigint"), False, "bigint(20)"),
    (ColumnSchema("a", "bigint", unsigned=True), False, "bigint(20) unsigned"),
    (ColumnSchema("a", "int", unsigned=True), False, "int(10) unsigned"),
    (ColumnSchema("a", "int", length=11), False, "int(11)"),
    (ColumnSchema("a", "tinyint", length=1), True, "tinyint(1)"),
    (ColumnSchema("a", "tinyint", length=1, unsigned=True), True, "tinyint unsigned"),
    (ColumnSchema("a", "int", length=5, unsigned=True, zerofill=True), True, "int(5) unsigned zerofill"),
    (ColumnSchema("a", "year", length=4), True, "year"),
    (ColumnSchema("a", "year"), False, "year(4)"),
    (ColumnSchema("a", "geomcollection"), False, "geometrycollection"),
    (ColumnSchema("a", "geometrycollection"), True, "geomcollection"),
])
def test_integer_widths_follow_the_target_server(col: ColumnSchema, mysql8: bool, expected: str) -> None:
    assert column_type_for(col, mysql8=mysql8) == expected
