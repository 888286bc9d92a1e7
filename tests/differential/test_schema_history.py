"""SchemaHistory: positions, at(), GTIDs from a real server's binlog, and the versioned JSON format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from binlog_model.errors import ConfigError, SchemaError
from binlog_model.io.files import iter_events
from binlog_model.io.snapshots import load_history, save_history
from binlog_model.position import EventPosition
from binlog_model.resolve.assembler import replay_ddl
from binlog_model.resolve.ddl_pass import DDL_SKIP_TYPES
from schema_tracker import Catalog, SchemaHistory
from schema_tracker.history import FORMAT, VERSION, catalog_to_json

P = EventPosition


def build() -> SchemaHistory:
    h = SchemaHistory(Catalog(server_charset="utf8mb4"))
    h.apply("CREATE TABLE t (a int primary key, e enum('x,y','q''r'))", "d", P("bin.000001", 100), "u:1")
    h.apply("INSERT INTO t VALUES (1, 'x,y')", "d", P("bin.000001", 200))  # not recorded
    h.apply("ALTER TABLE t ADD COLUMN b varchar(3) FIRST", "d", P("bin.000001", 300), "u:2")
    h.apply("ALTER TABLE t CHANGE a aa bigint NOT NULL", "d", P("bin.000002", 4), "u:3")
    return h


def test_at_returns_the_catalog_in_force() -> None:
    h = build()
    assert len(h) == 3 and [e.gtid for e in h] == ["u:1", "u:2", "u:3"]
    assert h.at(P("bin.000001", 50)).table("d", "t") is None
    assert h.at(P("bin.000001", 100)).table("d", "t") is None  # the DDL event itself: not yet in force
    assert h.at(P("bin.000001", 250)).table("d", "t").column_names == ("a", "e")  # type: ignore[union-attr]
    assert h.at(P("bin.000001", 9999)).table("d", "t").column_names == ("b", "a", "e")  # type: ignore
    assert h.at(P("bin.000003", 4)).table("d", "t").column_names == ("b", "aa", "e")  # type: ignore


def test_positions_must_not_go_backwards() -> None:
    h = build()
    with pytest.raises(ConfigError, match="backwards"):
        h.apply("CREATE TABLE u (a int)", "d", P("bin.000001", 5))


def test_json_round_trip_replays_changes_without_sql(tmp_path: Path) -> None:
    h = build()
    path = tmp_path / "history.json"
    save_history(h, path)
    doc = json.loads(path.read_text())
    assert (doc["format"], doc["version"]) == (FORMAT, VERSION)
    assert doc["entries"][2]["changes"][0]["type"] == "RenameColumn"
    back = load_history(path)
    assert [(e.position, e.gtid, e.statement, e.changes) for e in back] == \
        [(e.position, e.gtid, e.statement, e.changes) for e in h]
    assert catalog_to_json(back.catalog) == catalog_to_json(h.catalog)
    assert back.at(P("bin.000001", 250)) == h.at(P("bin.000001", 250))


def test_json_rejects_foreign_versions_and_tampering() -> None:
    doc = build().to_json()
    with pytest.raises(SchemaError, match="version"):
        SchemaHistory.from_json({**doc, "version": 99})
    with pytest.raises(SchemaError, match="not a schema history"):
        SchemaHistory.from_json({"format": "something-else"})
    tampered: Any = json.loads(json.dumps(doc))
    tampered["entries"][1]["changes"][0]["column"]["data_type"] = "bigint"
    with pytest.raises(SchemaError, match="inconsistent"):
        SchemaHistory.from_json(tampered)
    broken: Any = json.loads(json.dumps(doc))
    del broken["entries"][0]["changes"][0]["columns"]
    with pytest.raises(SchemaError, match="corrupt"):
        SchemaHistory.from_json(broken)


def test_lenient_history_records_skips() -> None:
    h = SchemaHistory(lenient=True)
    h.apply("CREATE TABLE t (a int)", "d", P("b.1", 1))
    h.apply("ALTER TABLE t ADD SYSTEM VERSIONING", "d", P("b.1", 2))
    assert type(h.entries[-1].changes[0]).__name__ == "SkippedStatement"
    assert h.catalog.table("d", "t").uncertain  # type: ignore[union-attr]
    assert SchemaHistory.from_json(h.to_json()).catalog.table("d", "t").uncertain  # type: ignore[union-attr]


@pytest.mark.server
def test_history_from_a_real_server_binlog(server: Any, fresh_db: str, tmp_path: Path) -> None:
    server.reset_binlogs()
    server.execute(["CREATE TABLE t (a int PRIMARY KEY, b varchar(5))",
                     "INSERT INTO t VALUES (1, 'x')",
                     "ALTER TABLE t ADD COLUMN c int AFTER a",
                     "INSERT INTO t VALUES (2, 3, 'y')",
                     "ALTER TABLE t CHANGE b bb varchar(5)"], database=fresh_db)
    files = server.flush_and_collect(tmp_path)
    h = SchemaHistory(Catalog(server_charset="utf8mb4"))
    replay_ddl(iter_events(files, skip_types=DDL_SKIP_TYPES), h)
    mine = [e for e in h if e.default_db == fresh_db]
    assert [e.statement.split()[0] for e in mine] == ["CREATE", "ALTER", "ALTER"]
    if server.family == "MariaDB":
        assert all(e.gtid and e.gtid.startswith("0-") for e in mine)   # domain-server-sequence
    else:
        uuid = server.query("SELECT @@server_uuid")[0][0]
        assert all(e.gtid and e.gtid.startswith(f"{uuid}:") for e in mine)
    final = h.catalog.table(fresh_db, "t")
    assert final is not None and final.column_names == ("a", "c", "bb") and final.primary_key == ("a",)
    # between the two ALTERs the table had c but not bb
    middle = h.at(EventPosition(mine[2].position.file, mine[2].position.offset))  # type: ignore[union-attr]
    assert middle.table(fresh_db, "t").column_names == ("a", "c", "b")  # type: ignore[union-attr]


@pytest.mark.server
def test_create_select_as_row_based_logging_writes_it(server: Any, fresh_db: str, tmp_path: Path) -> None:
    from schema_tracker import catalog_from_server

    server.reset_binlogs()
    server.execute(["CREATE TABLE src (a int, b varchar(3) CHARACTER SET latin1)",
                     "INSERT INTO src VALUES (1, 'q')",
                     "CREATE TABLE t3 (k int PRIMARY KEY AUTO_INCREMENT) SELECT a, b, 'lit' AS c FROM src",
                     "CREATE TABLE t4 AS SELECT * FROM src"], database=fresh_db)
    files = server.flush_and_collect(tmp_path)
    cs, coll = server.query("SELECT @@character_set_server, @@collation_server")[0]
    h = SchemaHistory(Catalog(server_charset=cs, server_collation=coll))
    replay_ddl(iter_events(files, skip_types=DDL_SKIP_TYPES), h)
    conn = server.connect()
    try:
        live = catalog_from_server(conn, databases=[fresh_db])
    finally:
        conn.close()
    for name in ("t3", "t4"):
        mine, theirs = h.catalog.table(fresh_db, name), live.table(fresh_db, name)
        assert mine is not None and theirs is not None
        assert [(c.name, c.column_type, c.nullable, c.charset) for c in mine.columns] == \
            [(c.name, c.column_type, c.nullable, c.charset) for c in theirs.columns]
        assert mine.primary_key == theirs.primary_key


def test_copy_is_independent() -> None:
    from schema_tracker.history import SchemaHistory

    h = SchemaHistory()
    h.apply("CREATE DATABASE d", None)
    c = h.copy()
    c.apply("CREATE TABLE d.t (a int)", None)
    assert len(h) == 1 and len(c) == 2
    assert h.catalog.table("d", "t") is None and c.catalog.table("d", "t") is not None
