"""``resolve --stream`` (``run_resolve_stream``): typed tables kept current by a streaming query equal the
batch ``resolve`` over the same files, on real MySQL 9.7 and MariaDB binlogs arriving in rounds (the
``_stream_archive`` workload: DDL between rounds, a widened type, a rename, a gzip file, a growing active
file), run as the documented recipe: ``Trigger.AvailableNow`` once per round. A batch Spark runs again
after a crash (its commit-log entry gone) is skipped by batch id, and a publish cut short is finished.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")
from binlog_model.spark.incremental import read_table
from binlog_model.spark.job import run_resolve
from binlog_model.spark.session import local_session
from binlog_model.spark.stream_resolve import STATE_DIR, run_resolve_stream
from tests.spark._stream_archive import Archive, server_history, spark_run_on

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark() -> Any:
    return local_session("local[2]")


@pytest.fixture(scope="module", params=("mysql", "mariadb"))
def history(request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[Path]]:
    return server_history(request.getfixturevalue(request.param), request.param, "rstream",
                          tmp_path_factory.mktemp(f"files-{request.param}"))


def _table(spark: Any, folder: Path) -> list[tuple[Any, ...]]:
    df = read_table(spark, folder)
    cols = [c for c in df.columns if not c.startswith("binlog_") or c in ("binlog_operation",
                                                                          "binlog_generation", "binlog_file",
                                                                          "binlog_offset", "binlog_gtid")]
    return sorted((tuple(r) for r in df.select(*cols, "binlog_order").collect()), key=repr)


def _tables(out: Path) -> set[tuple[str, str]]:
    return {(d.name[3:], t.name[6:]) for d in out.glob("db=*") for t in d.glob("table=*")
            if any(t.glob("*.parquet"))}


def test_stream_tables_equal_batch_resolve(spark: Any, history: tuple[str, list[Path]],
                                           tmp_path: Path) -> None:
    db, files = history
    spark_run_on(db.split("_")[1], "mysql")
    archive = Archive(files, tmp_path / "archive", seed=4)
    out, ck = tmp_path / "tables", tmp_path / "ck"
    batches = 0
    for n, _ in enumerate(archive.rounds()):
        if n % 2:       # the recipe's scheduled runs, every other round (growing file, DDL, rename between)
            result = run_resolve_stream(spark, [archive.folder], out, ck, source="s:1",
                                        max_files_per_trigger=1, timeout=300)
            batches += result.batches
    assert batches >= 3
    full = run_resolve(spark, [archive.plain_copy(tmp_path / "plain")], tmp_path / "full", source="s:1")
    expected = {(t.db, t.table) for t in full.tables if t.path and t.db == db}
    assert expected == {(db, "t"), (db, "u2")}
    assert {k for k in _tables(out) if k[0] == db} == expected, "u's rows followed its rename"
    for _, table in sorted(expected):
        folder = f"db={db}/table={table}"
        assert _table(spark, out / folder) == _table(spark, tmp_path / "full" / folder), table
    assert not (out / "_staging").exists()

    # Spark runs the last batch again (as after a crash before its commit log entry): skipped by batch id.
    commits = sorted((ck / "spark" / "commits").glob("[0-9]*"), key=lambda p: int(p.name))
    commits[-1].unlink()
    (commits[-1].parent / f".{commits[-1].name}.crc").unlink(missing_ok=True)
    again = run_resolve_stream(spark, [archive.folder], out, ck, source="s:1", timeout=300)
    assert again.skipped == 1 and again.batches == 0
    for _, table in sorted(expected):
        folder = f"db={db}/table={table}"
        assert _table(spark, out / folder) == _table(spark, tmp_path / "full" / folder), table


def test_a_legacy_stream_state_cut_short_while_publishing_is_taken_over_and_finished(tmp_path: Path) -> None:
    """An output written before the stream kept a ``RunState``: its ``_stream.json`` says batch 3 was being
    published, one file moved, the process gone. The next query adopts that state (the batch stays
    published, so Spark's rerun of it is skipped) and finishes the moves before anything else."""
    import json

    from binlog_model.io.state import RunState, adopt_legacy_stream_state
    from binlog_model.runs.commit import StagedOutput
    from binlog_model.spark.stream_resolve import LEGACY_STATE_FILE

    out = tmp_path / "out"
    staged = out / "_staging" / "batch-000000003"
    for table in ("a", "b"):
        folder = staged / "db=d" / f"table={table}"
        folder.mkdir(parents=True)
        for n in range(2):
            (folder / f"part-{n}.parquet").write_bytes(b"x")
    (out / LEGACY_STATE_FILE).write_text(json.dumps({"batch": 3, "publishing": "batch-000000003"}))
    (out / "db=d" / "table=a").mkdir(parents=True)
    (staged / "db=d" / "table=a" / "part-0.parquet").rename(
        out / "db=d" / "table=a" / "batch-000000003-part-0.parquet")
    state = RunState.load(out / STATE_DIR)
    adopt_legacy_stream_state(state, out / LEGACY_STATE_FILE)
    StagedOutput(out).recover(state)
    for table in ("a", "b"):
        assert sorted(p.name for p in (out / "db=d" / f"table={table}").glob("*.parquet")) == [
            f"batch-000000003-part-{n}.parquet" for n in range(2)]
    again = RunState.load(out / STATE_DIR)
    assert (again.stream_batch, again.publishing) == (3, None)
    assert not (out / "_staging").exists() and not (out / LEGACY_STATE_FILE).exists()


def test_a_failing_stream_is_one_line(spark: Any, history: tuple[str, list[Path]], tmp_path: Path) -> None:
    from binlog_model.spark.failures import SparkJobError

    db, files = history
    spark_run_on(db.split("_")[1], "mariadb")
    archive = Archive(files, tmp_path / "archive", seed=8)
    archive.put(0, archive.cut(0, 0.5, 0.9))      # an older file cut short: damage
    archive.put(1)
    with pytest.raises(SparkJobError) as caught:
        run_resolve_stream(spark, [archive.folder], tmp_path / "out", tmp_path / "ck", timeout=300)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    assert "TruncatedEventError" in message and files[0].name in message


def test_cli_stream_needs_a_checkpoint(tmp_path: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "binlog_model.cli", "resolve", str(tmp_path), "--out",
                           str(tmp_path / "out"), "--stream"], capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: ConfigError: --stream needs the binlog folders (PATHS) and --checkpoint DIR, and takes no "
        "--state (the checkpoint is its state) or --database"]
