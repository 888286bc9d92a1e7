"""``binlog-model resolve`` failures read as one line with the cause, the slice and the remedy, and Spark's
log file: a Python worker that dies, one that runs out of memory, and the JVM out of heap (the task's
result too big for a 512m driver), each made real inside the task by ``BINLOG_MODEL_TEST_FAULT``. Never a
pyspark or Py4J traceback, never ``Connection refused``, on the terminal; the table folder untouched."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests._paths import REPO

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark

BINLOGS = REPO / "fixtures" / "golden" / "mariadb" / "ddl_between_dml" / "binlogs"


def _resolve(tmp_path: Path, fault: str, *extra: str
             ) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    log, out = tmp_path / "spark.log", tmp_path / "out"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYTHONPATH=str(REPO),
               BINLOG_MODEL_TEST_FAULT=fault)
    done = subprocess.run([sys.executable, "-m", "binlog_model.cli", "resolve", str(BINLOGS), "--out",
                           str(out), "--master", "local[1]", "--log-file", str(log), *extra],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300, check=False)
    return done, log, out


def _one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    errors = [line for line in done.stderr.splitlines() if not line.startswith("[")]
    assert len(errors) == 1, done.stderr
    for noise in ("Traceback", "Py4J", "Connection refused", "pyspark", "java."):
        assert noise not in done.stderr, done.stderr
    return errors[0]


@pytest.mark.parametrize(("fault", "says"), [
    ("exit:0", "error: SparkJobError: a Python worker crashed or was killed while writing slice "
               "mysql-bin.000001@0; lower --slice-mb"),
    ("memory:0", "error: SparkJobError: a Python worker ran out of memory (MemoryError) while writing slice "
                 "mysql-bin.000001@0; lower --slice-mb"),
])
def test_a_python_worker_that_dies_is_one_line(tmp_path: Path, fault: str, says: str) -> None:
    done, log, out = _resolve(tmp_path, fault)
    line = _one_error_line(done)
    assert line.startswith(says), line
    assert line.endswith(f"(full Spark log: {log})")
    assert not out.exists(), "nothing is published"
    assert not [p for p in tmp_path.iterdir() if ".resolve-" in p.name], "the staging folder is removed"


def test_jvm_out_of_memory_is_one_line_naming_the_setting(tmp_path: Path) -> None:
    done, log, _out = _resolve(tmp_path, "jvm:0", "--driver-memory", "512m")
    line = _one_error_line(done)
    assert line == ("error: SparkJobError: Spark JVM out of memory (Java heap space) while writing slice "
                    "mysql-bin.000001@0; raise --driver-memory (now 512m; in local mode the tasks run in "
                    f"the driver's JVM) or lower --slice-mb (full Spark log: {log})"), line
    assert "java.lang.OutOfMemoryError" in log.read_text(encoding="utf-8")


def test_a_bad_memory_size_is_refused_before_spark_starts(tmp_path: Path) -> None:
    done, log, _out = _resolve(tmp_path, "", "--executor-memory", "lots")
    assert done.returncode == 2
    assert done.stderr.strip() == ("error: ConfigError: --executor-memory takes a size such as 1g or 512m, "
                                   "got 'lots'")
    assert not log.exists()


def test_a_jvm_that_does_not_start_is_one_line_with_its_own_reason(tmp_path: Path) -> None:
    """A driver memory the JVM refuses: the JVM's own reason, not pyspark's JAVA_GATEWAY_EXITED."""
    done, log, _out = _resolve(tmp_path, "", "--driver-memory", "1k")
    line = _one_error_line(done)
    assert line == ("error: SparkJobError: the Spark JVM did not start (Too small maximum heap); check "
                    "--driver-memory (now 1k), the spark.driver.* settings given with --conf, and JAVA_HOME "
                    f"(full Spark log: {log})"), line
    assert "GATEWAY" not in done.stderr


def _late_python(tmp_path: Path, late_starts: int) -> Path:
    """A PYSPARK_PYTHON whose first ``late_starts`` stream source workers start 12 s late: past the fixed
    10 s Spark gives that worker to connect back, as on a machine too busy to start it in time."""
    counter = tmp_path / "starts"
    wrapper = tmp_path / "late-python"
    wrapper.write_text(f"""#!/bin/sh
case "$*" in *python_streaming_source_runner*)
  n=$(cat {counter} 2>/dev/null || echo 0)
  echo $((n + 1)) > {counter}
  [ "$n" -lt {late_starts} ] && sleep 12 ;;
esac
exec {sys.executable} "$@"
""")
    wrapper.chmod(0o755)
    return wrapper


def test_a_stream_worker_that_starts_late_is_started_again(tmp_path: Path) -> None:
    """``resolve --stream``: the stream source's worker misses Spark's fixed 10 s once; the query is started
    again from its checkpoint and finishes, with the same tables as a run that was not disturbed."""
    def stream(out: Path, python: str) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, PYSPARK_PYTHON=python, PYTHONPATH=str(REPO))
        return subprocess.run([sys.executable, "-m", "binlog_model.cli", "resolve", str(BINLOGS), "--stream",
                               "--out", str(out), "--checkpoint", str(out.with_suffix(".ck")), "--master",
                               "local[1]", "--no-progress"], capture_output=True, text=True, env=env,
                              cwd=tmp_path, timeout=600, check=False)

    late = stream(tmp_path / "late", str(_late_python(tmp_path, 1)))
    assert late.returncode == 0, late.stderr
    assert "did not start within Spark's 10 s" in late.stderr and "starting the query again" in late.stderr
    calm = stream(tmp_path / "calm", sys.executable)
    assert calm.returncode == 0, calm.stderr
    assert _rows(tmp_path / "late") == _rows(tmp_path / "calm") != {}


def _rows(out: Path) -> dict[str, list[Any]]:
    """Each table's rows, as the output's manifest commits them."""
    import pyarrow.parquet as pq

    from binlog_model.sinks.publish import committed_files

    found = {}
    for folder in sorted(out.glob("db=*/table=*")):
        db, table = folder.parent.name.split("=", 1)[1], folder.name.split("=", 1)[1]
        rows = [row for path in committed_files(str(out), db, table) or []
                for row in pq.read_table(path).to_pylist()]
        found[f"{db}.{table}"] = sorted(rows, key=repr)
    return found
