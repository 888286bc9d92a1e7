"""The main job: binlog files → per-table typed Parquet, with a per-table summary.

Strategy: the schema history and the slices are planned once on the driver (the ``mysql-binlog`` source's
pre-pass and slicing); then one Spark task per slice (an RDD of slice descriptors, ``map`` then ``collect``
of small results) decodes its slice with full row images, turns it into typed rows for every table it
meets and writes them with pyarrow (``typed_write``), straight from Python: no cache of the decoded archive,
no JVM rows. Each task commits its files into a staging tree beside ``OUT``; the driver sums the tasks'
counts into the per-table summary and publishes the tree as ``OUT/db=<db>/table=<table>/`` in one atomic
exchange (``sinks.parquet``; Hive-style directories, so the tree reads back partitioned by database and
table). Steps (planned, decoded, published) go to a callback; the slices done of the total, read from
Spark's status tracker on the driver, go to the one progress display (``runs.progress``) the caller gives
as ``display``. ``check_java`` runs
``java -version`` first so a missing or too old Java is a one-line ``SparkSetupError``, not a JVM trace.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from binlog_model.errors import BinlogError
from binlog_model.io.documents import log_tail
from binlog_model.sinks import parquet

__all__ = ["LOG_FILE_CONF", "ResolveResult", "SparkJobError", "SparkSetupError", "TableSummary", "check_java",
           "describe_failure", "local_session", "root_cause", "run_resolve"]


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


def local_context(master: str = "local[2]", *, app: str = "binlog-model",
                  conf: Mapping[str, str] | None = None, log_level: str = "ERROR",
                  create_archive: bool = False, quick_start: bool = False) -> Any:
    """A SparkContext on ``master`` (local by default; ``spark://...``, ``yarn`` ... work too) whose Python
    workers use this interpreter unless ``conf`` names another (``spark.pyspark.python``). Enough for
    ``run_resolve``, whose tasks are plain RDD tasks: a SparkSession's start (the SQL engine's classes)
    costs seconds it does not need. A driver JVM this call launches starts with ``jvm``'s options
    (``create_archive``, ``quick_start``: see ``jvm.driver_java_options``); with ``quick_start`` its Python
    daemons run ``spark.daemon`` where the executors can import it. ``conf`` entries override the
    small-session defaults."""
    try:
        from pyspark import SparkConf, SparkContext
        from pyspark.find_spark_home import _find_spark_home
    except ImportError as err:
        raise SparkSetupError("pyspark is not installed: pip install 'binlog-model[spark]'") from err
    from binlog_model.spark.daemon import DAEMON_MODULE, executors_import_package
    from binlog_model.spark.jvm import (
        driver_java_options,
        executor_java_options,
        hot_class_path,
        is_local_cluster,
        is_local_master,
    )

    if conf and conf.get("spark.pyspark.python"):
        # pyspark takes the Python of its workers (the data source's planner too) from this variable;
        # spark-submit sets it from the same setting.
        os.environ["PYSPARK_PYTHON"] = conf["spark.pyspark.python"]
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    settings = {"spark.ui.enabled": "false", "spark.driver.memory": "1g",
                "spark.ui.showConsoleProgress": "false", **(conf or {})}
    spark_home = _find_spark_home()
    if SparkContext._gateway is None and "PYSPARK_GATEWAY_PORT" not in os.environ:
        # This call launches the driver's JVM (spark-submit reads these options): its quick start.
        class_path = hot_class_path(settings.get("spark.driver.extraClassPath"), spark_home)
        if class_path:
            settings["spark.driver.extraClassPath"] = class_path
        settings["spark.driver.extraJavaOptions"] = driver_java_options(
            settings.get("spark.driver.extraJavaOptions"), spark_home,
            _archive_key(settings, class_path, runs_tasks=is_local_master(master)),
            create_archive=create_archive, quick_start=quick_start)
    if quick_start:
        class_path = settings.get("spark.executor.extraClassPath", "")
        if is_local_cluster(master):        # a remote node's jars are elsewhere
            class_path = hot_class_path(class_path, spark_home)
            if class_path:
                settings["spark.executor.extraClassPath"] = class_path
        settings["spark.executor.extraJavaOptions"] = executor_java_options(
            settings.get("spark.executor.extraJavaOptions"), master, spark_home,
            _archive_key(settings, class_path), create_archive=create_archive)
        if executors_import_package(master, settings):
            settings["spark.python.daemon.module"] = DAEMON_MODULE
    spark_conf = SparkConf().setMaster(master).setAppName(app)
    for key, value in settings.items():
        spark_conf.set(key, value)
    context = SparkContext.getOrCreate(spark_conf)
    context.setLogLevel(log_level)
    return context


def _archive_key(settings: Mapping[str, str], class_path: str, *, runs_tasks: bool = False) -> str:
    """What besides Spark's jars a JVM's class archive depends on: the added jars and class path, and for a
    driver whether it runs the tasks too (``local[N]``: it also loads the executor's classes)."""
    return f"{settings.get('spark.jars') or ''}|{class_path}{'|tasks' if runs_tasks else ''}"


def local_session(master: str = "local[2]", *, app: str = "binlog-model",
                  conf: Mapping[str, str] | None = None, log_level: str = "ERROR",
                  create_archive: bool = False, quick_start: bool = False) -> Any:
    """A SparkSession on ``local_context``'s context, the data source registered (what DataFrame users and
    ``resolve --stream`` need)."""
    from pyspark.sql import SparkSession

    local_context(master, app=app, conf=conf, log_level=log_level, create_archive=create_archive,
                  quick_start=quick_start)
    builder = SparkSession.builder
    for key, value in {"spark.sql.shuffle.partitions": "2", "spark.sql.session.timeZone": "UTC",
                       **{k: v for k, v in (conf or {}).items() if k.startswith("spark.sql.")}}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    from binlog_model.spark import register
    register(spark)
    return spark


def warm_workers(spark: Any) -> None:
    """Start every core's Python worker now, in a background job, so their start (the daemon's fork, the
    imports of pyarrow and this package) overlaps the driver's pre-pass instead of delaying the first
    slices. Workers are reused (``spark.python.worker.reuse``), so the slice tasks find them running. A
    failure here is left to the real job to report."""
    context = spark_context(spark)
    cores = max(1, context.defaultParallelism)

    def run() -> None:
        with contextlib.suppress(Exception):
            context.parallelize(range(cores), cores).foreach(_import_task_modules)

    threading.Thread(target=run, name="binlog-model-warm-workers", daemon=True).start()


def _import_task_modules(_item: Any) -> None:
    import binlog_model.spark.typed_write  # noqa: F401 - the import is the point


def spark_context(spark: Any) -> Any:
    """The SparkContext of a SparkSession, or the context itself (``run_resolve`` takes either)."""
    return getattr(spark, "sparkContext", spark)


def stop_quickly(spark: Any) -> None:
    """``spark.stop()`` (a SparkSession or its context) without its wait for pyspark's accumulator server:
    that server's one thread sits in a handler that polls the JVM's connection once a second, and
    ``stop()`` waits for it to notice, up to a second of nothing at the end of every command. Here the
    server is told to end and its socket closed, and its thread (a daemon) ends at its next poll."""
    server = getattr(spark_context(spark), "_accumulatorServer", None)
    if server is not None and hasattr(server, "server_shutdown"):
        def shutdown() -> None:
            server.server_shutdown = True                   # the handler's loop condition
            server._BaseServer__shutdown_request = True     # serve_forever's, as BaseServer.shutdown sets it
            server.server_close()
            if isinstance(server.server_address, str):      # a unix socket: its file, as pyspark removes it
                with contextlib.suppress(OSError):
                    os.remove(server.server_address)
        server.shutdown = shutdown
    spark.stop()


#: ``display(what, poll)``: a context manager showing ``poll``'s counters while Spark runs the tasks of
#: ``what`` (the CLI's is a ``runs.progress.ProgressDisplay``).
Display = Callable[[str, Callable[[], Any]], contextlib.AbstractContextManager[Any]]


class _TasksDone:
    """The ``poll`` of a job of slice tasks: the slices done of the total (Spark's status tracker) and the
    bytes and row changes of the slices done (``counts``, an accumulator each task adds its slice's bytes
    and rows to as it ends: Spark applies a successful task's update once, whatever the retries; the driver
    gets it as the task's result arrives). ``done`` is set once collect returned: the stage is gone from the
    tracker by then."""

    def __init__(self, spark: Any, total: int, total_bytes: int, counts: Any) -> None:
        self.tracker = spark_context(spark).statusTracker()
        self.total = total
        self.total_bytes = total_bytes
        self.counts = counts
        self.seen = 0

    def __call__(self) -> Any:
        from binlog_model.runs.progress import Counters

        for stage_id in self.tracker.getActiveStageIds():
            info = self.tracker.getStageInfo(stage_id)
            if info is not None and info.numTasks == self.total:
                self.seen = max(self.seen, info.numCompletedTasks)
        done_bytes, rows = self.counts.value
        return Counters(bytes_done=min(done_bytes, self.total_bytes), bytes_total=self.total_bytes,
                        files_done=self.seen, files_total=self.total, rows=rows, unit="slices")

    def done(self) -> None:
        self.seen = self.total


def run_resolve(spark: Any, paths: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str], *,
                source: str = "", snapshot: str | None = None, lenient_ddl: bool = False,
                always_include: Sequence[str] = (), slice_bytes: int = 64 << 20,
                progress: Callable[[str], None] | None = None,
                state_dir: str | os.PathLike[str] | None = None,
                database: str | None = None, display: Display | None = None) -> ResolveResult:
    """Resolve ``paths`` (local paths or URIs: ``s3://``, ``gs://``, ``hdfs://``, ``file://``) with ``spark``
    (a SparkSession, or only its SparkContext: ``local_context``) into typed per-table Parquet under ``out``
    (a local directory, made absolute, or any URI ``pyarrow.fs`` writes: ``s3://``, ``gs://``, ``hdfs://``);
    return the per-table summary. ``out`` is replaced as a whole: it
    holds the previous tables or the new ones, never a mix (see ``sinks.parquet``).

    With ``state_dir`` the run is incremental (``binlog_model.spark.incremental``): only what is new since
    the last run with that state is read, and its Parquet files are added to the table folders
    (``runs.commit``: ``out`` local or a URI, the state local). ``StateLockedError`` while another run holds
    ``state_dir``. ``progress`` gets the run's steps as lines; ``display`` shows the slices done while the
    tasks run (see ``Display``)."""
    if state_dir is not None:
        from binlog_model.io.state import lock_state

        # Held from before the state is read to the publish: a concurrent run would recover away our staging.
        with lock_state(state_dir):
            return _resolve_incremental(spark, paths, out, Path(state_dir), source=source,
                                        snapshot=snapshot, lenient_ddl=lenient_ddl,
                                        always_include=always_include, slice_bytes=slice_bytes,
                                        progress=progress, database=database, display=display)
    from binlog_model.io.files import name_like, output_filesystem
    from binlog_model.sinks import publish
    from binlog_model.spark.datasource import plan
    from binlog_model.spark.partitions import expand_paths

    say = progress or (lambda _text: None)
    started = time.monotonic()
    files = expand_paths(paths)         # local paths absolute: executors run in other directories
    fs, out_path = output_filesystem(out)
    publish.check_output(fs, out_path)  # before any work: a folder holding other things is refused
    options = _reader_options(files, source, lenient_ddl, always_include, slice_bytes)
    with tempfile.TemporaryDirectory(prefix="binlog-model-plan-") as plan_dir:
        if snapshot and database:
            # A dump without USE read with --database: hand the planner the history it makes.
            from binlog_model.io.snapshots import load_snapshot, save_history
            options["snapshot"] = os.path.join(plan_dir, "snapshot.json")
            save_history(load_snapshot(snapshot, lenient=lenient_ddl, database=database), options["snapshot"])
        elif snapshot:
            options["snapshot"] = snapshot
        history, slices = plan(files, **{k: v for k, v in options.items() if k != "paths"},
                               minSlices=str(2 * max(1, spark_context(spark).defaultParallelism)),
                               scan=lambda paths, **options: _scan(spark, paths, **options))
    say(f"planned {len(files)} files as {len(slices)} slices; {len(history.entries)} DDL statements")
    job = f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    staging = publish.job_staging(out_path, job)
    target = name_like(out, out_path)
    try:
        result = _resolve(spark, files, name_like(out, staging), options, history, slices, say, started,
                          source, job, display)
        say(f"publishing {target}")
        publish.publish_job(fs, staging, out_path)
    except BaseException:
        with contextlib.suppress(Exception):
            fs.delete_dir(staging)
        raise
    for table in result.tables:
        if table.path:
            table.path = f"{target}/{table.path}"
    return result


def _reader_options(files: Sequence[str], source: str, lenient_ddl: bool, always_include: Sequence[str],
                    slice_bytes: int) -> dict[str, str]:
    import json

    # The row after each change (a typed row is a whole image: UPDATE's after, DELETE's before; an UPDATE's
    # before image is never read, so it is not built); no statement text (no typed column holds it, and a
    # multi-row INSERT's text would ride in every event of the statement; the tasks do not even parse the
    # statement-text events: ``typed_write``).
    options = {"paths": json.dumps(list(files)), "source": source, "image": "after", "statementText": "none",
               "ddl": "lenient" if lenient_ddl else "strict", "sliceBytes": str(slice_bytes)}
    if always_include:
        options["alwaysInclude"] = ",".join(always_include)
    return options


def _resolve_incremental(spark: Any, paths: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str],
                         state_dir: Path, *,
                         source: str, snapshot: str | None, lenient_ddl: bool, always_include: Sequence[str],
                         slice_bytes: int, progress: Callable[[str], None] | None,
                         database: str | None, display: Display | None) -> ResolveResult:
    """``run_resolve`` with a state: plan the new part, write it staged (the same tasks and task commits as a
    whole run), commit the state, publish the files."""
    from binlog_model.io.snapshots import load_snapshot
    from binlog_model.io.state import RunState
    from binlog_model.runs.commit import StagedOutput
    from binlog_model.runs.continuity import begin_run, shaping, snapshot_digest
    from binlog_model.spark import incremental as inc
    from binlog_model.spark.partitions import expand_paths

    say = progress or (lambda _text: None)
    started = time.monotonic()
    state = RunState.load(state_dir)
    target = StagedOutput(out)
    given = shaping(command="resolve", source=source, always_include=always_include, lenient_ddl=lenient_ddl,
                    database=database, out=target.name)
    begin_run(state, given, snapshot_digest(snapshot), lambda done: StagedOutput(done).recover(state))
    files = [Path(f) for f in expand_paths(paths)]   # incremental runs read local files (renames commit)
    first = load_snapshot(snapshot, lenient=lenient_ddl, database=database) if state.history is None else None
    history, slices, scans, starts = inc.plan_from_state(
        state, files, first if first is not None else load_snapshot(None), verify_checksum=True,
        slice_bytes=slice_bytes, min_slices=2 * max(1, spark_context(spark).defaultParallelism))
    if state.position is not None:
        say(f"resuming at {state.position['file']}:{state.position['offset']}")
    paths_now = [s.path for s in starts]
    options = _reader_options(paths_now, source, lenient_ddl, always_include, slice_bytes)
    run = inc.run_name(state)
    say(f"planned {len(paths_now)} files as {len(slices)} slices; {len(history.entries)} DDL statements")
    job = f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    result = _resolve(spark, paths_now, target.staging(run), options, history, slices, say, started, source,
                      job, display)
    inc.commit_and_publish(state, target, run, history, scans)
    for table in result.tables:
        if table.path:
            table.path = f"{target.name}/{table.path}"
    say(f"committed run {state.runs}: state at {state.position['file'] if state.position else '-'}:"
        f"{state.position['offset'] if state.position else '-'}")
    return result


def _resolve(spark: Any, files: list[str], staging: str, options: dict[str, str], history: Any,
             slices: list[Any], say: Callable[[str], None], started: float, source: str,
             job: str, display: Display | None = None) -> ResolveResult:
    """``run_resolve`` after planning: one Spark task per slice writes the typed files of every table it
    meets into ``staging`` and returns what it wrote (``typed_write``); the driver sums the results into
    the per-table summary. Tables no lineage types (lenient DDL) take a second pass over the slices that
    met them, with every column name the first pass saw. Paths in the summary are relative to ``staging``."""
    from binlog_model.io.files import output_filesystem
    from binlog_model.spark.reading import ReadOptions, pack_history
    from binlog_model.spark.typed import table_lineages, typed_schema, untyped_lineage
    from binlog_model.spark.typed_write import SliceResult, SliceTask

    read_options = ReadOptions.parse(options)
    packed = pack_history(history.to_json())
    lineages = table_lineages(history)
    tasks = [SliceTask(n, piece, packed, read_options, staging, job) for n, piece in enumerate(slices)]
    decode_started = time.monotonic()
    results = _run_tasks(spark, tasks, display, "writing")
    logged: dict[tuple[str, str], dict[str, int]] = {}
    typed: dict[tuple[str, str], dict[str, int]] = {}
    paths: dict[tuple[str, str], list[str]] = {}
    unowned: dict[tuple[str, str], dict[str, None]] = {}
    met: dict[tuple[str, str], list[int]] = {}

    def gather(done: list[SliceResult], first: bool) -> None:
        for r in done:
            if first:
                for (db, table, op), count in r.logged.items():
                    ops = logged.setdefault((db, table), {})
                    ops[op] = ops.get(op, 0) + count
                for name, columns in r.untyped.items():
                    unowned.setdefault(name, {}).update(dict.fromkeys(columns))
                    met.setdefault(name, []).append(r.partition)
            for key, ops in r.typed.items():
                mine = typed.setdefault(key, {})
                for op, count in ops.items():
                    mine[op] = mine.get(op, 0) + count
            for db, table, path, _rows in r.files:
                paths.setdefault((db, table), []).append(path)

    gather(results, True)
    total = sum(n for ops in logged.values() for op, n in ops.items() if op != "SCHEMA")
    elapsed = max(time.monotonic() - decode_started, 1e-9)
    say(f"decoded {len(files)}/{len(files)} files: {total} row changes, {total / elapsed:,.0f} rows/s")

    # Tables the history does not define (lenient DDL): typed as strings, every column the job saw.
    untyped = {name: sorted(columns) for name, columns in unowned.items()
               if any(op != "SCHEMA" for op in logged.get(name, {}))}
    for db, table in untyped:
        say(f"{db}.{table} has no schema in the history: its columns are written as strings")
    if untyped:
        again = sorted({p for name in untyped for p in met[name]})
        second = [SliceTask(n, slices[n], packed, read_options, staging, f"{job}-untyped", untyped)
                  for n in again]
        gather(_run_tasks(spark, second, display, "writing untyped tables"), False)

    # Rows are counted per logged name; a table's lineage gathers the names it was logged under (renames).
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
    fs, staging_path = output_filesystem(staging)
    for key in sorted(k for k, s in by_table.items() if set(s.operations) - {"SCHEMA"}):
        summary = by_table[key]
        found = lineages.get(key)
        if found is not None and any(owners.get(name, 0) > 1 for name in found.logged_names):
            # A name two lineages were logged under (renamed away, then re-created): its own typed rows.
            schema_events = summary.operations.get("SCHEMA")
            summary.operations = dict(typed.get(key, {}))
            if schema_events:
                summary.operations["SCHEMA"] = schema_events
        lineage = found if found is not None else untyped_lineage(key[0], key[1], untyped.get(key, []))
        summary.untyped = found is None
        if not paths.get(key):
            parquet.write_empty(fs, staging_path, key[0], key[1], typed_schema(lineage)[1])
        summary.columns = len(lineage.columns)
        summary.schema_versions = len(lineage.versions)
        summary.path = parquet.table_folder(key[0], key[1])
    for key, summary in by_table.items():
        owned = lineages.get(key)
        if owned is not None and not summary.columns and owned.columns:
            summary.columns = len(owned.columns)
            summary.schema_versions = len(owned.versions)
    say(f"wrote {sum(len(v) for v in paths.values())} files of {len(paths)} tables")
    tables = sorted(by_table.values(), key=lambda s: (s.db, s.table))
    return ResolveResult(source, len(files), total, time.monotonic() - started, tables)


# From this much input on, the DDL pre-pass runs as Spark tasks (one per file, on every core of the cluster);
# below it, in threads on the driver (one GIL: one core), where a Spark job's start would cost more.
SPARK_SCAN_BYTES = 128 << 20

# Pre-passes started before the session (``prefetch_scans``), by (files, verify_checksum).
_PREFETCHED: dict[tuple[tuple[str, ...], bool], Future[list[Any]]] = {}


# Up to this much local input the driver's own pre-pass (one core, about 0.5 GB/s) overlaps the executors'
# start on a cluster too; beyond it, or for URIs, the pre-pass runs as Spark tasks on every executor.
DRIVER_SCAN_BYTES = 8 << 30


def prefetch_worthwhile(master: str, paths: Sequence[str | os.PathLike[str]]) -> bool:
    """Whether the CLI starts the pre-pass of ``paths`` on the driver before the session: always for a local
    master; on a cluster for local files up to ``DRIVER_SCAN_BYTES`` (the executors start meanwhile)."""
    from binlog_model.io.files import binlog_size, is_uri
    from binlog_model.spark.partitions import expand_paths

    if master.startswith("local"):
        return True
    files = expand_paths(paths)
    return not any(is_uri(f) for f in files) and sum(binlog_size(f) for f in files) <= DRIVER_SCAN_BYTES


def master_cores(master: str) -> int:
    """The cores a master uses on this machine: N of ``local[N]`` / ``local[N,F]``, else every core."""
    m = re.fullmatch(r"local(?:\[(\d+)(?:,\d+)?\])?", master.strip())
    if m:
        return int(m.group(1) or 1)
    return os.cpu_count() or 1


def prefetch_scans(paths: Sequence[str | os.PathLike[str]], verify_checksum: bool = True,
                   processes: int | None = None) -> None:
    """Start the pre-pass of ``paths`` now, for the next ``run_resolve`` of the same files to take. The CLI
    calls it before the JVM starts, so the two overlap instead of adding up. Local files go to ``processes``
    forked children (default: one per core; ``partitions.fork_scans``), as the pre-pass is CPU-bound; one
    driver thread waits for them (URIs: the thread scans them itself)."""
    from binlog_model.spark.partitions import expand_paths, fork_scans

    files = tuple(expand_paths(paths))
    results = fork_scans(files, verify_checksum=verify_checksum, processes=processes or os.cpu_count() or 1,
                         row_transactions=False)
    scanning: Future[list[Any]] = Future()

    def wait() -> None:
        try:
            scanning.set_result(results())
        except BaseException as err:        # re-raised where the result is taken
            scanning.set_exception(err)

    # A daemon: a command failing before it takes the result exits at once, not after the scan.
    threading.Thread(target=wait, name="binlog-model-prepass", daemon=True).start()
    _PREFETCHED[(files, verify_checksum)] = scanning


def _scan(spark: Any, paths: Sequence[str], verify_checksum: bool, row_transactions: bool = True
          ) -> list[Any]:
    """The pre-pass of ``paths`` (``partitions.scan_file`` per file): the prefetched one (made without
    transactions of rows only: only for a caller that asks for none), else Spark tasks for a large input,
    else driver threads."""
    from binlog_model.io.files import binlog_size
    from binlog_model.spark.partitions import scan_file, scan_file_or_none, scan_files

    started = None if row_transactions else _PREFETCHED.pop((tuple(paths), verify_checksum), None)
    if started is not None:
        return started.result()         # its typed error, if a file failed, as a driver scan raises it
    options: dict[str, Any] = {"verify_checksum": verify_checksum, "row_transactions": row_transactions}
    if len(paths) < 2 or sum(binlog_size(p) for p in paths) < SPARK_SCAN_BYTES:
        return scan_files(paths, **options)
    sc = spark_context(spark)
    conf = dict(sc.getConf().getAll())
    conf["master"] = sc.master
    try:
        found = sc.parallelize(list(paths), len(paths)).map(partial(scan_file_or_none, **options)).collect()
    except Exception as err:
        log = conf.get(LOG_FILE_CONF)
        raise SparkJobError(describe_failure(str(err), log_tail(log), [], conf) +
                            (f" (full Spark log: {log})" if log else "")) from err
    # A file whose bytes failed is scanned here again: its typed error, as the driver's own scan gives it.
    return [scan if scan is not None else scan_file(path, **options)
            for path, scan in zip(paths, found, strict=True)]


def _run_tasks(spark: Any, tasks: list[Any], display: Display | None, what: str) -> list[Any]:
    """One Spark task per ``SliceTask`` (``typed_write.write_slice``), results collected on the driver,
    shown by ``display`` meanwhile. A failure names its slice (``SliceFailed``)."""
    if not tasks:
        return []
    from binlog_model.spark.typed_write import PairSum, slice_bytes, slice_label, write_counted

    sc = spark_context(spark)
    conf = dict(sc.getConf().getAll())      # read now: after a failure the JVM may be gone
    conf["master"] = sc.master
    sizes = [slice_bytes(t.piece) for t in tasks]
    # The largest slices first (Spark starts a stage's tasks in partition order): the last tasks to start
    # are the short ones, so the job does not end on one long slice while the other cores wait.
    order = sorted(range(len(tasks)), key=lambda i: -sizes[i])
    counts = sc.accumulator((0, 0), PairSum())
    poll = _TasksDone(spark, len(tasks), sum(sizes), counts)
    shown = display(what, poll) if display is not None else contextlib.nullcontext()
    try:
        with shown:
            results = list(sc.parallelize([(tasks[i], sizes[i]) for i in order], len(tasks)).map(
                partial(write_counted, counts=counts)).collect())
            poll.done()
            return results
    except BinlogError:
        raise
    except Exception as err:
        log = conf.get(LOG_FILE_CONF)
        labels = [slice_label(tasks[i].piece) for i in order]     # by Spark's task index
        raise SparkJobError(describe_failure(str(err), log_tail(log), labels, conf)
                            + (f" (full Spark log: {log})" if log else "")) from err


# The Spark setting naming the file Spark's log goes to (set by ``binlog-model resolve``), so a failure's
# message can use what only the log says (a JVM's OutOfMemoryError) and name the file.
LOG_FILE_CONF = "spark.binlogModel.logFile"
_TASK = re.compile(r"task (\d+)\.\d+ in stage \d+")
_EXIT = re.compile(r"(?:exit code|exitCode|exited with code)[ :=]*(-?\d+)", re.IGNORECASE)


_JVM_ERRORS = re.compile(r"^(?:Error occurred during initialization of VM|Error: Could not create the Java "
                         r"Virtual Machine\.|Error: A fatal exception has occurred\. Program will exit\.)$")


def _jvm_start_error(log: str) -> str:
    """What a JVM that failed to start printed (``Invalid maximum heap size: -Xmx1x``, ``Unrecognized VM
    option 'X'``, ``Too small maximum heap`` ...): the log's lines next to the JVM's generic error lines."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if _JVM_ERRORS.match(line):
            own = [x for x in lines[max(0, i - 1):i + 2] if not _JVM_ERRORS.match(x)
                   and not x.startswith(("binlog-model:", "WARNING:"))]
            if own:
                return "; ".join(own)
    return "see Spark's log"


def describe_failure(error: str, log: str, slices: Sequence[str], conf: Mapping[str, str]) -> str:
    """One line for a failed job: what failed, where (the slice), and what to do. ``error``: the text of
    the exception the driver got; ``log``: the end of Spark's log; ``slices``: slice labels by task index;
    ``conf``: the Spark settings (and ``master``). Failures of the job's own code (a ``DecodeError`` ...)
    are ``root_cause``'s line."""
    text = f"{error}\n{log}"
    found = _TASK.search(error) or _TASK.search(log)
    where = ""
    if found and int(found.group(1)) < len(slices):
        where = f" while writing slice {slices[int(found.group(1))]}"
    local = conf.get("master", "").startswith("local")
    driver = conf.get("spark.driver.memory", "1g")
    executor = conf.get("spark.executor.memory", "1g")
    memory = (f"raise --driver-memory (now {driver}; in local mode the tasks run in the driver's JVM)"
              if local else f"raise --executor-memory (now {executor})")
    smaller = "or lower --slice-mb"
    oom = re.search(r"java\.lang\.OutOfMemoryError: ([^\n\r]+)", text)
    if oom:
        what = "executor" if not local else "Spark JVM"
        return f"{what} out of memory ({oom.group(1).strip()}){where}; {memory} {smaller}"
    lost = re.search(r"ExecutorLostFailure \(executor (\S+) exited[^)]*\) Reason: ([^\n\r]+)", text)
    if lost:
        reason = lost.group(2).strip().rstrip(".")
        return (f"executor {lost.group(1)} lost{where} ({reason}); its log is on its worker; {memory} "
                f"{smaller}, or check the machine")
    if "JAVA_GATEWAY_EXITED" in error or "Java gateway process exited" in error:
        return (f"the Spark JVM did not start ({_jvm_start_error(log)}); check --driver-memory (now "
                f"{driver}), the spark.driver.* settings given with --conf, and JAVA_HOME")
    cause = root_cause(error)
    if "MemoryError" in cause.split(":", 1)[0]:
        return (f"a Python worker ran out of memory (MemoryError){where}; lower --slice-mb or give the "
                "Python workers more memory")
    if "Python worker exited unexpectedly" in text or "crashed" in cause.lower():
        code = _EXIT.search(text)
        how = f" (exit code {code.group(1)})" if code else ""
        hint = (" (killed: 137 and -9 are SIGKILL, often the system's out-of-memory killer)"
                if code and code.group(1) in ("137", "-9") else "")
        return (f"a Python worker crashed or was killed{how}{where}{hint}; lower --slice-mb, or see the "
                "worker's output in the log")
    if re.search(r"Connection refused|Answer from Java side is empty|Error while receiving|"
                 r"Py4JNetworkError|java gateway", error):
        return ("the Spark JVM exited during the job" + where + f"; {memory} {smaller}, or see the end of "
                "Spark's log")
    return cause or "the Spark job failed"
