"""A row statement's text goes into the serialized event as bytes (``RowStatement``, ``with_rows``): the
compiled ``utf8_valid`` decides like Python's strict decoder, and the spliced event is byte for byte the
message protobuf writes with ``statement`` set, trace comment and invalid text included."""

from __future__ import annotations

import random

import pytest

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.compiled import speedups
from binlog_model.resolve.compiled_rows import _with_rows, with_rows
from binlog_model.resolve.statement_text import RowStatement, put_statement
from binlog_model.testing.golden import fixture_events, iter_fixture_dirs
from tests._paths import REPO

pytestmark = pytest.mark.skipif(speedups is None, reason="the compiled core is not built")


def _strict(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


EDGES = [b"", b"a", b"\x7f", b"\x80", b"\xc1\xbf", b"\xc2\x80", b"\xdf\xbf", b"\xe0\x9f\xbf", b"\xe0\xa0\x80",
         b"\xed\x9f\xbf", b"\xed\xa0\x80", b"\xee\x80\x80", b"\xef\xbf\xbf", b"\xf0\x8f\xbf\xbf",
         b"\xf0\x90\x80\x80", b"\xf4\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xff",
         "é".encode()[:1], "€".encode()[:2], "😀".encode()[:3]]


def test_utf8_valid_decides_like_the_strict_decoder() -> None:
    for edge in EDGES:
        for pad in (b"", b"x" * 7, b"x" * 8, b"x" * 9):     # before, across and after an 8-byte ASCII step
            for data in (edge, pad + edge, edge + pad, pad + edge + pad):
                assert speedups.utf8_valid(data) is _strict(data), data
    rnd = random.Random(20261127)
    alphabet = [b"a", b"abcdefgh", "é".encode(), "€".encode(), "😀".encode(), b"\x80", b"\xc0", b"\xed\xa0",
                b"\xf4\x90", b"\xe0\x80", b"\xff"]
    decided = {True: 0, False: 0}
    for _ in range(20_000):
        data = b"".join(rnd.choice(alphabet) for _ in range(rnd.randrange(8)))
        want = _strict(data)
        decided[want] += 1
        assert speedups.utf8_valid(data) is want, data
        assert speedups.utf8_valid(memoryview(data)) is want
    assert decided[True] > 1000 and decided[False] > 1000


def _event() -> pb.BinlogEvent:
    out = pb.BinlogEvent(source="s", server_uuid="u", transaction_id=7, query_index=2, row_index=0, db="d",
                         table="t", operation=pb.BinlogEvent.INSERT, gtid="u:7", event_index=0,
                         last_in_statement=True, server_id=3)
    out.utc_timestamp.seconds = 1_700_000_000
    out.position.file = "binlog.000001"
    out.position.offset = 4
    return out


def _frames() -> list[bytes]:
    """Three rows framed as ``BinlogEvent.rows`` entries (tag 11, length), as the compiled builder
    gives them."""
    frames = []
    for i in range(3):
        row = pb.Row(row_index=i)
        row.after.add(name="id").value.long_value = i
        data = row.SerializeToString()
        assert len(data) < 0x80
        frames.append(b"\x5a" + bytes([len(data)]) + data)
    return frames


TEXTS = ["INSERT INTO t VALUES (1)", "/* app:42 */ INSERT INTO t VALUES ('é')",
         "  /* x */ UPDATE t SET a = 1", "/*!50000 INSERT */ INTO t VALUES (2)",
         "INSERT INTO t VALUES ('" + "ü€😀" * 300 + "')", "", "/* é */ INSERT" + "x" * 200_000]
RAWS = [t.encode() for t in TEXTS] + [b"INSERT INTO t VALUES ('\xff')", b"/* \xe9 */ INSERT", b"\xed\xa0\x80"]


@pytest.mark.parametrize("raw", RAWS, ids=range(len(RAWS)))
@pytest.mark.parametrize("with_text", [True, False])
def test_the_spliced_event_is_the_message_protobuf_writes(raw: bytes, with_text: bool) -> None:
    text = raw.decode("utf-8", "surrogateescape")       # as the wire layer decodes it
    frames = _frames()
    want = _event()
    want.MergeFromString(b"".join(frames))
    put_statement(want, text, "", with_text)

    out = _event()
    statement = RowStatement(text, raw).put(out, with_text, True)
    assert bool(statement) == (with_text and _strict(raw))      # spliced only when it is UTF-8 and wanted
    assert with_rows(out.SerializeToString(), frames, statement) == want.SerializeToString()

    # Not serialized: the message itself carries what put_statement sets.
    plain = _event()
    assert RowStatement(text, raw).put(plain, with_text, False) == b""
    plain.MergeFromString(b"".join(frames))
    assert plain.SerializeToString() == want.SerializeToString()


def test_with_rows_places_the_statement_between_gtid_and_event_index() -> None:
    frames = _frames()
    statement = RowStatement("SELECT 1", b"SELECT 1")
    for fields in ({}, {"event_index": 0, "last_in_statement": False, "server_id": 0},
                   {"gtid": "", "server_id": 9}, {"gtid_domain_id": 5}):
        want = _event()
        for name, value in fields.items():
            setattr(want, name, value)
        head = pb.BinlogEvent()
        head.CopyFrom(want)
        want.MergeFromString(b"".join(frames))
        want.statement = "SELECT 1"
        spliced = with_rows(head.SerializeToString(), frames, statement.put(head, True, True))
        assert spliced == want.SerializeToString(), fields


def _reference(head: bytes, frames: list[bytes], statement: bytes) -> bytes | None:
    try:
        return _with_rows(head, frames, statement)
    except (AssertionError, IndexError):   # a head it cannot walk (only damaged bytes, never our own)
        return None


def _golden_cases() -> list[tuple[bytes, list[bytes], bytes]]:
    """Every golden fixture event as the assembler splices it: its head (no rows, no statement), its rows
    framed as field 11, its statement field."""
    cases = []
    for fixture in iter_fixture_dirs(REPO / "fixtures" / "golden"):
        for event in fixture_events(fixture):
            head = pb.BinlogEvent()
            head.CopyFrom(event)
            head.ClearField("rows")
            head.ClearField("statement")
            frames = []
            for row in event.rows:
                frame = pb.BinlogEvent()
                frame.rows.add().CopyFrom(row)
                frames.append(frame.SerializeToString())
            statement = b""
            if event.HasField("statement"):
                only = pb.BinlogEvent(statement=event.statement)
                statement = only.SerializeToString()
            assert with_rows(head.SerializeToString(), frames, statement) == event.SerializeToString()
            cases.append((head.SerializeToString(), frames, statement))
    return cases


def test_compiled_splice_is_the_reference_on_golden_and_damaged_heads() -> None:
    """``splice_rows`` (C) against ``_with_rows`` (Python) on every golden event, then on each of those
    heads cut short and with bytes changed (hand-damaged: never a head protobuf writes): the same bytes, or
    None from C where the reference cannot walk the head. Both answers must occur."""
    cases = _golden_cases()
    assert len(cases) > 300
    rnd = random.Random(20261129)
    answered = {"same": 0, "none": 0}
    for head, frames, statement in cases:
        for cut in {head, head[:rnd.randrange(len(head) + 1)], head[:-1]}:
            for data in (cut, bytes(b ^ (1 << rnd.randrange(8)) if rnd.random() < 0.1 else b for b in cut)):
                for stmt in (statement, b"", b"\x7a\x01x"):
                    got = speedups.splice_rows(data, frames, stmt)
                    want = _reference(data, frames, stmt)
                    if got is None:
                        assert data != head, "C refused a head protobuf wrote"
                        answered["none"] += 1
                        # C gives up only where a field cannot be read: the reference may still join
                        # the bytes when it stopped before reading that field (it stops at the place).
                        continue
                    answered["same"] += 1
                    assert got == want, (data, stmt)
    assert answered["same"] > 1000 and answered["none"] > 100, answered
