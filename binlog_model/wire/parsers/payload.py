"""MySQL TRANSACTION_PAYLOAD_EVENT (8.0.20+, binlog_transaction_compression): the payload header, the
(zstd) inflation, and the cut of the inflated bytes into inner events.

The decoder decodes the inner events itself (they share its stream state: table maps, layout), so this
module hands it the header fields and the inner events' bytes, one at a time: a compressed transaction of
millions of rows is one event, and inflating it whole would make memory grow with the transaction.
"""

from __future__ import annotations

from collections.abc import Iterator

from binlog_model.errors import DecodeError, TruncatedEventError, UnsupportedEventError
from binlog_model.wire.cursor import Cursor
from binlog_model.wire.structs import U32

__all__ = ["EAGER_MAX", "inner_events", "unpack_transaction_payload"]

_ZSTD = 0
_NONE = 255


#: payloads that inflate to at most this many bytes are inflated at once; larger ones a chunk at a time
EAGER_MAX = 8 << 20
_CHUNK = 1 << 20


def unpack_transaction_payload(body: memoryview, max_uncompressed: int) -> tuple[int, int, int, memoryview]:
    """``(compression_type, payload_size, uncompressed_size, payload)`` of a payload event body: the header
    fields and the (still compressed) payload bytes. Refuses an uncompressed size beyond
    ``max_uncompressed`` before inflating anything; ``inner_events`` inflates."""
    # Header fields are (type, length, value) triples of length-encoded integers up to the end mark 0.
    c = Cursor(body)
    fields: dict[int, int] = {}
    while True:
        ftype = c.lenenc_int("payload field type")
        if ftype == 0:  # OTW_PAYLOAD_HEADER_END_MARK
            break
        value = c.sub(c.lenenc_int("payload field length"), "payload field value")
        fields[ftype] = value.lenenc_int("payload field value") if value.remaining else 0
    payload = c.view(c.remaining, "payload")
    size = fields.get(1, len(payload))
    compression = fields.get(2, _NONE)
    uncompressed_size = fields.get(3, len(payload))
    if size != len(payload):
        raise TruncatedEventError(
            f"TRANSACTION_PAYLOAD says {size} payload bytes, event holds {len(payload)}",
            expected=f"{size} bytes")
    if uncompressed_size > max_uncompressed:
        raise DecodeError(
            f"TRANSACTION_PAYLOAD uncompressed size {uncompressed_size} is beyond the limit",
            expected=f"<= {max_uncompressed}")
    if compression not in (_ZSTD, _NONE):
        raise UnsupportedEventError(f"TRANSACTION_PAYLOAD compression type {compression}",
                                    expected="0 (ZSTD) or 255 (NONE)")
    return compression, size, uncompressed_size, payload


def inner_events(payload: bytes, compression: int, uncompressed_size: int,
                 header_length: int) -> tuple[int, Iterator[bytes]]:
    """``(count, the inner events' bytes in order)``. Every check (the stream's integrity, its inflated
    size against the header's, each inner event's length) is made here, before the caller sees an event.

    Memory stays flat whatever the transaction's size (a compressed transaction of millions of rows is one
    event): a payload inflating to more than ``EAGER_MAX`` bytes is inflated twice, a chunk at a time, once
    to count and check its events, once to hand them out; a smaller one is inflated once and cut."""
    if uncompressed_size <= EAGER_MAX:
        events = list(_cut(_inflate(payload, compression, uncompressed_size, uncompressed_size + 1),
                           header_length, uncompressed_size))
        return len(events), iter(events)
    count = sum(1 for _ in _cut(_inflate(payload, compression, uncompressed_size, _CHUNK), header_length,
                                uncompressed_size))
    return count, _cut(_inflate(payload, compression, uncompressed_size, _CHUNK), header_length,
                       uncompressed_size)


def _cut(chunks: Iterator[bytes], header_length: int, expected: int) -> Iterator[bytes]:
    """The inner events in the inflated ``chunks``, checked against their length fields."""
    buf = bytearray()
    pos = 0             # where the next inner event starts in buf
    done = 0            # inflated bytes before buf[0]
    index = 0
    for chunk in chunks:
        if pos:
            del buf[:pos]
            done += pos
            pos = 0
        buf += chunk
        while len(buf) - pos >= header_length:
            isize = U32.unpack_from(buf, pos + 9)[0]
            if isize < header_length or done + pos + isize > expected:
                raise TruncatedEventError(f"inner event {index} event_size {isize} overruns the payload",
                                          expected=f"{header_length} <= event_size <= "
                                                   f"{expected - done - pos}")
            if len(buf) - pos < isize:
                break
            yield bytes(buf[pos:pos + isize])
            pos += isize
            index += 1
    if len(buf) - pos:
        raise TruncatedEventError(f"inner event {index} header cut at payload byte {done + pos}",
                                  expected=f"{header_length}-byte header")


def _inflate(payload: bytes, compression: int, expected: int, chunk: int) -> Iterator[bytes]:
    """The inflated payload in pieces of up to ``chunk`` bytes, exactly ``expected`` bytes in all (else a
    ``DecodeError``)."""
    if compression == _NONE:
        if len(payload) != expected:
            raise DecodeError(f"TRANSACTION_PAYLOAD inflated to {len(payload)} bytes, header says {expected}",
                              expected=f"{expected} bytes")
        for start in range(0, len(payload), chunk):
            yield payload[start:start + chunk]
        return
    import zstandard

    # Read at most one byte more than announced, a megabyte at a time: a lying frame can never make us
    # allocate more than it really inflates to (``read(n)`` allocates ``n`` bytes up front).
    total = 0
    try:
        with zstandard.ZstdDecompressor().stream_reader(payload) as reader:
            while total <= expected:
                piece = reader.read(min(expected + 1 - total, chunk, _CHUNK))
                if not piece:
                    break
                total += len(piece)
                if total > expected:
                    raise DecodeError(f"TRANSACTION_PAYLOAD inflated past its stated {expected} bytes",
                                      expected=f"{expected} bytes")
                yield piece
    except zstandard.ZstdError as err:
        raise DecodeError(f"TRANSACTION_PAYLOAD zstd stream is corrupt ({err})") from err
    if total != expected:
        raise DecodeError(f"TRANSACTION_PAYLOAD inflated to {total} bytes, header says {expected}",
                          expected=f"{expected} bytes")
