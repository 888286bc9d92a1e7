"""``binlog-model dump``: mysqlbinlog-like text, JSON lines, errors as one line with exit status 2, and exit
status 1 after a dump that showed events raw."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from binlog_model.cli import main
from tests._paths import CORPUS, REPO, require

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


# --- events shown raw: everything printed, then a warning line and exit status 1 (as mysqlbinlog) --------

# HAND-BUILT corruption of our own golden fixture (tests/fuzz_regressions/README.md): spec_example up to the
# first INSERT's XID, its WRITE_ROWS with no column present; sizes and CRC32 footers fixed up, so the
# framing holds and only that event's body does not decode.
_NO_COLUMN = REPO / "tests" / "fuzz_regressions" / "rows-no-column-present.hand-mutated.bin"
_NO_COLUMN_UPDATE = REPO / "tests" / "fuzz_regressions" / "update-no-column-present.hand-mutated.bin"
_CLEAN = REPO / "fixtures" / "golden" / "mariadb" / "spec_example" / "binlogs" / "mysql-bin.000001"


def _listed_to_the_end(text: str, path: Path) -> list[int]:
    """The event offsets a text dump lists, checked to run in order up to the end of ``path``."""
    offsets = [int(m) for m in re.findall(r"^# at (\d+)$", text, re.M)]
    assert offsets == sorted(offsets) and offsets[0] == 4
    assert int(re.findall(r"end_log_pos (\d+)", text)[-1]) == path.stat().st_size
    return offsets


def test_dump_with_an_event_shown_raw_prints_all_then_exits_1() -> None:
    # A real process: its exit status is what a script sees.
    done = subprocess.run([sys.executable, "-m", "binlog_model.cli", "dump", str(_NO_COLUMN)], cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert len(_listed_to_the_end(done.stdout, _NO_COLUMN)) == 12
    assert done.stdout.count("# NOTE: this event cannot be decoded") == 1
    assert "Write_rows_v1: 62 bytes, not decoded" in done.stdout
    assert done.stdout.rstrip().endswith("COMMIT/*!*/;"), "the events after the raw one are printed too"
    assert done.stderr.splitlines() == ["warning: 1 event could not be decoded and was shown raw"]


def test_dump_counts_raw_events_over_all_files(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dump", str(_NO_COLUMN), str(_NO_COLUMN_UPDATE)]) == 1
    captured = capsys.readouterr()
    assert captured.out.count("# NOTE: this event cannot be decoded") == 2
    assert captured.err.splitlines()[-1] == "warning: 2 events could not be decoded and were shown raw"
    assert main(["dump", "--json", str(_NO_COLUMN), str(_NO_COLUMN_UPDATE)]) == 1
    captured = capsys.readouterr()
    objects = [json.loads(line) for line in captured.out.splitlines()]
    assert [o["event"] for o in objects].count("UndecodableEvent") == 2
    assert captured.err.splitlines()[-1] == "warning: 2 events could not be decoded and were shown raw"


def test_dump_of_a_clean_binlog_exits_0_without_warning(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dump", str(_CLEAN)]) == 0
    captured = capsys.readouterr()
    assert len(_listed_to_the_end(captured.out, _CLEAN)) == 35
    assert "cannot be decoded" not in captured.out and captured.err == ""


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
