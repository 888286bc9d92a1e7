"""One run at a time per ``--state`` directory (issue 22): a run started while another holds the state (a
cron job firing again before the last run ended) is refused at once, with one line naming the holder, and
touches nothing; the OS frees the lock when its holder is killed with SIGKILL; two runs started together
leave every event in the output exactly once.

Every run is a real process: the ``binlog-model`` command line (``python -m binlog_model.cli``), and a
holder process that takes the lock through ``io.state.lock_state`` and sleeps, so the overlap is certain.
Input: the committed golden fixtures.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from binlog_model.io.state import LOCK_FILE, RunState
from tests._paths import REPO

BINLOGS = REPO / "fixtures" / "golden" / "mariadb" / "large_statement" / "binlogs"
SPARK_BINLOGS = REPO / "fixtures" / "golden" / "mariadb" / "spec_example" / "binlogs"
# The worktree's package in every child (and Spark's Python workers), not an installed copy.
ENV = {**os.environ, "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable}

HOLDER = """
import sys, time
from binlog_model.io.state import lock_state
with lock_state(sys.argv[1]):
    print("held", flush=True)
    time.sleep(600)
"""


def _cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "binlog_model.cli", *args], capture_output=True, text=True,
                          env=ENV, cwd=REPO, timeout=timeout, check=False)


def _events_args(state: Path, out: Path) -> list[str]:
    return ["events", *map(str, sorted(BINLOGS.iterdir())), "--source", "lock:1", "--state", str(state),
            "--out", str(out)]


def _events(state: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return _cli(*_events_args(state, out), timeout=120)


@contextlib.contextmanager
def _holding(state: Path) -> Iterator[subprocess.Popen[str]]:
    """A process holding the lock of ``state`` until killed (here, or earlier by the test)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(state)], stdout=subprocess.PIPE, text=True,
                            env=ENV, cwd=REPO)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "held\n", "the holder took no lock"
        yield proc
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    with _holding(tmp_path / "state") as proc:
        yield proc


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes ({} when ``root`` does not exist)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _one_run(tmp_path: Path) -> bytes:
    """The events of the fixture from one plain run (no state)."""
    whole = tmp_path / "whole.jsonl"
    done = _cli("events", *map(str, sorted(BINLOGS.iterdir())), "--source", "lock:1", "--out", str(whole))
    assert done.returncode == 0, done.stderr
    assert whole.stat().st_size > 0
    return whole.read_bytes()


def _concatenated(state: Path, out: Path) -> bytes:
    names = [o["file"] for o in RunState.load(state).outputs]
    assert sorted(p.name for p in out.iterdir()) == sorted(names), "stray or missing output files"
    return b"".join((out / n).read_bytes() for n in names)


def _assert_refused(done: subprocess.CompletedProcess[str], holder: subprocess.Popen[str],
                    state: Path) -> None:
    assert done.returncode == 2, done.stderr
    last = done.stderr.splitlines()[-1]
    assert last.startswith(f"error: StateLockedError: state directory {state} is in use by another run "
                           f"(pid {holder.pid}, started 20"), last
    assert last.endswith("wait for it to finish or use another --state"), last


def test_events_refused_while_another_run_holds_the_state_then_free_after_kill_9(
        tmp_path: Path, holder: subprocess.Popen[str]) -> None:
    state, out = tmp_path / "state", tmp_path / "out"
    before = {"state": _tree(state), "out": _tree(out)}
    assert set(before["state"]) == {LOCK_FILE}, "the holder wrote its note"

    done = _events(state, out)
    _assert_refused(done, holder, state)
    assert done.stderr.count("\n") == 1, "one line, nothing else"
    assert {"state": _tree(state), "out": _tree(out)} == before, "a refused run must touch nothing"
    assert not out.exists()

    holder.kill()               # SIGKILL: no cleanup runs in the holder, the OS drops its lock
    holder.wait()
    done = _events(state, out)
    assert done.returncode == 0, done.stderr
    assert _concatenated(state, out) == _one_run(tmp_path)
    assert (state / LOCK_FILE).read_bytes() == b"", "the lock's note goes with the run that wrote it"


def test_a_refused_run_leaves_a_committed_state_and_its_output_as_they_are(tmp_path: Path) -> None:
    state, out = tmp_path / "state", tmp_path / "out"
    first = _events(state, out)
    assert first.returncode == 0, first.stderr
    output = _tree(out)
    assert "state.json" in _tree(state) and output
    with _holding(state) as proc:
        held = _tree(state)
        # Unlocked, this run would have saved the state (one more run) after recovering the output dir.
        done = _events(state, out)
        _assert_refused(done, proc, state)
        assert _tree(state) == held and _tree(out) == output
    assert RunState.load(state).runs == 1


def test_two_concurrent_runs_write_every_event_once(tmp_path: Path) -> None:
    state, out = tmp_path / "state", tmp_path / "out"
    command = [sys.executable, "-m", "binlog_model.cli", *_events_args(state, out)]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
                             cwd=REPO) for _ in range(2)]
    results = [(p.wait(timeout=300), p.communicate()[1]) for p in runs]
    assert 0 in [code for code, _err in results], results
    for code, err in results:
        # The holder is named by its pid, or, when it took the lock but has not written its pid yet, as
        # "just starting" (both runs start at once here, so either can be seen).
        assert code == 0 or (code == 2 and "StateLockedError" in err.splitlines()[-1]
                             and ("is in use by another run (pid " in err
                                  or "is in use by another run (just starting, pid not written yet)" in err)
                             ), (code, err)
    # Whichever order they ran in: the one that came second found nothing new or was refused.
    assert _concatenated(state, out) == _one_run(tmp_path)
    assert not list(out.glob("*.partial"))


@pytest.mark.spark
def test_resolve_refused_before_spark_starts_then_free_after_kill_9(
        tmp_path: Path, holder: subprocess.Popen[str]) -> None:
    pytest.importorskip("pyspark")
    state, out = tmp_path / "state", tmp_path / "tables"
    before = _tree(state)
    args = ["resolve", str(SPARK_BINLOGS), "--out", str(out), "--state", str(state), "--master", "local[1]",
            "--log-file", str(tmp_path / "spark.log")]
    done = _cli(*args, timeout=120)
    _assert_refused(done, holder, state)
    # Nothing but the error: no "Spark's log" line, so no JVM was started; no log, no output folder.
    assert done.stderr.count("\n") == 1, done.stderr
    assert not (tmp_path / "spark.log").exists() and not out.exists()
    assert _tree(state) == before

    holder.kill()
    holder.wait()
    done = _cli(*args)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("== (no source): 1 files, 4 row changes"), done.stdout
    assert RunState.load(state).runs == 1
    assert list(out.glob("db=ppc/table=campaigns/run-000001-*.parquet"))


def test_nested_in_one_thread_goes_through_another_thread_is_refused(tmp_path: Path) -> None:
    """The resolve command locks before Spark starts and run_resolve locks again (same thread); a second
    thread of the process is another run."""
    import threading

    from binlog_model.io.state import StateLockedError, lock_state

    state = tmp_path / "state"
    refused: list[BaseException] = []

    def other() -> None:
        try:
            with lock_state(state):
                pass
        except StateLockedError as err:
            refused.append(err)

    with lock_state(state), lock_state(state):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert len(refused) == 1 and isinstance(refused[0], StateLockedError)
    assert refused[0].pid == os.getpid() and refused[0].started is not None
    with lock_state(state):         # released by the outer exit
        assert (state / LOCK_FILE).read_bytes().startswith(b'{"pid": %d,' % os.getpid())
