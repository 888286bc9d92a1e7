"""``binlog-model apply SOURCE --state DIR --to delta:PATH``: keep current-state replica tables in Delta Lake.

SOURCE is binlog files, folders or globs (each run applies what is new since the last, as ``events --state``)
or a live server ``mysql://USER@HOST:PORT`` (followed as ``tail`` follows it). The engine is
``binlog_model.replica``; docs/replica.md says what the tables hold and what a reader sees.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from binlog_model.commands import options
from binlog_model.errors import ConfigError
from binlog_model.io.files import is_uri
from binlog_model.io.snapshots import load_snapshot
from binlog_model.io.tls import TlsOptions
from binlog_model.resolve.options import ResolveOptions
from binlog_model.resolve.table_filter import TableFilter

__all__ = ["command"]


def _delta_path(to: str) -> str:
    """--to delta:PATH → the replica's root: a local folder (made absolute) or a URI."""
    if not to.startswith("delta:"):
        raise ConfigError(f"--to {to!r}: give delta:PATH (the folder or URI of the replica's Delta tables)")
    root = to[len("delta:"):]
    return root if is_uri(root) else os.path.abspath(root)


@click.command("apply")
@click.argument("source", nargs=-1, required=True)
@click.option("--state", "state_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="State directory: position, GTIDs and schema history, committed after the tables.")
@click.option("--to", "to", required=True, metavar="delta:PATH",
              help="The replica: one Delta table per source table at PATH/<db>/<table> (a folder, or a URI "
              "such as s3://bucket/replica).")
@click.option("--initial", default="none", show_default=True, metavar="none|live|DUMP.sql",
              help="Initial data of a new state: none (the binlogs start where the tables were created), "
              "live (the chosen tables read from the server at a recorded position, then followed from "
              "there), or a mysqldump/mariadb-dump --single-transaction --source-data=2 file (its rows, "
              "then the binlog from its position; local, URI or .gz). Later runs resume from the state.")
@click.option("--initial-chunk", type=click.IntRange(min=1), default=50_000, show_default=True,
              help="--initial: rows written at a time (memory stays bounded by a chunk).")
@options.table_filter
@click.option("--snapshot", metavar="FILE|URL", help="Starting schema of a new state (as for `events`).")
@click.option("--database", "-d", default=None, help="Database of the snapshot's statements before any USE.")
@click.option("--stop-at-end", is_flag=True, help="Live: stop at the end of the binlog the server has at the "
              "start.")
@click.option("--from", "start", default="earliest", show_default=True, metavar="earliest|FILE:POS",
              help="Live: where a new state starts.")
@click.option("--commit-every", type=click.IntRange(min=1), default=100_000, show_default=True,
              help="Live: commit after this many transactions ... (each commit is a Delta commit per table "
              "changed: fewer, larger ones read faster)")
@click.option("--commit-interval", default="5s", show_default=True, help="... or after this long.")
@click.option("--commit-bytes", type=click.IntRange(min=1), default=64 << 20, show_default=True,
              help="Files: commit after about this many bytes of binlog.")
@click.option("--checkpoint-every", type=click.IntRange(min=0), default=100, show_default=True,
              help="Compact a table's small files and write a Delta checkpoint every this many commits "
              "(0: never).")
@click.option("--allow-incomplete-tail", is_flag=True,
              help="Files: stop before a transaction cut off at the end of the input (a server's active "
              "binlog); the next run resumes there.")
@options.lenient_ddl
@options.no_verify_checksum
@click.option("--progress/--no-progress", default=None, help="Progress on stderr.")
@options.live_connection
def command(source: tuple[str, ...], state_dir: Path, to: str, initial: str, initial_chunk: int,
            tables: TableFilter, snapshot: str | None, database: str | None, stop_at_end: bool,
            start: str, commit_every: int, commit_interval: str, commit_bytes: int, checkpoint_every: int,
            allow_incomplete_tail: bool, lenient_ddl: bool, no_verify_checksum: bool, progress: bool | None,
            tls: TlsOptions, connect_timeout: float | None) -> int:
    """Apply the changes of SOURCE (binlog files, folders, globs, or a live server mysql://USER@HOST:PORT)
    to current-state replica tables in Delta Lake, exactly once."""
    from binlog_model.io.live import url_with_options
    from binlog_model.replica.run import apply_shaping
    from binlog_model.runs.allocator import limit_malloc_arenas
    from binlog_model.runs.continuity import snapshot_digest
    from binlog_model.runs.progress import progress_mode

    limit_malloc_arenas()       # before the run's threads: see runs.allocator

    live = len(source) == 1 and source[0].startswith("mysql://")
    if initial == "live" and not live:
        raise ConfigError("--initial live reads the tables from the server: give a mysql:// SOURCE")
    if initial not in ("none", "live") and snapshot is not None:
        raise ConfigError("--initial DUMP.sql gives the starting schema too: leave out --snapshot")
    target = _delta_path(to)
    select = tables if tables.active else None
    snapshot_url = url_with_options(snapshot, tls, connect_timeout) if snapshot else None
    # the filter also leaves the rows of other tables undecoded (at their TABLE_MAP); DDL is always tracked
    resolve_options = ResolveOptions.parse(image="full", allow_incomplete_tail=allow_incomplete_tail,
                                           tables=tables)
    shaping = apply_shaping(source[0] if live else "files", str(target), lenient_ddl=lenient_ddl,
                            database=database, tables=tables)

    def load_history() -> Any:
        return load_snapshot(snapshot_url, lenient=lenient_ddl, database=database)

    def load_dump(replica: Any) -> Any:
        """--initial DUMP.sql: the dump's rows into the replica; where the binlog continues."""
        from binlog_model.io.files import iter_lines
        from binlog_model.replica.dump import load_initial_dump

        taken = load_initial_dump(iter_lines(initial, "dump file"), initial, replica, select,
                                  chunk=initial_chunk, lenient=lenient_ddl)
        click.echo(f"apply: initial data of {taken.tables} table(s), {taken.rows} rows, from {initial} at "
                   f"{taken.file}:{taken.offset}", err=True)
        return taken
    dump = load_dump if initial not in ("none", "live") else None

    if live:
        return _live(source[0], state_dir, target, resolve_options, shaping, load_history, select,
                     snapshot_id=snapshot_digest(snapshot), start=start, stop_at_end=stop_at_end,
                     commit_every=commit_every, commit_interval=commit_interval, tls=tls,
                     connect_timeout=connect_timeout, lenient_ddl=lenient_ddl,
                     checkpoint_every=checkpoint_every, verify_checksum=not no_verify_checksum,
                     initial=initial, initial_chunk=initial_chunk, load_dump=dump)
    from binlog_model.replica.run import run_apply_files
    from binlog_model.spark.partitions import expand_paths

    result = run_apply_files(expand_paths(list(source)), state_dir, target, options=resolve_options,
                             load_history=load_history, shaping_options=shaping,
                             snapshot_id=snapshot_digest(snapshot), verify_checksum=not no_verify_checksum,
                             commit_bytes=commit_bytes, select=select, checkpoint_every=checkpoint_every,
                             progress=progress_mode(progress), initial=dump, lenient_ddl=lenient_ddl)
    stats = result.stats
    click.echo(f"apply: {stats.row_changes} row changes ({stats.skipped} applied before) to "
               f"{len(stats.tables)} table(s) in {stats.delta_commits} Delta commits from "
               f"{len(result.files)} file(s); state at {result.position or 'the start'}", err=True)
    options.warn_unmatched_tables(result.unmatched_table_patterns)
    return 0


def _live(url: str, state_dir: Path, target: str, options: ResolveOptions, shaping: dict[str, Any],
          load_history: Callable[[], Any], select: Callable[[str, str], bool] | None, *,
          snapshot_id: str | None, start: str, stop_at_end: bool, commit_every: int, commit_interval: str,
          tls: TlsOptions, connect_timeout: float | None, lenient_ddl: bool, checkpoint_every: int,
          verify_checksum: bool, initial: str, initial_chunk: int, load_dump: Callable[[Any], Any] | None
          ) -> int:
    from binlog_model.commands.tail import _seconds
    from binlog_model.io.connector import require_pymysql
    from binlog_model.io.live import parse_server_url, url_with_options
    from binlog_model.io.replication_source import parse_start
    from binlog_model.io.state import RunState
    from binlog_model.replica.run import LiveReplicaOutput, app_id_of
    from binlog_model.replica.writer import ReplicaWriter
    from binlog_model.runs.collector import fewer_collections
    from binlog_model.runs.tailing import TailSettings, run_tail
    from binlog_model.sinks.delta import DeltaReplica

    require_pymysql()
    server = parse_server_url(url_with_options(url, tls, connect_timeout))
    parse_start(start)
    replicas: list[DeltaReplica] = []

    def replica_of(state: RunState) -> DeltaReplica:
        if not replicas:        # one replica for every session: its token was saved before the first
            replicas.append(DeltaReplica(target, app_id_of(state), checkpoint_every=checkpoint_every))
        return replicas[0]

    def output(state: RunState, history: Callable[[], Any], settle: Callable[[], None]) -> LiveReplicaOutput:
        return LiveReplicaOutput(ReplicaWriter(replica_of(state), history, select, settle))

    def prepare(state: RunState, connect: Callable[..., Any]) -> None:
        """--initial, on a new state: the tables at a position (the server's, or a dump's), then the binlog
        from there."""
        if initial == "none" or not state.fresh:
            return
        from binlog_model.replica.initial import take_initial_snapshot

        if load_dump is not None:
            taken = load_dump(replica_of(state))
        else:
            taken = take_initial_snapshot(connect, replica_of(state), select, chunk=initial_chunk)
            click.echo(f"apply: initial snapshot of {taken.tables} table(s), {taken.rows} rows, at "
                       f"{taken.file}:{taken.offset}", err=True)
        settings.start = f"{taken.file}:{taken.offset}"
        settings.load_history = lambda: taken.history(lenient_ddl)

    settings = TailSettings(
        server=server, state_dir=state_dir, out_dir=state_dir, options=options, shaping=shaping,
        snapshot_id=snapshot_id, load_history=load_history, verify_checksum=verify_checksum, start=start,
        stop_at_end=stop_at_end, commit_transactions=commit_every, commit_seconds=_seconds(commit_interval),
        lenient_ddl=lenient_ddl, output=output, prepare=prepare)
    settings.on_reconnect = lambda err, delay: click.echo(f"apply: {err}; reconnecting in {delay:.1f} s",
                                                          err=True)
    settings.on_session = lambda text: click.echo(f"apply: {text}", err=True)

    def stop(signum: int, frame: Any) -> None:
        settings.stop.set()
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        with fewer_collections():       # the writer's batches: see runs.collector
            result = run_tail(settings)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    click.echo(f"apply: {result.events} events, {result.commits} commits, {result.reconnects} reconnects; "
               f"state at {result.position or 'the start'}", err=True)
    sys.stderr.flush()
    return 0
