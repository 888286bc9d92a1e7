"""Command-line options that several commands take with one meaning, stated once (name, flags, help).

Strategy: a shared option is a ``click.option`` decorator built here and applied by each command, so its
help text and parsing cannot drift between ``events``, ``resolve``, ``tail`` and ``dump``. Options whose
meaning differs per command (``--snapshot``'s sources, ``--progress``' display) stay with the command.
``live_connection`` gathers the TLS options into one value, so each command that opens a live connection
(``tail``, a ``mysql://`` snapshot, the coming ``apply``) takes the same ones.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from binlog_model.io.compression import DEFAULT_LEVEL, MAX_LEVEL
from binlog_model.io.connector import DEFAULT_CONNECT_TIMEOUT
from binlog_model.io.tls import MODES, TlsOptions

__all__ = ["always_include", "compression", "lenient_ddl", "live_connection", "no_verify_checksum"]

always_include = click.option(
    "--always-include", "always_include", multiple=True, metavar="DB.TABLE.COLUMN",
    help="Column always put in `before` for UPDATE/DELETE (repeatable).")
lenient_ddl = click.option(
    "--lenient-ddl", is_flag=True,
    help="Skip DDL the tracker cannot follow: the table it names becomes uncertain, and its rows then fail "
    "loudly (UncertainSchemaError), never resolved from TABLE_MAP metadata.")
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
