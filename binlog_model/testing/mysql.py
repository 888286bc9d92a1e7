"""A throwaway local MySQL 9.x server (Debian sid's packages in a private prefix) for tests and fixtures.

Strategy: ``mysql_prefix()`` fetches the pinned build of sid's ``mysql-server-core`` + ``mysql-client-core``
closure (``binlog_model.testing.sid_pins``) into the user cache once (``binlog_model.testing.sid``; never the
system), and every binary runs through sid's own loader. ``mysqld --initialize-insecure`` runs once per
server build into a pristine datadir kept in the cache; each server copies it (a fraction of a second
instead of seconds) without ``auto.cnf``, so every server gets its own ``server_uuid``. ``--no-defaults``
keeps any my.cnf out; everything the tests rely on is in ``_server_args``:

* ``binlog_format=ROW``; row image, row metadata, ``binlog_rows_query_log_events``, GTID mode,
  transaction compression and ``server_id`` as asked; ``binlog_checksum=CRC32``;
* MySQL's own defaults for charset and collation (utf8mb4 / utf8mb4_0900_ai_ci): that is what MySQL users
  run, and the tracker must follow it;
* ``time_zone=+00:00``; root@localhost without a password (``caching_sha2_password``, MySQL's default);
* durability off and a small redo log: the server is thrown away.

Where the pinned build cannot be had, ``mysql_available()`` says why, so tests skip with that reason (in CI
it raises: ``binlog_model.testing.availability``); nothing ever falls back to MariaDB.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from binlog_model.testing.localserver import LocalServer, pristine_datadir, root_user_args
from binlog_model.testing.sid import (
    SidBuild,
    SidFetchError,
    SidPrefix,
    fetch_sid_packages,
    report_server,
    server_prefix,
    sid_server_available,
)
from binlog_model.testing.sqlserver import HarnessError

__all__ = ["MYSQL_KIND", "MySQLServer", "mysql_available", "mysql_prefix", "mysql_test_dir", "mysql_tool"]

#: the server kind as missing-server messages and the test summary name it
MYSQL_KIND = "MySQL 9"
_PREFIX_NAME = "mysql-sid"


def mysql_prefix() -> SidPrefix:
    """The unpacked sid MySQL packages (fetched on first use); ``SidFetchError`` says why not."""
    return server_prefix(_PREFIX_NAME, "MySQL", "usr/sbin/mysqld")


def mysql_test_dir() -> Path:
    """MySQL's own test suite (sid package ``mysql-testsuite``: ``std_data`` binlogs, ``.test`` files),
    fetched into the cache on first use (~340 MB); ``SidFetchError`` says why not."""
    prefix = fetch_sid_packages("mysql-testsuite")
    root = prefix.root / "usr/lib/mysql-test"
    if not root.is_dir():
        raise SidFetchError(f"mysql-testsuite unpacked at {prefix.root} has no usr/lib/mysql-test")
    return root


def mysql_tool(name: str) -> list[str]:
    """The argv prefix that runs a MySQL client tool from the prefix (``mysqlbinlog``, ``mysqldump`` …)."""
    return mysql_prefix().tool(name, "MySQL")


def mysql_available() -> tuple[bool, str]:
    """Can a local MySQL 9 run here (fetched if needed)? ``(True, mysqld path)`` or ``(False, reason)``;
    ``ServerRequiredError`` instead of False where servers are required (CI)."""
    return sid_server_available(mysql_prefix, MYSQL_KIND, "usr/sbin/mysqld")


class MySQLServer(SidBuild, LocalServer):
    """One throwaway MySQL 9 ``mysqld`` on a copy of a pristine datadir. Same interface as ``MariaDBServer``.

    ``rows_query_log_events`` writes ROWS_QUERY events (the statement text); ``gtid`` turns ``gtid_mode``
    on (with ``enforce_gtid_consistency``); ``transaction_compression`` writes zstd TRANSACTION_PAYLOAD
    events. ``extra_args`` go last on the command line.
    """

    label = "MySQL"
    family = "MySQL"
    process_name = "mysqld"
    reset_binlogs_statement = "RESET BINARY LOGS AND GTIDS"
    binlog_status_statement = "SHOW BINARY LOG STATUS"

    def __init__(
        self,
        row_image: str = "FULL",
        row_metadata: str = "FULL",
        rows_query_log_events: bool = True,
        gtid: bool = True,
        transaction_compression: bool = False,
        server_id: int = 1,
        extra_args: Sequence[str] = (),
    ) -> None:
        self._binlog_settings(row_image, row_metadata, server_id)
        self.rows_query_log_events = rows_query_log_events
        self.gtid = gtid
        self.transaction_compression = transaction_compression
        self.extra_args = tuple(extra_args)
        super().__init__()
        self.binlog_basename = "binlog"

    product = "MySQL"
    server_binary = "usr/sbin/mysqld"
    dump_tool = "mysqldump"

    def _fetch_prefix(self) -> SidPrefix:
        return mysql_prefix()

    def _base_args(self, datadir: Path, tmpdir: Path) -> list[str]:
        usr = self.prefix.root / "usr"
        return [
            "--no-defaults",
            *root_user_args(),
            f"--basedir={usr}",
            f"--lc-messages-dir={usr / 'share/mysql'}",
            f"--character-sets-dir={usr / 'share/mysql/charsets'}",
            f"--plugin-dir={usr / 'lib/mysql/plugin'}",
            f"--datadir={datadir}",
            f"--tmpdir={tmpdir}",
            f"--secure-file-priv={tmpdir}",
            "--innodb-redo-log-capacity=8M",
            "--innodb-buffer-pool-size=32M",
        ]

    def _prepare_datadir(self) -> None:
        pristine = self._pristine_datadir()
        shutil.copytree(pristine, self.datadir, symlinks=True)
        (self.datadir / "auto.cnf").unlink(missing_ok=True)  # a new server_uuid per server

    def _pristine_datadir(self) -> Path:
        """``--initialize-insecure`` once per mysqld build, kept in the cache beside the prefix."""
        mysqld = self.prefix.root / "usr/sbin/mysqld"
        return pristine_datadir(mysqld, self.prefix.root.parent, self._initialize)

    def _initialize(self, data: Path, tmp: Path) -> None:
        log_path = tmp.parent / "initialize.log"
        cmd = [*self._server_command(), *self._base_args(data, tmp), "--initialize-insecure",
               f"--log-error={log_path}"]
        try:
            done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=180,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise HarnessError(f"mysqld --initialize-insecure failed to run: {err}") from err
        if done.returncode != 0:
            log = log_path.read_text(errors="replace") if log_path.is_file() else ""
            tail = "\n".join((log + done.stderr.decode(errors="replace")).splitlines()[-30:])
            raise HarnessError(f"mysqld --initialize-insecure exited with {done.returncode}"
                               f"\n--- log tail ---\n{tail}")

    def _server_args(self) -> list[str]:
        on_off = {True: "ON", False: "OFF"}
        gtid_args = (["--gtid-mode=ON", "--enforce-gtid-consistency=ON"] if self.gtid
                     else ["--gtid-mode=OFF"])
        return [
            *self._base_args(self.datadir, self.root / "tmp"),
            f"--socket={self.socket}",
            f"--port={self.port}",
            "--bind-address=127.0.0.1",
            "--mysqlx=OFF",
            f"--pid-file={self.root / 'mysqld.pid'}",
            f"--log-error={self.error_log}",
            f"--log-bin={self.datadir / self.binlog_basename}",
            f"--server-id={self.server_id}",
            "--binlog-format=ROW",
            f"--binlog-row-image={self.row_image}",
            f"--binlog-row-metadata={self.row_metadata}",
            f"--binlog-rows-query-log-events={on_off[self.rows_query_log_events]}",
            f"--binlog-transaction-compression={on_off[self.transaction_compression]}",
            *gtid_args,
            "--binlog-checksum=CRC32",
            "--default-time-zone=+00:00",
            "--max-allowed-packet=64M",
            "--performance-schema=OFF",
            "--innodb-flush-log-at-trx-commit=2",
            "--innodb-doublewrite=OFF",
            "--sync-binlog=0",
            *self.extra_args,
        ]

    # --- replication (a failover pair): the dialect; ``LocalServer.replicate_from`` does the rest ----------

    gtids_executed_statement = "SELECT @@GLOBAL.gtid_executed"
    gtid_wait_statement = "SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, %s)"     # 0: applied, 1: timed out

    def _change_source_statement(self, source: LocalServer, user: str, password: str) -> str:
        if not (self.gtid and getattr(source, "gtid", False)):
            raise HarnessError("a GTID replica needs gtid=True on both servers")
        # caching_sha2_password over plain TCP needs the source's RSA key (GET_SOURCE_PUBLIC_KEY)
        return (f"CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={source.port}, "
                f"SOURCE_USER='{user}', SOURCE_PASSWORD='{password}', SOURCE_AUTO_POSITION=1, "
                "GET_SOURCE_PUBLIC_KEY=1, SOURCE_CONNECT_RETRY=1")

    def __repr__(self) -> str:
        state = f"port={self.port} socket={self.socket}" if self._root is not None else "stopped"
        return f"MySQLServer(row_image={self.row_image}, row_metadata={self.row_metadata}, {state})"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m binlog_model.testing.mysql [--with-testsuite]``: fetch (once) and report what is ready.

    Exits 0 with a warning when the pinned build cannot be had, so a local test run goes on and its MySQL
    tests skip with the reason; exits 1 when the fetched server does not run, or cannot be had in CI.
    """
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m binlog_model.testing.mysql", description=main.__doc__)
    parser.add_argument("--with-testsuite", action="store_true", help="also fetch mysql-testsuite")
    args = parser.parse_args(argv)
    code, version = report_server(mysql_prefix, "MySQL", "usr/sbin/mysqld", MYSQL_KIND)
    if version and args.with_testsuite:
        try:
            print(f"MySQL test suite ready: {mysql_test_dir()}")
        except HarnessError as err:
            print(f"warning: MySQL test-suite tests will skip: {err}", file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
