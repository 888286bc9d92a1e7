"""Where ``binlog-model resolve``'s DDL pre-pass runs (``job._scan``), without Spark: a prefetched scan
(``prefetch_scans``, started before the session) is what the job takes, a failing file's typed error comes
out where the result is taken, and a Spark scan task hands a failing file back as None (the driver scans it
again for its own error)."""

from __future__ import annotations

from pathlib import Path

import pytest

from binlog_model.errors import BadMagicError
from binlog_model.spark import job
from binlog_model.spark.partitions import scan_file_or_none, scan_files
from tests._paths import REPO

GOLDEN = REPO / "fixtures" / "golden" / "mariadb"
FILES = sorted(str(p) for p in (GOLDEN / "multi_table" / "binlogs").iterdir())


def test_the_job_takes_the_prefetched_scans() -> None:
    job.prefetch_scans(FILES)
    assert (tuple(FILES), True) in job._PREFETCHED
    got = job._scan(None, FILES, True)          # no session needed: the prefetched result
    assert not job._PREFETCHED
    assert got == scan_files(FILES)
    assert sum(len(s.events) for s in got) > 0


def test_a_prefetched_failure_is_the_driver_scans_typed_error(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-binlog.000001"
    bad.write_bytes(b"this is not a binlog")
    job.prefetch_scans([str(bad)])
    with pytest.raises(BadMagicError):
        job._scan(None, [str(bad)], True)
    assert scan_file_or_none(str(bad)) is None
    assert scan_file_or_none(FILES[0]) == scan_files(FILES[:1])[0]
