"""PARTIAL_UPDATE_ROWS_EVENT (MySQL 8, binlog_row_value_options=PARTIAL_JSON).

No corpus file holds one, so the events here are HAND-BUILT from the documented layout (MySQL's
``Rows_log_event::print_verbose_one_row``): the after-image starts with value_options (packed integer)
and, with PARTIAL_JSON_UPDATES, one bit per JSON column of the table (whether or not in the image).
"""

from __future__ import annotations

import pytest

from binlog_model.errors import TruncatedEventError
from binlog_model.wire.header import EventHeader
from binlog_model.wire.rows import parse_rows_event
from binlog_model.wire.table_map import TableMapEvent, parse_table_map_event
from binlog_model.wire.values import NOT_PRESENT, JsonDiff, JsonDocument


def _header(event_type: int) -> EventHeader:
    return EventHeader(0, event_type, 1, 0, 0, 0, 777, "hand-built")


# TABLE_MAP: table_id 5, db "d", table "t", columns LONG, JSON (meta 4), JSON (meta 4), all nullable.
TABLE_MAP_BODY = bytes.fromhex("050000000000" "0100" "0164" "00" "0174" "00" "03" "03f5f5" "02" "0404" "07")


def _maps() -> dict[int, TableMapEvent]:
    tm = parse_table_map_event(_header(19), memoryview(TABLE_MAP_BODY), 8)
    return {tm.table_id: tm}


def _event(after_tail: bytes) -> bytes:
    return (bytes.fromhex("050000000000" "0100" "0200" "03" "07" "05")  # all 3 before, columns 0+2 after
            + bytes.fromhex("00" "01000000" "02000000" "0401" "02000000" "0402")  # before: 1, true, false
            + after_tail)


def test_partial_json_diff_and_full_json_in_after_image() -> None:
    diff = bytes.fromhex("00" "03" "242e61" "02" "0401")  # REPLACE $.a with true
    # value_options=1; partial bits: JSON column #2 (table column 2) partial; null bitmap; id; diff
    body = _event(bytes.fromhex("01" "02" "00" "01000000") + len(diff).to_bytes(4, "little") + diff)
    ev = parse_rows_event(_header(39), memoryview(body), 10, _maps())
    assert ev.kind == "partial_update" and ev.version == 2
    ((before, after),) = ev.rows
    assert before == (1, JsonDocument(True), JsonDocument(False))
    assert after == (1, NOT_PRESENT, (JsonDiff("REPLACE", "$.a", True),))


def test_value_options_zero_means_full_values() -> None:
    body = _event(bytes.fromhex("00" "00" "01000000" "02000000" "0400"))
    ev = parse_rows_event(_header(39), memoryview(body), 10, _maps())
    ((_, after),) = ev.rows
    assert after == (1, NOT_PRESENT, JsonDocument(None))


def test_truncated_partial_bits() -> None:
    body = _event(bytes.fromhex("01"))
    with pytest.raises(TruncatedEventError, match="partial JSON bitmap"):
        parse_rows_event(_header(39), memoryview(body), 10, _maps()).rows  # noqa: B018 - images decode on access


def test_assembler_refuses_a_diff_that_does_not_apply_to_its_before_value() -> None:
    """The same HAND-BUILT event through the assembler: the diff (REPLACE $.a) targets a before value that is
    the scalar ``false``, which MySQL rejects; a typed JsonDiffError at the event's offset, never a guess.
    (Diffs that apply are resolved: tests/differential/test_mysql_json_partial.py proves that on MySQL
    9.7's bytes.)"""
    from binlog_model.errors import JsonDiffError
    from binlog_model.resolve.assembler import StatementAssembler
    from schema_tracker.history import SchemaHistory
    from schema_tracker.model import Catalog
    from schema_tracker.snapshot import catalog_from_dump

    diff = bytes.fromhex("00" "03" "242e61" "02" "0401")
    body = _event(bytes.fromhex("01" "02" "00" "01000000") + len(diff).to_bytes(4, "little") + diff)
    ev = parse_rows_event(_header(39), memoryview(body), 10, _maps())
    catalog = catalog_from_dump("CREATE DATABASE d; USE d; CREATE TABLE t (id INT, a JSON, b JSON);",
                                Catalog(server_charset="utf8mb4"))
    assembler = StatementAssembler(SchemaHistory(catalog))
    with pytest.raises(JsonDiffError, match=r"REPLACE \$\.a.*no value at the path") as info:
        list(assembler.feed(ev))
    assert info.value.offset == 777
