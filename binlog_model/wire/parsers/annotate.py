"""Parsers of the events that carry a row event's original statement: MySQL ROWS_QUERY_LOG_EVENT and
MariaDB ANNOTATE_ROWS_EVENT."""

from __future__ import annotations

from binlog_model.wire.cursor import Cursor
from binlog_model.wire.events import AnnotateRowsEvent, RowsQueryEvent
from binlog_model.wire.header import EventHeader, FormatContext
from binlog_model.wire.parsers._common import text

__all__ = ["parse_annotate_rows_event", "parse_rows_query_event"]


def parse_rows_query_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> RowsQueryEvent:
    c = Cursor(body)
    c.skip(1, "ROWS_QUERY length byte")  # a 1-byte length, truncated at 255: the real text is the rest
    raw = c.rest()
    return RowsQueryEvent(header, text(raw), raw)


def parse_annotate_rows_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> AnnotateRowsEvent:
    raw = bytes(body)
    return AnnotateRowsEvent(header, text(raw), raw)

