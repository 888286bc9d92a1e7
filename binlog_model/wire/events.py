"""Event type codes, the common header, and one frozen dataclass (plus parser) per non-row event.

Strategy: every event body is parsed by a pure function ``parse_<name>(header, body, ctx)`` where ``body``
is a ``memoryview`` of the bytes after the common header and before the checksum footer, and ``ctx`` is the
``FormatContext`` learned from the FORMAT_DESCRIPTION (header length, post-header lengths). Which parser
handles which type code is one table, ``EVENT_PARSERS``; the decoder owns the stream state (checksums,
table maps, TRANSACTION_PAYLOAD unpacking) and dispatches TABLE_MAP and ROWS events to ``table_map.py`` /
``rows.py``. All reads go through ``Cursor`` so a lying length field raises ``TruncatedEventError``.
Field names follow the upstream sources (``log_event.h``, ``control_events.h``, MariaDB ``log_event.h``).
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import IntEnum
from typing import Any

from binlog_model.errors import BinlogError, DecodeError, EncryptedBinlogError, TruncatedEventError
from binlog_model.wire.cursor import Cursor

__all__ = [
    "EVENT_PARSERS",
    "ROWS_EVENT_TYPES",
    "AnnotateRowsEvent",
    "AppendBlockEvent",
    "BeginLoadQueryEvent",
    "BinlogCheckpointEvent",
    "DeleteFileEvent",
    "EventHeader",
    "EventType",
    "ExecuteLoadQueryEvent",
    "FormatContext",
    "FormatDescriptionEvent",
    "GtidEvent",
    "GtidListEvent",
    "HeartbeatEvent",
    "IgnorableEvent",
    "IncidentEvent",
    "IntvarEvent",
    "MariadbGtidEvent",
    "PreviousGtidsEvent",
    "QueryEvent",
    "RandEvent",
    "RotateEvent",
    "RowsQueryEvent",
    "SkippedEvent",
    "StartEventV3",
    "StopEvent",
    "TransactionContextEvent",
    "TransactionPayloadEvent",
    "UndecodableEvent",
    "UnknownEvent",
    "UserVarEvent",
    "ViewChangeEvent",
    "XaPrepareEvent",
    "XidEvent",
    "event_type_name",
    "parse_format_description_event",
    "parse_start_event_v3",
]


class EventType(IntEnum):
    """Binlog event type codes with the upstream names (MySQL 0..42, MariaDB 160..171)."""

    UNKNOWN_EVENT = 0
    START_EVENT_V3 = 1
    QUERY_EVENT = 2
    STOP_EVENT = 3
    ROTATE_EVENT = 4
    INTVAR_EVENT = 5
    LOAD_EVENT = 6
    SLAVE_EVENT = 7
    CREATE_FILE_EVENT = 8
    APPEND_BLOCK_EVENT = 9
    EXEC_LOAD_EVENT = 10
    DELETE_FILE_EVENT = 11
    NEW_LOAD_EVENT = 12
    RAND_EVENT = 13
    USER_VAR_EVENT = 14
    FORMAT_DESCRIPTION_EVENT = 15
    XID_EVENT = 16
    BEGIN_LOAD_QUERY_EVENT = 17
    EXECUTE_LOAD_QUERY_EVENT = 18
    TABLE_MAP_EVENT = 19
    PRE_GA_WRITE_ROWS_EVENT = 20
    PRE_GA_UPDATE_ROWS_EVENT = 21
    PRE_GA_DELETE_ROWS_EVENT = 22
    WRITE_ROWS_EVENT_V1 = 23
    UPDATE_ROWS_EVENT_V1 = 24
    DELETE_ROWS_EVENT_V1 = 25
    INCIDENT_EVENT = 26
    HEARTBEAT_LOG_EVENT = 27
    IGNORABLE_LOG_EVENT = 28
    ROWS_QUERY_LOG_EVENT = 29
    WRITE_ROWS_EVENT = 30
    UPDATE_ROWS_EVENT = 31
    DELETE_ROWS_EVENT = 32
    GTID_LOG_EVENT = 33
    ANONYMOUS_GTID_LOG_EVENT = 34
    PREVIOUS_GTIDS_LOG_EVENT = 35
    TRANSACTION_CONTEXT_EVENT = 36
    VIEW_CHANGE_EVENT = 37
    XA_PREPARE_LOG_EVENT = 38
    PARTIAL_UPDATE_ROWS_EVENT = 39
    TRANSACTION_PAYLOAD_EVENT = 40
    HEARTBEAT_LOG_EVENT_V2 = 41
    GTID_TAGGED_LOG_EVENT = 42
    # MariaDB (MARIA_EVENTS_BEGIN = 160)
    ANNOTATE_ROWS_EVENT = 160
    BINLOG_CHECKPOINT_EVENT = 161
    GTID_EVENT = 162
    GTID_LIST_EVENT = 163
    START_ENCRYPTION_EVENT = 164
    QUERY_COMPRESSED_EVENT = 165
    WRITE_ROWS_COMPRESSED_EVENT_V1 = 166
    UPDATE_ROWS_COMPRESSED_EVENT_V1 = 167
    DELETE_ROWS_COMPRESSED_EVENT_V1 = 168
    WRITE_ROWS_COMPRESSED_EVENT = 169
    UPDATE_ROWS_COMPRESSED_EVENT = 170
    DELETE_ROWS_COMPRESSED_EVENT = 171


def event_type_name(code: int) -> str:
    """The upstream name of a type code, or ``UNKNOWN_TYPE_<n>`` for codes no server defines."""
    try:
        return EventType(code).name
    except ValueError:
        return f"UNKNOWN_TYPE_{code}"


_T = EventType
ROWS_EVENT_TYPES: frozenset[int] = frozenset({
    _T.PRE_GA_WRITE_ROWS_EVENT, _T.PRE_GA_UPDATE_ROWS_EVENT, _T.PRE_GA_DELETE_ROWS_EVENT,
    _T.WRITE_ROWS_EVENT_V1, _T.UPDATE_ROWS_EVENT_V1, _T.DELETE_ROWS_EVENT_V1,
    _T.WRITE_ROWS_EVENT, _T.UPDATE_ROWS_EVENT, _T.DELETE_ROWS_EVENT, _T.PARTIAL_UPDATE_ROWS_EVENT,
    _T.WRITE_ROWS_COMPRESSED_EVENT_V1, _T.UPDATE_ROWS_COMPRESSED_EVENT_V1, _T.DELETE_ROWS_COMPRESSED_EVENT_V1,
    _T.WRITE_ROWS_COMPRESSED_EVENT, _T.UPDATE_ROWS_COMPRESSED_EVENT, _T.DELETE_ROWS_COMPRESSED_EVENT,
})


@dataclass(frozen=True, slots=True)
class EventHeader:
    """The common header of every event, plus where the event was found.

    ``event_type`` is an ``EventType`` for known codes and a plain ``int`` otherwise. ``log_pos`` is the
    position of the next event in binlog v4 (the event's own start in v3 files of MySQL 4.x; 0 in v1, for
    artificial events and inside a TRANSACTION_PAYLOAD). ``offset`` is where the
    event starts in its file; events unpacked from a TRANSACTION_PAYLOAD carry the payload's offset and
    their index inside it as ``inner_index`` (None for top-level events).
    """

    timestamp: int
    event_type: int
    server_id: int
    event_size: int
    log_pos: int
    flags: int
    offset: int
    file: str | None = None
    inner_index: int | None = None

    @property
    def type_name(self) -> str:
        return event_type_name(self.event_type)


@dataclass(frozen=True, slots=True)
class FormatContext:
    """What the decoder knows about the stream's layout (from FORMAT_DESCRIPTION or START_EVENT_V3)."""

    binlog_version: int
    header_length: int
    post_header_lengths: tuple[int, ...]
    server_version: str = ""

    def post_header_len(self, event_type: int) -> int:
        """The post-header length of ``event_type`` as announced by the FDE, else the v4 default."""
        i = event_type - 1
        if 0 <= i < len(self.post_header_lengths):
            return self.post_header_lengths[i]
        return _DEFAULT_POST_HEADER.get(event_type, 0)


# Post-header lengths of MySQL 5.x/8.x v4 binlogs, used for types the FDE array does not cover.
_DEFAULT_POST_HEADER: dict[int, int] = {
    _T.START_EVENT_V3: 56, _T.QUERY_EVENT: 13, _T.ROTATE_EVENT: 8, _T.LOAD_EVENT: 18,
    _T.CREATE_FILE_EVENT: 4, _T.APPEND_BLOCK_EVENT: 4, _T.EXEC_LOAD_EVENT: 4, _T.DELETE_FILE_EVENT: 4,
    _T.NEW_LOAD_EVENT: 18, _T.FORMAT_DESCRIPTION_EVENT: 84, _T.BEGIN_LOAD_QUERY_EVENT: 4,
    _T.EXECUTE_LOAD_QUERY_EVENT: 26, _T.TABLE_MAP_EVENT: 8, _T.PRE_GA_WRITE_ROWS_EVENT: 6,
    _T.PRE_GA_UPDATE_ROWS_EVENT: 6, _T.PRE_GA_DELETE_ROWS_EVENT: 6, _T.WRITE_ROWS_EVENT_V1: 8,
    _T.UPDATE_ROWS_EVENT_V1: 8, _T.DELETE_ROWS_EVENT_V1: 8, _T.INCIDENT_EVENT: 2, _T.IGNORABLE_LOG_EVENT: 0,
    _T.ROWS_QUERY_LOG_EVENT: 0, _T.WRITE_ROWS_EVENT: 10, _T.UPDATE_ROWS_EVENT: 10, _T.DELETE_ROWS_EVENT: 10,
    _T.GTID_LOG_EVENT: 42, _T.ANONYMOUS_GTID_LOG_EVENT: 42, _T.PREVIOUS_GTIDS_LOG_EVENT: 0,
    _T.TRANSACTION_CONTEXT_EVENT: 18, _T.VIEW_CHANGE_EVENT: 52, _T.XA_PREPARE_LOG_EVENT: 0,
    _T.PARTIAL_UPDATE_ROWS_EVENT: 10, _T.TRANSACTION_PAYLOAD_EVENT: 0,
    _T.ANNOTATE_ROWS_EVENT: 0, _T.BINLOG_CHECKPOINT_EVENT: 4, _T.GTID_EVENT: 19, _T.GTID_LIST_EVENT: 4,
    _T.START_ENCRYPTION_EVENT: 0, _T.QUERY_COMPRESSED_EVENT: 13,
    _T.WRITE_ROWS_COMPRESSED_EVENT_V1: 8, _T.UPDATE_ROWS_COMPRESSED_EVENT_V1: 8,
    _T.DELETE_ROWS_COMPRESSED_EVENT_V1: 8, _T.WRITE_ROWS_COMPRESSED_EVENT: 10,
    _T.UPDATE_ROWS_COMPRESSED_EVENT: 10, _T.DELETE_ROWS_COMPRESSED_EVENT: 10,
}

# Binlog v1 (MySQL 3.23) and v3 (4.0/4.1) fixed post-header lengths (no FDE tells them).
V1_POST_HEADER: dict[int, int] = {_T.START_EVENT_V3: 56, _T.QUERY_EVENT: 11, _T.LOAD_EVENT: 18}
V3_POST_HEADER: dict[int, int] = {
    _T.START_EVENT_V3: 56, _T.QUERY_EVENT: 11, _T.ROTATE_EVENT: 8, _T.LOAD_EVENT: 18,
    _T.CREATE_FILE_EVENT: 4, _T.APPEND_BLOCK_EVENT: 4, _T.EXEC_LOAD_EVENT: 4, _T.DELETE_FILE_EVENT: 4,
    _T.NEW_LOAD_EVENT: 18,
}


def legacy_context(binlog_version: int, server_version: str) -> FormatContext:
    """The layout of a binlog v1 (13-byte header) or v3 (19-byte header) file."""
    table = V1_POST_HEADER if binlog_version == 1 else V3_POST_HEADER
    lengths = tuple(table.get(t, 0) for t in range(1, 20))
    return FormatContext(binlog_version, 13 if binlog_version == 1 else 19, lengths, server_version)


# ----------------------------------------------------------------------------------------------------
# Events


@dataclass(frozen=True, slots=True)
class FormatDescriptionEvent:
    header: EventHeader
    binlog_version: int
    server_version: str
    create_timestamp: int
    header_length: int
    post_header_lengths: tuple[int, ...]
    checksum_alg: int | None  # 0 OFF, 1 CRC32, None when the server predates checksums (or 255 UNDEF)


@dataclass(frozen=True, slots=True)
class StartEventV3:
    header: EventHeader
    binlog_version: int
    server_version: str
    create_timestamp: int


@dataclass(frozen=True, slots=True)
class QueryEvent:
    """QUERY_EVENT (and MariaDB QUERY_COMPRESSED_EVENT with ``compressed=True``, query inflated).

    ``query`` is the text decoded as UTF-8 with ``surrogateescape`` (lossless: encode it back with the same
    handler to get ``query_bytes``); the statement's real charset is in ``charset_client``. Status variables
    the decoder does not know stop the status parse; the rest is kept in ``unknown_status_vars``.
    """

    header: EventHeader
    thread_id: int
    exec_time: int
    error_code: int
    schema: str
    query: str
    query_bytes: bytes
    status_vars: bytes = b""
    flags2: int | None = None
    sql_mode: int | None = None
    catalog: str | None = None
    auto_increment_increment: int | None = None
    auto_increment_offset: int | None = None
    charset_client: int | None = None
    collation_connection: int | None = None
    collation_server: int | None = None
    time_zone: str | None = None
    lc_time_names: int | None = None
    charset_database: int | None = None
    table_map_for_update: int | None = None
    master_data_written: int | None = None
    invoker_user: str | None = None
    invoker_host: str | None = None
    updated_db_names: tuple[str, ...] | None = None
    microseconds: int | None = None
    explicit_defaults_ts: int | None = None
    ddl_xid: int | None = None
    default_collation_for_utf8mb4: int | None = None
    sql_require_primary_key: int | None = None
    default_table_encryption: int | None = None
    hrnow: int | None = None  # MariaDB Q_HRNOW (microseconds)
    xid: int | None = None  # MariaDB Q_XID
    gtid_flags3: int | None = None  # MariaDB Q_GTID_FLAGS3
    character_set_collations: tuple[tuple[int, int], ...] | None = None  # MariaDB 11.2+
    unknown_status_vars: bytes = b""  # from the first unknown status code onwards, unparsed
    compressed: bool = False


@dataclass(frozen=True, slots=True)
class RotateEvent:
    header: EventHeader
    position: int
    next_file: str


@dataclass(frozen=True, slots=True)
class StopEvent:
    header: EventHeader


@dataclass(frozen=True, slots=True)
class XidEvent:
    header: EventHeader
    xid: int


@dataclass(frozen=True, slots=True)
class XaPrepareEvent:
    header: EventHeader
    one_phase: bool
    format_id: int
    gtrid: bytes
    bqual: bytes


@dataclass(frozen=True, slots=True)
class IntvarEvent:
    header: EventHeader
    kind: int  # 1 LAST_INSERT_ID, 2 INSERT_ID
    value: int


@dataclass(frozen=True, slots=True)
class RandEvent:
    header: EventHeader
    seed1: int
    seed2: int


@dataclass(frozen=True, slots=True)
class UserVarEvent:
    """USER_VAR_EVENT. ``value`` is None for NULL, else bytes (STRING), float (REAL), int (INT, with the
    unsigned flag applied) or Decimal (DECIMAL); ``raw_value`` keeps the bytes as logged."""

    header: EventHeader
    name: str
    is_null: bool
    value_type: int | None  # 0 STRING, 1 REAL, 2 INT, 3 ROW, 4 DECIMAL
    charset: int | None
    value: Any
    raw_value: bytes
    flags: int


@dataclass(frozen=True, slots=True)
class IncidentEvent:
    header: EventHeader
    incident: int
    message: str


@dataclass(frozen=True, slots=True)
class HeartbeatEvent:
    """HEARTBEAT_LOG_EVENT (v1: the log name is the body) and HEARTBEAT_LOG_EVENT_V2 (TLV fields)."""

    header: EventHeader
    log_filename: str
    log_position: int | None


@dataclass(frozen=True, slots=True)
class IgnorableEvent:
    header: EventHeader
    raw: bytes


@dataclass(frozen=True, slots=True)
class RowsQueryEvent:
    header: EventHeader
    query: str
    query_bytes: bytes


@dataclass(frozen=True, slots=True)
class GtidEvent:
    """GTID_LOG_EVENT, ANONYMOUS_GTID_LOG_EVENT and GTID_TAGGED_LOG_EVENT (MySQL 8.4+, ``tag`` set).

    Optional fields are None when the server version did not write them (5.6: no logical clock; before
    8.0.1: no commit timestamps; before 8.0.14: no server versions). Timestamps are microseconds since epoch.
    """

    header: EventHeader
    flags: int
    sid: uuid.UUID
    gno: int
    tag: str | None = None
    last_committed: int | None = None
    sequence_number: int | None = None
    immediate_commit_timestamp: int | None = None
    original_commit_timestamp: int | None = None
    transaction_length: int | None = None
    immediate_server_version: int | None = None
    original_server_version: int | None = None
    commit_group_ticket: int | None = None

    @property
    def anonymous(self) -> bool:
        return self.header.event_type == EventType.ANONYMOUS_GTID_LOG_EVENT

    @property
    def gtid(self) -> str:
        return f"{self.sid}:{self.tag}:{self.gno}" if self.tag else f"{self.sid}:{self.gno}"


@dataclass(frozen=True, slots=True)
class PreviousGtidsEvent:
    """PREVIOUS_GTIDS_LOG_EVENT: sid → ``((start, end_exclusive), ...)`` intervals, in logged order."""

    header: EventHeader
    gtid_sets: tuple[tuple[uuid.UUID, tuple[tuple[int, int], ...]], ...]
    tags: tuple[str, ...] = ()  # MySQL 8.4+ tagged format: one tag ("" = untagged) per gtid_sets entry

    def gtid_set_text(self) -> str:
        parts = []
        for i, (sid, intervals) in enumerate(self.gtid_sets):
            iv = ":".join(f"{a}" if b == a + 1 else f"{a}-{b - 1}" for a, b in intervals)
            tag = self.tags[i] if i < len(self.tags) else ""
            name = f"{sid}:{tag}" if tag else str(sid)
            parts.append(f"{name}:{iv}" if iv else name)
        return ",".join(parts)


@dataclass(frozen=True, slots=True)
class TransactionContextEvent:
    header: EventHeader
    server_uuid: str
    thread_id: int
    gtid_specified: bool
    snapshot_version: bytes
    write_set: tuple[bytes, ...]
    read_set: tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class ViewChangeEvent:
    header: EventHeader
    view_id: str
    seq_number: int
    certification_info: bytes  # the rest of the body, unparsed


@dataclass(frozen=True, slots=True)
class TransactionPayloadEvent:
    """TRANSACTION_PAYLOAD_EVENT (MySQL 8.0.20+). The decoder emits the inner events right after it."""

    header: EventHeader
    compression_type: int  # 0 ZSTD, 255 NONE
    payload_size: int
    uncompressed_size: int
    inner_event_count: int


@dataclass(frozen=True, slots=True)
class BeginLoadQueryEvent:
    header: EventHeader
    file_id: int
    block: bytes


@dataclass(frozen=True, slots=True)
class AppendBlockEvent:
    header: EventHeader
    file_id: int
    block: bytes


@dataclass(frozen=True, slots=True)
class DeleteFileEvent:
    header: EventHeader
    file_id: int


@dataclass(frozen=True, slots=True)
class ExecuteLoadQueryEvent:
    """EXECUTE_LOAD_QUERY_EVENT: a QUERY_EVENT plus where the file name sits in the query text."""

    header: EventHeader
    query_event: QueryEvent
    file_id: int
    start_pos: int
    end_pos: int
    dup_handling: int


@dataclass(frozen=True, slots=True)
class AnnotateRowsEvent:
    header: EventHeader
    query: str
    query_bytes: bytes


@dataclass(frozen=True, slots=True)
class MariadbGtidEvent:
    """MariaDB GTID_EVENT (162): the GTID is ``domain_id-server_id-seq_no`` (server_id from the header)."""

    header: EventHeader
    seq_no: int
    domain_id: int
    flags2: int
    commit_id: int | None = None
    xa_format_id: int | None = None
    xa_gtrid: bytes | None = None
    xa_bqual: bytes | None = None
    flags_extra: int | None = None
    extra: bytes = b""

    FL_STANDALONE = 1
    FL_GROUP_COMMIT_ID = 2
    FL_TRANSACTIONAL = 4
    FL_ALLOW_PARALLEL = 8
    FL_WAITED = 16
    FL_DDL = 32
    FL_PREPARED_XA = 64
    FL_COMPLETED_XA = 128

    @property
    def standalone(self) -> bool:
        return bool(self.flags2 & self.FL_STANDALONE)

    @property
    def gtid(self) -> str:
        return f"{self.domain_id}-{self.header.server_id}-{self.seq_no}"


@dataclass(frozen=True, slots=True)
class GtidListEvent:
    header: EventHeader
    flags: int
    gtids: tuple[tuple[int, int, int], ...]  # (domain_id, server_id, seq_no)


@dataclass(frozen=True, slots=True)
class BinlogCheckpointEvent:
    header: EventHeader
    binlog_file: str


@dataclass(frozen=True, slots=True)
class UnknownEvent:
    """A type code without a parser (unknown, obsolete LOAD-era, or vendor-specific such as Aurora's 100).

    ``raw`` is the body (after the common header, before any checksum footer), never dropped."""

    header: EventHeader
    raw: bytes


@dataclass(frozen=True, slots=True)
class UndecodableEvent:
    """An event whose framing is sound but whose body could not be decoded, kept raw for diagnostics.

    Only a decoder built with ``raw_undecodable=True`` (the ``dump`` tool) yields these; everything that
    needs values raises the typed error instead. ``raw`` is the body; ``error`` the error that stopped it.
    """

    header: EventHeader
    raw: bytes
    error: BinlogError


@dataclass(frozen=True, slots=True)
class SkippedEvent:
    """An event whose type was in ``skip_types``: header checked (and its checksum), body not parsed."""

    header: EventHeader
    raw_length: int = field(default=0)


# ----------------------------------------------------------------------------------------------------
# Parsers. Signature: (header, body, ctx) -> event. ``body`` excludes the common header and checksum.

Parser = Callable[[EventHeader, memoryview, FormatContext], Any]

_DOUBLE = struct.Struct("<d")


def _text(raw: bytes) -> str:
    # Lossless: identifiers and statements in non-UTF-8 charsets survive a round trip.
    return raw.decode("utf-8", "surrogateescape")


def _cstr(raw: bytes) -> str:
    return _text(raw.split(b"\0", 1)[0])


def _server_version_tuple(text: str) -> tuple[int, int, int]:
    nums: list[int] = []
    for part in text.split("-", 1)[0].split(".")[:3]:
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


def parse_start_event_v3(header: EventHeader, body: memoryview,
                         ctx: FormatContext | None = None) -> StartEventV3:
    c = Cursor(body)
    version = c.u16("binlog_version")
    server = _cstr(c.bytes(50, "server_version"))
    created = c.u32("create_timestamp")
    return StartEventV3(header, version, server, created)


def parse_format_description_event(header: EventHeader, body: memoryview,
                                   ctx: FormatContext | None = None) -> FormatDescriptionEvent:
    """Parse an FDE body (``body`` still includes the alg byte and the CRC footer, if any)."""
    c = Cursor(body)
    version = c.u16("binlog_version")
    server = _cstr(c.bytes(50, "server_version"))
    created = c.u32("create_timestamp")
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


# Status variable codes of QUERY_EVENT: code -> (field name, reader). MySQL `Query_event_status_vars`
# and MariaDB's additions (128+). Q_COMMIT_TS/Q_COMMIT_TS2 (14/15) were never written by a GA server and
# have no parse rule upstream either: they stop the parse like any unknown code.
def _sv_fixed(n: int) -> Callable[[Cursor], int]:
    return lambda c: c.uint(n, "status variable")


def _sv_str8(c: Cursor) -> str:
    return _text(c.u8_prefixed("status variable string"))


def _sv_catalog_old(c: Cursor) -> str:
    v = _text(c.u8_prefixed("Q_CATALOG_CODE"))
    c.skip(1, "Q_CATALOG_CODE terminator")
    return v


def _sv_invoker(c: Cursor) -> tuple[str, str]:
    return _sv_str8(c), _sv_str8(c)


def _sv_updated_dbs(c: Cursor) -> tuple[str, ...]:
    n = c.u8("Q_UPDATED_DB_NAMES count")
    if n == 254:  # OVER_MAX_DBS_IN_EVENT_MTS: too many to list
        return ()
    return tuple(_text(c.cstring("Q_UPDATED_DB_NAMES name")) for _ in range(n))


def _sv_charset(c: Cursor) -> tuple[int, int, int]:
    return c.u16("charset_client"), c.u16("collation_connection"), c.u16("collation_server")


def _sv_auto_inc(c: Cursor) -> tuple[int, int]:
    return c.u16("auto_increment_increment"), c.u16("auto_increment_offset")


def _sv_charset_collations(c: Cursor) -> tuple[tuple[int, int], ...]:
    n = c.u8("Q_CHARACTER_SET_COLLATIONS count")
    return tuple((c.u16("charset id"), c.u16("collation id")) for _ in range(n))


_STATUS_VARS: dict[int, tuple[str, Callable[[Cursor], Any]]] = {
    0: ("flags2", _sv_fixed(4)),
    1: ("sql_mode", _sv_fixed(8)),
    2: ("catalog", _sv_catalog_old),
    3: ("auto_increment", _sv_auto_inc),
    4: ("charset", _sv_charset),
    5: ("time_zone", _sv_str8),
    6: ("catalog", _sv_str8),
    7: ("lc_time_names", _sv_fixed(2)),
    8: ("charset_database", _sv_fixed(2)),
    9: ("table_map_for_update", _sv_fixed(8)),
    10: ("master_data_written", _sv_fixed(4)),
    11: ("invoker", _sv_invoker),
    12: ("updated_db_names", _sv_updated_dbs),
    13: ("microseconds", _sv_fixed(3)),
    16: ("explicit_defaults_ts", _sv_fixed(1)),
    17: ("ddl_xid", _sv_fixed(8)),
    18: ("default_collation_for_utf8mb4", _sv_fixed(2)),
    19: ("sql_require_primary_key", _sv_fixed(1)),
    20: ("default_table_encryption", _sv_fixed(1)),
    128: ("hrnow", _sv_fixed(3)),
    129: ("xid", _sv_fixed(8)),
    130: ("gtid_flags3", _sv_fixed(1)),
    131: ("character_set_collations", _sv_charset_collations),
}


def _parse_status_vars(raw: memoryview) -> tuple[dict[str, Any], bytes]:
    c = Cursor(raw)
    out: dict[str, Any] = {}
    while c.remaining:
        start = c.pos
        code = c.u8("status variable code")
        rule = _STATUS_VARS.get(code)
        if rule is None:
            return out, bytes(raw[start:])
        name, read = rule
        value = read(c)
        if name == "auto_increment":
            out["auto_increment_increment"], out["auto_increment_offset"] = value
        elif name == "charset":
            out["charset_client"], out["collation_connection"], out["collation_server"] = value
        elif name == "invoker":
            out["invoker_user"], out["invoker_host"] = value
        else:
            out[name] = value
    return out, b""


def _parse_query_parts(header: EventHeader, body: memoryview, post_len: int,
                       compressed: bool = False) -> QueryEvent:
    c = Cursor(body)
    post = c.sub(post_len, "QUERY post-header")
    thread_id = post.u32("thread_id")
    exec_time = post.u32("exec_time")
    schema_len = post.u8("schema length")
    error_code = post.u16("error_code")
    status_len = post.u16("status_vars_len") if post.remaining >= 2 else 0
    status_raw = c.view(status_len, "status variables")
    fields, unknown = _parse_status_vars(status_raw)
    schema = _text(c.bytes(schema_len, "schema name"))
    c.skip(1, "schema NUL terminator")
    query_raw = c.rest()
    if compressed:
        query_raw = decompress_mariadb(query_raw, "QUERY_COMPRESSED query")
    return QueryEvent(header, thread_id, exec_time, error_code, schema, _text(query_raw), query_raw,
                      bytes(status_raw), unknown_status_vars=unknown, compressed=compressed, **fields)


def decompress_mariadb(raw: bytes, what: str) -> bytes:
    """Inflate MariaDB's compressed-event payload: 1 header byte (0x80 | length-of-length), the
    uncompressed length big-endian, then a zlib stream. The stated length bounds the output."""
    c = Cursor(raw)
    first = c.u8(f"{what} compression header")
    nlen = first & 0x07
    if not first & 0x80 or nlen == 0 or nlen > 4:
        raise DecodeError(f"{what}: bad compression header byte 0x{first:02x}", expected="0x81..0x84")
    size = c.uint_be(nlen, f"{what} uncompressed length")
    d = zlib.decompressobj()
    try:
        out = d.decompress(raw[c.pos:], size)
    except zlib.error as err:
        raise DecodeError(f"{what}: zlib stream is corrupt ({err})") from err
    if len(out) != size or not d.eof:
        raise DecodeError(f"{what}: inflated to {len(out)} bytes, header says {size}",
                          expected=f"{size} bytes")
    return out


def parse_query_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> QueryEvent:
    return _parse_query_parts(header, body, ctx.post_header_len(header.event_type))


def parse_query_compressed_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> QueryEvent:
    return _parse_query_parts(header, body, ctx.post_header_len(header.event_type), compressed=True)


def parse_rotate_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> RotateEvent:
    c = Cursor(body)
    # v1 binlogs have no post-header: the position is implicitly 4.
    position = c.u64("rotate position") if ctx.post_header_len(header.event_type) >= 8 else 4
    return RotateEvent(header, position, _text(c.rest()))


def parse_stop_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> StopEvent:
    _fixed_size(header, body, 0, "a STOP event has no body")
    return StopEvent(header)


def _fixed_size(header: EventHeader, body: memoryview, size: int, layout: str) -> Cursor:
    """A cursor over a body that has exactly ``size`` bytes; any other size is the wrong event (an old
    server that numbered its events differently, or corruption), so stop here rather than read on."""
    if len(body) != size:
        error = TruncatedEventError if len(body) < size else DecodeError
        raise error(f"{header.type_name} body is {len(body)} bytes (event of {header.event_size}); it holds "
                    f"exactly {size} ({layout})",
                    expected=f"a {size}-byte body")
    return Cursor(body)


def parse_xid_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> XidEvent:
    return XidEvent(header, _fixed_size(header, body, 8, "the 8-byte xid").u64("xid"))


def parse_xa_prepare_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> XaPrepareEvent:
    c = Cursor(body)
    one_phase = bool(c.u8("one_phase"))
    format_id = c.i32("formatID")
    gtrid_len = c.u32("gtrid_length")
    bqual_len = c.u32("bqual_length")
    if gtrid_len > 64 or bqual_len > 64:  # XIDDATASIZE/2 each
        raise DecodeError(f"XA_PREPARE xid lengths {gtrid_len}/{bqual_len} exceed 64", expected="<= 64")
    gtrid = c.bytes(gtrid_len, "gtrid")
    return XaPrepareEvent(header, one_phase, format_id, gtrid, c.bytes(bqual_len, "bqual"))


def parse_intvar_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> IntvarEvent:
    c = _fixed_size(header, body, 9, "type and 8-byte value")
    return IntvarEvent(header, c.u8("intvar type"), c.u64("intvar value"))


def parse_rand_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> RandEvent:
    c = _fixed_size(header, body, 16, "two 8-byte seeds")
    return RandEvent(header, c.u64("seed1"), c.u64("seed2"))


def _decode_user_var_decimal(raw: bytes) -> Decimal:
    # USER_VAR DECIMAL: precision, scale, then MySQL's binary decimal (big-endian base-10^9 groups,
    # sign in the top bit, negative values stored inverted).
    c = Cursor(raw)
    precision = c.u8("decimal precision")
    scale = c.u8("decimal scale")
    dig2bytes = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)
    intg = precision - scale
    intg0, intg0x = divmod(intg, 9)
    frac0, frac0x = divmod(scale, 9)
    size = intg0 * 4 + dig2bytes[intg0x] + frac0 * 4 + dig2bytes[frac0x]
    data = bytearray(c.bytes(size, "decimal digits"))
    if not data:
        return Decimal(0)
    negative = not data[0] & 0x80
    data[0] ^= 0x80
    if negative:
        data = bytearray(b ^ 0xFF for b in data)
    pos = 0
    digits = ""

    def take(n: int) -> int:
        nonlocal pos
        v = int.from_bytes(data[pos:pos + n], "big")
        pos += n
        return v

    if intg0x:
        digits += str(take(dig2bytes[intg0x]))
    for _ in range(intg0):
        digits += f"{take(4):09d}"
    frac = ""
    for _ in range(frac0):
        frac += f"{take(4):09d}"
    if frac0x:
        frac += f"{take(dig2bytes[frac0x]):0{frac0x}d}"
    text = (digits.lstrip("0") or "0") + ("." + frac if frac else "")
    return Decimal(("-" if negative else "") + text)


def parse_user_var_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> UserVarEvent:
    c = Cursor(body)
    name = _text(c.bytes(c.u32("user var name length"), "user var name"))
    is_null = bool(c.u8("is_null"))
    if is_null:
        return UserVarEvent(header, name, True, None, None, None, b"", 0)
    vtype = c.u8("value type")
    charset = c.u32("charset")
    raw = c.bytes(c.u32("value length"), "value")
    flags = c.u8("flags") if c.remaining else 0
    value: Any
    try:
        if vtype == 1:
            value = _DOUBLE.unpack(raw)[0]
        elif vtype == 2:
            value = int.from_bytes(raw, "little", signed=not flags & 1)
        elif vtype == 4:
            value = _decode_user_var_decimal(raw)
        else:
            value = raw
    except struct.error as err:
        raise TruncatedEventError(f"USER_VAR value of {len(raw)} bytes is not a double",
                                  expected="8 bytes") from err
    return UserVarEvent(header, name, False, vtype, charset, value, raw, flags)


def parse_incident_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> IncidentEvent:
    c = Cursor(body)
    incident = c.u16("incident type")
    msg = _text(c.u8_prefixed("incident message")) if c.remaining else ""
    return IncidentEvent(header, incident, msg)


def parse_heartbeat_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> HeartbeatEvent:
    return HeartbeatEvent(header, _text(bytes(body)), None)


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
            name = _text(value.rest())
        elif ftype == 2:
            position = value.lenenc_int("heartbeat log position")
    return HeartbeatEvent(header, name, position)


def parse_ignorable_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> IgnorableEvent:
    return IgnorableEvent(header, bytes(body))


def parse_rows_query_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> RowsQueryEvent:
    c = Cursor(body)
    c.skip(1, "ROWS_QUERY length byte")  # a 1-byte length, truncated at 255: the real text is the rest
    raw = c.rest()
    return RowsQueryEvent(header, _text(raw), raw)


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
            kw["tag"] = _text(f.bytes(_varlen_uint(f, "tag length"), "tag"))
        elif fid == 4:
            kw["last_committed"] = _varlen_int(f, "last_committed")
        elif fid == 5:
            kw["sequence_number"] = _varlen_int(f, "sequence_number")
        elif fid == 6:
            kw["immediate_commit_timestamp"] = _varlen_uint(f, "immediate_commit_timestamp")
        elif fid == 7:
            kw["original_commit_timestamp"] = _varlen_uint(f, "original_commit_timestamp")
        elif fid == 8:
            kw["transaction_length"] = _varlen_uint(f, "transaction_length")
        elif fid == 9:
            kw["immediate_server_version"] = _varlen_uint(f, "immediate_server_version")
        elif fid == 10:
            kw["original_server_version"] = _varlen_uint(f, "original_server_version")
        elif fid == 11:
            kw["commit_group_ticket"] = _varlen_uint(f, "commit_group_ticket")
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
            tags.append(_text(c.bytes(_varlen_uint(c, "tag length"), "tag")))
        n = c.u64("n_intervals")
        if n * 16 > c.remaining:
            raise TruncatedEventError(f"PREVIOUS_GTIDS claims {n} intervals in {c.remaining} bytes",
                                      expected="n_intervals * 16 bytes")
        intervals = tuple((c.u64("interval start"), c.u64("interval end")) for _ in range(n))
        sets.append((sid, intervals))
    return PreviousGtidsEvent(header, tuple(sets), tuple(tags))


def parse_transaction_context_event(header: EventHeader, body: memoryview,
                                    ctx: FormatContext) -> TransactionContextEvent:
    c = Cursor(body)
    uuid_len = c.u8("server_uuid length")
    thread_id = c.u32("thread_id")
    gtid_specified = bool(c.u8("gtid_specified"))
    snapshot_len = c.u32("snapshot version length")
    write_len = c.u32("write set length")
    read_len = c.u32("read set length")
    server_uuid = _text(c.bytes(uuid_len, "server_uuid"))
    snapshot = c.bytes(snapshot_len, "snapshot version")
    write_set = tuple(c.bytes(c.u16("write set item length"), "write set item") for _ in range(write_len))
    read_set = tuple(c.bytes(c.u16("read set item length"), "read set item") for _ in range(read_len))
    return TransactionContextEvent(header, server_uuid, thread_id, gtid_specified, snapshot, write_set,
                                   read_set)


def parse_view_change_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> ViewChangeEvent:
    c = Cursor(body)
    view_id = _cstr(c.bytes(40, "view_id"))
    seq = c.u64("seq_number")
    return ViewChangeEvent(header, view_id, seq, c.rest())


def parse_begin_load_query_event(header: EventHeader, body: memoryview,
                                 ctx: FormatContext) -> BeginLoadQueryEvent:
    c = Cursor(body)
    return BeginLoadQueryEvent(header, c.u32("file_id"), c.rest())


def parse_append_block_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> AppendBlockEvent:
    c = Cursor(body)
    return AppendBlockEvent(header, c.u32("file_id"), c.rest())


def parse_delete_file_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> DeleteFileEvent:
    return DeleteFileEvent(header, _fixed_size(header, body, 4, "the 4-byte file_id").u32("file_id"))


def parse_execute_load_query_event(header: EventHeader, body: memoryview,
                                   ctx: FormatContext) -> ExecuteLoadQueryEvent:
    # The post-header is QUERY's 13 bytes plus file_id(4) start_pos(4) end_pos(4) dup_handling(1).
    post_len = ctx.post_header_len(header.event_type)
    c = Cursor(body, 13, post_len)
    file_id = c.u32("file_id")
    start = c.u32("fn_pos_start")
    end = c.u32("fn_pos_end")
    dup = c.u8("dup_handling")
    query = _parse_query_parts(header, body, post_len)
    return ExecuteLoadQueryEvent(header, query, file_id, start, end, dup)


def parse_annotate_rows_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> AnnotateRowsEvent:
    raw = bytes(body)
    return AnnotateRowsEvent(header, _text(raw), raw)


def parse_binlog_checkpoint_event(header: EventHeader, body: memoryview,
                                  ctx: FormatContext) -> BinlogCheckpointEvent:
    c = Cursor(body)
    return BinlogCheckpointEvent(header, _text(c.bytes(c.u32("binlog file length"), "binlog file name")))


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


def parse_start_encryption_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> Any:
    raise EncryptedBinlogError("the binlog is encrypted (START_ENCRYPTION_EVENT); decrypt it first",
                               expected="an unencrypted binlog")


def parse_unknown_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> UnknownEvent:
    return UnknownEvent(header, bytes(body))


# Which parser handles which type. TABLE_MAP, ROWS and TRANSACTION_PAYLOAD are stream-level (decoder.py);
# FORMAT_DESCRIPTION and START_EVENT_V3 too, since they change the decoder's context.
EVENT_PARSERS: Mapping[int, Parser] = {
    _T.START_EVENT_V3: parse_start_event_v3,
    _T.QUERY_EVENT: parse_query_event,
    _T.STOP_EVENT: parse_stop_event,
    _T.ROTATE_EVENT: parse_rotate_event,
    _T.INTVAR_EVENT: parse_intvar_event,
    _T.APPEND_BLOCK_EVENT: parse_append_block_event,
    _T.DELETE_FILE_EVENT: parse_delete_file_event,
    _T.RAND_EVENT: parse_rand_event,
    _T.USER_VAR_EVENT: parse_user_var_event,
    _T.FORMAT_DESCRIPTION_EVENT: parse_format_description_event,
    _T.XID_EVENT: parse_xid_event,
    _T.BEGIN_LOAD_QUERY_EVENT: parse_begin_load_query_event,
    _T.EXECUTE_LOAD_QUERY_EVENT: parse_execute_load_query_event,
    _T.INCIDENT_EVENT: parse_incident_event,
    _T.HEARTBEAT_LOG_EVENT: parse_heartbeat_event,
    _T.IGNORABLE_LOG_EVENT: parse_ignorable_event,
    _T.ROWS_QUERY_LOG_EVENT: parse_rows_query_event,
    _T.GTID_LOG_EVENT: parse_gtid_event,
    _T.ANONYMOUS_GTID_LOG_EVENT: parse_gtid_event,
    _T.PREVIOUS_GTIDS_LOG_EVENT: parse_previous_gtids_event,
    _T.TRANSACTION_CONTEXT_EVENT: parse_transaction_context_event,
    _T.VIEW_CHANGE_EVENT: parse_view_change_event,
    _T.XA_PREPARE_LOG_EVENT: parse_xa_prepare_event,
    _T.HEARTBEAT_LOG_EVENT_V2: parse_heartbeat_v2_event,
    _T.GTID_TAGGED_LOG_EVENT: parse_gtid_tagged_event,
    _T.ANNOTATE_ROWS_EVENT: parse_annotate_rows_event,
    _T.BINLOG_CHECKPOINT_EVENT: parse_binlog_checkpoint_event,
    _T.GTID_EVENT: parse_mariadb_gtid_event,
    _T.GTID_LIST_EVENT: parse_gtid_list_event,
    _T.START_ENCRYPTION_EVENT: parse_start_encryption_event,
    _T.QUERY_COMPRESSED_EVENT: parse_query_compressed_event,
}
