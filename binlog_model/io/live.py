"""A starting schema read from a live server: ``--snapshot mysql://user@host:port/db``.

Strategy: parse the URL, get the password from the environment (``BINLOG_MODEL_PASSWORD``, else
``MYSQL_PWD``) or, on a terminal, from a prompt, connect with pymysql through ``io.connector.Connector``
(TLS as the URL's ``ssl-mode``/``ssl-ca``/``ssl-cert``/``ssl-key`` ask, the first connection's patience
``connect-timeout``, failures classified once), and hand the connection to
``schema_tracker.snapshot.catalog_from_server`` (information_schema). A password written in the URL
(``mysql://user:secret@host``, percent-encoded as in any URL) is taken and wins over the environment, as a
client's ``-p`` wins over ``MYSQL_PWD``; the environment keeps it out of ``ps``, shell history and job logs,
so the docs recommend it. The password is never echoed: ``ServerURL`` leaves it out of its repr, errors name
``user@host:port`` only, and ``redacted_url`` is the URL as it may be shown or stored (a state's snapshot
fingerprint).
The command-line flags of the same names go into the URL (``url_with_options``), so a snapshot URL
carries its TLS settings wherever it is passed (the Spark ``snapshot`` option too).
"""

from __future__ import annotations

import getpass
import os
import sys
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit, urlunsplit

from binlog_model.errors import ConfigError
from binlog_model.io.connector import DEFAULT_CONNECT_TIMEOUT, Connector, require_pymysql
from binlog_model.io.server_errors import classify
from binlog_model.io.tls import TLS_QUERY_KEYS, TlsOptions
from schema_tracker.model import Catalog
from schema_tracker.snapshot import catalog_from_server

__all__ = ["PASSWORD_ENV", "ServerURL", "catalog_from_url", "parse_server_url", "redacted_url",
           "server_password", "url_with_options"]

PASSWORD_ENV = ("BINLOG_MODEL_PASSWORD", "MYSQL_PWD")
_SCHEMES = ("mysql", "mariadb")
_TIMEOUT_KEY = "connect-timeout"
_QUERY_KEYS = ("socket", _TIMEOUT_KEY, *TLS_QUERY_KEYS.values())


@dataclass(frozen=True)
class ServerURL:
    """``mysql://user[:password]@host:port/db?socket=/path&ssl-mode=verify-ca&ssl-ca=/ca.pem&connect-timeout=60``:
    a live server. ``password``: the URL's, if it has one (never in the repr)."""

    user: str
    host: str
    port: int
    database: str | None
    socket: str | None
    tls: TlsOptions = field(default_factory=TlsOptions)
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    password: str | None = field(default=None, repr=False)

    @property
    def where(self) -> str:
        """host:port, or the socket's path."""
        return self.socket or f"{self.host}:{self.port}"


def _timeout(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 31_536_000:
        raise ConfigError(f"connect-timeout {text!r}: give a number of seconds above 0")
    return value


def url_with_options(url: str, tls: TlsOptions, connect_timeout: float | None = None) -> str:
    """``url`` with the command line's TLS options and ``--connect-timeout`` in its query (a file name is
    returned as it is). ``ConfigError`` when the URL gives one of them differently."""
    if "://" not in url:
        return url
    parts = urlsplit(url)
    query = parse_qs(parts.query, keep_blank_values=True)
    merged = TlsOptions.from_query(query).merged(tls)
    items = [(k, v) for k, values in query.items() if k not in TLS_QUERY_KEYS.values() for v in values]
    if connect_timeout is not None:
        given = query.get(_TIMEOUT_KEY)
        if given and _timeout(given[0]) != connect_timeout:
            raise ConfigError(f"--connect-timeout {connect_timeout:g} conflicts with {_TIMEOUT_KEY}="
                              f"{given[0]} in the URL: give it once")
        items = [(k, v) for k, v in items if k != _TIMEOUT_KEY] + [(_TIMEOUT_KEY, f"{connect_timeout:g}")]
    return urlunsplit(parts._replace(query=urlencode(items + merged.query_items(), safe="/")))


def redacted_url(url: str) -> str:
    """``url`` without the password its user part may hold (``mysql://u:secret@h`` → ``mysql://u@h``): what
    may be shown, logged or stored. Anything else is returned as it is."""
    if "://" not in url:
        return url
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user, _, host = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=f"{user.split(':', 1)[0]}@{host}"))


def parse_server_url(url: str) -> ServerURL:
    """Parse a server URL; ``ConfigError`` for another scheme or a query key it does not know (a misspelt
    ``ssl-mode`` must not quietly mean no verification). A password in the URL is kept in ``password``."""
    parts = urlsplit(url)
    if parts.scheme not in _SCHEMES:
        raise ConfigError(f"a server URL starts with mysql:// or mariadb://, not {parts.scheme}://")
    try:
        port = parts.port or 3306
    except ValueError as err:
        raise ConfigError(f"bad port in the snapshot URL: {err}") from err
    database = unquote(parts.path.lstrip("/")) or None
    query = parse_qs(parts.query)
    unknown = sorted(set(query) - set(_QUERY_KEYS))
    if unknown:
        raise ConfigError(f"unknown key {unknown[0]!r} in the server URL's query: it takes "
                          f"{', '.join(_QUERY_KEYS)}")
    socket = query.get("socket", [None])[0]
    timeout = _timeout(query[_TIMEOUT_KEY][0]) if _TIMEOUT_KEY in query else DEFAULT_CONNECT_TIMEOUT
    password = unquote(parts.password) if parts.password is not None else None
    return ServerURL(unquote(parts.username or getpass.getuser()), parts.hostname or "localhost", port,
                     database, socket, TlsOptions.from_query(query), timeout, password)


def server_password(server: ServerURL) -> str:
    """The password for ``server``: the URL's, else ``$BINLOG_MODEL_PASSWORD`` (else ``$MYSQL_PWD``), else a
    prompt on a terminal, else empty."""
    if server.password is not None:
        return server.password
    for name in PASSWORD_ENV:
        if name in os.environ:
            return os.environ[name]
    if sys.stdin.isatty():
        return getpass.getpass(f"password for {server.user}@{server.host}: ")
    return ""


def catalog_from_url(url: str, *, database: str | None = None, connect: Any = None) -> Catalog:
    """The catalog of the server ``url`` names: its database (or ``database``, or every non-system one).
    ``connect``: the DB-API ``connect`` to use (default: a ``Connector`` with the URL's TLS options)."""
    server = parse_server_url(url)
    wanted = database or server.database
    where = server.where
    grant = f"SELECT ON `{wanted}`.*" if wanted else "SELECT ON *.*"
    if connect is None:
        connect = Connector(where, server.user, tls=server.tls, connect_timeout=server.connect_timeout,
                            grant=grant)
    params: dict[str, Any] = {"user": server.user, "password": server_password(server), "charset": "utf8mb4",
                              "connect_timeout": 10}
    if server.socket:
        params["unix_socket"] = server.socket
    else:
        params.update(host=server.host, port=server.port)
    connection = connect(**params)       # our errors, classified (or the given connect's own)
    account = f"'{server.user}'"
    pymysql = require_pymysql()
    try:
        catalog = catalog_from_server(connection, databases=[wanted] if wanted else None)
    except (pymysql.Error, OSError) as err:
        raise classify(err, where=where, account=account, grant=grant) from None
    finally:
        connection.close()
    if wanted and not any(db.lower() == wanted.lower() for db in catalog.databases):
        raise ConfigError(f"the server at {where} has no database {wanted!r} that {server.user!r} can see "
                          f"(without a privilege on it, information_schema hides it: GRANT {grant} TO "
                          f"{account})")
    return catalog
