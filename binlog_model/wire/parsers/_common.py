"""What every event-body parser shares: its signature, lossless text decoding and the fixed-size check."""

from __future__ import annotations

from collections.abc import Callable

from binlog_model.errors import DecodeError, TruncatedEventError
from binlog_model.wire.cursor import Cursor
from binlog_model.wire.events import Event
from binlog_model.wire.header import EventHeader, FormatContext

__all__ = ["Parser", "cstr", "fixed_size", "text"]

# (header, body, ctx) -> event. ``body`` is the bytes after the common header and before any checksum
# footer; ``ctx`` the stream layout (post-header lengths) learned from the FORMAT_DESCRIPTION.
Parser = Callable[[EventHeader, memoryview, FormatContext], Event]


def text(raw: bytes) -> str:
    # Lossless: identifiers and statements in non-UTF-8 charsets survive a round trip.
    return raw.decode("utf-8", "surrogateescape")


def cstr(raw: bytes) -> str:
    """The text before the first NUL (fixed-width, NUL-padded fields such as server_version)."""
    return text(raw.split(b"\0", 1)[0])


def fixed_size(header: EventHeader, body: memoryview, size: int, layout: str) -> Cursor:
    """A cursor over a body that has exactly ``size`` bytes; any other size is the wrong event (an old
    server that numbered its events differently, or corruption), so stop here rather than read on."""
    if len(body) != size:
        error = TruncatedEventError if len(body) < size else DecodeError
        raise error(f"{header.type_name} body is {len(body)} bytes (event of {header.event_size}); it holds "
                    f"exactly {size} ({layout})",
                    expected=f"a {size}-byte body")
    return Cursor(body)
