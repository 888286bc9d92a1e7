"""A statement's SQL text in the output: its charset, its trace comment, and bytes that are not text.

Statements come from QUERY events (DDL, decoded by the wire layer as UTF-8 with surrogate escapes) and from
ROWS_QUERY / ANNOTATE_ROWS events. Text that is not valid goes to ``statement_raw`` as its exact bytes,
never as a guess; ``printable`` shows such text in error messages.
"""

from __future__ import annotations

import re

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.charsets import charset_for_collation_id, make_text_decoder
from binlog_model.compiled import speedups
from binlog_model.framing import varint
from binlog_model.wire import events as ev

__all__ = ["RowStatement", "is_text", "parse_trace_info", "printable", "put_statement", "query_text"]

# The serialized ``statement`` field's tag (length-delimited).
_STATEMENT_TAG = bytes([pb.BinlogEvent.DESCRIPTOR.fields_by_name["statement"].number << 3 | 2])

# A leading plain comment, not an executable (/*!) or optimizer-hint (/*+) comment.
_TRACE = re.compile(r"\A\s*/\*(?![!+])\s*(.*?)\s*\*/", re.S)


def parse_trace_info(statement: str | None) -> str | None:
    """The trace comment that leads a statement, e.g. ``/* reqid:123:service:method */ UPDATE …`` →
    ``"reqid:123:service:method"``. Any leading ``/* … */`` comment is accepted (its text, trimmed);
    MySQL executable comments ``/*! … */`` and optimizer hints ``/*+ … */`` are not trace info."""
    if not statement:
        return None
    m = _TRACE.match(statement)
    return m.group(1) if m and m.group(1) else None


def printable(text: str) -> str:
    """``text`` with the undecodable bytes it carries (surrogate escapes) shown as ``\\xNN``."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def is_text(text: str) -> bool:
    """Whether ``text`` is valid text (no surrogate escapes of undecodable bytes)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def query_text(event: ev.QueryEvent) -> tuple[str, str]:
    """A QUERY's statement as text, and the charset it was logged in ("" when unknown).

    The decoder gives UTF-8 with surrogate escapes; a statement sent in another charset (latin1, gbk, ...)
    is decoded in its ``charset_client`` instead, so its identifiers and text come out right. Bytes valid
    in neither keep their surrogate escapes (``put_statement`` stores them raw)."""
    text = event.query
    collation = event.charset_client
    charset = (charset_for_collation_id(collation) if collation is not None else None) or ""
    if is_text(text) or not charset:
        return text, charset
    decode = make_text_decoder(charset)
    if decode is not None:
        try:
            return decode(event.query_bytes), charset
        except (UnicodeDecodeError, ValueError):
            pass
    return text, charset


def put_statement(out: pb.BinlogEvent, text: str, charset: str, with_text: bool) -> None:
    """Set ``statement`` (when ``with_text``) and ``trace_info``; text that is not valid goes to
    ``statement_raw`` as its exact bytes, never as a guess."""
    valid: bool | None = None
    if with_text:
        # protobuf encodes the text to UTF-8 and refuses surrogate escapes (leaving the field unset): one
        # encode of a statement that can be a 500-row INSERT, not two.
        try:
            out.statement = text
            valid = True
        except ValueError:
            valid = False
            out.statement_raw.data = text.encode("utf-8", "surrogateescape")
            out.statement_raw.charset = charset
    trace = parse_trace_info(text)
    if trace is not None and (valid or is_text(trace)):
        out.trace_info = trace


class RowStatement:
    """The statement a ROWS_QUERY / ANNOTATE_ROWS event logs for the rows events after it: ``text`` (UTF-8
    with surrogate escapes, as the wire layer decodes it) and ``raw``, its bytes."""

    __slots__ = ("_field", "raw", "text")

    def __init__(self, text: str, raw: bytes) -> None:
        self.text = text
        self.raw = raw
        self._field: bytes | None = None        # the serialized field; b"": not strict UTF-8, or no C

    def put(self, out: pb.BinlogEvent, with_text: bool, serialized: bool) -> bytes:
        """What ``put_statement`` sets on ``out``. When the caller splices bytes (``serialized``:
        ``compiled_rows.with_rows``) and the text is strict UTF-8, the ``statement`` field is returned as
        its wire bytes instead (else b""): the same message, without encoding again a text that can be a
        500-row INSERT (protobuf makes a str's UTF-8 copy first: ~4% of a decode of MariaDB binlogs, whose
        ANNOTATE_ROWS events log every statement)."""
        if serialized and with_text:
            field = self._field
            if field is None:
                field = self._field = self._wire()
            if field:
                trace = parse_trace_info(self.text)
                if trace is not None:
                    out.trace_info = trace
                return field
        put_statement(out, self.text, "", with_text)
        return b""

    def _wire(self) -> bytes:
        raw = self.raw
        if speedups is None or not speedups.utf8_valid(raw):
            return b""
        return b"".join((_STATEMENT_TAG, varint(len(raw)), raw))
