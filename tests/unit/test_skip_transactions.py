"""The decoder's transaction skip (``skip_transactions``: the Spark pre-pass passes over each transaction of
rows only as one ``SkippedTransaction``) against the reference decode, on every golden fixture and every
binlog of the shared corpus (MySQL 5.7 to 9.7, MariaDB 10 and 11, CRC32 and no checksums, anonymous
GTIDs, ROWS_QUERY, compressed transactions, XA and savepoints).

A ``SkippedTransaction`` must stand for exactly the events the reference gives in its byte range (a GTID,
maybe a QUERY ``BEGIN``, an XID or QUERY ``COMMIT``), every other event must be the reference's, the
output must not depend on how the input is cut into feeds, and ``query_text_start`` (how the skip reads a
QUERY's text) must find the full parser's text in every QUERY event. Hand-built bytes only where named:
damage to real events.
"""

from __future__ import annotations

import zlib
from typing import Any

import pytest

from binlog_model.errors import BinlogError, ChecksumMismatchError
from binlog_model.resolve.ddl_pass import DDL_SKIP_TYPES
from binlog_model.wire import (
    BinlogDecoder,
    EventType,
    GtidEvent,
    MariadbGtidEvent,
    QueryEvent,
    SkippedTransaction,
    XidEvent,
    skipping,
)
from binlog_model.wire.parsers.query import query_text_start
from tests._paths import CORPUS, REPO, binlogs_under

GOLDEN = sorted((REPO / "fixtures" / "golden").glob("*/*/binlogs/*"))
FILES = GOLDEN + [CORPUS / rel for rel in binlogs_under(CORPUS)]
SKIP = frozenset(DDL_SKIP_TYPES)


def _decode(data: bytes, piece: int | None = None, **options: Any) -> list[Any]:
    """Every event of ``data`` (fed whole, or ``piece`` bytes at a time), or the error as the last item."""
    dec = BinlogDecoder(**{"skip_types": SKIP, "drop_skipped": True, **options})
    out: list[Any] = []
    try:
        for at in range(0, len(data), piece or len(data) or 1):
            dec.receive_data(data[at:at + (piece or len(data))])
            out.extend(dec)
        dec.receive_data(b"")
        out.extend(dec)
    except BinlogError as err:
        out.append((type(err).__name__, str(err)))
    return out


def _expand(fast: list[Any], reference: list[Any]) -> int:
    """Check ``fast`` against ``reference`` (each ``SkippedTransaction`` against the reference events in
    its range); how many transactions were skipped."""
    i = skipped = 0
    for item in fast:
        if type(item) is not SkippedTransaction:
            assert item == reference[i]
            i += 1
            continue
        skipped += 1
        end = item.header.offset + item.length
        inside = []
        while i < len(reference) and not isinstance(reference[i], tuple) and reference[i].header.offset < end:
            inside.append(reference[i])
            i += 1
        first, *middle, last = inside
        assert isinstance(first, GtidEvent | MariadbGtidEvent) and first.header == item.header
        assert [type(e) for e in middle] in ([], [QueryEvent]) and all(e.query == "BEGIN" for e in middle)
        assert isinstance(last, XidEvent) or (isinstance(last, QueryEvent) and last.query == "COMMIT")
        assert last.header.offset + last.header.event_size == end
        assert all(e.header.inner_index is None for e in inside)
    assert i == len(reference)
    return skipped


def test_skipped_transactions_stand_for_exactly_the_reference_events() -> None:
    if not binlogs_under(CORPUS):
        pytest.skip(f"shared corpus not found: {CORPUS} (set BINLOG_MODEL_SHARED)")
    skipped = {}
    for path in FILES:
        data = path.read_bytes()
        fast = _decode(data, skip_transactions=True)
        try:
            skipped[path] = _expand(fast, _decode(data))
        except AssertionError as err:
            raise AssertionError(f"{path}: {err}") from err
    assert all(skipped[path] for path in GOLDEN)     # MySQL 9.7, MariaDB 10.11 and 11.8 alike
    by_name = {str(path.relative_to(CORPUS)): n for path, n in skipped.items() if path.is_relative_to(CORPUS)}
    assert by_name["mysql-binlog-connector-java/src/test/resources/mysql-bin.checksum-none"] > 10  # no CRCs
    assert by_name["mysql-cdc-rs/tests/events/5.7/34_anonymous_gtid/log.bin"] == 1
    assert by_name["mysql-cdc-rs/tests/events/5.7/29_row_query/log.bin"] == 1               # ROWS_QUERY


@pytest.mark.parametrize("piece", [1, 777])
def test_the_skip_does_not_depend_on_how_the_input_is_fed(piece: int) -> None:
    """A transaction not all here yet waits for the rest of itself (a byte at a time included)."""
    for path in (GOLDEN[0], *(p for p in GOLDEN if p.parent.parent.name == "multi_table")):
        data = path.read_bytes()
        whole = _decode(data, skip_transactions=True)
        assert _decode(data, piece, skip_transactions=True) == whole, path
        assert any(type(e) is SkippedTransaction for e in whole)


def test_a_transaction_longer_than_the_cap_comes_back_event_by_event(monkeypatch: pytest.MonkeyPatch) -> None:
    path = next(p for p in GOLDEN if p.parent.parent.name == "large_statement")
    data = path.read_bytes()
    lengths = sorted(e.length for e in _decode(data, skip_transactions=True) if type(e) is SkippedTransaction)
    cap = lengths[-1] - 1                # the longest one no longer fits; the others do
    monkeypatch.setattr(skipping, "_SKIP_TRANSACTION_MAX", cap)
    for piece in (None, 1000):
        fast = _decode(data, piece, skip_transactions=True)
        assert sorted(e.length for e in fast if type(e) is SkippedTransaction) == lengths[:-1]
        assert _expand(fast, _decode(data)) == len(lengths) - 1


def test_query_text_start_finds_the_full_parsers_text() -> None:
    if not binlogs_under(CORPUS):
        pytest.skip(f"shared corpus not found: {CORPUS} (set BINLOG_MODEL_SHARED)")
    seen = 0
    for path in FILES:
        data = path.read_bytes()
        dec = BinlogDecoder()
        dec.receive_data(data)
        dec.receive_data(b"")
        try:
            events = list(dec)
        except BinlogError:
            continue
        ctx = dec.context
        if ctx is None or ctx.header_length != 19:
            continue                    # binlog v1/v3: no transaction skip (it needs a v4 header)
        crc = 4 if dec.checksum_enabled else 0
        for event in events:
            if event.header.event_type != EventType.QUERY_EVENT or event.header.inner_index is not None:
                continue
            raw = data[event.header.offset:event.header.offset + event.header.event_size]
            start = query_text_start(raw, 19, len(raw) - crc, ctx.post_header_len(EventType.QUERY_EVENT))
            assert raw[start:len(raw) - crc] == event.query_bytes, (path, event.header.offset)
            seen += 1
    assert seen > 500


def _golden(kind: str, scenario: str) -> bytes:
    return next(p for p in GOLDEN if p.parents[1].name == scenario and p.parents[2].name == kind).read_bytes()


def test_handbuilt_damage_in_a_skipped_transaction_is_its_events_error() -> None:
    """Hand-built damage of real bytes: a flipped byte in a GTID, a BEGIN or an XID of a transaction of rows
    only is that event's checksum error at its offset, as the reference decode gives it; in a rows event
    it is the reference's error with ``verify_skipped``, and passed over without (its task checks it)."""
    data = _golden("mysql", "multi_table")
    reference = _decode(data)
    skipped = next(e for e in _decode(data, skip_transactions=True) if type(e) is SkippedTransaction)
    every = _decode(data, skip_types=frozenset(), drop_skipped=False)
    inside = [e.header for e in every if skipped.header.offset <= e.header.offset
              < skipped.header.offset + skipped.length]
    assert [h.event_type for h in inside][:2] == [EventType.GTID_LOG_EVENT, EventType.QUERY_EVENT]
    for victim in inside:
        bad = bytearray(data)
        bad[victim.offset + victim.event_size - 6] ^= 0x10
        for verify_skipped in (True, False):
            got = _decode(bytes(bad), skip_transactions=True, verify_skipped=verify_skipped)
            if victim.event_type in SKIP and not verify_skipped:
                assert _expand(got, reference) > 0          # passed over: unparsed and unchecked
                continue
            name, message = got[-1]
            assert name == ChecksumMismatchError.__name__ and f"offset {victim.offset}" in message, message
            assert got[-1] == _decode(bytes(bad))[-1]



def _with_query_text(data: bytes, query: Any, text: bytes, at: Any = None) -> bytes:
    """HAND-BUILT from real bytes: ``data`` with the QUERY event ``query`` (a header) given the statement
    ``text`` (length and CRC32 recomputed), put in place of the event whose header is ``at`` (default:
    itself). Later offsets shift; nothing reads the headers' log_pos."""
    raw = bytearray(data[query.offset:query.offset + query.event_size - 4])
    start = query_text_start(raw, 19, len(raw), 13)
    raw[start:] = text
    raw[9:13] = (len(raw) + 4).to_bytes(4, "little")
    event = bytes(raw) + zlib.crc32(raw).to_bytes(4, "little")
    at = at or query
    return data[:at.offset] + event + data[at.offset + at.event_size:]


@pytest.mark.parametrize(("begin", "end", "skipped"), [
    (b"BEGIN", b"COMMIT", True),         # a commit by QUERY (a non-transactional table's)
    (b"BEGIN", b"ROLLBACK", False),      # the reference keeps a rollback: so must the skip
    (b"begin", None, False),             # the same statement, not byte for byte: decoded and routed
    (b"SAVEPOINT a", None, False),       # any other first statement keeps the transaction
])
def test_handbuilt_envelopes_skip_only_byte_exact_begin_and_commit(
        tmp_path: Any, begin: bytes, end: bytes | None, skipped: bool) -> None:
    from binlog_model.spark.partitions import _scan

    data = _golden("mysql", "multi_table")
    first = next(e for e in _decode(data, skip_transactions=True) if type(e) is SkippedTransaction)
    every = _decode(data, skip_types=frozenset(), drop_skipped=False)
    inside = [e for e in every if first.header.offset <= e.header.offset < first.header.offset + first.length]
    query, xid = inside[1].header, inside[-1].header
    assert isinstance(inside[1], QueryEvent) and isinstance(inside[-1], XidEvent)
    if end is not None:        # the XID replaced by a QUERY made from the BEGIN's own bytes
        data = _with_query_text(data, query, end, at=xid)
    data = _with_query_text(data, query, begin)
    fast = _decode(data, skip_transactions=True)
    _expand(fast, _decode(data))
    found = [e for e in fast if type(e) is SkippedTransaction and e.header.offset == first.header.offset]
    assert bool(found) == skipped
    path = tmp_path / "binlog.000001"
    path.write_bytes(data)
    for rows in (True, False):
        assert _scan(str(path), True, rows, lean=True) == _scan(str(path), True, rows, lean=False)


def test_the_source_markers_are_the_reference_markers() -> None:
    """Through the file source, a skipped transaction's start and end markers are where its GTID and its
    commit put them (``BoundaryTracker``, ``TransactionStarts``): what a pre-pass cuts slices at."""
    from binlog_model.io.file_source import FileSource
    from binlog_model.runs.source import BOUNDARY_TYPES

    if not binlogs_under(CORPUS):
        pytest.skip(f"shared corpus not found: {CORPUS} (set BINLOG_MODEL_SHARED)")
    for path in FILES:
        def markers(**options: Any) -> list[Any]:
            source = FileSource(path, skip_types=SKIP, drop_skipped=True, **options)  # noqa: B023
            try:
                return [item for item in source.read() if type(item) in BOUNDARY_TYPES]
            except BinlogError as err:
                return [str(err)]
        assert markers(skip_transactions=True, verify_skipped=False) == markers(), path


@pytest.mark.parametrize("kind", ["mysql", "mariadb"])
def test_handbuilt_open_transaction_before_a_skipped_one(tmp_path: Any, kind: str) -> None:
    """HAND-BUILT event order from real bytes (no server writes it): a transaction cut after its opening
    events, then a whole one the decoder skips, then the rows and commit of a third without its opening.
    The reference flushes the open one at the skipped one's GTID; so must the lean scan."""
    from binlog_model.spark.partitions import _scan

    data = _golden(kind, "multi_table")
    first, second, third = [e for e in _decode(data, skip_transactions=True)
                            if type(e) is SkippedTransaction][:3]
    assert first.header.offset + first.length == second.header.offset
    assert second.header.offset + second.length == third.header.offset
    every = _decode(data, skip_types=frozenset(), drop_skipped=False)
    opening = [e.header for e in every if type(e) in (GtidEvent, MariadbGtidEvent, QueryEvent)
               and first.header.offset <= e.header.offset < first.header.offset + first.length]
    cut = opening[-1].offset + opening[-1].event_size               # first: its GTID (and BEGIN) only
    resumed = next(e.header for e in every if e.header.offset > third.header.offset
                   and type(e) not in (GtidEvent, MariadbGtidEvent, QueryEvent)).offset  # third: rows on
    forged = data[:cut] + data[second.header.offset:third.header.offset] + data[resumed:]
    path = tmp_path / "binlog.000001"
    path.write_bytes(forged)
    assert any(type(e) is SkippedTransaction for e in _decode(forged, skip_transactions=True))
    lean, reference = _scan(str(path), True, False, lean=True), _scan(str(path), True, False, lean=False)
    assert lean == reference
    assert any(isinstance(e, XidEvent) for e in reference.events)   # the third's XID, on its own


def test_a_waiting_transaction_walks_each_event_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fed in small pieces, a transaction waiting for the rest of itself goes on walking where it stopped:
    every skipped event is walked once (a bulk transaction of small events must not cost its length
    squared)."""
    walked = []
    original = skipping.SkipWalks._pass_skipped

    def counting(self: Any, view: memoryview, pos: int) -> tuple[int, int]:
        end, count = original(self, view, pos)
        walked.append(count)
        return end, count

    monkeypatch.setattr(skipping.SkipWalks, "_pass_skipped", counting)
    data = _golden("mysql", "all_types")
    dec = BinlogDecoder(skip_types=SKIP, drop_skipped=True, skip_transactions=True)
    out = []
    for at in range(0, len(data), 50):
        dec.receive_data(data[at:at + 50])
        out.extend(dec)
    dec.receive_data(b"")
    out.extend(dec)
    assert sum(walked) == dec.skipped > 50
    assert out == _decode(data, skip_transactions=True)
