"""Command-line options that several commands take with one meaning, stated once (name, flags, help).

Strategy: a shared option is a ``click.option`` decorator built here and applied by each command, so its
help text and parsing cannot drift between ``events``, ``resolve``, ``tail`` and ``dump``. Options whose
meaning differs per command (``--snapshot``'s sources, ``--progress``' display) stay with the command.
``live_connection`` gathers the TLS options into one value, so each command that opens a live connection
(``tail``, a ``mysql://`` snapshot, the coming ``apply``) takes the same ones; ``table_filter`` gathers
``--tables``/``--exclude-tables`` into one ``TableFilter``, ``event_range`` mysqlbinlog's range options into
one ``EventRange``, and ``binlog_files`` expands the inputs (files, folders, globs) the one way.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from binlog_model.io.compression import DEFAULT_LEVEL, MAX_LEVEL
from binlog_model.io.connector import DEFAULT_CONNECT_TIMEOUT
from binlog_model.io.files import expand_paths
from binlog_model.io.tls import MODES, TlsOptions
from binlog_model.resolve.event_range import EventRange
from binlog_model.resolve.table_filter import TableFilter

__all__ = ["always_include", "binlog_files", "compression", "event_range", "json_values", "lenient_ddl",
           "live_connection", "no_verify_checksum", "table_filter", "warn_unmatched_tables"]

always_include = click.option(
    "--always-include", "always_include", multiple=True, metavar="DB.TABLE.COLUMN",
    help="Column always put in `before` for UPDATE/DELETE (repeatable).")
lenient_ddl = click.option(
    "--lenient-ddl", is_flag=True,
    help="Skip DDL the tracker cannot follow: the table it names becomes uncertain, and its rows then fail "
    "loudly (UncertainSchemaError), never resolved from TABLE_MAP metadata. A statement a snapshot newer "
    "than the binlog is already past (SchemaNewerThanBinlogError) is recorded and followed as the server ran "
    "it.")
json_values = click.option(
    "--json-values", type=click.Choice(["typed", "plain"]), default="typed", show_default=True,
    help="JSONL column values: typed (lossless, {\"intValue\": 3}) or plain (\"cid\": 3; big integers and "
    "DECIMAL as strings, ISO-8601 times, base64 bytes; see docs/contracts.md).")


def binlog_files(*, required: bool = True) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The ``FILES...`` argument of a command that reads binlogs: files, folders and globs, local or URIs,
    expanded by ``io.files.expand_paths`` (rotation order, each file once, ``.index``/``.idx`` files
    passed over) and handed to the command as ``files: tuple[str, ...]``; a name that matches nothing is a
    ``ConfigError`` before anything is read."""
    def expand(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(expand_paths(value)) if value else ()

    return click.argument("files", nargs=-1, required=required, metavar="FILES...", callback=expand)


no_verify_checksum = click.option("--no-verify-checksum", is_flag=True,
                                  help="Do not verify CRC32 event checksums.")


def live_connection(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options of a live connection (``tail``'s server, a ``mysql://`` snapshot), as ``mysqlbinlog``
    names them: ``--ssl-mode``, ``--ssl-ca``, ``--ssl-cert``, ``--ssl-key`` (handed to the command as one
    ``tls: TlsOptions``) and ``--connect-timeout`` (``connect_timeout``: seconds, or None when not given).
    The same keys in a server URL's query mean the same; giving one both ways differently is an error."""
    @functools.wraps(command)
    def with_tls(*args: Any, ssl_mode: str | None, ssl_ca: str | None, ssl_cert: str | None,
                 ssl_key: str | None, **kwargs: Any) -> Any:
        return command(*args, tls=TlsOptions(ssl_mode, ssl_ca, ssl_cert, ssl_key), **kwargs)

    decorators = [
        click.option("--ssl-mode", type=click.Choice(MODES, case_sensitive=False), default=None,
                     help="TLS to the server: disabled, preferred (the default: TLS when the server offers "
                     "it, unverified), required (TLS, unverified), verify-ca (the certificate is signed by "
                     "--ssl-ca), verify-identity (and names the host connected to). See docs/tail.md."),
        click.option("--ssl-ca", metavar="FILE", help="CA certificate(s) (PEM) that sign the server's; "
                     "alone, it means --ssl-mode verify-ca."),
        click.option("--ssl-cert", metavar="FILE", help="Client certificate (PEM), for accounts that "
                     "REQUIRE X509."),
        click.option("--ssl-key", metavar="FILE", help="The client certificate's private key (PEM)."),
        click.option("--connect-timeout", type=click.FloatRange(min=0, min_open=True), default=None,
                     help=f"Seconds the first connection keeps trying before the run fails "
                     f"[default: {DEFAULT_CONNECT_TIMEOUT:g}]."),
    ]
    for decorate in reversed(decorators):
        with_tls = decorate(with_tls)
    return with_tls


def table_filter(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--tables DB.TABLE`` and ``--exclude-tables DB.TABLE`` (repeatable, globs), handed to the command as
    one ``tables: TableFilter`` (parsed here, so a malformed pattern fails before anything is read)."""
    @functools.wraps(command)
    def with_filter(*args: Any, include_tables: tuple[str, ...], exclude_tables: tuple[str, ...],
                    **kwargs: Any) -> Any:
        return command(*args, tables=TableFilter.from_patterns(include_tables, exclude_tables), **kwargs)

    with_filter = click.option(
        "--exclude-tables", "exclude_tables", multiple=True, metavar="DB.TABLE",
        help="Leave out the rows of these tables (repeatable; globs as for --tables). Exclusion wins over "
        "--tables.")(with_filter)
    return click.option(
        "--tables", "include_tables", multiple=True, metavar="DB.TABLE",
        help="Output only the rows of these tables (repeatable; globs: shop.*, *.audit_*; names compared "
        "case-insensitively). The DDL of every table is still tracked.")(with_filter)


def event_range(command: Callable[..., Any]) -> Callable[..., Any]:
    """``mysqlbinlog``'s range options, with its meaning (see ``resolve.event_range``): ``--start-position``
    (of the first file), ``--stop-position`` (of the last file), ``--start-datetime``, ``--stop-datetime``,
    handed to the command as ``window: EventRange | None`` over its ``files``."""
    @functools.wraps(command)
    def with_range(*args: Any, start_position: int | None, stop_position: int | None,
                   start_datetime: str | None, stop_datetime: str | None, **kwargs: Any) -> Any:
        window = EventRange.parse(kwargs.get("files") or (), start_position=start_position,
                                  stop_position=stop_position, start_datetime=start_datetime,
                                  stop_datetime=stop_datetime)
        return command(*args, window=window, **kwargs)

    decorators = [
        click.option("--start-position", "-j", type=click.IntRange(min=4), default=None, metavar="N",
                     help="Output from the first event at offset N or later of the first file (as "
                     "mysqlbinlog; DDL before it is still tracked)."),
        click.option("--stop-position", type=click.IntRange(min=4), default=None, metavar="N",
                     help="Stop at the first event at offset N or later of the last file (as mysqlbinlog)."),
        click.option("--start-datetime", default=None, metavar="DATETIME",
                     help="Output from the first event stamped at this time or later ('2026-11-28 10:00:00', "
                     "local time as mysqlbinlog reads it, or with an offset: ...T10:00:00+00:00)."),
        click.option("--stop-datetime", default=None, metavar="DATETIME",
                     help="Stop at the first event stamped at this time or later (as --start-datetime)."),
    ]
    for decorate in reversed(decorators):
        with_range = decorate(with_range)
    return with_range


def warn_unmatched_tables(patterns: list[str], say: Callable[[str], None] | None = None) -> None:
    """One warning line per ``--tables``/``--exclude-tables`` pattern that matched no table of the input,
    through ``say`` (default: stderr)."""
    for pattern in patterns:
        text = (f"warning: table pattern {pattern!r} matched no table the schema history or the binlog ever "
                "named (a typo?)")
        if say is None:
            click.echo(text, err=True)
        else:
            say(text)


def compression(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--compress none|zstd`` and ``--compress-level N``, handed to the command as one ``zstd_level``: the
    level to compress at, or None for plain output. A level without ``--compress zstd`` is a usage error."""
    @functools.wraps(command)
    def with_level(*args: Any, compress: str, compress_level: int | None, **kwargs: Any) -> Any:
        if compress_level is not None and compress != "zstd":
            raise click.UsageError("--compress-level needs --compress zstd")
        level = (DEFAULT_LEVEL if compress_level is None else compress_level) if compress == "zstd" else None
        return command(*args, zstd_level=level, **kwargs)

    with_level = click.option(
        "--compress-level", type=click.IntRange(1, MAX_LEVEL), default=None, metavar="N",
        help=f"zstd level, 1 (fastest) to {MAX_LEVEL} (smallest) [default: {DEFAULT_LEVEL}].")(with_level)
    return click.option(
        "--compress", type=click.Choice(["none", "zstd"]), default="none", show_default=True,
        help="Compress the output as zstd frames (parts get a .zst suffix; with --state a frame ends at "
        "every commit, so a killed run is cut back to whole frames). `binlog-model cat` reads it.",
    )(with_level)
