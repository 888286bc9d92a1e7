"""The compiled CRC-32 (``_speedups.crc32``, folded with PCLMULQDQ) gives ``zlib.crc32``'s results: every
length around the 16- and 64-byte folding steps, unaligned starts, running values, and the decoder checks
event checksums with it where the CPU runs it."""

from __future__ import annotations

import random
import zlib

import pytest

from binlog_model.compiled import speedups
from binlog_model.wire import decoder

pytestmark = pytest.mark.skipif(speedups is None or not getattr(speedups, "CRC32_ACCELERATED", False),
                                reason="the compiled CRC-32 is not built or this CPU lacks PCLMULQDQ")


def test_equals_zlib_on_every_length_and_alignment() -> None:
    rnd = random.Random(20261126)
    data = bytes(rnd.randrange(256) for _ in range(70_000))
    lengths = [*range(0, 260), 1023, 1024, 1025, 8191, 65_536, 69_990]
    for n in lengths:
        for start in (0, 1, 7, 13):
            chunk = memoryview(data)[start:start + n]
            assert speedups.crc32(chunk) == zlib.crc32(chunk), (n, start)
            value = rnd.randrange(1 << 32)
            assert speedups.crc32(chunk, value) == zlib.crc32(chunk, value), (n, start, value)


def test_patterns_and_running_crc() -> None:
    for byte in (0x00, 0xFF, 0x80, 0x01):
        block = bytes([byte]) * 4096
        assert speedups.crc32(block) == zlib.crc32(block)
    data = bytes(range(256)) * 300
    running = 0
    for i in range(0, len(data), 777):
        running = speedups.crc32(data[i:i + 777], running)
    assert running == zlib.crc32(data)
    assert speedups.crc32(bytearray(b"123456789")) == 0xCBF43926      # the CRC-32 check value


def test_the_decoder_uses_it() -> None:
    assert decoder._crc32 is speedups.crc32
