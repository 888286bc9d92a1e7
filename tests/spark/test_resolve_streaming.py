"""Issue 23: ``run_resolve`` writes the typed tables from per-slice Python tasks (pyarrow, no cache of the
decoded archive, no JVM rows) and publishes them atomically. Its tables equal the ones the former cached
DataFrame path wrote (``_dataframe_resolve``), row for row, with the same column types and nullability: on
every golden fixture, on the shared corpus and on a multi-file MySQL 9 history with DDL between the files.
Slices are forced small so files are cut at transaction starts and written by many tasks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from binlog_model.errors import BinlogError
from tests._paths import CORPUS, REPO, binlogs_under, require

pytest.importorskip("pyspark")
from binlog_model.spark.job import run_resolve
from binlog_model.spark.session import local_session
from tests.spark._dataframe_resolve import dataframe_resolve

pytestmark = pytest.mark.spark

GOLDEN = REPO / "fixtures" / "golden" / "mariadb"
SCENARIOS = sorted(d.name for d in GOLDEN.iterdir() if (d / "binlogs").is_dir())


@pytest.fixture(scope="module")
def spark() -> Any:
    return local_session("local[2]")


def tables_under(spark: Any, out: Path) -> dict[str, tuple[list[tuple[str, str, bool]], list[Any]]]:
    """Every table folder under ``out``: (its Spark schema as name, type, nullable; its rows sorted)."""
    found = {}
    for folder in sorted(out.glob("db=*/table=*")):
        df = spark.read.parquet(str(folder))
        schema = [(f.name, f.dataType.simpleString(), f.nullable) for f in df.schema.fields]
        rows = sorted((tuple(r) for r in df.collect()), key=repr)
        found[f"{folder.parent.name}/{folder.name}"] = (schema, rows)
    return found


def _same(spark: Any, files: list[Path], tmp: Path, *, lenient: bool = False, slice_bytes: int = 2048,
          source: str = "s") -> dict[str, Any]:
    old = dataframe_resolve(spark, files, tmp / "old", source=source, lenient_ddl=lenient,
                            slice_bytes=slice_bytes)
    new = run_resolve(spark, files, tmp / "new", source=source, lenient_ddl=lenient, slice_bytes=slice_bytes)
    want, got = tables_under(spark, tmp / "old"), tables_under(spark, tmp / "new")
    assert sorted(got) == sorted(want)
    for name in want:
        assert got[name][0] == want[name][0], f"{name}: schema"
        assert got[name][1] == want[name][1], f"{name}: rows"
    assert {(t.db, t.table): t.operations for t in new.tables} == old
    return got


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_golden_fixture_tables_equal_the_dataframe_path(spark: Any, scenario: str, tmp_path: Path) -> None:
    files = sorted((GOLDEN / scenario / "binlogs").iterdir())
    got = _same(spark, files, tmp_path, source=f"golden:{scenario}")
    if any(f.stat().st_size > 8192 for f in files):
        assert any(len(list((tmp_path / "new" / name).glob("*.parquet"))) > 1 for name in got), \
            "small slices must give several files"


def _corpus_files() -> list[Path]:
    """Corpus binlogs whose slices decode without a snapshot (lenient DDL, full images), as the tasks do
    it: each file is its own history."""
    from binlog_model.spark.datasource import plan
    from binlog_model.spark.reading import ReadOptions, decode_slice, pack_history

    require(CORPUS)
    chosen = []
    for path in (CORPUS / rel for rel in binlogs_under(CORPUS)):
        settings = {"ddl": "lenient", "image": "full", "sliceBytes": "4096"}
        try:
            history, slices = plan([path], **settings)
            options = ReadOptions.parse({"paths": str(path), **settings})
            packed = pack_history(history.to_json())
            if any([list(decode_slice(piece, packed, options)) for piece in slices]):   # every slice
                chosen.append(path)
        except BinlogError:
            continue        # needs a snapshot (rows for tables created before the file) or is incomplete
    return chosen


def test_corpus_tables_equal_the_dataframe_path(spark: Any, tmp_path: Path) -> None:
    files = _corpus_files()
    assert len(files) >= 5, files
    for n, path in enumerate(files):
        _same(spark, [path], tmp_path / str(n), lenient=True, slice_bytes=4096, source="corpus")


def test_mysql_history_with_ddl_between_files_equals_the_dataframe_path(spark: Any, mysql: Any, mysql_db: str,
                                                                         tmp_path: Path) -> None:
    db = mysql_db
    mysql.flush_and_collect()
    days = [
        [f"CREATE TABLE `{db}`.t (id INT PRIMARY KEY, v SMALLINT, s VARCHAR(5), d DATETIME(6), j JSON)",
         f"CREATE TABLE `{db}`.u (id BIGINT PRIMARY KEY, p DECIMAL(7,2), b BLOB)"]
        + [f"INSERT INTO `{db}`.t VALUES ({i}, {i}, 's{i}', '2024-01-02 03:04:05.{i:06d}', "
           f"'{{\"k\": {i}}}')" for i in range(1, 60)]
        + [f"INSERT INTO `{db}`.u VALUES ({i}, {i}.25, x'0{i % 10}ff')" for i in range(1, 40)],
        [f"ALTER TABLE `{db}`.t MODIFY v BIGINT, ADD COLUMN w INT DEFAULT 7",
         f"UPDATE `{db}`.t SET v = v * 1000000000 WHERE id < 20",
         f"RENAME TABLE `{db}`.u TO `{db}`.u2", f"DELETE FROM `{db}`.u2 WHERE id > 30"],
        [f"DROP TABLE `{db}`.t", f"CREATE TABLE `{db}`.t (id INT PRIMARY KEY, v INT, extra TEXT)",
         f"INSERT INTO `{db}`.t VALUES (1, 2, 'again'), (2, 3, NULL)",
         f"ALTER TABLE `{db}`.u2 DROP COLUMN b", f"UPDATE `{db}`.u2 SET p = p + 1"],
    ]
    files: list[Path] = []
    for day in days:
        mysql.execute(day)
        files += mysql.flush_and_collect(tmp_path / "binlogs")
    got = _same(spark, files, tmp_path, slice_bytes=4096)
    assert {f"db={db}/table=t", f"db={db}/table=u2"} <= set(got)


def test_out_is_replaced_as_a_whole_and_foreign_folders_are_refused(spark: Any, tmp_path: Path) -> None:
    from binlog_model.errors import ConfigError

    files = sorted((GOLDEN / "ddl_between_dml" / "binlogs").iterdir())
    out = tmp_path / "out"
    (out / "db=gone" / "table=old").mkdir(parents=True)
    (out / "db=gone" / "table=old" / "part-0.parquet").write_bytes(b"x")
    run_resolve(spark, files, out)
    assert not (out / "db=gone").exists(), "the previous tables are replaced, not mixed with the new ones"
    assert (out / "_SUCCESS").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.resolve-")]
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="did not write"):
        run_resolve(spark, files, out)
    assert (out / "notes.txt").exists()


def test_the_pre_pass_as_spark_tasks_equals_the_driver_scan(spark: Any, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A large input's pre-pass runs as Spark tasks (one per file): the same scans as the driver's; a file
    that fails in its task is scanned again on the driver, so the error is the driver scan's typed one."""
    from binlog_model.errors import BadMagicError
    from binlog_model.spark import prepass
    from binlog_model.spark.partitions import scan_files

    monkeypatch.setattr(prepass, "SPARK_SCAN_BYTES", 0)
    files = sorted(str(p) for d in SCENARIOS[:3] for p in (GOLDEN / d / "binlogs").iterdir())
    assert len(files) >= 2
    assert prepass.scan(spark, files, True) == scan_files(files)
    bad = tmp_path / "not-a-binlog.000001"
    bad.write_bytes(b"this is not a binlog")
    with pytest.raises(BadMagicError):
        prepass.scan(spark, [*files[:1], str(bad)], True)
