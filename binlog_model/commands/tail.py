"""``binlog-model tail mysql://USER@HOST:PORT --state DIR --out DIR``: follow a live server's binlog.

The engine is ``binlog_model.runs.tailing``; this module maps options to ``TailSettings``, SIGTERM/SIGINT to a
clean stop (finish the transaction, commit, exit 0), and a purged position to exit status 3. On a terminal
(or with ``--progress``) the one progress display (``runs.progress``) shows, live, the committed position,
the lag behind the server and events/s.
"""

from __future__ import annotations

import json
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any

import click

from binlog_model.commands import options
from binlog_model.commands.options import warn_unmatched_tables
from binlog_model.errors import ConfigError
from binlog_model.io.connector import require_pymysql
from binlog_model.io.live import parse_server_url, url_with_options
from binlog_model.io.snapshots import load_snapshot
from binlog_model.io.tls import TlsOptions
from binlog_model.resolve.options import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS, ImageMode, ResolveOptions
from binlog_model.resolve.table_filter import TableFilter

PURGED_EXIT = 3


def _seconds(text: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)?", text.strip())
    if m is None:
        raise click.BadParameter(f"{text!r}: give a duration such as 5s, 500ms or 1m")
    value = float(m.group(1))
    return value / 1000 if m.group(2) == "ms" else value * 60 if m.group(2) == "m" else value


@click.command("tail")
@click.argument("url")
@click.option("--state", "state_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="State directory: position, GTIDs and schema history, committed with the output.")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output directory: part-NNNNNN files, committed with the state.")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "proto"]), default="jsonl", show_default=True)
@click.option("--from", "start", default="earliest", show_default=True, metavar="earliest|now|FILE:POS|GTIDS",
              help="Where a new state starts; later runs resume from the state.")
@click.option("--server-id", type=click.IntRange(1, 2**32 - 1), default=None,
              help="This replica's server_id (default: a random id in 3000000000-3999999999, kept in the "
              "state).")
@click.option("--heartbeat", default="5s", show_default=True,
              help="Server heartbeat period; nothing for 3 periods means a dead connection (reconnect).")
@click.option("--stop-at-end", is_flag=True,
              help="Stop at the end of the binlog the server has at the start.")
@click.option("--spool", type=click.Path(file_okay=False, path_type=Path),
              help="Also write the server's binlog files here as received (a raw mirror, crash-safe).")
@click.option("--commit-every", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Commit after this many transactions ...")
@click.option("--commit-interval", default="1s", show_default=True, help="... or after this long.")
@click.option("--source", default="", help="Source label put in every event, e.g. ppc:1.")
@click.option("--snapshot", metavar="FILE|URL", help="Starting schema of a new state (as for `events`).")
@click.option("--database", "-d", default=None, help="Database of the snapshot's statements before any USE.")
@options.always_include
@options.table_filter
@click.option("--image", type=click.Choice([m.value for m in ImageMode]), default="changed",
              show_default=True)
@click.option("--max-rows", type=click.IntRange(min=1), default=DEFAULT_MAX_ROWS, show_default=True)
@click.option("--max-bytes", type=click.IntRange(min=1), default=DEFAULT_MAX_BYTES, show_default=True)
@click.option("--statement-text", type=click.Choice(["all", "first", "none"]), default="all",
              show_default=True)
@click.option("--json-defaults", is_flag=True, help="JSONL: also write fields at their default.")
@options.json_values
@options.compression
@options.lenient_ddl
@options.no_verify_checksum
@click.option("--stats", is_flag=True, help="Print a JSON line to stderr at each commit.")
@click.option("--progress/--no-progress", default=None,
              help="Show the position, the lag behind the server and events/s: a status line on a terminal "
                   "(the default there); off one, a line every 30 seconds and one at the end.")
@click.option("--resume-by", type=click.Choice(["auto", "position", "gtid"]), default="auto", hidden=True)
@options.live_connection
def command(url: str, state_dir: Path, out: Path, fmt: str, start: str, server_id: int | None, heartbeat: str,
            stop_at_end: bool, spool: Path | None, commit_every: int, commit_interval: str, source: str,
            snapshot: str | None, database: str | None, always_include: tuple[str, ...], tables: TableFilter,
            image: str,
            max_rows: int, max_bytes: int,
            statement_text: str, json_defaults: bool, json_values: str, zstd_level: int | None,
            lenient_ddl: bool, no_verify_checksum: bool, stats: bool, resume_by: str, progress: bool | None,
            tls: TlsOptions,
            connect_timeout: float | None) -> int:
    """Follow the binlog of the server at URL (mysql://user@host:port, optionally ?ssl-mode=...&ssl-ca=...;
    the password comes from $BINLOG_MODEL_PASSWORD or a prompt) into BinlogEvents, restartably."""
    from binlog_model.io.replication_source import PurgedPositionError, parse_start
    from binlog_model.io.spool import Spool
    from binlog_model.runs.continuity import shaping as run_shaping
    from binlog_model.runs.continuity import snapshot_digest
    from binlog_model.runs.progress import ProgressDisplay, progress_mode
    from binlog_model.runs.tailing import TailSettings, run_tail

    require_pymysql()                     # the live extra, named before anything else
    server = parse_server_url(url_with_options(url, tls, connect_timeout))
    snapshot_url = url_with_options(snapshot, tls, connect_timeout) if snapshot else None
    parse_start(start)                    # a bad --from fails before anything connects
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out names a directory; {out} is a file")
    options = ResolveOptions.parse(source=source, always_include=always_include, image=image,
                                   max_rows=max_rows, max_bytes=max_bytes, statement_text=statement_text,
                                   tables=tables)
    include = sorted(f"{db}.{t}.{c}" for (db, t), cols in options.always_include.items() for c in cols)
    shaping = run_shaping(source=options.source, always_include=include, lenient_ddl=lenient_ddl,
                          database=database, out=str(out.resolve()), command="tail", events=options,
                          json_defaults=json_defaults, fmt=fmt, json_values=json_values,
                          compress=zstd_level is not None)
    settings = TailSettings(
        server=server, state_dir=state_dir, out_dir=out, options=options, shaping=shaping,
        snapshot_id=snapshot_digest(snapshot),
        load_history=lambda: load_snapshot(snapshot_url, lenient=lenient_ddl, database=database),
        fmt=fmt, json_defaults=json_defaults, json_values=json_values, zstd_level=zstd_level,
        verify_checksum=not no_verify_checksum,
        server_id=server_id,
        start=start, stop_at_end=stop_at_end, heartbeat=_seconds(heartbeat), commit_transactions=commit_every,
        commit_seconds=_seconds(commit_interval), resume_by=resume_by, lenient_ddl=lenient_ddl,
        # --from now without --snapshot: the schema is read from the server under the position's lock
        snapshot_now=start == "now" and snapshot is None, spool=Spool(spool) if spool is not None else None)
    began = time.monotonic()
    if stats:
        def stats_line(doc: dict[str, Any]) -> None:
            doc["seconds"] = round(time.monotonic() - began, 3)
            click.echo(json.dumps(doc, sort_keys=True), err=True)
        settings.on_progress = stats_line

    mode = progress_mode(progress)
    shown: list[ProgressDisplay] = []

    def display(poll: Any) -> ProgressDisplay:
        shown.append(ProgressDisplay("tail", poll, mode=mode, live=True))
        return shown[-1]
    if mode != "off":
        settings.display = display

    def say(text: str) -> None:       # above the status line while there is one
        if shown:
            shown[-1].echo(f"tail: {text}")
        else:
            click.echo(f"tail: {text}", err=True)

    def reconnecting(err: BaseException, delay: float) -> None:
        say(f"{err}; reconnecting in {delay:.1f} s")
    settings.on_reconnect = reconnecting
    settings.on_session = say

    def stop(signum: int, frame: Any) -> None:
        settings.stop.set()
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        result = run_tail(settings)
    except PurgedPositionError as err:
        click.echo(f"error: {err}", err=True)
        return PURGED_EXIT
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    click.echo(f"tail: {result.events} events, {result.commits} commits, {result.reconnects} reconnects; "
               f"state at {result.position or 'the start'}", err=True)
    warn_unmatched_tables(result.stats.unmatched_table_patterns)
    sys.stderr.flush()
    return 0
