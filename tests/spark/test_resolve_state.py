"""``resolve --state``: daily Spark runs that add Parquet files to the table folders equal one run over
everything, with the typed-table rules across runs (a renamed table's earlier files follow it, a widened
type is read back through the folder's schema file), on a real MariaDB history of three binlog files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")
from binlog_model.io.state import RunState, StateMismatchError
from binlog_model.spark.incremental import SCHEMA_FILE, read_table
from binlog_model.spark.job import run_resolve
from binlog_model.spark.session import local_session

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark() -> Any:
    return local_session("local[2]")


@pytest.fixture
def daily_binlogs(mariadb: Any, mariadb_db: str, tmp_path: Path) -> tuple[str, list[Path]]:
    """Day 1: a table t. Day 2: its column widened, t renamed to t2, a table d. Day 3: d dropped and
    re-created with one more column. Each day is one binlog file holding only this test's statements."""
    db = mariadb_db
    mariadb.flush_and_collect()
    days = [
        [f"CREATE TABLE `{db}`.t (id INT PRIMARY KEY, v SMALLINT, s VARCHAR(5))",
         f"INSERT INTO `{db}`.t VALUES (1, 10, 'a'), (2, 20, 'b')",
         f"UPDATE `{db}`.t SET v = 11 WHERE id = 1"],
        [f"ALTER TABLE `{db}`.t MODIFY v BIGINT", f"INSERT INTO `{db}`.t VALUES (3, 3000000000, 'c')",
         f"RENAME TABLE `{db}`.t TO `{db}`.t2", f"INSERT INTO `{db}`.t2 VALUES (4, 40, 'd')",
         f"CREATE TABLE `{db}`.d (id INT PRIMARY KEY, x INT)", f"INSERT INTO `{db}`.d VALUES (1, 1)"],
        [f"DROP TABLE `{db}`.d", f"CREATE TABLE `{db}`.d (id INT PRIMARY KEY, x INT, y TEXT)",
         f"INSERT INTO `{db}`.d VALUES (1, 2, 'again')", f"DELETE FROM `{db}`.t2 WHERE id = 2"],
    ]
    files: list[Path] = []
    for n, day in enumerate(days):
        mariadb.execute(day)
        files += mariadb.flush_and_collect(tmp_path / "binlogs")
        assert len(files) == n + 1
    return db, files


def _table(spark: Any, folder: Path) -> list[tuple[Any, ...]]:
    df = read_table(spark, folder)
    keep = ("binlog_operation", "binlog_generation")
    cols = [c for c in df.columns if not c.startswith("binlog_") or c in keep]
    return sorted(tuple(r) for r in df.orderBy("binlog_order").select(*cols, "binlog_order").collect())


def test_daily_state_runs_equal_one_run(spark: Any, daily_binlogs: tuple[str, list[Path]],
                                        tmp_path: Path) -> None:
    db, files = daily_binlogs
    full = run_resolve(spark, files, tmp_path / "full", source="s:1")
    tables = {(t.db, t.table): t for t in full.tables if t.path}
    assert set(tables) == {(db, "t2"), (db, "d")}, "t's rows live under its new name"
    t2 = spark.read.parquet(tables[(db, "t2")].path)
    assert {f.name: f.dataType.simpleString() for f in t2.schema.fields}["v"] == "bigint"
    assert sorted((r["id"], r["v"]) for r in t2.where("binlog_operation = 'INSERT'").collect()) == [
        (1, 10), (2, 20), (3, 3000000000), (4, 40)]
    d = spark.read.parquet(tables[(db, "d")].path)
    assert [c for c in d.columns if not c.startswith("binlog_")] == ["id", "x", "y"]
    assert sorted((r["x"], r["binlog_generation"]) for r in d.collect()) == [(1, 0), (2, 1)]

    state, out = tmp_path / "state", tmp_path / "daily"
    for day in range(1, len(files) + 1):
        run_resolve(spark, files[:day], out, source="s:1", state_dir=state)
    assert not (out / f"db={db}" / "table=t").exists(), "day 1's files followed the rename"
    assert not (out / "_staging").exists()
    for name in ("t2", "d"):
        folder = out / f"db={db}" / f"table={name}"
        assert (folder / SCHEMA_FILE).exists()
        assert _table(spark, folder) == _table(spark, Path(tables[(db, name)].path)), name
    assert RunState.load(state).runs == 3

    # Nothing new: a fourth run adds nothing; other options are refused.
    run_resolve(spark, files, out, source="s:1", state_dir=state)
    assert _table(spark, out / f"db={db}" / "table=t2") == _table(spark, Path(tables[(db, "t2")].path))
    with pytest.raises(StateMismatchError):
        run_resolve(spark, files, out, source="other", state_dir=state)


def test_positions_of_a_gzipped_file_count_decompressed_bytes(tmp_path: Path) -> None:
    import gzip

    from binlog_model.spark.partitions import scan_file
    from tests._paths import REPO

    plain = next((REPO / "fixtures" / "golden" / "mariadb" / "large_statement" / "binlogs").iterdir())
    packed = tmp_path / plain.name
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert scan_file(packed).end == plain.stat().st_size > packed.stat().st_size
    assert scan_file(plain).end == plain.stat().st_size
