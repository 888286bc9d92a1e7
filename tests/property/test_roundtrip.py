"""Lossless round trip (differential): a seeded random workload on each real server (MariaDB, MySQL 9), its
binlog decoded with ``image="full"`` into BinlogEvents and applied to an in-memory replica, must equal
``SELECT *`` of every table — at three mid-way checkpoints (FLUSH BINARY LOGS + SELECT at that moment) and
at the end: no row lost, duplicated or altered, and the same columns in the same order.

CI runs ``SEEDS`` seeds x ``STATEMENTS`` statements on the session server, a fresh database per seed.
``BINLOG_MODEL_SOAK=N`` runs N seeds of 5,000 statements instead (e.g. ``BINLOG_MODEL_SOAK=200 pytest
tests/property/test_roundtrip.py``). ``BINLOG_MODEL_SEED=S`` reruns only seed S (as printed by a failure).

Normal form of a value, applied to both sides (``_normal``), with why:
- SET: the replica has a tuple of labels, pymysql a comma-joined str → joined str.
- BIT: pymysql returns big-endian bytes, the model an unsigned int → int.
- TIMESTAMP: the model has an aware UTC datetime, pymysql a naive one in the session time zone (the harness
  server runs with --default-time-zone=+00:00) → naive UTC.
- DECIMAL: both are ``Decimal``; equality ignores the trailing-zero scale (the column's scale is fixed).
- Everything else (int, float, str, bytes, date, datetime, timedelta, JSON text) compares as is. FLOAT
  values are chosen to print exactly (see ``binlog_model.testing.workload``).
"""

from __future__ import annotations

import datetime as dt
import os
from collections import Counter
from typing import Any

import pymysql
import pytest
from pymysql.constants import FIELD_TYPE

from binlog_model.io.files import iter_events
from binlog_model.resolve.assembler import StatementAssembler
from binlog_model.resolve.options import AssemblerOptions
from binlog_model.testing.localserver import LocalServer
from binlog_model.testing.replica import Replica, ReplicaError
from binlog_model.testing.workload import Step, Workload
from binlog_model.wire.rows import RowsEvent
from schema_tracker.history import SchemaHistory
from schema_tracker.snapshot import catalog_from_server

_SOAK = int(os.environ.get("BINLOG_MODEL_SOAK", "0") or 0)
SEEDS = _SOAK or 20
STATEMENTS = 5000 if _SOAK else 2000
_ONLY = os.environ.get("BINLOG_MODEL_SEED")
_SEED_LIST = [int(_ONLY)] if _ONLY else list(range(1, SEEDS + 1))


def _normal(value: Any, type_code: int) -> Any:
    if isinstance(value, tuple):
        return ",".join(value)
    if type_code == FIELD_TYPE.BIT and isinstance(value, bytes):
        return int.from_bytes(value, "big")
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC).replace(tzinfo=None)
    return value


def _server_table(conn: Any, db: str, table: str) -> tuple[list[str], Counter[tuple[Any, ...]], list[int]]:
    with conn.cursor() as cur:
        cur.execute(f"SELECT * FROM `{db}`.`{table}`")
        names = [d[0] for d in cur.description]
        types = [d[1] for d in cur.description]
        rows = Counter(tuple(_normal(v, t) for v, t in zip(row, types, strict=True))
                       for row in cur.fetchall())
    return names, rows, types


def _compare(conn: Any, replica: Replica, db: str, where: str, log: list[str]) -> int:
    """Fail with the seed, checkpoint, table, first differing row and the last statement on that table."""
    with conn.cursor() as cur:
        cur.execute(f"SHOW FULL TABLES FROM `{db}` WHERE Table_type = 'BASE TABLE'")
        server_tables = sorted(r[0] for r in cur.fetchall())
    assert sorted(name for _, name in replica.tables(db)) == server_tables, f"{where}: table lists differ"
    total = 0
    for name in server_tables:
        names, server_rows, types = _server_table(conn, db, name)
        table = replica.table(db, name)
        last = next((s for s in reversed(log) if name in s), "<none>")
        assert table.columns == names, f"{where}: {name} columns {table.columns} != server {names}; last " \
                                       f"statement on it: {last}"
        mine = Counter(tuple(_normal(row[c], t) for c, t in zip(names, types, strict=True))
                       for row in table.rows())
        if mine != server_rows:
            missing = sorted(map(repr, (server_rows - mine).elements()))
            extra = sorted(map(repr, (mine - server_rows).elements()))
            pytest.fail(f"{where}: table {name} differs ({sum(mine.values())} replica rows, "
                        f"{sum(server_rows.values())} server rows).\n first row only on the server:  "
                        f"{missing[0] if missing else None}\n first row only in the replica: "
                        f"{extra[0] if extra else None}\n last statement on {name}: {last}")
        total += sum(server_rows.values())
    return total


def _run_unit(cur: Any, unit: list[Step], log: list[str], where: str) -> int:
    done = 0
    for step in unit:
        try:
            cur.execute(step.sql)
            done += 1
        except pymysql.MySQLError as err:
            code = err.args[0] if err.args else None
            if code not in step.tolerate:
                pytest.fail(f"{where}: the workload's statement failed: {err}\n statement: {step.sql}")
        log.append(step.sql)
    return done


def _decode(server: LocalServer, assembler: StatementAssembler, replica: Replica, where: str,
            seen: Counter[str] | None = None) -> int:
    files = server.flush_and_collect()
    before = replica.applied
    try:
        for event in iter_events(files):
            if seen is not None and isinstance(event, RowsEvent) and event.kind == "partial_update":
                seen["partial JSON rows events"] += 1
            replica.apply_all(assembler.feed(event))
    except ReplicaError as err:
        pytest.fail(f"{where}: {err}")
    return replica.applied - before


@pytest.mark.parametrize("seed", _SEED_LIST)
def test_replica_equals_server(server: LocalServer, fresh_db: str, seed: int) -> None:
    _round_trip(server, fresh_db, seed)


@pytest.mark.parametrize("seed", [101, 102])
def test_replica_equals_server_with_minimal_row_metadata(server: LocalServer, fresh_db: str,
                                                         seed: int) -> None:
    """``binlog_row_metadata=MINIMAL``: no column names nor signedness in TABLE_MAP; the tracked schema alone
    must type every value (unsigned, charsets, ENUM/SET labels) right."""
    server.execute("SET GLOBAL binlog_row_metadata = 'MINIMAL'")
    try:
        assert server.query("SELECT @@global.binlog_row_metadata") == [("MINIMAL",)]
        _round_trip(server, fresh_db, seed)
    finally:
        server.execute("SET GLOBAL binlog_row_metadata = 'FULL'")


def _round_trip(server: LocalServer, db: str, seed: int) -> None:
    workload = Workload(seed, json_partial=True)
    conn = server.connect(database=db)
    seen: Counter[str] = Counter()
    try:
        if server.family == "MySQL":
            # JSON_SET/JSON_REPLACE/JSON_REMOVE are then logged as diffs (under FULL and MINIMAL images alike)
            with conn.cursor() as cur:
                cur.execute("SET SESSION binlog_row_value_options = 'PARTIAL_JSON'")
        server.flush_and_collect()   # older files belong to earlier tests
        history = SchemaHistory(catalog_from_server(conn, databases=[db]))
        replica = Replica.from_catalog(history.catalog, databases=[db])
        assembler = StatementAssembler(history, AssemblerOptions(source=f"roundtrip:{seed}", image="full"))
        log: list[str] = []
        with conn.cursor() as cur:
            _run_unit(cur, [Step(s, ddl=True) for s in workload.setup()], log, f"seed {seed} setup")
            checkpoints = {STATEMENTS * i // 4 for i in range(1, 5)}   # three mid-way, one at the end
            executed = ddl = transactions = 0
            units = workload.units()
            while executed < STATEMENTS:
                unit = next(units)
                _run_unit(cur, unit, log, f"seed {seed}")
                executed += len(unit)
                ddl += sum(step.ddl for step in unit)
                transactions += unit[0].sql == "BEGIN"
                reached = [c for c in checkpoints if executed >= c]
                if reached:
                    checkpoints -= set(reached)
                    where = f"seed {seed} after {executed} statements (BINLOG_MODEL_SEED={seed} to rerun)"
                    applied = _decode(server, assembler, replica, where, seen)
                    assert applied > 0, where
                    rows = _compare(conn, replica, db, where, log)
                    assert rows > 0, f"{where}: the workload left every table empty"
        replica.apply_all(assembler.close())
        assert assembler.stats.incomplete_transactions == 0
        assert ddl >= 5 and transactions >= 50, (ddl, transactions)   # the mix really was exercised
        if server.family == "MySQL":
            assert seen["partial JSON rows events"] >= 5, seen
    finally:
        conn.close()


def test_workload_is_deterministic_per_seed() -> None:
    def first(seed: int, n: int = 300) -> list[str]:
        units = Workload(seed).units()
        return [step.sql for _ in range(n) for step in next(units)]

    assert Workload(7).setup() == Workload(7).setup()
    assert first(7) == first(7)
    assert first(7) != first(8)
    statements = first(7, 2000)
    for kind in ("INSERT INTO", "UPDATE t_", "DELETE FROM", "JOIN", "SET id = id", "ADD COLUMN", "BEGIN",
                 "ROLLBACK", "COMMIT"):
        assert any(kind in s for s in statements), kind
    assert any(s.startswith("REPLACE") for s in statements)
    plain = Workload(7, replace=False).units()
    assert not any(step.sql.startswith("REPLACE") for _ in range(2000) for step in next(plain))


def test_mixed_operations_in_one_statement_keep_row_order(server: LocalServer, fresh_db: str) -> None:
    conn = server.connect(database=fresh_db)
    try:
        server.flush_and_collect()
        history = SchemaHistory(catalog_from_server(conn, databases=[fresh_db]))
        replica = Replica.from_catalog(history.catalog, databases=[fresh_db])
        assembler = StatementAssembler(history, AssemblerOptions(image="full"))
        with conn.cursor() as cur:
            cur.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(5))")
            cur.execute("INSERT INTO t VALUES (1, 'x')")
            # UPDATE_ROWS (1), WRITE_ROWS (8), UPDATE_ROWS (8): one statement, one table, three row events.
            cur.execute("REPLACE INTO t (id, v) VALUES (1, 'y'), (8, 'a'), (8, 'b')")
            cur.execute("INSERT INTO t VALUES (2, 'p'), (3, 'q') ON DUPLICATE KEY UPDATE v = 'r'")
            cur.execute("INSERT INTO t VALUES (2, 'z'), (4, 'n') ON DUPLICATE KEY UPDATE v = VALUES(v)")
        for event in iter_events(server.flush_and_collect()):
            replica.apply_all(assembler.feed(event))
        replica.apply_all(assembler.close())
        assert _compare(conn, replica, fresh_db, "mixed operations", []) == 5
    finally:
        conn.close()
