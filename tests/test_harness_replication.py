"""Events pulled over the replication protocol equal the events decoded from the same binlog files.

Real local MariaDB: a scenario is run, its binlog files collected, and the same files are then dumped by
the server over COM_BINLOG_DUMP (from the start, from mid-file, from a GTID, across a rotation).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from binlog_model.errors import ConfigError
from binlog_model.io.files import iter_events
from binlog_model.io.replication import ReplicationError, iter_replication_events, iter_replication_packets
from binlog_model.testing.mariadb import MariaDBServer
from binlog_model.testing.scenario import SCENARIO_DIR, run_scenario

pytestmark = pytest.mark.server


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


def _from_wire(server: MariaDBServer, names: set[str], **kw: Any) -> list[Any]:
    # A non-blocking dump runs on into the new active file; keep the collected files only.
    return [e for e in iter_replication_events(server.connect(), **kw) if e.header.file in names]


@pytest.mark.parametrize("scenario", ["spec_example", "all_types", "large_statement"])
def test_dump_from_start_equals_file_events(mariadb: MariaDBServer, tmp_path: Path, scenario: str) -> None:
    files = run_scenario(mariadb, SCENARIO_DIR / f"{scenario}.sql", tmp_path)
    expected = _from_files(files)
    pulled = _from_wire(mariadb, {f.name for f in files}, log_file=files[0].name, log_pos=4)
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


def test_dump_follows_rotation(mariadb: MariaDBServer, fresh_db: str, tmp_path: Path) -> None:
    mariadb.reset_binlogs()
    mariadb.execute(["CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))", "INSERT INTO t VALUES (1, 'a')"],
                    database=fresh_db)
    mariadb.execute("FLUSH BINARY LOGS")
    mariadb.execute(["UPDATE t SET v = 'b'", "DELETE FROM t"], database=fresh_db)
    files = mariadb.flush_and_collect(tmp_path, include_previous=True)
    assert len(files) == 2
    expected = _from_files(files)
    pulled = _from_wire(mariadb, {f.name for f in files}, log_file=files[0].name)
    assert pulled == expected
    assert {e.header.file for e in pulled} == {files[0].name, files[1].name}
    kinds = [e.header.type_name for e in pulled]
    assert "WRITE_ROWS_EVENT_V1" in kinds and "DELETE_ROWS_EVENT_V1" in kinds


def test_packets_carry_framing_and_exact_bytes(mariadb: MariaDBServer, tmp_path: Path) -> None:
    files = run_scenario(mariadb, SCENARIO_DIR / "transactions.sql", tmp_path)
    data = files[0].read_bytes()
    packets = [p for p in iter_replication_packets(mariadb.connect(), files[0].name, 4)
               if p.file == files[0].name]
    assert packets[0].artificial and packets[0].event_type == 4  # the fake ROTATE naming the file
    real = [p for p in packets if not p.artificial]
    assert b"\xfebin" + b"".join(p.raw for p in real) == data


def test_dump_errors(mariadb: MariaDBServer) -> None:
    with pytest.raises(ReplicationError, match=r"nope\.000001:4 failed: .*1236"):
        list(iter_replication_packets(mariadb.connect(), "nope.000001", 4))
    with pytest.raises(ReplicationError, match="GTID 0-1-999999 failed"):
        list(iter_replication_packets(mariadb.connect(), mariadb_gtid="0-1-999999"))
    with pytest.raises(ConfigError, match="log_file"):
        list(iter_replication_packets(mariadb.connect()))
    with pytest.raises(ConfigError, match="server_id"):
        list(iter_replication_packets(mariadb.connect(), "x", server_id=0))


def test_blocking_dump_tails_the_active_file(mariadb: MariaDBServer, fresh_db: str) -> None:
    """Start at SHOW MASTER STATUS (inside the active file), then see a new transaction arrive."""
    mariadb.execute("CREATE TABLE t (id INT PRIMARY KEY)", database=fresh_db)
    log_file, log_pos = mariadb.query("SHOW MASTER STATUS")[0][:2]
    stream = iter_replication_events(mariadb.connect(read_timeout=20), log_file=str(log_file),
                                     log_pos=int(log_pos), blocking=True)
    mariadb.execute("INSERT INTO t VALUES (42)", database=fresh_db)
    try:
        seen, offsets = [], []
        for event in stream:
            seen.append(event.header.type_name)
            offsets.append(event.header.offset)
            if event.header.type_name == "WRITE_ROWS_EVENT_V1":
                assert event.table_map.schema == fresh_db
                assert event.header.file == log_file
                break
        # The dump resumed exactly where asked: the first real event starts at log_pos.
        assert seen[:2] == ["GTID_EVENT", "ANNOTATE_ROWS_EVENT"]
        assert offsets[0] == int(log_pos)
    finally:
        stream.close()  # closes the dump connection
