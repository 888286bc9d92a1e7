"""Starting snapshots: from a mysqldump --no-data file and from a live server's information_schema.

The server tests build a schema on the real MariaDB, then check that (1) ``catalog_from_server`` and (2)
``catalog_from_dump`` of ``mariadb-dump --no-data`` both equal the catalog the tracker built by replaying
the same DDL.
"""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from schema_tracker import Catalog, catalog_from_dump, catalog_from_server
from schema_tracker.history import catalog_to_json
from tests._paths import CORPUS, require

DDL = [
    "CREATE TABLE a (id int unsigned NOT NULL AUTO_INCREMENT, name varchar(30) CHARACTER SET latin1, "
    "e enum('x,y','it''s') NOT NULL, d decimal(9,3), ts datetime(3), PRIMARY KEY (id))",
    "CREATE TABLE b (k1 int NOT NULL, k2 char(4) NOT NULL, v text, b blob, PRIMARY KEY (k2, k1)) "
    "CHARSET latin1",
    "CREATE TABLE c (x bigint(20) unsigned zerofill, y set('p','q'), g int AS (x + 1) VIRTUAL)",
]


def _tables(cat: Catalog, db: str) -> list[dict[str, Any]]:
    out = []
    for t in catalog_to_json(cat)["tables"]:
        if t["db"] != db:
            continue
        t = dict(t, engine=None)
        t["columns"] = [{k: v for k, v in c.items() if k not in ("default", "has_default", "generated")}
                        for c in t["columns"]]
        out.append(t)
    return out


def test_dump_file_from_corpus() -> None:
    text = require(CORPUS / "binlog-parser/data/fixtures/test_db.sql").read_text(encoding="utf-8")
    cat = catalog_from_dump(text)
    assert cat.database_defaults("test_db") == ("utf8mb3", "utf8mb3_general_ci")
    rooms = cat.table("test_db", "rooms")
    buildings = cat.table("test_db", "buildings")
    assert buildings is not None and buildings.primary_key == ("building_no",)
    assert [c.column_type for c in buildings.columns] == ["int(11)", "varchar(255)", "varchar(355)"]
    assert rooms is not None and rooms.charset == "utf8mb3"


@pytest.mark.server
def test_server_snapshot_and_dump_equal_replayed_ddl(server: Any, fresh_db: str) -> None:
    server.execute(DDL, database=fresh_db)
    cs, coll = server.query("SELECT @@character_set_server, @@collation_server")[0]
    base = Catalog(server_charset=cs, server_collation=coll)
    script = ";\n".join([f"CREATE DATABASE `{fresh_db}`", f"USE `{fresh_db}`", *DDL])
    replayed = catalog_from_dump(script, base, server_version=server.version)   # that server's DDL rules

    conn = server.connect()
    try:
        live = catalog_from_server(conn, databases=[fresh_db])
    finally:
        conn.close()
    assert _tables(live, fresh_db) == _tables(replayed, fresh_db)

    dump = subprocess.run([*server.dump_command(), "--no-data", f"--socket={server.socket}", "-uroot",
                           "--databases", fresh_db], capture_output=True, text=True, check=True).stdout
    assert "CREATE TABLE" in dump
    from_dump = catalog_from_dump(dump, base)
    assert _tables(from_dump, fresh_db) == _tables(replayed, fresh_db)
