"""zstd frames read with the zstandard library itself (not our reader): the tests' independent check."""

from __future__ import annotations

import zstandard


def unpacked(data: bytes) -> bytes:
    """Every frame of ``data`` decompressed; fails when the data ends inside a frame."""
    out = bytearray()
    while data:
        frame = zstandard.ZstdDecompressor().decompressobj()
        out += frame.decompress(data)
        assert frame.eof, "the data ends inside a zstd frame"
        data = frame.unused_data
    return bytes(out)
