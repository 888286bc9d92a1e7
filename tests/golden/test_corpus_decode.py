"""Every real binlog in ../shared/corpus and in mariadb-test-data through the decoder.

Expected per-type counts are parsed from corpus/README.md at test time ("events (N): TYPE×n, ...";
``inner:`` counts are events unpacked from TRANSACTION_PAYLOAD). Files that are not binlogs, or that
mariadb-test-data corrupted on purpose, are listed with the error they must raise and why.
Robustness: byte-at-a-time feeding, truncation at and inside event boundaries, and flipped bytes.
"""

from __future__ import annotations

import collections
import contextlib
import gzip
import os
import random
import re
from pathlib import Path
from typing import Any

import pytest

from binlog_model.errors import (
    BadMagicError,
    BinlogError,
    ChecksumMismatchError,
    DecodeError,
    DecoderStateError,
    EncryptedBinlogError,
    TruncatedEventError,
)
from binlog_model.io import iter_events
from binlog_model.wire import NEED_DATA, BinlogDecoder, EventType, UnknownEvent
from tests._paths import CORPUS, binlogs_under, require

MYSQL_TEST = Path("/usr/share/mysql/mysql-test")
SEED = int(os.environ.get("BINLOG_MODEL_TEST_SEED", "20260522"))


# --- README parsing ---------------------------------------------------------------------------------

def _readme_type(name: str) -> int:
    """README short names (QUERY, WRITE_ROWS_V2, MARIA_GTID, TYPE_100 ...) -> type code."""
    special = {"WRITE_ROWS_V2": "WRITE_ROWS_EVENT", "UPDATE_ROWS_V2": "UPDATE_ROWS_EVENT",
               "DELETE_ROWS_V2": "DELETE_ROWS_EVENT", "GTID": "GTID_LOG_EVENT",
               "MARIA_GTID": "GTID_EVENT", "MARIA_GTID_LIST": "GTID_LIST_EVENT",
               "MARIA_BINLOG_CHECKPOINT": "BINLOG_CHECKPOINT_EVENT"}
    if name.startswith("TYPE_"):
        return int(name[5:])
    if name.endswith("_V1") and "ROWS" in name:
        return EventType[name[:-3] + "_EVENT_V1"]
    for candidate in (special.get(name, ""), name + "_EVENT", name + "_LOG_EVENT"):
        if candidate in EventType.__members__:
            return EventType[candidate]
    raise AssertionError(f"README names an event type the test cannot map: {name}")


def _readme_entries() -> dict[str, dict[str, Any]]:
    text = require(CORPUS / "README.md").read_text(encoding="utf-8")
    entries: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    for line in text.splitlines():
        if m := re.match(r"^- \*\*`([^`]+)`\*\*", line):
            current = {"path": m.group(1), "counts": None, "notes": ""}
            entries[m.group(1)] = current
        elif current is not None and (m := re.match(r"^\s+events \((\d+)\): (.*?)\s*$", line)):
            counts: collections.Counter[tuple[bool, int]] = collections.Counter()
            for item in m.group(2).split(", "):
                name, n = item.split("×")
                inner = name.startswith("inner:")
                counts[(inner, _readme_type(name.removeprefix("inner:")))] += int(n)
            assert sum(counts.values()) == int(m.group(1))
            current["counts"] = counts
        elif current is not None:
            current["notes"] += line
    return entries


def _is_xxd_dump(entry: dict[str, Any]) -> bool:
    return "xxd text hexdump" in entry["notes"]


def _binlog_entries() -> list[str]:
    if not (CORPUS / "README.md").exists():
        return []
    return sorted(p for p, e in _readme_entries().items() if e["counts"] is not None and not _is_xxd_dump(e))


def _counts(events: list[Any]) -> collections.Counter[tuple[bool, int]]:
    return collections.Counter((e.header.inner_index is not None, int(e.header.event_type)) for e in events)


def _raw(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def _decode_all(data: bytes, step: int | None = None, **kw: Any) -> list[Any]:
    dec = BinlogDecoder(file="t", **kw)
    out: list[Any] = []
    if step is None:
        dec.receive_data(data)
        out.extend(dec)
    else:
        for i in range(0, len(data), step):
            dec.receive_data(data[i:i + step])
            out.extend(dec)
    dec.receive_data(b"")
    out.extend(dec)
    assert dec.next_event() is NEED_DATA
    return out


# --- the corpus decodes, with the README's counts -------------------------------------------------------

def test_readme_lists_the_corpus() -> None:
    entries = _readme_entries()
    assert len(entries) >= 40
    for path in entries:
        assert (CORPUS / path).exists(), path


@pytest.mark.parametrize("relpath", _binlog_entries())
def test_corpus_file_decodes_with_readme_counts(relpath: str) -> None:
    path = require(CORPUS / relpath)
    expected = _readme_entries()[relpath]["counts"]
    events = list(iter_events(path, chunk_size=4096))
    assert _counts(events) == expected
    offsets = [e.header.offset for e in events if e.header.inner_index is None]
    assert offsets[0] == 4 and offsets == sorted(offsets)
    for e in events:
        assert e.header.file == str(path)
        if e.header.inner_index is None and e.header.log_pos:  # v4: log_pos is the next event's offset
            assert e.header.log_pos == e.header.offset + e.header.event_size


def test_non_binlog_is_bad_magic() -> None:
    path = require(CORPUS / "mysql-binlog-connector-rust/tests/parse_file_tests/non-binlog")
    with pytest.raises(BadMagicError) as info:
        list(iter_events(path))
    assert info.value.offset == 0 and info.value.file == str(path)


def test_aurora_padding_event_is_kept_as_unknown_with_raw_bytes() -> None:
    path = require(CORPUS / "mysql-binlog-connector-java/src/test/resources/mysql-bin.aurora-padding")
    events = list(iter_events(path))
    unknown = [e for e in events if isinstance(e, UnknownEvent)]
    assert len(unknown) == 1
    ev = unknown[0]
    # the listing in the README: Aurora_padding type 100 @281-1209
    assert (ev.header.event_type, ev.header.offset, ev.header.log_pos) == (100, 281, 1209)
    assert len(ev.raw) == 1209 - 281 - 19 - 4


def test_gzip_file_yields_1462_events() -> None:
    path = require(CORPUS / "mysql-binlog-connector-java/src/test/resources/mysql-bin.sakila.gz")
    assert sum(1 for _ in iter_events(path)) == 1462


def _xxd_reverse(text: str) -> bytes:
    """A minimal ``xxd -r``: 'OFFSET: hhhh hhhh ...  ascii' lines back to bytes."""
    out = bytearray()
    for line in text.splitlines():
        if not line.strip():
            continue
        offset, rest = line.split(":", 1)
        hexpart = rest[:41].replace(" ", "")
        assert int(offset, 16) == len(out)
        out += bytes.fromhex(hexpart)
    return bytes(out)


@pytest.mark.parametrize("relpath", ["MyFlash/testbinlog/haha.000005", "MyFlash/testbinlog/haha.000007"])
def test_xxd_hexdump_files_are_not_binlogs_but_their_reversal_is(relpath: str) -> None:
    # Decision: a text hexdump is not a binlog, so the reader refuses it (no guessing formats); reversed
    # with xxd -r it is a real 5.7.18 binlog with the README's counts.
    path = require(CORPUS / relpath)
    with pytest.raises(BadMagicError):
        list(iter_events(path))
    entry = _readme_entries()[relpath]
    data = _xxd_reverse(path.read_text(encoding="ascii"))
    # The dumped file ends with a stray newline byte after the last event: that is a truncated event
    # header to the decoder, at the exact offset; without it the events match the README.
    assert data.endswith(b"\n")
    with pytest.raises(TruncatedEventError) as info:
        _decode_all(data)
    assert info.value.offset == len(data) - 1
    assert _counts(_decode_all(data[:-1])) == entry["counts"]


# --- mariadb-test-data ------------------------------------------------------------------------------

# Files that fail on purpose (or through a limitation), with the error they must raise.
EXPECTED_FAILURES: dict[str, tuple[type[BinlogError], str]] = {
    "std_data/binlog_before_20574.bin": (EncryptedBinlogError, "encrypted binlog (START_ENCRYPTION_EVENT)"),
    "std_data/bug11747416_32228_binlog.000001": (TruncatedEventError, "cut off mid-event (crash test)"),
    "std_data/corrupt-relay-bin.000624": (TruncatedEventError, "corrupt relay log (QUERY status length)"),
    "std_data/mdev-39404-binlog.000001": (ChecksumMismatchError, "GTID event with a zeroed CRC (crash test)"),
    "suite/binlog/std_data/invalid_row_v2_tag.001": (DecoderStateError, "rows event with a corrupt table_id"),
}
# MySQL 5.1.15-5.1.17 TABLE_MAPs have no column metadata block; table_map.py does not accept that yet
# (reported). Like a strict xfail: each must still raise exactly this typed error (reported as xfailed), and
# the test fails once one decodes, so that it is taken off this list and checked as every other file.
PENDING: dict[str, tuple[type[BinlogError], str]] = {
    "suite/binlog/std_data/bug32407.001": (TruncatedEventError, "TABLE_MAP without metadata (5.1.15)"),
    "suite/binlog/std_data/ver_5_1-telco.001": (TruncatedEventError, "TABLE_MAP without metadata (5.1.15)"),
    "suite/binlog/std_data/ver_5_1_17.001": (TruncatedEventError, "TABLE_MAP without metadata (5.1.17)"),
}


def _mysql_test_binlogs() -> list[str]:
    return binlogs_under(MYSQL_TEST)


@pytest.mark.parametrize("relpath", _mysql_test_binlogs())
def test_mariadb_test_data_binlog(relpath: str) -> None:
    path = MYSQL_TEST / relpath
    expected = EXPECTED_FAILURES.get(relpath)
    if expected is not None:
        with pytest.raises(expected[0]) as info:
            list(iter_events(path))
        assert info.value.__class__ is expected[0] or isinstance(info.value, expected[0])
        return
    pending = PENDING.get(relpath)
    try:
        events = list(iter_events(path))
    except BinlogError as err:
        if pending is None:
            raise
        assert type(err) is pending[0], f"{relpath} (PENDING: {pending[1]}) raised {err!r}, " \
                                        f"not the {pending[0].__name__} it is listed with"
        pytest.xfail(f"PENDING: {pending[1]}: {err}")
    if pending is not None:
        pytest.fail(f"{relpath} now decodes ({len(events)} events): remove it from PENDING "
                    f"(listed for: {pending[1]})")
    assert events and int(events[0].header.event_type) in (EventType.FORMAT_DESCRIPTION_EVENT,
                                                             EventType.START_EVENT_V3)


def test_mariadb_test_data_is_present_when_installed() -> None:
    if not MYSQL_TEST.exists():
        pytest.skip("mariadb-test-data is not installed")
    found = set(_mysql_test_binlogs())
    assert len(found) >= 30
    assert set(EXPECTED_FAILURES) <= found and set(PENDING) <= found


def test_binlog_v3_file_from_mysql_4_1() -> None:
    path = MYSQL_TEST / "suite/binlog/std_data/binlog_old_version_4_1.000001"
    if not path.exists():
        pytest.skip("mariadb-test-data is not installed")
    events = list(iter_events(path))
    assert events[0].header.event_type == EventType.START_EVENT_V3
    assert events[0].binlog_version == 3 and events[0].server_version.startswith("4.1.")
    queries = [e.query for e in events if e.header.event_type == EventType.QUERY_EVENT]
    assert queries[0] == "CREATE TABLE t1 (a int, b char(50)) ENGINE = MyISAM"


# --- robustness -----------------------------------------------------------------------------------------

_BYTEWISE = [
    "mysql-binlog-connector-java/src/test/resources/mysql-bin.compressed",  # TRANSACTION_PAYLOAD
    "mysql-binlog-connector-rust/tests/parse_file_tests/mysql-bin.000057",  # TRANSACTION_PAYLOAD, JSON
    "binlog-parser/data/fixtures/mysql-bin.07",  # MariaDB
    "mysql-cdc-rs/tests/events/5.7/14_user_var/log.bin",
    "mysql-cdc-rs/tests/events/8.0/02_query_bigger/binlog.000733",
    "MySqlCdc/samples/MySqlCdc.Sample/mysql-bin.000001",
]


@pytest.mark.parametrize("relpath", _BYTEWISE)
def test_byte_at_a_time_equals_whole_file(relpath: str) -> None:
    data = _raw(require(CORPUS / relpath))
    whole = _decode_all(data)
    assert len(whole) > 3
    assert _decode_all(data, step=1) == whole
    assert _decode_all(data, step=7) == whole


def _boundaries(data: bytes) -> list[tuple[int, int]]:
    """(offset, event_size) of each top-level event."""
    out = []
    for e in _decode_all(data):
        if e.header.inner_index is None:
            out.append((e.header.offset, e.header.event_size))
    return out


def _truncation_files() -> list[str]:
    return [p for p in _binlog_entries() if not p.endswith(".gz")]


@pytest.mark.parametrize("relpath", _truncation_files())
def test_truncation_at_and_inside_event_boundaries(relpath: str) -> None:
    data = _raw(require(CORPUS / relpath))
    bounds = _boundaries(data)
    full = _decode_all(data)
    fde = BinlogDecoder()
    fde.receive_data(data)
    next(iter(fde))
    rng = random.Random(f"{SEED}:{relpath}")
    # Whole-prefix decoding is quadratic in the file size, so large files get an even sample of
    # boundaries for it; every event is still cut inside, decoded from a resumed decoder (same state).
    step = max(1, len(bounds) // 25)
    for n, (offset, size) in enumerate(bounds):
        cuts = [k for k in sorted({1, 18, 19, size - 1, rng.randrange(1, size)}) if 0 < k < size]
        if n % step == 0:
            # exactly at the boundary: a valid shorter file, decoding to a prefix of the events
            prefix = _decode_all(data[:offset])
            assert prefix == full[:len(prefix)]
            assert all(e.header.offset < offset for e in prefix)
            for k in cuts:
                with pytest.raises(TruncatedEventError) as info:
                    _decode_all(data[:offset + k])
                assert info.value.offset == offset
        if n == 0 or fde.format_description_bytes is None:
            continue  # before/at the FDE there is nothing to resume from
        for k in cuts:
            dec = BinlogDecoder.resume(fde.format_description_bytes, offset)
            dec.receive_data(data[offset:offset + k])
            dec.receive_data(b"")
            with pytest.raises(TruncatedEventError) as info:
                dec.next_event()
            assert info.value.offset == offset


def test_truncation_at_random_offsets() -> None:
    print(f"random seed {SEED} (set BINLOG_MODEL_TEST_SEED to replay)")
    rng = random.Random(SEED)
    files = [_raw(require(CORPUS / p)) for p in _truncation_files()]
    if not files:
        pytest.skip(f"shared test material not found: {CORPUS} (set BINLOG_MODEL_SHARED)")
    inside = 0
    for _ in range(200):
        data = rng.choice(files)
        cut = rng.randrange(5, len(data))
        starts = {o for o, _s in _boundaries(data)}
        if cut in starts:
            _decode_all(data[:cut])
            continue
        inside += 1
        with pytest.raises(TruncatedEventError):
            _decode_all(data[:cut])
    assert inside > 150


def _has_crc(data: bytes) -> bool:
    dec = BinlogDecoder()
    dec.receive_data(data)
    next(iter(dec))  # the FORMAT_DESCRIPTION (or START_EVENT_V3)
    return dec.checksum_enabled


@pytest.mark.parametrize("relpath", _truncation_files())
def test_flipped_body_byte_is_a_checksum_mismatch(relpath: str) -> None:
    data = _raw(require(CORPUS / relpath))
    if not _has_crc(data):
        pytest.skip("this file has no CRC32 footers (pre-5.6 server or binlog_checksum=NONE)")
    rng = random.Random(f"{SEED}:{relpath}:flip")
    for offset, size in _boundaries(data):
        pos = offset + rng.randrange(19, size)
        bad = bytearray(data)
        bad[pos] ^= 1 << rng.randrange(8)
        with pytest.raises(ChecksumMismatchError) as info:
            _decode_all(bytes(bad))
        assert info.value.offset == offset
        assert info.value.stored != info.value.computed


@pytest.mark.parametrize("relpath", _truncation_files())
def test_flipped_length_field_is_a_typed_decode_error(relpath: str) -> None:
    data = _raw(require(CORPUS / relpath))
    crc = _has_crc(data)
    rng = random.Random(f"{SEED}:{relpath}:len")
    for offset, _size in _boundaries(data)[:40]:
        bad = bytearray(data)
        bad[offset + 9 + rng.randrange(4)] ^= 1 << rng.randrange(8)
        if crc:
            with pytest.raises(DecodeError):
                _decode_all(bytes(bad))
        else:
            # Without checksums a shifted boundary may still parse; it must never crash untyped.
            with contextlib.suppress(BinlogError):
                _decode_all(bytes(bad))


def test_after_an_error_every_call_is_a_state_error() -> None:
    data = _raw(require(CORPUS / "mysql-cdc-rs/tests/events/5.7/13_rand/log.bin"))
    dec = BinlogDecoder()
    dec.receive_data(data[:100])
    dec.receive_data(b"")
    with pytest.raises(TruncatedEventError):
        list(dec)
    assert dec.failed
    with pytest.raises(DecoderStateError):
        dec.next_event()
    with pytest.raises(DecoderStateError):
        dec.receive_data(data[100:])
    with pytest.raises(DecoderStateError):
        dec.receive_data(b"")
