"""``binlog-model resolve`` end to end on real local Spark, in its own process (it stops its session)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests._paths import REPO

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark


def test_resolve_writes_parquet_and_prints_the_summary(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    binlogs = REPO / "fixtures" / "golden" / "mariadb" / "spec_example" / "binlogs"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    done = subprocess.run([sys.executable, "-m", "binlog_model.cli", "resolve", str(binlogs),
                           "--out", str(tmp_path), "--source", "ppc:1", "--master", "local[1]", "--progress"],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("== ppc:1: 1 files, 4 row changes")
    campaigns = next(line.split() for line in lines if line.split()[:1] == ["ppc.campaigns"])
    assert campaigns[1:] == ["2", "1", "1", "1", "6", "1"]    # INSERT UPDATE DELETE SCHEMA columns versions
    assert "decoded 1/1 files: 4 row changes" in done.stderr
    # --progress off a terminal: the one display's last line: bytes and slices done of the total, rows
    last = next(line for line in done.stderr.splitlines() if line.startswith("writing: done, "))
    shape = r"writing: done, (\S+ \S+) of \1, (\d+) of \2 slices, 4 rows \(.*/s\), in .*"
    assert re.fullmatch(shape, last), last
    table = pq.read_table(tmp_path / "db=ppc" / "table=campaigns")
    assert table.num_rows == 4
    assert {"cid", "binlog_operation", "binlog_order"} <= set(table.column_names)


def test_resolve_tables_writes_and_summarises_only_the_tables_kept(tmp_path: Path) -> None:
    """``resolve --tables/--exclude-tables``: Parquet and summary rows for the tables kept only; a pattern
    that matches nothing is warned about."""
    binlogs = REPO / "fixtures" / "golden" / "mariadb" / "multi_table" / "binlogs"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    done = subprocess.run([sys.executable, "-m", "binlog_model.cli", "resolve", str(binlogs), "--out",
                           str(tmp_path / "out"), "--master", "local[1]", "--tables", "shop.*",
                           "--exclude-tables", "shop.customers", "--tables", "nosuch.t"],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    names = [line.split()[0] for line in done.stdout.splitlines()[2:]]
    assert names == ["shop", "shop.orders"], done.stdout
    assert sorted(p.name for p in (tmp_path / "out").glob("db=*/table=*")) == ["table=orders"]
    assert "warning: table pattern 'nosuch.t' matched no table" in done.stderr


def test_stream_summary_has_the_batch_layout_and_no_empty_rows(tmp_path: Path) -> None:
    """``resolve --stream``'s per-table lines are the batch summary's (same header, same columns, same
    counts over the same binlogs), with no line for a table without row changes."""
    binlogs = REPO / "fixtures" / "golden" / "mariadb" / "ddl_between_dml" / "binlogs"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)

    def resolve(*args: str) -> list[str]:
        done = subprocess.run([sys.executable, "-m", "binlog_model.cli", "resolve", str(binlogs), "--source",
                               "s:1", "--master", "local[1]", *args], capture_output=True, text=True, env=env,
                              cwd=REPO, timeout=300, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.splitlines()

    batch = resolve("--out", str(tmp_path / "batch"))
    stream = resolve("--out", str(tmp_path / "stream"), "--stream", "--checkpoint", str(tmp_path / "ck"),
                     "--max-files-per-trigger", "1")
    assert batch[0].startswith("== s:1: 1 files, ")
    assert re.match(r"== s:1: \d+ batches \(0 already", stream[0]), stream
    assert batch[1].split() == ["table", "INSERT", "UPDATE", "DELETE", "SCHEMA", "columns", "versions"]
    assert stream[1:] == batch[1:], "\n".join(stream + batch)
    rows = [line.split() for line in batch[2:]]
    # the last six fields: INSERT UPDATE DELETE SCHEMA columns versions ("db (database)" names a database)
    assert rows and all(sum(map(int, row[-6:-2])) > 0 for row in rows), batch


def test_resolve_reads_a_directory_with_gtid_index_files_as_its_binlogs_only(tmp_path: Path) -> None:
    """A directory as MariaDB 11.4+ leaves it (``binlog.000001``, ``binlog.000001.idx``, ``binlog.index``):
    the CLI reads one binlog file from it, also when a glob that matches the side files names it too."""
    from tests.unit.test_file_reader import gtid_index_directory

    logs = gtid_index_directory(tmp_path)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    done = subprocess.run([sys.executable, "-m", "binlog_model.cli", "resolve", str(logs),
                           str(logs / "binlog.0*"), "--out", str(tmp_path / "out"), "--source", "idx:1",
                           "--master", "local[1]"],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[0].startswith("== idx:1: 1 files, "), done.stdout
    assert "decoded 1/1 files" in done.stderr
    assert "writing:" not in done.stderr       # no --progress off a terminal: no progress lines


def test_a_first_run_leaves_the_driver_class_archive_and_the_next_runs_with_it(tmp_path: Path) -> None:
    """The driver JVM's class archive (``spark.jvm``): a run that finds none has its JVM write one as it
    exits and keeps it once the JVM exited cleanly (no temporary left); the next run starts with it and
    gives the same tables."""
    import pyarrow.parquet as pq

    binlogs = REPO / "fixtures" / "golden" / "mariadb" / "spec_example" / "binlogs"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, BINLOG_MODEL_CACHE=str(tmp_path / "cache"))
    tables = []
    for run in ("first", "second"):
        done = subprocess.run([sys.executable, "-m", "binlog_model.cli", "resolve", str(binlogs),
                               "--out", str(tmp_path / run), "--master", "local[1]"],
                              capture_output=True, text=True, env=env, cwd=REPO, timeout=300, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        kept = sorted(p.name for p in (tmp_path / "cache" / "jvm").iterdir())
        assert len(kept) == 1 and kept[0].endswith(".jsa"), kept
        assert (tmp_path / "cache" / "jvm" / kept[0]).stat().st_size > 1 << 20
        tables.append(pq.read_table(tmp_path / run / "db=ppc" / "table=campaigns").to_pylist())
    assert tables[0] == tables[1] and len(tables[0]) == 4


def test_the_jobs_python_workers_import_the_installed_pyspark_not_sparks_zip(tmp_path: Path) -> None:
    """A command-line job's context (``local_context(quick_start=True)``) names ``spark.daemon``: its Python
    workers find pyspark where this interpreter has it installed (with bytecode), not in Spark's zip."""
    import pyspark

    script = ("from binlog_model.spark.session import local_context\n"
              "sc = local_context('local[1]', quick_start=True)\n"
              "print(sc.getConf().get('spark.python.daemon.module'))\n"
              "def where(_):\n"
              "    import sys, pyspark, pyspark.worker\n"
              "    return [pyspark.worker.__file__] + [p for p in sys.path if p.endswith('pyspark.zip')]\n"
              "print(sc.parallelize([0], 1).map(where).collect()[0])\n"
              "sc.stop()\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_SUBMIT_ARGS")}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    module, found = done.stdout.splitlines()[-2:]
    assert module == "binlog_model.spark.daemon"
    assert found == repr([str(Path(pyspark.__file__).parent / "worker.py")])
