"""Parsers of the GTID events: MySQL GTID / ANONYMOUS_GTID / GTID_TAGGED and PREVIOUS_GTIDS, MariaDB GTID
and GTID_LIST.

MySQL 8.4's tagged formats use the MySQL serialization library's variable-length integers
(``_varlen_uint``); the older ones are fixed-width.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from binlog_model.errors import DecodeError, TruncatedEventError
from binlog_model.wire.cursor import Cursor
from binlog_model.wire.events import GtidEvent, GtidListEvent, MariadbGtidEvent, PreviousGtidsEvent
from binlog_model.wire.header import EventHeader, FormatContext
from binlog_model.wire.parsers._common import text

__all__ = [
    "parse_gtid_event",
    "parse_gtid_list_event",
    "parse_gtid_tagged_event",
    "parse_mariadb_gtid_event",
    "parse_previous_gtids_event",
]


def _read_u56(c: Cursor, what: str) -> int:
    return c.uint(7, what)


def parse_gtid_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> GtidEvent:
    c = Cursor(body)
    flags = c.u8("gtid flags")
    sid = uuid.UUID(bytes=c.bytes(16, "sid"))
    gno = c.u64("gno")
    kw: dict[str, Any] = {}
    if c.remaining and c.buf[c.pos] == 2:  # LOGICAL_TIMESTAMP_TYPECODE (5.7.6+)
        c.skip(1)
        kw["last_committed"] = c.u64("last_committed")
        kw["sequence_number"] = c.u64("sequence_number")
        if c.remaining >= 7:
            ts = _read_u56(c, "immediate_commit_timestamp")
            if ts & (1 << 55):  # the top bit says an original_commit_timestamp follows
                ts &= ~(1 << 55)
                kw["original_commit_timestamp"] = _read_u56(c, "original_commit_timestamp")
            else:
                kw["original_commit_timestamp"] = ts
            kw["immediate_commit_timestamp"] = ts
        if c.remaining:
            kw["transaction_length"] = c.lenenc_int("transaction_length")
        if c.remaining >= 4:
            sv = c.u32("immediate_server_version")
            if sv & (1 << 31):
                sv &= ~(1 << 31)
                kw["original_server_version"] = c.u32("original_server_version")
            else:
                kw["original_server_version"] = sv
            kw["immediate_server_version"] = sv
    return GtidEvent(header, flags, sid, gno, **kw)


def _varlen_uint(c: Cursor, what: str) -> int:
    # MySQL serialization library: the count of trailing 1-bits in the first byte, plus one, is the total
    # byte count; 0xff means 8 bytes follow. The value sits above those marker bits (little-endian).
    first = c.buf[c.pos] if c.remaining else c.u8(what)
    if first == 0xFF:
        c.skip(1)
        return c.u64(what)
    n = 1
    while first & (1 << (n - 1)):
        n += 1
    return c.uint(n, what) >> n


def _varlen_int(c: Cursor, what: str) -> int:
    v = _varlen_uint(c, what)
    return -(v >> 1) - 1 if v & 1 else v >> 1


# GTID_TAGGED field id -> (GtidEvent field, reader) for the plain integer fields 4..11.
_TAGGED_SCALARS: dict[int, tuple[str, Callable[[Cursor, str], int]]] = {
    4: ("last_committed", _varlen_int),
    5: ("sequence_number", _varlen_int),
    6: ("immediate_commit_timestamp", _varlen_uint),
    7: ("original_commit_timestamp", _varlen_uint),
    8: ("transaction_length", _varlen_uint),
    9: ("immediate_server_version", _varlen_uint),
    10: ("original_server_version", _varlen_uint),
    11: ("commit_group_ticket", _varlen_uint),
}


def parse_gtid_tagged_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> GtidEvent:
    """GTID_TAGGED_LOG_EVENT: a serialization-library message (version byte, then varlen payload size,
    last non-ignorable field id, then (field id, value) pairs). Written from the MySQL 8.4 description;
    not verified against real server bytes."""
    c = Cursor(body)
    version = c.u8("serialization version")
    if version != 2:
        raise DecodeError(f"unsupported GTID_TAGGED serialization version {version}", expected="2")
    payload_size = _varlen_uint(c, "payload size")
    last_non_ignorable = _varlen_uint(c, "last non-ignorable field id")
    fields_len = payload_size - c.pos
    f = c.sub(fields_len, "tagged GTID fields")
    flags, sid, gno = 0, uuid.UUID(int=0), 0
    kw: dict[str, Any] = {}
    while f.remaining:
        fid = _varlen_uint(f, "field id")
        if fid == 0:
            flags = _varlen_uint(f, "gtid_flags")
        elif fid == 1:  # a fixed array of 16 bytes, each one a varlen integer
            sid_bytes = [_varlen_uint(f, "sid byte") for _ in range(16)]
            if max(sid_bytes) > 0xFF:
                raise DecodeError("GTID_TAGGED sid byte out of range", expected="0..255")
            sid = uuid.UUID(bytes=bytes(sid_bytes))
        elif fid == 2:
            gno = _varlen_int(f, "gno")
        elif fid == 3:
            kw["tag"] = text(f.bytes(_varlen_uint(f, "tag length"), "tag"))
        elif fid in _TAGGED_SCALARS:
            name, read = _TAGGED_SCALARS[fid]
            kw[name] = read(f, name)
        elif fid <= last_non_ignorable:
            raise DecodeError(f"GTID_TAGGED field {fid} is unknown and not ignorable",
                              expected=f"field id <= 11 or > {last_non_ignorable}")
        else:
            break  # an ignorable field from a newer server; its width is unknown, so stop here
    kw.setdefault("original_commit_timestamp", kw.get("immediate_commit_timestamp"))
    kw.setdefault("original_server_version", kw.get("immediate_server_version"))
    return GtidEvent(header, flags, sid, gno, **kw)


def parse_previous_gtids_event(header: EventHeader, body: memoryview,
                               ctx: FormatContext) -> PreviousGtidsEvent:
    c = Cursor(body)
    word = c.u64("n_sids")
    tagged = word >> 56 == 1  # MySQL 8.4+: the top byte is a format marker, n_sids sits in bits 8..55
    n_sids = (word >> 8) & ((1 << 48) - 1) if tagged else word
    if n_sids * 24 > c.remaining:
        raise TruncatedEventError(f"PREVIOUS_GTIDS claims {n_sids} sids in {c.remaining} bytes",
                                  expected="n_sids * (16 + 8) bytes at least")
    sets = []
    tags = []
    for _ in range(n_sids):
        sid = uuid.UUID(bytes=c.bytes(16, "sid"))
        if tagged:
            tags.append(text(c.bytes(_varlen_uint(c, "tag length"), "tag")))
        n = c.u64("n_intervals")
        if n * 16 > c.remaining:
            raise TruncatedEventError(f"PREVIOUS_GTIDS claims {n} intervals in {c.remaining} bytes",
                                      expected="n_intervals * 16 bytes")
        intervals = tuple((c.u64("interval start"), c.u64("interval end")) for _ in range(n))
        sets.append((sid, intervals))
    return PreviousGtidsEvent(header, tuple(sets), tuple(tags))


def parse_mariadb_gtid_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> MariadbGtidEvent:
    c = Cursor(body)
    seq_no = c.u64("seq_no")
    domain_id = c.u32("domain_id")
    flags2 = c.u8("flags2")
    kw: dict[str, Any] = {}
    if flags2 & MariadbGtidEvent.FL_GROUP_COMMIT_ID:
        kw["commit_id"] = c.u64("commit_id")
    if flags2 & (MariadbGtidEvent.FL_PREPARED_XA | MariadbGtidEvent.FL_COMPLETED_XA):
        kw["xa_format_id"] = c.u32("xa formatID")
        gtrid_len = c.u8("xa gtrid length")
        bqual_len = c.u8("xa bqual length")
        kw["xa_gtrid"] = c.bytes(gtrid_len, "xa gtrid")
        kw["xa_bqual"] = c.bytes(bqual_len, "xa bqual")
    # The rest of the 19-byte post-header is zero padding; newer servers append flags_extra after it.
    if c.pos < 19 and c.remaining >= 19 - c.pos:
        c.skip(19 - c.pos, "gtid padding")
    if c.remaining:
        kw["flags_extra"] = c.u8("flags_extra")
        kw["extra"] = c.rest()
    return MariadbGtidEvent(header, seq_no, domain_id, flags2, **kw)


def parse_gtid_list_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> GtidListEvent:
    c = Cursor(body)
    word = c.u32("gtid count")
    count, flags = word & 0x0FFFFFFF, word >> 28
    if count * 16 > c.remaining:
        raise TruncatedEventError(f"GTID_LIST claims {count} GTIDs in {c.remaining} bytes",
                                  expected="16 bytes per GTID")
    gtids = tuple((c.u32("domain_id"), c.u32("server_id"), c.u64("seq_no")) for _ in range(count))
    return GtidListEvent(header, flags, gtids)

