"""The common event header, the event type codes and the stream layout (the FORMAT_DESCRIPTION context).

Strategy: everything a parser needs to know before it looks at an event body lives here: the type code
(``EventType``), the decoded common header (``EventHeader``) and the stream layout (``FormatContext``:
common-header length and post-header lengths, learned from FORMAT_DESCRIPTION or, for binlog v1/v3, from
the fixed tables below). Nothing here parses bodies; that is ``parsers/`` (by family) and ``table_map.py``
/ ``rows.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

__all__ = [
    "DEFAULT_POST_HEADER",
    "EVENT_TYPES",
    "ROWS_EVENT_TYPES",
    "V1_POST_HEADER",
    "V3_POST_HEADER",
    "EventHeader",
    "EventType",
    "FormatContext",
    "default_context",
    "event_type_name",
    "legacy_context",
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


# Code -> member / name, looked up per event (an Enum call costs a few microseconds).
EVENT_TYPES: dict[int, EventType] = {member.value: member for member in EventType}
_NAMES: dict[int, str] = {code: member.name for code, member in EVENT_TYPES.items()}


def event_type_name(code: int) -> str:
    """The upstream name of a type code, or ``UNKNOWN_TYPE_<n>`` for codes no server defines."""
    name = _NAMES.get(code)
    return name if name is not None else f"UNKNOWN_TYPE_{code}"


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
        return DEFAULT_POST_HEADER.get(event_type, 0)


# Post-header lengths of MySQL 5.x/8.x v4 binlogs, used for types the FDE array does not cover.
DEFAULT_POST_HEADER: dict[int, int] = {
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



def default_context(server_version: str = "") -> FormatContext:
    """The layout of a v4 stream seen without its FORMAT_DESCRIPTION (19-byte header, standard lengths)."""
    lengths = tuple(DEFAULT_POST_HEADER.get(t, 0) for t in range(1, 43))
    return FormatContext(4, 19, lengths, server_version)
