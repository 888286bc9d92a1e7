"""Parsers of the stream-control events: START_EVENT_V3, FORMAT_DESCRIPTION, ROTATE, STOP, INCIDENT,
HEARTBEAT (v1 and v2), IGNORABLE, MariaDB BINLOG_CHECKPOINT and START_ENCRYPTION, and events with no parser.

FORMAT_DESCRIPTION and START_EVENT_V3 change the decoder's layout, so the decoder calls those two itself
(``ctx`` is optional for them); the others are dispatched through ``parsers.EVENT_PARSERS``.
"""

from __future__ import annotations

from typing import Final, NoReturn

from binlog_model.errors import DecodeError, EncryptedBinlogError, TruncatedEventError
from binlog_model.wire.cursor import Cursor
from binlog_model.wire.events import (
    BinlogCheckpointEvent,
    FormatDescriptionEvent,
    HeartbeatEvent,
    IgnorableEvent,
    IncidentEvent,
    RotateEvent,
    StartEventV3,
    StopEvent,
    UnknownEvent,
)
from binlog_model.wire.header import EventHeader, EventType, FormatContext
from binlog_model.wire.parsers._common import cstr, fixed_size, text

__all__ = [
    "BINLOG_IN_USE_F",
    "fde_has_checksum_alg",
    "format_description_difference",
    "parse_binlog_checkpoint_event",
    "parse_format_description_event",
    "parse_heartbeat_event",
    "parse_heartbeat_v2_event",
    "parse_ignorable_event",
    "parse_incident_event",
    "parse_rotate_event",
    "parse_start_encryption_event",
    "parse_start_event_v3",
    "parse_stop_event",
    "parse_unknown_event",
]


# LOG_EVENT_BINLOG_IN_USE_F: the server sets it in the FORMAT_DESCRIPTION of the file it writes, and clears
# it in place when it closes the file.
BINLOG_IN_USE_F: Final = 0x1

# Where the fields of a FORMAT_DESCRIPTION event lie in its raw bytes (v4 header, then the body), to name
# what differs between two of them.
_FDE_FIELDS: Final = (("timestamp", slice(0, 4)), ("server_id", slice(5, 9)), ("event length", slice(9, 13)),
                      ("log_pos", slice(13, 17)), ("flags", slice(17, 19)), ("binlog version", slice(19, 21)),
                      ("server version", slice(21, 71)), ("creation time", slice(71, 75)),
                      ("header length and post-header lengths", slice(75, None)))


def format_description_difference(saved: bytes, found: bytes) -> str | None:
    """None when two raw FORMAT_DESCRIPTION events are the same file's (equal but for the
    LOG_EVENTBINLOG_IN_USE_F flag, which the server clears when it closes the file: a file read while it
    was active is the same file once rotated); else the names of the fields that differ."""
    if len(saved) == len(found) and len(saved) > 18:
        a, b = bytearray(saved), bytearray(found)
        a[17] &= ~BINLOG_IN_USE_F & 0xFF
        b[17] &= ~BINLOG_IN_USE_F & 0xFF
        if a == b:
            return None
    differ = [name for name, where in _FDE_FIELDS if saved[where] != found[where]]
    if len(saved) != len(found) and "event length" not in differ:
        differ.append("event length")
    return ", ".join(differ) or "its bytes"


def _server_version_tuple(version: str) -> tuple[int, int, int]:
    nums: list[int] = []
    for part in version.split("-", 1)[0].split(".")[:3]:
        digits = ""
        for ch in part:
            if not ch.isdigit():
                break
            digits += ch
        nums.append(int(digits) if digits else 0)
    while len(nums) < 3:
        nums.append(0)
    return nums[0], nums[1], nums[2]


def fde_has_checksum_alg(server_version: str) -> bool:
    """Whether an FDE from this server carries the checksum-algorithm byte (MySQL 5.6.1+, MariaDB 5.3+)."""
    v = _server_version_tuple(server_version)
    split = (5, 3, 0) if "mariadb" in server_version.lower() else (5, 6, 1)
    return v >= split


def _start_fields(c: Cursor) -> tuple[int, str, int]:
    # START_EVENT_V3 and FORMAT_DESCRIPTION open alike: binlog_version, server_version, create_timestamp.
    return c.u16("binlog_version"), cstr(c.bytes(50, "server_version")), c.u32("create_timestamp")


def parse_start_event_v3(header: EventHeader, body: memoryview,
                         ctx: FormatContext | None = None) -> StartEventV3:
    return StartEventV3(header, *_start_fields(Cursor(body)))


def parse_format_description_event(header: EventHeader, body: memoryview,
                                   ctx: FormatContext | None = None) -> FormatDescriptionEvent:
    """Parse an FDE body (``body`` still includes the alg byte and the CRC footer, if any)."""
    c = Cursor(body)
    version, server, created = _start_fields(c)
    header_length = c.u8("header_length")
    rest = bytes(body[c.pos:])
    alg: int | None = None
    # The FDE lists its own post-header length (2+50+4+1+n): whichever layout makes that self-consistent
    # tells whether the alg byte and CRC follow, even if the version string is damaged. The version rule
    # (MySQL 5.6.1+, MariaDB 5.3+) decides only when neither layout is consistent.
    fde_index = EventType.FORMAT_DESCRIPTION_EVENT - 1
    if len(rest) - 5 > fde_index and rest[fde_index] == 57 + len(rest) - 5:
        has_alg = True
    elif len(rest) > fde_index and rest[fde_index] == 57 + len(rest):
        has_alg = False
    else:
        has_alg = fde_has_checksum_alg(server)
    if has_alg:
        if len(rest) < 5:
            raise TruncatedEventError("FORMAT_DESCRIPTION too short for its checksum algorithm byte",
                                      expected="checksum_alg + CRC32")
        alg = rest[-5]
        rest = rest[:-5]
        if alg == 255:
            alg = None
    if header_length < 13:
        raise DecodeError(f"FORMAT_DESCRIPTION announces a {header_length}-byte common header",
                          expected="header_length >= 13")
    return FormatDescriptionEvent(header, version, server, created, header_length, tuple(rest), alg)


def parse_rotate_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> RotateEvent:
    c = Cursor(body)
    # v1 binlogs have no post-header: the position is implicitly 4.
    position = c.u64("rotate position") if ctx.post_header_len(header.event_type) >= 8 else 4
    return RotateEvent(header, position, text(c.rest()))


def parse_stop_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> StopEvent:
    fixed_size(header, body, 0, "a STOP event has no body")
    return StopEvent(header)


def parse_incident_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> IncidentEvent:
    c = Cursor(body)
    incident = c.u16("incident type")
    msg = text(c.u8_prefixed("incident message")) if c.remaining else ""
    return IncidentEvent(header, incident, msg)


def parse_heartbeat_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> HeartbeatEvent:
    return HeartbeatEvent(header, text(bytes(body)), None)


def parse_heartbeat_v2_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> HeartbeatEvent:
    # TLV: type (1 byte), length (length-encoded), value. 1 = log file name, 2 = position (lenenc integer).
    c = Cursor(body)
    name = ""
    position: int | None = None
    while c.remaining:
        ftype = c.u8("heartbeat field type")
        if ftype == 0:  # OTW_HB_HEADER_END_MARK
            break
        value = c.sub(c.lenenc_int("heartbeat field length"), "heartbeat field")
        if ftype == 1:
            name = text(value.rest())
        elif ftype == 2:
            position = value.lenenc_int("heartbeat log position")
    return HeartbeatEvent(header, name, position)


def parse_ignorable_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> IgnorableEvent:
    return IgnorableEvent(header, bytes(body))


def parse_binlog_checkpoint_event(header: EventHeader, body: memoryview,
                                  ctx: FormatContext) -> BinlogCheckpointEvent:
    c = Cursor(body)
    return BinlogCheckpointEvent(header, text(c.bytes(c.u32("binlog file length"), "binlog file name")))


def parse_start_encryption_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> NoReturn:
    raise EncryptedBinlogError("the binlog is encrypted (START_ENCRYPTION_EVENT); decrypt it first",
                               expected="an unencrypted binlog")


def parse_unknown_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> UnknownEvent:
    return UnknownEvent(header, bytes(body))

