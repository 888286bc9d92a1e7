"""The one length check every codec does before it reads.

Strategy: codecs read straight from the event's buffer (no Cursor object per value, for speed), so each
one calls ``need`` with what it is about to read; a short buffer becomes ``TruncatedEventError`` naming the
column type and the byte counts, never an ``IndexError`` or ``struct.error``.
"""

from __future__ import annotations

from binlog_model.errors import TruncatedEventError

__all__ = ["Buffer", "need", "prefixed"]

Buffer = memoryview | bytes | bytearray


def need(buf: Buffer, pos: int, n: int, what: str) -> None:
    """Raise ``TruncatedEventError`` unless ``buf[pos:pos + n]`` is fully available."""
    if n < 0 or pos + n > len(buf):
        raise TruncatedEventError(
            f"{what} needs {n} bytes at row offset {pos} but only {max(len(buf) - pos, 0)} remain",
            expected=what,
        )


def prefixed(buf: Buffer, pos: int, meta: int, what: str) -> tuple[int, int]:
    """Where the value behind a little-endian length prefix of ``meta`` bytes at ``pos`` lies: ``(start,
    end)``, the prefix and the value both checked (JSON, JSON diffs, GEOMETRY, VECTOR: values whose
    decoding costs far more than this call)."""
    start = pos + meta
    if start > len(buf):
        need(buf, pos, meta, f"{what} length")
    end = start + int.from_bytes(buf[pos:start], "little")
    if end > len(buf):
        need(buf, start, end - start, what)
    return start, end
