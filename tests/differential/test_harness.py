"""The local MariaDB harness: startup, settings in effect, SQL helpers, binlog collection, cleanup."""

from __future__ import annotations

from pathlib import Path

import pytest

from binlog_model.errors import BinlogError, ConfigError
from binlog_model.testing.localserver import LocalServer
from binlog_model.testing.mariadb import HarnessError, MariaDBServer, mariadb_available
from binlog_model.testing.sqltext import parse_directives, split_statements


def _require_mariadb() -> None:
    ok, reason = mariadb_available()
    if not ok:
        pytest.skip(f"no local MariaDB: {reason}")


def test_session_server_settings(mariadb: MariaDBServer) -> None:
    rows = dict(mariadb.query(
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('binlog_format', 'binlog_row_image',"
        " 'binlog_row_metadata', 'binlog_annotate_row_events', 'log_bin', 'binlog_checksum',"
        " 'character_set_server', 'time_zone', 'server_id', 'gtid_domain_id')"))
    assert rows == {
        "binlog_format": "ROW", "binlog_row_image": "FULL", "binlog_row_metadata": "FULL",
        "binlog_annotate_row_events": "ON", "log_bin": "ON", "binlog_checksum": "CRC32",
        "character_set_server": "utf8mb4", "time_zone": "+00:00", "server_id": "1", "gtid_domain_id": "0",
    }
    assert "MariaDB" in mariadb.version
    assert mariadb.port > 0
    assert mariadb.socket.exists()


@pytest.mark.server
def test_startup_and_cleanup() -> None:
    _require_mariadb()
    server = MariaDBServer(row_image="MINIMAL", row_metadata="MINIMAL", server_id=7, gtid_domain_id=3)
    with server:
        print(f"MariaDB startup: {server.startup_seconds:.2f} s ({server.version})")
        # started means up: the process runs and answers on its socket, however long that took
        assert server.running and server.socket.exists()
        root = server.root
        assert server.query("SELECT @@binlog_row_image, @@server_id, @@gtid_domain_id") == [("MINIMAL", 7, 3)]
    assert not root.exists()
    assert not server.running
    server.stop()  # idempotent


def test_fresh_db_execute_query_and_collect(server: LocalServer, fresh_db: str, tmp_path: Path) -> None:
    server.flush_and_collect()  # drop what earlier tests wrote from the next collect
    server.execute(
        "CREATE TABLE t (id INT PRIMARY KEY, note VARCHAR(20));"
        "INSERT INTO t VALUES (1, 'semi;colon'), (2, 'it''s');", database=fresh_db)
    assert server.query("SELECT id, note FROM t ORDER BY id", database=fresh_db) == [
        (1, "semi;colon"), (2, "it's")]
    active_before = server.binlog_names()[-1]
    files = server.flush_and_collect(tmp_path / "out")
    assert [f.name for f in files] == [active_before]
    assert files[0].parent == tmp_path / "out"
    data = files[0].read_bytes()
    assert data[:4] == b"\xfebin"
    assert fresh_db.encode() in data  # the CREATE TABLE / TABLE_MAP name the test database
    # The next collect only returns files closed since this one.
    assert server.flush_and_collect() == [server.binlog_dir / server.binlog_names()[-2]]


def test_execute_error_names_statement(server: LocalServer, fresh_db: str) -> None:
    with pytest.raises(HarnessError, match=r"statement 2 failed: .*statement: INSERT INTO nope VALUES \(1\)"):
        server.execute(["SELECT 1", "INSERT INTO nope VALUES (1)"], database=fresh_db)
    with pytest.raises(BinlogError, match="query failed"):
        server.query("SELECT * FROM missing_table", database=fresh_db)


def test_one_connection_per_execute_keeps_transactions(server: LocalServer, fresh_db: str) -> None:
    server.execute(["CREATE TABLE t (id INT PRIMARY KEY) ENGINE=InnoDB", "BEGIN", "INSERT INTO t VALUES (1)",
                     "ROLLBACK", "INSERT INTO t VALUES (2)"], database=fresh_db)
    assert server.query("SELECT id FROM t", database=fresh_db) == [(2,)]


@pytest.mark.server
def test_bad_options_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="row_image"):
        MariaDBServer(row_image="HALF")
    with pytest.raises(ConfigError, match="row_metadata"):
        MariaDBServer(row_metadata="ALL")


@pytest.mark.server
def test_failed_start_shows_error_log_and_cleans_up() -> None:
    _require_mariadb()
    server = MariaDBServer(extra_args=["--no-such-option-for-test=1"])
    with pytest.raises(HarnessError, match=r"(?s)exited with code .*error log tail.*no-such-option-for-test"):
        server.start()
    assert not server.running
    with pytest.raises(HarnessError, match="not started"):
        _ = server.root


def test_split_statements() -> None:
    text = (
        "-- header: x\n"
        "CREATE TABLE a (s VARCHAR(5) DEFAULT ';');\n"
        "INSERT INTO a VALUES ('it''s;', \"q\\\";\", `we;ird`); # trailing ; comment\n"
        "/* block ; comment */ SELECT 1;\n"
        "-- only a comment;\n"
        "SELECT 2"
    )
    assert split_statements("SELECT /*! STRAIGHT_JOIN */ 1 -- x\n  FROM t;") == [
        "SELECT /*! STRAIGHT_JOIN */ 1\n  FROM t"]
    assert split_statements(text) == [
        "CREATE TABLE a (s VARCHAR(5) DEFAULT ';')",
        "INSERT INTO a VALUES ('it''s;', \"q\\\";\", `we;ird`)",
        "SELECT 1",
        "SELECT 2",
    ]
    with pytest.raises(ConfigError, match="line 2"):
        split_statements("SELECT 1;\nSELECT 'open")


def test_parse_directives() -> None:
    text = ("-- Title line\n-- Covers: prose, not a directive\n-- @binlog_row_image: NOBLOB\n"
            "--  @SQL_MODE :  \n\nSELECT 1;\n-- @later: ignored\n")
    assert parse_directives(text) == {"binlog_row_image": "NOBLOB", "sql_mode": ""}


@pytest.mark.server
def test_start_retries_when_the_port_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """A port taken between picking and binding (another test session) makes start() retry on a new one."""
    _require_mariadb()
    import socket

    from binlog_model.testing import localserver

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        real_free_port = localserver.free_port
        picks: list[int] = []

        def first_busy() -> int:
            picks.append(busy if not picks else real_free_port())
            return picks[-1]

        monkeypatch.setattr(localserver, "free_port", first_busy)
        with MariaDBServer() as server:
            assert picks[0] == busy
            assert server.port == picks[-1] != busy
            assert server.query("SELECT 1") == [(1,)]


@pytest.mark.server
def test_stop_cleans_up_after_the_server_died() -> None:
    _require_mariadb()
    import os
    import signal

    server = MariaDBServer().start()
    root = server.root
    assert server._proc is not None
    os.kill(server._proc.pid, signal.SIGKILL)
    server._proc.wait(timeout=10)
    assert not server.running
    with pytest.raises(HarnessError, match="cannot connect"):
        server.query("SELECT 1")
    server.stop()
    assert not root.exists()
