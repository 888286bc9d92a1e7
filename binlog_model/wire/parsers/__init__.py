"""Event-body parsers, one module per event family, and ``EVENT_PARSERS``: which parser handles which type.

Every parser is a pure function ``parse_<name>(header, body, ctx) -> event`` (``_common.Parser``): ``body``
is a ``memoryview`` of the bytes after the common header and before the checksum footer, ``ctx`` the
``FormatContext``. All reads go through ``Cursor`` so a lying length field raises ``TruncatedEventError``.
TABLE_MAP, ROWS and TRANSACTION_PAYLOAD are stream-level (the decoder handles them), and so are
FORMAT_DESCRIPTION and START_EVENT_V3, since they change the decoder's layout.
"""

from __future__ import annotations

from collections.abc import Mapping

from binlog_model.wire.header import EventType as _T
from binlog_model.wire.parsers._common import Parser
from binlog_model.wire.parsers.annotate import parse_annotate_rows_event, parse_rows_query_event
from binlog_model.wire.parsers.control import (
    parse_binlog_checkpoint_event,
    parse_format_description_event,
    parse_heartbeat_event,
    parse_heartbeat_v2_event,
    parse_ignorable_event,
    parse_incident_event,
    parse_rotate_event,
    parse_start_encryption_event,
    parse_start_event_v3,
    parse_stop_event,
    parse_unknown_event,
)
from binlog_model.wire.parsers.gtid import (
    parse_gtid_event,
    parse_gtid_list_event,
    parse_gtid_tagged_event,
    parse_mariadb_gtid_event,
    parse_previous_gtids_event,
)
from binlog_model.wire.parsers.misc import (
    parse_append_block_event,
    parse_begin_load_query_event,
    parse_delete_file_event,
    parse_intvar_event,
    parse_rand_event,
    parse_transaction_context_event,
    parse_user_var_event,
    parse_view_change_event,
)
from binlog_model.wire.parsers.query import (
    parse_execute_load_query_event,
    parse_query_compressed_event,
    parse_query_event,
)
from binlog_model.wire.parsers.xa import parse_xa_prepare_event, parse_xid_event

__all__ = ["EVENT_PARSERS", "Parser", "parse_unknown_event"]

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
