"""The main job: binlog files → per-table typed Parquet, with a per-table summary.

Strategy: one read of the ``mysql-binlog`` source (cached, full row images so each typed row is a whole
row), the schema history planned once on the driver, then one ``typed_frame`` write per table into
``OUT/db=<db>/table=<table>/`` (Hive-style directories, so the tree reads back partitioned by database and
table). Progress (slices done of total while decoding, rows/s) goes to a callback. ``check_java`` runs
``java -version`` first so a missing or too old Java is a one-line ``SparkSetupError``, not a JVM trace.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from binlog_model.errors import BinlogError
from binlog_model.sinks import parquet

__all__ = ["ResolveResult", "SparkJobError", "SparkSetupError", "TableSummary", "check_java", "local_session",
           "root_cause", "run_resolve"]


class SparkSetupError(BinlogError):
    """Spark cannot run here (no Java 17+, no pyspark)."""


class SparkJobError(BinlogError):
    """A Spark job failed; the message is one line: the root cause (for a library error: its type, and the
    file, offset, table and statement it names; else the last exception line of the Python traceback),
    and where the full log is when there is one."""

    @classmethod
    def from_spark(cls, err: Exception, log_file: str | None = None) -> SparkJobError:
        where = f" (full Spark log: {log_file})" if log_file else ""
        return cls((root_cause(str(err)) or type(err).__name__) + where)


_PY_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*)(: .*)?$")


def root_cause(text: str) -> str:
    """The line that says what went wrong in a Spark error's text: a library error (``DecodeError: ...``,
    the task's own), else the exception line closing the last Python traceback in it (what a
    ``ModuleNotFoundError`` on an executor looks like), else the first line."""
    found = re.findall(r"binlog_model\.errors\.(\w+Error): (.*)", text)
    if found:
        name, message = found[-1]
        return f"{name}: {message}"
    start = text.rfind("Traceback (most recent call last):")
    if start >= 0:
        for line in text[start:].splitlines()[1:]:
            if not line.strip() or line[0].isspace() or line.startswith(("Traceback", "During handling",
                                                                          "The above exception")):
                continue
            m = _PY_EXCEPTION_LINE.match(line.strip())
            if m:
                return m.group(1).rsplit(".", 1)[-1] + (m.group(2) or "")
            break
    stripped = text.strip()
    return stripped.splitlines()[0] if stripped else ""


@dataclass
class TableSummary:
    db: str
    table: str
    operations: dict[str, int] = field(default_factory=dict)
    columns: int = 0
    schema_versions: int = 0
    path: str = ""
    untyped: bool = False


@dataclass
class ResolveResult:
    source: str
    files: int
    rows: int
    seconds: float
    tables: list[TableSummary]


def spark_errors() -> tuple[type[Exception], ...]:
    """The exception types a failing Spark job raises in the driver (PySpark's and py4j's), for callers
    outside this package that must not import pyspark themselves; ``SparkSetupError`` without pyspark."""
    try:
        from py4j.protocol import Py4JError
        from pyspark.errors import PySparkException
    except ImportError as err:
        raise SparkSetupError("pyspark is not installed: pip install 'binlog-model[spark]'") from err
    return (PySparkException, Py4JError)


def check_java(java: str | None = None) -> int:
    """The major Java version on PATH (or ``JAVA_HOME``); ``SparkSetupError`` when absent or < 17."""
    exe = java or (os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME")
                   else shutil.which("java"))
    if not exe or not os.path.exists(exe):
        raise SparkSetupError("Java 17 or later is needed for Spark and no `java` was found: install a JDK "
                              "(e.g. apt-get install openjdk-17-jre-headless) or set JAVA_HOME")
    try:
        done = subprocess.run([exe, "-version"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError) as err:
        raise SparkSetupError(f"cannot run {exe} -version: {err}") from err
    m = re.search(r'version "(\d+)(?:\.(\d+))?', done.stderr + done.stdout)
    if not m:
        raise SparkSetupError(f"cannot tell the Java version from `{exe} -version`: {done.stderr.strip()!r}")
    major = int(m.group(1)) if m.group(1) != "1" else int(m.group(2) or 0)
    if major < 17:
        raise SparkSetupError(f"Spark 4 needs Java 17 or later; {exe} is Java {major}")
    return major


def local_session(master: str = "local[2]", *, app: str = "binlog-model",
                  conf: Mapping[str, str] | None = None, log_level: str = "ERROR") -> Any:
    """A SparkSession on ``master`` (local by default; ``spark://...``, ``yarn`` ... work too) whose Python
    workers use this interpreter unless ``conf`` names another (``spark.pyspark.python``); the data source
    registered. ``conf`` entries override the small-session defaults."""
    try:
        from pyspark.sql import SparkSession
    except ImportError as err:
        raise SparkSetupError("pyspark is not installed: pip install 'binlog-model[spark]'") from err
    if conf and conf.get("spark.pyspark.python"):
        # pyspark takes the Python of its workers (the data source's planner too) from this variable;
        # spark-submit sets it from the same setting.
        os.environ["PYSPARK_PYTHON"] = conf["spark.pyspark.python"]
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    settings = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2", "spark.driver.memory": "1g",
                "spark.sql.session.timeZone": "UTC", "spark.ui.showConsoleProgress": "false", **(conf or {})}
    builder = SparkSession.builder.master(master).appName(app)
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(log_level)
    from binlog_model.spark import register
    register(spark)
    return spark


def _watch(spark: Any, report: Callable[[str], None], stop: threading.Event, total: int) -> None:
    tracker = spark.sparkContext.statusTracker()
    last = ""
    while not stop.wait(1.0):
        done = 0
        for stage_id in tracker.getActiveStageIds():
            info = tracker.getStageInfo(stage_id)
            if info is not None and info.numTasks == total:
                done = max(done, info.numCompletedTasks)
        text = f"decoding: {done}/{total} slices done"
        if done and text != last:
            report(text)
            last = text


def run_resolve(spark: Any, paths: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str], *,
                source: str = "", snapshot: str | None = None, lenient_ddl: bool = False,
                always_include: Sequence[str] = (), slice_bytes: int = 64 << 20,
                progress: Callable[[str], None] | None = None,
                state_dir: str | os.PathLike[str] | None = None,
                database: str | None = None) -> ResolveResult:
    """Resolve ``paths`` (local paths or URIs: ``s3://``, ``gs://``, ``hdfs://``, ``file://``) into typed
    per-table Parquet under ``out`` (a local directory, made absolute, or any URI Spark's writer accepts);
    return the per-table summary.

    With ``state_dir`` the run is incremental (``binlog_model.spark.incremental``): only what is new since
    the last run with that state is read, and its Parquet files are added to the table folders (a local
    ``out`` only: the state commits files by renaming them). ``StateLockedError`` while another run holds
    ``state_dir``."""
    if state_dir is not None:
        from binlog_model.io.state import lock_state

        # Held from before the state is read to the publish: a concurrent run would recover away our staging.
        with lock_state(state_dir):
            return _resolve_incremental(spark, paths, Path(out), Path(state_dir), source=source,
                                        snapshot=snapshot, lenient_ddl=lenient_ddl,
                                        always_include=always_include, slice_bytes=slice_bytes,
                                        progress=progress, database=database)
    import json

    from binlog_model.io.files import absolute_name
    from binlog_model.spark.datasource import plan, save_plan
    from binlog_model.spark.partitions import expand_paths
    from binlog_model.spark.typed import table_lineages

    say = progress or (lambda _text: None)
    started = time.monotonic()
    files = expand_paths(paths)         # local paths absolute: executors run in other directories
    out = absolute_name(out)
    options = {"paths": json.dumps(files), "source": source, "image": "full",
               "ddl": "lenient" if lenient_ddl else "strict", "sliceBytes": str(slice_bytes),
               # Two slices per core at least, so a few large files still keep every core busy.
               "minSlices": str(2 * max(1, spark.sparkContext.defaultParallelism))}
    if snapshot:
        options["snapshot"] = snapshot
    if always_include:
        options["alwaysInclude"] = ",".join(always_include)
    plan_dir = tempfile.TemporaryDirectory(prefix="binlog-model-plan-")
    if snapshot and database:
        # A dump without USE read with --database: hand the data source the history it makes.
        from binlog_model.io.snapshots import load_snapshot, save_history
        options["snapshot"] = os.path.join(plan_dir.name, "snapshot.json")
        save_history(load_snapshot(snapshot, lenient=lenient_ddl, database=database), options["snapshot"])
    history, slices = plan(files, **{k: v for k, v in options.items() if k != "paths"})
    lineages = table_lineages(history)
    say(f"planned {len(files)} files as {len(slices)} slices; {len(history.entries)} DDL statements")
    # The data source reuses this plan instead of running the pre-pass over every byte again.
    options["planFile"] = os.path.join(plan_dir.name, "plan.json")
    save_plan(options["planFile"], files, history, slices)
    try:
        return _resolve(spark, files, out, options, lineages, say, started, source, len(slices))
    finally:
        plan_dir.cleanup()


def _resolve_incremental(spark: Any, paths: Sequence[str | os.PathLike[str]], out: Path, state_dir: Path, *,
                         source: str, snapshot: str | None, lenient_ddl: bool, always_include: Sequence[str],
                         slice_bytes: int, progress: Callable[[str], None] | None,
                         database: str | None) -> ResolveResult:
    """``run_resolve`` with a state: plan the new part, write it staged, commit, publish."""
    import json

    from binlog_model.incremental import snapshot_digest
    from binlog_model.io.snapshots import load_snapshot
    from binlog_model.io.state import RunState, StateMismatchError
    from binlog_model.spark import incremental as inc
    from binlog_model.spark.datasource import save_plan
    from binlog_model.spark.partitions import expand_paths
    from binlog_model.spark.typed import table_lineages

    say = progress or (lambda _text: None)
    started = time.monotonic()
    state = RunState.load(state_dir)
    shaping = {"command": "resolve", "source": source, "always_include": sorted(always_include),
               "lenient_ddl": lenient_ddl, "database": database, "out": str(out.resolve())}
    state.check_options(shaping)
    digest = snapshot_digest(snapshot)
    if not state.fresh and digest is not None and state.options.get("snapshot") not in (None, digest):
        raise StateMismatchError(f"--snapshot differs from the one the state in {state_dir} started with; "
                                 "later runs need no --snapshot (the state holds the schema)")
    inc.recover(state, out)
    state.options = {**shaping, "snapshot": state.options.get("snapshot", digest)}
    files = [Path(f) for f in expand_paths(paths)]   # incremental runs read local files (renames commit)
    first = load_snapshot(snapshot, lenient=lenient_ddl, database=database) if state.history is None else None
    history, slices, scans, starts = inc.plan_from_state(
        state, files, first if first is not None else load_snapshot(None), verify_checksum=True,
        slice_bytes=slice_bytes, min_slices=2 * max(1, spark.sparkContext.defaultParallelism))
    if state.position is not None:
        say(f"resuming at {state.position['file']}:{state.position['offset']}")
    paths_now = [s.path for s in starts]
    options = {"paths": json.dumps(paths_now), "source": source, "image": "full",
               "ddl": "lenient" if lenient_ddl else "strict", "sliceBytes": str(slice_bytes)}
    if always_include:
        options["alwaysInclude"] = ",".join(always_include)
    staged = inc.staging_dir(out, state)
    say(f"planned {len(paths_now)} files as {len(slices)} slices; {len(history.entries)} DDL statements")
    plan_dir = tempfile.TemporaryDirectory(prefix="binlog-model-plan-")
    options["planFile"] = os.path.join(plan_dir.name, "plan.json")
    save_plan(options["planFile"], paths_now, history, slices)
    try:
        result = _resolve(spark, paths_now, staged, options, table_lineages(history), say, started, source,
                          len(slices))
    finally:
        plan_dir.cleanup()
    inc.commit_and_publish(state, out, staged, history, scans, starts)
    for table in result.tables:
        if table.path:
            table.path = str(out / Path(table.path).relative_to(staged))
    say(f"committed run {state.runs}: state at {state.position['file'] if state.position else '-'}:"
        f"{state.position['offset'] if state.position else '-'}")
    return result


def _resolve(spark: Any, files: list[str], out: str | os.PathLike[str], options: dict[str, str],
             lineages: dict[tuple[str, str], Any], say: Callable[[str], None], started: float, source: str,
             total_slices: int) -> ResolveResult:
    """``run_resolve`` after planning: decode once (cached), count, write one typed table at a time."""
    from pyspark.sql import functions as F

    from binlog_model.spark.typed import typed_frame, untyped_lineage

    parquet.configure(spark)            # timestamps as INT64 microseconds, not Spark's legacy INT96
    changes = spark.read.format("mysql-binlog").options(**options).load().cache()
    decode_started = time.monotonic()
    stop = threading.Event()
    watcher = threading.Thread(target=_watch, args=(spark, say, stop, total_slices), daemon=True)
    watcher.start()
    try:
        counts = changes.groupBy("db", "table", "operation").count().collect()
    finally:
        stop.set()
        watcher.join()
    total = sum(r["count"] for r in counts if r["operation"] != "SCHEMA")
    elapsed = max(time.monotonic() - decode_started, 1e-9)
    say(f"decoded {len(files)}/{len(files)} files: {total} row changes, {total / elapsed:,.0f} rows/s")

    # Rows are counted per logged name; a table's lineage gathers the names it was logged under (renames).
    logged: dict[tuple[str, str], dict[str, int]] = {}
    for r in counts:
        logged.setdefault((r["db"], r["table"]), {})[r["operation"]] = r["count"]
    by_table: dict[tuple[str, str], TableSummary] = {}
    owners: dict[tuple[str, str], int] = {}
    for key, lineage in lineages.items():
        summary = by_table[key] = TableSummary(key[0], key[1])
        for name in lineage.logged_names:
            owners[name] = owners.get(name, 0) + 1
            for op, count in logged.get(name, {}).items():
                summary.operations[op] = summary.operations.get(op, 0) + count
    for name, ops in logged.items():
        if name not in owners:
            by_table[name] = TableSummary(name[0], name[1], dict(ops))
    keys = sorted(k for k, s in by_table.items() if set(s.operations) - {"SCHEMA"})
    for n, key in enumerate(keys, 1):
        summary = by_table[key]
        lineage = lineages.get(key)
        if lineage is not None and any(owners.get(name, 0) > 1 for name in lineage.logged_names):
            # A name two lineages were logged under (renamed away, then re-created): count its own rows.
            typed_counts = typed_frame(changes, lineage).groupBy("binlog_operation").count().collect()
            schema_events = summary.operations.get("SCHEMA")
            summary.operations = {r["binlog_operation"]: r["count"] for r in typed_counts}
            if schema_events:
                summary.operations["SCHEMA"] = schema_events
        if lineage is None:
            # Not in the history (lenient DDL): written untyped, and said so.
            names = [r[0] for r in changes.where((F.col("db") == key[0]) & (F.col("table") == key[1]))
                     .select(F.explode(F.concat(F.coalesce(F.map_keys("after"), F.array()),
                                                F.coalesce(F.map_keys("before"), F.array()))).alias("key"))
                     .distinct().orderBy("key").collect()]
            lineage = untyped_lineage(key[0], key[1], names)
            summary.untyped = True
            say(f"{key[0]}.{key[1]} has no schema in the history: its columns are written as strings")
        target = parquet.write_table(typed_frame(changes, lineage), out, key[0], key[1])
        summary.columns = len(lineage.columns)
        summary.schema_versions = len(lineage.versions)
        summary.path = target
        say(f"wrote {n}/{len(keys)} tables: {key[0]}.{key[1]}")
    for key, summary in by_table.items():
        lineage = lineages.get(key)
        if lineage is not None and not summary.columns and lineage.columns:
            summary.columns = len(lineage.columns)
            summary.schema_versions = len(lineage.versions)
    changes.unpersist()
    tables = sorted(by_table.values(), key=lambda s: (s.db, s.table))
    return ResolveResult(source, len(files), total, time.monotonic() - started, tables)
