"""Decoder edge cases: sentinels, resume/skip options, limits, and hand-built bytes.

Hand-built bytes appear only where no real server writes the case (an unknown type code, a lying
event_size, an unknown QUERY status variable); each such test says so in its name. Everything else uses
real events from ../shared/corpus.
"""

from __future__ import annotations

import pickle
import struct
import zlib

import pytest

from binlog_model.errors import (
    BadMagicError,
    ChecksumMismatchError,
    ConfigError,
    DecodeError,
    DecoderStateError,
    TruncatedEventError,
)
from binlog_model.resolve.ddl_pass import DDL_SKIP_TYPES
from binlog_model.wire import (
    NEED_DATA,
    BinlogDecoder,
    EventType,
    FormatDescriptionEvent,
    QueryEvent,
    SkippedEvent,
    UnknownEvent,
)
from binlog_model.wire.parsers.control import fde_has_checksum_alg
from tests._paths import CORPUS, require

_QUERY_BIGGER = "mysql-cdc-rs/tests/events/8.0/02_query_bigger/binlog.000733"
_COMPRESSED = "mysql-binlog-connector-java/src/test/resources/mysql-bin.compressed"


def _events(data: bytes, **kw: object) -> list:
    dec = BinlogDecoder(**kw)  # type: ignore[arg-type]
    dec.receive_data(data)
    dec.receive_data(b"")
    return list(dec)


def _handbuilt_event(event_type: int, body: bytes, *, offset: int, crc: bool = True) -> bytes:
    size = 19 + len(body) + (4 if crc else 0)
    raw = struct.pack("<IBIIIH", 1700000000, event_type, 7, size, offset + size, 0) + body
    return raw + struct.pack("<I", zlib.crc32(raw)) if crc else raw


def test_need_data_is_a_singleton_sentinel() -> None:
    dec = BinlogDecoder()
    assert dec.next_event() is NEED_DATA
    assert repr(NEED_DATA) == "NEED_DATA"
    assert pickle.loads(pickle.dumps(NEED_DATA)) is NEED_DATA
    dec.receive_data(b"\xfeb")
    assert dec.next_event() is NEED_DATA  # half a magic is not an error until the input ends


def test_empty_input_is_bad_magic() -> None:
    dec = BinlogDecoder(file="empty")
    dec.receive_data(b"")
    with pytest.raises(BadMagicError) as info:
        dec.next_event()
    assert info.value.file == "empty"


def test_magic_then_nothing_is_a_clean_end() -> None:
    assert _events(b"\xfebin") == []


def test_start_offset_needs_expect_magic_off() -> None:
    with pytest.raises(ConfigError):
        BinlogDecoder(start_offset=100)
    with pytest.raises(ConfigError):
        BinlogDecoder(expect_magic=False, start_offset=-1)


def test_receive_after_end_of_input_is_a_state_error() -> None:
    dec = BinlogDecoder()
    dec.receive_data(b"")
    with pytest.raises(DecoderStateError):
        dec.receive_data(b"\xfebin")


def test_resume_mid_file_with_the_format_description() -> None:
    data = require(CORPUS / _QUERY_BIGGER).read_bytes()
    whole = _events(data)
    first = BinlogDecoder()
    first.receive_data(data[:4 + whole[0].header.event_size])
    assert isinstance(next(iter(first)), FormatDescriptionEvent)
    fde_bytes = first.format_description_bytes
    assert fde_bytes is not None
    # resume at the 10th event (a GTID, a transaction start) as a Spark slice would
    start = whole[10].header.offset
    dec = BinlogDecoder.resume(fde_bytes, start, file="slice")
    dec.receive_data(data[start:])
    dec.receive_data(b"")
    resumed = list(dec)
    assert [(e.header.offset, e.header.event_type) for e in resumed] == \
        [(e.header.offset, e.header.event_type) for e in whole[10:]]
    assert all(e.header.file == "slice" for e in resumed)
    assert dec.checksum_enabled


def test_feed_format_description_rejects_other_events() -> None:
    data = require(CORPUS / _QUERY_BIGGER).read_bytes()
    whole = _events(data)
    prev = whole[1].header
    dec = BinlogDecoder(expect_magic=False, start_offset=prev.offset)
    with pytest.raises(DecodeError):
        dec.feed_format_description(data[prev.offset:prev.offset + prev.event_size])


def test_skip_types_returns_skipped_events_but_keeps_checksums() -> None:
    data = require(CORPUS / _QUERY_BIGGER).read_bytes()
    whole = _events(data)
    rows_types = {EventType.WRITE_ROWS_EVENT, EventType.UPDATE_ROWS_EVENT, EventType.DELETE_ROWS_EVENT,
                  EventType.TABLE_MAP_EVENT}
    skipped = _events(data, skip_types=frozenset(rows_types))
    assert len(skipped) == len(whole)
    for a, b in zip(whole, skipped, strict=True):
        assert a.header == b.header
        if a.header.event_type in rows_types:
            assert isinstance(b, SkippedEvent) and b.raw_length == a.header.event_size
        else:
            assert a == b
    # the checksum is still verified for skipped events
    victim = next(e for e in whole if e.header.event_type == EventType.WRITE_ROWS_EVENT).header
    bad = bytearray(data)
    bad[victim.offset + 25] ^= 0xFF
    with pytest.raises(DecodeError) as info:
        _events(bytes(bad), skip_types=frozenset(rows_types))
    assert info.value.offset == victim.offset


@pytest.mark.parametrize("name", [_QUERY_BIGGER, _COMPRESSED])
def test_drop_skipped_gives_the_other_events_and_the_same_errors(name: str) -> None:
    """``drop_skipped`` (the pre-pass's fast walk over rows and table maps) yields exactly the events a
    per-event pass yields that are not ``SkippedEvent``s, fed whole or in small pieces, and still finds a
    damaged checksum in a skipped event at its offset (hand-built damage of real bytes)."""
    data = require(CORPUS / name).read_bytes()
    skip = frozenset(DDL_SKIP_TYPES)
    slow = [e for e in _events(data, skip_types=skip) if not isinstance(e, SkippedEvent)]
    fast_decoder = BinlogDecoder(skip_types=skip, drop_skipped=True)
    fast_decoder.receive_data(data)
    fast_decoder.receive_data(b"")
    fast = list(fast_decoder)
    assert fast == slow and len(fast) > 3
    assert fast_decoder.skipped == len(_events(data, skip_types=skip)) - len(slow) > 0
    pieces = BinlogDecoder(skip_types=skip, drop_skipped=True)
    got = []
    for at in range(0, len(data), 777):       # events cut across feeds: the walk stops, then goes on
        pieces.receive_data(data[at:at + 777])
        got.extend(pieces)
    pieces.receive_data(b"")
    got.extend(pieces)
    assert got == slow
    victims = [e.header for e in _events(data)
               if e.header.event_type in skip and e.header.inner_index is None]
    if not victims:
        return
    victim = victims[len(victims) // 2]
    bad = bytearray(data)
    bad[victim.offset + 20] ^= 0xFF
    with pytest.raises(ChecksumMismatchError) as info:
        _events(bytes(bad), skip_types=skip, drop_skipped=True)
    assert info.value.offset == victim.offset


def test_transaction_payload_inner_events_carry_payload_offset_and_index() -> None:
    data = require(CORPUS / _COMPRESSED).read_bytes()
    events = _events(data)
    payload = next(e for e in events if e.header.event_type == EventType.TRANSACTION_PAYLOAD_EVENT)
    i = events.index(payload)
    inner = events[i + 1:i + 1 + payload.inner_event_count]
    assert payload.compression_type == 0 and payload.inner_event_count == 4
    assert [e.header.inner_index for e in inner] == [0, 1, 2, 3]
    assert all(e.header.offset == payload.header.offset for e in inner)
    assert isinstance(inner[0], QueryEvent) and inner[0].query == "BEGIN"
    assert sum(e.header.event_size for e in inner) == payload.uncompressed_size


def test_handbuilt_unknown_type_code_is_kept_with_raw_bytes() -> None:
    data = require(CORPUS / "mysql-cdc-rs/tests/events/5.7/03_stop/log.bin").read_bytes()
    events = _events(data)
    end = events[-1].header.offset  # replace the STOP event by a hand-built one of type 120
    body = b"payload of a type no server defines"
    forged = data[:end] + _handbuilt_event(120, body, offset=end)
    out = _events(forged)
    assert isinstance(out[-1], UnknownEvent)
    assert out[-1].raw == body and out[-1].header.event_type == 120
    assert out[-1].header.type_name == "UNKNOWN_TYPE_120"


def test_handbuilt_event_size_beyond_the_cap_is_refused_without_buffering() -> None:
    data = require(CORPUS / "mysql-cdc-rs/tests/events/5.7/03_stop/log.bin").read_bytes()
    fde_end = 4 + _events(data)[0].header.event_size
    header = struct.pack("<IBIIIH", 1, EventType.QUERY_EVENT, 1, 0xFFFFFFF0, 0, 0)
    dec = BinlogDecoder()
    dec.receive_data(data[:fde_end] + header)  # the file's FDE, then a header claiming ~4 GiB
    with pytest.raises(DecodeError) as info:
        list(dec)  # refused at once, not NEED_DATA forever
    assert "exceeds" in str(info.value) and info.value.offset == fde_end


def test_handbuilt_event_size_below_header_is_truncated_error() -> None:
    data = require(CORPUS / "mysql-cdc-rs/tests/events/5.7/03_stop/log.bin").read_bytes()
    header = struct.pack("<IBIIIH", 1, EventType.QUERY_EVENT, 1, 10, 0, 0)
    dec = BinlogDecoder()
    dec.receive_data(data[:4 + _events(data)[0].header.event_size] + header)
    with pytest.raises(TruncatedEventError) as info:
        list(dec)
    assert info.value.event_type == "QUERY_EVENT"


def test_handbuilt_unknown_query_status_var_is_kept_raw() -> None:
    # Q_FLAGS2 (0) then an unknown code 99: parsing stops there and keeps the rest raw.
    status = b"\x00" + struct.pack("<I", 0x4000) + b"\x63\x01\x02\x03"
    post = struct.pack("<IIBHH", 42, 0, 2, 0, len(status))
    body = post + status + b"db\x00" + b"SELECT 1"
    dec = BinlogDecoder.for_events(checksum=True, start_offset=500)
    dec.receive_data(_handbuilt_event(EventType.QUERY_EVENT, body, offset=500))
    q = dec.next_event()
    assert isinstance(q, QueryEvent)
    assert (q.flags2, q.unknown_status_vars) == (0x4000, b"\x63\x01\x02\x03")
    assert (q.schema, q.query) == ("db", "SELECT 1")
    assert q.thread_id == 42 and q.header.offset == 500


def test_query_status_vars_of_a_real_8_0_event() -> None:
    data = require(CORPUS / _QUERY_BIGGER).read_bytes()
    q = next(e for e in _events(data) if isinstance(e, QueryEvent) and e.query.startswith("CREATE"))
    assert q.charset_client is not None and q.collation_server is not None
    assert q.sql_mode is not None and q.flags2 is not None
    assert q.unknown_status_vars == b""
    assert q.default_collation_for_utf8mb4 == 255  # utf8mb4_0900_ai_ci, written by 8.0 for DDL
    assert q.query_bytes.decode() == q.query


def test_checksum_verification_can_be_turned_off() -> None:
    data = bytearray(require(CORPUS / "mysql-cdc-rs/tests/events/5.7/13_rand/log.bin").read_bytes())
    whole = _events(bytes(data))
    rand = next(e for e in whole if e.header.event_type == EventType.RAND_EVENT).header
    data[rand.offset + rand.event_size - 1] ^= 0xFF  # the CRC footer itself
    with pytest.raises(DecodeError):
        _events(bytes(data))
    assert _events(bytes(data), verify_checksum=False) == whole


def test_checksum_alg_rule_by_server_version() -> None:
    assert fde_has_checksum_alg("5.6.1-log") and not fde_has_checksum_alg("5.6.0")
    assert fde_has_checksum_alg("5.5.36-MariaDB-log") is True
    assert not fde_has_checksum_alg("5.1.73-log")


def test_large_input_fed_in_small_chunks_keeps_the_buffer_small() -> None:
    # A real 28 KB file whose events (from its FDE on) are repeated 10 times, as relay logs concatenate
    # files: 280 KB in 5-byte chunks. The buffer is compacted as it goes (O(n) overall), so it never
    # holds much more than the 64 KiB compaction threshold.
    path = CORPUS / "mysql-binlog-connector-java/src/test/resources/mysql-bin.checksum-crc32"
    data = require(path).read_bytes()
    stream = data + data[4:] * 10
    dec = BinlogDecoder()
    count = 0
    peak = 0
    for i in range(0, len(stream), 5):
        dec.receive_data(stream[i:i + 5])
        for _ in dec:
            count += 1
        peak = max(peak, len(dec._buf))
    dec.receive_data(b"")
    count += len(list(dec))
    assert count == 303 * 11
    assert peak < (1 << 17)
    assert dec.offset == len(stream)


@pytest.mark.parametrize("fde", [b"", b"\x00" * 10])
def test_resume_with_a_missing_or_short_format_description_is_a_typed_error(fde: bytes) -> None:
    with pytest.raises(TruncatedEventError):
        BinlogDecoder.resume(fde, 4)


def test_resume_with_no_bytes_at_all_is_a_config_error() -> None:
    from binlog_model.errors import ConfigError

    with pytest.raises(ConfigError):
        BinlogDecoder.resume(None, 4)  # type: ignore[arg-type]


def test_transaction_payload_streamed_in_chunks_decodes_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """A payload past ``EAGER_MAX`` is inflated a chunk at a time (memory stays flat for a compressed
    transaction of millions of rows): with every payload streamed in 7-byte chunks, so that chunks end
    inside headers and bodies, the events equal the ones of the one-piece inflation; a corrupt stream is
    still refused before any inner event is handed out."""
    from binlog_model.wire.parsers import payload as payload_module
    data = require(CORPUS / _COMPRESSED).read_bytes()
    whole = _events(data)
    monkeypatch.setattr(payload_module, "EAGER_MAX", 0)
    monkeypatch.setattr(payload_module, "_CHUNK", 7)
    assert _events(data) == whole
    first = next(e for e in whole if e.header.event_type == EventType.TRANSACTION_PAYLOAD_EVENT).header
    bad = bytearray(data)
    bad[first.offset + first.event_size - 12] ^= 0xFF      # inside the zstd frame, before the checksum
    decoder = BinlogDecoder(verify_checksum=False)
    decoder.receive_data(bytes(bad))
    seen = []
    with pytest.raises(DecodeError):
        for event in decoder:
            seen.append(event)
    assert all(e.header.offset < first.offset for e in seen), "no event of the corrupt payload came out"
