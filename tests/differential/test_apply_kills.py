"""``apply`` killed at any moment (``kill -9``), then run again, gives the tables of one uninterrupted run
(equal to ``SELECT *`` on the source), and no table has two commits of one transaction version: a Delta
commit that landed before the state said so is recognised, not applied again.

Kills are seeded: at the n-th Delta commit (``replica-commit``: the table has it, the state not yet), right
after a state commit (``state-committed``), and at seeded moments (inside a Delta write as likely as not)
between 30% and 100% of one uninterrupted run's time; a run that reaches the end anyway is checked and the
next starts over. ``BINLOG_MODEL_APPLY_KILLS=N`` runs N seeded moments instead of CI's few, and prints one
summary line per test (where each kill landed); CI, without the variable, prints nothing.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from binlog_model.faults import KILL_AT
from binlog_model.sinks.delta import DeltaReplica
from binlog_model.testing.localserver import LocalServer
from tests._replica_workload import TABLES, replica_rows, source_rows, start_workload

pytest.importorskip("deltalake")

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
MOMENTS = int(os.environ.get("BINLOG_MODEL_APPLY_KILLS", "3"))
# a measured campaign (the variable set) says where its kills landed; CI's few stay quiet
REPORT = "BINLOG_MODEL_APPLY_KILLS" in os.environ


def _args(files: list[Path], state: Path, to: Path) -> list[str]:
    # small commits: many commit points for the kills to fall between
    return [sys.executable, "-m", "binlog_model.cli", "apply", *map(str, files), "--state", str(state),
            "--to", f"delta:{to}", "--commit-bytes", "3000", "--checkpoint-every", "7", "--no-progress"]


def _versions_strictly_grow(table: Path) -> int:
    """The transaction versions of the table's commits, in commit order, only grow; returns how many."""
    seen: list[int] = []
    for entry in sorted((table / "_delta_log").glob("*.json")):
        for line in entry.read_text().splitlines():
            action = json.loads(line)
            if "txn" in action:
                seen.append(int(action["txn"]["version"]))
    assert seen == sorted(seen) and len(seen) == len(set(seen)), f"{table}: versions {seen}"
    return len(seen)


@pytest.fixture
def history(server: LocalServer, fresh_db: str) -> tuple[LocalServer, str, list[Path]]:
    first, work = start_workload(server, fresh_db, seed=39)
    for _ in range(300):
        work.step()
    work.conn.close()
    server.execute("FLUSH BINARY LOGS")
    names = [row[0] for row in server.query("SHOW BINARY LOGS")]
    return server, fresh_db, [server.binlog_dir / n for n in names[names.index(first):-1]]


def _check(server: LocalServer, db: str, to: Path) -> None:
    conn = server.connect(db)
    try:
        for table in TABLES:
            names, kinds, expected = source_rows(conn, table)
            owner = json.loads((to / "_binlog_model.json").read_text())["app_id"]
            data = DeltaReplica(to, owner).read(db, table)
            assert replica_rows(data, names, kinds) == expected, f"{db}.{table} differs from SELECT *"
            _versions_strictly_grow(to / db / table)
    finally:
        conn.close()


def _landing(to: Path) -> tuple[int, int]:
    """Where a run stopped: the Delta commits of the replica so far, and its data files no commit names
    (a kill inside a Delta write leaves such files behind)."""
    commits = orphans = 0
    for log in to.glob("*/*/_delta_log"):
        named: set[str] = set()
        for entry in log.glob("*.json"):
            commits += 1
            for line in entry.read_text().splitlines():
                add = json.loads(line).get("add")
                if add:
                    named.add(Path(add["path"]).name)
        orphans += sum(1 for f in log.parent.glob("*.parquet") if f.name not in named)
    return commits, orphans


def _killed(args: list[str], kill_at: str | None = None, after: float | None = None) -> bool:
    """Run once, killed at a named point or after ``after`` seconds; True when the kill happened."""
    env = {**ENV, **({KILL_AT: kill_at} if kill_at else {})}
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=REPO)
    if after is not None:
        try:
            proc.wait(after)
        except subprocess.TimeoutExpired:
            proc.kill()
    _out, err = proc.communicate(timeout=300)
    assert proc.returncode in (0, -9), err
    return proc.returncode == -9


@pytest.mark.parametrize("plan", ["replica-commit", "state-committed", "moments"])
def test_kill_anywhere_then_resume_equals_one_run(history: Any, tmp_path: Path, plan: str,
                                                  capsys: Any) -> None:
    server, db, files = history
    state, to = tmp_path / "state", tmp_path / "replica"
    args = _args(files, state, to)
    kills = 0
    rng = random.Random(f"{server.label}:{plan}")
    landed: list[str] = []      # per attempt: where it stopped (for the campaign's summary line)
    orphans = before = 0
    span = 0.0
    if plan == "moments":
        # the moments fall inside one uninterrupted run's time (start-up included), whatever its speed
        began = time.monotonic()
        timing = subprocess.run(_args(files, tmp_path / "timing-state", tmp_path / "timing"),
                                capture_output=True, text=True, env=ENV, cwd=REPO, timeout=600, check=False)
        assert timing.returncode == 0, timing.stderr
        span = time.monotonic() - began
    for attempt in range(MOMENTS) if plan == "moments" else (1, 3, 7):
        if plan == "moments":
            after = rng.uniform(0.3, 1.0) * span
            hit, where = _killed(args, after=after), f"{after:.2f}s"
        else:
            hit, where = _killed(args, kill_at=f"{plan}:{attempt}"), f"{plan}:{attempt}"
        kills += hit
        commits, now = _landing(to)
        # c<N>: the Delta commits (OPTIMIZE included) after the kill; "+0": the killed run added none
        landed.append(f"{where}->" + ("ran to the end" if not hit else f"c{commits}"
                                      + ("+0" if commits == before else "")
                                      + ("+in-write" if now > orphans else "")))
        orphans, before = now, commits
        if plan == "moments" and not hit:
            # a run that reached the end leaves nothing for the next moments to cut: check it, start over
            _check(server, db, to)
            shutil.rmtree(state)
            shutil.rmtree(to)
            orphans = before = 0
    assert kills >= (1 if plan == "moments" else 3), "the kills must land before the run ends"
    began = time.monotonic()
    done = subprocess.run(args, capture_output=True, text=True, env=ENV, cwd=REPO, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - began < 600
    _check(server, db, to)
    # a second run over the same input commits nothing new
    logs = {t: sorted((to / db / t / "_delta_log").glob("*.json")) for t in TABLES}
    again = subprocess.run(args, capture_output=True, text=True, env=ENV, cwd=REPO, timeout=600, check=False)
    assert again.returncode == 0, again.stderr
    assert {t: sorted((to / db / t / "_delta_log").glob("*.json")) for t in TABLES} == logs
    if REPORT:
        with capsys.disabled():
            print(f"\n[{server.label} {plan}] {kills}/{len(landed)} kills landed, resumed and equal to "
                  f"SELECT * ({sum(map(_versions_strictly_grow, (to / db / t for t in TABLES)))} commits, "
                  f"versions strictly growing): " + " ".join(landed))


def test_two_runs_on_one_state_the_second_is_refused(history: Any, tmp_path: Path) -> None:
    from binlog_model.io.state import lock_state

    _server, db, files = history
    state, to = tmp_path / "state", tmp_path / "replica"
    with lock_state(state):         # a run holding the state
        second = subprocess.run(_args(files, state, to), capture_output=True, text=True, env=ENV, cwd=REPO,
                                timeout=300, check=False)
    assert second.returncode == 2, second.stderr
    assert "StateLockedError" in second.stderr
    assert not (to / db).exists()


def test_a_target_of_another_state_is_refused(history: Any, tmp_path: Path, capsys: Any) -> None:
    from binlog_model.cli import main

    _server, _db, files = history
    to = tmp_path / "replica"
    assert main(["apply", *map(str, files), "--state", str(tmp_path / "a"), "--to", f"delta:{to}",
                 "--no-progress"]) == 0
    assert main(["apply", *map(str, files), "--state", str(tmp_path / "b"), "--to", f"delta:{to}",
                 "--no-progress"]) == 2
    assert "another state" in capsys.readouterr().err
