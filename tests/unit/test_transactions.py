"""resolve.transactions: the routing tables (transaction states, QUERY routes) and the identity rules; and
runs.transactions.TransactionStarts, which routes QUERY events with them."""

from __future__ import annotations

import itertools

import pytest

from binlog_model.position import EventPosition
from binlog_model.resolve.transactions import (
    IN_TRANSACTION,
    NEXT,
    STATEMENT_OPEN,
    QueryKind,
    Step,
    TxState,
    classify_query,
    fallback_identity,
    parse_xa_end,
    savepoint_name,
)
from binlog_model.runs.transactions import TransactionStarts


def test_every_state_has_a_next_state_for_every_step() -> None:
    assert set(NEXT) == set(itertools.product(TxState, Step))
    assert all(NEXT[(state, Step.END)] is TxState.IDLE for state in TxState)
    # A statement closes back to where it opened: inside the transaction, or outside any.
    assert NEXT[(TxState.STATEMENT, Step.STATEMENT_END)] is TxState.OPEN
    assert NEXT[(TxState.LOOSE, Step.STATEMENT_END)] is TxState.IDLE
    assert {TxState.OPEN, TxState.STATEMENT} == IN_TRANSACTION
    assert {TxState.STATEMENT, TxState.LOOSE} == STATEMENT_OPEN


def test_a_transaction_walks_the_table() -> None:
    state = TxState.IDLE
    walk = []
    for step in (Step.BEGIN, Step.STATEMENT, Step.STATEMENT, Step.STATEMENT_END, Step.STATEMENT, Step.END):
        state = NEXT[(state, step)]
        walk.append(state)
    assert walk == [TxState.OPEN, TxState.STATEMENT, TxState.STATEMENT, TxState.OPEN, TxState.STATEMENT,
                    TxState.IDLE]


@pytest.mark.parametrize(("query", "kind"), [
    ("BEGIN", QueryKind.BEGIN),
    ("/* app:1 */ begin", QueryKind.BEGIN),
    ("START TRANSACTION", QueryKind.BEGIN),
    ("XA START 'x'", QueryKind.BEGIN),
    ("XA COMMIT 'x'", QueryKind.XA_END),
    ("xa rollback X'01'", QueryKind.XA_END),
    ("XA END 'x'", QueryKind.XA_OTHER),
    ("COMMIT", QueryKind.COMMIT),
    ("ROLLBACK", QueryKind.ROLLBACK),
    ("ROLLBACK TO SAVEPOINT s1", QueryKind.ROLLBACK_TO),
    ("SAVEPOINT s1", QueryKind.SAVEPOINT),
    ("-- note\nCREATE TABLE t (a INT)", QueryKind.SCHEMA),
    ("COMMITTED_TABLE_RENAME", QueryKind.SCHEMA),
    ("", QueryKind.SCHEMA),
])
def test_queries_are_routed_by_their_first_keywords(query: str, kind: QueryKind) -> None:
    assert classify_query(query) is kind


def test_xa_and_savepoint_names() -> None:
    assert parse_xa_end("XA COMMIT 'g''1', X'0a', 7") == (True, (b"g'1", b"\n", 7))
    assert parse_xa_end("XA ROLLBACK 'g'") == (False, (b"g", b"", 1))
    assert savepoint_name("ROLLBACK TO SAVEPOINT `Sp1`", after="TO") == "sp1"
    assert savepoint_name("SAVEPOINT a;", after="SAVEPOINT") == "a"


def test_fallback_identity_orders_transactions_by_file_and_offset() -> None:
    first = fallback_identity(EventPosition("mysql-bin.000002", 4))
    later = fallback_identity(EventPosition("mysql-bin.000002", 900))
    next_file = fallback_identity(EventPosition("mysql-bin.000003", 4))
    assert first.transaction_id == (2 << 40) | 4 and first.server_uuid == "" and first.gtid == ""
    assert first.transaction_id < later.transaction_id < next_file.transaction_id


def _starts(stream: list[tuple[str, str]]) -> list[int]:
    """The offsets ``TransactionStarts`` reports for a stream of ("gtid" | "query" | "xid" | "rows", text)."""
    import uuid

    from binlog_model.wire import events as ev
    from binlog_model.wire.header import EventHeader, EventType

    detector, found = TransactionStarts(), []
    for offset, (kind, text) in enumerate(stream, start=1):
        header = EventHeader(0, int(EventType.QUERY_EVENT), 1, 10, 0, 0, offset * 100, "binlog.000001")
        event: object
        if kind == "gtid":
            event = ev.GtidEvent(header, flags=1, sid=uuid.UUID(int=1), gno=offset)
        elif kind == "query":
            event = ev.QueryEvent(header, thread_id=1, exec_time=0, error_code=0, schema="", query=text,
                                  query_bytes=text.encode())
        elif kind == "xid":
            event = ev.XidEvent(header, xid=offset)
        else:
            event = object()      # rows and table maps: not counted
        if detector.starts_at(event):
            found.append(offset * 100)
    return found


def test_transaction_starts_with_and_without_gtids() -> None:
    with_gtids = [("gtid", ""), ("query", "BEGIN"), ("rows", ""), ("xid", ""),
                  ("gtid", ""), ("query", "CREATE TABLE t (a int)"),
                  ("gtid", ""), ("query", "BEGIN"), ("query", "SAVEPOINT s"), ("rows", ""),
                  ("query", "ROLLBACK TO SAVEPOINT s"), ("query", "INSERT INTO t VALUES (1)"), ("xid", "")]
    assert _starts(with_gtids) == [100, 500, 700]
    # Without GTIDs a BEGIN starts one, and so does a DDL outside a transaction; the statements inside an
    # open one (routed as the assembler routes them, comments skipped) do not.
    without = [("query", "/* app */ BEGIN"), ("rows", ""), ("query", "SAVEPOINT s"),
               ("query", "ROLLBACK TO s"), ("query", "UPDATE t SET a = 2"), ("query", "COMMIT"),
               ("query", "CREATE TABLE u (a int)"), ("query", "XA START 'x'"), ("rows", ""),
               ("query", "XA END 'x'"), ("xid", ""), ("query", "DROP TABLE u")]
    assert _starts(without) == [100, 700, 800, 1200]
