"""A ``mysqldump --no-data`` of MySQL 9.7 holding every construct of issue 11 loads as a snapshot, and the
catalog it gives equals information_schema (same comparison as the statement-by-statement differential).

The dump carries what ``SHOW CREATE TABLE`` prints: ``/*!50100 PARTITION BY … */`` and ``/*!50100
TABLESPACE … */``, ``/*!80023 INVISIBLE */``, ``/*!80016 NOT ENFORCED */`` CHECK constraints, functional
key parts, generated columns, GIPK columns and MySQL 8 display rules.
"""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from schema_tracker.model import Catalog
from schema_tracker.snapshot import catalog_from_dump
from tests.mysql_ddl_differential import differences, server_snapshot, tracker_snapshot

SCHEMA = [
    "CREATE TABLESPACE dump_ts ADD DATAFILE 'dump_ts.ibd' ENGINE=InnoDB",
    "CREATE TABLE parts (id int NOT NULL, d date NOT NULL, s varchar(8), PRIMARY KEY (id, d)) "
    "PARTITION BY RANGE COLUMNS (d) (PARTITION p0 VALUES LESS THAN ('2020-01-01'), "
    "PARTITION p1 VALUES LESS THAN (MAXVALUE))",
    "CREATE TABLE hashed (a int, b varchar(3)) PARTITION BY HASH (a) PARTITIONS 3",
    "CREATE TABLE listed (a varchar(2)) PARTITION BY LIST COLUMNS (a) (PARTITION x VALUES IN ('a', 'b'))",
    "CREATE TABLE spaced (a int PRIMARY KEY, b text) TABLESPACE dump_ts",
    "CREATE TABLE vis (a int, b int INVISIBLE, c varchar(4) INVISIBLE NOT NULL DEFAULT 'x')",
    "CREATE TABLE func (a int, b varchar(10), INDEX ((a + 1)), UNIQUE INDEX fu ((lower(b))))",
    "CREATE TABLE gen (a int, b int AS (a * 2) VIRTUAL, "
    "c varchar(20) CHARACTER SET latin1 AS (concat(a, 'x')) STORED, d json, e int AS (d->>'$.x') VIRTUAL)",
    "CREATE TABLE chk (a int CHECK (a > 0), b int, CONSTRAINT c2 CHECK (b < a) NOT ENFORCED)",
    "CREATE TABLE uq (a int NOT NULL, b int, UNIQUE KEY (a))",
    "CREATE TABLE kinds (a float unsigned, b decimal(0), c bit(5), d year, e tinyint(1), f int(4) zerofill, "
    "g vector(3), h point NOT NULL SRID 4326, i enum('x', 'y ') CHARACTER SET latin1, j set('a', 'b'))",
    "SET SESSION sql_generate_invisible_primary_key = ON",
    "CREATE TABLE gipk (a int, b varchar(3))",
    "SET SESSION sql_generate_invisible_primary_key = OFF",
    "CREATE TABLE bin (a varchar(4), b text) CHARSET=binary",
    "CREATE TABLE cs (a varchar(3), b text COLLATE utf8mb4_bin) DEFAULT CHARSET=cp1251",
]


@pytest.fixture(scope="module")
def mysql_server():  # type: ignore[no-untyped-def]
    from binlog_model.testing.mysql import MySQLServer, mysql_available

    ok, why = mysql_available()
    if not ok:
        pytest.skip(why)
    with MySQLServer() as server:
        yield server


def test_mysqldump_no_data_loads_as_the_servers_catalog(mysql_server: Any) -> None:
    conn = mysql_server.connect()
    cur = conn.cursor()
    try:
        cur.execute("CREATE DATABASE dumped CHARACTER SET latin1")
        conn.select_db("dumped")
        for sql in SCHEMA:
            cur.execute(sql)
        dump = subprocess.run(
            [*mysql_server.tool("mysqldump"), f"--socket={mysql_server.socket}", "--user=root",
             "--no-data", "--skip-comments", "--set-gtid-purged=OFF", "--databases", "dumped"],
            capture_output=True, check=True, timeout=120).stdout.decode("utf-8")
        for needle in ("/*!50100 PARTITION BY", "/*!50100 TABLESPACE", "/*!80023 INVISIBLE */",
                       "/*!80016 NOT ENFORCED */", "((`a` + 1))", "my_row_id"):
            assert needle in dump, needle  # the dump really holds the construct
        cur.execute("SELECT @@character_set_server, @@collation_server")
        cs, coll = cur.fetchone()
        catalog = catalog_from_dump(dump, Catalog(server_charset=cs, server_collation=coll),
                                    server_version=mysql_server.version)
        problems = differences(server_snapshot(cur), tracker_snapshot(catalog))
        assert not problems, "\n".join(problems)
        func = catalog.table("dumped", "func")
        # (the dump lists UNIQUE keys first, so the hidden columns come in key order, not creation order)
        assert func is not None and {c.name for c in func.columns if c.hidden} == \
            {"!hidden!functional_index!0!0", "!hidden!fu!0!0"}
        assert catalog.table("dumped", "uq").primary_key == ("a",)  # type: ignore[union-attr]
    finally:
        cur.execute("DROP DATABASE IF EXISTS dumped")
        cur.execute("DROP TABLESPACE dump_ts")
        conn.close()
