"""Length-delimited records: a base-128 varint byte length, then that many bytes (what Java's
``writeDelimitedTo`` / ``parseDelimitedFrom`` use). The framing alone, below both its users: the
delimited-protobuf sink (``sinks.delimited``) and the assembler's spill files (``resolve.spill``).

Strategy: never trust a length prefix with an allocation: read in bounded chunks. A stream that ends inside
a record raises ``TruncatedEventError``; a prefix that is not a length raises ``DecodeError``; both carry
the byte offset of the record.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

from binlog_model.errors import BinlogError, DecodeError, TruncatedEventError

__all__ = ["MAX_RECORD_SIZE", "frame", "iter_frames", "varint"]

# protobuf refuses messages of 2 GiB or more; a larger length prefix can only be garbage.
MAX_RECORD_SIZE = (1 << 31) - 1
_CHUNK = 1 << 20


def varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def frame(body: bytes | bytearray | memoryview) -> bytes:
    """Serialized message bytes as one length-delimited record (varint length, then the bytes)."""
    if len(body) > MAX_RECORD_SIZE:
        # protobuf cannot serialize such a message either: the bytes are not one BinlogEvent.
        raise BinlogError(f"a record of {len(body)} bytes exceeds the protobuf limit {MAX_RECORD_SIZE}")
    return varint(len(body)) + bytes(body)


def iter_frames(stream: IO[bytes], *, file: str | None = None) -> Iterator[tuple[int, bytes]]:
    """The (offset, body) of each length-delimited record of ``stream``, unparsed; errors as
    ``iter_delimited``'s for the framing."""
    offset = 0
    while True:
        length, prefix_size = _read_varint(stream, offset, file)
        if length is None:
            return
        yield offset, _read_exact(stream, length, offset, file)
        offset += prefix_size + length


def _read_varint(stream: IO[bytes], offset: int, file: str | None) -> tuple[int | None, int]:
    # (length, prefix size), or (None, 0) at a clean end of stream.
    value = 0
    for i in range(10):
        byte = stream.read(1)
        if not byte:
            if i == 0:
                return None, 0
            raise TruncatedEventError(f"stream ends inside a record length prefix after {i} bytes",
                                      file=file, offset=offset, expected="varint record length")
        b = byte[0]
        value |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            if value > MAX_RECORD_SIZE:
                raise DecodeError(f"record length {value} exceeds the protobuf limit {MAX_RECORD_SIZE}",
                                  file=file, offset=offset, expected="varint record length")
            return value, i + 1
    raise DecodeError("record length prefix is longer than 10 bytes", file=file, offset=offset,
                      expected="varint record length")


def _read_exact(stream: IO[bytes], length: int, offset: int, file: str | None) -> bytes:
    # Bounded chunks, so a garbage length cannot allocate gigabytes before the stream runs out.
    parts: list[bytes] = []
    remaining = length
    while remaining:
        chunk = stream.read(min(remaining, _CHUNK))
        if not chunk:
            raise TruncatedEventError(f"stream ends inside a record: {length - remaining} of {length} "
                                      f"bytes present", file=file, offset=offset,
                                      expected=f"{length}-byte BinlogEvent record")
        parts.append(chunk)
        remaining -= len(chunk)
    return b"".join(parts)
