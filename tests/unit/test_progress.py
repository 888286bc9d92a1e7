"""The one progress display: which mode a command gets, the log lines it writes off a terminal, the bar on
one, and that a run's output is the same with it on."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest

from binlog_model.cli import main
from binlog_model.io.file_source import FileSource
from binlog_model.runs.progress import Counters, ProgressDisplay, progress_mode, source_counters
from binlog_model.runs.source import decoded
from tests._paths import REPO

FIXTURE = REPO / "fixtures" / "golden" / "mysql" / "transactions"
BINLOG = FIXTURE / "binlogs" / "binlog.000001"


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_mode_follows_the_flag_and_the_terminal() -> None:
    pipe, tty = io.StringIO(), _Tty()
    assert [progress_mode(f, pipe) for f in (None, True, False)] == ["off", "log", "off"]
    assert [progress_mode(f, tty) for f in (None, True, False)] == ["bar", "bar", "off"]
    # A dump printed to the same terminal gets log lines, never a bar drawn over its output.
    assert progress_mode(True, tty, output_on_terminal=True) == "log"
    assert progress_mode(None, tty, output_on_terminal=True) == "off"


def test_a_log_line_says_done_of_total_rate_and_eta() -> None:
    display = ProgressDisplay("events", Counters)
    line = display.line(Counters(256 << 20, 1 << 30, 2, 8, 120_000), 60.0)
    assert line == "events: 256.0 MiB of 1.0 GiB (25%), 2 of 8 files, 2,000 rows/s, ETA 0:03:00"
    done = display.line(Counters(1 << 30, 1 << 30, 8, 8, 480_000), 240.0, done=True)
    assert done == "events: done, 1.0 GiB of 1.0 GiB, 8 of 8 files, 480000 rows (2,000/s), in 0:04:00"
    live = display.line(Counters(5 << 20, None, 1, None, 10), 10.0)
    assert live == "events: 5.0 MiB, 1 files, 1 rows/s"


def test_log_mode_writes_lines_while_the_run_goes_and_a_last_one() -> None:
    stream = io.StringIO()
    source = FileSource([BINLOG])
    with ProgressDisplay("dump", source_counters(source), mode="log", stream=stream, interval=0.01,
                         tick=0.005):
        for _ in decoded(source.read()):
            time.sleep(0.001)
    lines = stream.getvalue().splitlines()
    assert BINLOG.stat().st_size == 5815 and len(lines) >= 2
    assert lines[-1].startswith("dump: done, 5.7 KiB of 5.7 KiB, 1 of 1 files, 0 rows")
    assert all(" of 5.7 KiB (" in line and "ETA" in line for line in lines[:-1] if "0 B" not in line)


def test_bar_mode_draws_bytes_and_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    stream = _Tty()
    source = FileSource([BINLOG])
    with ProgressDisplay("events", source_counters(source, lambda: 7), mode="bar", stream=stream):
        list(source.read())
    shown = stream.getvalue().replace("\r", "\n").splitlines()[-1]
    assert shown.startswith("events: 100%") and "1/1 files" in shown and "rows/s" in shown


def test_events_output_is_the_same_with_progress(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain, watched = tmp_path / "plain.jsonl", tmp_path / "watched.jsonl"
    snapshot = str(FIXTURE / "snapshot.json")
    assert main(["events", str(BINLOG), "--snapshot", snapshot, "--out", str(plain)]) == 0
    assert capsys.readouterr().err == ""      # off a terminal and not asked: quiet
    assert main(["events", str(BINLOG), "--snapshot", snapshot, "--out", str(watched), "--progress"]) == 0
    err = capsys.readouterr().err
    assert plain.read_bytes() == watched.read_bytes() and plain.stat().st_size
    assert err.startswith("events: done,") and "1 of 1 files" in err
