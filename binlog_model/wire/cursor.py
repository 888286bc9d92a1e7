"""Bounds-checked little-endian reads over one event body.

Strategy: every read checks the remaining length first and raises ``TruncatedEventError`` naming what it
wanted, so a lying length field can never cause an ``IndexError`` or a huge allocation. The cursor holds
a ``memoryview`` and slices without copying; ``bytes`` are only made where a value leaves the decoder.
Hot loops (row images) may read the underlying buffer directly, but must do their own length checks.
"""

from __future__ import annotations

import builtins

from binlog_model.errors import TruncatedEventError
from binlog_model.wire.structs import I32, U16, U32, U64

__all__ = ["Cursor"]


class Cursor:
    """A read position over a buffer. ``pos`` and ``end`` are absolute indexes into ``buf``."""

    __slots__ = ("buf", "end", "pos")

    def __init__(self, data: builtins.bytes | bytearray | memoryview, pos: int = 0,
                 end: int | None = None) -> None:
        self.buf = data if isinstance(data, memoryview) else memoryview(data)
        self.pos = pos
        # An ``end`` past the buffer (a post-header length from the FDE longer than the body) is clamped, so
        # reads beyond the real bytes fail in ``need`` with a typed error, never with an IndexError.
        self.end = len(self.buf) if end is None else min(end, len(self.buf))

    # -- bookkeeping --
    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def need(self, n: int, what: str) -> None:
        if n < 0 or self.pos + n > self.end:
            left = self.end - self.pos
            if left < 0:   # a length field placed the read past its region (say, a too-short post-header)
                raise TruncatedEventError(f"{what} would start {-left} bytes past the end of its region",
                                          expected=what)
            raise TruncatedEventError(f"{what} needs {n} bytes but only {left} remain", expected=what)

    def skip(self, n: int, what: str = "padding") -> None:
        self.need(n, what)
        self.pos += n

    def sub(self, n: int, what: str) -> Cursor:
        """A cursor over the next ``n`` bytes; this cursor moves past them."""
        self.need(n, what)
        c = Cursor(self.buf, self.pos, self.pos + n)
        self.pos += n
        return c

    # -- fixed-width integers --
    def u8(self, what: str = "uint8") -> int:
        self.need(1, what)
        v = self.buf[self.pos]
        self.pos += 1
        return v

    def u16(self, what: str = "uint16") -> int:
        self.need(2, what)
        v = U16.unpack_from(self.buf, self.pos)[0]
        self.pos += 2
        return int(v)

    def u24(self, what: str = "uint24") -> int:
        self.need(3, what)
        b = self.buf
        p = self.pos
        self.pos += 3
        return int(b[p] | (b[p + 1] << 8) | (b[p + 2] << 16))

    def u32(self, what: str = "uint32") -> int:
        self.need(4, what)
        v = U32.unpack_from(self.buf, self.pos)[0]
        self.pos += 4
        return int(v)

    def u64(self, what: str = "uint64") -> int:
        self.need(8, what)
        v = U64.unpack_from(self.buf, self.pos)[0]
        self.pos += 8
        return int(v)

    def uint(self, n: int, what: str = "uint") -> int:
        """Little-endian unsigned integer of ``n`` bytes (0..8)."""
        self.need(n, what)
        v = int.from_bytes(self.buf[self.pos:self.pos + n], "little")
        self.pos += n
        return v

    def uint_be(self, n: int, what: str = "uint (big-endian)") -> int:
        self.need(n, what)
        v = int.from_bytes(self.buf[self.pos:self.pos + n], "big")
        self.pos += n
        return v

    def i32(self, what: str = "int32") -> int:
        self.need(4, what)
        v = I32.unpack_from(self.buf, self.pos)[0]
        self.pos += 4
        return int(v)

    # -- variable-width --
    def lenenc_int(self, what: str = "length-encoded integer") -> int:
        """MySQL length-encoded integer (0xfb..0xfe prefixes). 0xfb (NULL) is returned as -1."""
        first = self.u8(what)
        if first < 0xFB:
            return first
        if first == 0xFB:
            return -1
        if first == 0xFC:
            return self.u16(what)
        if first == 0xFD:
            return self.u24(what)
        if first == 0xFE:
            return self.u64(what)
        raise TruncatedEventError(f"invalid length-encoded integer prefix 0xff in {what}", expected=what)

    def bytes(self, n: int, what: str = "bytes") -> builtins.bytes:
        self.need(n, what)
        v = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return v

    def view(self, n: int, what: str = "bytes") -> memoryview:
        self.need(n, what)
        v = self.buf[self.pos:self.pos + n]
        self.pos += n
        return v

    def rest(self) -> builtins.bytes:
        v = bytes(self.buf[self.pos:self.end])
        self.pos = self.end
        return v

    def u8_prefixed(self, what: str = "string") -> builtins.bytes:
        return self.bytes(self.u8(what), what)

    def cstring(self, what: str = "NUL-terminated string") -> builtins.bytes:
        b = self.buf
        for i in range(self.pos, self.end):
            if b[i] == 0:
                v = bytes(b[self.pos:i])
                self.pos = i + 1
                return v
        raise TruncatedEventError(f"{what} has no NUL terminator", expected=what)

    def bitmap(self, nbits: int, what: str = "bitmap") -> tuple[bool, ...]:
        """A little-endian bit array of ``nbits`` bits (column-present and NULL bitmaps)."""
        nbytes = (nbits + 7) >> 3
        raw = self.view(nbytes, what)
        return tuple(bool(raw[i >> 3] & (1 << (i & 7))) for i in range(nbits))
