"""TABLE_MAP and rows events: corruption and edge cases on real event bytes (the spec's MySQL 5.7 events).

Each test takes a real event from the spec and truncates or patches it (HAND-MODIFIED bytes, named as
such), then checks the typed error says what and where. Optional metadata decoding is checked on a
HAND-BUILT TLV block appended to the real TABLE_MAP (FULL-metadata real bytes are in test_server_values).
"""

from __future__ import annotations

import base64
import re
import struct

import pytest

from binlog_model.errors import DecodeError, TruncatedEventError, UnsupportedEventError
from binlog_model.wire.header import EventHeader
from binlog_model.wire.rows import parse_rows_event
from binlog_model.wire.table_map import TableMapEvent, parse_table_map_event
from tests._paths import SPEC, require

_HEADER = struct.Struct("<IBIIIH")


def _spec_events() -> list[bytes]:
    text = require(SPEC).read_text(encoding="utf-8")
    block = re.findall(r"BINLOG '\n(.*?)\n'/\*!\*/;", text, flags=re.S)[0]
    blob = "".join(block.split())
    out, pos = [], 0
    while pos < len(blob):
        size = _HEADER.unpack_from(base64.b64decode(blob[pos:pos + 28]))[3]
        chars = (size + 2) // 3 * 4
        out.append(base64.b64decode(blob[pos:pos + chars]))
        pos += chars
    return out


def _header(raw: bytes) -> EventHeader:
    ts, etype, server_id, size, log_pos, flags = _HEADER.unpack_from(raw)
    return EventHeader(ts, etype, server_id, size, log_pos, flags, 4096, "spec-bin.000001")


@pytest.fixture(scope="module")
def spec() -> tuple[bytes, bytes]:
    events = _spec_events()
    table_map = next(e for e in events if e[4] == 19)
    rows = next(e for e in events if e[4] == 30)
    return table_map, rows


def test_table_map_every_truncation_names_where(spec: tuple[bytes, bytes]) -> None:
    raw = spec[0]
    body = raw[19:-4]
    for n in range(len(body)):
        with pytest.raises(TruncatedEventError) as info:
            parse_table_map_event(_header(raw), memoryview(body[:n]), 8)
        err = info.value
        assert (err.file, err.offset, err.event_type) == ("spec-bin.000001", 4096, "TABLE_MAP_EVENT")


def test_table_map_without_optional_metadata_has_none(spec: tuple[bytes, bytes]) -> None:
    tm = parse_table_map_event(_header(spec[0]), memoryview(spec[0][19:-4]), 8)
    assert tm.signedness is None and tm.column_names is None and tm.primary_key is None
    assert tm.column_count == 6


def _tlv(kind: int, value: bytes) -> bytes:
    return bytes([kind, len(value)]) + value


def test_optional_metadata_expanded_per_column(spec: tuple[bytes, bytes]) -> None:
    # HAND-BUILT TLVs appended to the real TABLE_MAP: columns are INT, TEXT, ENUM, TEXT, INT, INT.
    names = b"".join(bytes([len(n)]) + n for n in (b"cid", b"name", b"currency", b"geo", b"shows", b"clicks"))
    extra = (
        _tlv(1, bytes([0b01000000]))  # numeric columns 0, 4, 5: the second (column 4) is unsigned
        + _tlv(2, bytes([45, 1, 63]))  # default utf8mb4_general_ci; character column #1 is binary
        + _tlv(4, names)
        + _tlv(6, b"\x03\x03RUB\x03USD\x03EUR")  # the one ENUM column
        + _tlv(8, b"\x00")
        + _tlv(12, bytes([0b11111000]))
        + _tlv(99, b"xy")
    )
    body = spec[0][19:-4] + extra
    tm = parse_table_map_event(_header(spec[0]), memoryview(body), 8)
    assert tm.signedness == (False, None, None, None, True, False)
    assert tm.charsets == (None, 45, None, 63, None, None)
    assert tm.column_names == ("cid", "name", "currency", "geo", "shows", "clicks")
    assert tm.enum_values == (None, None, (b"RUB", b"USD", b"EUR"), None, None, None)
    assert tm.primary_key == (0,) and tm.primary_key_prefixes == (0,)
    assert tm.visibility == (True, True, True, True, True, False)
    assert tm.unknown_metadata == ((99, b"xy"),)


def test_optional_metadata_errors(spec: tuple[bytes, bytes]) -> None:
    base = spec[0][19:-4]
    with pytest.raises(DecodeError, match="COLUMN_NAME has 1 names for 6 columns"):
        parse_table_map_event(_header(spec[0]), memoryview(base + _tlv(4, b"\x01a")), 8)
    with pytest.raises(TruncatedEventError, match="optional metadata field 4"):
        parse_table_map_event(_header(spec[0]), memoryview(base + b"\x04\x09ab"), 8)
    with pytest.raises(DecodeError, match="primary key names column 9"):
        parse_table_map_event(_header(spec[0]), memoryview(base + _tlv(8, b"\x09")), 8)


def _maps(spec: tuple[bytes, bytes]) -> dict[int, TableMapEvent]:
    tm = parse_table_map_event(_header(spec[0]), memoryview(spec[0][19:-4]), 8)
    return {tm.table_id: tm}


def test_rows_every_truncation_is_typed(spec: tuple[bytes, bytes]) -> None:
    raw = spec[1]
    body = raw[19:-4]
    maps = _maps(spec)
    full = parse_rows_event(_header(raw), memoryview(body), 10, maps)
    assert len(full.rows) == 2
    row_boundary = None
    for n in range(len(body)):
        try:
            ev = parse_rows_event(_header(raw), memoryview(body[:n]), 10, maps)
            ev.rows  # noqa: B018 - the row images are decoded (and their errors raised) on first access
        except TruncatedEventError as err:
            assert (err.file, err.offset, err.event_type) == ("spec-bin.000001", 4096, "WRITE_ROWS_EVENT")
            assert "ppc`.`campaigns" in str(err) or n < 20
            continue
        # A cut exactly between rows is indistinguishable from an event with fewer rows.
        assert len(ev.rows) < 2
        row_boundary = n
    assert row_boundary is not None


def test_rows_column_count_mismatch(spec: tuple[bytes, bytes]) -> None:
    raw = bytearray(spec[1][19:-4])
    raw[10] = 5  # HAND-MODIFIED column count (after table_id 6, flags 2, extra-data length 2)
    with pytest.raises(DecodeError, match="rows event has 5 columns but the TABLE_MAP"):
        parse_rows_event(_header(spec[1]), memoryview(bytes(raw)), 10, _maps(spec))


def test_rows_bad_compressed_payload(spec: tuple[bytes, bytes]) -> None:
    header = _header(spec[1])
    compressed = EventHeader(header.timestamp, 166, header.server_id, header.event_size, header.log_pos,
                             header.flags, header.offset, header.file)
    # v1 compressed layout: table_id, flags, column count, bitmap, then 0x80|n, length, zlib (here junk).
    body = spec[1][19:25] + spec[1][25:27] + b"\x06\x3f" + b"\x81\x10garbage"
    with pytest.raises(DecodeError, match="does not inflate"):
        parse_rows_event(compressed, memoryview(body), 8, _maps(spec))


def test_not_a_rows_event(spec: tuple[bytes, bytes]) -> None:
    header = _header(spec[0])
    with pytest.raises(UnsupportedEventError, match="not a rows event"):
        parse_rows_event(header, memoryview(spec[0][19:-4]), 8, {})
