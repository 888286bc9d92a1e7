"""The CRC-32 events' checksums are checked with: one choice for the decoder and its skip walks.

The compiled core's CRC-32 where this CPU runs it folded with PCLMULQDQ (``zlib.crc32``'s results, ~3x
faster; tests/unit/test_crc32.py), else ``zlib.crc32``.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

from binlog_model.compiled import speedups

__all__ = ["CRC32"]

CRC32: Callable[..., int] = zlib.crc32
if speedups is not None and getattr(speedups, "CRC32_ACCELERATED", False):
    CRC32 = speedups.crc32
