"""Codec for GEOMETRY columns.

Strategy: a GEOMETRY value is a BLOB whose bytes are MySQL's internal form: a 4-byte little-endian SRID
followed by standard WKB. It is split, not interpreted: consumers hand the WKB to a GIS library.
"""

from __future__ import annotations

from binlog_model.errors import TruncatedEventError
from binlog_model.wire.codecs._bounds import Buffer, prefixed
from binlog_model.wire.values import Geometry

__all__ = ["decode_geometry"]


def decode_geometry(buf: Buffer, pos: int, meta: int) -> tuple[Geometry, int]:
    """GEOMETRY: meta is the length-prefix size; the payload is SRID (u32 LE) + WKB."""
    start, end = prefixed(buf, pos, meta, "GEOMETRY")
    n = end - start
    if n < 4:
        raise TruncatedEventError(f"GEOMETRY value of {n} bytes has no 4-byte SRID",
                                  expected="GEOMETRY SRID")
    srid = int.from_bytes(buf[start:start + 4], "little")
    return Geometry(srid, bytes(buf[start + 4:end])), end
