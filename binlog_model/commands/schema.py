"""``binlog-model schema``: replay the DDL of binlogs (or of a SQL file) and print the schema history.

Strategy: a thin shell over ``schema_tracker``. Binlogs go through the one DDL pass
(``pipeline.history_from_binlogs``: rows and table maps skipped unparsed, ``resolve.ddl_pass`` replaying the
DDL as ``events`` replays it), the very code the library and the Spark pre-pass use, so the history (GTIDs
with their tags, the server charset taken from the QUERY events' ``collation_server`` when no
``--server-charset`` is given) is the one ``events`` builds; ``--sql`` files go through
``SchemaHistory.apply_script``. ``--snapshot`` seeds the starting schema like everywhere else
(``io.snapshots.load_snapshot``): a ``mysqldump --no-data`` file, a saved history ``.json``, or a server URL.
Text
output lists each recorded statement (position, GTID, statement, changes) and then the final catalog;
``--json`` prints one document: the versioned history (``binlog-model/schema-history``, with the final catalog
and every column attribute). Errors are ``BinlogError``s, which ``binlog_model.cli`` turns into one line and
exit status 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from binlog_model.charsets import CHARSET_CODECS, normalize_charset
from binlog_model.commands import options
from binlog_model.errors import ConfigError
from binlog_model.io.file_source import FileSource
from binlog_model.io.live import url_with_options
from binlog_model.io.snapshots import load_snapshot, read_sql_text, save_history
from binlog_model.io.tls import TlsOptions
from binlog_model.position import EventPosition
from binlog_model.resolve.ddl_pass import DDL_SKIP_TYPES
from binlog_model.runs.pipeline import history_from_source
from binlog_model.runs.progress import ProgressDisplay, progress_mode, source_counters
from schema_tracker.changes import (
    CreateOrModifyColumn,
    CreateTable,
    SchemaChange,
)
from schema_tracker.model import Catalog, ColumnSchema, charset_of_collation
from schema_tracker.render import iter_create_statements
from schema_tracker.snapshot import dump_header_database, dump_server_version

__all__ = ["command", "describe_change", "describe_column"]


def describe_column(col: ColumnSchema) -> str:
    """``name column_type [CHARACTER SET cs COLLATE coll] [NOT NULL] [DEFAULT x] [flags]``."""
    parts = [f"`{col.name}`", col.column_type]
    if col.charset:
        parts.append(f"CHARACTER SET {col.charset} COLLATE {col.collation}")
    if not col.nullable:
        parts.append("NOT NULL")
    if col.has_default:
        parts.append(f"DEFAULT {col.default if col.default is not None else 'NULL'}")
    if col.auto_increment:
        parts.append("AUTO_INCREMENT")
    if col.generated is not None:
        parts.append(f"AS ({col.generated}) {'STORED' if col.generated_stored else 'VIRTUAL'}")
    if col.invisible:
        parts.append("INVISIBLE")
    return " ".join(parts)


def describe_change(change: SchemaChange) -> str:
    """One line per change: its type and the fields that matter."""
    name = type(change).__name__
    where = f"{change.db}.{change.table}" if change.table else change.db
    if isinstance(change, CreateTable):
        return f"{name} {where} ({len(change.columns)} columns, primary key {list(change.primary_key)})"
    if isinstance(change, CreateOrModifyColumn):
        pos = " FIRST" if change.first else (f" AFTER `{change.after}`" if change.after else "")
        return f"{name} {where}: {describe_column(change.column)}{pos}"
    fields = {k: getattr(change, k) for k in change.__dataclass_fields__ if k not in ("db", "table")}
    detail = ", ".join(f"{k}={v!r}" for k, v in fields.items())
    return f"{name} {where}" + (f": {detail}" if detail else "")


def _print_catalog(catalog: Catalog) -> None:
    click.echo("== final catalog ==")
    for table in catalog.iter_tables():
        flags = " [UNCERTAIN]" if table.uncertain else ""
        click.echo(f"{table.qualified_name} (charset {table.charset}, collation {table.collation}, "
                   f"primary key {list(table.primary_key)}){flags}")
        for col in table.columns:
            click.echo(f"    {describe_column(col)}")


def _parse_at(text: str) -> EventPosition:
    file, sep, offset = text.rpartition(":")
    if not sep or not file or not offset.isdigit():
        raise ConfigError(f"--at {text!r} is not FILE:POS (e.g. binlog.000003:1542)")
    return EventPosition(file.rsplit("/", 1)[-1], int(offset))


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@options.binlog_files(required=False)
@click.option("--sql", "sql_files", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="A file of plain SQL statements to replay instead of binlogs (repeatable).")
@click.option("--snapshot", metavar="FILE|URL",
              help="Starting schema: a mysqldump --no-data .sql file, a schema history .json, or a live "
              "server mysql://user@host:port/db.")
@click.option("--database", "-d", default=None,
              help="Default database for --sql and --snapshot statements before any USE (default: the "
              "database a dump's header comment names).")
@click.option("--server-charset", default=None,
              help="Server default charset that CREATE DATABASE without a charset inherits in --sql files "
              "(default latin1), and in binlog statements that do not log their collation_server (each "
              "statement that logs it takes its own, as `events` does).")
@click.option("--server-collation", default=None, help="Server default collation (default: the charset's).")
@click.option("--lenient", is_flag=True,
              help="Record DDL that cannot be understood as skipped and mark its table uncertain.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (history and final catalog).")
@click.option("--ddl", "as_ddl", is_flag=True,
              help="Print the schema (at the end, or --at a position) as CREATE DATABASE / CREATE TABLE "
              "statements instead of the history.")
@click.option("--at", "at", metavar="FILE:POS", default=None,
              help="With --ddl: the schema in force for an event at this position (after every DDL "
              "before it).")
@click.option("--ddl-for", type=click.Choice(["source", "mysql", "mariadb"]), default="source",
              show_default=True,
              help="With --ddl: write integer display widths as this server writes them (MySQL 8.0.19+: "
              "bigint; MariaDB: bigint(20)); 'source' follows the binlog's or the snapshot's server.")
@click.option("--save", type=click.Path(dir_okay=False, path_type=Path),
              help="Also save the history as JSON to this file.")
@click.option("--progress/--no-progress", default=None,
              help="Progress on stderr: a bar on a terminal (the default there), log lines elsewhere "
              "(default: none off a terminal).")
@options.live_connection
def command(files: tuple[str, ...], sql_files: tuple[Path, ...], snapshot: str | None, database: str | None,
            server_charset: str | None, server_collation: str | None, lenient: bool, as_json: bool,
            as_ddl: bool, at: str | None, ddl_for: str, save: Path | None, progress: bool | None,
            tls: TlsOptions, connect_timeout: float | None) -> None:
    """Replay the DDL in binlog FILES (files, folders or globs; local or URIs) or --sql files, and print the
    schema history and final catalog."""
    snapshot = url_with_options(snapshot, tls, connect_timeout) if snapshot else snapshot
    if not files and not sql_files:
        raise ConfigError("give binlog FILEs or --sql FILE")
    if files and sql_files:
        raise ConfigError("give either binlog FILEs or --sql files, not both")
    if (at is not None or ddl_for != "source") and not as_ddl:
        raise ConfigError("--at and --ddl-for go with --ddl")
    if as_ddl and as_json:
        raise ConfigError("give --ddl or --json, not both")
    at_position = _parse_at(at) if at is not None else None
    if server_charset is not None and normalize_charset(server_charset) not in CHARSET_CODECS:
        known = ", ".join(sorted(CHARSET_CODECS))
        raise ConfigError(f"unknown --server-charset {server_charset!r}; known charsets: {known}")
    if server_collation is not None and server_charset is not None \
            and charset_of_collation(server_collation) != normalize_charset(server_charset):
        raise ConfigError(f"--server-collation {server_collation} is not a collation of {server_charset}")
    catalog = Catalog(server_charset=server_charset or "latin1", server_collation=server_collation)
    history = load_snapshot(snapshot, lenient=lenient, database=database, catalog=catalog)
    if files:
        # The server charset of the first QUERY event is adopted when nothing else set it (no snapshot,
        # no --server-charset), as `events` does.
        source = FileSource(list(files), skip_types=DDL_SKIP_TYPES, drop_skipped=True)
        with ProgressDisplay("schema", source_counters(source), mode=progress_mode(progress)):
            history = history_from_source(source, history, pin_server_charset=server_charset is not None)
    for path in sql_files:
        text = read_sql_text(path)
        # a mysqldump file names its server: MySQL 9's DDL is read (and printed) by MySQL 9's rules
        history.server_version = history.server_version or dump_server_version(text)
        # A dump of one database has no USE: its header names the database, as for --snapshot.
        history.apply_script(text, database or dump_header_database(text), source=path.name)
    if save is not None:
        save_history(history, save)
    if as_json:
        click.echo(json.dumps(history.to_json(), indent=1, sort_keys=True))
        return
    if as_ddl:
        catalog = history.catalog if at_position is None else history.at(at_position)
        target = {"mysql": "8.0.19", "mariadb": "10.11.0-MariaDB"}.get(ddl_for, history.server_version)
        for statement in iter_create_statements(catalog, server_version=target):
            click.echo(statement + ";")
        return
    for entry in history:
        gtid = f" gtid {entry.gtid}" if entry.gtid else ""
        db = f" db {entry.default_db}" if entry.default_db else ""
        click.echo(f"# at {entry.position}{gtid}{db}")
        click.echo(" ".join(entry.statement.split()))
        for change in entry.changes:
            click.echo(f"  -> {describe_change(change)}")
    _print_catalog(history.catalog)
