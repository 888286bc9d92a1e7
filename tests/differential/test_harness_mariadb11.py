"""The local MariaDB 11.8 harness: the sid fetch, 11.8's own defaults in effect, the bootstrap, failures,
cleanup, and its binlog directory (a GTID index ``.idx`` beside each binlog) read as binlogs only."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from binlog_model.io.files import expand_paths, iter_events
from binlog_model.runs.pipeline import iter_binlog_events
from binlog_model.testing.mariadb11 import MARIADB11_SERIES, MariaDB11Server, mariadb11_available
from binlog_model.testing.sid import cache_root
from binlog_model.testing.sqlserver import HarnessError


def _require_mariadb11() -> None:
    ok, reason = mariadb11_available()
    if not ok:
        pytest.skip(f"no local MariaDB 11.8: {reason}")


def test_session_server_runs_11_8_with_its_own_charset_defaults(mariadb11: MariaDB11Server) -> None:
    rows = dict(mariadb11.query(
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('binlog_format', 'binlog_row_image',"
        " 'binlog_row_metadata', 'binlog_annotate_row_events', 'log_bin', 'binlog_checksum',"
        " 'character_set_server', 'collation_server', 'time_zone', 'server_id', 'gtid_domain_id')"))
    assert rows == {
        "binlog_format": "ROW", "binlog_row_image": "FULL", "binlog_row_metadata": "FULL",
        "binlog_annotate_row_events": "ON", "log_bin": "ON", "binlog_checksum": "CRC32",
        # 11.8's defaults, not the 10.11 harness's pinned utf8mb4_general_ci: the point of this server
        "character_set_server": "utf8mb4", "collation_server": "utf8mb4_uca1400_ai_ci",
        "time_zone": "+00:00", "server_id": "1", "gtid_domain_id": "0",
    }
    assert mariadb11.version.startswith(MARIADB11_SERIES) and "MariaDB" in mariadb11.version
    assert (mariadb11.label, mariadb11.family) == ("MariaDB 11.8", "MariaDB")
    assert not any(a.startswith(("--character-set-server", "--collation-server"))
                   for a in mariadb11.reproducible_flags())
    # the binaries are the cached sid prefix's, run through its loader, never the machine's mariadbd
    assert mariadb11.prefix.root.is_relative_to(cache_root())
    assert mariadb11._server_command()[0].endswith("ld-linux-x86-64.so.2")


@pytest.mark.server
def test_options_take_effect_and_each_server_has_its_own_datadir() -> None:
    _require_mariadb11()
    first = MariaDB11Server(row_image="MINIMAL", row_metadata="MINIMAL", binlog_annotate=False, server_id=7,
                            gtid_domain_id=3)
    with first, MariaDB11Server(server_id=8) as second:
        print(f"MariaDB 11.8 startup: {first.startup_seconds:.2f} s ({first.version})")
        assert first.running and first.socket.exists()      # up, whatever the time it took
        assert first.query("SELECT @@binlog_row_image, @@binlog_row_metadata, @@binlog_annotate_row_events, "
                           "@@server_id, @@gtid_domain_id") == [("MINIMAL", "MINIMAL", 0, 7, 3)]
        first.execute("CREATE DATABASE only_on_first")
        assert second.query("SHOW DATABASES LIKE 'only_on_first'") == []   # copies, not one datadir
        assert first.datadir != second.datadir
        root = first.root
    assert not root.exists() and not first.running
    first.stop()  # idempotent


@pytest.mark.server
def test_failed_start_shows_error_log_and_cleans_up() -> None:
    _require_mariadb11()
    server = MariaDB11Server(extra_args=["--no-such-option-for-test=1"])
    with pytest.raises(HarnessError, match=r"(?s)exited with code .*error log tail.*no-such-option-for-test"):
        server.start()
    assert not server.running
    with pytest.raises(HarnessError, match="not started"):
        _ = server.root


def test_client_tools_are_the_same_build(mariadb11: MariaDB11Server) -> None:
    for tool in (mariadb11.dump_command(), mariadb11.tool("mariadb-binlog")):
        done = subprocess.run([*tool, "--version"], capture_output=True, text=True, check=False, timeout=30)
        assert done.returncode == 0, done.stderr
        assert "11.8" in done.stdout


def _closed_binlog_with_its_index(server: MariaDB11Server, db: str, dest: Path) -> Path:
    """Write rows, rotate, and copy the server's own files into ``dest``: the closed binlog, its GTID index
    and the ``.index`` list, as they lie in the datadir (the index is written in the background)."""
    server.execute(["CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))",
                    "INSERT INTO t VALUES (1, 'ä'), (2, 'b')"], database=db)
    closed = server.flush_and_collect()[-1]
    idx = closed.with_name(closed.name + ".idx")
    deadline = time.monotonic() + 10
    while not idx.is_file() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert idx.is_file(), f"MariaDB 11.8 wrote no GTID index beside {closed}"
    dest.mkdir()
    for path in (closed, idx, server.binlog_dir / f"{server.binlog_basename}.index"):
        shutil.copyfile(path, dest / path.name)
    return dest / closed.name


def test_a_binlog_directory_with_gtid_index_files_reads_as_binlogs_only(
        mariadb11: MariaDB11Server, mariadb11_db: str, tmp_path: Path) -> None:
    binlog = _closed_binlog_with_its_index(mariadb11, mariadb11_db, tmp_path / "logs")
    logs = binlog.parent
    assert sorted(p.name for p in logs.iterdir()) == sorted(
        [binlog.name, f"{binlog.name}.idx", f"{mariadb11.binlog_basename}.index"])
    # the directory, and a glob that also matches the side files, both name the one binlog
    assert expand_paths(logs) == [str(binlog)]
    assert expand_paths(str(logs / f"{mariadb11.binlog_basename}.0*")) == [str(binlog)]
    assert expand_paths(str(logs / "*")) == [str(binlog)]
    rows = [r for e in iter_binlog_events(expand_paths(logs)) if e.db == mariadb11_db for r in e.rows]
    assert len(rows) == 2
    assert {e.header.file for e in iter_events(logs / binlog.name)} == {str(binlog)}
