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

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from binlog_model.testing.availability import server_availability
from binlog_model.testing.localserver import LocalServer, root_user_args
from binlog_model.testing.sqlserver import HarnessError, run_statements

__all__ = ["MARIADB_KIND", "HarnessError", "MariaDBServer", "find_mariadb_binaries", "mariadb_available",
           "run_statements"]

#: the server kind as missing-server messages and the test summary name it (the machine's mariadbd)
MARIADB_KIND = "MariaDB 10.11"

_SEARCH_DIRS = ("/usr/sbin", "/usr/libexec", "/usr/local/sbin", "/usr/local/bin", "/usr/bin")


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
    """Is a local MariaDB server installed? Returns ``(True, path)`` or ``(False, reason)``; where servers
    are required (CI), ``ServerRequiredError`` instead of False (``binlog_model.testing.availability``)."""
    def probe() -> tuple[bool, str]:
        try:
            server, _ = find_mariadb_binaries()
        except HarnessError as err:
            return False, str(err)
        return True, str(server)

    return server_availability(MARIADB_KIND, probe)


class MariaDBServer(LocalServer):
    """One throwaway ``mariadbd`` on a temporary datadir. Use as a context manager, or ``start``/``stop``.

    All attributes describing the running server (``port``, ``socket``, ``datadir``, ``binlog_dir``,
    ``version``) are set by ``start()``.
    """

    label = "MariaDB"
    family = "MariaDB"
    process_name = "mariadbd"
    row_metadata_choices = ("NO_LOG", "MINIMAL", "FULL")

    def __init__(
        self,
        row_image: str = "FULL",
        row_metadata: str = "FULL",
        binlog_annotate: bool = True,
        server_id: int = 1,
        gtid_domain_id: int = 0,
        extra_args: Sequence[str] = (),
    ) -> None:
        self._binlog_settings(row_image, row_metadata, server_id)
        self.binlog_annotate = binlog_annotate
        self.gtid_domain_id = gtid_domain_id
        self.extra_args = tuple(extra_args)
        super().__init__()

    def dump_command(self) -> list[str]:
        """``mariadb-dump`` (or ``mysqldump``) from the same installation; ``HarnessError`` if missing."""
        found = _which("mariadb-dump", "mysqldump")
        if found is None:
            raise HarnessError("mariadb-dump not found (install the Debian package mariadb-client)")
        return [str(found)]

    def tool(self, name: str) -> list[str]:
        """The argv prefix of a client tool of the machine's installation (``mariadb-binlog``, ``mariadb``
        …), as ``SidBuild.tool`` gives a sid build's; ``HarnessError`` if missing."""
        found = _which(name)
        if found is None:
            raise HarnessError(f"{name} not found (install the Debian package mariadb-client)")
        return [str(found)]

    def _server_command(self) -> list[str]:
        self._mariadbd, self._install_db = find_mariadb_binaries()
        return [str(self._mariadbd)]

    # --- internals --------------------------------------------------------------------------------------

    def _charset_args(self) -> list[str]:
        """The server charset: 10.11's own default is latin1, so this harness pins utf8mb4 (see above).
        ``MariaDB11Server`` passes nothing: 11.8's own defaults are what it is for."""
        return ["--character-set-server=utf8mb4", "--collation-server=utf8mb4_general_ci"]

    def _path_args(self) -> list[str]:
        """Where the server finds its messages, charsets and plugins: an installed server knows (none)."""
        return []

    def _innodb_args(self) -> list[str]:
        # A private tmpdir: with the shared /tmp, concurrent servers (parallel test sessions) were seen to
        # fail bootstrap on each other's #sql-temptable files.
        return [f"--tmpdir={self.root / 'tmp'}", "--innodb-buffer-pool-size=16M", "--innodb-log-file-size=8M"]

    def _prepare_datadir(self) -> None:
        cmd = [str(self._install_db), "--no-defaults", f"--datadir={self.datadir}", *root_user_args(),
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
            *self._path_args(),
            f"--datadir={self.datadir}",
            f"--socket={self.socket}",
            f"--port={self.port}",
            "--bind-address=127.0.0.1",
            f"--pid-file={self.root / 'mariadbd.pid'}",
            f"--log-error={self.error_log}",
            *root_user_args(),
            f"--log-bin={self.datadir / self.binlog_basename}",
            "--binlog-format=ROW",
            f"--binlog-row-image={self.row_image}",
            f"--binlog-row-metadata={self.row_metadata}",
            f"--binlog-annotate-row-events={'ON' if self.binlog_annotate else 'OFF'}",
            "--binlog-checksum=CRC32",
            f"--server-id={self.server_id}",
            f"--gtid-domain-id={self.gtid_domain_id}",
            *self._charset_args(),
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

    # --- replication (a failover pair): the dialect; ``LocalServer.replicate_from`` does the rest ----------

    gtids_executed_statement = "SELECT @@GLOBAL.gtid_binlog_pos"
    gtid_wait_statement = "SELECT MASTER_GTID_WAIT(%s, %s)"       # 0: applied, -1: timed out

    def _change_source_statement(self, source: LocalServer, user: str, password: str) -> str:
        if str(self.query("SELECT @@log_slave_updates")[0][0]) != "1":
            raise HarnessError("a replica to fail over to must log what it applies: start it with "
                               "extra_args=['--log-slave-updates=ON']")
        return (f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={source.port}, MASTER_USER='{user}', "
                f"MASTER_PASSWORD='{password}', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1")

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
