"""Docker-backed MySQL 5.7 / 8.0 servers: the spec's flags are in effect and binlogs come out intact.

These run wherever a Docker engine answers and skip (with "no Docker engine: <error>") elsewhere.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

from binlog_model.errors import ConfigError
from binlog_model.testing.containers import (
    MYSQL80_COMPRESSED_FLAGS,
    MYSQL80_FLAGS,
    SPEC_MYSQL57_FLAGS,
    docker_available,
    server_for,
)
from binlog_model.testing.scenario import SCENARIO_DIR, run_scenario

_TRANSACTION_PAYLOAD_EVENT = 40
_ROWS_QUERY_LOG_EVENT = 29
_GTID_LOG_EVENT = 33

_DML = [
    "CREATE DATABASE IF NOT EXISTS harness_check",
    "CREATE TABLE harness_check.t (id INT PRIMARY KEY, body TEXT, n INT)",
    "INSERT INTO harness_check.t VALUES (1, 'blob-ish', 10), (2, NULL, 20)",
    "UPDATE harness_check.t SET n = n + 1",
    "DELETE FROM harness_check.t WHERE id = 2",
]


def _event_types(data: bytes) -> list[int]:
    """Walk the v4 common headers (type at +4, size at +9) of a real binlog file; no decoding."""
    assert data[:4] == b"\xfebin"
    types, pos = [], 4
    while pos + 19 <= len(data):
        size = struct.unpack_from("<I", data, pos + 9)[0]
        assert size >= 19, f"bad event size {size} at offset {pos}"
        types.append(data[pos + 4])
        pos += size
    assert pos == len(data), "binlog does not end on an event boundary"
    return types


def _variables(server: Any, *names: str) -> dict[str, str]:
    quoted = ", ".join(f"'{n}'" for n in names)
    rows = server.query(f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({quoted})")
    return {str(k): str(v) for k, v in rows}


def _collect_after_dml(server: Any, dest: Path) -> list[bytes]:
    server.reset_binlogs()
    server.execute(_DML)
    files = server.flush_and_collect(dest)
    assert files, "no closed binlog files collected"
    blobs = [f.read_bytes() for f in files]
    assert all(b[:4] == b"\xfebin" and len(b) > 4 for b in blobs)
    return blobs


def test_docker_available_reports_a_reason() -> None:
    ok, reason = docker_available()
    assert isinstance(ok, bool)
    assert reason
    if not ok:
        assert reason.startswith("no Docker engine:")


def test_server_kinds_use_the_spec_flags() -> None:
    assert server_for("mysql57").flags == SPEC_MYSQL57_FLAGS
    assert server_for("mysql57").image == "mysql:5.7"
    assert server_for("mysql80").flags == MYSQL80_FLAGS
    assert "--binlog-transaction-compression=ON" in server_for("mysql80_compressed").flags
    assert server_for("mysql80_compressed").flags == MYSQL80_COMPRESSED_FLAGS
    assert server_for("mysql57").binlog_basename == "binlog"
    with pytest.raises(ConfigError, match="unknown server kind"):
        server_for("mysql99")


@pytest.mark.docker
def test_mysql57_runs_with_spec_flags(mysql57: Any, tmp_path: Path) -> None:
    assert mysql57.version.startswith("5.7")
    assert _variables(mysql57, "binlog_format", "binlog_row_image", "gtid_mode",
                      "binlog_rows_query_log_events", "server_id", "enforce_gtid_consistency",
                      "master_info_repository") == {
        "binlog_format": "ROW", "binlog_row_image": "NOBLOB", "gtid_mode": "ON",
        "binlog_rows_query_log_events": "ON", "server_id": "12345", "enforce_gtid_consistency": "ON",
        "master_info_repository": "TABLE",
    }
    blobs = _collect_after_dml(mysql57, tmp_path)
    types = [t for b in blobs for t in _event_types(b)]
    assert _GTID_LOG_EVENT in types
    assert _ROWS_QUERY_LOG_EVENT in types
    assert any(b"harness_check" in b for b in blobs)


@pytest.mark.docker
def test_mysql80_has_full_row_metadata(mysql80: Any, tmp_path: Path) -> None:
    assert mysql80.version.startswith("8.0")
    assert _variables(mysql80, "binlog_row_metadata", "binlog_row_image", "gtid_mode") == {
        "binlog_row_metadata": "FULL", "binlog_row_image": "NOBLOB", "gtid_mode": "ON"}
    blobs = _collect_after_dml(mysql80, tmp_path)
    # FULL metadata puts column names into TABLE_MAP events.
    assert any(b"body" in b for b in blobs)


@pytest.mark.docker
def test_mysql80_compressed_writes_transaction_payloads(mysql80_compressed: Any, tmp_path: Path) -> None:
    assert _variables(mysql80_compressed, "binlog_transaction_compression") == {
        "binlog_transaction_compression": "ON"}
    blobs = _collect_after_dml(mysql80_compressed, tmp_path)
    assert _TRANSACTION_PAYLOAD_EVENT in [t for b in blobs for t in _event_types(b)]


@pytest.mark.docker
def test_spec_example_scenario_on_mysql57(mysql57: Any, tmp_path: Path) -> None:
    """The spec's own example on the spec's own server: ROWS_QUERY events and uuid:gno GTIDs."""
    files = run_scenario(mysql57, SCENARIO_DIR / "spec_example.sql", tmp_path)
    assert files and all(f.read_bytes()[:4] == b"\xfebin" for f in files)
    events = [row for f in files for row in mysql57.query(f"SHOW BINLOG EVENTS IN '{f.name}'")]
    kinds = [str(row[2]) for row in events]
    assert kinds.count("Rows_query") == 3
    assert {"Write_rows", "Update_rows", "Delete_rows"} <= set(kinds)
    infos = [str(row[5]) for row in events]
    assert any("alter table foobar change column baz hurrdurr text not null" in i for i in infos)
    assert any("SET @@SESSION.GTID_NEXT=" in i for i in infos)


def test_start_without_engine_is_a_harness_error() -> None:
    ok, _ = docker_available()
    if ok:
        pytest.skip("a Docker engine answers here; the real servers are tested above")
    from binlog_model.testing.mariadb import HarnessError

    server = server_for("mysql57")
    with pytest.raises(HarnessError, match=r"cannot start mysql:5\.7 container"):
        server.start()
    assert not server.running
    server.stop()  # idempotent
