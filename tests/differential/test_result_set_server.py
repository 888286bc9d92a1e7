"""``apply --initial live``'s snapshot read against real servers (MariaDB 10.11, MariaDB 11.8, MySQL 9.7):
a table of every column kind, edge values included, read by ``io.result_set.read_result_columns`` and typed
by ``_arrow_column`` (or pymysql's values where it hands a column back) gives exactly the replica batch
that pymysql's own rows give through the per-value rules; in chunks of any size, a row larger than one
16 MiB packet included, and the connection is pymysql's again afterwards.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from pymysql.cursors import SSCursor

from binlog_model.io.result_set import read_result_columns
from binlog_model.replica.initial import _selected, _typed_batch, result_columns
from binlog_model.replica.layout import TableLayout
from binlog_model.testing.localserver import LocalServer
from schema_tracker.snapshot import catalog_from_server

AT = "binlog.000001:4"

COLUMNS = ("id INT PRIMARY KEY, ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, mi MEDIUMINT, bi BIGINT, "
           "ub BIGINT UNSIGNED, bo TINYINT(1), d DECIMAL(10,2), dz DECIMAL(30,0), dw DECIMAL(65,30), "
           "f FLOAT, db DOUBLE, y YEAR, da DATE, dt DATETIME, dt6 DATETIME(6), ts TIMESTAMP(3) NULL, "
           "tm TIME(2), s VARCHAR(20), c CHAR(5), lt LONGTEXT, l1 VARCHAR(10) CHARACTER SET latin1, "
           "b VARBINARY(10), bn BINARY(4), bl BLOB, e ENUM('a','b'), st SET('x','y'), bt BIT(10), j JSON, "
           "p POINT")
ROWS = [
    "(1, -128, 255, -32768, -8388608, -9223372036854775808, 18446744073709551615, 1, -12345678.90, "
    " 123456789012345678901234567890, 0.000000000000000000000000000001, 3.40282e38, 1.7976931348623157e308, "
    " 2155, '1000-01-01', '9999-12-31 23:59:59', '2024-02-29 10:11:12.123456', '2038-01-19 03:14:07.999', "
    " '-838:59:59.99', 'é✓😀', 'ab', REPEAT('x', 70000), 'ÿ', x'00FBFCFF', x'01', x'FE', 'b', 'x,y', "
    " b'1010101010', '{\"a\": [1, 2.5, null]}', ST_GeomFromText('POINT(1 2)'))",
    f"(2{', NULL' * 30})",
    "(3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1.5e-45, 5e-324, 0, '0000-00-00', '0000-00-00 00:00:00', "
    " '2024-02-30 00:00:00', '1970-01-01 00:00:01', '00:00:00', '', '', '', '', '', x'', '', '', '', "
    " b'0', '[]', ST_GeomFromText('POINT(0 0)'))",
    *(f"({n}, {n % 100}, 1, {n}, {n}, {n * 1000003}, {n}, 0, {n}.5, {n}, 1.5, {n}.25, {n}.125, 2000, "
      f"'2024-01-02', '2024-01-02 03:04:05', '2024-01-02 03:04:05.000001', '2024-01-02 03:04:05.5', "
      f"'12:00:00', 'v{n}', 'c', 't', 'l', x'0A', x'0B', x'0C', 'a', 'y', b'1', '{{}}', "
      f"ST_GeomFromText('POINT({n} 1)'))" for n in range(4, 40)),
]


def _table(server: LocalServer, db: str, name: str, columns: str, rows: list[str]) -> TableLayout:
    server.execute([f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}"])
    conn = server.connect(db)
    try:
        cur = conn.cursor()
        cur.execute("SET SESSION sql_mode = ''")        # zero and invalid dates, as old data has them
        cur.execute(f"CREATE TABLE {name} ({columns})")
        for row in rows:
            cur.execute(f"INSERT INTO {name} VALUES {row}")
        conn.commit()
        table = catalog_from_server(conn).table(db, name)
    finally:
        conn.close()
    assert table is not None
    return TableLayout.of(table)


def _select(layout: TableLayout, db: str, name: str, where: str = "") -> str:
    return f"SELECT {', '.join(_selected(c) for c in layout.columns)} FROM {db}.{name} {where} ORDER BY id"


def _by_pymysql(server: LocalServer, layout: TableLayout, sql: str) -> pa.Table:
    conn = server.connect(charset="utf8mb4")
    try:
        cur = conn.cursor(SSCursor)
        cur.execute("SET SESSION time_zone = '+00:00'")
        cur.execute(sql)
        rows = cur.fetchall()
    finally:
        conn.close()
    raw: list[Any] = [list(c) for c in zip(*rows, strict=True)]
    return _typed_batch(layout, raw, len(rows), AT, {})


def _by_columns(server: LocalServer, layout: TableLayout, sql: str, chunk: int) -> tuple[pa.Table, set[str]]:
    """The batches read as columns, and the columns Arrow typed (the others went value by value)."""
    conn = server.connect(charset="utf8mb4")
    parts: list[pa.Table] = []
    arrow_typed: set[str] = set()
    try:
        cur = conn.cursor()
        cur.execute("SET SESSION time_zone = '+00:00'")
        for part in read_result_columns(conn, sql, chunk, "test"):
            raw = result_columns(layout, part)
            arrow_typed |= {c.name for c, values in zip(layout.columns, raw, strict=True)
                            if isinstance(values, pa.Array)}
            parts.append(_typed_batch(layout, raw, len(part), AT, {}))
        cur.execute("SELECT 1")     # the connection is pymysql's again
        assert cur.fetchall() == ((1,),)
    finally:
        conn.close()
    return pa.concat_tables(parts), arrow_typed


@pytest.mark.parametrize("chunk", [1, 50_000])
def test_columns_read_off_the_wire_equal_pymysql_rows(server: LocalServer, chunk: int) -> None:
    db = "result_set_types"
    layout = _table(server, db, "t", COLUMNS, ROWS)
    for where in ("", "WHERE id >= 4"):        # with and without the zero dates
        sql = _select(layout, db, "t", where)
        expected = _by_pymysql(server, layout, sql)
        got, arrow_typed = _by_columns(server, layout, sql, chunk)
        assert got.num_rows == expected.num_rows == (len(ROWS) if not where else len(ROWS) - 3)
        for name in expected.column_names:
            assert got.column(name).to_pylist() == expected.column(name).to_pylist(), name
        assert got.equals(expected)
        # The fast path really ran: the plain columns were typed by Arrow, the date columns too where no
        # zero date is in the chunk (Arrow refuses one, and the per-value rules list it as invalid).
        assert {"id", "ti", "ub", "bi", "d", "dz", "f", "db", "s", "lt", "l1", "b", "bn", "bl", "e",
                "ts"} <= arrow_typed
        if where:
            assert {"da", "dt", "dt6"} <= arrow_typed
        else:
            invalid = dict(zip(got.column("id").to_pylist(), got.column("binlog_invalid").to_pylist(),
                               strict=True))
            assert {"da", "dt", "dt6"} <= set(invalid[3])


def test_a_row_larger_than_one_packet_and_an_empty_table(server: LocalServer) -> None:
    db = "result_set_big"
    size = (1 << 24) + 1000        # the row's packet continues past 16 MiB
    server.execute(f"SET GLOBAL max_allowed_packet = {64 << 20}")
    layout = _table(server, db, "t", "id INT PRIMARY KEY, lb LONGBLOB, s VARCHAR(5)",
                    [f"(1, REPEAT('z', {size}), 'a')", "(2, x'01', NULL)"])
    sql = _select(layout, db, "t")
    got, _ = _by_columns(server, layout, sql, 1)        # a chunk per row: two chunks
    assert got.column("lb").to_pylist() == [b"z" * size, b"\x01"]
    assert got.column("s").to_pylist() == ["a", None]
    server.execute(f"CREATE TABLE {db}.empty (id INT PRIMARY KEY)")
    conn = server.connect(charset="utf8mb4")
    try:
        assert list(read_result_columns(conn, f"SELECT id FROM {db}.empty", 10, "test")) == []
        with pytest.raises(Exception, match="doesn't exist"):
            list(read_result_columns(conn, f"SELECT id FROM {db}.missing", 10, "test"))
    finally:
        conn.close()

