"""The statement assembler on real MariaDB and MySQL 9 binlogs: resolution sources, errors, image modes,
trace info, transactions.

Each test writes its own statements on the session server of each kind (a fresh database), takes the binlog
files that hold exactly them (a ``flush_and_collect`` before and after), and decodes those files. Tests of
a feature only one server has take that server's database fixture (``mariadb_db``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.errors import (
    ConfigError,
    IncompleteTransactionError,
    SchemaMismatchError,
    UncertainSchemaError,
    UnknownTableError,
    UnsupportedDDLError,
)
from binlog_model.messages import python_value
from binlog_model.resolve.assembler import StatementAssembler
from binlog_model.resolve.options import AssemblerOptions, parse_always_include
from binlog_model.resolve.statement_text import parse_trace_info
from binlog_model.runs.pipeline import iter_binlog_events
from binlog_model.testing.localserver import LocalServer
from binlog_model.testing.mariadb import MariaDBServer
from binlog_model.testing.mysql import MySQLServer
from schema_tracker.history import SchemaHistory
from schema_tracker.model import Catalog
from schema_tracker.snapshot import catalog_from_dump, catalog_from_server


def _run(server: LocalServer, db: str, statements: Sequence[str], *, session: Sequence[str] = ()
         ) -> list[Path]:
    """Run ``statements`` on one connection and return the binlog files holding exactly them."""
    server.flush_and_collect()
    conn = server.connect(db)
    try:
        with conn.cursor() as cur:
            for sql in [*session, *statements]:
                cur.execute(sql)
    finally:
        conn.close()
    return server.flush_and_collect()


def _seq(n: int) -> str:
    """The numbers 1..n as ``seq``: a derived table and its WHERE, after ``SELECT … FROM``, that both
    servers accept (MariaDB's ``seq_1_to_N`` tables do not exist in MySQL)."""
    digits = "(SELECT 0 d UNION ALL " + " UNION ALL ".join(f"SELECT {i}" for i in range(1, 10)) + ")"
    numbers = (f"(SELECT u.d + 10 * t.d + 100 * h.d + 1000 * k.d + 1 AS seq "
               f"FROM {digits} u, {digits} t, {digits} h, {digits} k) s")
    return f"{numbers} WHERE seq <= {n}"


def _mine(events: list[pb.BinlogEvent], db: str) -> list[pb.BinlogEvent]:
    return [e for e in events if e.db == db]


def _cols(columns: Any) -> dict[str, Any]:
    return {c.name: python_value(c.value) for c in columns}


def test_table_unknown_to_the_tracker_resolves_from_full_row_metadata(server: LocalServer,
                                                                      fresh_db: str) -> None:
    server.execute("CREATE TABLE t (id INT UNSIGNED PRIMARY KEY, name VARCHAR(20), "
                    "kind ENUM('a','b,c','d''e'), big BIGINT UNSIGNED)", fresh_db)
    files = _run(server, fresh_db, [
        "INSERT INTO t VALUES (4294967295, 'zoë', 'b,c', 18446744073709551615)",
        "UPDATE t SET kind = 'd''e' WHERE id = 4294967295",
    ])
    assembler = StatementAssembler(None, AssemblerOptions(always_include={(fresh_db, "t"): ("name",)}))
    events = _mine(list(iter_binlog_events(files, assembler=assembler)), fresh_db)
    assert assembler.stats.tables_from_metadata >= 1
    insert, update = events
    assert _cols(insert.rows[0].after) == {"id": 4294967295, "name": "zoë", "kind": "b,c",
                                           "big": 18446744073709551615}
    assert _cols(insert.rows[0].primary_key) == {"id": 4294967295}
    assert insert.rows[0].after[3].value.WhichOneof("kind") == "uint64_value"
    assert _cols(update.rows[0].before) == {"name": "zoë"}
    assert _cols(update.rows[0].after) == {"kind": "d'e"}


def test_table_unknown_without_metadata_is_a_typed_error(server: LocalServer, fresh_db: str) -> None:
    server.execute("CREATE TABLE t (id INT PRIMARY KEY)", fresh_db)
    server.execute("SET GLOBAL binlog_row_metadata = MINIMAL")   # global only; restored below
    try:
        files = _run(server, fresh_db, ["INSERT INTO t VALUES (1)"])
    finally:
        server.execute("SET GLOBAL binlog_row_metadata = FULL")
    with pytest.raises(UnknownTableError) as info:
        list(iter_binlog_events(files))
    assert info.value.table == f"{fresh_db}.t"
    assert info.value.position is not None


def test_snapshot_that_disagrees_with_table_map_is_a_schema_mismatch(server: LocalServer,
                                                                     fresh_db: str) -> None:
    server.execute("CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10), b INT)", fresh_db)
    files = _run(server, fresh_db, ["INSERT INTO t VALUES (1, 'x', 2)"])
    wrong = catalog_from_dump(f"CREATE DATABASE {fresh_db}; USE {fresh_db};"
                              "CREATE TABLE t (id INT PRIMARY KEY, b INT);",
                              Catalog(server_charset="utf8mb4"))
    with pytest.raises(SchemaMismatchError) as info:
        list(iter_binlog_events(files, snapshot=wrong))
    err = info.value
    assert err.table == f"{fresh_db}.t" and err.position is not None
    assert "3 columns" in str(err) and "2" in str(err)
    assert err.tracked == ["id int(11)", "b int(11)"]
    assert len(err.binlog) == 3
    # A type disagreement (same count) is caught too.
    typed = catalog_from_dump(f"CREATE DATABASE {fresh_db}; USE {fresh_db};"
                              "CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT);",
                              Catalog(server_charset="utf8mb4"))
    with pytest.raises(SchemaMismatchError, match="column 2"):
        list(iter_binlog_events(files, snapshot=typed))


def test_history_from_a_live_snapshot_resolves_rows_before_and_after_an_alter(server: LocalServer,
                                                                              fresh_db: str) -> None:
    server.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(5))", fresh_db)
    conn = server.connect()
    try:
        snapshot = catalog_from_server(conn, databases=[fresh_db])
    finally:
        conn.close()
    files = _run(server, fresh_db, [
        "INSERT INTO t VALUES (1, 10, 'x')",
        "ALTER TABLE t DROP COLUMN a, ADD COLUMN c INT FIRST",
        "INSERT INTO t VALUES (20, 2, 'y')",
    ])
    events = _mine(list(iter_binlog_events(files, snapshot=SchemaHistory(snapshot))), fresh_db)
    first, alter, second = events
    assert [c.name for c in first.rows[0].after] == ["id", "a", "b"]
    assert _cols(first.rows[0].after) == {"id": 1, "a": 10, "b": "x"}
    assert alter.operation == pb.BinlogEvent.SCHEMA
    assert [c.WhichOneof("change") for c in alter.schema_changes] == ["drop_column",
                                                                      "create_or_modify_column"]
    assert [c.name for c in second.rows[0].after] == ["c", "id", "b"]
    assert _cols(second.rows[0].after) == {"c": 20, "id": 2, "b": "y"}


def test_unsupported_ddl_is_strict_by_default_and_lenient_marks_the_table_uncertain(
        mariadb: MariaDBServer, mariadb_db: str) -> None:
    mariadb.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT)", mariadb_db)
    conn = mariadb.connect()
    try:
        snapshot = catalog_from_server(conn, databases=[mariadb_db])
    finally:
        conn.close()
    # System versioning adds the hidden row_start/row_end columns to every row image.
    files = _run(mariadb, mariadb_db, ["INSERT INTO t VALUES (1, 1)", "ALTER TABLE t ADD SYSTEM VERSIONING",
                                     "INSERT INTO t VALUES (2, 2)"])
    with pytest.raises(UnsupportedDDLError) as info:
        list(iter_binlog_events(files, snapshot=SchemaHistory(snapshot)))
    assert "SYSTEM VERSIONING" in (info.value.statement or "")
    seen: list[pb.BinlogEvent] = []
    with pytest.raises(UncertainSchemaError) as uncertain:
        for e in iter_binlog_events(files, snapshot=SchemaHistory(snapshot, lenient=True), lenient_ddl=True):
            seen.append(e)
    assert uncertain.value.table == f"{mariadb_db}.t"
    mine = _mine(seen, mariadb_db)
    assert mine[0].operation == pb.BinlogEvent.INSERT
    assert mine[1].schema_changes[0].WhichOneof("change") == "skipped_statement"


@pytest.mark.parametrize("image", ["changed", "changed_with_old", "full", "after"])
def test_update_image_modes(server: LocalServer, fresh_db: str, image: str) -> None:
    server.execute("CREATE TABLE t (id INT PRIMARY KEY, cur CHAR(3), a INT, b INT)", fresh_db)
    server.execute("INSERT INTO t VALUES (1, 'RUB', 10, 20)", fresh_db)
    files = _run(server, fresh_db, ["UPDATE t SET a = 11 WHERE id = 1", "DELETE FROM t WHERE id = 1"])
    update, delete = _mine(list(iter_binlog_events(files, always_include=[f"{fresh_db}.t.cur"], image=image)),
                           fresh_db)
    before, after = _cols(update.rows[0].before), _cols(update.rows[0].after)
    if image == "changed":
        assert (before, after) == ({"cur": "RUB"}, {"a": 11})
        assert _cols(delete.rows[0].before) == {"cur": "RUB"}
    elif image == "changed_with_old":
        assert (before, after) == ({"cur": "RUB", "a": 10}, {"a": 11})
        assert _cols(delete.rows[0].before) == {"cur": "RUB"}
    elif image == "after":       # the row after the change: no before image for an UPDATE
        assert (before, after) == ({}, {"id": 1, "cur": "RUB", "a": 11, "b": 20})
        assert _cols(delete.rows[0].before) == {"id": 1, "cur": "RUB", "a": 11, "b": 20}
    else:
        assert before == {"id": 1, "cur": "RUB", "a": 10, "b": 20}
        assert after == {"id": 1, "cur": "RUB", "a": 11, "b": 20}
        assert _cols(delete.rows[0].before) == {"id": 1, "cur": "RUB", "a": 11, "b": 20}
    assert _cols(update.rows[0].primary_key) == {"id": 1}


def test_minimal_image_never_reports_absent_columns_as_null(server: LocalServer, fresh_db: str) -> None:
    server.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, b TEXT, c INT)", fresh_db)
    server.execute("INSERT INTO t VALUES (1, 1, 'blob', NULL)", fresh_db)
    files = _run(server, fresh_db, ["UPDATE t SET a = 2 WHERE id = 1", "DELETE FROM t WHERE id = 1"],
                 session=["SET SESSION binlog_row_image = MINIMAL"])
    update, delete = _mine(list(iter_binlog_events(files, image="full")), fresh_db)
    # MINIMAL: the before image holds the PK only, the after image the changed column only.
    assert _cols(update.rows[0].before) == {"id": 1}
    assert _cols(update.rows[0].after) == {"a": 2}
    assert _cols(delete.rows[0].before) == {"id": 1}
    assert _cols(delete.rows[0].primary_key) == {"id": 1}


def test_split_by_bytes_and_rows_keeps_identity_and_consecutive_row_indexes(server: LocalServer,
                                                                           fresh_db: str) -> None:
    server.execute("CREATE TABLE t (id INT PRIMARY KEY, pad VARCHAR(200))", fresh_db)
    files = _run(server, fresh_db, [f"INSERT INTO t SELECT seq, REPEAT('x', 200) FROM {_seq(3000)}"])
    for kwargs in ({"max_rows": 700}, {"max_bytes": 50_000}):
        pieces = _mine(list(iter_binlog_events(files, **kwargs)), fresh_db)  # type: ignore[arg-type]
        assert len(pieces) > 2
        assert len({(e.transaction_id, e.query_index) for e in pieces}) == 1
        assert [e.event_index for e in pieces] == list(range(len(pieces)))
        assert [e.last_in_statement for e in pieces] == [False] * (len(pieces) - 1) + [True]
        indexes = [r.row_index for e in pieces for r in e.rows]
        assert indexes == list(range(3000))
        assert [e.row_index for e in pieces] == [e.rows[0].row_index for e in pieces]
        if "max_rows" in kwargs:
            assert max(len(e.rows) for e in pieces) == 700


def test_trace_info_comes_from_the_leading_comment_of_the_annotated_statement(server: LocalServer,
                                                                             fresh_db: str) -> None:
    server.execute("CREATE TABLE t (id INT PRIMARY KEY)", fresh_db)
    files = _run(server, fresh_db, ["/* reqid:1234567:direct.web:campaigns.save */ INSERT INTO t VALUES (1)",
                                     "INSERT INTO t VALUES (2)"])
    traced, plain = _mine(list(iter_binlog_events(files)), fresh_db)
    assert traced.trace_info == "reqid:1234567:direct.web:campaigns.save"
    assert traced.statement.startswith("/* reqid:1234567")
    assert not plain.HasField("trace_info")


def test_parse_trace_info_rules() -> None:
    assert parse_trace_info("/* reqid:1:svc:m */ UPDATE t SET a=1") == "reqid:1:svc:m"
    assert parse_trace_info("  /*x*/SELECT 1") == "x"
    assert parse_trace_info("/*!40101 SET NAMES utf8 */") is None
    assert parse_trace_info("/*+ MAX_EXECUTION_TIME(1) */ SELECT 1") is None
    assert parse_trace_info("UPDATE t SET a=1 /* trailing */") is None
    assert parse_trace_info(None) is None


def test_bad_options_are_config_errors() -> None:
    with pytest.raises(ConfigError):
        parse_always_include(["ppc.campaigns"])
    with pytest.raises(ConfigError):
        AssemblerOptions(image="everything")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        AssemblerOptions(max_rows=0)


def test_statement_text_on_all_first_or_no_pieces(server: LocalServer, fresh_db: str) -> None:
    server.execute("CREATE TABLE t (id INT PRIMARY KEY)", fresh_db)
    files = _run(server, fresh_db, [f"/* reqid:7:s:m */ INSERT INTO t SELECT seq FROM {_seq(25)}"])
    for mode, expected in (("all", [True] * 3), ("first", [True, False, False]), ("none", [False] * 3)):
        pieces = _mine(list(iter_binlog_events(files, max_rows=10, statement_text=mode)), fresh_db)
        assert [e.HasField("statement") for e in pieces] == expected, mode
        assert all(e.trace_info == "reqid:7:s:m" for e in pieces)     # trace info stays on every piece
    with pytest.raises(ConfigError):
        AssemblerOptions(statement_text="some")  # type: ignore[arg-type]


def test_table_map_names_catch_a_same_typed_column_swap(server: LocalServer, fresh_db: str) -> None:
    """Types alone cannot tell two INT columns apart; FULL row metadata names them, and a tracked schema
    with the names in other places is a SchemaMismatchError, not silently swapped values."""
    server.execute("CREATE TABLE t (a INT PRIMARY KEY, b INT)", fresh_db)
    files = _run(server, fresh_db, ["INSERT INTO t VALUES (1, 2)"])
    swapped = catalog_from_dump(f"CREATE DATABASE {fresh_db}; USE {fresh_db};"
                                "CREATE TABLE t (b INT PRIMARY KEY, a INT);",
                                Catalog(server_charset="utf8mb4"))
    with pytest.raises(SchemaMismatchError, match="column names"):
        list(iter_binlog_events(files, snapshot=swapped))


def test_update_change_detection_is_strict_about_json_types_and_signed_zero() -> None:
    from binlog_model.resolve.rows import _differs
    from binlog_model.wire.values import NOT_PRESENT, JsonDocument

    assert _differs(JsonDocument({"x": 1}), JsonDocument({"x": True}))
    assert _differs(JsonDocument([1]), JsonDocument([1.0]))
    assert not _differs(JsonDocument({"x": [1, "a"]}), JsonDocument({"x": [1, "a"]}))
    assert _differs(0.0, -0.0) and not _differs(1.5, 1.5)
    assert _differs(1, True) and _differs(NOT_PRESENT, None) and not _differs(None, None)


def test_spilled_transactions_stream_out_unchanged() -> None:
    """A transaction larger than ``spill_bytes`` goes through a temporary file and comes out identical."""
    from tests._paths import REPO

    files = sorted((REPO / "fixtures/golden/mariadb/large_statement/binlogs").iterdir())
    plain = [e.SerializeToString() for e in iter_binlog_events(files)]
    spilled = StatementAssembler(None, AssemblerOptions(spill_bytes=1000))
    assert [e.SerializeToString() for e in iter_binlog_events(files, assembler=spilled)] == plain


def test_rollback_to_a_savepoint_inside_the_spilled_part() -> None:
    from binlog_model.resolve.spill import TransactionBuffer as _TransactionBuffer

    buffer = _TransactionBuffer(spill_bytes=50)
    for i in range(20):
        buffer.append(pb.BinlogEvent(transaction_id=i, statement="x" * 30))
    assert buffer._spilled > 5                      # most of them went to the temporary file
    buffer.truncate(5)
    assert [e.transaction_id for e in buffer.drain()] == [0, 1, 2, 3, 4]


def test_rollback_to_savepoint_drops_the_work_and_its_statement_numbers(mariadb: MariaDBServer,
                                                                         mariadb_db: str) -> None:
    """With a non-transactional table touched, MariaDB logs the rolled-back statement's rows and then
    ROLLBACK TO SAVEPOINT: those rows must go, and so must their statement number. (MariaDB only: MySQL
    with GTIDs refuses a transaction that mixes MyISAM and InnoDB, so it never logs this shape.)"""
    server = mariadb
    server.execute(["CREATE TABLE t (id INT PRIMARY KEY) ENGINE=InnoDB",
                     "CREATE TABLE m (id INT) ENGINE=MyISAM"], mariadb_db)
    files = _run(server, mariadb_db, ["BEGIN", "INSERT INTO t VALUES (1)", "SAVEPOINT s",
                                     "INSERT INTO t VALUES (2)", "INSERT INTO m VALUES (9)",
                                     "ROLLBACK TO SAVEPOINT s", "INSERT INTO t VALUES (3)", "COMMIT"])
    events = [e for e in _mine(list(iter_binlog_events(files)), mariadb_db) if e.table == "t"]
    assert [(e.query_index, [_cols(r.after)["id"] for r in e.rows]) for e in events] == [(0, [1]), (1, [3])]
    assert len({e.transaction_id for e in events}) == 1


def test_tagged_gtids_keep_distinct_identities() -> None:
    """Reconstructed events (no MySQL 8.4 server here): uuid:5 and uuid:batch:5 are two transactions."""
    import uuid

    from binlog_model.wire import events as ev
    from binlog_model.wire.header import EventHeader, EventType

    sid = uuid.UUID("1d3a69ea-6308-11e8-b040-0242ac110002")

    def header(kind: int, offset: int) -> EventHeader:
        return EventHeader(1, kind, 1, 10, offset + 10, 0, offset, "binlog.000001")

    stream: list[Any] = []
    for offset, tag in ((100, None), (200, "batch")):
        stream.append(ev.GtidEvent(header(EventType.GTID_LOG_EVENT, offset), flags=1, sid=sid, gno=5,
                                   tag=tag))
        sql = "CREATE DATABASE d1" if tag is None else "CREATE DATABASE d2"
        stream.append(ev.QueryEvent(header(EventType.QUERY_EVENT, offset + 50), thread_id=1,
                                    exec_time=0, error_code=0, schema="", query=sql,
                                    query_bytes=sql.encode()))
    first, second = StatementAssembler().assemble(stream)
    assert (first.server_uuid, first.gtid) == (str(sid), f"{sid}:5")
    assert (second.server_uuid, second.gtid) == (f"{sid}:batch", f"{sid}:batch:5")
    assert (first.server_uuid, first.transaction_id) != (second.server_uuid, second.transaction_id)


def test_tagged_gtids_written_by_mysql_keep_distinct_identities(mysql: MySQLServer, mysql_db: str) -> None:
    """MySQL 8.4+ writes tagged GTIDs (``uuid:tag:n``): the tag is part of the transaction's identity."""
    mysql.execute("CREATE TABLE t (id INT PRIMARY KEY)", mysql_db)
    files = _run(mysql, mysql_db, ["INSERT INTO t VALUES (1)", "SET gtid_next = 'AUTOMATIC:batch'",
                                   "INSERT INTO t VALUES (2)", "SET gtid_next = 'AUTOMATIC'"])
    plain, tagged = _mine(list(iter_binlog_events(files)), mysql_db)
    uuid = str(mysql.query("SELECT @@server_uuid")[0][0])
    assert (plain.server_uuid, tagged.server_uuid) == (uuid, f"{uuid}:batch")
    assert plain.gtid == f"{uuid}:{plain.transaction_id}"
    assert tagged.gtid == f"{uuid}:batch:{tagged.transaction_id}"
    assert [_cols(e.rows[0].after) for e in (plain, tagged)] == [{"id": 1}, {"id": 2}]


def test_xa_prepared_work_waits_for_its_commit_or_rollback(server: LocalServer, fresh_db: str) -> None:
    server.execute("CREATE TABLE t (id INT PRIMARY KEY)", fresh_db)
    files = _run(server, fresh_db, [
        "XA START 'xa1'", "INSERT INTO t VALUES (7)", "XA END 'xa1'", "XA PREPARE 'xa1'", "XA COMMIT 'xa1'",
        "XA START 'xa2'", "INSERT INTO t VALUES (8)", "XA END 'xa2'", "XA PREPARE 'xa2'", "XA ROLLBACK 'xa2'",
        "XA START 'xa3'", "INSERT INTO t VALUES (9)", "XA END 'xa3'", "XA COMMIT 'xa3' ONE PHASE",
    ])
    assembler = StatementAssembler()
    events = _mine(list(iter_binlog_events(files, assembler=assembler)), fresh_db)
    inserted = [_cols(r.after)["id"] for e in events for r in e.rows]
    assert inserted == [7, 9]
    assert assembler.stats.rolled_back_transactions >= 1


def test_xa_prepared_but_never_resolved_is_an_incomplete_transaction(server: LocalServer,
                                                                     fresh_db: str) -> None:
    server.execute("CREATE TABLE t (id INT PRIMARY KEY)", fresh_db)
    conn = server.connect(fresh_db)
    try:
        server.flush_and_collect()
        with conn.cursor() as cur:
            for sql in ["XA START 'open1'", "INSERT INTO t VALUES (1)", "XA END 'open1'",
                        "XA PREPARE 'open1'"]:
                cur.execute(sql)
        files = server.flush_and_collect()
        with pytest.raises(IncompleteTransactionError, match="prepared XA"):
            list(iter_binlog_events(files))
        assert _mine(list(iter_binlog_events(files, allow_incomplete_tail=True)), fresh_db) == []
        with conn.cursor() as cur:
            cur.execute("XA ROLLBACK 'open1'")
    finally:
        conn.close()
