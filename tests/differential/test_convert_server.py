"""Differential test on real servers (MariaDB, MySQL 9): binlog row values → to_value must equal SELECT.

A table with one column of (almost) every type gets rows of edge values (type limits, NULLs, zero and
invalid dates, ENUM's empty value, BINARY padding...). The binlog is decoded by the wire layer, each
column's TABLE_MAP type is checked against the schema snapshot (``binlog_type_matches``) and each value
is converted with ``make_converter``. The server renders the same cells as text in SQL (``CAST``, ``HEX``,
``UNIX_TIMESTAMP``); the test renders our ``Value`` the same way and requires every cell to be equal.
"""

from __future__ import annotations

from typing import Any

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.io.files import iter_events
from binlog_model.resolve.convert import make_converter
from binlog_model.resolve.types import binlog_type_mismatch
from binlog_model.testing.localserver import LocalServer
from binlog_model.wire.rows import RowsEvent
from schema_tracker.snapshot import catalog_from_server

CREATE = """
CREATE TABLE t (
  id int unsigned NOT NULL PRIMARY KEY,
  i8 tinyint, u8 tinyint unsigned, u16 smallint unsigned, u24 mediumint unsigned, i32 int,
  u32 int unsigned, i64 bigint, u64 bigint unsigned,
  d decimal(65,30), d2 decimal(10,2) unsigned, f float, dbl double, b64 bit(64), b3 bit(3), y year,
  dt date, dtm datetime(6), ts timestamp(6) NULL DEFAULT NULL, tm time(6), tm0 time,
  s varchar(20) CHARACTER SET utf8mb4, l1 varchar(20) CHARACTER SET latin1, ch char(5),
  cyr text CHARACTER SET cp1251, tx mediumtext, bn binary(4), vb varbinary(10), bl blob,
  e enum('RUB','UAH','USD'), st set('a','b','c','d'), j json, g geometry, u uuid
) DEFAULT CHARSET=utf8mb4
"""

ROWS = [
    # Type limits.
    "INSERT INTO t VALUES (1, -128, 255, 65535, 16777215, -2147483648, 4294967295, -9223372036854775808,"
    " 18446744073709551615,"
    " '-99999999999999999999999999999999999.999999999999999999999999999999', 99999999.99, 1.5, -2.5e300,"
    " b'1111111111111111111111111111111111111111111111111111111111111111', b'101', 2155,"
    " '9999-12-31', '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07.999999', '-838:59:59.000000',"
    " '838:59:59', '😀 é', 'é€', 'ab', 'Привет', REPEAT('x', 300), 'ab', x'00ff00', x'DEADBEEF00',"
    " 'USD', 'a,d', '{\"k\": [1, \"ё\"]}', ST_GeomFromText('POINT(1 2)', 4326),"
    " '123e4567-e89b-12d3-a456-426655440000')",
    # SQL NULL in every nullable column.
    "INSERT INTO t (id) VALUES (2)",
    # Zero, empty and invalid values (sql_mode is relaxed for this session).
    "INSERT INTO t VALUES (3, 0, 0, 0, 0, 0, 0, 0, 0, '0.000000000000000000000000000001', 0, -0.25, 0,"
    " b'0', b'0', 1901, '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '-00:00:00.5',"
    " '00:00:00', '', '', '', '', '', x'00000000', '', '', 'bogus', '', 'null',"
    " ST_GeomFromText('LINESTRING(0 0, 1 1)'), NULL)",
    "INSERT INTO t (id, dt, dtm, bn, e) VALUES (4, '2020-02-30', '2020-00-10 01:02:03.000004', x'61', 1)",
]


_UUID_VALUES = (", '123e4567-e89b-12d3-a456-426655440000')", ", NULL)")


def _workload(server: LocalServer) -> list[str]:
    """CREATE and ROWS for ``server``: MySQL has no UUID type, so its table goes without that last column."""
    if server.family == "MariaDB":
        return [CREATE, *ROWS]
    create = CREATE.replace(", u uuid", "")
    rows = [next((row[: -len(tail)] + ")" for tail in _UUID_VALUES if row.endswith(tail)), row)
            if row.startswith("INSERT INTO t VALUES") else row for row in ROWS]
    assert create != CREATE and sum(a != b for a, b in zip(rows, ROWS, strict=True)) == 2
    return [create, *rows]


def _sql_text(column: Any) -> str:
    """A SQL expression rendering a column the way ``_render`` renders our Value."""
    name, t = f"`{column.name}`", column.data_type
    if t in ("tinyint", "smallint", "mediumint", "int", "bigint", "decimal", "date", "datetime", "time",
             "set"):
        return f"CAST({name} AS CHAR)"
    if t in ("bit", "year"):
        return f"CAST({name} + 0 AS CHAR)"
    if t in ("float", "double"):
        return f"CAST({name} AS DOUBLE)"
    if t == "timestamp":
        return f"CAST(UNIX_TIMESTAMP({name}) AS CHAR)"
    if t in ("char", "varchar", "text", "mediumtext", "enum", "json", "longtext"):
        return f"HEX(CONVERT({name} USING utf8mb4))"
    return f"HEX({name})"


def _render(value: pb.Value, column: Any) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "null_value":
        return None
    if kind in ("int_value", "long_value", "uint64_value", "bit_value"):
        return str(getattr(value, kind))
    if kind == "decimal_value":
        return value.decimal_value
    if kind in ("float_value", "double_value"):
        return getattr(value, kind)
    if kind == "date_value":
        d = value.date_value
        return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"
    if kind == "datetime_value":
        t = value.datetime_value
        return (f"{t.year:04d}-{t.month:02d}-{t.day:02d} {t.hour:02d}:{t.minute:02d}:{t.second:02d}"
                + (f".{t.micros:06d}" if column.fsp else ""))
    if kind == "timestamp_micros":
        secs, micros = divmod(value.timestamp_micros, 1_000_000)
        return f"{secs}.{micros:06d}" if column.fsp else str(secs)
    if kind == "time_micros":
        sign = "-" if value.time_micros < 0 else ""
        secs, micros = divmod(abs(value.time_micros), 1_000_000)
        text = f"{sign}{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}"
        return text + (f".{micros:06d}" if column.fsp else "")
    if kind in ("string_value", "json_value"):
        return getattr(value, kind).encode("utf-8").hex().upper()
    if kind == "bytes_value":
        return value.bytes_value.hex().upper()
    if kind == "geometry_value":
        g = value.geometry_value
        return (g.srid.to_bytes(4, "little") + g.wkb).hex().upper()
    if kind == "set_value":
        return ",".join(value.set_value.labels)
    raise AssertionError(f"unexpected kind {kind} for column {column.name}: {value}")


def test_binlog_values_equal_select(server: LocalServer, fresh_db: str) -> None:
    session = ["SET SESSION sql_mode = 'ALLOW_INVALID_DATES'", "SET SESSION time_zone = '+00:00'"]
    create, *rows = _workload(server)
    server.execute([create, *session, *rows], database=fresh_db)
    files = server.flush_and_collect()
    conn = server.connect(fresh_db)
    try:
        catalog = catalog_from_server(conn, databases=[fresh_db])
    finally:
        conn.close()
    table = catalog.table(fresh_db, "t")
    assert table is not None
    columns = table.columns

    decoded: list[tuple[Any, ...]] = []
    checked_table_map = False
    for event in iter_events(files):
        if isinstance(event, RowsEvent) and event.table_map.schema == fresh_db:
            tm = event.table_map
            if not checked_table_map:
                problems = [binlog_type_mismatch(code, meta, column)
                            for code, meta, column in zip(tm.column_types, tm.column_metas, columns,
                                                          strict=True)]
                assert [p for p in problems if p] == []
                checked_table_map = True
            decoded.extend(event.rows)
    assert len(decoded) == len(ROWS)

    converters = [make_converter(c) for c in columns]
    ours = [[_render(conv(raw), col) for conv, raw, col in zip(converters, row, columns, strict=True)]
            for row in decoded]
    select = ", ".join(_sql_text(c) for c in columns)
    theirs = [list(r) for r in server.query(f"SELECT {select} FROM t ORDER BY id", database=fresh_db)]
    for row_ours, row_theirs in zip(ours, theirs, strict=True):
        diffs = {c.name: (a, b) for c, a, b in zip(columns, row_ours, row_theirs, strict=True) if a != b}
        assert diffs == {}, f"row id={row_theirs[0]}"
