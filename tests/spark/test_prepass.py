"""Where ``binlog-model resolve``'s DDL pre-pass runs (``prepass.scan``), without Spark: a prefetched scan
(``prefetch_scans``, started before the session, in forked processes) is what the job takes, a failing
file's typed error comes out where the result is taken, and a Spark scan task hands a failing file back as
None (the driver scans it again for its own error). The planner's scans leave out transactions of rows only
(``row_transactions=False``): the history they give is the same on every golden fixture. The lean scan (the
decoder passes over those transactions whole, skipped events' checksums unchecked) gives exactly the
reference scan's result on every golden fixture and corpus binlog; damage it does not check is the tasks'
to find, and damage it meets is the reference scan's error."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from binlog_model.errors import BadMagicError, BinlogError, ChecksumMismatchError
from binlog_model.resolve.ddl_pass import DDL_SKIP_TYPES
from binlog_model.spark import prepass
from binlog_model.spark.partitions import (
    _scan,
    build_history,
    fork_scans,
    plan_slices,
    scan_file,
    scan_file_or_none,
    scan_files,
)
from binlog_model.wire import BinlogDecoder, EventType
from tests._paths import CORPUS, REPO, binlogs_under

GOLDEN = REPO / "fixtures" / "golden" / "mariadb"
FILES = sorted(str(p) for p in (GOLDEN / "multi_table" / "binlogs").iterdir())


def test_the_job_takes_the_prefetched_scans() -> None:
    prepass.prefetch_scans(FILES, processes=2)
    assert (tuple(FILES), True) in prepass._PREFETCHED
    assert prepass.scan(None, FILES, True) == scan_files(FILES)  # a caller that wants every event: a new scan
    got = prepass.scan(None, FILES, True, row_transactions=False)  # no session needed: the prefetched result
    assert not prepass._PREFETCHED
    assert got == scan_files(FILES, row_transactions=False)
    assert sum(len(s.events) for s in got) > 0


def test_forked_scans_equal_the_threads_and_keep_the_order() -> None:
    files = sorted(str(p) for d in GOLDEN.iterdir() if (d / "binlogs").is_dir()
                   for p in (d / "binlogs").iterdir())
    assert len(files) > 3
    assert fork_scans(files, processes=3)() == scan_files(files)


def test_a_forked_scan_of_a_bad_file_raises_its_typed_error(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-binlog.000002"
    bad.write_bytes(b"\xfebin" + b"\x00" * 40)
    with pytest.raises(BinlogError) as raised:
        fork_scans([FILES[0], str(bad)], processes=2)()
    assert str(bad) in str(raised.value)


@pytest.mark.parametrize("kind", sorted(p.name for p in (REPO / "fixtures" / "golden").iterdir()))
def test_leaving_out_row_transactions_keeps_the_history(kind: str) -> None:
    """Every golden history (DDL in and between transactions, XA, savepoints, MariaDB's standalone GTIDs):
    the same history and slices with and without the transactions of rows only, and most events gone."""
    kept = every = 0
    scenarios = sorted(d for d in (REPO / "fixtures" / "golden" / kind).iterdir() if (d / "binlogs").is_dir())
    for scenario in scenarios:
        files = sorted(str(p) for p in (scenario / "binlogs").iterdir())
        full, lean = scan_files(files), scan_files(files, row_transactions=False)
        assert build_history(lean).to_json() == build_history(full).to_json(), scenario.name
        assert [s.tx_starts for s in lean] == [s.tx_starts for s in full]
        kept += sum(len(s.events) for s in lean)
        every += sum(len(s.events) for s in full)
    assert 0 < kept < every


@pytest.mark.parametrize(("master", "cores"), [
    ("local", 1), ("local[1]", 1), ("local[3]", 3), ("local[4,2]", 4), ("local[*]", os.cpu_count()),
    ("spark://h:7077", os.cpu_count())])
def test_master_cores(master: str, cores: int) -> None:
    assert prepass.master_cores(master) == cores


def test_a_prefetched_failure_is_the_driver_scans_typed_error(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-binlog.000001"
    bad.write_bytes(b"this is not a binlog")
    prepass.prefetch_scans([str(bad)])
    with pytest.raises(BadMagicError):
        prepass.scan(None, [str(bad)], True)
    assert scan_file_or_none(str(bad)) is None
    assert scan_file_or_none(FILES[0]) == scan_files(FILES[:1])[0]


def test_the_lean_scan_is_the_reference_scan() -> None:
    """On every golden fixture and corpus binlog, both kinds of scan: the same events, starts, end."""
    files = [*sorted((REPO / "fixtures" / "golden").glob("*/*/binlogs/*")),
             *(CORPUS / rel for rel in binlogs_under(CORPUS))]
    if len(files) < 60:
        pytest.skip(f"shared corpus not found: {CORPUS} (set BINLOG_MODEL_SHARED)")
    for path in map(str, files):
        for rows in (True, False):
            assert _scan(path, True, rows, lean=True) == _scan(path, True, rows, lean=False), (path, rows)


def _rows_event_of_a_rows_only_transaction(data: bytes) -> tuple[int, int]:
    """(offset, size) of the first WRITE_ROWS event of a transaction of rows only (GTID, BEGIN, rows, XID)."""
    dec = BinlogDecoder()
    dec.receive_data(data)
    dec.receive_data(b"")
    events = list(dec)
    for n, event in enumerate(events[:-2]):
        begin = getattr(events[n + 1], "query", "") == "BEGIN"
        if event.header.event_type != EventType.GTID_LOG_EVENT or not begin:
            continue
        body = list(itertools.takewhile(lambda e: e.header.event_type in DDL_SKIP_TYPES, events[n + 2:]))
        if events[n + 2 + len(body)].header.event_type == EventType.XID_EVENT:
            rows = next(e for e in body if e.header.event_type == EventType.WRITE_ROWS_EVENT)
            return rows.header.offset, rows.header.event_size
    raise AssertionError("no transaction of rows only")


def test_a_handbuilt_corrupt_rows_event_passes_the_scan_and_fails_its_task(tmp_path: Path) -> None:
    """HAND-BUILT corruption: one byte of a real rows event's row image flipped in a copy. The pre-pass does
    not parse that event, so it no longer checks it; the task whose slice holds it decodes and checks every
    event, and fails with the typed error naming the file and the event, as one line."""
    pytest.importorskip("pyspark")
    from binlog_model.spark.failures import root_cause
    from binlog_model.spark.reading import ReadOptions, decode_slice, pack_history

    source = REPO / "fixtures" / "golden" / "mysql" / "ddl_between_dml" / "binlogs" / "binlog.000001"
    data = bytearray(source.read_bytes())
    offset, size = _rows_event_of_a_rows_only_transaction(bytes(data))
    data[offset + size - 6] ^= 0x01
    bad = tmp_path / "hand-corrupted" / "binlog.000001"
    bad.parent.mkdir()
    bad.write_bytes(bytes(data))
    with pytest.raises(ChecksumMismatchError) as reference:
        _scan(str(bad), True, False, lean=False)            # what the pre-pass used to stop at
    assert reference.value.offset == offset

    scan = scan_file(bad, row_transactions=False)
    intact = scan_file(source, row_transactions=False)
    assert (scan.tx_starts, scan.end) == (intact.tx_starts, intact.end)
    assert build_history([scan]).to_json() == build_history([intact]).to_json()
    options = ReadOptions.parse({"paths": str(bad)})
    packed = pack_history(build_history([scan]).to_json())
    failed = []
    for piece in plan_slices([scan], slice_bytes=1):
        try:
            list(decode_slice(piece, packed, options))
        except ChecksumMismatchError as err:
            failed.append((piece.start, err))
    [(start, err)] = failed
    assert start < offset and err.offset == offset and err.file == str(bad)
    line = root_cause(f"Traceback ...\nbinlog_model.errors.ChecksumMismatchError: {err}\n")
    assert line.startswith("ChecksumMismatchError: CRC32 mismatch") and f"offset {offset}" in line, line


@pytest.mark.parametrize("where", ["length", "crc"])
def test_handbuilt_damage_the_lean_scan_meets_is_the_reference_error(tmp_path: Path, where: str) -> None:
    """HAND-BUILT corruption of a real rows event the lean scan walks past: its length field (the walk then
    runs off into the middle of events) or its checksum. Whatever the lean walk then meets, or if it
    meets nothing, the scan's error is the reference scan's, naming the damaged event."""
    source = REPO / "fixtures" / "golden" / "mysql" / "multi_table" / "binlogs" / "binlog.000001"
    data = bytearray(source.read_bytes())
    offset, size = _rows_event_of_a_rows_only_transaction(bytes(data))
    data[offset + (9 if where == "length" else size - 1)] ^= 0x08
    bad = tmp_path / "hand-corrupted" / "binlog.000001"
    bad.parent.mkdir()
    bad.write_bytes(bytes(data))
    with pytest.raises(ChecksumMismatchError) as reference:
        _scan(str(bad), True, False, lean=False)
    assert reference.value.offset == offset
    for rows in (True, False):
        if where == "crc":      # the lean walk does not look: the scan passes (the task checks it)
            assert scan_file(bad, row_transactions=rows).tx_starts == scan_file(source).tx_starts
            continue
        with pytest.raises(ChecksumMismatchError) as got:
            scan_file(bad, row_transactions=rows)
        assert str(got.value) == str(reference.value)
