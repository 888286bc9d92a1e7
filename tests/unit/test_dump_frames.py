"""The replication dump's packet framing: ``take_events`` (the pure-Python reference) and the compiled
``_speedups.dump_events`` take the same packets and return the same batch, and the packet reader
(``_read_stream``) gives the same events whichever takes them and however the bytes arrive.

Every stream here is hand-built (edge cases and corruption, named as such): real dumps are covered by
tests/differential/test_harness_replication.py and test_tail.py. Hand-built packets: a 4-byte header
(3-byte length, sequence number), then 0x00 and a v4 event (19-byte header, body, 4 bytes standing in for
the CRC32, which the framing does not read).
"""

from __future__ import annotations

import random
import socket
import struct
import threading
from typing import Any

import pytest

from binlog_model.compiled import speedups
from binlog_model.io import replication
from binlog_model.io.replication import take_events

ROTATE, FDE, QUERY, WRITE_ROWS, HEARTBEAT, GTID_LIST = 4, 15, 2, 30, 27, 163
ARTIFICIAL = 0x20
_PATTERN = bytes(range(256))
compiled = pytest.mark.skipif(speedups is None or not hasattr(speedups, "dump_events"),
                              reason="the compiled core is not built")


def _event(kind: int, offset: int, body: int = 20, *, log_pos: int | None = None, flags: int = 0,
           size: int | None = None) -> bytes:
    """A hand-built event of ``19 + body + 4`` bytes starting at ``offset`` (log_pos: its end)."""
    length = 19 + body + 4
    end = offset + length if log_pos is None else log_pos
    size = length if size is None else size
    head = struct.pack("<IBIIIH", 1_700_000_000 + offset, kind, 1, size, end, flags)
    return head + (_PATTERN * (body // 256 + 1))[:body] + b"CRC!"


def _packet(payload: bytes, seq: int, first: bytes = b"\x00") -> bytes:
    data = first + payload
    return struct.pack("<I", len(data))[:3] + bytes([seq & 0xFF]) + data


def _stream(events: list[bytes], seq: int = 1) -> bytes:
    return b"".join(_packet(e, seq + i) for i, e in enumerate(events))


def _both(buf: bytes | bytearray, pos: int, end: int, seq: int, next_offset: int) -> Any:
    """The reference's answer, checked equal to the compiled one's where it is built."""
    expected = take_events(buf, pos, end, seq, next_offset)
    if speedups is not None and hasattr(speedups, "dump_events"):
        assert speedups.dump_events(buf, pos, end, seq, next_offset) == expected
    return expected


def test_a_run_of_plain_packets_is_one_batch() -> None:
    events = [_event(QUERY, 4), _event(WRITE_ROWS, 47, 100), _event(QUERY, 170)]
    buf = bytearray(_stream(events))
    data, pos, seq, first, kind, last, log_pos, flags, following = _both(buf, 0, len(buf), 1, 4)
    assert data == b"".join(events)
    assert (pos, seq, first, kind, last) == (len(buf), 4, 4, QUERY, 43 + 123)
    assert (log_pos, flags, following) == (213, 0, 213)


def test_window_and_sequence_wrap() -> None:
    """Only ``buf[pos:end]`` is read; the sequence number goes 255 -> 0."""
    events = [_event(QUERY, 4), _event(QUERY, 47)]
    body = _stream(events, seq=255)
    buf = b"junk" + body + b"\x01\x00\x00\x00\x00"        # a packet header past ``end``
    taken = _both(buf, 4, 4 + len(body), 255, 4)
    assert taken is not None and taken[0] == b"".join(events) and taken[1:3] == (4 + len(body), 1)


def test_edge_packet_split_across_reads() -> None:
    """Hand-built edge case: the buffer ends inside a packet (its header, or its body): the whole packets
    before it are taken, the rest later."""
    events = [_event(QUERY, 4), _event(WRITE_ROWS, 47, 200), _event(QUERY, 270)]
    stream = _stream(events)
    first_two = len(_stream(events[:2]))
    for cut in (first_two + 2, first_two + 10, len(stream) - 1):
        taken = _both(stream, 0, cut, 1, 4)
        assert taken[0] == b"".join(events[:2]) and taken[1] == first_two
        assert _both(stream, first_two, cut, 3, taken[8]) is None
        rest = _both(stream, first_two, len(stream), 3, taken[8])
        assert rest[0] == events[2] and rest[3] == 270


def test_edge_16_mib_continuation_err_and_eof_stop_the_batch() -> None:
    """Hand-built edge cases: a 16 MiB packet (continued in the next), an ERR and an EOF packet are the
    reader's to read one by one: the batch ends before them."""
    plain = _packet(_event(QUERY, 4), 1)
    huge = b"\xff\xff\xff\x02" + b"\x00" + bytes(0xFFFFFE) + b"\x00\x00\x00\x03"
    err = _packet(struct.pack("<H", 1236) + b"#HY000purged", 2, first=b"\xff")
    eof = _packet(b"\x00\x00\x02\x00", 2, first=b"\xfe")
    for tail in (huge, err, eof):
        buf = plain + tail
        taken = _both(buf, 0, len(buf), 1, 4)
        assert taken is not None and taken[1] == len(plain) and taken[2] == 2
        assert _both(buf, len(plain), len(buf), 2, taken[8]) is None


@pytest.mark.parametrize("event", [
    pytest.param(_event(QUERY, 47, flags=ARTIFICIAL), id="artificial"),
    pytest.param(_event(FDE, 47), id="format description"),
    pytest.param(_event(HEARTBEAT, 47, log_pos=0), id="heartbeat"),
    pytest.param(_event(ROTATE, 47, log_pos=0), id="fake rotate"),
    pytest.param(_event(GTID_LIST, 47, log_pos=0), id="gtid list at 0"),
    pytest.param(_event(QUERY, 47, size=99), id="size not the packet's"),
    pytest.param(_event(QUERY, 0, body=40, log_pos=10), id="starts before 0"),
])
def test_edge_framing_and_bad_events_end_the_batch(event: bytes) -> None:
    """Hand-built: framing events and bad ones are left to the reader (which raises for the bad ones)."""
    buf = _stream([_event(QUERY, 4), event])
    taken = _both(buf, 0, len(buf), 1, 4)
    assert taken is not None and taken[0] == _event(QUERY, 4)
    assert _both(buf, taken[1], len(buf), 2, taken[8]) is None


def test_edge_a_jump_starts_a_new_batch() -> None:
    """Hand-built: a GTID dump skips ahead inside a file: the batch ends there and the next begins."""
    buf = _stream([_event(QUERY, 4), _event(QUERY, 90), _event(QUERY, 133)])
    taken = _both(buf, 0, len(buf), 1, 4)
    assert taken[0] == _event(QUERY, 4)
    after = _both(buf, taken[1], len(buf), 2, taken[8])
    assert after[0] == _event(QUERY, 90) + _event(QUERY, 133) and after[3] == 90 and after[1] == len(buf)


def test_edge_short_packets_end_the_batch() -> None:
    """Hand-built: a packet too short for an event header, an empty packet, a wrong sequence number."""
    good = _packet(_event(QUERY, 4), 1)
    for bad in (_packet(b"x" * 10, 2), b"\x00\x00\x00\x02", _packet(_event(QUERY, 47), 7)):
        buf = good + bad
        taken = _both(buf, 0, len(buf), 1, 4)
        assert taken is not None and taken[1] == len(good)


def test_content_at_log_pos_0_and_a_real_rotate_are_taken() -> None:
    """MariaDB 11 writes log_pos 0 inside a transaction: such an event follows the previous one. A ROTATE
    with its log_pos (the file's last event) is content."""
    events = [_event(QUERY, 4), _event(WRITE_ROWS, 47, log_pos=0), _event(ROTATE, 90)]
    buf = _stream(events)
    taken = _both(buf, 0, len(buf), 1, 4)
    assert taken[0] == b"".join(events) and taken[6] == 133 and taken[8] == 133


def test_bad_arguments_are_refused() -> None:
    if speedups is None or not hasattr(speedups, "dump_events"):
        pytest.skip("the compiled core is not built")
    for args in ((b"abc", 2, 1, 0, 4), (b"abc", 0, 4, 0, 4), (b"abc", -1, 2, 0, 4), (b"abc", 0, 3, 256, 4)):
        with pytest.raises(ValueError):
            speedups.dump_events(*args)


@compiled
def test_random_streams_reference_equals_compiled() -> None:
    """Seeded random streams of content and framing packets, cut and corrupted at random: the compiled
    framing answers as the reference does at every place."""
    rnd = random.Random(20261126)
    kinds = [QUERY, WRITE_ROWS, WRITE_ROWS, ROTATE, FDE, HEARTBEAT, GTID_LIST]
    for _ in range(400):
        offset, events = 4, []
        for _ in range(rnd.randint(1, 12)):
            kind = rnd.choice(kinds)
            body = rnd.randint(0, 300)
            log_pos = rnd.choice([None, None, None, 0])
            flags = ARTIFICIAL if rnd.random() < 0.05 else 0
            events.append(_event(kind, offset, body, log_pos=log_pos, flags=flags))
            offset += 23 + body + (rnd.randint(1, 9) if rnd.random() < 0.05 else 0)
        buf = bytearray(_stream(events, seq=rnd.randint(0, 255)))
        for _ in range(rnd.randint(0, 3)):
            buf[rnd.randrange(len(buf))] = rnd.randrange(256)
        for _ in range(5):
            pos = rnd.choice([0, 0, rnd.randrange(len(buf))])
            end = rnd.choice([len(buf), rnd.randint(pos, len(buf))])
            _both(buf, pos, end, rnd.choice([buf[pos + 3] if end - pos > 3 else 0, rnd.randrange(256)]),
                  rnd.choice([4, rnd.randrange(1 << 33)]))


class _Connection:
    """The packet-level part of a pymysql connection the dump reader uses, over one end of a socketpair."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._rfile = sock.makefile("rb")
        self._next_seq_id = 1
        self._read_timeout = 10

    def _force_close(self) -> None:
        self._sock.close()


def _read(stream: bytes, piece: int, batch: bool) -> list[replication.ReplicationPacket]:
    """The reader's packets for hand-built ``stream``, written ``piece`` bytes at a time (its middle, past
    the first and before the last 400 bytes, in pieces of at least 64 KiB)."""
    ours, theirs = socket.socketpair()

    def send() -> None:
        i = 0
        while i < len(stream):
            size = piece if i < 400 or i > len(stream) - 400 else max(piece, 1 << 16)
            theirs.sendall(stream[i:i + size])
            i += size

    writer = threading.Thread(target=send)
    writer.start()
    try:
        return list(replication._read_stream(_Connection(ours), "binlog.000001", 4, True, batch))
    finally:
        writer.join()
        theirs.close()
        ours.close()


def _big_stream() -> tuple[bytes, list[bytes], int]:
    """A fake ROTATE, content, a heartbeat, an event of 16 MiB + 100 bytes (a 16 MiB packet and its
    continuation), content, EOF: the stream, its content events and the heartbeat's size."""
    rotate = (struct.pack("<IBIIIH", 0, ROTATE, 1, 19 + 8 + 13 + 4, 0, ARTIFICIAL) + struct.pack("<Q", 4)
              + b"binlog.000001" + b"CRC!")
    heartbeat = struct.pack("<IBIIIH", 0, HEARTBEAT, 1, 19 + 13 + 4, 0, 0) + b"binlog.000001" + b"CRC!"
    big = _event(WRITE_ROWS, 47, 0xFFFFFF + 100 - 23)
    content = [_event(QUERY, 4), big, _event(QUERY, 47 + len(big))]
    whole = b"\x00" + big
    rest = whole[0xFFFFFF:]
    packets = [_packet(rotate, 1), _packet(content[0], 2), _packet(heartbeat, 3),
               b"\xff\xff\xff\x04" + whole[:0xFFFFFF], struct.pack("<I", len(rest))[:3] + b"\x05" + rest,
               _packet(content[2], 6), _packet(b"\x00\x00\x02\x00", 7, first=b"\xfe")]
    return b"".join(packets), content, len(heartbeat)


@pytest.mark.parametrize("piece", [1, 4093, 1 << 24])
@pytest.mark.parametrize("batch", [False, True])
def test_edge_reader_gives_the_events_however_the_bytes_arrive(piece: int, batch: bool,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Hand-built stream (``_big_stream``) read in pieces of 1 byte to 16 MiB: the events are the
    stream's, in order, each framing one alone, the 16 MiB one whole; with ``batch``, the reference
    framing gives what the compiled one gives."""
    stream, content, heartbeat = _big_stream()
    results = []
    for framing in ([take_events] if speedups is None or not batch
                    else [take_events, speedups.dump_events]):
        monkeypatch.setattr(replication, "_TAKE_EVENTS", framing)
        got = _read(stream, piece, batch)
        assert got[0].artificial and got[0].file == "binlog.000001" and got[0].offset == 4
        real = [p for p in got if not p.artificial]
        assert b"".join(p.raw for p in real) == b"".join(content)
        assert real[0].offset == 4 and real[-1].offset + len(real[-1].raw) == 47 + len(content[1]) + 43
        assert [len(p.raw) for p in got if p.event_type == HEARTBEAT] == [heartbeat]
        assert any(p.raw == content[1] for p in real)        # the 16 MiB event arrives whole, and alone
        results.append([(p.offset, p.raw, p.event_type, p.log_pos, p.last) for p in got])
    assert all(r == results[0] for r in results)


def test_edge_reader_raises_the_error_packet() -> None:
    """Hand-built: an ERR packet after content ends the stream with the server's error (pymysql's)."""
    import pymysql
    err = _packet(struct.pack("<H", 1236) + b"#HY000Could not find first log file name", 3, first=b"\xff")
    stream = _packet(_event(QUERY, 4), 1) + _packet(_event(QUERY, 47), 2) + err
    with pytest.raises(pymysql.err.OperationalError, match="Could not find first log"):
        _read(stream, 5, True)
