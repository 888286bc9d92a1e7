"""A large ``SELECT``'s rows read off the wire into Arrow columns of the server's text (``apply --initial
live``).

Why: pymysql reads a text result set one Python object per value, in Python: for a snapshot of a table,
that was about 60% of the run. Here pymysql sends the query and reads its header (the column count and
definitions, through an unbuffered cursor), then the row packets are read from the socket
(``io.packets.PacketReader``) and cut into columns by ``text_rows`` (the compiled core's where it is built:
the same result). Each column comes out as an Arrow ``binary`` array of the values exactly as the server
sent them (text, or a binary column's bytes), null where it sent NULL; converting them is the caller's,
with each column's ``(encoding, converter)`` as pymysql would have applied them. The connection is
pymysql's again when the rows are read.

The text protocol: each row is one packet of length-encoded strings (a length prefix of 1, 3, 4 or 9 bytes,
``0xFB`` for NULL); the result ends with an EOF packet (``0xFE``, under 9 bytes: pymysql does not ask for
``CLIENT_DEPRECATE_EOF``), and an error packet (``0xFF``) can come instead of any row.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import pyarrow as pa

from binlog_model.compiled import speedups
from binlog_model.errors import ReplicationError
from binlog_model.io.packets import MAX_PACKET, PacketReader

__all__ = ["ResultColumns", "read_ahead", "read_result_columns", "text_rows"]

_T = TypeVar("_T")

#: one column of rows: its values back to back, the int32 offsets (n + 1, little-endian), the validity
#: bitmap (None when nothing is null), the null count
_Column = tuple[bytes, bytes, bytes | None, int]
#: (pos, seq, rows, ended, columns)
_Rows = tuple[int, int, int, bool, list[_Column]]


class RowPacketError(ValueError):
    """A row packet whose fields do not fill it exactly."""


def _field_end(payload: bytes | bytearray | memoryview, p: int, end: int) -> tuple[int, int]:
    """(start, end) of the length-encoded string at ``p``; start -1 for NULL."""
    if p >= end:
        raise RowPacketError("the row ends before its last column")
    first = payload[p]
    if first < 0xFB:
        start, size = p + 1, first
    elif first == 0xFB:
        return -1, p + 1
    else:
        width = {0xFC: 2, 0xFD: 3, 0xFE: 8}.get(first)
        if width is None or end - p - 1 < width:
            raise RowPacketError(f"a field's length prefix 0x{first:02x} does not fit the row")
        start, size = p + 1 + width, int.from_bytes(payload[p + 1:p + 1 + width], "little")
    if size > end - start:
        raise RowPacketError(f"a field of {size} bytes does not fit the row")
    return start, start + size


def row_fields(payload: bytes | bytearray | memoryview, start: int, end: int, ncols: int
               ) -> list[tuple[int, int]]:
    """The ``ncols`` fields of the row at ``payload[start:end]`` as (start, end), start -1 for NULL."""
    fields = []
    p = start
    for _ in range(ncols):
        begin, p = _field_end(payload, p, end)
        fields.append((begin, p))
    if p != end:
        raise RowPacketError(f"{end - p} bytes follow the row's last column")
    return fields


def _columns(rows: list[list[bytes | None]], ncols: int) -> list[_Column]:
    columns: list[_Column] = []
    for c in range(ncols):
        data = bytearray()
        offsets = bytearray((0).to_bytes(4, "little"))
        valid = bytearray((len(rows) + 7) // 8)
        nulls = 0
        for i, row in enumerate(rows):
            value = row[c]
            if value is None:
                nulls += 1
            else:
                data += value
                valid[i >> 3] |= 1 << (i & 7)
            offsets += len(data).to_bytes(4, "little")
        columns.append((bytes(data), bytes(offsets), bytes(valid) if nulls else None, nulls))
    return columns


def text_rows(buf: bytes | bytearray, pos: int, end: int, seq: int, ncols: int) -> _Rows | None:
    """The rows of the whole packets at ``buf[pos:end]``, consumed, as columns: ``(pos, seq, rows, ended,
    columns)`` (the position and sequence number after them; ``ended`` when the result's EOF packet was
    among them, the last one taken), or None when nothing could be taken. Stops at a packet that is
    incomplete, a 16 MiB continuation, out of sequence or an error packet: the reader takes those alone.
    A row packet whose fields do not fill it exactly raises ``RowPacketError``. This is the reference of
    the compiled ``_speedups.text_rows``, which returns the same."""
    rows: list[list[bytes | None]] = []
    p, ended = pos, False
    while end - p >= 4:
        length = buf[p] | buf[p + 1] << 8 | buf[p + 2] << 16
        if length >= MAX_PACKET or end - p - 4 < length or buf[p + 3] != seq:
            break
        start = p + 4
        if length and buf[start] == 0xFF:
            break
        if length and length < 9 and buf[start] == 0xFE:
            ended = True
        else:
            rows.append([None if a < 0 else bytes(buf[a:b]) for a, b in row_fields(buf, start, start + length,
                                                                                    ncols)])
        seq = (seq + 1) & 0xFF
        p += 4 + length
        if ended:
            break
    if p == pos:
        return None
    return p, seq, len(rows), ended, _columns(rows, ncols)


#: the columns of ``read_result_columns``: compiled where built (the same as ``text_rows``, faster)
_TEXT_ROWS: Callable[[bytes | bytearray, int, int, int, int], _Rows | None] = (
    getattr(speedups, "text_rows", None) or text_rows)


@dataclass
class ResultColumns:
    """What ``read_result_columns`` gives for a chunk: a ``binary`` array per column, and each column's
    ``(encoding, converter)`` as pymysql applies them to a value (encoding None: the bytes stay bytes)."""

    arrays: list[pa.Array]
    decoders: list[tuple[str | None, Callable[[Any], Any] | None]]

    def __len__(self) -> int:
        return len(self.arrays[0]) if self.arrays else 0

    def values(self, index: int) -> list[Any]:
        """A column's values as pymysql would have read them (its decoding and converter applied)."""
        encoding, convert = self.decoders[index]
        out: list[Any] = []
        for raw in self.arrays[index].to_pylist():
            if raw is not None:
                if encoding is not None:
                    raw = raw.decode(encoding)
                if convert is not None:
                    raw = convert(raw)
            out.append(raw)
        return out


def read_result_columns(conn: Any, sql: str, chunk: int, where: str) -> Iterator[ResultColumns]:
    """Run ``sql`` on the pymysql connection ``conn`` and yield its rows about ``chunk`` at a time, as
    columns (see the module docstring). ``where`` names the query in errors (a malformed row packet)."""
    from pymysql.cursors import SSCursor

    cursor = conn.cursor(SSCursor)
    cursor.execute(sql)
    result = conn._result
    ncols = result.field_count
    decoders = [(encoding, convert) for encoding, convert in result.converters]
    reader = PacketReader(conn)
    parts: list[list[pa.Array]] = [[] for _ in range(ncols)]
    have = 0
    ended = False

    def add(columns: list[_Column], n: int) -> None:
        for c, (data, offsets, valid, nulls) in enumerate(columns):
            parts[c].append(pa.Array.from_buffers(
                pa.binary(), n, [None if valid is None else pa.py_buffer(valid), pa.py_buffer(offsets),
                                 pa.py_buffer(data)], null_count=nulls))

    def chunk_out() -> ResultColumns:
        nonlocal parts, have
        arrays = [pa.concat_arrays(p) if len(p) != 1 else p[0] for p in parts]
        parts, have = [[] for _ in range(ncols)], 0
        return ResultColumns(arrays, decoders)

    try:
        while not ended:
            try:
                got = _TEXT_ROWS(reader.buf, reader.pos, reader.end, reader.seq, ncols)
            except ValueError as err:       # RowPacketError, or the compiled core's ValueError for it
                raise ReplicationError(f"{where}: a malformed row packet from the server: {err}") from None
            if got is not None:
                reader.pos, reader.seq, n, ended, columns = got
                conn._next_seq_id = reader.seq
                if n:
                    add(columns, n)
                    have += n
            elif reader.whole():        # a row of 16 MiB or more (or an error packet, which raises)
                first, rest = reader.next()
                payload = bytes([first]) + rest
                try:
                    fields = row_fields(payload, 0, len(payload), ncols)
                except RowPacketError as err:
                    raise ReplicationError(f"{where}: a malformed row packet from the server: {err}"
                                           ) from None
                add(_columns([[None if a < 0 else payload[a:b] for a, b in fields]], ncols), 1)
                have += 1
            else:
                reader.more()
            if have >= chunk or (ended and have):
                yield chunk_out()
        if reader.pos != reader.end:
            raise ReplicationError(f"{where}: {reader.end - reader.pos} bytes arrived after the result's end")
    except BaseException:
        conn._force_close()         # rows may be left unread: the connection is out of step
        raise
    finally:
        result.unbuffered_active = False
        result.connection = None
        reader.view.release()
        cursor.close()


def read_ahead(items: Iterator[_T], depth: int = 2) -> Iterator[_T]:
    """``items`` produced on a thread of their own, up to ``depth`` ahead of the consumer: the server's
    sending and the socket's reading (which release the GIL) overlap the consumer's converting and writing.
    An error of the producer is raised here, where its item would have come; a consumer that stops early
    stops the producer, which closes ``items`` on its own thread."""
    handoff: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        handoff.put(("item", item), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    break
            outcome: tuple[str, Any] = ("end", None)
        except BaseException as err:        # handed to the consumer, which raises it
            outcome = ("error", err)
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()
        while not stop.is_set():
            try:
                handoff.put(outcome, timeout=0.1)
                return
            except queue.Full:
                continue

    thread = threading.Thread(target=produce, name="binlog-model-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            kind, value = handoff.get()
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()
        thread.join()
