"""``binlog-model events FILE...``: binlog files → BinlogEvents as JSON lines or a length-delimited
protobuf stream: the runner (``runs.runner``) over the files (``io.file_source``) into the sink of
``--format`` (``binlog_model.sinks``), with the one progress display (``runs.progress``).

With ``--state DIR`` a run is incremental (``binlog_model.runs.incremental``): it reads only what is new since
the last run with that state, and ``--out`` names a directory that gets one new ``part-NNNNNN`` file per
run, committed together with the state.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

import click

from binlog_model.commands import options
from binlog_model.commands.options import warn_unmatched_tables
from binlog_model.errors import ConfigError
from binlog_model.io.file_source import FileSource
from binlog_model.io.live import url_with_options
from binlog_model.io.snapshots import load_snapshot
from binlog_model.io.tls import TlsOptions
from binlog_model.messages import BinlogEvent
from binlog_model.resolve.assembler import StatementAssembler
from binlog_model.resolve.event_range import EventRange
from binlog_model.resolve.options import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS, ImageMode, ResolveOptions
from binlog_model.resolve.table_filter import TableFilter
from binlog_model.runs.progress import ProgressDisplay, progress_mode, source_counters
from binlog_model.runs.runner import Runner
from binlog_model.sinks import FORMATS, open_sink, sink_class


@click.command("events")
@options.binlog_files()
@click.option("--source", default="", help="Source label put in every event, e.g. ppc:1.")
@click.option("--snapshot", metavar="FILE|URL",
              help="Starting schema: a mysqldump --no-data .sql file, a schema history .json, or a live "
              "server mysql://user@host:port/db (password from $BINLOG_MODEL_PASSWORD or a prompt).")
@click.option("--database", "-d", default=None,
              help="Database of the snapshot's statements before any USE (a dump of one database has none; "
              "default: the database its header comment names).")
@options.always_include
@options.table_filter
@options.event_range
@click.option("--image", type=click.Choice([m.value for m in ImageMode]), default="changed",
              show_default=True,
              help="What before/after hold for UPDATE (and DELETE: its whole before image with full or "
              "after).")
@click.option("--max-rows", type=click.IntRange(min=1), default=DEFAULT_MAX_ROWS, show_default=True,
              help="Split a statement into BinlogEvents of at most this many rows.")
@click.option("--max-bytes", type=click.IntRange(min=1), default=DEFAULT_MAX_BYTES, show_default=True,
              help="... and of at most about this many bytes of row data.")
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="jsonl", show_default=True)
@click.option("--json-defaults", is_flag=True,
              help="JSONL: also write fields at their default (0, false, empty), e.g. queryIndex 0.")
@options.compression
@click.option("--out", type=click.Path(path_type=Path),
              help="Write here instead of stdout (with --state: a directory, one new file per run).")
@click.option("--state", "state_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Incremental run: process only what is new since the last run with this state directory "
              "(needs --out DIR).")
@options.json_values
@options.lenient_ddl
@click.option("--allow-incomplete-tail", is_flag=True,
              help="Stop before a transaction or event cut off at the end of the input instead of failing "
              "(the active binlog of a running server); with --state the next run resumes there.")
@options.no_verify_checksum
@click.option("--statement-text", type=click.Choice(["all", "first", "none"]), default="all",
              show_default=True, help="Put the statement's SQL on all its events, only the first piece of a "
              "split statement, or nowhere.")
@click.option("--stats", is_flag=True, help="Print counters (and warnings) to stderr at the end.")
@click.option("--progress/--no-progress", default=None,
              help="Progress on stderr: a bar on a terminal (the default there), log lines elsewhere "
              "(default: none off a terminal).")
@click.option("--commit-bytes", type=click.IntRange(min=1), default=64 << 20, hidden=True,
              help="With --state: commit a step after about this many input bytes (tests use small values).")
@options.live_connection
def command(files: tuple[str, ...], source: str, snapshot: str | None, database: str | None,
            always_include: tuple[str, ...], tables: TableFilter, window: EventRange | None, image: str,
            max_rows: int, max_bytes: int, fmt: str,
            json_defaults: bool, zstd_level: int | None, out: Path | None, state_dir: Path | None,
            json_values: str, lenient_ddl: bool, allow_incomplete_tail: bool, no_verify_checksum: bool,
            statement_text: str, stats: bool, progress: bool | None, commit_bytes: int, tls: TlsOptions,
            connect_timeout: float | None) -> None:
    """Decode binlog FILES (files, folders or globs; local or s3:// gs:// hdfs:// URIs) into one BinlogEvent
    per statement (and table)."""
    snapshot = url_with_options(snapshot, tls, connect_timeout) if snapshot else snapshot
    options = ResolveOptions.parse(source=source, always_include=always_include, image=image,
                                   max_rows=max_rows, max_bytes=max_bytes,
                                   allow_incomplete_tail=allow_incomplete_tail, statement_text=statement_text,
                                   tables=tables)
    if state_dir is not None and window is not None:
        raise ConfigError("--start-position, --stop-position, --start-datetime and --stop-datetime pick a "
                          "one-off range: they do not go with --state (which reads what is new since its "
                          "last run); drop one or the other")
    if state_dir is not None:
        _incremental(files, state_dir, out, options, snapshot=snapshot, database=database,
                     lenient_ddl=lenient_ddl, fmt=fmt, json_defaults=json_defaults, json_values=json_values,
                     zstd_level=zstd_level,
                     verify_checksum=not no_verify_checksum, stats=stats, commit_bytes=commit_bytes,
                     progress=progress_mode(progress))
        return
    if out is not None and not out.parent.is_dir():
        raise ConfigError(f"cannot write --out {out}: the directory {out.parent} does not exist")
    if out is not None and out.is_dir():
        raise ConfigError(f"--out {out} is a directory (a directory is for --state runs): give a file name")
    sink = sink_class(fmt)
    if (sink.binary or zstd_level is not None) and out is None and sys.stdout.isatty():
        what = "--compress zstd" if zstd_level is not None else f"--format {fmt}"
        raise click.UsageError(f"{what} writes binary: give --out FILE or redirect stdout")
    # The snapshot is read here, before any output is opened, so a bad one leaves no empty --out file.
    # A sink that takes serialized events (protobuf) gets each event's bytes as the compiled row builder
    # made them, never parsed back.
    assembler = StatementAssembler(load_snapshot(snapshot, lenient=lenient_ddl, database=database), options,
                                   serialized=sink.takes_serialized, window=window)
    binlogs = FileSource(files, partial_tail=options.allow_incomplete_tail,
                         verify_checksum=not no_verify_checksum)
    mode = progress_mode(progress, output_on_terminal=out is None and sys.stdout.isatty())
    with ProgressDisplay("events", source_counters(binlogs, lambda: assembler.stats.row_changes), mode=mode):
        _write(Runner(binlogs, assembler).events(), fmt, out, json_defaults, json_values, zstd_level)
    if stats:
        _print_stats(assembler.stats)
    warn_unmatched_tables(assembler.stats.unmatched_table_patterns)


def _write(events: Iterable[BinlogEvent] | Iterable[bytes], fmt: str, out: Path | None,
           json_defaults: bool, json_values: str, zstd_level: int | None) -> int:
    """Write ``events`` (messages, or serialized ones for a sink that takes them) to ``out`` (a new file)
    or stdout with the sink of ``fmt``, zstd-compressed at ``zstd_level`` when given (one frame: the
    sink flushes once, at its end); returns the count."""
    if out is None:
        sys.stdout.flush()              # anything already printed as text comes first
    with open_sink(fmt, out if out is not None else sys.stdout.buffer, json_defaults=json_defaults,
                   json_values=json_values, zstd_level=zstd_level) as sink:
        return sink.write_all(events)


def _print_stats(stats: object) -> None:
    click.echo(f"stats: {stats}", err=True)
    for table in getattr(stats, "always_include_unseen", []):
        click.echo(f"warning: --always-include names table {table}, which no row event of the input touched "
                   "(a typo?)", err=True)


def _incremental(files: tuple[str, ...], state_dir: Path, out: Path | None, options: ResolveOptions, *,
                 snapshot: str | None, database: str | None, lenient_ddl: bool, fmt: str, json_defaults: bool,
                 json_values: str, zstd_level: int | None, verify_checksum: bool, stats: bool,
                 commit_bytes: int, progress: str) -> None:
    from binlog_model.runs.continuity import snapshot_digest
    from binlog_model.runs.incremental import run_incremental

    if out is None:
        raise ConfigError("--state needs --out DIR: each run adds one output file there, committed together "
                          "with the state")
    if out.exists() and not out.is_dir():
        raise ConfigError(f"with --state, --out names a directory; {out} is a file")
    result = run_incremental(files, state_dir, out, options=options, lenient_ddl=lenient_ddl,
                             database=database, fmt=fmt,
                             load_history=lambda: load_snapshot(snapshot, lenient=lenient_ddl,
                                                                database=database),
                             snapshot_id=snapshot_digest(snapshot), verify_checksum=verify_checksum,
                             json_defaults=json_defaults, json_values=json_values, zstd_level=zstd_level,
                             commit_bytes=commit_bytes,
                             progress=progress)
    where = f" -> {result.output}" if result.output else " (no new events)"
    click.echo(f"events: {result.events} new events from {len(result.files)} file(s)"
               f"{f', resumed at {result.resumed_at}' if result.resumed_at else ''}, "
               f"state at {result.last_commit_at or result.resumed_at or 'the start'}{where}", err=True)
    if result.partial_tail_bytes:
        click.echo(f"the last file ends in {result.partial_tail_bytes} bytes of an incomplete event: the "
                   "next run resumes before it", err=True)
    if stats:
        _print_stats(result.stats)
    warn_unmatched_tables(result.stats.unmatched_table_patterns)
