"""The local MySQL 9 harness: the sid fetch, settings in effect, per-server identity, failures, cleanup."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from binlog_model.errors import ConfigError
from binlog_model.testing.mysql import MySQLServer, mysql_available
from binlog_model.testing.sid import SidFetchError, cache_root, fetch_sid_packages, pinned_root, pins_of
from binlog_model.testing.sqlserver import HarnessError


def _require_mysql() -> None:
    ok, reason = mysql_available()
    if not ok:
        pytest.skip(f"no local MySQL: {reason}")


def test_session_server_settings(mysql: MySQLServer) -> None:
    rows = dict(mysql.query(
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('binlog_format', 'binlog_row_image',"
        " 'binlog_row_metadata', 'binlog_rows_query_log_events', 'log_bin', 'binlog_checksum', 'gtid_mode',"
        " 'enforce_gtid_consistency', 'binlog_transaction_compression', 'character_set_server',"
        " 'collation_server', 'time_zone', 'server_id')"))
    assert rows == {
        "binlog_format": "ROW", "binlog_row_image": "FULL", "binlog_row_metadata": "FULL",
        "binlog_rows_query_log_events": "ON", "log_bin": "ON", "binlog_checksum": "CRC32",
        "gtid_mode": "ON", "enforce_gtid_consistency": "ON", "binlog_transaction_compression": "OFF",
        "character_set_server": "utf8mb4", "collation_server": "utf8mb4_0900_ai_ci", "time_zone": "+00:00",
        "server_id": "1",
    }
    # Really MySQL, never MariaDB standing in for it.
    assert mysql.version.split(".")[0].isdigit() and int(mysql.version.split(".")[0]) >= 8
    assert "mariadb" not in mysql.version.lower()
    assert mysql.socket.exists() and mysql.port > 0


@pytest.mark.server
def test_options_take_effect_and_every_server_has_its_own_uuid() -> None:
    _require_mysql()
    first = MySQLServer(row_image="MINIMAL", row_metadata="MINIMAL", rows_query_log_events=False,
                        gtid=False, transaction_compression=True, server_id=7,
                        extra_args=["--binlog-row-event-max-size=16384"])
    with first, MySQLServer(server_id=8) as second:
        print(f"MySQL startup: {first.startup_seconds:.2f} s ({first.version})")
        assert first.running and first.socket.exists()      # up, whatever the time it took
        assert first.query("SELECT @@binlog_row_image, @@binlog_row_metadata, "
                           "@@binlog_rows_query_log_events, @@gtid_mode, @@binlog_transaction_compression, "
                           "@@server_id, @@binlog_row_event_max_size") == [
            ("MINIMAL", "MINIMAL", 0, "OFF", 1, 7, 16384)]
        uuids = {server.query("SELECT @@server_uuid")[0][0] for server in (first, second)}
        assert len(uuids) == 2  # the pristine datadir is copied without auto.cnf
        root = first.root
    assert not root.exists() and not first.running
    first.stop()  # idempotent


def test_reset_and_position_use_mysql_9_statements(mysql: MySQLServer, mysql_db: str) -> None:
    mysql.execute("CREATE TABLE t (id INT PRIMARY KEY)", mysql_db)
    name, position = mysql.binlog_position()
    assert name in mysql.binlog_names() and position > 4
    mysql.reset_binlogs()
    assert mysql.binlog_names() == [f"{mysql.binlog_basename}.000001"]
    assert mysql.query("SELECT @@gtid_executed") == [("",)]


@pytest.mark.server
def test_bad_options_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="row_image"):
        MySQLServer(row_image="HALF")
    with pytest.raises(ConfigError, match="row_metadata"):
        MySQLServer(row_metadata="NO_LOG")   # a MariaDB value: MySQL has MINIMAL and FULL only
    with pytest.raises(ConfigError, match="server_id"):
        MySQLServer(server_id=0)


@pytest.mark.server
def test_failed_start_shows_error_log_and_cleans_up() -> None:
    _require_mysql()
    server = MySQLServer(extra_args=["--no-such-option-for-test=1"])
    with pytest.raises(HarnessError, match=r"(?s)exited with code .*error log tail.*no-such-option-for-test"):
        server.start()
    assert not server.running
    with pytest.raises(HarnessError, match="not started"):
        _ = server.root


@pytest.mark.server
def test_fetch_lives_in_the_user_cache_never_the_system(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    _require_mysql()
    monkeypatch.delenv("BINLOG_MODEL_CACHE", raising=False)
    prefix = fetch_sid_packages("mysql-sid")  # cached: instant
    assert prefix.root == pinned_root("mysql-sid") and prefix.root.is_relative_to(cache_root())
    assert "mysql-server-core" in prefix.packages and not any(p.startswith("perl") for p in prefix.packages)
    # the server that runs is the pinned build
    (server_pin,) = [p for p in pins_of("mysql-sid") if p.package == "mysql-server-core"]
    version = subprocess.run([*prefix.command("usr/sbin/mysqld"), "--version"], capture_output=True,
                             text=True, check=True).stdout
    assert f"Ver {server_pin.version.split(':')[-1]} " in version, (server_pin, version)
    monkeypatch.setenv("BINLOG_MODEL_CACHE", str(tmp_path))
    assert cache_root() == tmp_path


@pytest.mark.server
def test_unreachable_mirror_is_a_clear_fetch_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BINLOG_MODEL_CACHE", str(tmp_path))
    monkeypatch.setenv("BINLOG_MODEL_SID_MIRROR", "http://127.0.0.1:9/debian")   # nothing listens there
    with pytest.raises(SidFetchError, match=r"sid fetch of \S+ \S+: http://127\.0\.0\.1:9/debian/pool/"):
        fetch_sid_packages("mysql-sid")
    assert not (pinned_root("mysql-sid").parent / "fetched").exists()
