"""MySQL TRANSACTION_PAYLOAD_EVENT (8.0.20+, binlog_transaction_compression): the payload header, the
(zstd) inflation, and the cut of the inflated bytes into inner events.

The decoder decodes the inner events itself (they share its stream state: table maps, layout), so this
module hands it ``(header fields, inflated bytes)`` and the inner events' byte ranges.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from binlog_model.errors import DecodeError, TruncatedEventError, UnsupportedEventError
from binlog_model.wire.cursor import Cursor

__all__ = ["inner_event_slices", "unpack_transaction_payload"]

_U32 = struct.Struct("<I")
_ZSTD = 0
_NONE = 255


def unpack_transaction_payload(body: memoryview, max_uncompressed: int) -> tuple[int, int, int, bytes]:
    """``(compression_type, payload_size, uncompressed_size, inflated bytes)`` of a payload event body.

    Refuses an uncompressed size beyond ``max_uncompressed`` before inflating anything."""
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
    if compression == _ZSTD:
        data = _zstd_decompress(payload, uncompressed_size)
    elif compression == _NONE:
        data = bytes(payload)
    else:
        raise UnsupportedEventError(f"TRANSACTION_PAYLOAD compression type {compression}",
                                    expected="0 (ZSTD) or 255 (NONE)")
    if len(data) != uncompressed_size:
        raise DecodeError(
            f"TRANSACTION_PAYLOAD inflated to {len(data)} bytes, header says {uncompressed_size}",
            expected=f"{uncompressed_size} bytes")
    return compression, size, uncompressed_size, data


def inner_event_slices(data: bytes, header_length: int) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each inner event in the inflated payload, checked against its length."""
    pos = 0
    index = 0
    while pos < len(data):
        if len(data) - pos < header_length:
            raise TruncatedEventError(f"inner event {index} header cut at payload byte {pos}",
                                      expected=f"{header_length}-byte header")
        isize = _U32.unpack_from(data, pos + 9)[0]
        if isize < header_length or pos + isize > len(data):
            raise TruncatedEventError(f"inner event {index} event_size {isize} overruns the payload",
                                      expected=f"{header_length} <= event_size <= {len(data) - pos}")
        yield pos, pos + isize
        pos += isize
        index += 1


def _zstd_decompress(payload: memoryview, expected: int) -> bytes:
    import zstandard

    # Read at most one byte more than announced, a megabyte at a time: a lying frame can never make us
    # allocate more than it really inflates to (``read(n)`` allocates ``n`` bytes up front).
    out = bytearray()
    try:
        with zstandard.ZstdDecompressor().stream_reader(bytes(payload)) as reader:
            while len(out) <= expected:
                chunk = reader.read(min(expected + 1 - len(out), 1 << 20))
                if not chunk:
                    break
                out += chunk
    except zstandard.ZstdError as err:
        raise DecodeError(f"TRANSACTION_PAYLOAD zstd stream is corrupt ({err})") from err
    if len(out) > expected:
        raise DecodeError(f"TRANSACTION_PAYLOAD inflated past its stated {expected} bytes",
                          expected=f"{expected} bytes")
    return bytes(out)
