"""The in-memory replica, on the committed MariaDB golden binlogs (no server needed).

Each scenario's binlog is decoded with ``image="full"`` and applied; the final table contents asserted here
are worked out by hand from the scenario SQL (fixtures/scenarios/*.sql), not taken from our output. The
failure tests use decoded events with one field edited by hand (named as such) and check the replica
refuses them with a message naming the table, statement and position.
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from typing import Any

import pytest

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.runs.pipeline import iter_binlog_events
from binlog_model.testing.replica import Replica, ReplicaError
from tests._paths import REPO

MARIADB = REPO / "fixtures" / "golden" / "mariadb"


def _events(name: str) -> list[pb.BinlogEvent]:
    return list(iter_binlog_events(sorted((MARIADB / name / "binlogs").iterdir()), image="full"))


def _replayed(name: str) -> Replica:
    replica = Replica()
    replica.apply_all(_events(name))
    return replica


def _rows(replica: Replica, db: str, table: str, *columns: str) -> Counter[tuple[Any, ...]]:
    t = replica.table(db, table)
    return Counter(tuple(row[c] for c in (columns or t.columns)) for row in t.rows())


def test_pk_updates_final_state() -> None:
    r = _replayed("pk_updates")
    assert _rows(r, "pk", "single") == Counter({(103, "three"): 1, (110, "one"): 1})
    assert _rows(r, "pk", "composite") == Counter({(11, "aaa", 10): 1, (11, "ccc", 20): 1})
    assert _rows(r, "pk", "strkey") == Counter({("A", 1): 1, ("ключ", 2): 1})
    assert _rows(r, "pk", "auto") == Counter({(1000, 1): 1, (3000, 3): 1, (3001, 4): 1})
    assert r.table("pk", "composite").primary_key == ("tenant", "code")


def test_transactions_final_state() -> None:
    r = _replayed("transactions")
    assert _rows(r, "txn", "accounts") == Counter({
        (1, "alice", Decimal("140.00")): 1, (2, "bob", Decimal("160.00")): 1,
        (4, "carol", Decimal("20.00")): 1, (5, "dave2", Decimal("10.00")): 1})
    assert _rows(r, "txn", "ledger", "account_id", "amount", "note") == Counter({
        (2, Decimal("30.00"), "transfer in"): 1, (4, Decimal("10.00"), "opening deposit"): 1})
    assert sum(_rows(r, "txn", "audit_log").values()) == 1


def test_multi_table_final_state() -> None:
    r = _replayed("multi_table")
    assert _rows(r, "shop", "customers") == Counter({(1, "ann", "silver"): 1, (2, "ben", "basic"): 1,
                                                     (3, "cat", "gold"): 1})
    assert _rows(r, "shop", "orders") == Counter({(11, 1, Decimal("151.00"), "promoted"): 1,
                                                  (12, 2, Decimal("20.00"), "new"): 1,
                                                  (13, 3, Decimal("100.99"), "gold"): 1})
    assert _rows(r, "shop_archive", "notes") == Counter({(11, "big +1"): 1, (13, "gold customer +1"): 1})


def test_tables_without_primary_key_as_multisets() -> None:
    r = _replayed("no_primary_key")
    assert _rows(r, "nopk", "heap") == Counter({(1, "x", 2.5): 1, (None, "y", None): 1})
    assert _rows(r, "nopk", "uniq_nullable") == Counter({("C", 2): 1, (None, 30): 1, (None, 40): 1})
    assert _rows(r, "nopk", "uniq_not_null") == Counter({(1, "aa", "one"): 1, (1, "cc", "moved"): 1})
    assert _rows(r, "nopk", "plain_myisam") == Counter()


def test_large_statement_final_state() -> None:
    r = _replayed("large_statement")
    rows = _rows(r, "bulk", "items")
    kept = [i for i in range(1, 5001) if i % 10 >= 5]
    assert rows == Counter({(i, i % 10, f"{i:05d}"[::-1], i * 1000 + 1): 1 for i in kept})


def test_added_column_with_a_default_is_refused_on_a_non_empty_table() -> None:
    """ddl_between_dml adds `email DEFAULT 'none'` to a table with rows: the rows' value is not logged."""
    expected = r"ddl\.people SCHEMA .*ADD COLUMN email DEFAULT 'none'.*not in the binlog"
    with pytest.raises(ReplicaError, match=expected):
        _replayed("ddl_between_dml")


def test_partial_images_are_refused() -> None:
    """spec_example runs with binlog_row_image=NOBLOB: the UPDATE's images lack the TEXT columns."""
    with pytest.raises(ReplicaError, match=r"ppc\.campaigns UPDATE at mysql-bin\.000001:\d+ .*image columns"):
        _replayed("spec_example")


# -- refusals on hand-edited events ------------------------------------------------------------------------


def _until(name: str, predicate: Any) -> tuple[Replica, pb.BinlogEvent]:
    """Apply the fixture's events up to the first one matching ``predicate``; return it unapplied."""
    replica = Replica()
    for event in _events(name):
        if predicate(event):
            return replica, event
        replica.apply(event)
    raise AssertionError("no such event")


def test_update_with_a_before_image_unlike_the_replica_is_refused() -> None:
    replica, event = _until("pk_updates", lambda e: e.operation == pb.BinlogEvent.UPDATE)
    edited = pb.BinlogEvent()
    edited.CopyFrom(event)
    edited.rows[0].before[1].value.string_value = "changed by hand"   # hand-edited before image
    with pytest.raises(ReplicaError, match=r"pk\.single UPDATE .*differs from the before image"):
        replica.apply(edited)
    replica.apply(event)   # the real event still applies: the refusal left the row in place
    assert (10, "one") in _rows(replica, "pk", "single")


def test_insert_of_an_existing_key_is_refused() -> None:
    replica, _ = _until("pk_updates", lambda e: e.operation == pb.BinlogEvent.UPDATE)
    inserts = [e for e in _events("pk_updates") if e.operation == pb.BinlogEvent.INSERT]
    with pytest.raises(ReplicaError, match=r"duplicate primary key \{'id': 1\}"):
        replica.apply(inserts[0])   # replayed a second time


def test_delete_of_an_absent_row_without_key_is_refused() -> None:
    replica, event = _until("no_primary_key", lambda e: e.operation == pb.BinlogEvent.DELETE)
    edited = pb.BinlogEvent()
    edited.CopyFrom(event)
    edited.rows[0].before[0].value.int_value = 99   # hand-edited: no such row
    with pytest.raises(ReplicaError, match="no row equal to the before image"):
        replica.apply(edited)


def test_skipped_ddl_is_refused() -> None:
    replica = Replica()
    event = pb.BinlogEvent(db="d", table="t", operation=pb.BinlogEvent.SCHEMA, statement="ALTER TABLE t ...")
    event.schema_changes.add().skipped_statement.statement = "ALTER TABLE t ..."   # hand-built (lenient mode)
    with pytest.raises(ReplicaError, match="cannot apply schema change skipped_statement"):
        replica.apply(event)


def test_events_of_other_databases_are_ignored() -> None:
    replica = Replica(databases=["not_pk"])
    replica.apply_all(_events("pk_updates"))
    assert replica.tables() == {} and replica.applied == 0
