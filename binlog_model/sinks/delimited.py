"""Length-delimited protobuf streams of ``BinlogEvent`` s: the framing, its reader, and the sink.

Strategy: each record is a base-128 varint byte length followed by the message bytes (what Java's
``writeDelimitedTo`` / ``parseDelimitedFrom`` use). ``iter_delimited`` reads lazily and never trusts a
length prefix with an allocation: it reads in bounded chunks. A stream that ends inside a record raises
``TruncatedEventError``; bytes that are not a record raise ``DecodeError``; both carry the byte offset of
the record. ``DelimitedSink.write_serialized`` frames bytes that already are a serialized ``BinlogEvent``
(a compiled row builder's output), so they are written without being parsed back into a message.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from typing import IO

from google.protobuf.message import DecodeError as _ProtobufDecodeError
from google.protobuf.message import Message

from binlog_model.errors import BinlogError, DecodeError, TruncatedEventError
from binlog_model.messages import BinlogEvent
from binlog_model.sinks.base import EventSink

__all__ = ["MAX_RECORD_SIZE", "DelimitedSink", "encode_delimited", "frame", "iter_delimited", "iter_frames",
           "parse_delimited", "read_delimited", "write_delimited"]

# protobuf refuses messages of 2 GiB or more; a larger length prefix can only be garbage.
MAX_RECORD_SIZE = (1 << 31) - 1
_CHUNK = 1 << 20


def _varint(n: int) -> bytes:
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
    return _varint(len(body)) + bytes(body)


def encode_delimited(event: Message) -> bytes:
    """``event`` as one length-delimited record (varint length, then the message bytes)."""
    body = event.SerializeToString()
    return _varint(len(body)) + body


class DelimitedSink(EventSink):
    """``BinlogEvent`` s as length-delimited protobuf records on a binary stream."""

    def encode(self, event: Message) -> bytes:
        return encode_delimited(event)

    def write_serialized(self, body: bytes | bytearray | memoryview) -> int:
        """Append one record from bytes that already are a serialized ``BinlogEvent`` (not parsed or
        checked here); returns the bytes written."""
        return self._append(frame(body))


def write_delimited(stream: IO[bytes], events: Message | Iterable[Message]) -> int:
    """Write one message, or each of an iterable of them, to a binary stream as length-delimited records.

    Returns the number of bytes written. The stream stays open.
    """
    if isinstance(events, Message):
        events = (events,)
    sink = DelimitedSink(stream)
    for event in events:
        sink.write(event)
    return sink.bytes_written


def iter_delimited(stream: IO[bytes], *, file: str | None = None) -> Iterator[BinlogEvent]:
    """Yield the ``BinlogEvent`` records of a length-delimited binary stream, reading lazily.

    ``file`` names the stream in errors. Raises ``TruncatedEventError`` when the stream ends inside a
    record (length prefix or body) and ``DecodeError`` for a malformed length prefix, a length above
    ``MAX_RECORD_SIZE``, or bytes that do not parse as a ``BinlogEvent``; errors carry the record's offset.
    """
    for offset, body in iter_frames(stream, file=file):
        event = BinlogEvent()
        try:
            event.ParseFromString(body)
        except _ProtobufDecodeError as exc:
            raise DecodeError(f"record of {len(body)} bytes is not a BinlogEvent: {exc}", file=file,
                              offset=offset, expected="BinlogEvent message bytes") from exc
        yield event


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


read_delimited = iter_delimited  # an alias kept for callers of the earlier name


def parse_delimited(data: bytes | bytearray | memoryview, *, file: str | None = None) -> list[BinlogEvent]:
    """All records of a length-delimited byte string (see ``iter_delimited`` for errors)."""
    return list(iter_delimited(io.BytesIO(bytes(data)), file=file))


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
