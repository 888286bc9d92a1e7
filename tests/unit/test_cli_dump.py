"""``binlog-model dump``: mysqlbinlog-like text, JSON lines, and errors as one line with exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

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


def test_dump_no_verify_checksum_flag(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = bytearray(require(CORPUS / _ROWS_57).read_bytes())
    data[-1] ^= 0xFF  # the last event's CRC footer
    bad = tmp_path / "mysql-bin.000001"
    bad.write_bytes(bytes(data))
    assert main(["dump", str(bad)]) == 2
    assert "ChecksumMismatchError" in capsys.readouterr().err
    assert main(["dump", "--no-verify-checksum", str(bad)]) == 0
    assert capsys.readouterr().out.count("# at ") == 13


# --- differential: our text against the mysqlbinlog -vv output stored beside the corpus files -----------

def _mysqlbinlog_dirs() -> list[str]:
    root = CORPUS / "mysql-cdc-rs/tests/events"
    if not root.exists():
        return []
    return sorted(str(p.parent.relative_to(CORPUS)) for p in root.glob("*/*/dump.txt"))


def _read_dump(path: Path) -> str:
    raw = path.read_bytes()
    for encoding in ("utf-8", "utf-16"):
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            continue
        if "# at " in text:
            return text
    return ""


@pytest.mark.parametrize("reldir", _mysqlbinlog_dirs())
def test_dump_matches_mysqlbinlog_vv(reldir: str) -> None:
    from binlog_model.commands.dump import render_event
    from binlog_model.io import iter_events

    d = CORPUS / reldir
    binlog = next(p for p in d.iterdir() if p.suffix not in (".txt", ".sql", ".md"))
    expected_text = _read_dump(d / "dump.txt")
    if not expected_text:
        pytest.skip("this dump.txt holds no mysqlbinlog output")
    ours = [line for event in iter_events(binlog) for line in render_event(event)]
    # every event position mysqlbinlog printed, in order
    assert [x for x in ours if x.startswith("# at ")] == \
        [x.rstrip() for x in expected_text.splitlines() if x.startswith("# at ")]
    expected_rows = [x.rstrip() for x in expected_text.splitlines() if x.startswith("###")]
    our_rows = [x for x in ours if x.startswith("###")]
    if our_rows and not expected_rows:
        pytest.skip("this dump.txt was made without -v (no ### row lines to compare)")
    assert our_rows == expected_rows
