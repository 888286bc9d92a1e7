"""Events pulled over the replication protocol equal the events decoded from the same binlog files.

Real local MariaDB and MySQL 9: a scenario is run, its binlog files collected, and the same files are then
dumped by the server over COM_BINLOG_DUMP (from the start, from mid-file, from a GTID, across a rotation).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from binlog_model.errors import ConfigError
from binlog_model.io.files import iter_events
from binlog_model.io.replication import ReplicationError, iter_replication_events, iter_replication_packets
from binlog_model.testing.localserver import LocalServer
from binlog_model.testing.mariadb import MariaDBServer
from binlog_model.testing.mysql import MySQLServer
from binlog_model.testing.scenario import SCENARIO_DIR, run_scenario


def _named(event: Any) -> Any:
    """The event with ``header.file`` reduced to the file name (files are read by path, dumps by name),
    also in the TABLE_MAP a ROWS event carries."""
    header = event.header
    changes: dict[str, Any] = {"header": dataclasses.replace(header, file=Path(header.file).name)}
    if getattr(event, "table_map", None) is not None:
        changes["table_map"] = _named(event.table_map)
    return dataclasses.replace(event, **changes)


def _from_files(files: list[Path]) -> list[Any]:
    return [_named(e) for e in iter_events(files)]


def _from_wire(server: LocalServer, names: set[str], **kw: Any) -> list[Any]:
    # A non-blocking dump runs on into the new active file; keep the collected files only.
    return [e for e in iter_replication_events(server.connect(), **kw) if e.header.file in names]


@pytest.mark.parametrize("scenario", ["spec_example", "all_types", "large_statement"])
def test_dump_from_start_equals_file_events(server: LocalServer, tmp_path: Path, scenario: str) -> None:
    files = run_scenario(server, SCENARIO_DIR / f"{scenario}.sql", tmp_path)
    expected = _from_files(files)
    pulled = _from_wire(server, {f.name for f in files}, log_file=files[0].name, log_pos=4)
    assert len(pulled) == len(expected) > 10
    assert pulled == expected


def test_dump_from_mid_file_and_from_gtid(mariadb: MariaDBServer, tmp_path: Path) -> None:
    files = run_scenario(mariadb, SCENARIO_DIR / "spec_example.sql", tmp_path)
    expected = _from_files(files)
    gtids = [e for e in expected if e.header.type_name == "GTID_EVENT"]
    third = gtids[2]  # BEGIN GTID 0-1-3: the INSERT's transaction
    names = {f.name for f in files}

    pulled = _from_wire(mariadb, names, log_file=files[0].name, log_pos=third.header.offset)
    assert pulled == [e for e in expected if e.header.offset >= third.header.offset]

    # Starting after GTID 0-1-2: the file's first events, then straight to the transaction of 0-1-3.
    by_gtid = _from_wire(mariadb, names, mariadb_gtid="0-1-2")
    head = [e.header.type_name for e in by_gtid[:4]]
    assert head == ["FORMAT_DESCRIPTION_EVENT", "GTID_LIST_EVENT", "BINLOG_CHECKPOINT_EVENT", "GTID_EVENT"]
    assert by_gtid[3] == third
    assert by_gtid[3:] == [e for e in expected if e.header.offset >= third.header.offset]


def test_dump_follows_rotation(server: LocalServer, fresh_db: str, tmp_path: Path) -> None:
    server.reset_binlogs()
    server.execute(["CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))", "INSERT INTO t VALUES (1, 'a')"],
                    database=fresh_db)
    server.execute("FLUSH BINARY LOGS")
    server.execute(["UPDATE t SET v = 'b'", "DELETE FROM t"], database=fresh_db)
    files = server.flush_and_collect(tmp_path, include_previous=True)
    assert len(files) == 2
    expected = _from_files(files)
    pulled = _from_wire(server, {f.name for f in files}, log_file=files[0].name)
    assert pulled == expected
    assert {e.header.file for e in pulled} == {files[0].name, files[1].name}
    kinds = [e.header.type_name for e in pulled]
    version = "_V1" if server.family == "MariaDB" else ""  # MariaDB writes v1 rows events, MySQL v2
    assert f"WRITE_ROWS_EVENT{version}" in kinds and f"DELETE_ROWS_EVENT{version}" in kinds


def test_packets_carry_framing_and_exact_bytes(server: LocalServer, tmp_path: Path) -> None:
    files = run_scenario(server, SCENARIO_DIR / "transactions.sql", tmp_path)
    data = files[0].read_bytes()
    packets = [p for p in iter_replication_packets(server.connect(), files[0].name, 4)
               if p.file == files[0].name]
    assert packets[0].artificial and packets[0].event_type == 4  # the fake ROTATE naming the file
    real = [p for p in packets if not p.artificial]
    assert b"\xfebin" + b"".join(p.raw for p in real) == data



def test_event_over_16_mb_arrives_whole(server: LocalServer, fresh_db: str, tmp_path: Path) -> None:
    """A rows event of ~20 MB comes as a 16 MB packet and its continuation: the dump reader joins them, and
    the events and the packets' bytes (alone and in batches) equal the file's."""
    server.reset_binlogs()
    server.execute(["CREATE TABLE big (id INT PRIMARY KEY, b LONGBLOB)",
                    "INSERT INTO big VALUES (1, REPEAT('x', 20000000)), (2, 'small')"], database=fresh_db)
    files = server.flush_and_collect(tmp_path, include_previous=True)
    data = files[0].read_bytes()
    packets = [p for p in iter_replication_packets(server.connect(), files[0].name, 4)
               if p.file == files[0].name and not p.artificial]
    assert max(len(p.raw) for p in packets) > 20_000_000
    assert b"\xfebin" + b"".join(p.raw for p in packets) == data
    batched = [p for p in iter_replication_packets(server.connect(), files[0].name, 4, batch=True)
               if p.file == files[0].name and not p.artificial]
    assert b"\xfebin" + b"".join(p.raw for p in batched) == data
    expected = _from_files(files)
    assert _from_wire(server, {f.name for f in files}, log_file=files[0].name) == expected
    values = [v for e in expected if e.header.type_name.startswith("WRITE_ROWS")
              for row in e.rows for v in row]
    assert any(isinstance(v, bytes) and len(v) == 20_000_000 for v in values)

def test_dump_errors(mariadb: MariaDBServer) -> None:
    with pytest.raises(ReplicationError, match=r"nope\.000001:4 failed: .*1236"):
        list(iter_replication_packets(mariadb.connect(), "nope.000001", 4))
    with pytest.raises(ReplicationError, match="GTID 0-1-999999 failed"):
        list(iter_replication_packets(mariadb.connect(), mariadb_gtid="0-1-999999"))
    with pytest.raises(ConfigError, match="log_file"):
        list(iter_replication_packets(mariadb.connect()))
    with pytest.raises(ConfigError, match="server_id"):
        list(iter_replication_packets(mariadb.connect(), "x", server_id=0))


def test_blocking_dump_tails_the_active_file(server: LocalServer, fresh_db: str) -> None:
    """Start at SHOW MASTER STATUS (inside the active file), then see a new transaction arrive."""
    server.execute("CREATE TABLE t (id INT PRIMARY KEY)", database=fresh_db)
    log_file, log_pos = server.binlog_position()
    stream = iter_replication_events(server.connect(read_timeout=20), log_file=str(log_file),
                                     log_pos=int(log_pos), blocking=True)
    server.execute("INSERT INTO t VALUES (42)", database=fresh_db)
    try:
        seen, offsets = [], []
        for event in stream:
            seen.append(event.header.type_name)
            offsets.append(event.header.offset)
            if event.header.type_name in ("WRITE_ROWS_EVENT_V1", "WRITE_ROWS_EVENT"):
                assert event.table_map.schema == fresh_db
                assert event.header.file == log_file
                break
        # The dump resumed exactly where asked: the first real event starts at log_pos.
        first = {"MariaDB": ["GTID_EVENT", "ANNOTATE_ROWS_EVENT"], "MySQL": ["GTID_LOG_EVENT", "QUERY_EVENT"]}
        assert seen[:2] == first[server.family]
        assert offsets[0] == int(log_pos)
    finally:
        stream.close()  # closes the dump connection


def test_mysql_dump_as_a_replication_user_with_caching_sha2_password(mysql: MySQLServer,
                                                                     mysql_db: str) -> None:
    """MySQL 8+'s default authentication over plain TCP: pymysql's ``rsa`` extra (cryptography) fetches the
    server's RSA key for the full authentication; the dump then equals the file's events."""
    import pymysql

    mysql.execute(["CREATE USER 'repl'@'localhost' IDENTIFIED WITH caching_sha2_password BY 's3cret-pw'",
                   "GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'repl'@'localhost'"])
    try:
        mysql.execute(["CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))", "INSERT INTO t VALUES (1, 'a')"],
                      database=mysql_db)
        files = mysql.flush_and_collect()
        plugin = mysql.query("SELECT plugin FROM mysql.user WHERE user = 'repl'")[0][0]
        assert plugin == "caching_sha2_password"
        conn = pymysql.connect(host="127.0.0.1", port=mysql.port, user="repl", password="s3cret-pw",
                               connect_timeout=10)
        pulled = [e for e in iter_replication_events(conn, log_file=files[-1].name, log_pos=4)
                  if e.header.file == files[-1].name]
        assert pulled == _from_files([files[-1]])
        rows = [e for e in pulled
                if e.header.type_name == "WRITE_ROWS_EVENT" and e.table_map.schema == mysql_db]
        assert [r.rows for r in rows] == [((1, b"a"),)]
    finally:
        mysql.execute("DROP USER 'repl'@'localhost'")
