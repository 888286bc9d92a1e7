"""Parsers of the statement-context events (INTVAR, RAND, USER_VAR), the LOAD DATA file blocks
(BEGIN_LOAD_QUERY, APPEND_BLOCK, DELETE_FILE) and the group-replication events (TRANSACTION_CONTEXT,
VIEW_CHANGE)."""

from __future__ import annotations

import struct
from decimal import Decimal

from binlog_model.errors import TruncatedEventError
from binlog_model.wire.codecs.numeric import newdecimal_size, parse_packed_decimal
from binlog_model.wire.cursor import Cursor
from binlog_model.wire.events import (
    AppendBlockEvent,
    BeginLoadQueryEvent,
    DeleteFileEvent,
    IntvarEvent,
    RandEvent,
    TransactionContextEvent,
    UserVarEvent,
    ViewChangeEvent,
)
from binlog_model.wire.header import EventHeader, FormatContext
from binlog_model.wire.parsers._common import cstr, fixed_size, text
from binlog_model.wire.structs import F64

__all__ = [
    "parse_append_block_event",
    "parse_begin_load_query_event",
    "parse_delete_file_event",
    "parse_intvar_event",
    "parse_rand_event",
    "parse_transaction_context_event",
    "parse_user_var_event",
    "parse_view_change_event",
]


def parse_intvar_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> IntvarEvent:
    c = fixed_size(header, body, 9, "type and 8-byte value")
    return IntvarEvent(header, c.u8("intvar type"), c.u64("intvar value"))


def parse_rand_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> RandEvent:
    c = fixed_size(header, body, 16, "two 8-byte seeds")
    return RandEvent(header, c.u64("seed1"), c.u64("seed2"))


def _decode_user_var_decimal(raw: bytes) -> Decimal:
    # USER_VAR DECIMAL: precision, scale, then the packed binary decimal of the column codec.
    c = Cursor(raw)
    precision = c.u8("decimal precision")
    scale = c.u8("decimal scale")
    data = c.bytes(newdecimal_size(precision, scale), "decimal digits")
    return parse_packed_decimal(data, precision, scale) if data else Decimal(0)


def parse_user_var_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> UserVarEvent:
    c = Cursor(body)
    name = text(c.bytes(c.u32("user var name length"), "user var name"))
    is_null = bool(c.u8("is_null"))
    if is_null:
        return UserVarEvent(header, name, True, None, None, None, b"", 0)
    vtype = c.u8("value type")
    charset = c.u32("charset")
    raw = c.bytes(c.u32("value length"), "value")
    flags = c.u8("flags") if c.remaining else 0
    value: bytes | float | int | Decimal
    try:
        if vtype == 1:
            value = F64.unpack(raw)[0]
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


def parse_transaction_context_event(header: EventHeader, body: memoryview,
                                    ctx: FormatContext) -> TransactionContextEvent:
    c = Cursor(body)
    uuid_len = c.u8("server_uuid length")
    thread_id = c.u32("thread_id")
    gtid_specified = bool(c.u8("gtid_specified"))
    snapshot_len = c.u32("snapshot version length")
    write_len = c.u32("write set length")
    read_len = c.u32("read set length")
    server_uuid = text(c.bytes(uuid_len, "server_uuid"))
    snapshot = c.bytes(snapshot_len, "snapshot version")
    write_set = tuple(c.bytes(c.u16("write set item length"), "write set item") for _ in range(write_len))
    read_set = tuple(c.bytes(c.u16("read set item length"), "read set item") for _ in range(read_len))
    return TransactionContextEvent(header, server_uuid, thread_id, gtid_specified, snapshot, write_set,
                                   read_set)


def parse_view_change_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> ViewChangeEvent:
    c = Cursor(body)
    view_id = cstr(c.bytes(40, "view_id"))
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
    return DeleteFileEvent(header, fixed_size(header, body, 4, "the 4-byte file_id").u32("file_id"))

