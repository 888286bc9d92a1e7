"""The one file reader (``io.files``): byte-range slices, skip types, path expansion in rotation order, and
read failures (gzip corruption included) as typed errors on the Spark path too."""

from __future__ import annotations

import gzip
import shutil
import zlib
from pathlib import Path

import pytest

from binlog_model.errors import ConfigError, DecodeError
from binlog_model.io.files import SliceReader, expand_paths, iter_events, iter_slice
from binlog_model.resolve.ddl_pass import DDL_SKIP_TYPES
from binlog_model.spark.partitions import Slice, iter_slice_events, plan_slices, scan_file
from binlog_model.wire.events import SkippedEvent
from tests._paths import REPO

GOLDEN = REPO / "fixtures" / "golden"
# Real server output: MySQL 9.7 and MariaDB 10.11 binlogs of the DDL-between-DML scenario.
DDL_BETWEEN_DML = [GOLDEN / "mysql" / "ddl_between_dml" / "binlogs" / "binlog.000001",
                   GOLDEN / "mariadb" / "ddl_between_dml" / "binlogs" / "mysql-bin.000001"]


def _shape(events: list[object]) -> list[tuple[int, int]]:
    return [(e.header.offset, e.header.event_type) for e in events]  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", DDL_BETWEEN_DML, ids=lambda p: p.parts[-4])
def test_slices_at_transaction_starts_decode_to_the_whole_file(path: Path) -> None:
    whole = list(iter_events(path))
    scan = scan_file(path)
    slices = plan_slices([scan], slice_bytes=1)         # one slice per transaction
    assert len(slices) == len(scan.tx_starts) + (0 if scan.tx_starts[0] == 0 else 1) > 10
    pieces = []
    for piece in slices:
        got = list(iter_slice(piece.path, piece.start, piece.end, piece.format_description))
        end = piece.end if piece.end is not None else path.stat().st_size
        assert got and all(piece.start <= e.header.offset < end for e in got)
        pieces.extend(got)
    assert _shape(pieces) == _shape(whole)
    assert pieces == whole          # the same decoded events, not just the same offsets


@pytest.mark.parametrize("path", DDL_BETWEEN_DML, ids=lambda p: p.parts[-4])
def test_skip_types_skip_bodies_by_header_length(path: Path) -> None:
    whole = list(iter_events(path))
    skipped = list(iter_slice(path, skip_types=DDL_SKIP_TYPES))
    assert _shape(skipped) == _shape(whole)
    kinds = {type(a) for a, b in zip(whole, skipped, strict=True) if isinstance(b, SkippedEvent)}
    assert {k.__name__ for k in kinds} >= {"TableMapEvent", "RowsEvent"}
    for full, cheap in zip(whole, skipped, strict=True):
        if cheap.header.event_type in DDL_SKIP_TYPES:
            assert isinstance(cheap, SkippedEvent)
        else:
            assert cheap == full
    # A slice with skip types (a pre-pass over part of a file) resumes the same way.
    scan = scan_file(path)
    middle = scan.tx_starts[len(scan.tx_starts) // 2]
    tail = list(iter_slice(path, middle, None, scan.format_description, skip_types=DDL_SKIP_TYPES))
    assert _shape(tail) == [s for s in _shape(skipped) if s[0] >= middle]


def test_a_bad_range_or_a_second_pass_is_a_config_error() -> None:
    path = DDL_BETWEEN_DML[0]
    with pytest.raises(ConfigError, match="FORMAT_DESCRIPTION"):
        iter_slice(path, 500)
    with pytest.raises(ConfigError, match="bad byte range"):
        iter_slice(path, 500, 100, b"")
    reader = SliceReader(path)
    assert len(list(reader)) > 10
    with pytest.raises(ConfigError, match="read once"):
        iter(reader)


def test_expansion_is_in_rotation_order(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    names = ["mysql-bin.000010", "mysql-bin.000009", "mysql-bin.000002", "mysql-bin.1000000",
             "mysql-bin.999999"]
    for name in names:
        shutil.copyfile(DDL_BETWEEN_DML[1], logs / name)
    (logs / "mysql-bin.index").write_text("./mysql-bin.000002\n")
    (logs / "notes.txt").write_text("not a binlog")
    order = ["mysql-bin.000002", "mysql-bin.000009", "mysql-bin.000010", "mysql-bin.999999",
             "mysql-bin.1000000"]
    expected = [str(logs / n) for n in order]
    assert expand_paths(logs) == expected                                   # a directory
    assert expand_paths(str(logs / "mysql-bin.*[0-9]")) == expected         # a glob
    # files given out of order, one twice and one also through a glob: each once, in binlog order
    assert expand_paths([logs / "mysql-bin.000010", str(logs / "mysql-bin.00000?"),
                         logs / "mysql-bin.000009"]) == expected[:3]
    # iter_events reads several files in the same order
    files = [logs / "mysql-bin.000010", logs / "mysql-bin.000009"]
    seen = list(dict.fromkeys(e.header.file for e in iter_events(files)))
    assert seen == [str(logs / "mysql-bin.000009"), str(logs / "mysql-bin.000010")]
    with pytest.raises(ConfigError, match="no binlog files"):
        expand_paths([str(logs / "nothing*")])


def gtid_index_directory(tmp_path: Path) -> Path:
    """A binlog directory as MariaDB 11.4+ leaves it: ``binlog.000001`` (a real MySQL 9.7 binlog), its GTID
    index ``binlog.000001.idx`` and the ``binlog.index`` list. The ``.idx`` here is HAND-MADE: the magic
    bytes of MariaDB's GTID index format and zeros, a file that must never be read as a binlog (the real
    ones, from a running MariaDB 11.8, are in tests/differential/test_harness_mariadb11.py)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copyfile(DDL_BETWEEN_DML[0], logs / "binlog.000001")
    (logs / "binlog.000001.idx").write_bytes(b"\xfe\xfe\x0c\x01" + bytes(4092))
    (logs / "binlog.index").write_text("./binlog.000001\n")
    return logs


def test_gtid_index_and_index_files_beside_binlogs_are_never_listed(tmp_path: Path) -> None:
    logs = gtid_index_directory(tmp_path)
    one = [str(logs / "binlog.000001")]
    assert expand_paths(logs) == one                                        # a directory
    assert expand_paths(str(logs / "binlog.0*")) == one                     # globs that match them too
    assert expand_paths(str(logs / "*")) == one
    assert expand_paths([logs, str(logs / "binlog.*")]) == one
    assert list(dict.fromkeys(e.header.file for e in iter_events(expand_paths(logs)))) == one
    # named on their own, they are no binlog: a glob naming nothing else matches nothing
    with pytest.raises(ConfigError, match="no binlog files"):
        expand_paths(str(logs / "*.idx"))


def _hand_corrupted_gzip(tmp_path: Path) -> Path:
    """HAND-BUILT corruption: a real MariaDB binlog gzip-compressed, whose first deflate block header is
    given the reserved block type 3 -- zlib raises ``zlib.error`` ("invalid block type"), which is no
    ``OSError`` and used to escape the Spark reader."""
    packed = bytearray(gzip.compress(DDL_BETWEEN_DML[1].read_bytes(), mtime=0))
    assert packed[3] == 0       # no optional gzip header fields: the deflate data starts at byte 10
    packed[10] |= 0b110         # BTYPE (bits 1-2) = 11
    path = tmp_path / "mysql-bin.000001.hand-corrupted.gz"
    path.write_bytes(bytes(packed))
    with pytest.raises(zlib.error):
        gzip.decompress(bytes(packed))
    return path


def test_corrupt_gzip_on_the_spark_path_is_a_decode_error(tmp_path: Path) -> None:
    path = _hand_corrupted_gzip(tmp_path)
    with pytest.raises(DecodeError) as pre_pass:
        scan_file(path)                                     # the driver's DDL pre-pass
    assert pre_pass.value.file == str(path) and pre_pass.value.offset == 0
    assert isinstance(pre_pass.value.__cause__, zlib.error)

    with pytest.raises(DecodeError) as first:
        list(iter_slice_events(Slice(str(path), 0, 0, None, None)))
    assert first.value.file == str(path) and isinstance(first.value.__cause__, zlib.error)

    # A later slice seeks through the corrupt stream: the error names the slice's start.
    fde = scan_file(DDL_BETWEEN_DML[1]).format_description
    start = scan_file(DDL_BETWEEN_DML[1]).tx_starts[3]
    with pytest.raises(DecodeError) as later:
        list(iter_slice_events(Slice(str(path), 0, start, None, fde)))
    assert later.value.file == str(path) and later.value.offset == start
    assert isinstance(later.value.__cause__, zlib.error)
