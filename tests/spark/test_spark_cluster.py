"""Spark beyond one machine, with real parts: a standalone cluster (a master and two 1-core workers, each a
JVM of its own on 127.0.0.1, started once for the module and stopped by pid) and moto's S3 server.

What is checked against local mode, row for row: the documented ``format("mysql-binlog")`` job over every
golden fixture and a multi-file MariaDB workload, from local files and from ``s3://`` URIs, in
``local[2]`` and on the cluster; ``binlog-model resolve --master spark://...`` with relative input paths;
the ``spark-pack`` recipe on executors whose Python lacks the package. Also: slices fetch only their byte
range from the object store (bytes served counted by the server), a Spark failure is one line naming the
root cause and the log file, and a missing input fails before any JVM starts. The job scripts are the
ones in docs/spark.md ("Cluster"), extracted from it, so the docs cannot rot.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests._paths import REPO

pytest.importorskip("pyspark")
pytest.importorskip("moto.server", reason="moto[server] (the S3-compatible test server) is not installed")
pytestmark = pytest.mark.spark

GOLDEN = REPO / "fixtures" / "golden" / "mariadb"
SCENARIOS = sorted(d.name for d in GOLDEN.iterdir() if (d / "binlogs").is_dir())
DOCS = REPO / "docs" / "spark.md"
# BINLOG_MODEL_FULL_CLUSTER=1: the fuller run (every fixture from S3 too); see docs/spark.md.
FULL = os.environ.get("BINLOG_MODEL_FULL_CLUSTER") == "1"
# One scenario resolved end to end (DDL between DML: the schema history matters).
RESOLVED = "ddl_between_dml"


def docs_script(name: str) -> str:
    """The ```python block of docs/spark.md whose first line is ``# <name>...``."""
    for block in re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S):
        if block.startswith(f"# {name}"):
            return str(block)
    raise AssertionError(f"docs/spark.md has no python block starting with '# {name}'")


@dataclass
class Env:
    work: Path
    cluster: Any
    s3: Any
    sets: dict[str, str]          # label -> binlog set (a directory or a URI prefix)
    sizes: dict[str, int]         # label -> bytes of its files
    bare: str                     # a Python without binlog-model (pyarrow only)
    pack: Path


def _workload(dest: Path) -> list[Path]:
    """Three binlog files from a throwaway MariaDB: inserts, updates, deletes, an ALTER in the middle."""
    from binlog_model.testing.mariadb import MariaDBServer

    with MariaDBServer(row_image="FULL", row_metadata="FULL") as server:
        server.execute(["CREATE DATABASE w",
                        "CREATE TABLE w.t (id INT PRIMARY KEY, qty INT, name VARCHAR(40), at DATETIME(6))"])
        for n in range(3):
            if n == 1:
                server.execute("ALTER TABLE t ADD COLUMN note TEXT AFTER qty", database="w")
            values = ", ".join(f"({n * 1000 + i}, {i}, 'name {i}', '2024-01-02 03:04:05.{i:06d}')"
                               for i in range(300))
            server.execute([f"INSERT INTO t (id, qty, name, at) VALUES {values}",
                            f"UPDATE t SET qty = qty + 1 WHERE id % 7 = {n}",
                            f"DELETE FROM t WHERE id % 11 = {n}", "FLUSH BINARY LOGS"], database="w")
        return server.flush_and_collect(dest, include_previous=True)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    from binlog_model.testing.mariadb import mariadb_available
    from binlog_model.testing.s3server import S3Server
    from binlog_model.testing.spark_cluster import SparkCluster, bare_python

    work = tmp_path_factory.mktemp("cluster")
    s3 = S3Server(log_dir=work)
    # Every executor inherits the node's object-store configuration, as on a real cluster.
    cluster = SparkCluster(workers=2, cores=1, memory="1g", work_dir=work / "nodes", extra_env=s3.env())
    (work / "nodes").mkdir()
    cluster.start(wait=False)           # the JVMs boot while the rest is prepared
    try:
        s3.start()
        sets: dict[str, str] = {}
        sizes: dict[str, int] = {}
        inputs = {f"golden/{name}": sorted((GOLDEN / name / "binlogs").iterdir()) for name in SCENARIOS}
        ok, _reason = mariadb_available()
        if ok:
            inputs["workload"] = _workload(work / "workload")
        for label, files in inputs.items():
            sets[f"file:{label}"] = "file://" + str(files[0].parent)
            sets[f"s3:{label}"] = f"s3://binlogs/{label}/"
            s3.upload(files, f"binlogs/{label}")
            sizes[label] = sum(f.stat().st_size for f in files)
        bare = bare_python(work / "bare")
        pack = work / "binlog_model_pack.zip"
        done = subprocess.run([sys.executable, "-m", "binlog_model.cli", "spark-pack", str(pack)],
                              capture_output=True, text=True, check=False, cwd=REPO)
        assert done.returncode == 0, done.stderr
        cluster.wait()
        yield Env(work, cluster, s3, sets, sizes, bare, pack)
    finally:
        cluster.stop()
        s3.stop()


def _installed() -> dict[str, str]:
    """spark-submit settings for "the package is installed on every node": this Python, this checkout."""
    return {"spark.pyspark.python": sys.executable, "spark.executorEnv.PYTHONPATH": str(REPO),
            "spark.executor.memory": "512m", "spark.driver.memory": "512m"}


def _conf_args(conf: dict[str, str]) -> list[str]:
    return [arg for key, value in conf.items() for arg in ("--conf", f"{key}={value}")]


def _canonical_rows(path: Path) -> list[dict[str, Any]]:
    """A changes_job output: rows in ``orderKey`` order; file names reduced to the base name (a local run
    names /abs/path/mysql-bin.000001, an S3 run s3://bucket/.../mysql-bin.000001)."""
    import pyarrow.parquet as pq

    from binlog_model._pb import binlog_event_pb2 as pb
    from binlog_model.io.files import base_name

    rows = pq.read_table(path).to_pylist()
    for row in rows:
        row["file"] = base_name(row["file"])
        if row["event"] is not None:
            event = pb.BinlogEvent.FromString(row["event"])
            event.position.file = base_name(event.position.file)
            row["event"] = event.SerializeToString(deterministic=True)
    key = ("fileSeq", "offset", "innerIndex", "eventIndex", "rowIndex")
    return sorted(rows, key=lambda r: tuple(r["orderKey"][k] for k in key))


def _changes_job(env: Env, master: str, labels: list[str], out: Path) -> subprocess.CompletedProcess[str]:
    from binlog_model.testing.spark_cluster import spark_submit

    script = env.work / "changes_job.py"
    script.write_text(docs_script("changes_job.py"), encoding="utf-8")
    args = [*_conf_args(_installed()), str(script), "file://" + str(out), *(env.sets[k] for k in labels)]
    if master == "cluster":
        return env.cluster.submit(args, env={"PYTHONPATH": str(REPO)})
    return spark_submit(["--master", master, *args], env={**env.s3.env(), "PYTHONPATH": str(REPO)})


def test_changes_job_on_the_cluster_and_from_s3_equals_local_mode(env: Env) -> None:
    labels = [k for k in env.sets if k.startswith("file:")]
    # From S3: the multi-file workload and the largest fixture (several slices); with FULL, every fixture.
    labels += [k for k in env.sets if k.startswith("s3:") and (
        FULL or k in ("s3:workload", "s3:golden/large_statement"))]
    env.s3.reset()
    local = _changes_job(env, "local[2]", labels, env.work / "changes-local")
    assert local.returncode == 0, local.stderr[-3000:]
    served_local = env.s3.served()
    env.s3.reset()
    cluster = _changes_job(env, "cluster", labels, env.work / "changes-cluster")
    assert cluster.returncode == 0, cluster.stderr[-3000:]
    served_cluster = env.s3.served()

    compared = 0
    for n, label in enumerate(labels):
        rows_local = _canonical_rows(env.work / "changes-local" / str(n))
        rows_cluster = _canonical_rows(env.work / "changes-cluster" / str(n))
        assert rows_cluster == rows_local, f"{label}: the cluster's rows differ from local[2]'s"
        if label.startswith("s3:"):
            # The same binlogs from the object store: the same rows as from the local files.
            twin = labels.index("file:" + label[3:])
            assert rows_local == _canonical_rows(env.work / "changes-local" / str(twin)), label
        assert rows_local, label
        compared += len(rows_local)
    assert compared > 1000 if "file:workload" in env.sets else compared > 100

    # The tasks ran on both workers' executors, not in the driver.
    executors = {Path(p).parts[-4] for p in env.cluster.executor_logs()}
    assert executors == {"worker-0", "worker-1"}

    # Ranged reads: the pre-pass reads each object once, each slice its own range (and 2 bytes per open for
    # the gzip check): twice the input at most, never a whole object per slice.
    s3_bytes = sum(env.sizes[k[3:]] for k in labels if k.startswith("s3:"))
    for served in (served_local, served_cluster):
        opens = sum(1 for r in served["requests"] if r[2] == "bytes=0-1")
        assert served["bytes"] == 2 * s3_bytes + 2 * opens, served["bytes"]
        mid_file = [r for r in served["requests"] if r[2] and not r[2].startswith("bytes=0-")]
        assert len(mid_file) >= 2, "slices after a file's first start mid-file, on a ranged read"


def test_slice_reads_fetch_only_their_range(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    """No Spark: one middle slice of the largest fixture read from S3 fetches its bytes and nothing else."""
    from binlog_model.spark.datasource import plan
    from binlog_model.spark.partitions import expand_paths, iter_slice_events

    for key, value in env.s3.env().items():
        monkeypatch.setenv(key, value)
    uri = env.sets["s3:golden/large_statement"]
    local = env.sets["file:golden/large_statement"]
    assert [Path(u).name for u in expand_paths([uri])] == [Path(p).name for p in expand_paths([local])]
    assert expand_paths([uri + "mysql-bin.00000[0-9]"]) == expand_paths([uri])
    history_s3, slices_s3 = plan([uri], sliceBytes="65536")
    history_local, slices_local = plan([local], sliceBytes="65536")
    assert history_s3.to_json() == history_local.to_json()
    assert [(s.start, s.end) for s in slices_s3] == [(s.start, s.end) for s in slices_local]
    assert len(slices_s3) >= 3
    middle = slices_s3[len(slices_s3) // 2]
    assert middle.start > 0 and middle.end is not None
    env.s3.reset()
    from_s3 = list(iter_slice_events(middle))
    served = env.s3.served()
    assert served["bytes"] == (middle.end - middle.start) + 2, served
    twin = slices_local[len(slices_local) // 2]
    assert [e.header.offset for e in from_s3] == [e.header.offset for e in iter_slice_events(twin)]


def _read_tables(out: Path) -> dict[str, list[dict[str, Any]]]:
    import pyarrow.parquet as pq

    from binlog_model.io.files import base_name

    tables = {}
    for folder in sorted(out.glob("db=*/table=*")):
        rows = pq.read_table(folder).to_pylist()
        for row in rows:
            row["binlog_file"] = base_name(row["binlog_file"])
        key = ("fileSeq", "offset", "innerIndex", "eventIndex", "rowIndex")
        tables[f"{folder.parent.name}/{folder.name}"] = sorted(
            rows, key=lambda r: tuple(r["binlog_order"][k] for k in key))
    return tables


@pytest.fixture(scope="module")
def resolved_locally(env: Env, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """``run_resolve`` of RESOLVED in local[2] (this process), the reference for the cluster runs."""
    from binlog_model.spark.job import run_resolve
    from binlog_model.spark.session import local_session

    out = tmp_path_factory.mktemp("resolved-local")
    spark = local_session("local[2]")
    run_resolve(spark, [str(GOLDEN / RESOLVED / "binlogs")], out, source="ppc:1")
    tables = _read_tables(out)
    assert tables and all(tables.values())
    return tables


def test_resolve_cli_on_the_cluster_with_relative_paths(env: Env, resolved_locally: dict[str, Any]) -> None:
    """Twice: the second run's executors start from the class archive an executor of the first run (or of
    an earlier one) wrote (``spark.jvm``: a cluster on this machine), and its tables are the same."""
    from binlog_model.spark import jvm

    relative = f"fixtures/golden/mariadb/{RESOLVED}/binlogs"
    for run in ("first", "second"):
        out = env.work / f"resolved-cli-{run}"
        done = subprocess.run(
            [sys.executable, "-m", "binlog_model.cli", "resolve", relative, "--out", str(out),
             "--source", "ppc:1", "--master", env.cluster.master_url, *_conf_args(_installed()),
             "--log-file", str(env.work / "cli.log")],
            capture_output=True, text=True, cwd=REPO, timeout=600, check=False,
            env={**os.environ, "PYTHONPATH": str(REPO), "SPARK_LOCAL_IP": "127.0.0.1"})
        assert done.returncode == 0, done.stderr[-3000:]
        assert _read_tables(out) == resolved_locally
        assert f"Spark's log: {env.work / 'cli.log'}" in done.stderr
        assert not [line for line in done.stderr.splitlines() if not line.startswith("[")], done.stderr
    if jvm._jcmd() is None:
        return                  # a JRE without jcmd: no executor archive (the tables were checked)
    newest_app = max(env.cluster.work_dir.glob("worker-*/app-*"), key=lambda p: p.name).name
    commands = [log.splitlines()[0] for path, log in env.cluster.executor_logs().items()
                if newest_app in path]
    assert len(commands) == 2, commands
    for command in commands:
        archive = re.search(r'"-XX:SharedArchiveFile=([^"]*spark-executor-[^"]*\.jsa)"', command)
        assert archive and Path(archive.group(1)).is_file(), command


@pytest.mark.skipif(not FULL, reason="the fuller run: BINLOG_MODEL_FULL_CLUSTER=1")
def test_resolve_every_golden_fixture_on_the_cluster(env: Env, tmp_path: Path) -> None:
    """``resolve`` without paths (every bundled fixture) on the cluster equals run_resolve in local[2]."""
    from binlog_model.spark.job import run_resolve
    from binlog_model.spark.session import local_session

    done = subprocess.run(
        [sys.executable, "-m", "binlog_model.cli", "resolve", "--out", str(tmp_path / "cluster"),
         "--lenient-ddl", "--master", env.cluster.master_url, *_conf_args(_installed())],
        capture_output=True, text=True, cwd=REPO, timeout=1200, check=False,
        env={**os.environ, "PYTHONPATH": str(REPO), "SPARK_LOCAL_IP": "127.0.0.1"})
    assert done.returncode == 0, done.stderr[-3000:]
    spark = local_session("local[2]")
    for name in SCENARIOS:
        run_resolve(spark, [str(GOLDEN / name / "binlogs")], tmp_path / "local" / name,
                    source=f"golden:{name}", lenient_ddl=True)
        assert _read_tables(tmp_path / "cluster" / name) == _read_tables(tmp_path / "local" / name), name


def test_packed_resolve_job_on_executors_without_the_package(env: Env,
                                                             resolved_locally: dict[str, Any]) -> None:
    """docs' resolve_job.py with the spark-pack zip; every Python Spark starts (the driver's, the planner's,
    the executors') is one that cannot import binlog-model; the binlogs come from S3."""
    from binlog_model.testing.spark_cluster import node_env

    missing = subprocess.run([env.bare, "-c", "import binlog_model"], capture_output=True, text=True,
                             check=False, env=node_env(), cwd=env.work)
    assert "No module named 'binlog_model'" in missing.stderr
    script = env.work / "resolve_job.py"
    script.write_text(docs_script("resolve_job.py"), encoding="utf-8")
    out = env.work / "resolved-packed"
    done = env.cluster.submit(
        ["--conf", f"spark.pyspark.python={env.bare}", "--conf", "spark.executor.memory=512m",
         "--conf", "spark.driver.memory=512m", "--py-files", str(env.pack), str(script),
         env.sets[f"s3:golden/{RESOLVED}"], "file://" + str(out)],
        env={"PYSPARK_DRIVER_PYTHON": env.bare}, cwd=str(env.work))
    assert done.returncode == 0, done.stderr[-3000:]
    assert _read_tables(out) == resolved_locally
    logs = "\n".join(env.cluster.executor_logs().values())
    assert "binlog-model: protobuf uses its pure-Python implementation" in logs


def test_resolve_failure_is_one_line_naming_the_cause_and_the_log(env: Env, tmp_path: Path) -> None:
    """The planner Python lacks the package: the user sees the ModuleNotFoundError, not Java, and the log."""
    log = tmp_path / "spark.log"
    # The CLI itself imports this checkout; PYTHONPATH is unset and the directory is not the checkout (a
    # Python worker has its working directory on sys.path), so the Spark workers cannot.
    runner = (f"import sys; sys.path.insert(0, {str(REPO)!r}); from binlog_model.cli import main; "
              "sys.exit(main())")
    env_vars = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON")}
    done = subprocess.run(
        [sys.executable, "-c", runner, "resolve", str(GOLDEN / "spec_example" / "binlogs"), "--out",
         str(tmp_path / "out"), "--master", "local[1]", "--conf", f"spark.pyspark.python={env.bare}",
         "--log-file", str(log)],
        capture_output=True, text=True, timeout=600, check=False, cwd=tmp_path,
        env={**env_vars, "SPARK_LOCAL_IP": "127.0.0.1"})
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if not line.startswith("[")]
    assert errors == [f"error: SparkJobError: ModuleNotFoundError: No module named 'binlog_model' "
                      f"(full Spark log: {log})"], done.stderr
    assert "ModuleNotFoundError" in log.read_text(encoding="utf-8")

    # The same command with the spark-pack zip (docs: "binlog-model resolve on a cluster") succeeds.
    done = subprocess.run(
        [sys.executable, "-c", runner, "resolve", str(GOLDEN / "spec_example" / "binlogs"), "--out",
         str(tmp_path / "out"), "--master", "local[1]", "--conf", f"spark.pyspark.python={env.bare}",
         "--py-files", str(env.pack), "--log-file", str(log), "--source", "ppc:1"],
        capture_output=True, text=True, timeout=600, check=False, cwd=tmp_path,
        env={**env_vars, "SPARK_LOCAL_IP": "127.0.0.1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("== ppc:1: 1 files, 4 row changes"), done.stdout


def test_missing_input_fails_before_spark_starts(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "binlog_model.cli", "resolve", str(tmp_path / "nope"),
                           "--out", str(tmp_path / "out"), "--log-file", str(tmp_path / "spark.log")],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 2
    assert done.stderr.strip() == (f"error: ConfigError: no binlog files match {str(tmp_path / 'nope')!r}: "
                                   "give binlog files, a folder holding them or a glob")
    assert not (tmp_path / "spark.log").exists()
