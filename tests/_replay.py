"""An oracle independent of our decoder: binlog files replayed by the server's own tools into another server.

``replay`` pipes the binlog tool of the source's build (``mysqlbinlog`` / ``mariadb-binlog``) into the
command-line client of the scratch server's build (``mysql`` / ``mariadb``), as an operator restores a
point in time. Nothing of ``binlog_model`` decodes or applies a change on this path: the server's tools
print the events, and the scratch server executes them.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from binlog_model.testing.localserver import LocalServer

__all__ = ["replay"]


def _tools(server: LocalServer) -> tuple[str, str]:
    """The product's binlog printer and client: MySQL's names, or MariaDB's own (not the mysql* links)."""
    return ("mysqlbinlog", "mysql") if server.family == "MySQL" else ("mariadb-binlog", "mariadb")


def replay(source: LocalServer, files: Sequence[Path], scratch: LocalServer, db: str) -> None:
    """``BINLOG-TOOL FILES | CLIENT`` into ``scratch``, after creating ``db`` there (the files start after the
    source's CREATE DATABASE). AssertionError with both tools' stderr when either fails."""
    printer, client = _tools(source)
    scratch.execute(f"CREATE DATABASE `{db}`")
    # --skip-gtids (MySQL): the scratch gives the transactions its own GTIDs, so a shared scratch never
    # skips a transaction as one it already ran
    options = ["--skip-gtids"] if source.family == "MySQL" else []
    dump = subprocess.Popen([*source.tool(printer), *options, *map(str, files)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert dump.stdout is not None and dump.stderr is not None
    # --binary-mode: the printed BINLOG statements and string literals are bytes, not text to reinterpret
    load = subprocess.run([*scratch.tool(client), "--no-defaults", "-uroot", f"--socket={scratch.socket}",
                           "--binary-mode"], stdin=dump.stdout, capture_output=True, timeout=600, check=False)
    dump.stdout.close()
    dump_err = dump.stderr.read().decode(errors="replace")
    dump.stderr.close()
    assert dump.wait(timeout=60) == 0, f"{printer} failed: {dump_err}"
    assert load.returncode == 0, f"{client} failed: {load.stderr.decode(errors='replace')}"
