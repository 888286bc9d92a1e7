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
from tests._waiting import wait_until

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
        for n, _ in enumerate(decoded(source.read())):
            if n == 0:      # the run holds here until the display has written a line of its own
                wait_until(lambda: "\n" in stream.getvalue(), "a log line while the run goes")
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


def test_a_run_counted_in_slices_without_rows_says_so() -> None:
    # The Spark job's driver sees tasks, not bytes, and its rows come with the results.
    display = ProgressDisplay("writing", Counters)
    line = display.line(Counters(files_done=3, files_total=12, rows=None, unit="slices"), 30.0)
    assert line == "writing: 3 of 12 slices, ETA 0:01:30"
    done = display.line(Counters(files_done=12, files_total=12, rows=None, unit="slices"), 40.0, done=True)
    assert done == "writing: done, 12 of 12 slices, in 0:00:40"


def test_bar_mode_counts_slices_when_there_are_no_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    stream = _Tty()
    done = [0]
    with ProgressDisplay("writing", lambda: Counters(files_done=done[0], files_total=4, rows=None,
                                                    unit="slices"), mode="bar", stream=stream, tick=0.01):
        for n in range(1, 5):
            done[0] = n
            wait_until(lambda n=n: f"{n}/4" in stream.getvalue(), f"the bar drawing {n}/4 slices")
    shown = stream.getvalue().replace("\r", "\n").splitlines()[-1]
    assert shown.startswith("writing: 100%") and "4/4" in shown and "slices" in shown and "B/s" not in shown


def test_a_live_line_says_position_lag_and_events_per_second(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    display = ProgressDisplay("tail", Counters, live=True)
    at = Counters(rows=0, unit="events", position="binlog.000003:4096", lag_seconds=2.5, lag_bytes=3 << 10)
    assert display.line(at, 1.0) == "tail: at binlog.000003:4096, lag 2.5 s / 3.0 KiB, 0 events/s"
    clock[0] += 0.5         # before the first second: the rate so far
    assert display.line(Counters(rows=50), 0.5).endswith(", 100 events/s")
    clock[0] += 1.5         # then the rate over the last interval
    at = Counters(rows=500, unit="events", position="binlog.000003:9000", lag_seconds=0.0)
    assert display.line(at, 3.0) == "tail: at binlog.000003:9000, lag 0.0 s, 250 events/s"
    last = display.line(Counters(rows=0), 5.0, done=True)
    assert last == "tail: stopped, at the start, 250 events/s, in 0:00:05"


def test_live_bar_mode_is_a_status_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    stream = _Tty()
    with ProgressDisplay("tail", lambda: Counters(rows=7, position="binlog.000001:120", lag_seconds=1.0),
                         mode="bar", stream=stream, tick=0.01, live=True) as display:
        wait_until(lambda: "tail: at binlog.000001:120" in stream.getvalue(), "the status line drawn")
        display.echo("tail: streaming from binlog.000001:4")
        wait_until(lambda: "tail: at" in stream.getvalue().rsplit("streaming from binlog.000001:4", 1)[-1],
                   "the status line drawn again below the echoed line")
    lines = stream.getvalue().replace("\r", "\n").splitlines()
    assert "tail: streaming from binlog.000001:4" in lines       # a line of its own, not inside the bar's
    assert lines[-1].startswith("tail: at binlog.000001:120, lag 1.0 s,") and "events/s" in lines[-1]


def test_the_tail_poll_reads_the_session_and_the_last_commit() -> None:
    from types import SimpleNamespace

    from binlog_model.runs.tailing import TailResult, live_counters

    result = TailResult(events=42, position="binlog.000002:800")
    result.committed, result.target = ("binlog.000002", 800), ("binlog.000002", 5000)
    result.source = SimpleNamespace(caught_up=False, event_time=int(time.time()) - 10)
    c = live_counters(result)()
    assert c.rows == 42 and c.position == "binlog.000002:800" and c.lag_bytes == 4200
    assert c.lag_seconds is not None and 9 <= c.lag_seconds <= 12
    result.source.caught_up, result.target = True, ("binlog.000003", 4)     # the end in another file
    c = live_counters(result)()
    assert c.lag_seconds == 0.0 and c.lag_bytes is None
