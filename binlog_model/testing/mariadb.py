"""A throwaway local MariaDB server for tests and fixture generation.

Strategy: ``mariadb-install-db`` bootstraps a fresh datadir under a private temp directory (about 0.5 s),
then ``mariadbd --no-defaults`` runs on it as a child process with its own unix socket, a free TCP port on
127.0.0.1, and row-based binary logging with GTID and ANNOTATE_ROWS events. ``--no-defaults`` keeps the
machine's my.cnf out, so every setting the tests rely on is spelled out in ``_server_args``:

* ``binlog_format=ROW``, ``binlog_row_image`` / ``binlog_row_metadata`` as asked, ``binlog_checksum=CRC32``;
* ``character_set_server=utf8mb4`` / ``collation_server=utf8mb4_general_ci``, so tables without an explicit
  charset are utf8mb4;
* root-less too: as a normal user the server runs as that user (``--user`` is only passed as root), and
  the SQL account is always ``root@localhost`` without a password (auth method ``normal``);
* ``time_zone=+00:00``, so TIMESTAMP values written by scenarios are the same on every machine;
* ``sql_mode`` is the server default (``STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,
  NO_ENGINE_SUBSTITUTION``); scenarios that need zero dates set it per session;
* durability is off (``innodb_flush_log_at_trx_commit=2``, ``sync_binlog=0``, no doublewrite): the server is
  thrown away, and the binlog file content does not depend on fsync.

``stop()`` always kills the process and removes the temp directory; an ``atexit`` hook stops servers that a
crashed test session left running. Every failure raises ``HarnessError`` with the server's error-log tail.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from binlog_model.errors import ConfigError
from binlog_model.testing.sqlserver import HarnessError, SqlServer, run_statements

__all__ = ["HarnessError", "MariaDBServer", "find_mariadb_binaries", "mariadb_available", "run_statements"]

_SEARCH_DIRS = ("/usr/sbin", "/usr/libexec", "/usr/local/sbin", "/usr/local/bin", "/usr/bin")
_ROW_IMAGES = ("FULL", "MINIMAL", "NOBLOB")
_ROW_METADATA = ("NO_LOG", "MINIMAL", "FULL")
_START_TIMEOUT = 30.0
_STOP_TIMEOUT = 15.0

_LIVE: weakref.WeakSet[MariaDBServer] = weakref.WeakSet()


def find_mariadb_binaries() -> tuple[Path, Path]:
    """Return ``(mariadbd, mariadb-install-db)`` paths; raise ``HarnessError`` saying what is missing."""
    server = _which("mariadbd", "mysqld")
    install = _which("mariadb-install-db", "mysql_install_db")
    if server is None:
        raise HarnessError("mariadbd not found on PATH or in " + ", ".join(_SEARCH_DIRS)
                           + " (install the Debian package mariadb-server)")
    if install is None:
        raise HarnessError("mariadb-install-db not found on PATH or in " + ", ".join(_SEARCH_DIRS))
    return server, install


def mariadb_available() -> tuple[bool, str]:
    """Is a local MariaDB server installed? Returns ``(True, path)`` or ``(False, reason)``; never raises."""
    try:
        server, _ = find_mariadb_binaries()
    except HarnessError as err:
        return False, str(err)
    return True, str(server)


class MariaDBServer(SqlServer):
    """One throwaway ``mariadbd`` on a temporary datadir. Use as a context manager, or ``start``/``stop``.

    All attributes describing the running server (``port``, ``socket``, ``datadir``, ``binlog_dir``,
    ``version``) are set by ``start()``.
    """

    def __init__(
        self,
        row_image: str = "FULL",
        row_metadata: str = "FULL",
        binlog_annotate: bool = True,
        server_id: int = 1,
        gtid_domain_id: int = 0,
        extra_args: Sequence[str] = (),
    ) -> None:
        if row_image.upper() not in _ROW_IMAGES:
            raise ConfigError(f"row_image must be one of {_ROW_IMAGES}, got {row_image!r}")
        if row_metadata.upper() not in _ROW_METADATA:
            raise ConfigError(f"row_metadata must be one of {_ROW_METADATA}, got {row_metadata!r}")
        if not 1 <= server_id < 2**32:
            raise ConfigError(f"server_id must be in 1..2**32-1, got {server_id}")
        self.row_image = row_image.upper()
        self.row_metadata = row_metadata.upper()
        self.binlog_annotate = binlog_annotate
        self.server_id = server_id
        self.gtid_domain_id = gtid_domain_id
        self.extra_args = tuple(extra_args)
        self.binlog_basename = "mysql-bin"
        self.version = ""
        self.port = 0
        self.startup_seconds = 0.0
        self._root: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        # Binlog files already handed out by flush_and_collect (so each call returns only new ones).
        super().__init__()
        self.label = "MariaDB"

    # --- paths ------------------------------------------------------------------------------------------

    @property
    def root(self) -> Path:
        if self._root is None:
            raise HarnessError("MariaDB server is not started")
        return self._root

    @property
    def datadir(self) -> Path:
        return self.root / "data"

    @property
    def socket(self) -> Path:
        return self.root / "mariadbd.sock"

    @property
    def binlog_dir(self) -> Path:
        return self.datadir

    @property
    def error_log(self) -> Path:
        return self.root / "error.log"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    # --- lifecycle --------------------------------------------------------------------------------------

    def start(self) -> MariaDBServer:
        """Bootstrap a datadir and start the server; returns ``self`` once it accepts connections.

        Raises ``HarnessError`` (with the error-log tail) if the binaries are missing, bootstrap fails, the
        process exits, or no connection succeeds within 30 s. Nothing is left behind on failure.
        """
        if self._proc is not None:
            raise HarnessError("MariaDB server already started")
        mariadbd, install_db = find_mariadb_binaries()
        began = time.monotonic()
        self._root = Path(tempfile.mkdtemp(prefix="binlog-model-mariadb-"))
        _LIVE.add(self)
        try:
            self._bootstrap(install_db)
            # Another process may grab the free port before mariadbd binds it: retry with a new port.
            for attempt in range(3):
                self.port = _free_port()
                with open(self.error_log, "ab") as log:
                    self._proc = subprocess.Popen(
                        [str(mariadbd), *self._server_args()],
                        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                        start_new_session=True,  # a Ctrl-C in pytest must not kill it before stop() runs
                    )
                try:
                    self._wait_ready(began)
                    break
                except HarnessError:
                    if attempt == 2 or "Address already in use" not in self.log_tail():
                        raise
                    self._proc.wait()
            self.version = str(self.query("SELECT VERSION()")[0][0])
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - began
        return self

    def stop(self) -> None:
        """Kill the server and delete its temp directory. Idempotent; fine on an already-dead server."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=_STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                proc.wait(timeout=_STOP_TIMEOUT)
        root, self._root = self._root, None
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)
        self._collected.clear()
        _LIVE.discard(self)

    def __enter__(self) -> MariaDBServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # --- SQL --------------------------------------------------------------------------------------------

    def connect(self, database: str | None = None, **kw: Any) -> Any:
        """A new pymysql connection as root over the unix socket (autocommit on, utf8mb4).

        Keyword arguments override the defaults and go to ``pymysql.connect``.
        """
        import pymysql

        params: dict[str, Any] = {
            "unix_socket": str(self.socket), "user": "root", "password": "", "database": database,
            "autocommit": True, "charset": "utf8mb4", "connect_timeout": 10,
        }
        params.update(kw)
        try:
            return pymysql.connect(**params)
        except pymysql.Error as err:
            raise HarnessError(f"cannot connect to MariaDB at {self.socket}: {err}"
                               f"\n--- error log tail ---\n{self.log_tail()}") from err


    # --- binlogs ----------------------------------------------------------------------------------------

    def flush_and_collect(self, dest_dir: Path | None = None, *,
                          include_previous: bool = False) -> list[Path]:
        """``FLUSH BINARY LOGS`` and return the binlog files it closed, oldest first.

        The new active file is never returned. By default only files not returned by an earlier call (on
        this server, since start or ``reset_binlogs``) are returned, so a test on the shared session server
        gets the files holding its own statements (plus whatever other tests wrote since the last collect:
        filter by database). ``include_previous=True`` returns every closed file. With ``dest_dir`` the
        files are copied there and the copies are returned.
        """
        closed = self._flush_closed_names(include_previous)
        paths = [self.binlog_dir / name for name in closed]
        for path in paths:
            if not path.is_file():
                raise HarnessError(f"binlog file listed by SHOW BINARY LOGS is missing: {path}")
        if dest_dir is None:
            return paths
        dest = Path(dest_dir)
        dest.mkdir(parents=True, exist_ok=True)
        copies = []
        for path in paths:
            target = dest / path.name
            shutil.copyfile(path, target)
            copies.append(target)
        return copies

    def reproducible_flags(self) -> list[str]:
        """The server flags without the per-run paths and port (for fixture metadata)."""
        per_run = ("--datadir=", "--socket=", "--port=", "--pid-file=", "--log-error=", "--log-bin=",
                   "--tmpdir=")
        flags = [arg for arg in self._server_args() if not arg.startswith(per_run)]
        return [*flags, f"--log-bin={self.binlog_basename}"]

    def log_tail(self, lines: int = 40) -> str:
        """The last ``lines`` lines of the server's error log ('' if there is none)."""
        try:
            text = self.error_log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    # --- internals --------------------------------------------------------------------------------------

    def _innodb_args(self) -> list[str]:
        # A private tmpdir: with the shared /tmp, concurrent servers (parallel test sessions) were seen to
        # fail bootstrap on each other's #sql-temptable files.
        return [f"--tmpdir={self.root / 'tmp'}", "--innodb-buffer-pool-size=16M", "--innodb-log-file-size=8M"]

    def _bootstrap(self, install_db: Path) -> None:
        (self.root / "tmp").mkdir(exist_ok=True)
        cmd = [str(install_db), "--no-defaults", f"--datadir={self.datadir}", *_user_args(),
               "--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve",
               *self._innodb_args()]
        # Under heavy load mariadb-install-db has failed once in a while ("Unknown table
        # 'mysql.tmp_user_sys'") and then worked: one retry on a clean datadir, then the error.
        for attempt in (1, 2):
            try:
                done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=60,
                                      check=False)
            except (OSError, subprocess.TimeoutExpired) as err:
                raise HarnessError(f"mariadb-install-db failed to run: {err}; "
                                   f"command: {' '.join(cmd)}") from err
            if done.returncode == 0:
                return
            output = (done.stdout + done.stderr).decode(errors="replace")
            if attempt == 2:
                tail = "\n".join(output.splitlines()[-30:])
                raise HarnessError(f"mariadb-install-db exited with {done.returncode}; command: "
                                   f"{' '.join(cmd)}\n--- output tail ---\n{tail}")
            shutil.rmtree(self.datadir, ignore_errors=True)

    def _server_args(self) -> list[str]:
        args = [
            "--no-defaults",
            f"--datadir={self.datadir}",
            f"--socket={self.socket}",
            f"--port={self.port}",
            "--bind-address=127.0.0.1",
            f"--pid-file={self.root / 'mariadbd.pid'}",
            f"--log-error={self.error_log}",
            *_user_args(),
            f"--log-bin={self.datadir / self.binlog_basename}",
            "--binlog-format=ROW",
            f"--binlog-row-image={self.row_image}",
            f"--binlog-row-metadata={self.row_metadata}",
            f"--binlog-annotate-row-events={'ON' if self.binlog_annotate else 'OFF'}",
            "--binlog-checksum=CRC32",
            f"--server-id={self.server_id}",
            f"--gtid-domain-id={self.gtid_domain_id}",
            "--character-set-server=utf8mb4",
            "--collation-server=utf8mb4_general_ci",
            "--default-time-zone=+00:00",
            "--skip-name-resolve",
            "--max-allowed-packet=64M",
            "--innodb-flush-log-at-trx-commit=2",
            "--innodb-doublewrite=0",
            "--sync-binlog=0",
            *self._innodb_args(),
            *self.extra_args,
        ]
        return args

    def _wait_ready(self, began: float) -> None:
        import pymysql

        deadline = began + _START_TIMEOUT
        last: Exception | None = None
        while time.monotonic() < deadline:
            assert self._proc is not None
            code = self._proc.poll()
            if code is not None:
                raise HarnessError(f"mariadbd exited with code {code} during startup"
                                   f"\n--- error log tail ---\n{self.log_tail()}")
            if self.socket.exists():
                try:
                    pymysql.connect(unix_socket=str(self.socket), user="root", password="",
                                    connect_timeout=2).close()
                    return
                except pymysql.Error as err:
                    last = err
            time.sleep(0.05)
        raise HarnessError(f"mariadbd did not accept connections within {_START_TIMEOUT:.0f} s"
                           f" (last error: {last})\n--- error log tail ---\n{self.log_tail()}")

    def __repr__(self) -> str:
        state = f"port={self.port} socket={self.socket}" if self._root is not None else "stopped"
        return f"MariaDBServer(row_image={self.row_image}, row_metadata={self.row_metadata}, {state})"




def _which(*names: str) -> Path | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return Path(found)
        for directory in _SEARCH_DIRS:
            candidate = Path(directory) / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate
    return None


def _user_args() -> list[str]:
    # As root both tools need --user (mariadbd refuses to run as root otherwise); as anyone else --user
    # makes mariadb-install-db try to chown the datadir and fail, and the server runs as that user anyway.
    return ["--user=root"] if os.geteuid() == 0 else []


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@atexit.register
def _stop_all() -> None:
    for server in list(_LIVE):
        with contextlib.suppress(Exception):
            server.stop()
