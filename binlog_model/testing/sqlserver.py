"""What every throwaway test server offers over SQL, whichever way it runs (local MariaDB, a container).

Strategy: a backend supplies ``connect()`` and how closed binlog files reach the caller
(``_copy_closed``); this base runs statements, queries, and picks the binlog files a ``flush_and_collect``
closed since the previous one, so tests on a shared server get the files holding their own statements.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from types import TracebackType
from typing import Any, Self

from binlog_model.errors import BinlogError, ConfigError
from binlog_model.testing.sqltext import split_statements

__all__ = ["ROW_IMAGES", "HarnessError", "SqlServer", "check_choice", "check_server_id", "run_statements"]


#: the ``binlog_row_image`` values of every server product
ROW_IMAGES = ("FULL", "MINIMAL", "NOBLOB")


class HarnessError(BinlogError):
    """The test server could not be started, queried or stopped; the message says why and shows its log."""


def check_choice(name: str, value: str, choices: Sequence[str]) -> str:
    """``value`` upper-cased if it is one of ``choices``; ``ConfigError`` naming the option otherwise."""
    if value.upper() not in choices:
        raise ConfigError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value.upper()


def check_server_id(server_id: int) -> None:
    if not 1 <= server_id < 2**32:
        raise ConfigError(f"server_id must be in 1..2**32-1, got {server_id}")


def run_statements(conn: Any, statements: Sequence[str]) -> None:
    """Run ``statements`` in order on an open pymysql connection, reading and discarding any result sets.

    Raises ``HarnessError`` naming the failing statement (its 1-based index and text) and the server error.
    """
    import pymysql

    with conn.cursor() as cur:
        for index, stmt in enumerate(statements, 1):
            try:
                cur.execute(stmt)
                cur.fetchall()
            except pymysql.Error as err:
                raise HarnessError(f"statement {index} failed: {err}; statement: {stmt}") from err


class SqlServer:
    """Base of the server backends: SQL helpers and binlog collection over ``connect()``."""

    label = "server"

    def __init__(self) -> None:
        self._collected: set[str] = set()

    #: the server's ``SELECT VERSION()`` and how long ``start`` took, once started
    version = ""
    startup_seconds = 0.0

    @property
    def running(self) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def _launch(self, began: float) -> None:  # pragma: no cover - abstract
        """Start the server and return once root can connect; ``HarnessError`` with its log tail if not."""
        raise NotImplementedError

    def start(self) -> Self:
        """Start the server; returns ``self`` once it accepts connections. Nothing is left behind when it
        fails (``HarnessError`` saying why, with the server's log tail)."""
        if self.running:
            raise HarnessError(f"{self.label} is already started")
        began = time.monotonic()
        try:
            self._launch(began)
            self.version = str(self.query("SELECT VERSION()")[0][0])
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - began
        return self

    def stop(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    #: how long ``start`` waits for the first connection, and how often it tries
    start_timeout = 60.0
    poll_interval = 0.5

    def _ready_to_try(self) -> bool:
        """Whether a connection may be tried now (a backend says False while the server cannot be reached
        yet, and raises ``HarnessError`` when the server died)."""
        return True

    def _wait_ready(self, began: float) -> None:
        """Return once root can connect; ``HarnessError`` with the last error and the log tail when the
        server does not accept a connection within ``start_timeout`` of ``began``."""
        import pymysql

        last: Exception | None = None
        while time.monotonic() < began + self.start_timeout:
            if self._ready_to_try():
                try:
                    pymysql.connect(**self._endpoint(), user="root", password="", connect_timeout=2).close()
                    return
                except pymysql.Error as err:
                    last = err
            time.sleep(self.poll_interval)
        raise HarnessError(f"{self.label} did not accept connections within {self.start_timeout:.0f} s"
                           f" (last error: {last})\n--- log tail ---\n{self.log_tail()}")

    def _endpoint(self) -> dict[str, Any]:  # pragma: no cover - abstract
        """Where ``pymysql.connect`` reaches the server: ``host``/``port`` or ``unix_socket``."""
        raise NotImplementedError

    def log_tail(self, lines: int = 40) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def connect(self, database: str | None = None, **kw: Any) -> Any:
        """A new pymysql connection as root (autocommit on, utf8mb4). Keyword arguments override the
        defaults and go to ``pymysql.connect``; ``HarnessError`` with the server's log tail when it fails."""
        import pymysql

        params: dict[str, Any] = {**self._endpoint(), "user": "root", "password": "", "database": database,
                                  "autocommit": True, "charset": "utf8mb4", "connect_timeout": 10, **kw}
        try:
            return pymysql.connect(**params)
        except pymysql.Error as err:
            where = params.get("unix_socket") or f"{params.get('host')}:{params.get('port')}"
            raise HarnessError(f"cannot connect to {self.label} at {where}: {err}"
                               f"\n--- log tail ---\n{self.log_tail()}") from err

    def execute(self, sql: str | Sequence[str], database: str | None = None) -> None:
        """Run one statement, a script (split on ``;``), or a list of statements over one connection.

        Raises ``HarnessError`` naming the failing statement and the server's error.
        """
        statements = split_statements(sql) if isinstance(sql, str) else list(sql)
        conn = self.connect(database)
        try:
            run_statements(conn, statements)
        finally:
            conn.close()

    def query(self, sql: str, database: str | None = None, args: Any = None) -> list[tuple[Any, ...]]:
        """Run one statement and return its rows as tuples; ``HarnessError`` names the failing statement."""
        import pymysql

        conn = self.connect(database)
        try:
            with conn.cursor() as cur:
                cur.execute(sql, args)
                return [tuple(row) for row in cur.fetchall()]
        except pymysql.Error as err:
            raise HarnessError(f"query failed on {self.label}: {err}; statement: {sql}") from err
        finally:
            conn.close()

    def binlog_names(self) -> list[str]:
        """Names of all binlog files the server lists (``SHOW BINARY LOGS``), oldest first, active last."""
        return [str(row[0]) for row in self.query("SHOW BINARY LOGS")]

    def _flush_closed_names(self, include_previous: bool) -> list[str]:
        """``FLUSH BINARY LOGS``; the names it closed that no earlier collect returned (all with
        ``include_previous``). The new active file is never among them."""
        before = self.binlog_names()
        self.execute("FLUSH BINARY LOGS")
        closed = [name for name in before if include_previous or name not in self._collected]
        self._collected.update(before)
        return closed

    #: the statement that deletes all binlog files (MySQL 8.4+ renamed RESET MASTER)
    reset_binlogs_statement = "RESET MASTER"
    #: the statement that shows the active binlog file and position (MySQL 8.4+ renamed SHOW MASTER STATUS)
    binlog_status_statement = "SHOW MASTER STATUS"

    def binlog_position(self) -> tuple[str, int]:
        """The active binlog file and the position the next event will be written at."""
        row = self.query(self.binlog_status_statement)[0]
        return str(row[0]), int(row[1])

    def reset_binlogs(self) -> None:
        """Delete all binlog files (and the GTID state) and start again at the first one."""
        self.execute(self.reset_binlogs_statement)
        self._collected.clear()
