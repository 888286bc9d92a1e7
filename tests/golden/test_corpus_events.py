"""Acceptance: every binlog of ../shared/corpus gives BinlogEvents, or the typed error its content calls for.

Without a snapshot, a table whose CREATE is not in the file can only be resolved from TABLE_MAP optional
metadata (MySQL 8 ``binlog_row_metadata=FULL``). None of these files carries column names, so such tables
must raise ``UnknownTableError`` naming the table — the table below says which file ends which way, and why.
With the snapshot the origin ships beside a file (its SQL), the same files resolve, and values are checked.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.errors import IncompleteTransactionError, UnknownTableError
from binlog_model.io.snapshots import read_sql_text
from binlog_model.messages import python_value
from binlog_model.runs.pipeline import iter_binlog_events
from schema_tracker.history import SchemaHistory
from schema_tracker.model import Catalog
from schema_tracker.snapshot import catalog_from_dump
from tests._paths import CORPUS, require

OK = "ok"
# file (relative to the corpus) → OK, or (error type, table named in it); reasons in the comments.
EXPECTED: dict[str, object] = {
    # The table was created before this file began (no CREATE in it) and TABLE_MAP has no column names.
    "MyFlash/testbinlog/haha.000008": (UnknownTableError, "test.test4"),
    "MyFlash/testbinlog/haha.000009": (UnknownTableError, "test.test4"),
    "MyFlash/testbinlog/haha.000041": (UnknownTableError, "test.testFlashback"),
    "MySqlCdc/samples/MySqlCdc.Sample/mysql-bin.000001": (UnknownTableError, "test.mysqlcdc"),
    "binlog-parser/data/fixtures/mysql-bin.01": (UnknownTableError, "test_db.buildings"),
    "binlog-parser/data/fixtures/mysql-bin.03": (UnknownTableError, "test_db.buildings"),
    "mysql-binlog-connector-java/src/test/resources/mysql-bin.checksum-crc32":
        (UnknownTableError, "simu_file_dev.folder"),
    "mysql-binlog-connector-java/src/test/resources/mysql-bin.checksum-none":
        (UnknownTableError, "meeteam_file_storage.meeteam_fs_storage"),
    "mysql-binlog-connector-java/src/test/resources/mysql-bin.compressed": (UnknownTableError, "demo.movies"),
    "mysql-binlog-connector-rust/tests/parse_file_tests/mysql-bin.000057":
        (UnknownTableError, "a.test_table_3"),
    "mysql-binlog-connector-rust/tests/parse_file_tests/mysql-bin.000080": (UnknownTableError, "a.b"),
    "mysql-cdc-rs/tests/events/5.7/31_update_rows_v2/log.bin": (UnknownTableError, "default.boxercrab"),
    # The second file of a pair: its table is created in binlog.000001 (tested together below).
    "percona-binlog-server/mtr/binlog_streaming/std_data/data_80045_gtid/binlog.000002":
        (UnknownTableError, "test.t1"),
    "percona-binlog-server/mtr/binlog_streaming/std_data/data_80045_position/binlog.000002":
        (UnknownTableError, "test.t1"),
    # An Aurora file cut right after a transaction's BEGIN (its padding event 100 is an UnknownEvent).
    "mysql-binlog-connector-java/src/test/resources/mysql-bin.aurora-padding":
        (IncompleteTransactionError, None),
}


def _binlogs() -> list[str]:
    if not CORPUS.exists():
        return []
    out = []
    for path in sorted(CORPUS.rglob("*")):
        if path.is_file():
            head = path.read_bytes()[:4]
            if head == b"\xfebin" or path.suffix == ".gz":
                out.append(str(path.relative_to(CORPUS)))
    return out


@pytest.mark.parametrize("rel", _binlogs() or ["<corpus absent>"])
def test_corpus_file_gives_events_or_the_expected_error(rel: str) -> None:
    path = require(CORPUS / rel)
    expected = EXPECTED.get(rel, OK)
    if rel.endswith("mysql-bin.sakila.gz"):
        pytest.skip("covered by test_sakila_replays_its_own_schema_strictly")
    if expected == OK:
        events = list(iter_binlog_events([path]))
        for e in events:
            assert e.operation != pb.BinlogEvent.OPERATION_UNSPECIFIED
            assert e.position.file == path.name
        return
    error, table = expected  # type: ignore[misc]
    with pytest.raises(error) as info:
        list(iter_binlog_events([path]))
    if table is not None:
        assert info.value.table == table
        assert info.value.position is not None and info.value.position.file == path.name


def test_split_pair_resolves_when_read_in_rotation_order() -> None:
    base = require(CORPUS / "percona-binlog-server/mtr/binlog_streaming/std_data/data_80045_gtid")
    events = list(iter_binlog_events([base / "binlog.000002", base / "binlog.000001"]))
    files = [e.position.file for e in events]
    assert files == sorted(files)                      # rotation order, whatever order they were given in
    ops = [(e.position.file, pb.BinlogEvent.Operation.Name(e.operation)) for e in events]
    assert ("binlog.000002", "UPDATE") in ops and ("binlog.000002", "DELETE") in ops
    assert all(e.table == "t1" for e in events if e.operation != pb.BinlogEvent.SCHEMA)


def test_incomplete_tail_is_allowed_on_request() -> None:
    path = require(CORPUS / "mysql-binlog-connector-java/src/test/resources/mysql-bin.aurora-padding")
    assert list(iter_binlog_events([path], allow_incomplete_tail=True)) == []


def test_mysqlcdc_every_type_row_resolves_with_its_schema() -> None:
    """The origin's Scripts.sql (CREATE TABLE + the INSERT) as the snapshot: the row decodes to its values."""
    folder = require(CORPUS / "MySqlCdc")
    # The binlog names the table in lower case (lower_case_table_names=1 on that server).
    catalog = catalog_from_dump(read_sql_text(folder / "Scripts.sql").replace("`MySqlCdc`", "`mysqlcdc`"),
                                Catalog(server_charset="utf8mb4"), default_db="test")
    events = list(iter_binlog_events([folder / "samples/MySqlCdc.Sample/mysql-bin.000001"],
                                     snapshot=SchemaHistory(catalog)))
    inserts = [e for e in events if e.operation == pb.BinlogEvent.INSERT]
    assert len(inserts) == 3
    # The file holds three variants of the row; the third is Scripts.sql's INSERT exactly.
    row = {c.name: python_value(c.value) for c in inserts[2].rows[0].after}
    assert row["TinyColumn"] == 123
    assert row["ShortColumn"] == 12345
    assert row["Int24Column"] == 1234567
    assert row["Int32Column"] == 123456789
    assert row["LongColumn"] == 1234567890987654321
    assert row["DecimalColumn"] == Decimal(
        "1234567890112233445566778899001112223334445556667778889.9900011112")
    assert row["CharColumn"] == "Asd234234 234234 zdfsfsdfsdf"
    assert row["VarcharColumn"] == "Hello world!"
    assert row["VarstringColumn"] == bytes.fromhex("1234564534454534")
    assert row["BlobColumn"] == bytes.fromhex("152354")
    assert row["BitColumn"] == 0b0111101101010101011110000111
    assert row["EnumColumn"] == "Medium"
    assert row["YearColumn"] == 1989
    assert row["DateColumn"] == dt.date(1985, 10, 23)
    assert row["DateTimeColumn"] == dt.datetime(1988, 11, 27, 14, 12, 13, 345000)
    assert row["TimeColumn"] == dt.timedelta(hours=15, minutes=22, seconds=33, microseconds=670000)
    assert row["FloatColumn"] == pytest.approx(12345.6789, rel=1e-7)
    assert row["DoubleColumn"] == 123456789.0987654321
    # TIMESTAMP is stored in UTC; the INSERT's literal was in the session's zone (+03:00 there), and
    # mysqlbinlog prints the stored epoch 498046943.567.
    assert row["TimestampColumn"] == dt.datetime(1985, 10, 13, 10, 22, 23, 567000, tzinfo=dt.UTC)
    assert row["TimestampColumn"].timestamp() == 498046943.567
    assert row["JsonColumn"] == '{"id": 1, "name": "John"}'
    assert row["SetColumn"] == ("Red",)
    assert [(c.name, python_value(c.value)) for c in inserts[2].rows[0].primary_key] == [("Id", 13)]


def test_binlog_parser_files_resolve_with_the_dump_beside_them() -> None:
    folder = require(CORPUS / "binlog-parser/data/fixtures")
    for name in ("mysql-bin.01", "mysql-bin.03"):
        events = list(iter_binlog_events([folder / name], snapshot=folder / "test_db.sql"))
        tables = {(e.db, e.table) for e in events}
        assert ("test_db", "buildings") in tables
        for e in events:
            for r in e.rows:
                assert r.primary_key, f"{name}: every test_db table has a primary key"


def test_sakila_replays_its_own_schema_strictly() -> None:
    """Sakila's schema (tables, views, triggers, routines) comes from the file's own QUERY events, in strict
    mode: every one of its 47,273 row changes resolves to named columns with a primary key."""
    path = require(CORPUS / "mysql-binlog-connector-java/src/test/resources/mysql-bin.sakila.gz")
    events = list(iter_binlog_events([path]))
    rows = [r for e in events for r in e.rows]
    assert len(rows) == 47273
    tables = {e.table for e in events if e.operation == pb.BinlogEvent.INSERT}
    assert {"actor", "film", "rental", "payment"} <= tables
    assert all(r.primary_key for r in rows)


def test_prebuilt_history_is_reused_not_reapplied() -> None:
    """The Spark driver builds the history from the same files first. Its DDL is then reused; a statement
    that changed nothing at its position (DROP TABLE IF EXISTS of a table created later) is not re-applied to
    the latest catalog, where it would drop the table and break the position order."""
    path = require(CORPUS / "binlog-parser/data/gtid-fixtures/mysql-bin.01")
    from binlog_model.io.files import iter_events
    from binlog_model.resolve.assembler import replay_ddl

    prebuilt = SchemaHistory()
    replay_ddl(iter_events(path), prebuilt)
    entries = len(prebuilt.entries)
    expected = [e.SerializeToString() for e in iter_binlog_events([path])]
    got = [e.SerializeToString() for e in iter_binlog_events([path], snapshot=prebuilt)]
    assert got == expected
    assert len(prebuilt.entries) == entries     # nothing applied twice
