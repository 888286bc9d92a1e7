"""Kill-anywhere campaign for ``resolve --state`` (issue 39): the real command line, killed with SIGKILL at
a step of its commit (``faults.kill_point``: the state committed, the n-th file moved, the publish done) or
at a seeded moment (planning, the tasks), then run again; the tables equal those of uninterrupted runs. On a
local disk and on the S3 test server (``--out s3://…``). A state written by a version that kept the commit
marker in its options (version 1) and was killed while publishing resumes too.

Input: three daily binlog files of a real MariaDB, three tables, a rename and a widened column. CI runs a
few seeded cases; ``BINLOG_MODEL_KILL_CASES=N`` runs N (the closing note's large runs).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")
from binlog_model.faults import KILL_AT
from binlog_model.io.state import RunState
from tests._paths import REPO

pytestmark = pytest.mark.spark

# CI: two cases of resolve --state (seeds 0 and 2: a kill at a seeded moment, after the first file moved),
# one of --stream (seed 1: right after the state's commit); BINLOG_MODEL_KILL_CASES=N runs seeds 0..N-1 of
# each, from BINLOG_MODEL_KILL_FIRST (default 0), so a campaign can go on where an earlier one stopped.
LARGE = os.environ.get("BINLOG_MODEL_KILL_CASES")
FIRST = int(os.environ.get("BINLOG_MODEL_KILL_FIRST", "0"))
STATE_SEEDS = range(FIRST, FIRST + int(LARGE)) if LARGE else (0, 2)
STREAM_SEEDS = range(FIRST, FIRST + int(LARGE)) if LARGE else (1,)
POINTS = ("state-committed", "publish-move:1", "publish-move:3", "publish-manifest", "published")
ENV = {**os.environ, "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable}


@pytest.fixture(scope="module")
def days(mariadb: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[Path]]:
    db = "kill_anywhere"
    mariadb.execute(f"DROP DATABASE IF EXISTS {db}")
    mariadb.execute(f"CREATE DATABASE {db}")
    mariadb.flush_and_collect()
    dest = tmp_path_factory.mktemp("days")
    statements = [
        [f"CREATE TABLE {db}.a (id INT PRIMARY KEY, v SMALLINT, s VARCHAR(10))",
         f"CREATE TABLE {db}.b (id INT PRIMARY KEY, d DECIMAL(10,2))",
         f"CREATE TABLE {db}.c (id INT PRIMARY KEY, t TEXT)",
         *(f"INSERT INTO {db}.a VALUES ({n}, {n}, 'a{n}')" for n in range(5)),
         *(f"INSERT INTO {db}.b VALUES ({n}, {n}.25)" for n in range(5)),
         *(f"INSERT INTO {db}.c VALUES ({n}, 'c{n}')" for n in range(5))],
        [f"ALTER TABLE {db}.a MODIFY v BIGINT", f"INSERT INTO {db}.a VALUES (9, 3000000000, 'big')",
         f"RENAME TABLE {db}.b TO {db}.b2", f"UPDATE {db}.b2 SET d = d + 1 WHERE id < 3",
         f"DELETE FROM {db}.c WHERE id = 1"],
        [f"INSERT INTO {db}.b2 VALUES (7, 7.5)", f"UPDATE {db}.a SET s = 'x' WHERE id = 2",
         f"INSERT INTO {db}.c VALUES (8, 'eight')"],
    ]
    files: list[Path] = []
    for day in statements:
        mariadb.execute(day)
        files += mariadb.flush_and_collect(dest)
    mariadb.execute(f"DROP DATABASE {db}")
    assert len(files) == 3
    return db, files


def _resolve(files: list[Path], out: str, state: Path, *, kill_at: str | None = None,
             env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    args = [sys.executable, "-m", "binlog_model.cli", "resolve", *map(str, files), "--out", out,
            "--state", str(state), "--source", "k:1", "--master", "local[1]", "--no-progress"]
    child_env = {**ENV, **(env or {})}
    if kill_at is not None:
        child_env[KILL_AT] = kill_at
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env,
                            cwd=REPO)


def _finish(proc: subprocess.Popen[str], timeout: float = 300) -> int:
    _out, err = proc.communicate(timeout=timeout)
    if proc.returncode not in (0, -9):
        pytest.fail(f"resolve exited {proc.returncode}: {err[-3000:]}")
    return proc.returncode


def _kill_after(proc: subprocess.Popen[str], seconds: float) -> None:
    """SIGKILL ``proc`` ``seconds`` after now, unless it ended before."""
    deadline = time.monotonic() + seconds
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if proc.poll() is None:
        proc.kill()


def _tables(out: str, db: str) -> dict[str, list[tuple[Any, ...]]]:
    """Each table's rows as the manifest commits them (pyarrow: a reader of ours on any filesystem)."""
    import pyarrow.parquet as pq

    from binlog_model.io.files import output_filesystem
    from binlog_model.sinks.publish import committed_files

    found = {}
    for name in ("a", "b2", "c"):
        rows = []
        for path in committed_files(out, db, name) or []:
            fs, inside = output_filesystem(path)
            for row in pq.read_table(inside, filesystem=fs).to_pylist():
                keep = sorted(k for k in row if not k.startswith("binlog_") or k == "binlog_operation")
                rows.append((*(row[k] for k in keep), row["binlog_order"]))
        found[name] = sorted(rows, key=repr)
    return found


@pytest.fixture(scope="module")
def expected(days: tuple[str, list[Path]], tmp_path_factory: pytest.TempPathFactory
             ) -> dict[str, list[tuple[Any, ...]]]:
    db, files = days
    work = tmp_path_factory.mktemp("uninterrupted")
    for day in (1, 3):
        assert _finish(_resolve(files[:day], str(work / "out"), work / "state")) == 0
    tables = _tables(str(work / "out"), db)
    assert sum(len(rows) for rows in tables.values()) >= 20
    return tables


def _cases(seeds: Iterable[int]) -> Iterator[tuple[int, str | None, float]]:
    """(seed, kill point or None for a kill at a moment, the moment in seconds after the start): the seeds
    cycle through a kill at a moment and each named point; the moment is drawn from the seed."""
    for seed in seeds:
        yield seed, (None, *POINTS)[seed % (len(POINTS) + 1)], random.Random(seed).uniform(2.0, 12.0)


def _campaign(files: list[Path], out: str, state: Path, env: dict[str, str] | None = None) -> list[str]:
    """Every case on one state: each day killed once, then run again to the end. Returns what was hit."""
    hits = []
    for seed, point, moment in _cases(STATE_SEEDS):
        for day in (1, 3):
            proc = _resolve(files[:day], out, state, kill_at=point, env=env)
            if point is None:
                _kill_after(proc, moment)
            code = _finish(proc)
            hits.append(f"seed {seed} day {day}: {point or f'{moment:.1f}s'} -> exit {code}")
            assert _finish(_resolve(files[:day], out, state, env=env)) == 0
        # The next case starts over on a new state, as a new user would.
        state = state.with_name(state.name + "x")
        out = out + "x"
    return hits


def test_resolve_state_killed_anywhere_equals_uninterrupted_runs(
        days: tuple[str, list[Path]], expected: dict[str, list[tuple[Any, ...]]],
        tmp_path: Path) -> None:
    db, files = days
    out, state = str(tmp_path / "out"), tmp_path / "state"
    hits = _campaign(files, out, state)
    assert any("exit -9" in h for h in hits), hits
    if LARGE:       # the campaign's figures (run with -s): kills per point
        from collections import Counter

        killed = Counter(h.split(": ")[1].split(" -> ")[0] if "s ->" not in h else "moment"
                         for h in hits if h.endswith("exit -9"))
        print(f"\nresolve --state: {len(hits)} runs, {sum(killed.values())} killed; killed per point "
              f"{dict(killed)}")
    for n in range(len(STATE_SEEDS)):
        suffix = "x" * n
        assert _tables(out + suffix, db) == expected, hits
        assert RunState.load(state.with_name(state.name + suffix)).publishing is None
        assert not (Path(out + suffix) / "_staging").exists()


def test_a_version_1_state_killed_while_publishing_resumes(
        days: tuple[str, list[Path]], expected: dict[str, list[tuple[Any, ...]]],
        tmp_path: Path) -> None:
    """Item 2 of issue 39: the old state kept ``publishing`` in its options, so the next run refused it as
    other options. Killed after the commit, the state written back as version 1 did it: the run resumes."""
    db, files = days
    out, state = str(tmp_path / "out"), tmp_path / "state"
    assert _finish(_resolve(files[:1], out, state, kill_at="publish-move:2")) == -9
    doc = json.loads((state / "state.json").read_text())
    assert doc["publishing"] == "run-000001"
    doc["options"]["publishing"] = doc.pop("publishing")
    doc.pop("stream_batch")
    doc["version"] = 1
    (state / "state.json").write_text(json.dumps(doc))
    assert _finish(_resolve(files, out, state)) == 0
    assert _tables(out, db) == expected
    assert RunState.load(state).runs == 2


def _resolve_job(files: list[Path], out: str, env: dict[str, str], kill_at: str | None = None
                 ) -> subprocess.CompletedProcess[str]:
    """A whole resolve job (no state) into ``out``."""
    args = [sys.executable, "-m", "binlog_model.cli", "resolve", *map(str, files), "--out", out, "--source",
            "k:1", "--master", "local[1]", "--no-progress"]
    return subprocess.run(args, capture_output=True, text=True, cwd=REPO, timeout=300, check=False,
                          env={**ENV, **env, **({KILL_AT: kill_at} if kill_at else {})})


def _parquet_files(fs: Any, root: str) -> list[str]:
    import pyarrow.fs as pafs

    return [i.path for i in fs.get_file_info(pafs.FileSelector(root, recursive=True))
            if i.type == pafs.FileType.File and i.path.endswith(".parquet")]


def test_resolve_out_on_s3_one_job_and_state_runs_killed_while_publishing(
        days: tuple[str, list[Path]], expected: dict[str, list[tuple[Any, ...]]], s3: Any,
        tmp_path: Path) -> None:
    """``--out s3://…``: a whole job publishes (files under its name, then the manifest), a second job
    replaces it; incremental runs killed while they publish resume and equal the local runs."""
    from binlog_model.io.files import output_filesystem

    db, files = days
    os.environ.update(s3.env())          # this process's reads of the bucket (read_table, pyarrow)
    s3.filesystem().create_dir("bkt")
    fs, _ = output_filesystem("s3://bkt/x")
    for target in ("s3://bkt/job", "s3://bkt/job/"):         # the second replaces the first
        done = _resolve_job(files, target, s3.env())
        assert done.returncode == 0, done.stderr[-3000:]
    listed = _parquet_files(fs, "bkt/job")
    manifest = json.loads(fs.open_input_stream("bkt/job/_manifest.json").read())
    assert sorted(f"bkt/job/{folder}/{name}" for folder, names in manifest["tables"].items()
                  for name in names) == sorted(listed), "the old job's files are gone"
    assert _tables("s3://bkt/job", db) == expected
    # A job killed while it copies its files in: readers of the manifest still see the previous job whole;
    # the next job publishes and deletes what the manifest does not name.
    killed = _resolve_job(files, "s3://bkt/job", s3.env(), kill_at="publish-move:2")
    assert killed.returncode == -9, killed.stderr[-3000:]
    assert _tables("s3://bkt/job", db) == expected
    assert _resolve_job(files, "s3://bkt/job", s3.env()).returncode == 0
    assert _tables("s3://bkt/job", db) == expected
    assert len(_parquet_files(fs, "bkt/job")) == len(listed), "the killed job's files are gone"

    out, state = "s3://bkt/nested/daily", tmp_path / "state"
    for day, point in ((1, "publish-move:2"), (3, "publish-manifest")):
        assert _finish(_resolve(files[:day], out, state, kill_at=point, env=s3.env())) == -9
        assert _finish(_resolve(files[:day], out, state, env=s3.env())) == 0
    assert _tables(out, db) == expected


def test_resolve_stream_killed_anywhere_equals_uninterrupted_runs(
        days: tuple[str, list[Path]], expected: dict[str, list[tuple[Any, ...]]], tmp_path: Path) -> None:
    """``resolve --stream`` (AvailableNow, one file per batch) killed at each step of a batch's commit or at
    a seeded moment, then started again, as the files arrive: the tables equal the uninterrupted runs'. A
    batch committed by us but not by Spark's checkpoint is run again by Spark and skipped by its id."""
    import shutil

    db, files = days
    hits: list[tuple[str, int]] = []
    for seed, point, moment in _cases(STREAM_SEEDS):
        work = tmp_path / f"case{seed}"
        folder, out, ck = work / "binlogs", work / "out", work / "ck"
        folder.mkdir(parents=True)
        args = [sys.executable, "-m", "binlog_model.cli", "resolve", str(folder), "--stream", "--out",
                str(out), "--checkpoint", str(ck), "--source", "k:1", "--master", "local[1]",
                "--max-files-per-trigger", "1", "--no-progress"]
        for day in (1, 3):
            for path in files[:day]:
                if not (folder / path.name).exists():
                    shutil.copyfile(path, folder / path.name)
            env = {**ENV, **({KILL_AT: point} if point else {})}
            proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                    cwd=REPO)
            if point is None:
                _kill_after(proc, moment)
            hits.append((point or "moment", _finish(proc)))
            again = subprocess.run(args, capture_output=True, text=True, env=ENV, cwd=REPO, timeout=300,
                                   check=False)
            assert again.returncode == 0, again.stderr[-3000:]
        assert _tables(str(out), db) == expected, (seed, point, moment)
        assert RunState.load(out / "_stream").publishing is None
        if LARGE:       # progress of a long campaign (run with -s): each case once its tables are equal
            print(f"\ncase {seed}: {point or f'moment {moment:.1f}s'}: exits {[c for _, c in hits[-2:]]}, "
                  "tables equal", flush=True)
    assert any(code == -9 for _, code in hits), hits
    if LARGE:       # the campaign's figures (run with -s): kills per point
        from collections import Counter

        killed = Counter(p for p, c in hits if c == -9)
        ended = Counter(p for p, c in hits if c == 0)
        print(f"\nresolve --stream: {len(hits)} runs, {sum(killed.values())} killed; killed per point "
              f"{dict(killed)}; ended before their kill {dict(ended)}")
