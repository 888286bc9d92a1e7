"""MariaDB's compressed-event payload (QUERY_COMPRESSED_EVENT and the compressed ROWS events 166-171).

Strategy: one header byte ``0x80 | n`` (n = 1..4 length bytes), the uncompressed length big-endian in
those n bytes, then a zlib stream. The stated length bounds what we inflate (one byte more is asked for,
so a stream that inflates past its claim is caught without inflating it all), and the stream must end
exactly there. Both the QUERY parser and the ROWS parser call ``inflate_mariadb``; ``what`` names the
event part in the error messages.
"""

from __future__ import annotations

import zlib

from binlog_model.errors import DecodeError, TruncatedEventError

__all__ = ["inflate_mariadb"]


def inflate_mariadb(data: bytes | memoryview, what: str) -> bytes:
    """Inflate a MariaDB compressed payload (header byte, big-endian length, zlib stream).

    Raises ``TruncatedEventError`` when the header is cut short and ``DecodeError`` for a bad header
    byte, a corrupt zlib stream, or an output whose length is not the stated one.
    """
    if not data:
        raise TruncatedEventError(f"{what} has no compression header byte", expected="0x81..0x84")
    first = data[0]
    nlen = first & 0x07
    if not first & 0x80 or not 1 <= nlen <= 4:
        raise DecodeError(f"{what}: bad compression header byte 0x{first:02x}", expected="0x81..0x84")
    if len(data) < 1 + nlen:
        raise TruncatedEventError(f"{what} uncompressed length needs {nlen} bytes but only "
                                  f"{len(data) - 1} remain", expected=f"{what} uncompressed length")
    size = int.from_bytes(data[1:1 + nlen], "big")
    d = zlib.decompressobj()
    try:
        out = d.decompress(data[1 + nlen:], size + 1)
    except zlib.error as err:
        raise DecodeError(f"{what} does not inflate: {err}", expected="zlib data") from err
    if len(out) == size and not d.eof:
        raise DecodeError(f"{what} does not inflate: the zlib stream is cut short",
                          expected="a complete zlib stream")
    if len(out) != size:
        raise DecodeError(f"{what} inflates to {len(out)} bytes, header says {size}",
                          expected=f"{size} bytes")
    return out
