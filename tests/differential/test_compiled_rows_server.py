"""The compiled row builder against the Python reference on binlogs a live server writes (MariaDB, MySQL 9).

The all-types table of ``test_convert_server`` (edge values, NULLs, zero and invalid dates, JSON, GEOMETRY,
latin1 text...), then UPDATEs and DELETEs under each ``binlog_row_image`` (FULL, MINIMAL, NOBLOB), resolved
with the compiled core and without it in every image mode: the serialized BinlogEvents must be the same
bytes, and the C builder must have built rows (``tests/golden/test_compiled_rows.py`` has the machinery).
MariaDB's compressed rows events (``log_bin_compress``), which no stored binlog holds, are made here too.
"""

from __future__ import annotations

import pytest

from binlog_model.compiled import speedups
from binlog_model.io.files import iter_events
from binlog_model.testing.localserver import LocalServer
from binlog_model.testing.mariadb import MariaDBServer
from binlog_model.wire.rows import RowsEvent
from schema_tracker.snapshot import catalog_from_server
from tests.differential.test_convert_server import _workload
from tests.golden.test_compiled_rows import _compare

pytestmark = pytest.mark.skipif(speedups is None,
                                reason="the compiled core is not built (or is switched off)")

# cp1251 has no C decoder (its table would resolve in Python): ascii instead, so C builds this table.
_CHANGES = [
    "UPDATE t SET s = 'changed', i32 = 7, d2 = d2 WHERE id IN (1, 3)",
    "SET SESSION binlog_row_image = 'MINIMAL'",
    "UPDATE t SET u8 = 7, f = -0.0 WHERE id = 1",
    "DELETE FROM t WHERE id = 4",
    "SET SESSION binlog_row_image = 'NOBLOB'",
    "UPDATE t SET tx = 'noblob', y = 2001 WHERE id = 3",
    "DELETE FROM t WHERE id = 2",
]


def test_live_binlog_resolves_the_same_compiled(server: LocalServer, fresh_db: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    conn = server.connect(fresh_db)
    try:
        catalog = catalog_from_server(conn, databases=[fresh_db])    # before the table: its DDL is replayed
    finally:
        conn.close()
    create, *rows = _workload(server)
    create = create.replace("cyr text CHARACTER SET cp1251", "cyr text CHARACTER SET ascii")
    session = ["SET SESSION sql_mode = 'ALLOW_INVALID_DATES'", "SET SESSION time_zone = '+00:00'"]
    server.execute([create, *session, *rows, *_CHANGES], database=fresh_db)
    files = server.flush_and_collect()
    for image in ("changed", "changed_with_old", "full", "after"):
        checker = _compare(files, monkeypatch, snapshot=catalog, image=image, lenient_ddl=True)
        assert (fresh_db, "t") in checker.tables    # C built this table's rows (not a Python fallback)


def test_mariadb_compressed_rows_resolve_the_same_compiled(mariadb: MariaDBServer, mariadb_db: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """MariaDB's compressed rows events (log_bin_compress): C reads the inflated images."""
    conn = mariadb.connect(mariadb_db)
    try:
        catalog = catalog_from_server(conn, databases=[mariadb_db])
    finally:
        conn.close()
    mariadb.execute(["SET GLOBAL log_bin_compress = ON", "SET GLOBAL log_bin_compress_min_len = 10"])
    try:
        mariadb.execute([
            "CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(200), l TEXT CHARACTER SET latin1, "
            "d DECIMAL(9,3))",
            "INSERT INTO t VALUES " + ", ".join(f"({i}, REPEAT('é{i}', 20), REPEAT('x', {i}), {i}.5)"
                                                for i in range(1, 40)),
            "UPDATE t SET s = CONCAT(s, '!') WHERE id < 20",
            "DELETE FROM t WHERE id > 30",
        ], database=mariadb_db)
    finally:
        mariadb.execute(["SET GLOBAL log_bin_compress = OFF", "SET GLOBAL log_bin_compress_min_len = 256"])
    files = mariadb.flush_and_collect()
    compressed = [e for e in iter_events(files) if isinstance(e, RowsEvent) and e.compressed
                  and e.table_map.schema == mariadb_db]
    assert {e.kind for e in compressed} == {"insert", "update", "delete"}
    for image in ("changed", "full"):
        checker = _compare(files, monkeypatch, snapshot=catalog, image=image, lenient_ddl=True)
        assert (mariadb_db, "t") in checker.tables
