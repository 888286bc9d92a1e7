"""Differential test against real servers (MariaDB and MySQL 9): every column type, edge values, three
row images.

The server writes the binlog; we decode it and compare each present value with what SELECT returns for
the same row (after the obvious normalisation: text columns decoded with their charset, ENUM/SET/BIT read
back as numbers with ``+0``, GEOMETRY as ``ST_SRID``/``ST_AsBinary``, TIMESTAMP in the server's UTC, JSON
compared as parsed documents). binlog_row_metadata=FULL also sends signedness, so unsigned columns must
decode unsigned with no help. MariaDB's JSON is LONGTEXT; MySQL's is binary JSON, decoded by our parser.
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from binlog_model.testing.localserver import LocalServer
from binlog_model.testing.mariadb import MariaDBServer
from binlog_model.wire.decoder import NEED_DATA, BinlogDecoder
from binlog_model.wire.rows import RowsEvent
from binlog_model.wire.table_map import TableMapEvent
from binlog_model.wire.values import NOT_PRESENT, Geometry, InvalidDate, InvalidDateTime, JsonDocument

ENUM_BIG = [f"v{i}" for i in range(300)]  # > 255 members: 2-byte ENUM
SET_BIG = [f"m{i}" for i in range(64)]  # 64 members: 8-byte SET
BLOB_3MB = bytes(range(256)) * (3 * 1024 * 1024 // 256)

# (name, DDL type, how SELECT reads it back, text charset of the column or None for bytes/other)
COLUMNS: list[tuple[str, str, str, str | None]] = [
    ("id", "INT NOT NULL PRIMARY KEY", "id", None),
    ("ti", "TINYINT", "ti", None), ("tiu", "TINYINT UNSIGNED", "tiu", None),
    ("si", "SMALLINT", "si", None), ("siu", "SMALLINT UNSIGNED", "siu", None),
    ("mi", "MEDIUMINT", "mi", None), ("miu", "MEDIUMINT UNSIGNED", "miu", None),
    ("i", "INT", "i", None), ("iu", "INT UNSIGNED", "iu", None),
    ("bi", "BIGINT", "bi", None), ("biu", "BIGINT UNSIGNED", "biu", None),
    ("f", "FLOAT", "f", None), ("d", "DOUBLE", "d", None),
    ("dec1", "DECIMAL(65,30)", "dec1", None), ("dec2", "DECIMAL(10,2)", "dec2", None),
    ("dec3", "DECIMAL(18,9)", "dec3", None), ("dec4", "DECIMAL(5,0) UNSIGNED", "dec4", None),
    ("y", "YEAR", "y", None), ("dt", "DATE", "dt", None),
    ("tm", "TIME(6)", "tm", None), ("tm0", "TIME", "tm0", None), ("tm3", "TIME(3)", "tm3", None),
    ("dtm", "DATETIME(6)", "dtm", None), ("dtm0", "DATETIME", "dtm0", None),
    ("dtm2", "DATETIME(2)", "dtm2", None),
    ("ts", "TIMESTAMP(6) NULL", "ts", None), ("ts0", "TIMESTAMP NULL", "ts0", None),
    ("c", "CHAR(10)", "c", "utf8"), ("c_big", "CHAR(100)", "c_big", "utf8"),
    ("vc", "VARCHAR(20)", "vc", "utf8"), ("vc_big", "VARCHAR(1000)", "vc_big", "utf8"),
    ("latin", "VARCHAR(50) CHARACTER SET latin1", "latin", "latin1"),
    ("vb", "VARBINARY(300)", "vb", None),
    ("tt", "TINYTEXT", "tt", "utf8"), ("tx", "TEXT", "tx", "utf8"), ("mt", "MEDIUMTEXT", "mt", "utf8"),
    ("lb", "LONGBLOB", "lb", None),
    ("bt", "BIT(64)", "bt+0", None), ("b1", "BIT(1)", "b1+0", None), ("b10", "BIT(10)", "b10+0", None),
    ("e", "ENUM('a','b','c')", "e+0", None),
    ("e_big", "ENUM(" + ",".join(f"'{v}'" for v in ENUM_BIG) + ")", "e_big+0", None),
    ("s", "SET('x','y','z')", "s+0", None),
    ("s_big", "SET(" + ",".join(f"'{v}'" for v in SET_BIG) + ")", "CAST(s_big+0 AS UNSIGNED)", None),
    ("j", "JSON", "j", "utf8"),
    ("g", "GEOMETRY", "g", None), ("p", "POINT", "p", None),
    ("note", "VARCHAR(20)", "note", "utf8"),
]
NAMES = [c[0] for c in COLUMNS]
# What NOBLOB leaves out of an image when unchanged: BLOB/TEXT (both servers keep GEOMETRY); MariaDB's
# JSON is LONGTEXT, so it goes too, while MySQL keeps its binary JSON (seen on MySQL 9.7).
BLOB_COLUMNS = {"tt", "tx", "mt", "lb", "j"}
BLOB_COLUMNS_BY_SERVER = {"MariaDB": BLOB_COLUMNS, "MySQL": BLOB_COLUMNS - {"j"}}


def _select_list(server: str = "MariaDB") -> str:
    out = []
    for name, _, expr, _ in COLUMNS:
        if name in ("g", "p") and server == "MySQL":
            # MySQL's ST_AsBinary gives a geographic SRS (4326) in latitude-longitude order; the row holds
            # the stored form, which is the value after its 4-byte SRID.
            out.append(f"ST_SRID({name}), SUBSTRING({name}, 5)")
        elif name in ("g", "p"):
            out.append(f"ST_SRID({name}), ST_AsBinary({name})")
        else:
            out.append(expr)
    return ", ".join(out)


def _rows_sql(base: int) -> list[str]:
    big_enum_last = ENUM_BIG[-1]
    all_set = ",".join(SET_BIG)
    return [
        # maxima
        f"""INSERT INTO t VALUES ({base + 1}, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647,
        4294967295, 9223372036854775807, 18446744073709551615, 3.40282e38, 1.7976931348623157e308,
        '{"9" * 35}.{"9" * 30}', 99999999.99, -999999999.999999999, 99999, 2155, '9999-12-31',
        '838:59:59.000000', '-838:59:59', '-12:30:00.250', '9999-12-31 23:59:59.999999',
        '1000-01-01 00:00:00', '2020-02-29 12:34:56.78', '2038-01-19 03:14:07.999999',
        '1970-01-01 00:00:01', 'abc', REPEAT('😀', 100), 'x', REPEAT('é', 1000), 'café ÿ',
        x'00ff00', '', 'hello 😀 world', 'mt', FROM_BASE64('{{blob}}'), b'{"1" * 64}', b'1',
        b'1010101010', 'c', '{big_enum_last}', 'x,y,z', '{all_set}',
        '{{"a": [1, 2.5, "x", null, true], "b": {{"c": "😀"}}}}',
        ST_GeomFromText('POLYGON((0 0,10 0,10 10,0 0))', 4326), ST_GeomFromText('POINT(1.5 -2.5)'),
        'max')""",
        # minima and negative fractions
        f"""INSERT INTO t VALUES ({base + 2}, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0,
        -9223372036854775808, 0, -1.5, -2.2250738585072014e-308, '-{"9" * 35}.{"9" * 30}',
        -99999999.99, 0.000000001, 0, 1901, '1000-01-01', '-00:00:01.500000', '00:00:00', '-00:00:00.001',
        '1000-01-01 00:00:00.000001', '2000-01-01 00:00:00', '1000-01-01 00:00:00.01',
        '1970-01-01 00:00:01.000001', '2038-01-19 03:14:07', '', '', '', '', 'ÿ', '', NULL, '', '',
        x'', b'0', b'0', b'0', 'a', 'v0', '', '', '[]', ST_GeomFromText('POINT(0 0)', 0),
        ST_GeomFromText('POINT(-1e300 1e-300)'), 'min')""",
        # NULL everywhere it may be
        f"INSERT INTO t (id, note) VALUES ({base + 3}, NULL)",
    ]


ZERO_DATES = ("INSERT INTO t (id, y, dt, dtm, dtm0, ts, ts0, note) VALUES ({id}, 0, '0000-00-00', "
              "'0000-00-00 00:00:00.000000', '2020-00-15 10:00:00', '0000-00-00 00:00:00', "
              "'0000-00-00 00:00:00', 'zero')")


def _charset(name: str) -> str | None:
    return next(c[3] for c in COLUMNS if c[0] == name)


def _normalise(decoded: list[Any]) -> list[Any]:
    """Decoded row (one value per column, GEOMETRY split in two) in SELECT's vocabulary."""
    out: list[Any] = []
    for (name, *_), v in zip(COLUMNS, decoded, strict=True):
        cs = _charset(name)
        if v is NOT_PRESENT:
            out.extend([NOT_PRESENT] * (2 if name in ("g", "p") else 1))
        elif name in ("g", "p"):
            out.extend([None, None] if v is None else [v.srid, v.wkb])
        elif isinstance(v, JsonDocument):
            out.append(json.loads(v.to_json()))
        elif isinstance(v, bytes) and cs is not None:
            out.append(v.decode(cs))
        elif isinstance(v, InvalidDate | InvalidDateTime):
            out.append(str(v))
        elif isinstance(v, datetime.datetime) and v.tzinfo is not None:
            out.append(v.replace(tzinfo=None))
        else:
            out.append(v)
    return out


def _same(a: Any, b: Any, name: str) -> bool:
    if name == "j" and isinstance(b, str) and not isinstance(a, str):
        return bool(a == json.loads(b))  # binary JSON (MySQL) against SELECT's JSON text
    if name == "j" and isinstance(a, str) and isinstance(b, str):
        return bool(json.loads(a) == json.loads(b))  # MariaDB: LONGTEXT, spacing as written
    if isinstance(a, str) and isinstance(b, str) and name in ("dt", "dtm", "dtm0", "dtm2", "ts", "ts0"):
        # Zero dates come back from SELECT as text with the column's fraction digits.
        return a == (b.rstrip("0").rstrip(".") if "." in b else b)
    if isinstance(a, float) and isinstance(b, float):
        rel = 1e-5 if name == "f" else 1e-15
        return math.isclose(a, b, rel_tol=rel) or a == b
    return bool(a == b)


def _assert_image(decoded_row: tuple[Any, ...], selected: tuple[Any, ...], what: str) -> set[str]:
    """Every present decoded value equals SELECT's; returns the names of the present columns."""
    norm = _normalise(list(decoded_row))
    expanded = [n for n in NAMES for _ in range(2 if n in ("g", "p") else 1)]
    present = set()
    for name, got, want in zip(expanded, norm, selected, strict=True):
        if got is NOT_PRESENT:
            continue
        present.add(name)
        if isinstance(want, bytes) and isinstance(got, str):
            want = want.decode(_charset(name) or "utf8")
        assert _same(got, want, name), f"{what}: column {name}: decoded {got!r}, SELECT {want!r}"
    return present


def _decode_files(paths: list[Path], db: str) -> Iterator[TableMapEvent | RowsEvent]:
    for path in paths:
        decoder = BinlogDecoder(file=path.name)
        decoder.receive_data(path.read_bytes())
        decoder.receive_data(b"")
        while (e := decoder.next_event()) is not NEED_DATA:
            table_map = e if isinstance(e, TableMapEvent) else getattr(e, "table_map", None)
            if isinstance(table_map, TableMapEvent) and table_map.schema == db:
                yield e


@pytest.fixture(scope="module")
def workload(server: LocalServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run the DML under FULL, MINIMAL and NOBLOB; keep SELECT results and the decoded events."""
    mariadb = server
    import base64
    import secrets

    db = f"sv_{secrets.token_hex(4)}"
    mariadb.execute(f"CREATE DATABASE `{db}`")
    ddl = "CREATE TABLE t (" + ", ".join(f"`{n}` {t}" for n, t, _, _ in COLUMNS) + ")"
    mariadb.execute(ddl, database=db)
    mariadb.flush_and_collect()
    blob64 = base64.b64encode(BLOB_3MB).decode("ascii")
    conn = mariadb.connect(db)
    selects: dict[tuple[str, str, int], tuple[Any, ...]] = {}
    ids: dict[str, list[int]] = {}
    try:
        with conn.cursor() as cur:
            cur.execute("SET SESSION sql_mode = ''")
            for n, image in enumerate(("FULL", "MINIMAL", "NOBLOB")):
                base = (n + 1) * 100
                cur.execute(f"SET SESSION binlog_row_image = {image}")
                for sql in _rows_sql(base):
                    cur.execute(sql.replace("{blob}", blob64))
                cur.execute(ZERO_DATES.format(id=base + 4))
                ids[image] = [base + 1, base + 2, base + 3, base + 4]
                for rid in ids[image]:
                    cur.execute(f"SELECT {_select_list(server.family)} FROM t WHERE id = {rid}")
                    selects[(image, "before", rid)] = cur.fetchone()
                cur.execute(f"UPDATE t SET note = 'upd', i = IFNULL(i, 0) + 1 WHERE id > {base} "
                            f"AND id < {base + 100}")
                for rid in ids[image]:
                    cur.execute(f"SELECT {_select_list(server.family)} FROM t WHERE id = {rid}")
                    selects[(image, "after", rid)] = cur.fetchone()
                cur.execute(f"DELETE FROM t WHERE id > {base} AND id < {base + 100}")
    finally:
        conn.close()
    files = mariadb.flush_and_collect(tmp_path_factory.mktemp("binlogs"))
    events = list(_decode_files(files, db))
    mariadb.execute(f"DROP DATABASE `{db}`")
    return {"selects": selects, "ids": ids, "events": events,
            "blob_columns": BLOB_COLUMNS_BY_SERVER[server.family], "server": server.family}


def _rows_of(workload: dict[str, Any], kind: str) -> list[tuple[Any, ...]]:
    return [row for e in workload["events"] if isinstance(e, RowsEvent) and e.kind == kind for row in e.rows]


def _image_of(row_id: int) -> str:
    return {1: "FULL", 2: "MINIMAL", 3: "NOBLOB"}[row_id // 100]


def test_table_map_full_metadata(workload: dict[str, Any]) -> None:
    tm = next(e for e in workload["events"] if isinstance(e, TableMapEvent))
    assert tm.column_names == tuple(NAMES)
    assert tm.primary_key == (0,)
    assert tm.signedness is not None
    assert [tm.signedness[NAMES.index(n)] for n in ("ti", "tiu", "bi", "biu", "dec4", "vc")] == \
        [False, True, False, True, True, None]
    assert tm.enum_values is not None and tm.set_values is not None
    assert tm.enum_values[NAMES.index("e")] == (b"a", b"b", b"c")
    assert len(tm.enum_values[NAMES.index("e_big")] or ()) == 300
    assert tm.set_values[NAMES.index("s_big")] == tuple(v.encode() for v in SET_BIG)
    assert tm.charsets is not None
    assert tm.charsets[NAMES.index("latin")] == 8  # latin1_swedish_ci
    assert tm.charsets[NAMES.index("vb")] == 63  # binary
    assert tm.charsets[NAMES.index("i")] is None
    assert tm.geometry_types is not None
    assert (tm.geometry_types[NAMES.index("g")], tm.geometry_types[NAMES.index("p")]) == (0, 1)
    # CHAR(100) utf8mb4 is 400 bytes: its length hides bits in the STRING metadata's type byte.
    assert tm.row_plan[NAMES.index("c_big")][1] == 400


def test_inserts_equal_select(workload: dict[str, Any]) -> None:
    rows = _rows_of(workload, "insert")
    assert len(rows) == 12
    for row in rows:
        image = _image_of(row[0])
        present = _assert_image(row, workload["selects"][(image, "before", row[0])], f"{image} insert")
        if image == "FULL":
            assert present == set(NAMES)
        elif image == "NOBLOB":
            assert present >= set(NAMES) - workload["blob_columns"]


def test_updates_equal_select_per_row_image(workload: dict[str, Any]) -> None:
    rows = _rows_of(workload, "update")
    assert len(rows) == 12
    for before, after in rows:
        rid = before[0]
        image = _image_of(rid)
        b = _assert_image(before, workload["selects"][(image, "before", rid)], f"{image} update before")
        a = _assert_image(after, workload["selects"][(image, "after", rid)], f"{image} update after")
        if image == "FULL":
            assert a == b == set(NAMES)
        elif image == "MINIMAL":
            assert b == {"id"}  # the primary key identifies the row
            assert {"note", "i"} <= a and "lb" not in a
        else:  # NOBLOB: every column but the unchanged BLOB/TEXT ones
            assert b == set(NAMES) - workload["blob_columns"]
            assert {"note", "i"} <= a and not (a & workload["blob_columns"]), sorted(a)
            assert before[NAMES.index("lb")] is NOT_PRESENT


def test_deletes_equal_select(workload: dict[str, Any]) -> None:
    rows = _rows_of(workload, "delete")
    assert len(rows) == 12
    for row in rows:
        image = _image_of(row[0])
        present = _assert_image(row, workload["selects"][(image, "after", row[0])], f"{image} delete")
        if image == "MINIMAL":
            assert present == {"id"}


def test_edge_values_decoded_exactly(workload: dict[str, Any]) -> None:
    by_id = {row[0]: row for row in _rows_of(workload, "insert")}
    mx, mn, nulls, zero = by_id[101], by_id[102], by_id[103], by_id[104]
    col = NAMES.index
    assert mx[col("biu")] == 2**64 - 1 and mn[col("bi")] == -(2**63)
    assert mx[col("bt")] == 2**64 - 1
    assert mx[col("dec1")] == Decimal("9" * 35 + "." + "9" * 30)
    assert mn[col("dec1")] == Decimal("-" + "9" * 35 + "." + "9" * 30)
    assert mx[col("tm")] == datetime.timedelta(hours=838, minutes=59, seconds=59)
    assert mx[col("tm0")] == -datetime.timedelta(hours=838, minutes=59, seconds=59)
    assert mn[col("tm")] == -datetime.timedelta(seconds=1, microseconds=500000)
    assert mn[col("tm3")] == -datetime.timedelta(milliseconds=1)
    assert mx[col("lb")] == BLOB_3MB
    assert mx[col("c_big")] == "😀".encode() * 100
    assert mx[col("e_big")] == 300 and mx[col("s_big")] == 2**64 - 1
    assert isinstance(mx[col("g")], Geometry) and mx[col("g")].srid == 4326
    assert all(v is None for v in nulls[1:])
    assert zero[col("dt")] == InvalidDate(0, 0, 0)
    assert zero[col("dtm0")] == InvalidDateTime(2020, 0, 15, 10, 0, 0, 0)
    assert zero[col("ts")] == InvalidDateTime(0, 0, 0)
    assert zero[col("y")] == 0


def test_mariadb_compressed_rows_events(mariadb: MariaDBServer, mariadb_db: str,
                                        tmp_path: Path) -> None:
    mariadb.execute("CREATE TABLE c (id INT PRIMARY KEY, v TEXT)", database=mariadb_db)
    mariadb.flush_and_collect()
    value = "compress me " * 200
    try:
        mariadb.execute(["SET GLOBAL log_bin_compress = ON", "SET GLOBAL log_bin_compress_min_len = 10"])
        mariadb.execute([f"INSERT INTO c VALUES (1, '{value}'), (2, NULL)",
                         f"UPDATE c SET v = '{value}' WHERE id = 2", "DELETE FROM c WHERE id = 1"],
                        database=mariadb_db)
    finally:
        mariadb.execute(["SET GLOBAL log_bin_compress = OFF"])
    files = mariadb.flush_and_collect(tmp_path)
    events = [e for e in _decode_files(files, mariadb_db) if isinstance(e, RowsEvent)]
    assert [(e.kind, e.compressed, e.header.event_type) for e in events] == [
        ("insert", True, 166), ("update", True, 167), ("delete", True, 168)]
    assert events[0].rows == ((1, value.encode()), (2, None))
    assert events[1].rows == (((2, None), (2, value.encode())),)
    assert events[2].rows == ((1, value.encode()),)


def test_signedness_bit_of_year_keeps_later_columns_aligned(server: LocalServer, fresh_db: str,
                                                            tmp_path: Path) -> None:
    server.execute(["CREATE TABLE y (y YEAR, c INT, a INT UNSIGNED, b BIT(3), d DECIMAL(5,2) UNSIGNED)",
                     "INSERT INTO y VALUES (2000, -1, 4294967295, 1, 1.5)"], database=fresh_db)
    files = server.flush_and_collect(tmp_path)
    (tm,) = [e for e in _decode_files(files, fresh_db) if isinstance(e, TableMapEvent)]
    assert tm.signedness is not None
    # YEAR has a bit of its own (MariaDB writes 1); BIT has none.
    assert tm.signedness[1:] == (False, True, None, True)
    (ev,) = [e for e in _decode_files(files, fresh_db) if isinstance(e, RowsEvent)]
    assert ev.rows == ((2000, -1, 4294967295, 1, Decimal("1.50")),)


def test_table_map_prefix_primary_key_and_enum_set_charsets(
        server: LocalServer, fresh_db: str, tmp_path: Path) -> None:
    server.execute([
        "CREATE TABLE k (id INT, v VARCHAR(3) CHARACTER SET latin1, e ENUM('a','b') CHARACTER SET latin1, "
        "s SET('x'), g POINT, pk2 VARCHAR(10), PRIMARY KEY (id, pk2(3)))",
        "INSERT INTO k VALUES (1, 'a', 'b', 'x', NULL, 'abcd')"], database=fresh_db)
    files = server.flush_and_collect(tmp_path)
    (tm,) = [e for e in _decode_files(files, fresh_db) if isinstance(e, TableMapEvent)]
    assert (tm.primary_key, tm.primary_key_prefixes) == ((0, 5), (0, 3))
    # the server's default utf8mb4 collation: 10.11 with the harness's utf8mb4_general_ci, 11.8's own
    # utf8mb4_uca1400_ai_ci (id 2304, as information_schema.COLLATION_CHARACTER_SET_APPLICABILITY says)
    utf8mb4 = {"MariaDB": 45, "MariaDB 11.8": 2304, "MySQL": 255}[server.label]
    # MariaDB gives GEOMETRY a charset (binary); MySQL's charset block leaves it out.
    geometry = 63 if server.family == "MariaDB" else None
    assert tm.charsets == (None, 8, None, None, geometry, utf8mb4)
    assert tm.enum_set_charsets == (None, None, 8, utf8mb4, None, None)
    assert tm.geometry_types == (None, None, None, None, 1, None)
    (ev,) = [e for e in _decode_files(files, fresh_db) if isinstance(e, RowsEvent)]
    assert ev.rows == ((1, b"a", 2, 1, None, b"abcd"),)


def test_mariadb_compressed_columns_are_a_typed_error_naming_the_type(mariadb: MariaDBServer,
                                                                      mariadb_db: str) -> None:
    """MariaDB logs ``COMPRESSED`` columns with their own type codes (140/141). The TABLE_MAP must still
    parse (the later columns' metadata and charsets stay aligned); the rows name the unsupported type."""
    from binlog_model.errors import UnsupportedEventError
    from binlog_model.io.files import iter_events
    from binlog_model.wire.rows import RowsEvent

    mariadb.execute("CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(300) COMPRESSED, b BLOB COMPRESSED, "
                    "c VARCHAR(10), z INT UNSIGNED)", mariadb_db)
    mariadb.flush_and_collect()
    mariadb.execute("INSERT INTO t VALUES (1, 'x', 'y', 'z', 4294967295)", mariadb_db)
    files = mariadb.flush_and_collect()
    maps: list[TableMapEvent] = []
    with pytest.raises(UnsupportedEventError, match="_COMPRESSED"):
        for event in iter_events(files):
            if isinstance(event, TableMapEvent) and event.schema == mariadb_db:
                maps.append(event)
            if isinstance(event, RowsEvent):
                event.rows  # noqa: B018 - the row images decode (and fail) on first access
    (tm,) = maps
    assert tm.column_types[3:] == (15, 3) and set(tm.column_types[1:3]) <= {140, 141}
    assert tm.column_names == ("id", "a", "b", "c", "z")
    assert tm.signedness is not None and tm.signedness[4] is True


@pytest.mark.server
def test_mariadb_old_high_precision_datetime_is_refused_not_misread(tmp_path: Path) -> None:
    """MariaDB with ``mysql56_temporal_format=OFF`` logs DATETIME(6) as the old DATETIME type with no
    fsp: its bytes must not come out as a nonsense date, but as a typed error naming the format."""
    from binlog_model.errors import UnsupportedEventError
    from binlog_model.io.files import iter_events
    from binlog_model.wire.rows import RowsEvent

    with MariaDBServer(extra_args=("--mysql56-temporal-format=OFF",)) as server:
        server.execute(["CREATE DATABASE d", "CREATE TABLE d.t (id INT, b DATETIME(6), z INT)"])
        server.flush_and_collect()
        server.execute("INSERT INTO d.t VALUES (1, '2001-02-03 04:05:06.123456', 7)")
        files = server.flush_and_collect(tmp_path)
    with pytest.raises(UnsupportedEventError, match="mysql56_temporal_format"):
        for event in iter_events(files):
            if isinstance(event, RowsEvent):
                event.rows  # noqa: B018 - the row images decode (and fail) on first access
