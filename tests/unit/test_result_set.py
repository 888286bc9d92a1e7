"""A text result set's rows cut into columns: ``text_rows`` (the pure-Python reference) and the compiled
``_speedups.text_rows`` take the same packets and return the same columns (or the same error).

Every stream here is hand-built (edge cases and corruption, named as such): a real server's result sets are
read in tests/differential/test_result_set_server.py.
"""

from __future__ import annotations

import random
from typing import Any

import pyarrow as pa
import pytest

from benchmarks.fuzz.native import _lenenc, result_set
from binlog_model.compiled import speedups
from binlog_model.io.result_set import RowPacketError, text_rows

EOF = b"\xfe\x00\x00\x02\x00"


def _packet(payload: bytes, seq: int) -> bytes:
    return len(payload).to_bytes(3, "little") + bytes([seq & 0xFF]) + payload


def _rows(rows: list[list[bytes | None]], seq: int = 1, eof: bool = True) -> bytes:
    packets = [_packet(b"".join(_lenenc(f) for f in row), seq + i) for i, row in enumerate(rows)]
    if eof:
        packets.append(_packet(EOF, seq + len(rows)))
    return b"".join(packets)


def _both(buf: bytes, pos: int, seq: int, ncols: int) -> Any:
    """The reference's answer (or its error's text), checked equal to the compiled one's where built."""
    def answer(fn: Any) -> Any:
        try:
            return fn(buf, pos, len(buf), seq, ncols)
        except ValueError as err:
            return ("error", type(err) is RowPacketError or fn is not text_rows, str(err))
    expected = answer(text_rows)
    if speedups is not None and hasattr(speedups, "text_rows"):
        assert answer(speedups.text_rows) == expected
    return expected


def _values(column: tuple[bytes, bytes, bytes | None, int], n: int) -> list[bytes | None]:
    data, offsets, valid, nulls = column
    buffers = [None if valid is None else pa.py_buffer(valid), pa.py_buffer(offsets), pa.py_buffer(data)]
    array = pa.Array.from_buffers(pa.binary(), n, buffers, null_count=nulls)
    array.validate(full=True)
    return array.to_pylist()


def test_rows_then_eof_come_out_as_columns() -> None:
    rows = [[b"1", b"abc", None], [b"22", b"", b"x" * 300], [None, b"q", b"z" * 70_000]]
    buf = _rows(rows, seq=3)
    pos, seq, n, ended, columns = _both(buf, 0, 3, 3)
    assert (pos, seq, n, ended) == (len(buf), 7, 3, True)
    assert [_values(c, n) for c in columns] == [list(col) for col in zip(*rows, strict=True)]
    assert columns[1][2] is None and columns[0][3] == 1      # no bitmap without a null


def test_an_empty_result_is_its_eof_alone() -> None:
    pos, seq, n, ended, columns = _both(_packet(EOF, 9), 0, 9, 2)
    assert (pos, seq, n, ended) == (9, 10, 0, True)
    assert [_values(c, 0) for c in columns] == [[], []]


def test_it_stops_at_an_incomplete_packet_and_takes_nothing_before_a_whole_one() -> None:
    buf = _rows([[b"a"], [b"bb"]], eof=False)
    cut = buf[:-1]                   # the second row's last byte has not arrived (hand-cut)
    pos, seq, n, ended, _ = _both(cut, 0, 1, 1)
    assert (pos, seq, n, ended) == (6, 2, 1, False)
    assert _both(cut, pos, seq, 1) is None
    assert _both(buf[:3], 0, 1, 1) is None


def test_it_stops_at_an_error_packet_a_wrong_sequence_and_a_continuation() -> None:
    error = _packet(b"\xff\x15\x04#HY000boom", 2)
    assert _both(_rows([[b"a"]], eof=False) + error, 0, 1, 1)[:4] == (6, 2, 1, False)
    assert _both(_rows([[b"a"]], seq=5, eof=False), 0, 4, 1) is None          # out of sequence
    huge = b"\xff\xff\xff\x01" + b"\x00" * 16          # a 16 MiB packet's header (hand-built, cut short)
    assert _both(huge, 0, 1, 1) is None


def test_a_row_whose_first_field_is_long_is_not_an_eof() -> None:
    """0xFE starts an 8-byte length too: a payload of 9 bytes or more is a row (hand-built)."""
    row = b"\xfe" + (3).to_bytes(8, "little") + b"abc"
    _, _, n, ended, columns = _both(_packet(row, 1) + _packet(EOF, 2), 0, 1, 1)
    assert (n, ended, _values(columns[0], 1)) == (1, True, [b"abc"])


@pytest.mark.parametrize(("payload", "message"), [
    (b"\x01a", "the row ends before its last column"),                  # 2 columns, 1 given
    (b"\x05ab\x00", "a field of 5 bytes does not fit the row"),
    (b"\xfc\x01", "a field's length prefix 0xfc does not fit the row"),
    (b"\x01a\xff", "a field's length prefix 0xff does not fit the row"),
    (b"\x01a\x01b\x00", "1 bytes follow the row's last column"),
])
def test_a_malformed_row_is_an_error_naming_what_is_wrong(payload: bytes, message: str) -> None:
    """Corrupt rows (hand-built): the same message from both."""
    assert _both(_packet(payload, 1), 0, 1, 2) == ("error", True, message)


def test_random_result_sets_and_their_damaged_copies_agree() -> None:
    """Generated result sets (``benchmarks.fuzz.native.result_set``), whole, cut and with a byte changed
    (hand-made damage): the same answer from both, and the whole ones read back as generated."""
    rng = random.Random(5)
    whole = 0
    for _ in range(300):
        data = result_set(rng)
        ncols, buf = data[0], data[1:]
        got = _both(buf, 0, buf[3], ncols)
        assert got is not None and got[0] != "error" and got[3] is True
        whole += got[2]
        cut = buf[:rng.randrange(len(buf))]
        _both(cut, 0, buf[3], ncols)
        if buf:
            damaged = bytearray(buf)
            damaged[rng.randrange(len(buf))] = rng.randrange(256)
            _both(bytes(damaged), 0, buf[3], ncols)
    assert whole > 1000


def test_read_ahead_gives_every_item_in_order_and_raises_the_producers_error_where_it_came() -> None:
    from binlog_model.io.result_set import read_ahead

    assert list(read_ahead(iter(range(100)), depth=2)) == list(range(100))
    closed = []

    def failing() -> Any:
        try:
            yield 1
            yield 2
            raise ConnectionError("lost")
        finally:
            closed.append(True)
    got = []
    with pytest.raises(ConnectionError, match="lost"):
        for item in read_ahead(failing()):
            got.append(item)
    assert got == [1, 2] and closed == [True]


def test_read_ahead_stops_and_closes_its_producer_when_the_consumer_stops_early() -> None:
    from binlog_model.io.result_set import read_ahead

    closed = []

    def endless() -> Any:
        try:
            n = 0
            while True:
                yield n
                n += 1
        finally:
            closed.append(True)
    items = read_ahead(endless(), depth=1)
    assert [next(items) for _ in range(3)] == [0, 1, 2]
    items.close()       # joins the producer
    assert closed == [True]
