"""A starting schema read from a live server: ``--snapshot mysql://user@host:port/db``.

Strategy: parse the URL, get the password from the environment (``BINLOG_MODEL_PASSWORD``, else
``MYSQL_PWD``) or, on a terminal, from a prompt, connect with pymysql, and hand the connection to
``schema_tracker.snapshot.catalog_from_server`` (information_schema). A password written in the URL is
refused: command lines show up in ``ps``, shell history and job logs. Errors never echo the password.
"""

from __future__ import annotations

import getpass
import os
import sys
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from binlog_model.errors import ConfigError
from schema_tracker.model import Catalog
from schema_tracker.snapshot import catalog_from_server

__all__ = ["PASSWORD_ENV", "ServerURL", "catalog_from_url", "parse_server_url", "server_password"]

PASSWORD_ENV = ("BINLOG_MODEL_PASSWORD", "MYSQL_PWD")
_SCHEMES = ("mysql", "mariadb")


@dataclass(frozen=True)
class ServerURL:
    """``mysql://user@host:port/db?socket=/path``: where to read the schema from (no password)."""

    user: str
    host: str
    port: int
    database: str | None
    socket: str | None


def parse_server_url(url: str) -> ServerURL:
    """Parse a server URL; ``ConfigError`` for another scheme or a password in the URL."""
    parts = urlsplit(url)
    if parts.scheme not in _SCHEMES:
        raise ConfigError(f"a server snapshot URL starts with mysql:// or mariadb://, not {parts.scheme}://")
    if parts.password is not None:
        raise ConfigError("do not put the password in the snapshot URL (command lines show up in ps, shell "
                          f"history and logs): set {PASSWORD_ENV[0]} or type it at the prompt")
    try:
        port = parts.port or 3306
    except ValueError as err:
        raise ConfigError(f"bad port in the snapshot URL: {err}") from err
    database = unquote(parts.path.lstrip("/")) or None
    socket = parse_qs(parts.query).get("socket", [None])[0]
    return ServerURL(unquote(parts.username or getpass.getuser()), parts.hostname or "localhost", port,
                     database, socket)


def server_password(server: ServerURL) -> str:
    """The password for ``server``: ``$BINLOG_MODEL_PASSWORD`` (else ``$MYSQL_PWD``), else a prompt on a
    terminal, else empty."""
    for name in PASSWORD_ENV:
        if name in os.environ:
            return os.environ[name]
    if sys.stdin.isatty():
        return getpass.getpass(f"password for {server.user}@{server.host}: ")
    return ""


def catalog_from_url(url: str, *, database: str | None = None, connect: Any = None) -> Catalog:
    """The catalog of the server ``url`` names: its database (or ``database``, or every non-system one).
    ``connect``: the DB-API ``connect`` to use (default ``pymysql.connect``)."""
    server = parse_server_url(url)
    if connect is None:
        try:
            import pymysql
        except ImportError as err:
            raise ConfigError("a server snapshot needs pymysql: pip install pymysql") from err
        connect = pymysql.connect
        errors: tuple[type[BaseException], ...] = (pymysql.Error,)
    else:
        errors = (Exception,)
    params: dict[str, Any] = {"user": server.user, "password": server_password(server), "charset": "utf8mb4",
                              "connect_timeout": 10}
    if server.socket:
        params["unix_socket"] = server.socket
    else:
        params.update(host=server.host, port=server.port)
    wanted = database or server.database
    where = server.socket or f"{server.host}:{server.port}"
    try:
        connection = connect(**params)
    except errors as err:
        raise ConfigError(f"cannot connect to {server.user}@{where} for the schema snapshot: "
                          f"{err.args[-1] if err.args else err}") from None
    try:
        catalog = catalog_from_server(connection, databases=[wanted] if wanted else None)
    except errors as err:
        raise ConfigError(f"cannot read information_schema on {where}: {err}") from None
    finally:
        connection.close()
    if wanted and not any(db.lower() == wanted.lower() for db in catalog.databases):
        raise ConfigError(f"the server at {where} has no database {wanted!r}")
    return catalog
