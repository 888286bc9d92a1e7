"""Every scenario runs on the real MariaDB and yields intact binlogs; the committed golden binlogs match it.

The server's own ``SHOW BINLOG EVENTS`` is the oracle for what the binlog holds, so these tests do not
depend on our decoder. A plain walk of the v4 common headers (type at +4, event_size at +9) checks that the
collected file is a whole sequence of events at exactly the positions the server reports.
"""

from __future__ import annotations

import json
import struct
from collections import Counter
from pathlib import Path

import pytest

from binlog_model.errors import ConfigError
from binlog_model.testing.localserver import LocalServer
from binlog_model.testing.mariadb import HarnessError, MariaDBServer
from binlog_model.testing.scenario import SCENARIO_DIR, list_scenarios, load_scenario, run_scenario

GOLDEN = SCENARIO_DIR.parent / "golden" / "mariadb"
SCENARIOS = list_scenarios()


def _walk(data: bytes) -> list[int]:
    """Offsets of the events in a binlog file; asserts the last event ends exactly at the end."""
    assert data[:4] == b"\xfebin"
    offsets, pos = [], 4
    while pos < len(data):
        offsets.append(pos)
        size = struct.unpack_from("<I", data, pos + 9)[0]
        assert size >= 19, f"event size {size} at offset {pos}"
        pos += size
    assert pos == len(data), "file does not end on an event boundary"
    return offsets


def _server_events(server: MariaDBServer, name: str) -> list[tuple[int, str, str]]:
    rows = server.query(f"SHOW BINLOG EVENTS IN '{name}'")
    return [(int(r[1]), str(r[2]), str(r[5])) for r in rows]


@pytest.fixture(scope="module")
def scenario_runs(mariadb: MariaDBServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Run every scenario once (each resets the binlogs), keeping the files and the server's event listing."""
    results: dict[str, dict] = {}
    for path in SCENARIOS:
        files = run_scenario(mariadb, path, tmp_path_factory.mktemp(path.stem))
        events = [ev for f in files for ev in _server_events(mariadb, f.name)]
        results[path.stem] = {"files": files, "events": events}
    return results


def test_scenarios_are_rerunnable_and_clean_up(server: LocalServer) -> None:
    path = SCENARIO_DIR / "pk_updates.sql"
    assert load_scenario(path).databases == ("pk",)
    first = run_scenario(server, path)[0].read_bytes()
    second = run_scenario(server, path)[0].read_bytes()
    assert len(first) == len(second)  # same statements, same GTIDs after RESET MASTER, same sizes
    assert ("pk",) not in server.query("SHOW DATABASES")


def test_scenario_set_is_complete() -> None:
    assert {p.stem for p in SCENARIOS} >= {
        "spec_example", "all_types", "transactions", "large_statement", "ddl_between_dml",
        "no_primary_key", "pk_updates", "multi_table"}


@pytest.mark.parametrize("name", [p.stem for p in SCENARIOS])
def test_scenario_produces_complete_binlogs(scenario_runs: dict[str, dict], name: str) -> None:
    run = scenario_runs[name]
    assert run["files"], "no binlog files collected"
    offsets = [off for f in run["files"] for off in _walk(f.read_bytes())]
    assert offsets == [ev[0] for ev in run["events"]]
    kinds = Counter(ev[1] for ev in run["events"])
    assert kinds["Format_desc"] == len(run["files"])
    assert kinds["Gtid"] >= 1
    assert kinds["Rotate"] == len(run["files"])  # closed by FLUSH BINARY LOGS


@pytest.mark.parametrize("name", [p.stem for p in SCENARIOS])
def test_scenario_has_row_events_with_annotations(scenario_runs: dict[str, dict], name: str) -> None:
    kinds = Counter(ev[1] for ev in scenario_runs[name]["events"])
    rows = kinds["Write_rows_v1"] + kinds["Update_rows_v1"] + kinds["Delete_rows_v1"]
    assert rows > 0
    assert kinds["Table_map"] >= 1
    assert kinds["Annotate_rows"] >= 1


def test_spec_example_statements_reach_the_binlog(scenario_runs: dict[str, dict]) -> None:
    infos = [ev for ev in scenario_runs["spec_example"]["events"] if ev[1] in ("Query", "Annotate_rows")]
    texts = [info for _, _, info in infos]
    for expected in (
        "use `ppc`; CREATE TABLE foobar (foo int not null primary key, bar int null)",
        "use `ppc`; alter table foobar modify column bar int not null",
        "use `ppc`; alter table foobar add column baz text not null",
        "use `ppc`; alter table foobar change column baz hurrdurr text not null",
        "use `ppc`; alter table foobar drop column hurrdurr",
        "UPDATE `campaigns` SET `geo` = NULL, `clicks` = 777 WHERE `cid` = 1",
        "DELETE FROM `campaigns` WHERE `cid` = 2",
    ):
        assert expected in texts
    kinds = [ev[1] for ev in scenario_runs["spec_example"]["events"]]
    assert kinds.count("Write_rows_v1") == kinds.count("Update_rows_v1") == kinds.count("Delete_rows_v1") == 1


def test_transactions_log_only_committed_work(scenario_runs: dict[str, dict]) -> None:
    data = b"".join(f.read_bytes() for f in scenario_runs["transactions"]["files"])
    assert b"opening deposit" in data
    assert b"mallory" not in data
    # The rolled-back work after the savepoint is not logged (its INSERT text would be annotated).
    assert b"bonus (rolled back)" not in data
    # Non-transactional Aria changes are logged even when the surrounding transaction rolls back.
    assert b"non-transactional, logged" in data


def test_large_statement_is_split_into_many_row_events(scenario_runs: dict[str, dict]) -> None:
    kinds = Counter(ev[1] for ev in scenario_runs["large_statement"]["events"])
    assert kinds["Write_rows_v1"] >= 5
    assert kinds["Update_rows_v1"] >= 10
    flags = [info for _, kind, info in scenario_runs["large_statement"]["events"] if kind == "Write_rows_v1"]
    assert sum("STMT_END_F" in info for info in flags) == 1


def test_multi_table_statement_maps_several_tables(scenario_runs: dict[str, dict]) -> None:
    maps = [info for _, kind, info in scenario_runs["multi_table"]["events"] if kind == "Table_map"]
    assert any("(shop_archive.notes)" in m for m in maps)
    assert any("(shop.orders)" in m for m in maps)


@pytest.mark.parametrize("name", [p.stem for p in SCENARIOS])
def test_golden_binlogs_are_committed_and_current(name: str) -> None:
    meta_path = GOLDEN / name / "meta.json"
    assert meta_path.is_file(), f"run: python -m binlog_model.testing.scenario (missing {meta_path})"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    assert meta["scenario_sha256"] == load_scenario(SCENARIO_DIR / f"{name}.sql").sha256, (
        "scenario changed since its golden binlogs were generated: python -m binlog_model.testing.scenario")
    files = sorted((GOLDEN / name / "binlogs").iterdir())
    assert [f.name for f in files] == [b["name"] for b in meta["binlogs"]]
    for f in files:
        data = f.read_bytes()
        assert len(data) == next(b["size"] for b in meta["binlogs"] if b["name"] == f.name)
        _walk(data)
    assert "MariaDB" in meta["server"]["version"]
    assert meta["known_differences_from_spec_mysql57"]


def test_golden_spec_example_matches_a_fresh_run(scenario_runs: dict[str, dict]) -> None:
    """Same event kinds, sizes and statements as a fresh run (timestamps and table ids may differ)."""
    golden = (GOLDEN / "spec_example" / "binlogs" / "mysql-bin.000001").read_bytes()
    fresh = scenario_runs["spec_example"]["files"][0].read_bytes()
    assert _walk(golden) == _walk(fresh)
    assert [golden[o + 4] for o in _walk(golden)] == [fresh[o + 4] for o in _walk(fresh)]


def test_bad_scenarios_are_rejected(tmp_path: Path, server: LocalServer) -> None:
    bad = tmp_path / "bad.sql"
    bad.write_text("-- @binlog_row_imag: FULL\nSELECT 1;\n")
    with pytest.raises(ConfigError, match="unknown directive @binlog_row_imag"):
        load_scenario(bad)
    bad.write_text("-- @binlog_row_image: HALF\nSELECT 1;\n")
    with pytest.raises(ConfigError, match="HALF"):
        load_scenario(bad)
    bad.write_text("-- nothing but comments\n")
    with pytest.raises(ConfigError, match="no statements"):
        load_scenario(bad)
    bad.write_text("CREATE DATABASE scen_fail_check;\nINSERT INTO nowhere VALUES (1);\n")
    with pytest.raises(HarnessError, match=r"statement 2 failed.*INSERT INTO nowhere"):
        run_scenario(server, bad)
    server.execute("DROP DATABASE IF EXISTS scen_fail_check")


def test_directives_take_effect(tmp_path: Path, server: LocalServer) -> None:
    script = tmp_path / "directives.sql"
    script.write_text(
        "-- @binlog_row_image: MINIMAL\n-- @sql_mode: ALLOW_INVALID_DATES\n-- @timestamp: 1527574930\n"
        "CREATE DATABASE IF NOT EXISTS scen_directives;\n"
        "CREATE TABLE scen_directives.t (id INT PRIMARY KEY, d DATE, s VARCHAR(40));\n"
        "INSERT INTO scen_directives.t VALUES (1, '2020-02-31', 'x');\n"
        "UPDATE scen_directives.t SET s = CONCAT(@@session.binlog_row_image, UNIX_TIMESTAMP())"
        " WHERE id = 1;\n")
    try:
        run_scenario(server, script, cleanup=False)
        assert server.query("SELECT d, s FROM scen_directives.t") == [("2020-02-31", "MINIMAL1527574930")]
    finally:
        server.execute("DROP DATABASE IF EXISTS scen_directives")


def test_write_golden_binlogs_keeps_generator_keys(mariadb: MariaDBServer, tmp_path: Path) -> None:
    import hashlib

    from binlog_model.testing.scenario import MARIADB_VS_SPEC_MYSQL57, write_golden_binlogs

    out = tmp_path / "spec_example"
    out.mkdir()
    old_meta = {"expected": {"file": "expected.jsonl"}, "generated_at": "old"}
    (out / "meta.json").write_text(json.dumps(old_meta))
    (out / "binlogs").mkdir()
    (out / "binlogs" / "stale.000009").write_bytes(b"old")
    meta = write_golden_binlogs(mariadb, SCENARIO_DIR / "spec_example.sql", out)
    on_disk = json.loads((out / "meta.json").read_text(encoding="utf-8"))
    assert on_disk == meta
    assert meta["expected"] == {"file": "expected.jsonl"}
    assert meta["generated_at"] != "old"
    assert meta["directives"] == {"binlog_row_image": "NOBLOB", "timestamp": "1527574930"}
    assert "--binlog-row-metadata=FULL" in meta["server"]["flags"]
    assert not any(f.startswith("--datadir") for f in meta["server"]["flags"])
    assert meta["known_differences_from_spec_mysql57"] == list(MARIADB_VS_SPEC_MYSQL57)
    files = sorted((out / "binlogs").iterdir())
    assert [f.name for f in files] == [b["name"] for b in meta["binlogs"]] == ["mysql-bin.000001"]
    assert meta["binlogs"][0]["sha256"] == hashlib.sha256(files[0].read_bytes()).hexdigest()


def test_known_differences_follow_the_server() -> None:
    from binlog_model.testing.scenario import (
        MARIADB_VS_SPEC_MYSQL57,
        MYSQL57_VS_SPEC_MYSQL57,
        MYSQL80_VS_SPEC_MYSQL57,
        known_differences_for,
    )

    assert known_differences_for("10.11.19-MariaDB-0+deb12u1-log") == MARIADB_VS_SPEC_MYSQL57
    assert known_differences_for("5.7.44-log") == MYSQL57_VS_SPEC_MYSQL57
    assert known_differences_for("8.0.40") == MYSQL80_VS_SPEC_MYSQL57
