"""Opening the connections of one run to one live server: TLS as asked, and patience for the first one.

Strategy: a ``Connector`` is the ``connect`` of a run (``tail``'s control and dump connections, a
``mysql://`` snapshot): it adds the ``--ssl-mode`` parameters (``io.tls``) to pymysql's, and hands every
failure to ``io.server_errors.classify``. What cannot heal is raised at once. What can heal (refused,
timed out) is retried here, with a growing pause, only until a connection of the run has worked and for
at most ``connect_timeout`` seconds: a server that was never reached ends the run with
``ServerUnreachableError`` naming host:port, the cause and the remedy. Once a connection worked, a
transient failure is raised as the ``ConnectionLostError`` it is, and the caller's own loop (the tail's
reconnects) retries. pymysql itself is an extra (``live``): without it this says which to install.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Final

from binlog_model.errors import ConnectionLostError, MissingExtraError, ServerUnreachableError
from binlog_model.io.server_errors import REPLICATION_GRANT, classify, first_cause
from binlog_model.io.tls import TlsOptions

__all__ = ["DEFAULT_CONNECT_TIMEOUT", "Connector", "require_pymysql"]

#: seconds the first connection of a run keeps trying (``--connect-timeout``)
DEFAULT_CONNECT_TIMEOUT: Final = 60.0
_PAUSE_FIRST, _PAUSE_MAX = 0.2, 5.0


def require_pymysql() -> Any:
    """The pymysql module; ``MissingExtraError`` naming the extra when it is not installed."""
    try:
        import pymysql
    except ImportError:
        raise MissingExtraError("live connections (tail, mysql:// snapshots) need pymysql: "
                                "pip install 'binlog-model[live]'") from None
    return pymysql


class Connector:
    """``connector(**pymysql_params)``: an open pymysql connection to the server at ``where``, as
    ``user``. ``stop``: set, it ends the first connection's retries (a SIGTERM). ``grant``: the
    privileges this run needs, named when one is missing."""

    def __init__(self, where: str, user: str, *, tls: TlsOptions | None = None,
                 connect_timeout: float = DEFAULT_CONNECT_TIMEOUT, grant: str = REPLICATION_GRANT,
                 stop: threading.Event | None = None) -> None:
        self.where = where
        self.user = user
        self.tls = tls or TlsOptions()
        self.connect_timeout = connect_timeout
        self.grant = grant
        self.stop = stop
        self.worked = False         # a connection of this run succeeded: later failures are the caller's

    def __call__(self, **params: Any) -> Any:
        pymysql = require_pymysql()
        if "unix_socket" not in params:     # a local socket is private already: no TLS (as the clients)
            params.update(self.tls.connect_params())
        deadline = time.monotonic() + self.connect_timeout
        pause = _PAUSE_FIRST
        while True:
            if not self.worked:         # no attempt may outlast the patience left
                params["connect_timeout"] = max(0.5, min(params.get("connect_timeout", 10),
                                                         deadline - time.monotonic()))
            try:
                connection = pymysql.connect(**params)
            except (pymysql.Error, OSError) as err:
                error = classify(err, where=self.where, account=f"'{self.user}'", grant=self.grant,
                                 tls_mode=self.tls.effective_mode, logged_in=False)
                if not isinstance(error, ConnectionLostError):
                    raise error from None
                if self.worked:         # the caller's reconnects take it from here
                    raise ConnectionLostError(f"cannot connect to {self.where} ({first_cause(err)})",
                                              errno=error.errno) from err
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ServerUnreachableError(
                        f"cannot connect to {self.where} within {self.connect_timeout:g} s "
                        f"({first_cause(err)}) — check that the server runs and listens there and that no "
                        "firewall is in the way; --connect-timeout waits longer", where=self.where,
                        errno=error.errno) from None
                if self.stop is not None and self.stop.wait(min(pause, left)):
                    raise error from err        # the caller sees the stop
                if self.stop is None:
                    time.sleep(min(pause, left))
                pause = min(pause * 2, _PAUSE_MAX)
                continue
            self.worked = True
            return connection
