"""MySQL 8/9 rows on a real MySQL 9.7: every column type (VECTOR too), the TABLE_MAP charset blocks, JSON
partial updates under FULL and MINIMAL, compressed transactions, INVISIBLE columns, a functional index, GIPK
tables and generated columns.

The acceptance test runs the workload, decodes its binlog with ``binlog-model events`` (exit 0), rebuilds
every table from the BinlogEvents (as an ETL consumer would: rows by primary key, JSON diffs applied to the
document it holds) and compares with ``SELECT`` of every column, invisible ones included.
"""

from __future__ import annotations

import datetime as dt
import secrets
import struct
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pymysql.constants import FIELD_TYPE

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.cli import main as cli_main
from binlog_model.io.files import iter_events
from binlog_model.io.snapshots import save_history
from binlog_model.messages import python_value
from binlog_model.resolve.json_diff import apply_json_diff_text
from binlog_model.sinks.delimited import iter_delimited
from binlog_model.testing.mysql import MySQLServer
from binlog_model.wire.column_types import ColumnType as T
from binlog_model.wire.rows import RowsEvent
from binlog_model.wire.table_map import TableMapEvent
from binlog_model.wire.values import Geometry
from schema_tracker.history import SchemaHistory
from schema_tracker.snapshot import catalog_from_server

_BINARY_TYPES = ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "vector")

# Every MySQL 9.7 column type: (column name, SQL type, a literal, another literal for UPDATE).
EVERY_TYPE: list[tuple[str, str, str, str]] = [
    ("ti", "TINYINT", "-128", "127"), ("tiu", "TINYINT UNSIGNED", "255", "0"),
    ("si", "SMALLINT", "-32768", "7"), ("mi", "MEDIUMINT UNSIGNED", "16777215", "1"),
    ("i", "INT", "-2147483648", "2147483647"), ("iu", "INT UNSIGNED", "4294967295", "3"),
    ("bi", "BIGINT", "-9223372036854775808", "9"), ("biu", "BIGINT UNSIGNED", "18446744073709551615", "1"),
    ("de", "DECIMAL(30,10)", "-12345678901234567890.0123456789", "0.0000000001"),
    ("fl", "FLOAT", "1.5", "-0.25"), ("do", "DOUBLE", "2.5e-300", "-1.0e300"),
    ("bt", "BIT(13)", "b'1010101010101'", "b'0'"), ("da", "DATE", "'2024-02-29'", "'1000-01-01'"),
    ("dt6", "DATETIME(6)", "'2024-02-29 23:59:59.999999'", "'1970-01-01 00:00:00'"),
    ("ts3", "TIMESTAMP(3) NULL", "'2038-01-19 03:14:07.499'", "'1970-01-01 00:00:01.000'"),
    ("tm2", "TIME(2)", "'-838:59:59.00'", "'12:34:56.78'"), ("yr", "YEAR", "2155", "1901"),
    ("ch", "CHAR(5)", "'äb'", "''"), ("vc", "VARCHAR(300)", "'日本語😀'", "'x'"),
    ("vcl", "VARCHAR(20) CHARACTER SET latin1", "'café'", "'é'"),
    ("bn", "BINARY(4)", "x'00ff'", "x'01020304'"), ("vb", "VARBINARY(10)", "x'00'", "x''"),
    ("tt", "TINYTEXT", "'tiny'", "'t'"), ("tx", "TEXT", "'text ✓'", "''"),
    ("mt", "MEDIUMTEXT", "'medium'", "'m'"), ("lt", "LONGTEXT", "'long'", "'l'"),
    ("tb", "TINYBLOB", "x'01'", "x''"), ("bl", "BLOB", "x'0203'", "x'ff'"),
    ("mb", "MEDIUMBLOB", "x'04'", "x'05'"), ("lb", "LONGBLOB", "x'06'", "x'07'"),
    ("en", "ENUM('a','b','ç')", "'ç'", "'a'"), ("st", "SET('x','y','z')", "'x,z'", "''"),
    ("js", "JSON", """'{"k": [1, 2.5, "ü"], "n": null}'""", "'[]'"),
    ("ge", "GEOMETRY", "ST_GeomFromText('POINT(1 2)')", "ST_GeomFromText('LINESTRING(0 0,1 1)', 4326)"),
    ("pt", "POINT", "ST_GeomFromText('POINT(3 4)')", "ST_GeomFromText('POINT(-1 -2)')"),
    ("pg", "POLYGON", "ST_GeomFromText('POLYGON((0 0,1 0,1 1,0 0))')",
     "ST_GeomFromText('POLYGON((0 0,2 0,2 2,0 0))')"),
    ("vec", "VECTOR(3)", "TO_VECTOR('[1.5, -2, 0.25]')", "TO_VECTOR('[0, 0, 1e10]')"),
]


def _server_rows(conn: Any, db: str, table: str) -> tuple[list[str], dict[tuple[Any, ...], tuple[Any, ...]],
                                                         list[str]]:
    """Every stored column (invisible ones too, in table order) of every row, keyed by the primary key."""
    with conn.cursor() as cur:
        cur.execute("SELECT COLUMN_NAME, EXTRA, COLUMN_KEY, DATA_TYPE FROM information_schema.COLUMNS "
                    "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION", (db, table))
        meta = cur.fetchall()
        names = [m[0] for m in meta]
        invisible = [m[0] for m in meta if "INVISIBLE" in m[1].upper()]
        key = [m[0] for m in meta if m[2] == "PRI"]
        vectors = {m[0] for m in meta if m[3] == "vector"}
        # pymysql would decode a VECTOR's bytes as text: fetch it as hex.
        cur.execute(f"SELECT {', '.join(f'HEX(`{n}`)' if n in vectors else f'`{n}`' for n in names)} "
                    f"FROM `{db}`.`{table}`")
        types = [242 if n in vectors else d[1] for n, d in zip(names, cur.description, strict=True)]
        rows = {}
        for row in cur.fetchall():
            values = tuple(_normal_server(v, t) for v, t in zip(row, types, strict=True))
            rows[tuple(values[names.index(k)] for k in key)] = values
    return names, rows, invisible


def _normal_server(value: Any, type_code: int) -> Any:
    if value is None:
        return None
    if type_code == FIELD_TYPE.BIT:
        return int.from_bytes(value, "big")
    if type_code == FIELD_TYPE.GEOMETRY:
        return ("geometry", int.from_bytes(value[:4], "little"), bytes(value[4:]))
    if type_code == 242:   # VECTOR (as hex): little-endian float32s
        raw = bytes.fromhex(value)
        return ("vector", struct.unpack(f"<{len(raw) // 4}f", raw))
    if type_code == FIELD_TYPE.FLOAT:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    if isinstance(value, set):
        return ",".join(sorted(value))
    if isinstance(value, Decimal):
        return value.normalize()
    return value


def _normal_model(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, Geometry):
        return ("geometry", value.srid, value.wkb)
    if isinstance(value, tuple) and value and all(isinstance(v, float) for v in value):
        return ("vector", value)
    if isinstance(value, tuple):   # SET labels
        return ",".join(sorted(value))
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC).replace(tzinfo=None)
    if isinstance(value, Decimal):
        return value.normalize()
    return value


class Rebuilt:
    """Tables rebuilt from BinlogEvents as an ETL consumer keeps them: rows by primary key."""

    def __init__(self, db: str) -> None:
        self.db = db
        self.tables: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {}
        self.invisible: dict[str, set[str]] = {}

    def apply(self, event: pb.BinlogEvent) -> None:
        if event.db != self.db or event.operation == pb.BinlogEvent.SCHEMA:
            return
        table = self.tables.setdefault(event.table, {})
        marks = self.invisible.setdefault(event.table, set())
        for row in event.rows:
            key = tuple(python_value(c.value) for c in row.primary_key)
            if event.operation == pb.BinlogEvent.DELETE:
                del table[key]
                continue
            current = dict(table.pop(key, {})) if event.operation == pb.BinlogEvent.UPDATE else {}
            for column in row.after:
                if column.invisible:
                    marks.add(column.name)
                if column.value.WhichOneof("kind") == "json_diff":
                    current[column.name] = apply_json_diff_text(current[column.name],
                                                                column.value.json_diff.operations)
                else:
                    current[column.name] = python_value(column.value)
            new_key = tuple(current[c.name] for c in row.primary_key)
            assert new_key not in table, f"{event.table}: duplicate key {new_key}"
            table[new_key] = current


def _workload(db: str) -> list[str]:
    cols = ", ".join(f"`{n}` {sql}" for n, sql, _a, _b in EVERY_TYPE)
    first = ", ".join(a for _n, _s, a, _b in EVERY_TYPE)
    second = ", ".join(f"`{n}` = {b}" for n, _s, _a, b in EVERY_TYPE)
    nulls = ", ".join("NULL" for _ in EVERY_TYPE)
    return [
        f"CREATE DATABASE `{db}` CHARACTER SET utf8mb4",
        f"USE `{db}`",
        f"CREATE TABLE every_type (id INT PRIMARY KEY, {cols})",
        f"INSERT INTO every_type VALUES (1, {first}), (2, {nulls})",
        f"UPDATE every_type SET {second} WHERE id = 1",
        f"UPDATE every_type SET id = 3, {second} WHERE id = 2",
        f"INSERT INTO every_type VALUES (4, {first})",
        "DELETE FROM every_type WHERE id = 4",
        # generated columns (stored and virtual), an INVISIBLE column, a functional index
        "CREATE TABLE gen (id INT PRIMARY KEY, a INT, b INT, s INT AS (a + b) STORED, "
        "v INT AS (a * b) VIRTUAL, h VARCHAR(10) INVISIBLE DEFAULT 'hid', INDEX fx ((a * 2 + b)))",
        "INSERT INTO gen (id, a, b) VALUES (1, 2, 3), (2, 4, 5)",
        "INSERT INTO gen (id, a, b, h) VALUES (3, 6, 7, 'seen')",
        "UPDATE gen SET a = a + 10, h = 'upd' WHERE id < 3",
        "DELETE FROM gen WHERE id = 2",
        "ALTER TABLE gen ADD COLUMN late INT INVISIBLE AFTER a, ADD INDEX fy ((b - a))",
        "UPDATE gen SET late = 42 WHERE id = 1",
        # generated invisible primary keys
        "SET SESSION sql_generate_invisible_primary_key = ON",
        "CREATE TABLE gipk (a INT, b VARCHAR(10), c JSON)",
        "SET SESSION sql_generate_invisible_primary_key = OFF",
        """INSERT INTO gipk (a, b, c) VALUES (1, 'x', '{"p": 1}'), (2, 'y', '{"p": 2}'), (3, 'z', NULL)""",
        "UPDATE gipk SET b = 'yy' WHERE a = 2",
        "DELETE FROM gipk WHERE a = 1",
        # JSON partial updates under FULL, then MINIMAL
        "SET SESSION binlog_row_value_options = 'PARTIAL_JSON'",
        """UPDATE every_type SET js = JSON_SET(js, '$.k[1]', 'two', '$.new', JSON_OBJECT('d', 1.25))""",
        "UPDATE gipk SET c = JSON_SET(c, '$.q', 'ü') WHERE a = 2",
        "SET SESSION binlog_row_image = 'MINIMAL'",
        """UPDATE every_type SET js = JSON_REMOVE(js, '$.k[0]'), js = JSON_SET(js, '$.n', 3)""",
        "UPDATE gipk SET c = JSON_REPLACE(c, '$.p', CAST('2.50' AS DECIMAL(4,2))) WHERE a = 2",
        "UPDATE gen SET b = b + 1 WHERE id = 1",
        "SET SESSION binlog_row_image = 'FULL'",
        # compressed transactions (zstd TRANSACTION_PAYLOAD)
        "SET SESSION binlog_transaction_compression = ON",
        "BEGIN",
        f"INSERT INTO every_type VALUES (5, {first})",
        "UPDATE every_type SET js = JSON_SET(js, '$.z', TRUE) WHERE id = 5",
        "INSERT INTO gipk (a, b) VALUES (7, 'compressed')",
        "UPDATE gen SET a = 0 WHERE id = 3",
        "COMMIT",
        "SET SESSION binlog_transaction_compression = OFF",
    ]


@pytest.fixture
def workload_db(mysql: MySQLServer) -> Iterator[str]:
    name = f"acc_{secrets.token_hex(3)}"
    try:
        yield name
    finally:
        if mysql.running:
            mysql.execute(f"DROP DATABASE IF EXISTS `{name}`")


def test_acceptance_every_feature_rebuilds_to_select(mysql: MySQLServer, workload_db: str,
                                                     tmp_path: Path) -> None:
    db = workload_db
    mysql.flush_and_collect()   # older files belong to earlier tests
    conn = mysql.connect()
    try:
        save_history(SchemaHistory(catalog_from_server(conn, databases=[db])), tmp_path / "history.json")
        with conn.cursor() as cur:
            for statement in _workload(db):
                cur.execute(statement)
        files = mysql.flush_and_collect(tmp_path / "binlogs")
        out = tmp_path / "events.pb"
        status = cli_main(["events", "--image", "full", "--snapshot", str(tmp_path / "history.json"),
                           "--format", "proto", "--out", str(out), *map(str, files)])
        assert status == 0
        rebuilt = Rebuilt(db)
        with out.open("rb") as fh:
            for event in iter_delimited(fh):
                rebuilt.apply(event)
        # The workload did reach every path it is meant to prove.
        kinds = set()
        for event in iter_events(files):
            kinds.add(type(event).__name__)
            if isinstance(event, RowsEvent) and event.kind == "partial_update":
                kinds.add("partial")
            if event.header.inner_index is not None:
                kinds.add("compressed")
        assert {"partial", "compressed", "TransactionPayloadEvent"} <= kinds, kinds
        for table in ("every_type", "gen", "gipk"):
            names, server, invisible = _server_rows(conn, db, table)
            mine = {key: tuple(_normal_model(row.get(n)) for n in names)
                    for key, row in rebuilt.tables[table].items()}
            mine = {tuple(_normal_model(k) for k in key): values for key, values in mine.items()}
            assert mine == server, table
            assert rebuilt.invisible[table] == set(invisible), table
        assert set(rebuilt.tables) == {"every_type", "gen", "gipk"}
        assert rebuilt.invisible["gipk"] == {"my_row_id"}
        assert {"h", "late"} <= rebuilt.invisible["gen"]
    finally:
        conn.close()


# --- TABLE_MAP on every type -------------------------------------------------------------------------------

def test_table_map_charset_blocks_and_vector_dimensions_on_every_type(mysql: MySQLServer,
                                                                      mysql_db: str) -> None:
    """MySQL counts CHAR/VARCHAR/BINARY/TEXT/BLOB and VECTOR in its charset blocks, not GEOMETRY, JSON or
    ENUM/SET (these have their own): with every type in one table, one table whose character columns share
    the default collation (DEFAULT_CHARSET block) and one that mixes them (COLUMN_CHARSET block), each
    column's collation id must be the one information_schema names, and VECTOR(n) must carry n."""
    mysql.flush_and_collect()
    conn = mysql.connect(database=mysql_db)
    cols = ", ".join(f"`{n}` {sql}" for n, sql, _a, _b in EVERY_TYPE)
    same = ", ".join(f"`{n}` {sql.replace(' CHARACTER SET latin1', '')}" for n, sql, _a, _b in EVERY_TYPE)
    try:
        with conn.cursor() as cur:
            cur.execute(f"CREATE TABLE mixed (id INT PRIMARY KEY, {cols})")
            cur.execute(f"CREATE TABLE same (id INT PRIMARY KEY, {same}, v2 VECTOR(2048))")
            first = ", ".join(a for _n, _s, a, _b in EVERY_TYPE)
            cur.execute(f"INSERT INTO mixed VALUES (1, {first})")
            cur.execute(f"INSERT INTO same VALUES (1, {first}, NULL)")
            expected: dict[str, dict[str, int | None]] = {}
            for table in ("mixed", "same"):
                cur.execute("SELECT c.COLUMN_NAME, c.DATA_TYPE, co.ID FROM information_schema.COLUMNS c "
                            "LEFT JOIN information_schema.COLLATIONS co USING (COLLATION_NAME) "
                            "WHERE c.TABLE_SCHEMA = %s AND c.TABLE_NAME = %s", (mysql_db, table))
                expected[table] = {}
                for name, data_type, coll in cur.fetchall():
                    if data_type in _BINARY_TYPES:
                        coll = 63
                    elif data_type in ("enum", "set"):
                        coll = None   # in the ENUM_AND_SET blocks
                    expected[table][name] = coll
    finally:
        conn.close()
    maps = {e.table: e for e in iter_events(mysql.flush_and_collect())
            if isinstance(e, TableMapEvent) and e.schema == mysql_db}
    for table, tm in maps.items():
        assert tm.column_names is not None and tm.charsets is not None
        got = dict(zip(tm.column_names, tm.charsets, strict=True))
        assert got == expected[table], table
        dims = {n: d for n, d, t in zip(tm.column_names, tm.vector_dimensions or (), tm.column_types,
                                        strict=False) if t == T.VECTOR}
        assert dims == ({"vec": 3, "v2": 2048} if table == "same" else {"vec": 3})
        assert tm.enum_set_charsets is not None
        assert tm.enum_set_charsets[tm.column_names.index("en")] is not None


# --- --lenient-ddl does what its help says ------------------------------------------------------------------

def test_lenient_ddl_rows_of_a_skipped_table_fail_loudly_as_the_help_says(
        mysql: MySQLServer, workload_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``CREATE TABLE t_like LIKE pre`` names a table the tracker cannot know (``pre`` predates the binlog
    and no snapshot is given): strict mode stops at the DDL; lenient mode skips it, and the rows of
    ``t_like`` then fail loudly with UncertainSchemaError (as ``--help`` says), although FULL metadata
    could describe them. A table that was simply never seen (``pre``) still resolves from that metadata."""
    db = workload_db
    conn = mysql.connect()
    try:
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE `{db}`")
            cur.execute(f"CREATE TABLE `{db}`.pre (id INT PRIMARY KEY, a INT)")
            mysql.flush_and_collect()
            cur.execute(f"INSERT INTO `{db}`.pre VALUES (1, 1)")
            cur.execute(f"CREATE TABLE `{db}`.t_like LIKE `{db}`.pre")
            cur.execute(f"INSERT INTO `{db}`.t_like VALUES (1, 2)")
        files = [str(f) for f in mysql.flush_and_collect(tmp_path)]
    finally:
        conn.close()
    assert cli_main(["events", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "rows then fail loudly (UncertainSchemaError), never resolved from TABLE_MAP metadata" in help_text

    assert cli_main(["events", *files]) == 2
    assert "SchemaError: table is not known" in capsys.readouterr().err
    out = tmp_path / "lenient.jsonl"
    assert cli_main(["events", "--lenient-ddl", "--out", str(out), *files]) == 2
    err = capsys.readouterr().err
    assert "UncertainSchemaError" in err and f"table {db}.t_like" in err
    emitted = [line for line in out.read_text().splitlines() if f'"db":"{db}"' in line]
    assert any('"table":"pre","operation":"INSERT"' in line for line in emitted)   # from FULL metadata
    assert any('"skippedStatement"' in line for line in emitted)
    assert not any('"table":"t_like","operation":"INSERT"' in line for line in emitted)
