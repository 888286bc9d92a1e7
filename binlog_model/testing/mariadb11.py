"""A throwaway local MariaDB 11.8 LTS server (Debian sid's packages in a private prefix) for tests, fixtures.

Strategy: the same server as ``MariaDBServer`` (same options, same lifecycle), only found and bootstrapped
differently. ``mariadb11_prefix()`` fetches the pinned build of sid's ``mariadb-server-core`` +
``mariadb-client-core`` + ``mariadb-client`` closure (``binlog_model.testing.sid_pins``) into the user cache
once (``binlog_model.testing.sid``; never the system), and every binary runs through the prefix's own
loader. ``mariadb-install-db`` would start ``mariadbd`` without that loader, so the system tables are made
by piping MariaDB's own bootstrap SQL into ``mariadbd --bootstrap`` (as ``mariadb-install-db
--auth-root-authentication-method=normal --skip-test-db`` does: root@localhost without a password), once per
build, into a pristine datadir kept in the cache that each server copies (``localserver.pristine_datadir``).

Unlike the 10.11 harness, no server charset is set: 11.8's own defaults (``utf8mb4`` /
``utf8mb4_uca1400_ai_ci``) are the point of running it. Everything else is ``MariaDBServer``'s.

Where the pinned build cannot be had, ``mariadb11_available()`` says why, so tests skip with that reason
(in CI it raises: ``binlog_model.testing.availability``); nothing falls back to the machine's MariaDB 10.11.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from binlog_model.testing.localserver import pristine_datadir, root_user_args
from binlog_model.testing.mariadb import MariaDBServer
from binlog_model.testing.sid import (
    SidBuild,
    SidPrefix,
    report_server,
    server_prefix,
    sid_server_available,
)
from binlog_model.testing.sqlserver import HarnessError

__all__ = ["MARIADB11_KIND", "MARIADB11_SERIES", "MariaDB11Server", "mariadb11_available", "mariadb11_prefix",
           "mariadb11_tool"]

#: the release series this harness runs; a started server of another one is an error
MARIADB11_SERIES = "11.8."
#: the server kind as missing-server messages and the test summary name it
MARIADB11_KIND = "MariaDB 11.8"
_PREFIX_NAME = "mariadb11-sid"
# What mariadb-install-db feeds mariadbd --bootstrap, in order (no help tables, no sys schema, no test db).
_BOOTSTRAP_SQL = ("mariadb_system_tables.sql", "mariadb_performance_tables.sql",
                  "mariadb_system_tables_data.sql", "maria_add_gis_sp_bootstrap.sql")


def mariadb11_prefix() -> SidPrefix:
    """The unpacked sid MariaDB packages (fetched on first use); ``SidFetchError`` says why not."""
    return server_prefix(_PREFIX_NAME, "MariaDB", "usr/sbin/mariadbd")


def mariadb11_tool(name: str) -> list[str]:
    """The argv prefix that runs a client tool of the prefix (``mariadb-binlog``, ``mariadb-dump`` …)."""
    return mariadb11_prefix().tool(name, "MariaDB")


def mariadb11_available() -> tuple[bool, str]:
    """Can a local MariaDB 11.8 run here (fetched if needed)? ``(True, mariadbd)`` or ``(False, reason)``;
    ``ServerRequiredError`` instead of False where servers are required (CI)."""
    return sid_server_available(mariadb11_prefix, MARIADB11_KIND, "usr/sbin/mariadbd")


class MariaDB11Server(SidBuild, MariaDBServer):
    """One throwaway MariaDB 11.8 ``mariadbd`` on a copy of a pristine datadir, with ``MariaDBServer``'s
    options."""

    label = "MariaDB 11.8"
    product = "MariaDB"
    server_binary = "usr/sbin/mariadbd"
    dump_tool = "mariadb-dump"

    def _fetch_prefix(self) -> SidPrefix:
        return mariadb11_prefix()

    def _charset_args(self) -> list[str]:
        return []  # 11.8's own defaults: utf8mb4 / utf8mb4_uca1400_ai_ci

    def _path_args(self) -> list[str]:
        usr = self.prefix.root / "usr"
        return [
            f"--basedir={usr}",
            f"--lc-messages-dir={usr / 'share/mariadb'}",
            f"--character-sets-dir={usr / 'share/mariadb/charsets'}",
            f"--plugin-dir={usr / 'lib/mysql/plugin'}",
        ]

    def _prepare_datadir(self) -> None:
        mariadbd = self.prefix.root / "usr/sbin/mariadbd"
        shutil.copytree(pristine_datadir(mariadbd, self.prefix.root.parent, self._bootstrap), self.datadir,
                        symlinks=True)

    def _bootstrap(self, data: Path, tmp: Path) -> None:
        """``mariadbd --bootstrap`` fed the system-table SQL (one statement a line); root has no password."""
        share = self.prefix.root / "usr/share/mariadb"
        script = ["CREATE DATABASE mysql;", "use mysql;", "SET @auth_root_socket=NULL;"]
        for name in _BOOTSTRAP_SQL:
            try:
                script.append((share / name).read_text(encoding="utf-8"))
            except OSError as err:
                raise HarnessError(f"MariaDB 11.8 bootstrap SQL missing from the prefix: {err}") from err
        data.mkdir(parents=True)
        cmd = [*self._server_command(), "--no-defaults", *root_user_args(), "--bootstrap", *self._path_args(),
               f"--datadir={data}", f"--tmpdir={tmp}", "--log-warnings=0", "--innodb-buffer-pool-size=16M",
               "--innodb-log-file-size=8M", "--max-allowed-packet=8M", "--net-buffer-length=16K"]
        try:
            done = subprocess.run(cmd, input="\n".join(script).encode(), capture_output=True, timeout=180,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise HarnessError(f"mariadbd --bootstrap failed to run: {err}") from err
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).decode(errors="replace").splitlines()[-30:])
            raise HarnessError(f"mariadbd --bootstrap exited with {done.returncode}"
                               f"\n--- output tail ---\n{tail}")
        version = subprocess.run([*self._server_command(), "--version"], capture_output=True, text=True,
                                 check=False).stdout.split()
        if "Ver" in version:  # what mariadb-install-db writes: no "upgrade needed" note at the first start
            (data / "mariadb_upgrade_info").write_text(version[version.index("Ver") + 1].split("-")[0] +
                                                       "-MariaDB")

    def __repr__(self) -> str:
        state = f"port={self.port} socket={self.socket}" if self._root is not None else "stopped"
        return f"MariaDB11Server(row_image={self.row_image}, row_metadata={self.row_metadata}, {state})"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m binlog_model.testing.mariadb11``: fetch (once) and report what is ready.

    Exits 0 with a warning when the pinned build cannot be had, so a local test run goes on and its MariaDB
    11.8 tests skip with the reason; exits 1 when the fetched server does not run, or cannot be had in CI.
    """
    import argparse
    import sys

    argparse.ArgumentParser(prog="python -m binlog_model.testing.mariadb11", description=main.__doc__
                            ).parse_args(argv)
    code, version = report_server(mariadb11_prefix, "MariaDB", "usr/sbin/mariadbd", MARIADB11_KIND)
    if version and f"Ver {MARIADB11_SERIES}" not in version:
        print(f"warning: sid's MariaDB is no longer {MARIADB11_SERIES}x: the mariadb11 tests will fail "
              "until the harness follows it", file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
