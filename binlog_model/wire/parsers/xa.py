"""Parsers of the transaction-end events: XID (commit of an XA-capable engine) and XA_PREPARE."""

from __future__ import annotations

from binlog_model.errors import DecodeError
from binlog_model.wire.cursor import Cursor
from binlog_model.wire.events import XaPrepareEvent, XidEvent
from binlog_model.wire.header import EventHeader, FormatContext
from binlog_model.wire.parsers._common import fixed_size

__all__ = ["parse_xa_prepare_event", "parse_xid_event"]


def parse_xid_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> XidEvent:
    return XidEvent(header, fixed_size(header, body, 8, "the 8-byte xid").u64("xid"))


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

