"""The spec's ``BINLOG '...'`` blocks (real MySQL 5.7 events with CRC32) through ``BinlogDecoder.for_events``.

The bytes are extracted from the spec file at test time (never pasted here). Each block is checked against
the ``mysqlbinlog -vv`` text printed above it in the spec: offsets (``# at``), ``end_log_pos``, server id,
CRC32 footer, event type, ROWS_QUERY text and the TABLE_MAP's ``db``.``table`` and table number.
"""

from __future__ import annotations

import datetime as dt
import re

import pytest

from binlog_model.errors import ChecksumMismatchError, DecoderStateError
from binlog_model.wire import BinlogDecoder, EventType, RowsQueryEvent
from tests._spec import decode_block as _decode_block
from tests._spec import spec_blocks as _blocks

_TEXT_TYPES = {
    "Rows_query": EventType.ROWS_QUERY_LOG_EVENT,
    "Table_map": EventType.TABLE_MAP_EVENT,
    "Write_rows": EventType.WRITE_ROWS_EVENT,
    "Update_rows": EventType.UPDATE_ROWS_EVENT,
    "Delete_rows": EventType.DELETE_ROWS_EVENT,
}



def test_spec_has_the_three_row_blocks() -> None:
    blocks = _blocks()
    assert [len(b.events) for b in blocks] == [3, 3, 3]
    assert [[e.kind for e in b.expected] for b in blocks] == [
        ["Rows_query", "Table_map", "Write_rows"],
        ["Rows_query", "Table_map", "Update_rows"],
        ["Rows_query", "Table_map", "Delete_rows"],
    ]


@pytest.mark.parametrize("index", [0, 1, 2])
def test_spec_block_headers_match_mysqlbinlog(index: int) -> None:
    block = _blocks()[index]
    events = _decode_block(block)
    assert len(events) == len(block.expected)
    for raw, ev, exp in zip(block.events, events, block.expected, strict=True):
        h = ev.header
        assert h.offset == exp.at
        assert h.log_pos == exp.end_log_pos
        assert h.offset + h.event_size == exp.end_log_pos
        assert h.server_id == exp.server_id == 12345
        assert h.event_type == _TEXT_TYPES[exp.kind]
        assert dt.datetime.fromtimestamp(h.timestamp, dt.UTC) == exp.when
        assert int.from_bytes(raw[-4:], "little") == exp.crc  # the footer mysqlbinlog printed
        assert h.file == "spec" and h.inner_index is None


@pytest.mark.parametrize("index", [0, 1, 2])
def test_spec_rows_query_text_and_table_map(index: int) -> None:
    block = _blocks()[index]
    rows_query, table_map, rows = _decode_block(block)
    assert isinstance(rows_query, RowsQueryEvent)
    # the spec's text lost trailing blanks; the event keeps them
    assert [line.rstrip() for line in rows_query.query.splitlines()] == block.expected[0].comment
    assert rows_query.query_bytes.decode() == rows_query.query
    # "Table_map: `ppc`.`campaigns` mapped to number 108"
    m = re.search(r"`(\w+)`\.`(\w+)` mapped to number (\d+)", block.expected[1].rest)
    assert m is not None
    expected_map = (m.group(1), m.group(2), int(m.group(3)))
    assert (table_map.schema, table_map.table, table_map.table_id) == expected_map
    # "Write_rows: table id 108 flags: STMT_END_F": dispatch reached the rows parser with the table map
    assert rows.table_id == int(m.group(3))
    assert rows.table_map is table_map
    assert "STMT_END_F" in block.expected[2].rest and rows.flags & 0x1


def test_spec_block_with_a_flipped_byte_fails_its_checksum() -> None:
    block = _blocks()[0]
    raw = bytearray(block.events[0])
    raw[30] ^= 0x20  # inside the ROWS_QUERY text
    dec = BinlogDecoder.for_events(file="spec", start_offset=block.expected[0].at)
    dec.receive_data(bytes(raw))
    with pytest.raises(ChecksumMismatchError) as info:
        dec.next_event()
    assert info.value.stored == block.expected[0].crc
    assert info.value.offset == block.expected[0].at
    assert info.value.event_type == "ROWS_QUERY_LOG_EVENT"
    with pytest.raises(DecoderStateError):
        dec.next_event()


def test_spec_rows_without_their_table_map_are_a_state_error() -> None:
    block = _blocks()[0]
    dec = BinlogDecoder.for_events(file="spec")
    dec.receive_data(block.events[2])  # WRITE_ROWS alone
    with pytest.raises(DecoderStateError):
        dec.next_event()
