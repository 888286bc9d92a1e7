"""The process side of a throwaway local server (MariaDB or MySQL): temp dir, port, start, stop, binlogs.

Strategy: a subclass says how to prepare a datadir (``_prepare_datadir``), which command starts the server
(``_server_command``) and with which options (``_server_args``); this base runs it as a child process in its
own session with a private temp directory, a unix socket, and a free TCP port on 127.0.0.1 (retried when
another process grabs the port first), waits until root can connect, and always stops it by the pid it
started (TERM, then KILL) and removes the temp directory, also at interpreter exit. Every failure raises
``HarnessError`` with the server's error-log tail.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from binlog_model.testing.sqlserver import ROW_IMAGES, HarnessError, SqlServer, check_choice, check_server_id

__all__ = ["LocalServer", "free_port", "pristine_datadir", "root_user_args"]

_STOP_TIMEOUT = 15.0

_LIVE: weakref.WeakSet[LocalServer] = weakref.WeakSet()


class LocalServer(SqlServer):
    """A server process on a temporary datadir. Use as a context manager, or ``start``/``stop``.

    All attributes describing the running server (``port``, ``socket``, ``datadir``, ``binlog_dir``,
    ``version``) are set by ``start()``.
    """

    label = "server"
    poll_interval = 0.05
    #: the product, whatever its version ("MariaDB" / "MySQL"): what SQL dialect and binlog flavour tests
    #: expect; ``label`` names the build (e.g. "MariaDB 11.8") where a project runs more than one
    family = "server"
    #: the prefix of the temp directory and the socket's file name
    process_name = "server"

    def __init__(self) -> None:
        self.binlog_basename = "mysql-bin"
        self.version = ""
        self.port = 0
        self.startup_seconds = 0.0
        self._root: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        super().__init__()

    # --- what a backend supplies ------------------------------------------------------------------------

    #: the ``binlog_row_metadata`` values the product takes (``binlog_row_image``'s are ``ROW_IMAGES``)
    row_metadata_choices: tuple[str, ...] = ("MINIMAL", "FULL")

    def _binlog_settings(self, row_image: str, row_metadata: str, server_id: int) -> None:
        """Check and keep the binlog options every backend takes; ``ConfigError`` naming a bad one."""
        self.row_image = check_choice("row_image", row_image, ROW_IMAGES)
        self.row_metadata = check_choice("row_metadata", row_metadata, self.row_metadata_choices)
        check_server_id(server_id)
        self.server_id = server_id

    def _server_command(self) -> list[str]:  # pragma: no cover - abstract
        """The argv prefix that runs the server binary (checks that it exists; ``HarnessError`` if not)."""
        raise NotImplementedError

    def dump_command(self) -> list[str]:  # pragma: no cover - abstract
        """The argv prefix of this server's own dump tool (``mariadb-dump`` / ``mysqldump``)."""
        raise NotImplementedError

    def tool(self, name: str) -> list[str]:  # pragma: no cover - abstract
        """The argv prefix of a client tool of this server's build (``mysqlbinlog``, ``mariadb`` …)."""
        raise NotImplementedError

    def _prepare_datadir(self) -> None:  # pragma: no cover - abstract
        """Create ``self.datadir`` with the system tables, ready for ``_server_args``."""
        raise NotImplementedError

    def _server_args(self) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    # --- paths ------------------------------------------------------------------------------------------

    @property
    def root(self) -> Path:
        if self._root is None:
            raise HarnessError(f"{self.label} server is not started")
        return self._root

    @property
    def datadir(self) -> Path:
        return self.root / "data"

    @property
    def socket(self) -> Path:
        return self.root / f"{self.process_name}.sock"

    @property
    def binlog_dir(self) -> Path:
        return self.datadir

    @property
    def error_log(self) -> Path:
        return self.root / "error.log"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    # --- lifecycle --------------------------------------------------------------------------------------

    def _launch(self, began: float) -> None:
        """Prepare a datadir and start the server; return once it accepts connections.

        Raises ``HarnessError`` (with the error-log tail) if the binaries are missing, the datadir cannot be
        prepared, the process exits, or no connection succeeds in time.
        """
        if self._proc is not None:
            raise HarnessError(f"{self.label} server already started")
        command = self._server_command()
        self._root = Path(tempfile.mkdtemp(prefix=f"binlog-model-{self.process_name}-"))
        _LIVE.add(self)
        (self.root / "tmp").mkdir()
        self._prepare_datadir()
        # Another process may grab the free port before the server binds it: retry with a new port.
        for attempt in range(3):
            self.port = free_port()
            with open(self.error_log, "ab") as log:
                self._proc = subprocess.Popen(
                    [*command, *self._server_args()],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    start_new_session=True,  # a Ctrl-C in pytest must not kill it before stop() runs
                )
            try:
                self._wait_ready(began)
                return
            except HarnessError:
                if attempt == 2 or "Address already in use" not in self.log_tail():
                    raise
                self._proc.wait()

    def stop(self) -> None:
        """Stop the server by its pid and delete its temp directory. Idempotent; fine on a dead server."""
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

    def restart(self) -> None:
        """Stop the server process (TERM, a clean shutdown) and start it again on the same datadir and port,
        as an operator's restart: clients see their connections drop and the server come back."""
        proc = self._proc
        if proc is None:
            raise HarnessError(f"{self.label} server is not running")
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=_STOP_TIMEOUT * 4)
        except subprocess.TimeoutExpired as err:
            raise HarnessError(f"{self.label} server did not stop for a restart\n{self.log_tail()}") from err
        began = time.monotonic()
        with open(self.error_log, "ab") as log:
            self._proc = subprocess.Popen([*self._server_command(), *self._server_args()],
                                          stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                          start_new_session=True)
        self._wait_ready(began)

    # --- SQL --------------------------------------------------------------------------------------------

    def _endpoint(self) -> dict[str, Any]:
        return {"unix_socket": str(self.socket)}

    # --- replication (a failover pair) -------------------------------------------------------------------

    #: the GTIDs the server has executed, and the wait until a replica has applied a set (per product)
    gtids_executed_statement = ""
    gtid_wait_statement = ""

    def _change_source_statement(self, source: LocalServer, user: str,
                                 password: str) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def replicate_from(self, source: LocalServer, user: str = "repl", password: str = "repl-pw-1") -> None:
        """Make this server a GTID replica of ``source`` (same product, another ``server_id``): a
        replication user on the source, created with ``sql_log_bin=0`` so that nothing of the harness is in
        the source's binlog (or replicated), then the product's ``CHANGE … SOURCE`` by GTID over TCP and
        ``START REPLICA``. The replica logs what it applies (MySQL's ``log_replica_updates`` is on by
        default; MariaDB needs ``--log-slave-updates``), with the source's GTIDs, so its binlog holds the
        same transactions under its own file names and offsets: a server to fail over to."""
        if self.family != source.family:
            raise HarnessError(f"a {self.family} server cannot replicate from a {source.family} one here")
        if getattr(self, "server_id", None) == getattr(source, "server_id", None):
            raise HarnessError("replica and source share a server_id")
        statement = self._change_source_statement(source, user, password)
        conn = source.connect()
        try:
            with conn.cursor() as cur:
                cur.execute("SET SESSION sql_log_bin = 0")
                cur.execute(f"CREATE USER IF NOT EXISTS '{user}'@'127.0.0.1' IDENTIFIED BY '{password}'")
                cur.execute(f"GRANT REPLICATION SLAVE ON *.* TO '{user}'@'127.0.0.1'")
        finally:
            conn.close()
        self.execute([statement, "START REPLICA"])

    def wait_replicated(self, source: LocalServer, timeout: float = 120.0) -> None:
        """Until this replica has applied every transaction ``source`` has executed so far;
        ``HarnessError`` with the replica's error when it did not in time."""
        executed = str(source.query(source.gtids_executed_statement)[0][0]).replace("\n", "")
        if self.query(self.gtid_wait_statement, args=(executed, timeout))[0][0] != 0:
            raise HarnessError(f"the replica did not apply {executed} within {timeout:.0f} s: "
                               f"{self.replication_error() or 'no error reported'}")

    def replication_error(self) -> str:
        """The replica's last I/O or SQL error ('' when none)."""
        conn = self.connect()
        try:
            with conn.cursor() as cur:
                cur.execute("SHOW REPLICA STATUS")
                names = [d[0] for d in cur.description or ()]
                row = cur.fetchone()
        finally:
            conn.close()
        if row is None:
            return "not a replica"
        status = dict(zip(names, row, strict=True))
        return "; ".join(str(status[k]) for k in ("Last_IO_Error", "Last_SQL_Error") if status.get(k))

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
                   "--tmpdir=", "--basedir=", "--lc-messages-dir=", "--character-sets-dir=", "--plugin-dir=",
                   "--secure-file-priv=")
        flags = [arg for arg in self._server_args() if not arg.startswith(per_run)]
        return [*flags, f"--log-bin={self.binlog_basename}"]

    def log_tail(self, lines: int = 40) -> str:
        """The last ``lines`` lines of the server's error log ('' if there is none)."""
        try:
            text = self.error_log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def _ready_to_try(self) -> bool:
        assert self._proc is not None
        code = self._proc.poll()
        if code is not None:
            raise HarnessError(f"{self.label} server exited with code {code} during startup"
                               f"\n--- error log tail ---\n{self.log_tail()}")
        return self.socket.exists()


def pristine_datadir(binary: Path, cache: Path, initialize: Callable[[Path, Path], None]) -> Path:
    """A datadir initialized once per server build and kept in ``cache``, for servers to copy.

    ``initialize(data, work)`` creates ``data`` (``work`` is a scratch folder beside it) and raises
    ``HarnessError`` when it cannot. The build is told apart by ``binary``'s size and mtime, so a new fetch
    makes a new pristine datadir. A lock file serialises concurrent callers (parallel test sessions); a
    ``ready`` stamp marks a finished one, so later calls cost nothing. Returns the ``data`` folder.
    """
    stat = binary.stat()
    base = cache / f"pristine-{stat.st_size}-{int(stat.st_mtime)}"
    data = base / "data"
    if (base / "ready").is_file():
        return data
    base.mkdir(parents=True, exist_ok=True)
    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (base / "ready").is_file():  # another process finished it while we waited
            return data
        shutil.rmtree(data, ignore_errors=True)
        work = base / "tmp"
        work.mkdir(exist_ok=True)
        initialize(data, work)
        (base / "ready").touch()
    return data


def root_user_args() -> list[str]:
    """``--user=root`` when running as root (servers refuse root otherwise); nothing for anyone else."""
    return ["--user=root"] if os.geteuid() == 0 else []


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@atexit.register
def _stop_all() -> None:
    for server in list(_LIVE):
        with contextlib.suppress(Exception):
            server.stop()
