"""The tracker alone on the forms of issue 11 that need no server, or that MySQL 9.7 cannot run here, and on
the rules that follow the server named by the binlog (FORMAT_DESCRIPTION's version). Every form that MySQL
9.7 runs is also checked against its information_schema in
``tests/differential/test_schema_mysql_forms.py``."""

from __future__ import annotations

import pytest

from binlog_model.errors import UnsupportedDDLError
from schema_tracker import Catalog, SchemaHistory, apply
from schema_tracker.changes import (
    CreateOrModifyColumn,
    CreateTable,
    DropColumn,
    PrimaryKeyChanged,
    UniqueKeysChanged,
    visible_changes,
)
from schema_tracker.model import ServerSession, TableSchema

MYSQL = ServerSession("9.7.4")
MARIADB = ServerSession("10.11.19-MariaDB-log")


def table(sql: str, session: ServerSession | None = None, catalog: Catalog | None = None,
          name: str | None = None) -> TableSchema:
    cat = catalog or apply(Catalog(), "CREATE DATABASE d", None)[0]
    cat, _ = apply(cat, sql, "d", session=session)
    found = cat.table("d", name or sql.split()[2].strip('`"'))
    assert found is not None
    return found


def types(t: TableSchema) -> list[tuple[str, str]]:
    return [(c.name, c.column_type) for c in t.columns]


def test_the_server_in_the_binlog_decides_widths_year_and_utf8mb4_collation() -> None:
    sql = "CREATE TABLE t (a int, b tinyint(1), c int(5) zerofill, d year(4), e varchar(3) CHARSET utf8mb4)"
    mysql, mariadb = table(sql, MYSQL), table(sql, MARIADB)
    assert types(mysql) == [("a", "int"), ("b", "tinyint(1)"), ("c", "int(5) unsigned zerofill"),
                            ("d", "year"), ("e", "varchar(3)")]
    assert types(mariadb) == [("a", "int(11)"), ("b", "tinyint(1)"), ("c", "int(5) unsigned zerofill"),
                              ("d", "year(4)"), ("e", "varchar(3)")]
    assert mysql.columns[4].collation == "utf8mb4_0900_ai_ci"
    assert mariadb.columns[4].collation == "utf8mb4_general_ci"
    # a 5.7 source replicating to 8.0 logs its own utf8mb4 default in the QUERY event
    old = table(sql, ServerSession("8.0.36", utf8mb4_collation="utf8mb4_general_ci"))
    assert old.columns[4].collation == "utf8mb4_general_ci"
    assert table("CREATE TABLE g (a geometrycollection)", MYSQL).columns[0].data_type == "geomcollection"


def test_history_reads_the_server_version_from_format_description() -> None:
    from binlog_model.resolve.assembler import replay_ddl
    from binlog_model.wire.events import FormatDescriptionEvent, QueryEvent
    from binlog_model.wire.header import EventHeader

    def header(offset: int) -> EventHeader:
        return EventHeader(0, 2, 1, 10, offset + 10, 0, offset, "binlog.000001")

    fde = FormatDescriptionEvent(header(4), 4, "9.7.4", 0, 19, (), 1)
    create_db = QueryEvent(header(100), 1, 0, 0, "", "CREATE DATABASE d", b"")
    create = QueryEvent(header(200), 1, 0, 0, "d", "CREATE TABLE t (a int)", b"", sql_mode=0)
    history = SchemaHistory()
    replay_ddl([fde, create_db, create], history)
    assert history.server_version == "9.7.4"
    assert types(history.catalog.table("d", "t")) == [("a", "int")]  # type: ignore[arg-type]


def test_ansi_quotes_from_the_logged_sql_mode() -> None:
    ansi = ServerSession("9.7.4", sql_mode=4)
    t = table('CREATE TABLE "q" ("a" int, "b c" varchar(2) DEFAULT \'x\')', ansi, name="q")
    assert [c.name for c in t.columns] == ["a", "b c"]


def test_forms_mysql_97_rejects_or_cannot_run_here() -> None:
    assert types(table("CREATE TABLE b (a bit(0), b bit)", MARIADB)) == [("a", "bit(1)"), ("b", "bit(1)")]
    cat = apply(Catalog(), "CREATE DATABASE d", None)[0]
    for sql in ("ALTER INSTANCE ROTATE INNODB MASTER KEY", "ALTER INSTANCE DISABLE INNODB REDO_LOG",
                "CREATE LIBRARY lib LANGUAGE JAVASCRIPT AS 'export function f() {}'", "DROP LIBRARY lib",
                "ALTER SQL SECURITY INVOKER VIEW v AS SELECT 1", "RENAME USER a@b TO c@d"):
        assert apply(cat, sql, "d", session=MYSQL) == (cat, ()), sql
    q = table("CREATE TABLE q (q.a int, d.q.b int, `d`.`q`.`c` int)", MARIADB)
    assert [c.name for c in q.columns] == ["a", "b", "c"]
    st = table("CREATE TABLE st (a int STORAGE DISK, b int COLUMN_FORMAT FIXED) STORAGE MEMORY", MYSQL)
    assert types(st) == [("a", "int"), ("b", "int")]
    signed = table("CREATE TABLE s (a int signed unsigned, b int unsigned signed, c int signed)", MARIADB)
    assert types(signed) == [("a", "int(10) unsigned"), ("b", "int(10) unsigned"), ("c", "int(11)")]
    parts = table("CREATE TABLE p (a int) ENGINE=MyISAM PARTITION BY RANGE (a) (PARTITION p0 VALUES LESS "
                  "THAN (5) DATA DIRECTORY = '/tmp/x' INDEX DIRECTORY = '/tmp/y' ENGINE = MyISAM, "
                  "PARTITION p1 VALUES LESS THAN MAXVALUE TABLESPACE = innodb_file_per_table)", MYSQL)
    assert types(parts) == [("a", "int")]


def test_defaults_lose_introducers_and_keep_their_collate_for_the_column() -> None:
    t = table("CREATE TABLE t (a varchar(5) DEFAULT _utf8mb4'abc', v TEXT NOT NULL DEFAULT '' "
              "COLLATE utf8mb4_bin) CHARSET latin1", MYSQL)
    assert t.columns[0].default == "'abc'" and t.columns[0].collation == "latin1_swedish_ci"
    assert (t.columns[1].default, t.columns[1].charset, t.columns[1].collation) == \
        ("''", "utf8mb4", "utf8mb4_bin")


def test_gipk_as_mysql_logs_it() -> None:
    # With sql_generate_invisible_primary_key=ON MySQL logs the generated column explicitly.
    t = table("CREATE TABLE `g` (\n  `my_row_id` bigint unsigned NOT NULL AUTO_INCREMENT "
              "/*!80023 INVISIBLE */,\n  `a` int DEFAULT NULL,\n  PRIMARY KEY (`my_row_id`)\n)", MYSQL)
    first = t.columns[0]
    assert (first.name, first.column_type, first.invisible, first.nullable, first.auto_increment) == \
        ("my_row_id", "bigint unsigned", True, False, True)
    assert t.primary_key == ("my_row_id",) and not t.implicit_primary_key


def test_functional_index_hidden_columns_keep_their_position_and_flag() -> None:
    cat = apply(Catalog(), "CREATE DATABASE d", None)[0]
    cat, _ = apply(cat, "CREATE TABLE f (a int, b int, INDEX i ((a + b)), c int, "
                   "INDEX ((a * 2), (b * 3)))", "d", session=MYSQL)
    cat, changes = apply(cat, "ALTER TABLE f ADD COLUMN d int", "d", session=MYSQL)
    t = cat.table("d", "f")
    assert t is not None
    assert [(c.name, c.hidden) for c in t.columns] == [
        ("a", False), ("b", False), ("c", False), ("!hidden!i!0!0", True),
        ("!hidden!functional_index!0!0", True), ("!hidden!functional_index!1!0", True), ("d", False)]
    assert t.columns[3].generated == "a + b"
    cat, changes = apply(cat, "DROP INDEX i ON f", "d", session=MYSQL)
    assert changes == (DropColumn("d", "f", "!hidden!i!0!0"),) and visible_changes(changes) == ()
    cat, changes = apply(cat, "CREATE INDEX j ON f ((c - 1))", "d", session=MYSQL)
    assert isinstance(changes[0], CreateOrModifyColumn) and changes[0].column.hidden
    assert visible_changes(changes) == ()


def test_unique_not_null_key_is_the_primary_key_until_a_real_one_comes() -> None:
    cat = apply(Catalog(), "CREATE DATABASE d", None)[0]
    cat, changes = apply(cat, "CREATE TABLE u (a int NOT NULL, b int, UNIQUE KEY ua (a))", "d")
    assert isinstance(changes[0], CreateTable) and changes[0].primary_key == ("a",)
    cat, changes = apply(cat, "ALTER TABLE u ADD PRIMARY KEY (b)", "d")
    assert cat.table("d", "u").primary_key == ("b",)  # type: ignore[union-attr]
    cat, changes = apply(cat, "ALTER TABLE u DROP PRIMARY KEY", "d")
    assert changes[-1] == PrimaryKeyChanged("d", "u", ("a",), implicit=True)
    cat, changes = apply(cat, "ALTER TABLE u MODIFY a int NULL", "d")
    assert cat.table("d", "u").primary_key == ()  # type: ignore[union-attr]
    assert cat.table("d", "u").column("a").nullable is not False  # type: ignore[union-attr]
    cat, changes = apply(cat, "ALTER TABLE u RENAME INDEX ua TO ub", "d")
    assert changes == (UniqueKeysChanged("d", "u", (("ub", ("a",)),)),) and visible_changes(changes) == ()


def test_history_json_keeps_unique_keys_and_the_implicit_key() -> None:
    h = SchemaHistory(Catalog(server_charset="utf8mb4"), server_version="9.7.4")
    h.apply_script("CREATE DATABASE d; USE d; CREATE TABLE u (a int NOT NULL, b int, UNIQUE KEY (a)); "
                   "ALTER TABLE u ADD UNIQUE KEY (b); ALTER TABLE u DROP INDEX a;")
    again = SchemaHistory.from_json(h.to_json())
    assert again.catalog == h.catalog and again.server_version == "9.7.4"
    t = again.catalog.table("d", "u")
    assert t is not None and t.unique_keys == (("b", ("b",)),) and t.primary_key == ()


def test_vector_columns() -> None:
    t = table("CREATE TABLE v (a VECTOR(3), b VECTOR, c vector(16) NOT NULL)", MYSQL)
    assert types(t) == [("a", "vector(3)"), ("b", "vector(2048)"), ("c", "vector(16)")]
    assert t.columns[0].length == 3


def test_views_take_their_names() -> None:
    h = SchemaHistory(server_version="9.7.4")
    h.apply_script("CREATE DATABASE d; USE d; CREATE TABLE t2 (a int UNIQUE); "
                   "CREATE VIEW t1 AS SELECT a FROM t2; CREATE TABLE IF NOT EXISTS t1 (a int); "
                   "RENAME TABLE t1 TO v9; CREATE TABLE t1 (b int);"
                   "DROP VIEW IF EXISTS v9, nope; CREATE OR REPLACE ALGORITHM=MERGE VIEW d.v2 AS SELECT 1")
    assert h.catalog.table("d", "t1").column_names == ("b",)  # type: ignore[union-attr]
    assert dict(h.catalog.views) == {"d": frozenset({"v2"})}
    assert SchemaHistory.from_json(h.to_json()).catalog == h.catalog
    assert all(visible_changes(e.changes) == () for e in h if "VIEW" in e.statement.upper())


def test_columns_named_by_words_sqlglot_reserves() -> None:
    t = table("CREATE TABLE k (id int NOT NULL, any smallint DEFAULT '0', some int, PRIMARY KEY (id), "
              "KEY k1 (any, some), UNIQUE (any))", MYSQL)
    assert t.column_names == ("id", "any", "some") and t.unique_keys == (("any", ("any",)),)


def test_mysql_9_column_attributes_and_names_the_server_alters() -> None:
    t = table("CREATE TABLE m (a YEAR UNSIGNED, i varchar(8) MASKING POLICY p1, j int)", MYSQL)
    assert types(t) == [("a", "year"), ("i", "varchar(8)"), ("j", "int")]
    cat = apply(Catalog(), "CREATE DATABASE d", None)[0]
    cat, _ = apply(cat, "CREATE TABLE m (i int)", "d", session=MYSQL)
    for sql in ("ALTER TABLE m ALTER COLUMN i SET MASKING POLICY p2",
                "ALTER TABLE m ALTER COLUMN i DROP MASKING POLICY"):
        assert visible_changes(apply(cat, sql, "d", session=MYSQL)[1]) == ()
    # a 4-byte character in a name: MySQL stores '?' instead (utf8mb3 dictionary): refused, never guessed
    with pytest.raises(UnsupportedDDLError, match="outside the BMP"):
        apply(cat, "CREATE TABLE t1 (`\U0001f42c` int)", "d", session=MYSQL)


def test_utf8_under_interpret_utf8_as_utf8mb4_and_enum_labels_in_their_charset() -> None:
    utf8mb4_mode = ServerSession("9.7.4", sql_mode=1 << 33)  # INTERPRET_UTF8_AS_UTF8MB4
    t = table("CREATE TABLE u (a char(4) CHARSET utf8, b char(2) COLLATE utf8_bin)", utf8mb4_mode)
    assert [(c.charset, c.collation) for c in t.columns] == [("utf8mb4", "utf8mb4_0900_ai_ci"),
                                                             ("utf8mb4", "utf8mb4_bin")]
    assert table("CREATE TABLE v (a char(4) CHARSET utf8)", MYSQL).columns[0].charset == "utf8mb3"
    # the server converts labels into the column's charset ('?' for what it cannot hold)
    e = table("CREATE TABLE e (a enum('ÿá', 'Жж')) CHARACTER SET cp1251", MYSQL)
    assert e.columns[0].enum_values == ("??", "Жж")
    b = table("CREATE TABLE b (s set('v_å') CHARACTER SET binary, t enum(0x92) BYTE, u enum(x'c3a5') BYTE)",
              MYSQL)
    assert [c.enum_values for c in b.columns] == [("v_å",), ("\x92",), ("å",)]


def test_visible_attribute() -> None:
    cat = apply(Catalog(), "CREATE DATABASE d", None)[0]
    cat, _ = apply(cat, "CREATE TABLE t (f1 int INVISIBLE, f2 int VISIBLE)", "d", session=MYSQL)
    cat, _ = apply(cat, "ALTER TABLE t CHANGE f1 f1 INT VISIBLE, ALGORITHM = INSTANT", "d", session=MYSQL)
    assert [c.invisible for c in cat.table("d", "t").columns] == [False, False]  # type: ignore[union-attr]
