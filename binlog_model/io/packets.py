"""A MySQL connection's packets, read from its socket into one reused buffer (``PacketReader``): the
binlog dump (``io.replication``) and a large ``SELECT``'s rows (``io.result_set``) read their packets here,
past pymysql's per-packet objects, on a connection pymysql opened and keeps using afterwards."""

from __future__ import annotations

import select
from typing import Any, Final

__all__ = ["MAX_PACKET", "PacketReader"]

MAX_PACKET: Final = 0xFFFFFF          # a payload of this length continues in the next packet


class PacketReader:
    """A connection's packets read straight from the socket into one reused buffer (``buf[pos:end]`` is what
    is unread), up to its size per read: no new object per read, and the bytes are copied once more, into
    their batch (a dump's ``take_events``, a result set's ``text_rows``). The 4-byte packet headers are
    parsed here (sequence number checked, a 16 MB packet's continuations joined). pymysql's
    ``_read_packet`` makes two buffered reads and a packet object per packet and copies each payload twice
    more: per event, that was as much as the decoding of a small rows event. What pymysql's buffered reader
    already holds is taken first (then it stays empty); errors are pymysql's (an error packet raises its
    exception; a lost connection, ``OperationalError`` 2013), as ``_read_packet`` raises them."""

    #: the buffer's size: a read takes what has arrived up to this (a unix socket holds ~200 KB)
    CHUNK: Final = 1 << 20

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.rfile = conn._rfile
        self.sock = conn._sock
        self.seq = conn._next_seq_id
        self.buf = bytearray(self.CHUNK)
        self.view = memoryview(self.buf)        # released whenever the buffer is replaced
        self.pos = self.end = 0
        self.drained = False        # what pymysql's reader had buffered is ours: its buffer stays empty
        conn._sock.settimeout(conn._read_timeout)          # what _read_packet does before its reads
        if hasattr(conn, "_current_timeout"):
            conn._current_timeout = conn._read_timeout

    def _fill(self, need: int) -> None:
        """Read until ``need`` bytes past ``pos`` are buffered."""
        import pymysql
        have = self.end - self.pos
        if self.pos:                # the unread rest (part of a packet) moves to the front
            self.buf[:have] = self.buf[self.pos:self.end]
            self.pos, self.end = 0, have
        if need > len(self.buf) or (len(self.buf) > self.CHUNK and max(need, have) <= self.CHUNK):
            self._resize(max(need, self.CHUNK))     # a packet larger than the buffer, or the one after it
        while self.end < need:
            try:
                if not self.drained:        # its buffer (or one read), then nothing stays in it
                    chunk = self.rfile.read(len(self.rfile.peek(1)))
                    self.drained = True
                    n = len(chunk)
                    if self.end + n > len(self.buf):
                        self._resize(self.end + n)
                    self.buf[self.end:self.end + n] = chunk
                else:
                    n = self.sock.recv_into(self.view[self.end:])
            except OSError as err:
                self.conn._force_close()
                raise pymysql.err.OperationalError(2013, f"Lost connection to MySQL server during query "
                                                         f"({err})") from err
            if not n:
                self.conn._force_close()
                raise pymysql.err.OperationalError(2013, "Lost connection to MySQL server during query")
            self.end += n

    def _resize(self, size: int) -> None:
        """A buffer of ``size`` bytes holding the unread bytes (at its front: ``pos`` is 0)."""
        rest = self.buf[:self.end]
        self.view.release()
        self.buf = bytearray(size)
        self.buf[:self.end] = rest
        self.view = memoryview(self.buf)

    def quiet(self, seconds: float) -> bool:
        """Nothing more arrives within ``seconds`` (called when no whole packet is buffered)."""
        if not self.drained or self.pos < self.end or self.conn._sock is None:
            return False
        readable, _, _ = select.select([self.conn._sock], [], [], seconds)
        return not readable

    def ready(self) -> bool:
        """A whole packet is buffered (``next`` returns without reading)."""
        buf, pos = self.buf, self.pos
        have = self.end - pos
        if have < 4:
            return False
        length = buf[pos] | buf[pos + 1] << 8 | buf[pos + 2] << 16
        return have >= 4 + length and length < MAX_PACKET

    def whole(self) -> bool:
        """The packet at ``pos`` is buffered whole (even a 16 MB one that continues in the next)."""
        buf, pos = self.buf, self.pos
        have = self.end - pos
        return have >= 4 and have >= 4 + (buf[pos] | buf[pos + 1] << 8 | buf[pos + 2] << 16)

    def more(self) -> None:
        """Read at least once: until the packet at ``pos`` is whole (at least its header)."""
        buf, pos = self.buf, self.pos
        have = self.end - pos
        self._fill(max(have + 1, 4 + (buf[pos] | buf[pos + 1] << 8 | buf[pos + 2] << 16) if have >= 4 else 4))

    def next(self) -> tuple[int, bytes]:
        """The next packet: its first byte and the rest of its payload."""
        import pymysql
        parts: list[bytes] = []
        first = -1
        while True:
            if self.end - self.pos < 4:
                self._fill(4)
            pos = self.pos
            buf = self.buf
            length = buf[pos] | buf[pos + 1] << 8 | buf[pos + 2] << 16
            seq = buf[pos + 3]
            if seq != self.seq:
                self.conn._force_close()
                if seq == 0:        # MariaDB sends an error packet with sequence 0 when it shuts down
                    raise pymysql.err.OperationalError(2013, "Lost connection to MySQL server during query")
                raise pymysql.err.InternalError(f"Packet sequence number wrong - got {seq} expected "
                                                f"{self.seq}")
            self.seq = (seq + 1) & 0xFF
            if self.end - pos < 4 + length:
                self._fill(4 + length)
                pos, buf = self.pos, self.buf
            start = pos + 4
            if first < 0 and length:
                first = buf[start]
                start += 1
            part = self.view[start:pos + 4 + length].tobytes()
            self.pos = pos + 4 + length
            if length < MAX_PACKET:
                if not parts:
                    break
                parts.append(part)
                part = b"".join(parts)
                break
            parts.append(part)
        self.conn._next_seq_id = self.seq
        if first == 0xFF:
            self.conn._force_close()
            pymysql.err.raise_mysql_exception(b"\xff" + part)
        return first, part
