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
as ``display``. The session comes from ``session``, a failed job's one-line message from ``failures``,
and where the DDL pre-pass runs is ``prepass``'s choice.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from binlog_model.errors import BinlogError
from binlog_model.io.documents import log_tail
from binlog_model.resolve.table_filter import TableFilter, history_tables
from binlog_model.sinks import parquet
from binlog_model.spark.failures import LOG_FILE_CONF, SparkJobError, describe_failure
from binlog_model.spark.prepass import scan
from binlog_model.spark.session import spark_context

__all__ = ["ResolveResult", "TableSummary", "run_resolve"]


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
    # --tables/--exclude-tables patterns that matched no table of the history or of the output
    unmatched_table_patterns: list[str] = field(default_factory=list)


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
                database: str | None = None, display: Display | None = None,
                tables: TableFilter | None = None) -> ResolveResult:
    """Resolve ``paths`` (local paths or URIs: ``s3://``, ``gs://``, ``hdfs://``, ``file://``) with ``spark``
    (a SparkSession, or only its SparkContext: ``local_context``) into typed per-table Parquet under ``out``
    (a local directory, made absolute, or any URI ``pyarrow.fs`` writes: ``s3://``, ``gs://``, ``hdfs://``);
    return the per-table summary. ``out`` is replaced as a whole: it
    holds the previous tables or the new ones, never a mix (see ``sinks.parquet``).

    With ``state_dir`` the run is incremental (``binlog_model.spark.incremental``): only what is new since
    the last run with that state is read, and its Parquet files are added to the table folders
    (``runs.commit``: ``out`` local or a URI, the state local). ``StateLockedError`` while another run holds
    ``state_dir``. ``progress`` gets the run's steps as lines; ``display`` shows the slices done while the
    tasks run (see ``Display``). ``tables``: the tables whose rows are written (``resolve.table_filter``;
    every table's DDL is still tracked); its patterns that matched nothing are in
    ``unmatched_table_patterns`` of the result."""
    if state_dir is not None:
        from binlog_model.io.state import lock_state

        # Held from before the state is read to the publish: a concurrent run would recover away our staging.
        with lock_state(state_dir):
            return _resolve_incremental(spark, paths, out, Path(state_dir), source=source,
                                        snapshot=snapshot, lenient_ddl=lenient_ddl,
                                        always_include=always_include, slice_bytes=slice_bytes,
                                        progress=progress, database=database, display=display,
                                        tables=tables)
    from binlog_model.io.files import name_like, output_filesystem
    from binlog_model.sinks import publish
    from binlog_model.spark.datasource import plan
    from binlog_model.spark.partitions import expand_paths

    say = progress or (lambda _text: None)
    started = time.monotonic()
    files = expand_paths(paths)         # local paths absolute: executors run in other directories
    fs, out_path = output_filesystem(out)
    publish.check_output(fs, out_path)  # before any work: a folder holding other things is refused
    options = _reader_options(files, source, lenient_ddl, always_include, slice_bytes, tables)
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
                               scan=lambda paths, **options: scan(spark, paths, **options))
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
    _filtered_summary(result, history, tables)
    return result


def _filtered_summary(result: ResolveResult, history: Any, tables: TableFilter | None) -> None:
    """The summary of a filtered run: its patterns that matched no table, and only the tables it kept (the
    summary lists every table of the history otherwise)."""
    if tables is not None and tables.active:
        seen = history_tables(history) | {(t.db, t.table) for t in result.tables if t.table}
        result.unmatched_table_patterns = tables.unmatched(seen)
        result.tables = [t for t in result.tables
                         if (tables(t.db, t.table) if t.table else tables.database(t.db))]


def _reader_options(files: Sequence[str], source: str, lenient_ddl: bool, always_include: Sequence[str],
                    slice_bytes: int, tables: TableFilter | None = None) -> dict[str, str]:
    import json

    # The row after each change (a typed row is a whole image: UPDATE's after, DELETE's before; an UPDATE's
    # before image is never read, so it is not built); no statement text (no typed column holds it, and a
    # multi-row INSERT's text would ride in every event of the statement; the tasks do not even parse the
    # statement-text events: ``typed_write``).
    options = {"paths": json.dumps(list(files)), "source": source, "image": "after", "statementText": "none",
               "ddl": "lenient" if lenient_ddl else "strict", "sliceBytes": str(slice_bytes)}
    if always_include:
        options["alwaysInclude"] = ",".join(always_include)
    if tables is not None and tables.active:
        options["tables"] = ",".join(p.text for p in tables.include)
        options["excludeTables"] = ",".join(p.text for p in tables.exclude)
    return options


def _resolve_incremental(spark: Any, paths: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str],
                         state_dir: Path, *,
                         source: str, snapshot: str | None, lenient_ddl: bool, always_include: Sequence[str],
                         slice_bytes: int, progress: Callable[[str], None] | None,
                         database: str | None, display: Display | None,
                         tables: TableFilter | None = None) -> ResolveResult:
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
                    database=database, out=target.name, tables=tables)
    begin_run(state, given, snapshot_digest(snapshot), lambda done: StagedOutput(done).recover(state))
    files = [Path(f) for f in expand_paths(paths)]   # incremental runs read local files (renames commit)
    first = load_snapshot(snapshot, lenient=lenient_ddl, database=database) if state.history is None else None
    history, slices, scans, starts = inc.plan_from_state(
        state, files, first if first is not None else load_snapshot(None), verify_checksum=True,
        slice_bytes=slice_bytes, min_slices=2 * max(1, spark_context(spark).defaultParallelism))
    if state.position is not None:
        say(f"resuming at {state.position['file']}:{state.position['offset']}")
    paths_now = [s.path for s in starts]
    options = _reader_options(paths_now, source, lenient_ddl, always_include, slice_bytes, tables)
    run = inc.run_name(state)
    say(f"planned {len(paths_now)} files as {len(slices)} slices; {len(history.entries)} DDL statements")
    job = f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    result = _resolve(spark, paths_now, target.staging(run), options, history, slices, say, started, source,
                      job, display)
    inc.commit_and_publish(state, target, run, history, scans)
    for table in result.tables:
        if table.path:
            table.path = f"{target.name}/{table.path}"
    _filtered_summary(result, history, tables)
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

