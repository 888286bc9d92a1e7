"""Unit tests of ddl.apply: each supported form, token fallbacks, ignored statements, errors, lenient mode.

Every statement here is hand-written for this test (no server needed);
tests/differential/test_schema_differential.py
checks the same forms against a real MariaDB.
"""

from __future__ import annotations

import pytest

from binlog_model.errors import SchemaError, UnsupportedDDLError
from binlog_model.position import EventPosition
from schema_tracker import (
    Catalog,
    CreateDatabase,
    CreateOrModifyColumn,
    DropDatabase,
    PrimaryKeyChanged,
    RenameColumn,
    RenameTable,
    SkippedStatement,
    TableCharsetChanged,
    TruncateTable,
    apply,
    split_statements,
)
from schema_tracker.changes import visible_changes
from schema_tracker.ddl import parse_use, unwrap_version_comments


def run(*statements: str, catalog: Catalog | None = None, db: str = "d") -> Catalog:
    cat = catalog or Catalog(server_charset="utf8mb4")
    for sql in statements:
        cat, _ = apply(cat, sql, db)
    return cat


def cols(cat: Catalog, table: str, db: str = "d") -> list[str]:
    t = cat.table(db, table)
    assert t is not None
    return [c.name for c in t.columns]


def test_create_table_attributes_and_inheritance() -> None:
    cat = run(
        "CREATE DATABASE d CHARACTER SET latin1",
        "CREATE TABLE t (a int unsigned NOT NULL AUTO_INCREMENT, "
        "b varchar(5) COLLATE latin1_bin DEFAULT 'x', "
        "e enum('a,b','it''s') CHARACTER SET utf8, g int AS (a+1) STORED, i int INVISIBLE, "
        "z smallint zerofill, f float(30), d2 decimal(7), ts datetime(6), PRIMARY KEY (a))",
    )
    t = cat.table("d", "t")
    assert t is not None and t.charset == "latin1" and t.primary_key == ("a",)
    a, b, e, g, i, z, f, d2, ts = t.columns
    assert (a.column_type, a.nullable, a.auto_increment, a.charset) == ("int(10) unsigned", False, True, None)
    assert (b.column_type, b.charset, b.collation, b.default) == ("varchar(5)", "latin1", "latin1_bin", "'x'")
    assert e.enum_values == ("a,b", "it's") and e.column_type == "enum('a,b','it''s')"
    assert (e.charset, e.collation) == ("utf8mb3", "utf8mb3_general_ci")
    assert g.generated is not None and g.generated_stored
    assert i.invisible
    assert (z.column_type, z.unsigned, z.zerofill) == ("smallint(5) unsigned zerofill", True, True)
    assert f.column_type == "double" and d2.column_type == "decimal(7,0)" and ts.column_type == "datetime(6)"


def test_create_like_if_not_exists_temporary_and_select() -> None:
    cat = run("CREATE TABLE a (x int primary key)", "CREATE TABLE b LIKE a",
              "CREATE TABLE IF NOT EXISTS a (y int)",
              "CREATE TEMPORARY TABLE tmp (q int)")
    assert cols(cat, "b") == ["x"] and cat.table("d", "b").primary_key == ("x",)  # type: ignore[union-attr]
    assert cols(cat, "a") == ["x"] and cat.table("d", "tmp") is None
    with pytest.raises(UnsupportedDDLError, match="SELECT"):
        run("CREATE TABLE c AS SELECT 1 AS x", catalog=cat)


def test_alter_add_positions_and_parentheses() -> None:
    cat = run("CREATE TABLE t (a int, b int)",
              "ALTER TABLE t ADD COLUMN c int FIRST, ADD d int AFTER a, ADD (e int, f int), "
              "ADD COLUMN (g int)")
    assert cols(cat, "t") == ["c", "a", "d", "b", "e", "f", "g"]


def test_modify_change_rename_drop() -> None:
    cat = run("CREATE TABLE t (a int, b int, c int)")
    cat, ch = apply(cat, "ALTER TABLE t MODIFY c bigint FIRST", "d")
    assert isinstance(ch[0], CreateOrModifyColumn) and ch[0].first
    cat, ch = apply(cat, "ALTER TABLE t CHANGE a a int", "d")  # same name, same definition
    assert ch == ()
    cat, ch = apply(cat, "ALTER TABLE t CHANGE a A int AFTER b", "d")
    assert [type(c) for c in ch] == [RenameColumn, CreateOrModifyColumn]
    cat, ch = apply(cat, "ALTER TABLE t RENAME COLUMN b TO bb, DROP COLUMN A, DROP c", "d")
    assert cols(cat, "t") == ["bb"]


def test_columns_are_case_insensitive_tables_are_not() -> None:
    cat = run("CREATE TABLE t (Abc int)", "ALTER TABLE t MODIFY ABC bigint", "CREATE TABLE T (x int)")
    assert cols(cat, "t") == ["ABC"] and cols(cat, "T") == ["x"]
    folded = run("CREATE TABLE Foo (a int)", "ALTER TABLE FOO ADD b int",
                 catalog=Catalog(lower_case_table_names=1))
    assert cols(folded, "foo") == ["a", "b"]


def test_primary_key_changes() -> None:
    cat = run("CREATE TABLE t (a int, b int NULL, c int)")
    cat, ch = apply(cat, "ALTER TABLE t ADD PRIMARY KEY (b, a)", "d")
    assert ch == (PrimaryKeyChanged("d", "t", ("b", "a")),)
    assert not cat.table("d", "t").column("b").nullable  # type: ignore[union-attr]
    cat, ch = apply(cat, "ALTER TABLE t DROP PRIMARY KEY, ADD CONSTRAINT pk PRIMARY KEY (c)", "d")
    assert cat.table("d", "t").primary_key == ("c",)  # type: ignore[union-attr]
    cat = run("ALTER TABLE t CHANGE c cc int", catalog=cat)
    assert cat.table("d", "t").primary_key == ("cc",)  # type: ignore[union-attr]


def test_index_fk_check_and_options_change_no_column() -> None:
    cat = run("CREATE TABLE t (a int, b int)")
    for sql in ["ALTER TABLE t ADD INDEX i (a), ADD UNIQUE KEY u (b), ADD FULLTEXT (a)",
                "ALTER TABLE t ADD CONSTRAINT fk FOREIGN KEY (a) REFERENCES x (y), ADD CHECK (a > 0)",
                "ALTER TABLE t DROP INDEX i, DROP KEY u, DROP FOREIGN KEY fk, DROP CHECK c",
                "ALTER TABLE t ENGINE=InnoDB, ALGORITHM=INPLACE, LOCK=NONE, AUTO_INCREMENT=5",
                "CREATE INDEX j ON t (a)", "DROP INDEX j ON t",
                "ALTER TABLE t RENAME INDEX i TO i2", "ALTER TABLE t ALTER INDEX i INVISIBLE",
                "ALTER TABLE t PARTITION BY HASH(a) PARTITIONS 2", "ALTER TABLE t REMOVE PARTITIONING"]:
        cat2, changes = apply(cat, sql, "d")
        # UNIQUE keys are kept as internal bookkeeping (the implicit primary key); consumers see nothing
        assert visible_changes(changes) == ()
        assert cat2.table("d", "t").columns == cat.table("d", "t").columns  # type: ignore


def test_charset_default_and_convert() -> None:
    cat = run("CREATE TABLE t (a tinytext, v varchar(3)) CHARSET latin1")
    cat, ch = apply(cat, "ALTER TABLE t DEFAULT CHARSET=utf8mb4", "d")
    assert ch == (TableCharsetChanged("d", "t", "utf8mb4", "utf8mb4_general_ci"),)
    assert cat.table("d", "t").column("v").charset == "latin1"  # type: ignore[union-attr]
    cat, ch = apply(cat, "ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4", "d")
    t = cat.table("d", "t")
    assert t is not None and [c.column_type for c in t.columns] == ["text", "varchar(3)"]  # grew
    assert {c.charset for c in t.columns} == {"utf8mb4"}


def test_rename_table_fallback_with_cycles_and_databases() -> None:
    cat = run("CREATE TABLE a (x int)", "CREATE TABLE b (y int)")
    cat, ch = apply(cat, "RENAME TABLE a TO tmp, b TO a, `tmp` TO `b`", "d")
    assert len(ch) == 3 and all(isinstance(c, RenameTable) for c in ch)
    assert cols(cat, "a") == ["y"] and cols(cat, "b") == ["x"]
    cat = run("RENAME TABLE d.a TO other.a2", "ALTER TABLE other.a2 RENAME TO d.a3", catalog=cat)
    assert cols(cat, "a3") == ["y"] and cat.table("other", "a2") is None


def test_drop_truncate_databases() -> None:
    cat = run("CREATE DATABASE e", "CREATE TABLE e.t (a int)", "CREATE TABLE t (a int)",
              "CREATE TABLE u (a int)")
    cat, ch = apply(cat, "TRUNCATE TABLE t", "d")
    assert ch == (TruncateTable("d", "t"),)
    cat, ch = apply(cat, "DROP TABLE IF EXISTS t, missing, u", "d")
    assert len(ch) == 2 and cat.table("d", "t") is None
    cat, ch = apply(cat, "DROP SCHEMA e", "d")
    assert ch == (DropDatabase("e"),) and cat.table("e", "t") is None
    cat, ch = apply(cat, "CREATE DATABASE IF NOT EXISTS x CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", None)
    assert ch == (CreateDatabase("x", "utf8mb4", "utf8mb4_bin"),)
    cat, ch = apply(cat, "ALTER DATABASE x DEFAULT CHARACTER SET = latin1", None)
    assert cat.database_defaults("x") == ("latin1", "latin1_swedish_ci")


@pytest.mark.parametrize("sql", [
    "BEGIN", "COMMIT", "SAVEPOINT s", "XA START 'x'", "GRANT ALL ON *.* TO 'u'@'%'", "CREATE USER 'u'@'%'",
    "CREATE DEFINER=`root`@`localhost` TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1",
    "CREATE PROCEDURE p() SELECT 1", "DROP FUNCTION IF EXISTS f", "FLUSH TABLES", "ANALYZE TABLE t",
    "OPTIMIZE TABLE t", "INSERT INTO t VALUES (1)", "UPDATE t SET a = 1", "DELETE FROM t", "USE d", "",
    "/* only a comment */",
])
def test_non_schema_statements_are_ignored(sql: str) -> None:
    cat = Catalog()
    assert apply(cat, sql, "d") == (cat, ())


@pytest.mark.parametrize("sql", [
    "CREATE VIEW v AS SELECT 1", "CREATE DEFINER=`root`@`%` SQL SECURITY DEFINER VIEW v AS SELECT 1",
])
def test_views_change_no_table(sql: str) -> None:
    # A view's name is kept (internal bookkeeping: CREATE TABLE IF NOT EXISTS over it changes nothing),
    # but no table changes and consumers see nothing.
    cat = Catalog()
    new, changes = apply(cat, sql, "d")
    assert new.tables == cat.tables and visible_changes(changes) == () and new.is_view("d", "v")


def test_unsupported_ddl_is_a_typed_error_with_statement_and_position() -> None:
    cat = run("CREATE TABLE t (a int)")
    pos = EventPosition("mysql-bin.000003", 4242)
    with pytest.raises(UnsupportedDDLError) as info:
        apply(cat, "ALTER TABLE t ADD SYSTEM VERSIONING", "d", pos)   # adds hidden row_start/row_end
    assert info.value.position == pos and "SYSTEM VERSIONING" in (info.value.statement or "")
    with pytest.raises(UnsupportedDDLError, match="unrecognised statement"):
        apply(cat, "FROBNICATE TABLE t", "d")
    with pytest.raises(SchemaError, match="not known"):
        apply(cat, "ALTER TABLE nope ADD b int", "d", pos)
    with pytest.raises(SchemaError, match="unknown column"):
        apply(cat, "ALTER TABLE t DROP COLUMN zz", "d")
    with pytest.raises(SchemaError, match="no database selected"):
        apply(cat, "CREATE TABLE x (a int)", None)


def test_lenient_records_skip_and_marks_table_uncertain() -> None:
    cat = run("CREATE TABLE t (a int)")
    sql = "ALTER TABLE t ADD COLUMN ok int, ADD SYSTEM VERSIONING"
    new, ch = apply(cat, sql, "d", lenient=True)
    assert len(ch) == 1 and isinstance(ch[0], SkippedStatement) and ch[0].table == "t"
    t = new.table("d", "t")
    assert t is not None and t.uncertain and cols(new, "t") == ["a"]  # nothing half-applied
    assert not cat.table("d", "t").uncertain  # type: ignore[union-attr]


def test_version_comments_and_splitting() -> None:
    text = ("/*!40101 SET NAMES utf8 */;\nCREATE DATABASE /*!32312 IF NOT EXISTS*/ `x` "
            "/*!40100 DEFAULT CHARACTER SET utf8 */;\nUSE `x`;\nINSERT INTO t VALUES ('a;b');\n-- c\n")
    assert unwrap_version_comments("a /*!40101 b */ '/*!1 q */'") == "a   b   '/*!1 q */'"
    statements = split_statements(text)
    assert " ".join(statements[1].split()) == "CREATE DATABASE IF NOT EXISTS `x` DEFAULT CHARACTER SET utf8"
    assert parse_use(statements[2]) == "x" and statements[3].endswith("'a;b')")
    cat, _ = apply(Catalog(), statements[1], None)
    assert cat.database_defaults("x") == ("utf8mb3", "utf8mb3_general_ci")


def test_partitioned_create_and_partition_actions() -> None:
    cat = run("CREATE TABLE p (a int, b int) PARTITION BY KEY (a) PARTITIONS 2",
              "ALTER TABLE p ADD c int, ALGORITHM=COPY", "ALTER TABLE p REMOVE PARTITIONING")
    assert cols(cat, "p") == ["a", "b", "c"]


@pytest.mark.parametrize("sql", ["ALTER TABLE t RENAME COLUMN a TO b, RENAME COLUMN b TO a",
                                 "ALTER TABLE t CHANGE a b INT, CHANGE b a INT"])
def test_column_swap_in_one_alter_is_followed(sql: str) -> None:
    """Names in one ALTER refer to the original table (checked on MySQL 9.7 in test_schema_mysql_forms):
    a swap is followed by parking one column first (renamed one after the other, a swap would leave the
    names where they were: silently wrong rows)."""
    cat = run("CREATE TABLE t (a int, b varchar(3), PRIMARY KEY (a))")
    new, changes = apply(cat, sql, "d")
    t = new.table("d", "t")
    assert t is not None and (t.columns[0].name, t.columns[0].data_type) == ("b", "int")
    assert t.columns[1].name == "a" and t.primary_key == ("b",)
    names = {c.name for c in cat.table("d", "t").columns}  # type: ignore[union-attr]
    for change in changes:  # applied in order, every rename starts from a name that exists then
        if isinstance(change, RenameColumn):
            assert change.old_name in names
            names = (names - {change.old_name}) | {change.new_name}


def test_renames_that_free_their_target_first_are_followed() -> None:
    cat = run("CREATE TABLE t (a int, b int, PRIMARY KEY (a))",
              "ALTER TABLE t RENAME COLUMN a TO c, RENAME COLUMN b TO a")
    assert cols(cat, "t") == ["c", "a"] and cat.table("d", "t").primary_key == ("c",)  # type: ignore[union-attr]
