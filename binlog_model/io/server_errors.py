"""Transient or permanent: the one decision, for every failure of a live connection (``tail``'s control
and dump connections, ``mysql://`` snapshots).

Strategy: ``classify`` maps a pymysql error (or the ``OSError`` under it) to one of our errors. A
``ConnectionLostError`` can heal, so the caller may retry: a refused or timed-out connection, a server
restarting or shutting down, a killed dump thread, a server gone away, too many connections. Everything
else fails the run at once with one line that names the cause and the remedy: a refused login
(``ServerAuthenticationError``), a missing privilege (``PrivilegeError``, naming the ``GRANT``), a host
name DNS does not know (``UnknownHostError``), TLS that cannot be set up as asked (``TlsError``), and any
other refusal by the server (``ReplicationError`` with its errno: 1236, a purged position, is explained
by the replication source). The first connection of a run is retried only for a while
(``io.connector.Connector``), so an unreachable server ends a cron job instead of hanging it.
"""

from __future__ import annotations

import socket
import ssl
from typing import Any, Final

from binlog_model.errors import (
    BinlogError,
    ConnectionLostError,
    PrivilegeError,
    ReplicationError,
    ServerAuthenticationError,
    TlsError,
    UnknownHostError,
)

__all__ = ["REPLICATION_GRANT", "TRANSIENT_ERRNOS", "account_name", "classify"]

#: what a tail needs (Debezium's list for its MySQL connector, less the snapshot's SELECT and RELOAD)
REPLICATION_GRANT: Final = "REPLICATION SLAVE, REPLICATION CLIENT ON *.*"

# Client and server error numbers that mean the connection (not the request) failed: a reconnect may work.
# 1040: too many connections; 1053: server shutdown; 1158-1161: network read/write errors; 1205/1213: lock
# wait timeout / deadlock; 1317 / 1927: the query or connection was killed (MySQL / MariaDB; a killed dump
# thread); 2002/2003: cannot connect (socket / TCP); 2006: gone away; 2013: lost; 2055: lost at handshake;
# 4031: disconnected for inactivity.
TRANSIENT_ERRNOS: Final = frozenset({1040, 1053, 1158, 1159, 1160, 1161, 1205, 1213, 1317, 1927, 2002, 2003,
                                     2006, 2013, 2055, 4031})
# The login is refused: 1045 access denied (password, or a REQUIRE X509/SSL account without a certificate);
# 1129 host blocked; 1130 host not allowed; 1251 / 2059 / 2061 authentication plugin; 1698 unix_socket
# plugin; 1820 / 1862 expired password; 3118 / 4151 account locked (MySQL / MariaDB).
_LOGIN_ERRNOS: Final = frozenset({1045, 1129, 1130, 1251, 1698, 1820, 1862, 2059, 2061, 3118, 4151})
# A privilege is missing: 1044 database, 1142 / 1143 table / column, 1227 global (SUPER, REPLICATION ...).
_PRIVILEGE_ERRNOS: Final = frozenset({1044, 1142, 1143, 1227})
_CR_SSL_CONNECTION_ERROR: Final = 2026
# DNS answers that are final (no such name); a temporary failure (EAI_AGAIN) can heal
_NO_SUCH_HOST: Final = frozenset({socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME),
                                  socket.EAI_FAIL})


def account_name(current_user: str) -> str:
    """``CURRENT_USER()``'s ``user@host`` as a ``GRANT`` names it: ``'user'@'host'``."""
    user, _, host = str(current_user).rpartition("@")
    return f"'{user}'@'{host}'" if user else f"'{current_user}'@'%'"


def _errno_and_message(err: BaseException) -> tuple[int | None, str]:
    args: tuple[Any, ...] = err.args
    if len(args) >= 2 and isinstance(args[0], int) and not isinstance(err, OSError):
        return args[0], str(args[1])
    return None, str(err)


def classify(err: BaseException, *, where: str, account: str, grant: str = REPLICATION_GRANT,
             tls_mode: str = "preferred", logged_in: bool = True) -> BinlogError:
    """Our error for ``err``, a failure talking to the server at ``where`` (host:port or socket) as
    ``account`` (``'user'@'host'``): a ``ConnectionLostError`` when retrying can heal it, else a
    permanent one (see the module docstring). ``grant``: the privileges the caller needs (``... ON ...``),
    named in a ``PrivilegeError``; ``tls_mode``: the ``--ssl-mode`` in force, named in a ``TlsError``;
    ``logged_in``: the login succeeded, so an "access denied" (1045: MariaDB's answer to a replica
    registration without REPLICATION SLAVE) is a missing privilege, not a refused login."""
    errno, message = _errno_and_message(err)
    cause = getattr(err, "original_exception", None) or (err if isinstance(err, OSError) else None)
    if isinstance(cause, ssl.SSLCertVerificationError):
        reason = cause.verify_message or str(cause)
        remedy = ("connect by a host name the certificate lists, or use --ssl-mode verify-ca"
                  if "mismatch" in reason.lower()
                  else "give the CA that signed the server's certificate with --ssl-ca")
        return TlsError(f"the certificate of the server at {where} fails verification under --ssl-mode "
                        f"{tls_mode}: {reason} — {remedy}", where=where, errno=errno)
    if isinstance(cause, ssl.SSLError):
        return TlsError(f"TLS with the server at {where} failed under --ssl-mode {tls_mode}: "
                        f"{cause.reason or cause} — check the server's TLS settings and --ssl-cert/--ssl-key",
                        where=where, errno=errno)
    if errno == _CR_SSL_CONNECTION_ERROR:
        return TlsError(f"--ssl-mode {tls_mode} needs TLS, but the server at {where} does not offer it "
                        "— enable TLS on the server (ssl_cert, ssl_key) or use --ssl-mode preferred",
                        where=where, errno=errno)
    if isinstance(cause, socket.gaierror) and cause.errno in _NO_SUCH_HOST:
        host = where.rpartition(":")[0] or where
        return UnknownHostError(f"unknown host {host!r}: DNS has no such name ({cause.strerror}) — check the "
                                "host name in the URL", where=where, errno=errno)
    if errno in _PRIVILEGE_ERRNOS or (logged_in and errno == 1045):
        return PrivilegeError(f"{account} lacks a privilege on {where}: ({errno}) {message} — GRANT {grant} "
                              f"TO {account}", where=where, errno=errno)
    if errno in _LOGIN_ERRNOS:
        return ServerAuthenticationError(
            f"the server at {where} refused the login of {account}: ({errno}) {message} — check the user, "
            "the password (the URL's, $BINLOG_MODEL_PASSWORD or the prompt) and, for an account that"
            " REQUIREs X509, --ssl-cert/--ssl-key", where=where, errno=errno)
    if errno is None or errno in TRANSIENT_ERRNOS:
        shown = f"({errno}) {message}" if errno is not None else message
        return ConnectionLostError(f"the server at {where} stopped answering ({shown})", errno=errno)
    return ReplicationError(f"the server at {where} refused: ({errno}) {message}", errno=errno)


def first_cause(err: BaseException) -> str:
    """What a connection error says, without pymysql's wrapping (for a message)."""
    cause: Any = getattr(err, "original_exception", None)
    if isinstance(cause, OSError):
        return cause.strerror or str(cause)
    return _errno_and_message(err)[1]
