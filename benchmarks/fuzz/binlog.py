"""Just enough binlog structure for structure-aware mutation: events, their CRC footers, field offsets.

Strategy: a v4 file is the magic, then events of ``event_size`` bytes (19-byte header). Splitting is
forgiving (a broken tail is kept as raw bytes) because seeds and earlier mutants may be damaged. An event
whose stored CRC32 matched before mutation gets a fresh CRC afterwards, so mutations reach the parsers
even with checksum verification on. Offsets of the fields worth mutating (rows bitmaps, TABLE_MAP
metadata, QUERY status block) are found by walking the layout the server writes; a layout that does not
parse gives no offsets and the caller falls back to generic mutations.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

MAGIC = b"\xfebin"
HEADER = 19
_U32 = struct.Struct("<I")

ROWS_V1 = frozenset({23, 24, 25, 166, 167, 168})
ROWS_V2 = frozenset({30, 31, 32, 39, 169, 170, 171})
ROWS_UPDATE = frozenset({24, 31, 39, 167, 170})
TABLE_MAP = 19
QUERY = frozenset({2, 165})
FORMAT_DESCRIPTION = 15
TRANSACTION_PAYLOAD = 40


@dataclass
class Event:
    raw: bytearray
    crc: bool  # the stored CRC32 matched when the event was split off

    @property
    def type(self) -> int:
        return self.raw[4] if len(self.raw) > 4 else -1


@dataclass
class Binlog:
    magic: bytes
    events: list[Event]
    tail: bytes  # bytes after the last whole event (a cut event, garbage)

    def to_bytes(self) -> bytes:
        out = bytearray(self.magic)
        for e in self.events:
            if e.crc and len(e.raw) >= HEADER + 4:
                e.raw[-4:] = _U32.pack(zlib.crc32(e.raw[:-4]))
            out += e.raw
        out += self.tail
        return bytes(out)


def has_crc(raw: bytes | bytearray) -> bool:
    return len(raw) >= HEADER + 4 and _U32.unpack_from(raw, len(raw) - 4)[0] == zlib.crc32(raw[:-4])


def split(data: bytes, *, magic: bool = True) -> Binlog:
    """Events of a v4 stream (``magic``: it starts with ``\\xfebin``)."""
    pos = 4 if magic and data[:4] == MAGIC else 0
    events: list[Event] = []
    while len(data) - pos >= HEADER:
        size = _U32.unpack_from(data, pos + 9)[0]
        if size < HEADER or pos + size > len(data):
            break
        raw = bytearray(data[pos:pos + size])
        events.append(Event(raw, has_crc(raw)))
        pos += size
    return Binlog(data[:4] if magic and data[:4] == MAGIC else b"", events, data[pos:])


def set_size(event: Event) -> None:
    """Make the header's event_size match the event's length again."""
    if len(event.raw) >= HEADER:
        event.raw[9:13] = _U32.pack(len(event.raw))


def body_range(event: Event) -> tuple[int, int]:
    """Start and end of the body (after the header, before a CRC footer)."""
    return HEADER, len(event.raw) - (4 if event.crc else 0)


def lenenc_at(raw: bytes | bytearray, pos: int) -> tuple[int, int] | None:
    """(value, length of the encoding) of a length-encoded int at ``pos``, or None past the end."""
    if pos >= len(raw):
        return None
    first = raw[pos]
    width = {0xFC: 2, 0xFD: 3, 0xFE: 8}.get(first)
    if first < 0xFB:
        return first, 1
    if width is None or pos + 1 + width > len(raw):
        return None
    return int.from_bytes(raw[pos + 1:pos + 1 + width], "little"), 1 + width


def lenenc(value: int) -> bytes:
    if value < 0xFB:
        return bytes([value])
    if value < 1 << 16:
        return b"\xfc" + value.to_bytes(2, "little")
    if value < 1 << 24:
        return b"\xfd" + value.to_bytes(3, "little")
    return b"\xfe" + (value & (1 << 64) - 1).to_bytes(8, "little")


@dataclass(frozen=True)
class RowsLayout:
    count_at: int        # offset of the lenenc column count
    bitmaps_at: int      # first columns-present bitmap
    bitmap_len: int
    n_bitmaps: int
    images_at: int       # first row image
    extra_len_at: int | None


def rows_layout(event: Event) -> RowsLayout | None:
    t = event.type
    if t not in ROWS_V1 and t not in ROWS_V2:
        return None
    raw = event.raw
    pos = HEADER + 8
    extra_at = None
    if t in ROWS_V2:
        if len(raw) < pos + 2:
            return None
        extra_at = pos
        extra = int.from_bytes(raw[pos:pos + 2], "little")
        pos += 2 + max(extra - 2, 0)
    got = lenenc_at(raw, pos)
    if got is None:
        return None
    count, width = got
    blen = (count + 7) >> 3
    n = 2 if t in ROWS_UPDATE else 1
    images = pos + width + n * blen
    if images > len(raw):
        return None
    return RowsLayout(pos, pos + width, blen, n, images, extra_at)


@dataclass(frozen=True)
class TableMapLayout:
    count_at: int
    types_at: int
    count: int
    meta_len_at: int
    meta_at: int
    meta_len: int
    optional_at: int     # optional metadata TLVs (after the NULL bitmap)


def table_map_layout(event: Event) -> TableMapLayout | None:
    if event.type != TABLE_MAP:
        return None
    raw = event.raw
    end = body_range(event)[1]
    pos = HEADER + 8
    for _ in range(2):  # schema and table name: length byte, name, NUL
        if pos >= end:
            return None
        pos += 1 + raw[pos] + 1
    got = lenenc_at(raw, pos)
    if got is None:
        return None
    count, width = got
    types_at = pos + width
    meta_len_at = types_at + count
    got = lenenc_at(raw, meta_len_at)
    if got is None:
        return None
    meta_len, width = got
    meta_at = meta_len_at + width
    optional_at = meta_at + meta_len + ((count + 7) >> 3)
    if optional_at > end:
        return None
    return TableMapLayout(pos, types_at, count, meta_len_at, meta_at, meta_len, optional_at)


@dataclass(frozen=True)
class QueryLayout:
    db_len_at: int
    status_len_at: int
    status_at: int
    status_len: int
    query_at: int


def query_layout(event: Event, post_header: int = 13) -> QueryLayout | None:
    if event.type not in QUERY:
        return None
    raw = event.raw
    base = HEADER
    if len(raw) < base + post_header:
        return None
    db_len = raw[base + 8]
    status_len = int.from_bytes(raw[base + 11:base + 13], "little")
    status_at = base + post_header
    query_at = status_at + status_len + db_len + 1
    if query_at > body_range(event)[1]:
        return None
    return QueryLayout(base + 8, base + 11, status_at, status_len, query_at)


def query_text(event: Event) -> bytes | None:
    layout = query_layout(event)
    if layout is None:
        return None
    return bytes(event.raw[layout.query_at:body_range(event)[1]])


def payload_parts(event: Event) -> tuple[dict[int, int], bytes] | None:
    """TRANSACTION_PAYLOAD header fields and the payload bytes, or None when they do not parse."""
    if event.type != TRANSACTION_PAYLOAD:
        return None
    raw = event.raw
    pos, end = body_range(event)
    fields: dict[int, int] = {}
    while True:
        got = lenenc_at(raw, pos)
        if got is None:
            return None
        ftype, width = got
        pos += width
        if ftype == 0:
            break
        got = lenenc_at(raw, pos)
        if got is None:
            return None
        flen, width = got
        pos += width
        value = lenenc_at(raw, pos)
        if value is None or pos + flen > end:
            return None
        fields[ftype] = value[0]
        pos += flen
    return fields, bytes(raw[pos:end])


def build_payload(header: bytes, fields: dict[int, int], payload: bytes, crc: bool) -> Event:
    """A TRANSACTION_PAYLOAD event with the given header (19 bytes, reused) and fields."""
    body = bytearray()
    for ftype, value in fields.items():
        encoded = lenenc(value)
        body += lenenc(ftype) + lenenc(len(encoded)) + encoded
    body += b"\x00" + payload
    raw = bytearray(header[:HEADER]) + body + (b"\0\0\0\0" if crc else b"")
    event = Event(raw, crc)
    set_size(event)
    return event
