"""Typed tables without junk: re-created tables are generations of one table, renamed tables take their
rows along, a column whose type changed gets a type that holds every version (pure, no Spark).

The corpus case: ``02_query_bigger`` drops and re-creates ``Demo``; before, its typed table had 16 all-null
``L_*__v1`` columns in front of the real ones.
"""

from __future__ import annotations

import datetime
from decimal import Decimal

import pyarrow as pa
import pytest

from binlog_model.position import EventPosition, position_key
from binlog_model.spark.typed import _Invalid, convert_value, table_lineages, typed_rows, widen
from schema_tracker.history import SchemaHistory
from tests._paths import CORPUS, require


def _history(*statements: str) -> SchemaHistory:
    history = SchemaHistory()
    for i, sql in enumerate(statements):
        history.apply(sql, None, EventPosition("mysql-bin.000001", 100 * (i + 1)))
    return history


def _key(offset: int) -> tuple[int, str, int]:
    return position_key("mysql-bin.000001", offset)


def test_recreated_table_is_a_new_generation_not_duplicate_columns() -> None:
    lineage = table_lineages(_history(
        "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, a INT, b TEXT)",
        "DROP TABLE d.t", "CREATE TABLE d.t (id INT PRIMARY KEY, a BIGINT, c DATE)"))[("d", "t")]
    assert [(c.name, c.spark) for c in lineage.columns] == [     # the table's columns, then the dropped one
        ("id", "int"), ("a", "bigint"), ("c", "date"), ("b", "string")]
    assert lineage.lookup("d", "t", _key(250)) == ({"id": "id", "a": "a", "b": "b"}, 0)
    assert lineage.lookup("d", "t", _key(450)) == ({"id": "id", "a": "a", "c": "c"}, 1)


def test_columns_follow_the_tables_current_order_then_the_dropped_ones() -> None:
    lineage = table_lineages(_history(
        "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, name TEXT, z INT)",
        "ALTER TABLE d.t ADD COLUMN nick TEXT AFTER name", "ALTER TABLE d.t ADD COLUMN first_one INT FIRST",
        "ALTER TABLE d.t DROP COLUMN z", "ALTER TABLE d.t CHANGE name full_name TEXT AFTER nick",
        "ALTER TABLE d.t DROP COLUMN nick", "ALTER TABLE d.t ADD COLUMN nick INT AFTER id"))[("d", "t")]
    assert [c.name for c in lineage.columns] == ["first_one", "id", "nick", "full_name", "z", "nick__v1"]


def test_query_bigger_corpus_demo_table_has_no_versioned_columns() -> None:
    from binlog_model.io.files import iter_events
    from binlog_model.resolve.assembler import replay_ddl
    from binlog_model.resolve.ddl_pass import DDL_SKIP_TYPES

    path = require(CORPUS / "mysql-cdc-rs/tests/events/8.0/02_query_bigger/binlog.000733")
    history = SchemaHistory()
    replay_ddl(iter_events(path, skip_types=DDL_SKIP_TYPES), history)
    demo = table_lineages(history)[("test", "Demo")]
    names = [c.name for c in demo.columns]
    assert len(names) == 16 and not any("__v" in n for n in names), names
    assert sorted({g for s in demo.segments for g in s.generations}) == [0, 1]


def test_renamed_table_rows_land_under_the_new_name() -> None:
    lineages = table_lineages(_history(
        "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)",
        "RENAME TABLE d.t TO d.t2", "ALTER TABLE d.t2 ADD COLUMN w INT",
        "CREATE TABLE d.t (other VARCHAR(3))"))
    assert set(lineages) == {("d", "t2"), ("d", "t")}
    moved = lineages[("d", "t2")]
    assert moved.logged_names == [("d", "t"), ("d", "t2")]
    assert moved.lookup("d", "t", _key(250)) == ({"id": "id", "v": "v"}, 0)   # logged as t, before
    assert moved.lookup("d", "t", _key(550)) is None                           # t is another table now
    assert moved.lookup("d", "t2", _key(450)) == ({"id": "id", "v": "v", "w": "w"}, 0)
    assert [c.name for c in lineages[("d", "t")].columns] == ["other"]
    assert lineages[("d", "t")].lookup("d", "t", _key(550)) == ({"other": "other"}, 0)
    rows = [{"db": "d", "table": "t", "file": "mysql-bin.000001", "offset": 250, "operation": "INSERT",
             "after": {"id": '{"intValue":1}', "v": '{"intValue":7}'}, "before": None, "gtid": None,
             "utcTimestamp": None, "orderKey": None},
            {"db": "d", "table": "t", "file": "mysql-bin.000001", "offset": 550, "operation": "INSERT",
             "after": {"other": '{"stringValue":"x"}'}, "before": None, "gtid": None,
             "utcTimestamp": None, "orderKey": None}]
    typed = list(typed_rows(rows, moved))
    assert len(typed) == 1 and typed[0][:3] == (1, 7, None)       # the second row is the new t's


def test_renaming_onto_a_dropped_name_is_a_new_generation_of_it() -> None:
    lineages = table_lineages(_history(
        "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)", "DROP TABLE d.t",
        "CREATE TABLE d.n (id INT PRIMARY KEY, v BIGINT)", "RENAME TABLE d.n TO d.t"))
    assert set(lineages) == {("d", "t")}
    t = lineages[("d", "t")]
    assert [(c.name, c.spark) for c in t.columns] == [("id", "int"), ("v", "bigint")]
    assert t.lookup("d", "t", _key(250)) == ({"id": "id", "v": "v"}, 0)
    assert t.lookup("d", "n", _key(450)) == ({"id": "id", "v": "v"}, 1)
    assert t.lookup("d", "t", _key(550)) == ({"id": "id", "v": "v"}, 1)


@pytest.mark.parametrize(("a", "b", "wide"), [
    ("int", "bigint", "bigint"),
    ("bigint", "decimal(20,0)", "decimal(20,0)"),
    ("decimal(10,2)", "decimal(12,4)", "decimal(12,4)"),
    ("decimal(30,0)", "decimal(30,20)", "string"),        # 30 integer digits and 20 decimals: > 38
    ("int", "decimal(5,2)", "decimal(12,2)"),
    ("float", "double", "double"),
    ("int", "double", "double"),
    ("bigint", "double", "string"),                        # a double cannot hold every bigint exactly
    ("date", "timestamp_ntz", "timestamp_ntz"),
    ("string", "binary", "binary"),
    ("int", "string", "string"),
    ("timestamp", "timestamp_ntz", "string"),
])
def test_widen_holds_both_types(a: str, b: str, wide: str) -> None:
    assert widen(a, b) == wide and widen(b, a) == wide


def test_changed_type_is_typed_to_hold_every_version() -> None:
    lineage = table_lineages(_history(
        "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v SMALLINT, p DECIMAL(5,2), s INT)",
        "ALTER TABLE d.t MODIFY v BIGINT, MODIFY p DECIMAL(8,1), MODIFY s VARCHAR(10)"))[("d", "t")]
    types = {c.name: c.spark for c in lineage.columns}
    assert types == {"id": "int", "v": "bigint", "p": "decimal(9,2)", "s": "string"}
    # An older value converts exactly into the widened type; one that does not fit is never cut.
    assert convert_value('{"decimalValue":"123.45"}', pa.decimal128(9, 2)) == Decimal("123.45")
    assert convert_value('{"intValue":5}', pa.string()) == "5"
    assert convert_value('{"dateValue":{"year":2020,"month":2,"day":3}}', pa.timestamp("us")) == \
        datetime.datetime(2020, 2, 3)
    with pytest.raises(_Invalid):
        convert_value('{"decimalValue":"123.45"}', pa.decimal128(8, 1))
    with pytest.raises(_Invalid):
        convert_value('{"longValue":"3000000000"}', pa.int32())
    with pytest.raises(_Invalid):
        convert_value('{"bytesValue":"/w=="}', pa.string())
