"""The one length check every codec does before it reads.

Strategy: codecs read straight from the event's buffer (no Cursor object per value, for speed), so each
one calls ``need`` with what it is about to read; a short buffer becomes ``TruncatedEventError`` naming the
column type and the byte counts, never an ``IndexError`` or ``struct.error``.
"""

from __future__ import annotations

from binlog_model.errors import TruncatedEventError

__all__ = ["Buffer", "need"]

Buffer = memoryview | bytes | bytearray


def need(buf: Buffer, pos: int, n: int, what: str) -> None:
    """Raise ``TruncatedEventError`` unless ``buf[pos:pos + n]`` is fully available."""
    if n < 0 or pos + n > len(buf):
        raise TruncatedEventError(
            f"{what} needs {n} bytes at row offset {pos} but only {max(len(buf) - pos, 0)} remain",
            expected=what,
        )
