"""``binlog-model resolve [BINLOG_PATHS...] --out DIR``: the main job on Spark, local or a cluster.

Binlogs → per-table typed Parquet (``DIR/db=<db>/table=<table>/``) resolved with the schema in force at
each row's position, and a per-table summary. Without paths it resolves the bundled golden fixtures: each
``fixtures/golden/mariadb/<scenario>/binlogs`` directory is an independent server history, so each is its
own input set with the source label ``golden:<scenario>`` and its own output ``DIR/<scenario>/``.

Paths are local paths (made absolute) or URIs read through ``pyarrow.fs`` (``s3://``, ``gs://``,
``hdfs://``); they are checked before Spark starts. Spark's own output (the JVM's log and that of its
Python workers) goes to a log file, never to the terminal: a failure is one line naming its root cause
and that file. The job's steps are timestamped lines; the slices done while Spark writes are the one
progress display's (``runs.progress``: a bar on a terminal, lines with ``--progress`` off one).
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import click

from binlog_model.commands import options
from binlog_model.errors import ConfigError
from binlog_model.io.live import url_with_options
from binlog_model.io.tls import TlsOptions
from binlog_model.resolve.options import ResolveOptions
from binlog_model.resolve.table_filter import TableFilter
from binlog_model.runs.progress import ProgressDisplay, progress_mode
from binlog_model.testing.bundled import golden_dir


def _parse_conf(items: tuple[str, ...]) -> dict[str, str]:
    conf = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--conf takes KEY=VALUE, got {item!r}")
        conf[key.strip()] = value
    return conf


def _default_log_file() -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path(tempfile.gettempdir()) / f"binlog-model-resolve-{stamp}-{os.getpid()}.log"


class _Terminal:
    """Where this command's own lines go while Spark runs: the terminal as it was (fds 1 and 2 then go to
    Spark's log, so nothing Spark, its JVM, its Python workers or pyspark's threads print reaches it)."""

    out: Any = None
    err: Any = None


def _say(text: str) -> None:
    click.echo(f"[{time.strftime('%H:%M:%S')}] {text}", err=_Terminal.err is None, file=_Terminal.err)


def _echo(text: str) -> None:
    click.echo(text, file=_Terminal.out)


@contextlib.contextmanager
def _output_to(log: Path) -> Iterator[None]:
    """Processes started inside (the Spark JVM, and through it its Python workers) and this process's own
    stdout and stderr (pyspark's threads print there) write to ``log``; ``_say``/``_echo`` still reach the
    terminal; everything is back on the terminal afterwards."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    _Terminal.out = open(os.dup(saved[0]), "w", buffering=1, encoding="utf-8", closefd=True)  # noqa: SIM115
    _Terminal.err = open(os.dup(saved[1]), "w", buffering=1, encoding="utf-8", closefd=True)  # noqa: SIM115
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for stream in (_Terminal.out, _Terminal.err):
            stream.close()
        _Terminal.out = _Terminal.err = None
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for n in (*saved, fd):
            os.close(n)


@click.command("resolve")
@click.argument("paths", nargs=-1)
@click.option("--out", required=True,
              help="Output directory for the Parquet tables: a local path or any URI Spark's writer accepts "
                   "(s3a://, abfss://, hdfs://, file://).")
@click.option("--source", default="", help="Source label put in every row, e.g. ppc:1.")
@click.option("--snapshot", metavar="FILE|URL",
              help="Starting schema: a mysqldump --no-data .sql file, a schema history .json, or a live "
              "server mysql://user@host:port/db.")
@click.option("--database", "-d", default=None,
              help="Database of the snapshot's statements before any USE (default: from the dump's header).")
@click.option("--state", "state_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Incremental run: read only what is new since the last run with this state directory and "
              "add its Parquet files to the table folders.")
@click.option("--stream", is_flag=True, help="Keep the tables current with a Structured Streaming query over "
              "the folders in PATHS (binlogs that keep arriving): each run reads what is new since its "
              "--checkpoint. Without --every it reads what is there and exits (run it every N minutes).")
@click.option("--checkpoint", type=click.Path(file_okay=False, path_type=Path),
              help="--stream: the query's checkpoint folder (Spark's offsets and the stream's schema "
              "histories).")
@click.option("--every", type=click.FloatRange(min=0.1), metavar="SECONDS",
              help="--stream: keep running, a micro-batch every SECONDS, until interrupted.")
@click.option("--max-files-per-trigger", type=click.IntRange(min=1), help="--stream: at most this many files "
              "per micro-batch (batches end at transaction boundaries).")
@click.option("--max-bytes-per-trigger", type=click.IntRange(min=1), help="--stream: at most about this many "
              "binlog bytes per micro-batch (at least one transaction).")
@options.always_include
@options.table_filter
@options.lenient_ddl
@click.option("--master", default="local[2]", show_default=True,
              help="Spark master: local[N], spark://host:port, yarn, k8s://...")
@click.option("--conf", "conf", multiple=True, metavar="KEY=VALUE",
              help="A Spark setting (repeatable), as spark-submit --conf.")
@click.option("--py-files", "py_files", default="", metavar="FILES",
              help="Comma-separated .zip/.py files for the Python workers, as spark-submit --py-files "
                   "(e.g. the zip of `binlog-model spark-pack`).")
@click.option("--archives", default="", metavar="ARCHIVES",
              help="Comma-separated archives unpacked in each executor's directory, as spark-submit "
                   "--archives.")
@click.option("--log-file", "log_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Where Spark's full log goes [default: a new file in the temp directory].")
@click.option("--slice-mb", type=click.IntRange(min=1), default=64, show_default=True,
              help="Split files into slices of about this many MB at transaction starts (a task's unit).")
@click.option("--driver-memory", default="1g", show_default=True, metavar="SIZE",
              help="Heap of the driver's JVM (spark.driver.memory); in local mode the tasks run in it.")
@click.option("--executor-memory", default="1g", show_default=True, metavar="SIZE",
              help="Heap of each executor's JVM on a cluster (spark.executor.memory).")
@click.option("--progress/--no-progress", default=None,
              help="Show the slices done: a bar on a terminal (the default there); off one, a line every "
                   "30 seconds and one at the end.")
@options.live_connection
def command(paths: tuple[str, ...], out: str, source: str, snapshot: str | None, database: str | None,
            state_dir: Path | None, stream: bool, checkpoint: Path | None, every: float | None,
            max_files_per_trigger: int | None, max_bytes_per_trigger: int | None,
            always_include: tuple[str, ...], tables: TableFilter, lenient_ddl: bool, master: str,
            conf: tuple[str, ...], py_files: str, archives: str, log_file: Path | None,
            slice_mb: int, driver_memory: str, executor_memory: str, progress: bool | None,
            tls: TlsOptions, connect_timeout: float | None) -> None:
    """Resolve binlog PATHS (files, directories or globs; local or s3:// gs:// hdfs:// URIs) into typed
    per-table Parquet on Spark."""
    # a mysql:// snapshot carries its TLS options in its query, as the Spark ``snapshot`` option takes it
    snapshot = url_with_options(snapshot, tls, connect_timeout) if snapshot else snapshot
    from binlog_model.io.documents import log_tail
    from binlog_model.io.files import absolute_name
    from binlog_model.io.state import lock_state
    from binlog_model.spark.failures import LOG_FILE_CONF, SparkJobError, describe_failure, spark_errors
    from binlog_model.spark.job import run_resolve
    from binlog_model.spark.jvm import close_driver_jvm, dump_executor_archive
    from binlog_model.spark.partitions import expand_paths
    from binlog_model.spark.prepass import master_cores, prefetch_scans, prefetch_worthwhile
    from binlog_model.spark.session import (
        check_java,
        local_context,
        local_session,
        spark_context,
        stop_quickly,
        warm_workers,
    )

    if state_dir is not None and not paths:
        raise ConfigError("--state needs the binlog PATHS to follow (one state per binlog sequence)")
    if stream and (not paths or checkpoint is None or state_dir is not None or database):
        raise ConfigError("--stream needs the binlog folders (PATHS) and --checkpoint DIR, and takes no "
                          "--state (the checkpoint is its state) or --database")
    if not stream and (checkpoint or every or max_files_per_trigger or max_bytes_per_trigger):
        raise ConfigError("--checkpoint, --every and --max-*-per-trigger go with --stream")
    if snapshot and "://" not in snapshot and not Path(snapshot).is_file():
        raise ConfigError(f"snapshot file not found: {snapshot}")     # before Spark starts
    # The job's reader parses the same values with the same ResolveOptions.parse; here a bad --always-include
    # is one line before any JVM starts (the typed tables always read whole images).
    ResolveOptions.parse(source=source, always_include=always_include, image="after")
    for flag, size in (("--driver-memory", driver_memory), ("--executor-memory", executor_memory)):
        if not re.fullmatch(r"\d+[kmgt]?", size.lower()):
            raise ConfigError(f"{flag} takes a size such as 1g or 512m, got {size!r}")
    settings = {"spark.driver.memory": driver_memory, "spark.executor.memory": executor_memory,
                **_parse_conf(conf)}
    # Another run on this state is refused here, before Spark starts; run_resolve re-enters the lock.
    held = lock_state(state_dir) if state_dir is not None else contextlib.nullcontext()
    with held:
        check_java()
        failures: tuple[type[BaseException], ...] = (*spark_errors(), ConnectionError)
        if paths:
            inputs = [(source, list(paths), absolute_name(out))]
        else:
            scenarios = sorted(d for d in golden_dir("mariadb").iterdir() if (d / "binlogs").is_dir())
            inputs = [(source or f"golden:{d.name}", [str(d / "binlogs")], f"{absolute_name(out)}/{d.name}")
                      for d in scenarios]
            _say(f"no paths given: resolving the {len(inputs)} bundled golden fixture histories")
        for _label, files, _target in inputs:
            if stream:                    # a stream's folder may still be empty, but must exist
                for name in files:
                    if "://" not in name and not any(c in name for c in "*?[") and not Path(name).exists():
                        raise ConfigError(f"{name} does not exist (give the folder the binlogs arrive in)")
                continue
            expand_paths(files)           # a missing input is one line before any JVM starts
        submit = [arg for flag, value in (("--py-files", py_files), ("--archives", archives)) if value
                  for arg in (flag, value)]
        if submit:
            # Read by pyspark when it launches the JVM: spark-submit's own handling of these options.
            os.environ["PYSPARK_SUBMIT_ARGS"] = shlex.join([*submit, "pyspark-shell"])
        log = log_file or _default_log_file()
        log.parent.mkdir(parents=True, exist_ok=True)
        _say(f"Spark's log: {log}")
        settings[LOG_FILE_CONF] = str(log)
        mode = progress_mode(progress)        # read before stderr goes to Spark's log

        def display(what: str, poll: Any) -> ProgressDisplay:
            return ProgressDisplay(what, poll, mode=mode, stream=_Terminal.err)
        spark = None
        with _output_to(log):
            try:
                if state_dir is None and paths and not stream and prefetch_worthwhile(master, inputs[0][1]):
                    # The pre-pass overlaps the JVM's start, on as many cores as the job uses.
                    prefetch_scans(inputs[0][1], processes=master_cores(master))
                if stream:
                    spark = local_session(master, conf=settings, log_level="WARN", create_archive=True,
                                          quick_start=True)
                else:   # RDD tasks only: no SQL engine to start
                    spark = local_context(master, conf=settings, log_level="WARN", create_archive=True,
                                          quick_start=True)
                    warm_workers(spark)
                for label, files, target in inputs:
                    if stream:
                        _stream(spark, files, target, checkpoint, label, snapshot, lenient_ddl,
                                always_include, slice_mb, every, max_files_per_trigger,
                                max_bytes_per_trigger, tables)
                        continue
                    result = run_resolve(spark, files, target, source=label, snapshot=snapshot,
                                         lenient_ddl=lenient_ddl, always_include=always_include,
                                         slice_bytes=slice_mb << 20, progress=_say, database=database,
                                         state_dir=state_dir, display=display, tables=tables)
                    _summary(label, result, target)
                    options.warn_unmatched_tables(result.unmatched_table_patterns, say=_say)
                # A first job on a cluster of this machine: an executor writes its classes for the next.
                dump_executor_archive(spark_context(spark).applicationId)
            except failures as err:          # outside the tasks: a JVM gone, a failed start
                _append(log, f"binlog-model: the job failed: {err}")
                cause = describe_failure(str(err), log_tail(str(log)), [], {"master": master, **settings})
                raise SparkJobError(f"{cause} (full Spark log: {log})") from err
            except SparkJobError as err:
                _append(log, f"binlog-model: the job failed: {err}; cause: {err.__cause__}")
                raise
            finally:
                if spark is not None:
                    with contextlib.suppress(Exception):    # a JVM already gone must not add its own error
                        stop_quickly(spark)
                    close_driver_jvm()      # a first run's JVM writes its class archive as it exits


_WORKER_LATE = "Python worker failed to connect back"
_STREAM_STARTS = 4


def _stream(spark: Any, files: list[str], target: str, checkpoint: Path | None, label: str,
            snapshot: str | None, lenient_ddl: bool, always_include: tuple[str, ...], slice_mb: int,
            every: float | None, max_files: int | None, max_bytes: int | None, tables: TableFilter) -> None:
    from binlog_model.spark.failures import SparkJobError
    from binlog_model.spark.stream_resolve import run_resolve_stream

    assert checkpoint is not None
    _say(f"streaming {', '.join(files)} -> {target} (checkpoint {checkpoint})")
    for attempt in range(1, _STREAM_STARTS + 1):
        try:
            result = run_resolve_stream(spark, files, target, checkpoint, source=label, snapshot=snapshot,
                                        lenient_ddl=lenient_ddl, always_include=always_include,
                                        slice_bytes=slice_mb << 20, every=every,
                                        max_files_per_trigger=max_files, max_bytes_per_trigger=max_bytes,
                                        progress=_say, tables=tables)
            break
        except KeyboardInterrupt:
            _say("interrupted: the next run goes on from the checkpoint")
            return
        except SparkJobError as err:
            # Spark gives the stream source's Python worker a fixed 10 s to start; a busy machine can miss
            # it. The query goes on from its checkpoint, exactly once, so it is started again.
            if _WORKER_LATE not in str(err) or attempt == _STREAM_STARTS:
                raise
            _say(f"Spark's Python worker did not start within Spark's 10 s (a busy machine); starting the "
                 f"query again from its checkpoint ({attempt}/{_STREAM_STARTS - 1})")
    _echo(f"== {label or '(no source)'}: {result.batches} batches ({result.skipped} already published), "
          f"{result.rows} row changes, {result.seconds:.1f}s -> {target}")
    for line in table_lines(result.tables):
        _echo(line)


def _summary(label: str, result: Any, target: str) -> None:
    _echo(f"== {label or '(no source)'}: {result.files} files, {result.rows} row changes, "
          f"{result.seconds:.1f}s -> {target}")
    for line in table_lines(result.tables):
        _echo(line)


def table_lines(tables: Iterable[Any]) -> list[str]:
    """The per-table lines of a resolve summary, batch or stream (``TableSummary`` s): a header, then one
    line per table with row changes (none for a table without any)."""
    lines = [f"   {'table':<40} {'INSERT':>7} {'UPDATE':>7} {'DELETE':>7} {'SCHEMA':>7} "
             f"{'columns':>7} {'versions':>8}"]
    for t in tables:
        ops = t.operations
        if not any(ops.values()):
            continue
        name = f"{t.db}.{t.table}" if t.table else f"{t.db} (database)"
        lines.append(f"   {name:<40} {ops.get('INSERT', 0):>7} {ops.get('UPDATE', 0):>7} "
                     f"{ops.get('DELETE', 0):>7} {ops.get('SCHEMA', 0):>7} {t.columns:>7} "
                     f"{t.schema_versions:>8}")
    return lines


def _append(log: Path, text: str) -> None:
    """The error as Python saw it (with the executor's traceback) at the end of the log."""
    with contextlib.suppress(OSError), open(log, "a", encoding="utf-8") as fh:
        fh.write(f"\n{text}\n")
