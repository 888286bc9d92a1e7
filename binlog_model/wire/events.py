"""One frozen dataclass per non-row event, and ``Event``, the union of everything the decoder yields.

Strategy: these are plain values, no parsing (the parsers are in ``parsers/``, one module per event
family; TABLE_MAP and ROWS live in ``table_map.py`` and ``rows.py``). Every event carries the
``EventHeader`` it was found under. Field names follow the upstream sources (``log_event.h``,
``control_events.h``, MariaDB ``log_event.h``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TypeAlias

from binlog_model.errors import BinlogError
from binlog_model.wire.header import EventHeader, EventType
from binlog_model.wire.rows import RowsEvent
from binlog_model.wire.table_map import TableMapEvent

__all__ = [
    "AnnotateRowsEvent",
    "AppendBlockEvent",
    "BeginLoadQueryEvent",
    "BinlogCheckpointEvent",
    "DeleteFileEvent",
    "Event",
    "ExecuteLoadQueryEvent",
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
    "SkippedTransaction",
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
]


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
    value: bytes | float | int | Decimal | None
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


@dataclass(frozen=True, slots=True)
class SkippedTransaction:
    """A whole transaction passed over unparsed (``BinlogDecoder(skip_transactions=True)``): one whose
    events are only its GTID, a QUERY ``BEGIN``, ``skip_types`` events and its XID or QUERY ``COMMIT``.
    ``header``: its GTID event's (where the transaction starts); ``length``: its bytes, GTID to commit."""

    header: EventHeader
    length: int


# Everything ``BinlogDecoder.next_event`` can return (besides ``NEED_DATA``).
Event: TypeAlias = (
    FormatDescriptionEvent
    | StartEventV3
    | QueryEvent
    | RotateEvent
    | StopEvent
    | XidEvent
    | XaPrepareEvent
    | IntvarEvent
    | RandEvent
    | UserVarEvent
    | IncidentEvent
    | HeartbeatEvent
    | IgnorableEvent
    | RowsQueryEvent
    | GtidEvent
    | PreviousGtidsEvent
    | TransactionContextEvent
    | ViewChangeEvent
    | TransactionPayloadEvent
    | BeginLoadQueryEvent
    | AppendBlockEvent
    | DeleteFileEvent
    | ExecuteLoadQueryEvent
    | AnnotateRowsEvent
    | MariadbGtidEvent
    | GtidListEvent
    | BinlogCheckpointEvent
    | UnknownEvent
    | UndecodableEvent
    | SkippedEvent
    | SkippedTransaction
    | TableMapEvent
    | RowsEvent
)
