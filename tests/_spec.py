"""The spec (seed 000) as test input: its real MySQL 5.7 ``BINLOG '…'`` event bytes, the ``mysqlbinlog``
header lines printed above them, and its schema DDL — all read from the spec file at test time, never
copied into the repository. Tests that use it skip when the shared folder is absent.
"""

from __future__ import annotations

import base64
import datetime as dt
import re
import struct
from dataclasses import dataclass
from typing import Any

from binlog_model.wire import NEED_DATA, BinlogDecoder
from tests._paths import SPEC, require

_HEADER = struct.Struct("<IBIIIH")
_HEADER_LINE = re.compile(
    r"^#(\d{6})\s+(\d+):(\d\d):(\d\d) server id (\d+)\s+end_log_pos (\d+) CRC32 0x([0-9a-f]{8})\s+(\w+)(.*)$")


def spec_text() -> str:
    return require(SPEC).read_text(encoding="utf-8")


def split_base64_events(text: str) -> list[bytes]:
    """Concatenated per-event base64 strings (as mysqlbinlog prints them), split by each event_size."""
    blob = "".join(text.split())
    events = []
    pos = 0
    while pos < len(blob):
        head = base64.b64decode(blob[pos:pos + 28])  # 28 chars = 21 bytes, covers the 19-byte header
        size = _HEADER.unpack_from(head)[3]
        chars = (size + 2) // 3 * 4
        raw = base64.b64decode(blob[pos:pos + chars])
        assert len(raw) == size, "a base64 block ends in the middle of an event"
        events.append(raw)
        pos += chars
    return events


@dataclass
class Expected:
    """One ``mysqlbinlog`` header line of the spec: ``# at``, time, server id, end_log_pos, CRC, type."""

    at: int
    when: dt.datetime
    server_id: int
    end_log_pos: int
    crc: int
    kind: str
    rest: str
    comment: list[str]


@dataclass
class Block:
    """The events of one ``BINLOG '…'`` block and the header lines printed for them."""

    events: list[bytes]
    expected: list[Expected]


def spec_blocks() -> list[Block]:
    lines = spec_text().splitlines()
    blocks: list[Block] = []
    headers: list[Expected] = []
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
            headers.append(Expected(at, when, int(m.group(5)), int(m.group(6)), int(m.group(7), 16),
                                    m.group(8), m.group(9), comment))
            at = None
        elif line == "BINLOG '":
            j = i + 1
            while not lines[j].startswith("'"):
                j += 1
            events = split_base64_events("".join(lines[i + 1:j]))
            blocks.append(Block(events, headers[-len(events):]))
            i = j
        i += 1
    return blocks


def decode_block(block: Block) -> list[Any]:
    """A block's events through ``BinlogDecoder.for_events`` (MySQL 5.7 layout, CRC32 verified), at the
    offsets mysqlbinlog printed, in a stream named ``spec``."""
    dec = BinlogDecoder.for_events(server_version="5.7.22-log", checksum=True, file="spec",
                                   start_offset=block.expected[0].at)
    for raw in block.events:
        dec.receive_data(raw)
    dec.receive_data(b"")
    out = list(dec)
    assert dec.next_event() is NEED_DATA
    return out


def spec_schema_sql() -> str:
    """The spec's ``CREATE DATABASE `ppc`; USE `ppc`; CREATE TABLE `campaigns` (…);`` block."""
    m = re.search(r"```sql\n(CREATE DATABASE `ppc`;.*?)```", spec_text(), re.S)
    assert m, "the spec's schema block was not found"
    return m.group(1)


def spec_create_table() -> str:
    m = re.search(r"CREATE TABLE `campaigns` \(.*?\n\);", spec_text(), re.S)
    assert m, "the spec's CREATE TABLE `campaigns` was not found"
    return m.group(0)
