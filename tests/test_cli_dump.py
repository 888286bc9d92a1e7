"""``binlog-model dump``: mysqlbinlog-like text, JSON lines, and errors as one line with exit status 2."""

from __future__ import annotations

import json

import pytest

from binlog_model.cli import main
from tests._paths import CORPUS, require

_ROWS_57 = "mysql-cdc-rs/tests/events/5.7/30_write_rows_v2/log.bin"
_UPDATE_80 = "mysql-cdc-rs/tests/events/8.0/31_update_rows_v2/binlog.000001"


def test_dump_text_on_a_rows_file(capsys: pytest.CaptureFixture[str]) -> None:
    path = require(CORPUS / _ROWS_57)
    assert main(["dump", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.count("# at ") == 13
    assert "# at 4\n" in out
    assert "Table_map: `default`.`boxercrab` mapped to number" in out
    assert "### INSERT INTO `default`.`boxercrab`" in out
    assert "###   @1=" in out and "/* INT meta=0 nullable=" in out
    assert "Rows_query" in out and "Xid = " in out


def test_dump_update_shows_where_and_set_and_unsigned_form(capsys: pytest.CaptureFixture[str]) -> None:
    path = require(CORPUS / _UPDATE_80)
    assert main(["dump", str(path)]) == 0
    out = capsys.readouterr().out
    assert "### UPDATE `test`.`int_table`\n### WHERE\n###   @1=" in out
    assert "### SET\n###   @1=" in out


def test_dump_json_lines_parse(capsys: pytest.CaptureFixture[str]) -> None:
    path = require(CORPUS / "mysql-binlog-connector-java/src/test/resources/mysql-bin.compressed")
    assert main(["dump", "--json", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    objs = [json.loads(line) for line in lines]
    assert len(objs) == 9
    assert objs[0]["event"] == "FormatDescriptionEvent" and objs[0]["header"]["offset"] == 4
    inner = [o for o in objs if o["header"]["inner_index"] is not None]
    assert [o["type"] for o in inner] == ["QUERY_EVENT", "TABLE_MAP_EVENT", "UPDATE_ROWS_EVENT", "XID_EVENT"]
    rows = inner[2]
    assert rows["table_map"]["table"] == "movies" and rows["kind"] == "update"
    assert inner[0]["query_bytes"] == {"hex": b"BEGIN".hex()}


def test_dump_bad_file_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    path = require(CORPUS / "mysql-binlog-connector-rust/tests/parse_file_tests/non-binlog")
    assert main(["dump", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: BadMagicError:") and err.count("\n") == 1
    assert str(path) in err


def test_dump_no_verify_checksum_flag(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    data = bytearray(require(CORPUS / _ROWS_57).read_bytes())
    data[-1] ^= 0xFF  # the last event's CRC footer
    bad = tmp_path / "mysql-bin.000001"
    bad.write_bytes(bytes(data))
    assert main(["dump", str(bad)]) == 2
    assert "ChecksumMismatchError" in capsys.readouterr().err
    assert main(["dump", "--no-verify-checksum", str(bad)]) == 0
    assert capsys.readouterr().out.count("# at ") == 13
