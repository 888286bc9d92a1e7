"""The spec's ``BINLOG '...'`` blocks (real MySQL 5.7 events with CRC32) through ``BinlogDecoder.for_events``.

The bytes are extracted from the spec file at test time (never pasted here). Each block is checked against
the ``mysqlbinlog -vv`` text printed above it in the spec: offsets (``# at``), ``end_log_pos``, server id,
CRC32 footer, event type, ROWS_QUERY text and the TABLE_MAP's ``db``.``table`` and table number.
"""

from __future__ import annotations

import base64
import datetime as dt
import re
from dataclasses import dataclass

import pytest

from binlog_model.errors import ChecksumMismatchError, DecoderStateError
from binlog_model.wire import NEED_DATA, BinlogDecoder, EventType, RowsQueryEvent
from tests._paths import SPEC, require

_TEXT_TYPES = {
    "Rows_query": EventType.ROWS_QUERY_LOG_EVENT,
    "Table_map": EventType.TABLE_MAP_EVENT,
    "Write_rows": EventType.WRITE_ROWS_EVENT,
    "Update_rows": EventType.UPDATE_ROWS_EVENT,
    "Delete_rows": EventType.DELETE_ROWS_EVENT,
}
_HEADER_LINE = re.compile(
    r"^#(\d{6})\s+(\d+):(\d\d):(\d\d) server id (\d+)\s+end_log_pos (\d+) CRC32 0x([0-9a-f]{8})\s+(\w+)(.*)$")


@dataclass
class _Expected:
    at: int
    when: dt.datetime
    server_id: int
    end_log_pos: int
    crc: int
    kind: str
    rest: str
    comment: list[str]


@dataclass
class _Block:
    events: list[bytes]
    expected: list[_Expected]


def _split_events(lines: list[str]) -> list[bytes]:
    """mysqlbinlog prints one base64 string per event; an event ends when its event_size is reached."""
    events: list[bytes] = []
    acc = ""
    for line in lines:
        acc += line.strip()
        if len(acc) % 4:
            continue
        raw = base64.b64decode(acc)
        if len(raw) >= 13 and int.from_bytes(raw[9:13], "little") == len(raw):
            events.append(raw)
            acc = ""
    assert acc == "", "a BINLOG block ends in the middle of an event"
    return events


def _blocks() -> list[_Block]:
    lines = require(SPEC).read_text(encoding="utf-8").splitlines()
    blocks: list[_Block] = []
    headers: list[_Expected] = []
    at = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("# at "):
            at = int(line[5:])
        elif (m := _HEADER_LINE.match(line)) and at is not None:
            d, hh, mm, ss = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
            when = dt.datetime(2000 + int(d[:2]), int(d[2:4]), int(d[4:6]), hh, mm, ss, tzinfo=dt.UTC)
            comment = []
            j = i + 1
            while j < len(lines) and lines[j].startswith("# ") and not lines[j].startswith("# at "):
                comment.append(lines[j][2:])
                j += 1
            headers.append(_Expected(at, when, int(m.group(5)), int(m.group(6)), int(m.group(7), 16),
                                     m.group(8), m.group(9), comment))
            at = None
        elif line == "BINLOG '":
            j = i + 1
            while not lines[j].startswith("'"):
                j += 1
            events = _split_events(lines[i + 1:j])
            blocks.append(_Block(events, headers[-len(events):]))
            i = j
        i += 1
    return blocks


def _decode_block(block: _Block) -> list:
    dec = BinlogDecoder.for_events(server_version="5.7.22-log", checksum=True, file="spec",
                                   start_offset=block.expected[0].at)
    for raw in block.events:
        dec.receive_data(raw)
    dec.receive_data(b"")
    out = list(dec)
    assert dec.next_event() is NEED_DATA
    return out


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
