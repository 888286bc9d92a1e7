"""Mutators: structure-aware ones over binlog events and DDL text, then plain byte-level ones.

Strategy: every mutant comes from one ``random.Random`` so (seed, input index) reproduces it exactly.
A binlog mutant is split into events (``binlog.split``), gets one to four structural edits (header
lengths, event sizes, lenenc ints, rows bitmaps, TABLE_MAP metadata, QUERY status and text, GTID and
payload lengths, zstd frames re-compressed around mutated inner events, whole events dropped, repeated,
swapped or spliced in from another seed), has its CRC footers recomputed, and sometimes gets byte-level
damage on top (bit flips, interesting values, insertions, deletions, splices). DDL text mutants splice
statement fragments, identifiers, quotes, comments and invalid bytes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from benchmarks.fuzz import binlog as bl

# Values that sit on the edges of the length checks.
INTERESTING = (0, 1, 2, 7, 8, 0x7F, 0x80, 0xFA, 0xFB, 0xFC, 0xFD, 0xFE, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF,
               0x10000, 0xFFFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 1 << 30, (1 << 63) - 1, (1 << 64) - 1)
_KNOWN_TYPES = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 245, 246, 247, 248,
                249, 250, 251, 252, 253, 254, 255)
_EVENT_TYPES = tuple(range(0, 43)) + tuple(range(160, 172)) + (255,)


def _int_bytes(rng: random.Random, width: int, near: int | None = None) -> bytes:
    if near is not None and rng.random() < 0.4:
        value = max(0, near + rng.randint(-2, 2))
    else:
        value = rng.choice(INTERESTING)
    return (value & ((1 << (8 * width)) - 1)).to_bytes(width, "little")


def _overwrite(rng: random.Random, raw: bytearray, lo: int, hi: int) -> None:
    """Overwrite a 1/2/3/4/8-byte int (or a lenenc int) somewhere in [lo, hi)."""
    if hi <= lo:
        return
    pos = rng.randrange(lo, hi)
    if rng.random() < 0.25:
        encoded = bl.lenenc(rng.choice(INTERESTING))
        raw[pos:pos + len(encoded)] = encoded
        return
    width = rng.choice((1, 1, 2, 2, 3, 4, 4, 8))
    raw[pos:pos + width] = _int_bytes(rng, width, hi - pos)


# --- structure-aware edits of one event -------------------------------------------------------------


def _header(rng: random.Random, e: bl.Event, _: Sequence[bytes]) -> None:
    choice = rng.random()
    if choice < 0.45:
        e.raw[9:13] = _int_bytes(rng, 4, len(e.raw))                   # event_size lies
    elif choice < 0.7:
        e.raw[4] = rng.choice(_EVENT_TYPES)                            # another event type
    elif choice < 0.85:
        e.raw[13:17] = _int_bytes(rng, 4)                              # log_pos
    else:
        e.raw[17:19] = _int_bytes(rng, 2)                              # flags


def _rows(rng: random.Random, e: bl.Event, _: Sequence[bytes]) -> None:
    layout = bl.rows_layout(e)
    if layout is None:
        return _generic(rng, e, _)
    choice = rng.random()
    bitmaps = layout.bitmaps_at
    size = layout.bitmap_len * layout.n_bitmaps
    if choice < 0.35 and size:
        # The bitmaps: none present (empty images), all present, or random bits.
        fill = rng.choice((0x00, 0xFF, None))
        for i in range(bitmaps, bitmaps + size):
            e.raw[i] = rng.randrange(256) if fill is None else fill
    elif choice < 0.5:
        count = bl.lenenc_at(e.raw, layout.count_at)
        width = count[1] if count else 1
        e.raw[layout.count_at:layout.count_at + width] = bl.lenenc(rng.choice(INTERESTING[:12]))
    elif choice < 0.6 and layout.extra_len_at is not None:
        e.raw[layout.extra_len_at:layout.extra_len_at + 2] = _int_bytes(rng, 2)
    elif choice < 0.75:
        end = bl.body_range(e)[1]
        cut = rng.randint(layout.images_at, max(layout.images_at, end))
        del e.raw[cut:end]                                             # images cut short
        bl.set_size(e)
    else:
        _overwrite(rng, e.raw, layout.images_at, bl.body_range(e)[1])  # inside the images (JSON offsets..)


def _table_map(rng: random.Random, e: bl.Event, _: Sequence[bytes]) -> None:
    layout = bl.table_map_layout(e)
    if layout is None:
        return _generic(rng, e, _)
    choice = rng.random()
    if choice < 0.25 and layout.count:
        e.raw[layout.types_at + rng.randrange(layout.count)] = rng.choice(_KNOWN_TYPES)
    elif choice < 0.45:
        _overwrite(rng, e.raw, layout.meta_at, layout.meta_at + max(layout.meta_len, 1))
    elif choice < 0.55:
        e.raw[layout.meta_len_at] = rng.choice((0, 1, layout.meta_len + 1, 0xFA))
    elif choice < 0.65:
        e.raw[layout.count_at] = rng.choice((0, 1, layout.count + 1, 0xFA))
    else:
        # Optional metadata TLVs (signedness, charsets, names, enum values, primary key, ...).
        _overwrite(rng, e.raw, layout.optional_at, bl.body_range(e)[1])


def _query(rng: random.Random, e: bl.Event, donors: Sequence[bytes]) -> None:
    layout = bl.query_layout(e)
    if layout is None:
        return _generic(rng, e, donors)
    choice = rng.random()
    end = bl.body_range(e)[1]
    if choice < 0.15:
        e.raw[layout.db_len_at] = rng.choice((0, 1, 0x40, 0xFF))
    elif choice < 0.3:
        e.raw[layout.status_len_at:layout.status_len_at + 2] = _int_bytes(rng, 2, layout.status_len)
    elif choice < 0.5 and layout.status_len:
        _overwrite(rng, e.raw, layout.status_at, layout.status_at + layout.status_len)
    else:
        # The statement text: bytes invalid in UTF-8, a DDL fragment, or a cut.
        text = bytearray(e.raw[layout.query_at:end])
        text = bytearray(mutate_ddl_bytes(rng, bytes(text), ()))
        e.raw[layout.query_at:end] = text
        bl.set_size(e)


def _payload(rng: random.Random, e: bl.Event, donors: Sequence[bytes]) -> None:
    parts = bl.payload_parts(e)
    if parts is None:
        return _generic(rng, e, donors)
    fields, payload = parts
    choice = rng.random()
    if choice < 0.6 and fields.get(2, 255) in (0, 255):
        # Mutate the inner events and wrap them again, so the mutation reaches the inner parsers.
        inner = _zstd_inflate(payload) if fields.get(2) == 0 else payload
        if inner is None:
            return _generic(rng, e, donors)
        log = bl.split(inner, magic=False)
        for _ in range(rng.randint(1, 3)):
            _structural(rng, log, donors)
        new_inner = log.to_bytes()
        new_payload = _zstd_deflate(new_inner) if fields.get(2) == 0 else new_inner
        fields = dict(fields)
        fields[1], fields[3] = len(new_payload), len(new_inner)
        if rng.random() < 0.2:
            fields[rng.choice((1, 3))] = rng.choice(INTERESTING)        # lengths that lie
        replaced = bl.build_payload(bytes(e.raw[:bl.HEADER]), fields, new_payload, e.crc)
        e.raw[:] = replaced.raw
    elif choice < 0.8:
        fields = dict(fields)
        fields[rng.choice((1, 2, 3, rng.randrange(4, 300)))] = rng.choice(INTERESTING)
        e.raw[:] = bl.build_payload(bytes(e.raw[:bl.HEADER]), fields, payload, e.crc).raw
    else:
        # Damage the zstd frame itself (frame header, content size, block headers).
        start = len(e.raw) - (4 if e.crc else 0) - len(payload)
        _overwrite(rng, e.raw, start, start + min(len(payload), 24))


def _generic(rng: random.Random, e: bl.Event, _: Sequence[bytes]) -> None:
    lo, hi = bl.body_range(e)
    _overwrite(rng, e.raw, lo, hi)


_BY_TYPE: dict[int, Callable[[random.Random, bl.Event, Sequence[bytes]], None]] = {
    bl.TABLE_MAP: _table_map, bl.TRANSACTION_PAYLOAD: _payload,
    **dict.fromkeys(bl.ROWS_V1 | bl.ROWS_V2, _rows), **dict.fromkeys(bl.QUERY, _query),
}


def _zstd_inflate(payload: bytes) -> bytes | None:
    import zstandard

    try:
        with zstandard.ZstdDecompressor().stream_reader(payload) as reader:
            return reader.read(16 << 20)
    except zstandard.ZstdError:
        return None


def _zstd_deflate(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor(level=1).compress(data)


# --- whole binlogs -----------------------------------------------------------------------------------


def _structural(rng: random.Random, log: bl.Binlog, donors: Sequence[bytes]) -> None:
    events = log.events
    if not events:
        log.tail = bytes(mutate_bytes(rng, log.tail, donors))
        return
    choice = rng.random()
    i = rng.randrange(len(events))
    if choice < 0.5:
        e = events[i]
        # Mostly the interesting events (rows, TABLE_MAP, QUERY, payload), by their own editor.
        typed = [k for k, ev in enumerate(events) if ev.type in _BY_TYPE]
        if typed and rng.random() < 0.8:
            e = events[rng.choice(typed)]
        _BY_TYPE.get(e.type, _generic)(rng, e, donors)
    elif choice < 0.6:
        _header(rng, events[i], donors)
    elif choice < 0.68:
        del events[i]
    elif choice < 0.76:
        events.insert(i, bl.Event(bytearray(events[i].raw), events[i].crc))
    elif choice < 0.82:
        j = rng.randrange(len(events))
        events[i], events[j] = events[j], events[i]
    elif choice < 0.9 and donors:
        donor = bl.split(rng.choice(donors))
        if donor.events:
            picked = rng.choice(donor.events)
            events.insert(i, bl.Event(bytearray(picked.raw), picked.crc))
    elif choice < 0.93:
        e = events[i]
        lo, hi = bl.body_range(e)
        cut = rng.randint(lo, max(lo, hi))
        del e.raw[cut:hi]
        bl.set_size(e)
    elif choice < 0.97 and i > 0:
        _wrap_in_payload(rng, events, i)
    else:
        e = events[i]
        lo, hi = bl.body_range(e)
        e.raw[hi:hi] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        bl.set_size(e)


def _wrap_in_payload(rng: random.Random, events: list[bl.Event], i: int) -> None:
    """Replace events i..j by one TRANSACTION_PAYLOAD holding them (zstd or uncompressed), as MySQL 8
    does with binlog_transaction_compression, so every seed reaches the payload path; sometimes with
    header fields that lie about the sizes."""
    j = min(len(events), i + rng.randint(1, 6))
    inner = b"".join(bytes(e.raw) for e in events[i:j])
    compressed = rng.random() < 0.7
    payload = _zstd_deflate(inner) if compressed else inner
    fields = {1: len(payload), 2: 0 if compressed else 255, 3: len(inner)}
    if rng.random() < 0.25:
        fields[rng.choice((1, 3))] = rng.choice(INTERESTING)
    wrapped = bl.build_payload(bytes(events[i].raw[:bl.HEADER]), fields, payload, events[i].crc)
    wrapped.raw[4] = bl.TRANSACTION_PAYLOAD
    events[i:j] = [wrapped]


def mutate_bytes(rng: random.Random, data: bytes, donors: Sequence[bytes]) -> bytes:
    """One byte-level edit."""
    out = bytearray(data)
    if not out:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 32)))
    choice = rng.random()
    pos = rng.randrange(len(out))
    if choice < 0.3:
        out[pos] ^= 1 << rng.randrange(8)
    elif choice < 0.45:
        out[pos] = rng.choice((0, 0xFF, 0x7F, 0x80, 0xFB, 0xFC, 0xFE))
    elif choice < 0.6:
        width = rng.choice((2, 4, 8))
        out[pos:pos + width] = _int_bytes(rng, width)
    elif choice < 0.72:
        out[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    elif choice < 0.84:
        del out[pos:pos + rng.randint(1, 64)]
    elif choice < 0.92:
        n = rng.randint(1, 64)
        out[pos:pos] = out[pos:pos + n]
    elif donors:
        donor = rng.choice(donors)
        if donor:
            a = rng.randrange(len(donor))
            out[pos:] = donor[a:a + rng.randint(1, 4096)]
    return bytes(out)


def window(rng: random.Random, data: bytes, limit: int) -> bytes:
    """A large binlog cut to about ``limit`` bytes: its leading events (FDE, PREVIOUS_GTIDS), the DDL
    QUERY events before the window (so tables stay known), then a run of consecutive events."""
    log = bl.split(data)
    if len(data) <= limit or len(log.events) < 4:
        return data
    head = 0
    while head < len(log.events) and log.events[head].type not in (2, 16, 19, 33, 34, 162):
        head += 1
    start = rng.randrange(head, len(log.events))
    kept = log.events[:head]
    for e in log.events[head:start]:
        text = bl.query_text(e) or b""
        word = text.lstrip()[:10].upper()
        if text and not word.startswith((b"BEGIN", b"COMMIT", b"ROLLBACK", b"XA ", b"SAVEPOINT")):
            kept.append(e)
    budget = limit
    for e in log.events[start:]:
        if budget <= 0:
            break
        kept.append(e)
        budget -= len(e.raw)
    return bl.Binlog(log.magic, kept, b"").to_bytes()


def mutate_binlog(rng: random.Random, data: bytes, donors: Sequence[bytes], *, limit: int = 4096) -> bytes:
    """A mutant of one binlog: structural edits, CRCs recomputed, sometimes byte-level damage on top."""
    data = window(rng, data, limit)
    if rng.random() < 0.8:
        log = bl.split(data)
        for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 4))):
            _structural(rng, log, donors)
        data = log.to_bytes()
    if rng.random() < 0.35:
        for _ in range(rng.choice((1, 1, 2, 4, 8))):
            data = mutate_bytes(rng, data, donors)
    return data


# --- DDL text --------------------------------------------------------------------------------------

_FRAGMENTS = (
    b"CREATE TABLE ", b"ALTER TABLE ", b"DROP TABLE ", b"RENAME TABLE ", b" ADD COLUMN ", b" DROP COLUMN ",
    b" MODIFY ", b" CHANGE ", b" PRIMARY KEY ", b"(", b")", b",", b";", b"`", b"'", b'"', b"\\", b"/*", b"*/",
    b"/*!50100 ", b"-- ", b"#", b"\n", b" FIRST", b" AFTER ", b" DEFAULT ", b" CHARACTER SET latin1",
    b" COLLATE utf8mb4_bin", b" NOT NULL", b" GENERATED ALWAYS AS (a+1)", b" int", b" varchar(300)",
    b" enum('a','b')", b" decimal(65,30)", b" LIKE ", b" IF EXISTS ", b" IF NOT EXISTS ", b" TO ", b"db.",
    b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\x00", b"\xf0\x9f\x98\x80", b"`\xff\xfe`", b"a" * 70,
)


def mutate_ddl_bytes(rng: random.Random, text: bytes, donors: Sequence[bytes]) -> bytes:
    """A mutant of one statement's bytes: fragments spliced in, tokens dropped or repeated, invalid
    UTF-8, cuts; or byte-level damage."""
    out = bytearray(text)
    for _ in range(rng.choice((1, 1, 2, 3))):
        pos = rng.randint(0, len(out))
        choice = rng.random()
        if choice < 0.4:
            out[pos:pos] = rng.choice(_FRAGMENTS)
        elif choice < 0.55:
            del out[pos:pos + rng.randint(1, 12)]
        elif choice < 0.65:
            out[pos:pos] = out[pos:pos + rng.randint(1, 40)]
        elif choice < 0.75:
            del out[pos:]
        elif choice < 0.85 and donors:
            donor = rng.choice(donors)
            a = rng.randint(0, len(donor))
            out[pos:pos] = donor[a:a + rng.randint(1, 80)]
        else:
            out[:] = mutate_bytes(rng, bytes(out), donors)
    return bytes(out)


# --- MySQL binary JSON -----------------------------------------------------------------------------


def _json_random(rng: random.Random, depth: int = 0) -> object:
    choice = rng.random()
    if depth < 4 and choice < 0.2:
        return {f"k{i}" if rng.random() < 0.9 else "\u00e9\u20ac": _json_random(rng, depth + 1)
                for i in range(rng.randint(0, 5))}
    if depth < 4 and choice < 0.4:
        return [_json_random(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    return rng.choice((None, True, False, 0, -1, 70000, -(1 << 40), 1 << 63, 1.5, "", "abc", "x" * 130))


def _json_scalar(value: object, large: bool) -> tuple[int, bytes, bool]:
    """(type byte, bytes, inlined?) of a scalar."""
    if value is None or isinstance(value, bool):
        return 0x04, bytes([0 if value is None else 1 if value else 2]), True
    if isinstance(value, int):
        if -(1 << 15) <= value < 1 << 15:
            return 0x05, value.to_bytes(2, "little", signed=True), True
        if large and -(1 << 31) <= value < 1 << 31:
            return 0x07, value.to_bytes(4, "little", signed=True), True
        if value >= 1 << 63:
            return 0x0A, value.to_bytes(8, "little"), False
        return 0x09, value.to_bytes(8, "little", signed=True), False
    if isinstance(value, float):
        import struct

        return 0x0B, struct.pack("<d", value), False
    raw = str(value).encode("utf-8")
    n, varlen = len(raw), bytearray()
    while True:
        varlen.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            break
    return 0x0C, bytes(varlen) + raw, False


def json_encode(value: object, large: bool = False) -> tuple[int, bytes]:
    """(type byte, body) of ``value`` in MySQL's binary JSON format (json_binary.cc)."""
    if not isinstance(value, dict | list):
        t, body, _ = _json_scalar(value, large)
        return t, body
    w = 4 if large else 2
    items = list(value.items()) if isinstance(value, dict) else [(None, v) for v in value]
    keys = [k.encode("utf-8") for k, _ in items if k is not None]
    header = 2 * w + len(keys) * (w + 2) + len(items) * (1 + w)
    tail = bytearray()
    key_entries = bytearray()
    for k in keys:
        key_entries += (header + len(tail)).to_bytes(w, "little") + len(k).to_bytes(2, "little")
        tail += k
    value_entries = bytearray()
    for _, v in items:
        if isinstance(v, dict | list):
            t, body = json_encode(v, large)
            inline = False
        else:
            t, body, inline = _json_scalar(v, large)
        if inline:
            value_entries += bytes([t]) + body.ljust(w, b"\0")
        else:
            value_entries += bytes([t]) + (header + len(tail)).to_bytes(w, "little")
            tail += body
    size = header + len(tail)
    if not large and size >= 1 << 16:
        return json_encode(value, True)
    t = (0x00 if isinstance(value, dict) else 0x02) + (1 if large else 0)
    body = len(items).to_bytes(w, "little") + size.to_bytes(w, "little") + key_entries + value_entries + tail
    return t, bytes(body)


def json_document(rng: random.Random) -> bytes:
    """A random binary JSON document, then damaged: offsets, counts and sizes that lie, entries that
    share a child (a DAG), a bad type byte, or byte-level edits."""
    t, body = json_encode(_json_random(rng), large=rng.random() < 0.3)
    doc = bytearray([t]) + body
    choice = rng.random()
    if choice < 0.15 and len(doc) > 3:
        # A chain of 2-entry arrays whose entries both point at the next one: exponential if followed.
        depth = rng.randint(2, 40)
        chain = bytearray([0x02])
        for level in range(depth):
            remaining = depth - level - 1
            size = 4 + 2 * 3 + remaining * 10 + 4
            chain += (2).to_bytes(2, "little") + size.to_bytes(2, "little")
            chain += bytes([0x02]) + (10).to_bytes(2, "little") + bytes([0x02]) + (10).to_bytes(2, "little")
        chain += (0).to_bytes(2, "little") + (4).to_bytes(2, "little")
        return bytes(chain)
    if choice < 0.6:
        for _ in range(rng.randint(1, 3)):
            _overwrite(rng, doc, 1, len(doc))
    elif choice < 0.7:
        doc[0] = rng.randrange(256)
    elif choice < 0.95:
        doc = bytearray(mutate_bytes(rng, bytes(doc), ()))
    return bytes(doc)
