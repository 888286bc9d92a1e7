"""``io.files.iter_events``: chunked reading, gzip, rotation order, and file names in errors."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from binlog_model.errors import ConfigError, DecoderStateError, TruncatedEventError
from binlog_model.io import iter_events, sort_binlog_files
from binlog_model.wire import EventType, RotateEvent
from tests._paths import CORPUS, require

_PERCONA = "percona-binlog-server/mtr/binlog_streaming/std_data/data_80045_gtid"


def test_sort_binlog_files_by_numeric_suffix() -> None:
    names = ["b/mysql-bin.000010", "a/mysql-bin.000002", "mysql-bin.000001"]
    assert [p.name for p in sort_binlog_files(names)] == ["mysql-bin.000001", "mysql-bin.000002",
                                                          "mysql-bin.000010"]


def test_two_rotated_files_in_order_with_their_own_names() -> None:
    d = require(CORPUS / _PERCONA)
    second, first = d / "binlog.000002", d / "binlog.000001"
    events = list(iter_events([second, first], strict_rotation=True))  # given out of order
    files = [e.header.file for e in events]
    split = files.index(str(second))
    assert set(files[:split]) == {str(first)} and set(files[split:]) == {str(second)}
    assert sum(1 for e in events if e.header.event_type == EventType.FORMAT_DESCRIPTION_EVENT) == 2
    rotate = events[split - 1]
    assert isinstance(rotate, RotateEvent) and rotate.next_file == "binlog.000002"
    assert len(events) == 26 + 13


def test_strict_rotation_detects_a_missing_file(tmp_path: Path) -> None:
    d = require(CORPUS / _PERCONA)
    shutil.copyfile(d / "binlog.000001", tmp_path / "binlog.000001")
    shutil.copyfile(d / "binlog.000002", tmp_path / "binlog.000003")  # 000002 is "missing"
    files = [tmp_path / "binlog.000001", tmp_path / "binlog.000003"]
    assert len(list(iter_events(files))) == 39  # lenient by default
    with pytest.raises(DecoderStateError):
        list(iter_events(files, strict_rotation=True))


@pytest.mark.parametrize("chunk_size", [1, 17, 4096, 1 << 20])
def test_chunk_size_does_not_change_events(chunk_size: int) -> None:
    path = require(CORPUS / "mysql-binlog-connector-rust/tests/parse_file_tests/mysql-bin.000057")
    assert list(iter_events(path, chunk_size=chunk_size)) == list(iter_events(path))


def test_bad_chunk_size_and_missing_file_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        list(iter_events(tmp_path / "x", chunk_size=0))
    with pytest.raises(ConfigError):
        list(iter_events(tmp_path / "does-not-exist.000001"))


def test_gzip_is_detected_by_magic_not_by_name(tmp_path: Path) -> None:
    src = require(CORPUS / "mysql-cdc-rs/tests/events/5.7/13_rand/log.bin")
    packed = tmp_path / "mysql-bin.000007"
    packed.write_bytes(gzip.compress(src.read_bytes()))
    plain = list(iter_events(src))
    unpacked = list(iter_events(packed))
    assert [(e.header.offset, e.header.event_type) for e in unpacked] == \
        [(e.header.offset, e.header.event_type) for e in plain]


def test_truncated_file_error_names_the_file(tmp_path: Path) -> None:
    src = require(CORPUS / "mysql-cdc-rs/tests/events/5.7/13_rand/log.bin").read_bytes()
    cut = tmp_path / "mysql-bin.000003"
    cut.write_bytes(src[:-10])
    with pytest.raises(TruncatedEventError) as info:
        list(iter_events(cut, chunk_size=64))
    assert info.value.file == str(cut)
    assert str(cut) in str(info.value)


def test_corrupt_gzip_deflate_data_is_a_decode_error(tmp_path: Path) -> None:
    """HAND-BUILT corruption: a real corpus binlog gzip-compressed, with one byte of its deflate data
    flipped. zlib's own error must surface as a DecodeError naming the file."""
    from binlog_model.errors import DecodeError

    source = require(CORPUS / "mysql-cdc-rs/tests/events/8.0/02_query_bigger/binlog.000733")
    packed = bytearray(gzip.compress(source.read_bytes()))
    packed[130] ^= 0xFF
    path = tmp_path / "binlog.000733.gz"
    path.write_bytes(bytes(packed))
    with pytest.raises(DecodeError) as info:
        list(iter_events(path))
    assert info.value.file == str(path)


def test_local_names_become_absolute_and_uris_stay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from binlog_model.io.files import absolute_name, base_name, is_uri, list_binlog_files, sort_binlog_names

    (tmp_path / "logs").mkdir()
    for name in ("mysql-bin.000010", "mysql-bin.000002", "notes.txt"):
        (tmp_path / "logs" / name).write_bytes(b"x")
    monkeypatch.chdir(tmp_path)
    # Executors run elsewhere: a relative directory, glob or file:// URL is listed as absolute paths.
    expected = [str(tmp_path / "logs" / "mysql-bin.000002"), str(tmp_path / "logs" / "mysql-bin.000010")]
    assert list_binlog_files("logs") == expected
    assert list_binlog_files("logs/mysql-bin.0*") == expected
    assert list_binlog_files(f"file://{tmp_path}/logs") == expected
    assert absolute_name("s3://bucket/a/mysql-bin.000001") == "s3://bucket/a/mysql-bin.000001"
    assert is_uri("gs://b/k") and not is_uri("file:///x") and not is_uri("a/b")
    assert base_name("s3://bucket/a/mysql-bin.000007") == "mysql-bin.000007"
    assert sort_binlog_names(["s3://b/x/mysql-bin.000010", "s3://b/y/mysql-bin.000009"]) == [
        "s3://b/y/mysql-bin.000009", "s3://b/x/mysql-bin.000010"]
    with pytest.raises(ConfigError, match="no binlog files match"):
        list_binlog_files("logs/none*")


@pytest.mark.parametrize("uri", ["s3://bucket/k/mysql-bin.000001?access_key=AKIA&secret_key=s",
                                 "s3://user:pw@bucket/k/mysql-bin.000001"])
def test_a_uri_carrying_credentials_is_refused_without_echoing_them(uri: str) -> None:
    from binlog_model.io.files import open_binlog

    with pytest.raises(ConfigError, match="carries credentials") as info:
        open_binlog(uri)
    assert "AKIA" not in str(info.value) and "pw" not in str(info.value)
