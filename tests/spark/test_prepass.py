"""Where ``binlog-model resolve``'s DDL pre-pass runs (``job._scan``), without Spark: a prefetched scan
(``prefetch_scans``, started before the session, in forked processes) is what the job takes, a failing
file's typed error comes out where the result is taken, and a Spark scan task hands a failing file back as
None (the driver scans it again for its own error). The planner's scans leave out transactions of rows only
(``row_transactions=False``): the history they give is the same on every golden fixture."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from binlog_model.errors import BadMagicError, BinlogError
from binlog_model.spark import job
from binlog_model.spark.partitions import build_history, fork_scans, scan_file_or_none, scan_files
from tests._paths import REPO

GOLDEN = REPO / "fixtures" / "golden" / "mariadb"
FILES = sorted(str(p) for p in (GOLDEN / "multi_table" / "binlogs").iterdir())


def test_the_job_takes_the_prefetched_scans() -> None:
    job.prefetch_scans(FILES, processes=2)
    assert (tuple(FILES), True) in job._PREFETCHED
    assert job._scan(None, FILES, True) == scan_files(FILES)    # a caller that wants every event: a new scan
    got = job._scan(None, FILES, True, row_transactions=False)  # no session needed: the prefetched result
    assert not job._PREFETCHED
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
    assert job.master_cores(master) == cores


def test_a_prefetched_failure_is_the_driver_scans_typed_error(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-binlog.000001"
    bad.write_bytes(b"this is not a binlog")
    job.prefetch_scans([str(bad)])
    with pytest.raises(BadMagicError):
        job._scan(None, [str(bad)], True)
    assert scan_file_or_none(str(bad)) is None
    assert scan_file_or_none(FILES[0]) == scan_files(FILES[:1])[0]
