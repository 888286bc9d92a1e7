"""Historical schema resolution on real MariaDB binlogs spread over several files, read in parallel.

Acceptance 2: INSERTs, then ALTERs (add, drop, rename and reorder columns), then more changes, with FLUSH
BINARY LOGS between the phases. The ``mysql-binlog`` source resolves every row with the schema in force at
its position; the typed job puts each value in the column it belongs to (renamed columns follow the
rename, dropped columns stay for older rows, added columns are null for older rows). Resolving the first
phase with only the final catalog instead gives a ``SchemaMismatchError`` or a different assignment.
"""

from __future__ import annotations

import datetime
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from binlog_model.errors import SchemaMismatchError
from binlog_model.io.files import iter_events
from binlog_model.resolve.assembler import StatementAssembler
from binlog_model.resolve.options import AssemblerOptions
from binlog_model.wire import QueryEvent
from schema_tracker.history import SchemaHistory

pytest.importorskip("pyspark")
from binlog_model.spark.datasource import plan
from binlog_model.spark.job import run_resolve
from binlog_model.spark.session import local_session

pytestmark = pytest.mark.spark

BIG = 18446744073709551615


@pytest.fixture(scope="module")
def spark() -> Any:
    return local_session("local[2]")


@pytest.fixture
def history_binlogs(server: Any, fresh_db: str, tmp_path: Path) -> tuple[str, list[Path]]:
    """Three phases in three (or more) binlog files, holding only this test's statements."""
    db = fresh_db
    server.flush_and_collect()          # leave earlier tests' files behind
    server.execute([f"DROP DATABASE `{db}`", f"CREATE DATABASE `{db}`"])
    server.execute([
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(20), d DATE)",
        "INSERT INTO t VALUES (1, 10, 'one', '2020-01-01'), (2, 20, 'two', NULL)",
        "FLUSH BINARY LOGS",
        "ALTER TABLE t ADD COLUMN c BIGINT UNSIGNED",
        "ALTER TABLE t DROP COLUMN b",
        "ALTER TABLE t CHANGE a a2 INT",
        "ALTER TABLE t MODIFY c BIGINT UNSIGNED FIRST",
        f"INSERT INTO t (id, a2, c, d) VALUES (3, 30, {BIG}, '2021-02-03')",
        "UPDATE t SET a2 = 11 WHERE id = 1",
        "FLUSH BINARY LOGS",
        "INSERT INTO t (id, a2, c) VALUES (4, 40, 4)",
        "DELETE FROM t WHERE id = 2",
    ], database=db)
    files = server.flush_and_collect(tmp_path / "binlogs")
    assert len(files) >= 3
    return db, files


def _rows(spark: Any, files: list[Path], db: str) -> list[dict[str, Any]]:
    df = (spark.read.format("mysql-binlog").option("paths", json.dumps([str(f) for f in files]))
          .option("image", "full").load())
    rows = [r.asDict(recursive=True) for r in df.where(f"db = '{db}' AND operation != 'SCHEMA'").collect()]
    return sorted(rows, key=lambda r: (r["orderKey"]["fileSeq"], r["orderKey"]["offset"],
                                       r["orderKey"]["rowIndex"]))


def _names(image: dict[str, str] | None) -> list[str]:
    return sorted(image or {})


def test_each_row_resolves_with_the_schema_at_its_position(spark: Any,
                                                           history_binlogs: tuple[str, list[Path]]) -> None:
    db, files = history_binlogs
    _, slices = plan(files)
    assert len({s.path for s in slices}) >= 3, "every file is its own task"
    rows = _rows(spark, files, db)
    assert [(r["operation"], r["file"] == files[0].name) for r in rows] == [
        ("INSERT", True), ("INSERT", True), ("INSERT", False), ("UPDATE", False), ("INSERT", False),
        ("DELETE", False)]
    first, _, third, update, fourth, delete = rows
    assert first["after"] == {"id": '{"intValue":1}', "a": '{"intValue":10}', "b": '{"stringValue":"one"}',
                              "d": '{"dateValue":{"year":2020,"month":1,"day":1}}'}
    assert third["after"] == {"c": f'{{"uint64Value":"{BIG}"}}', "id": '{"intValue":3}',
                              "a2": '{"intValue":30}', "d": '{"dateValue":{"year":2021,"month":2,"day":3}}'}
    assert _names(update["after"]) == ["a2", "c", "d", "id"]
    assert update["after"]["a2"] == '{"intValue":11}'
    assert fourth["after"]["d"] == '{"nullValue":null}'
    assert delete["before"]["a2"] == '{"intValue":20}' and delete["before"]["c"] == '{"nullValue":null}'


def test_typed_tables_follow_renames_drops_and_adds(spark: Any, history_binlogs: tuple[str, list[Path]],
                                                    tmp_path: Path) -> None:
    db, files = history_binlogs
    result = run_resolve(spark, files, tmp_path / "out", source="test:1")
    table = next(t for t in result.tables if (t.db, t.table) == (db, "t"))
    assert table.operations == {"INSERT": 4, "UPDATE": 1, "DELETE": 1, "SCHEMA": 5}
    assert table.schema_versions == 5
    df = spark.read.parquet(table.path)
    columns = [f.name for f in df.schema.fields if not f.name.startswith("binlog_")]
    # the table's current order (c was added FIRST; a → a2 followed), then the dropped b
    assert columns == ["c", "id", "a2", "d", "b"]
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert types["c"] == "decimal(20,0)" and types["a2"] == "int" and types["d"] == "date"
    got = [(r["binlog_operation"], r["id"], r["a2"], r["b"], r["d"], r["c"])
           for r in df.orderBy("binlog_order").collect()]
    assert got == [
        ("INSERT", 1, 10, "one", datetime.date(2020, 1, 1), None),
        ("INSERT", 2, 20, "two", None, None),
        ("INSERT", 3, 30, None, datetime.date(2021, 2, 3), Decimal(BIG)),
        ("UPDATE", 1, 11, None, datetime.date(2020, 1, 1), None),
        ("INSERT", 4, 40, None, None, Decimal(4)),
        ("DELETE", 2, 20, None, None, None),
    ]


def test_final_schema_alone_would_resolve_wrongly(history_binlogs: tuple[str, list[Path]]) -> None:
    db, files = history_binlogs
    history, _ = plan(files)
    right = [e for e in StatementAssembler(SchemaHistory.from_json(history.to_json()), AssemblerOptions())
             .assemble(iter_events(files[:1])) if e.db == db and e.rows]
    # The same first file, its DDL left out, resolved with only the final catalog.
    rows_only = (e for e in iter_events(files[:1])
                 if not isinstance(e, QueryEvent) or e.query in ("BEGIN", "COMMIT"))
    final_only = StatementAssembler(SchemaHistory(history.catalog), AssemblerOptions())
    try:
        wrong = [e for e in final_only.assemble(rows_only) if e.db == db and e.rows]
    except SchemaMismatchError as err:
        assert err.table == f"{db}.t"
        return
    assert [[c.name for c in r.after] for e in wrong for r in e.rows] != \
           [[c.name for c in r.after] for e in right for r in e.rows]
