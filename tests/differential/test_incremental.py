"""Incremental runs (``events --state DIR``): the output of runs split anywhere, concatenated, equals one
run over everything; a run killed with SIGKILL at any moment loses and repeats nothing once rerun; a run
with other options is refused.

Input: a seeded random workload (DML of every column type, transactions, rollbacks, DDL) on a MariaDB of
this module's own, its binlog rotated every few dozen statements, so the files are real multi-file input.
The SIGKILL test forks the test process (its imports already done, so a run starts in milliseconds) and
runs the ``events --state`` command in the child; the parent kills it after a random delay.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from binlog_model.cli import main
from binlog_model.io.state import RunState
from binlog_model.testing.mariadb import MariaDBServer, mariadb_available
from binlog_model.testing.workload import Workload
from tests._zstd import unpacked

UNITS = 360
ROTATE_EVERY = 60
KILL_SEEDS = int(os.environ.get("BINLOG_MODEL_KILL_SEEDS", "50"))


@pytest.fixture(scope="module")
def binlogs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Six or so binlog files of one workload, copied out of a server of this module's own."""
    ok, reason = mariadb_available()
    if not ok:
        pytest.skip(f"no local MariaDB: {reason}")
    dest = tmp_path_factory.mktemp("binlogs")
    with MariaDBServer(row_image="FULL", row_metadata="FULL") as server:
        server.execute("CREATE DATABASE inc")
        conn = server.connect("inc")
        workload = Workload(15)
        with conn.cursor() as cur:
            cur.execute("FLUSH BINARY LOGS")
            for sql in workload.setup():
                cur.execute(sql)
            units = workload.units()
            for n in range(1, UNITS + 1):
                for step in next(units):
                    step.run(cur)
                if n % ROTATE_EVERY == 0:
                    cur.execute("FLUSH BINARY LOGS")
        conn.close()
        files = server.flush_and_collect(dest, include_previous=True)
    assert len(files) >= 6
    return files


@pytest.fixture(scope="module")
def full_run(binlogs: list[Path], tmp_path_factory: pytest.TempPathFactory) -> bytes:
    out = tmp_path_factory.mktemp("full") / "all.jsonl"
    assert main(["events", *map(str, binlogs), "--source", "inc:1", "--out", str(out)]) == 0
    data = out.read_bytes()
    assert data.count(b"\n") > 300
    return data


def _events(files: list[Path], state: Path, out: Path, *extra: str) -> int:
    return main(["events", *map(str, files), "--source", "inc:1", "--state", str(state), "--out", str(out),
                 *extra])


def _concatenated(out: Path) -> bytes:
    """The committed parts, in order; compressed ones decompressed by the zstandard library (every part must
    be whole frames)."""
    state = RunState.load(out.parent / "state")
    names = [o["file"] for o in state.outputs]
    assert sorted(p.name for p in out.iterdir()) == sorted(names), "stray or missing output files"
    return b"".join(unpacked((out / n).read_bytes()) if n.endswith(".zst") else (out / n).read_bytes()
                    for n in names)




def test_split_at_every_file_boundary_equals_one_run(binlogs: list[Path], full_run: bytes,
                                                     tmp_path: Path) -> None:
    for k in range(1, len(binlogs)):
        state, out = tmp_path / f"k{k}" / "state", tmp_path / f"k{k}" / "out"
        assert _events(binlogs[:k], state, out) == 0
        # The second run is given every file, as a daily job would be: the done ones are passed over.
        assert _events(binlogs, state, out) == 0
        assert _concatenated(out) == full_run, f"split after file {k}"
        doc = RunState.load(state)
        assert doc.position is not None and doc.position["file"] == binlogs[-1].name
        assert set(doc.files) == {p.name for p in binlogs}
        assert doc.gtids.to_json()["mariadb"], "the executed GTID set is recorded"


def test_only_new_files_given_continue_the_state(binlogs: list[Path], full_run: bytes,
                                                 tmp_path: Path) -> None:
    state, out = tmp_path / "state", tmp_path / "out"
    assert _events(binlogs[:3], state, out) == 0
    assert _events(binlogs[:3], state, out) == 0        # nothing new: the state still knows the next file
    assert _events(binlogs[3:], state, out) == 0        # "today's new files" only
    assert _concatenated(out) == full_run


def test_gzipped_archive_files_continue_the_state(binlogs: list[Path], full_run: bytes,
                                                  tmp_path: Path) -> None:
    import gzip
    archive = tmp_path / "archive"
    archive.mkdir()
    for path in binlogs:
        (archive / path.name).write_bytes(gzip.compress(path.read_bytes()))
    files = sorted(archive.iterdir())
    state, out = tmp_path / "state", tmp_path / "out"
    assert _events(files[:4], state, out) == 0
    assert _events(files[:4], state, out) == 0       # resumes at the end of a compressed file
    assert _events(files, state, out) == 0
    assert _concatenated(out) == full_run


@pytest.mark.parametrize("compress", [(), ("--compress", "zstd")], ids=["plain", "zstd"])
def test_split_inside_a_growing_file_equals_one_run(binlogs: list[Path], full_run: bytes, tmp_path: Path,
                                                    compress: tuple[str, ...]) -> None:
    rng = random.Random(1515)
    for case in range(8):
        live = tmp_path / f"c{case}" / "binlogs"
        live.mkdir(parents=True)
        state, out = tmp_path / f"c{case}" / "state", tmp_path / f"c{case}" / "out"
        growing = rng.randrange(len(binlogs))
        data = binlogs[growing].read_bytes()
        for path in binlogs[:growing]:
            shutil.copyfile(path, live / path.name)
        # The active file seen three times, cut at random bytes (mid-event, mid-transaction), then whole.
        cuts = sorted(rng.randrange(200, len(data)) for _ in range(3))
        for cut in cuts:
            (live / binlogs[growing].name).write_bytes(data[:cut])
            files = sorted(live.iterdir())
            assert _events(files, state, out, "--allow-incomplete-tail", *compress) == 0, (case, cut)
        for path in binlogs[growing:]:
            shutil.copyfile(path, live / path.name)
        assert _events(sorted(live.iterdir()), state, out, "--allow-incomplete-tail", *compress) == 0
        assert _concatenated(out) == full_run, f"case {case}: file {growing} cut at {cuts}"


def test_a_cut_file_without_the_flag_names_it(binlogs: list[Path], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    data = binlogs[1].read_bytes()
    cut = tmp_path / binlogs[1].name
    cut.write_bytes(data[: len(data) // 2])
    assert _events([binlogs[0], cut], tmp_path / "state", tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert "--allow-incomplete-tail" in err
    assert "(no XID/COMMIT) (expected" not in err
    # The committed steps of the failed run are kept; the rerun with the flag continues from them.
    assert RunState.load(tmp_path / "state").position is not None


def test_changed_options_are_refused(binlogs: list[Path], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    state, out = tmp_path / "state", tmp_path / "out"
    assert _events(binlogs[:2], state, out) == 0
    before = (state / "state.json").read_bytes()
    for extra in (["--image", "full"], ["--max-rows", "7"], ["--always-include", "inc.t_pk.id"],
                  ["--format", "proto"], ["--statement-text", "none"]):
        capsys.readouterr()
        assert _events(binlogs, state, out, *extra) == 2, extra
        err = capsys.readouterr().err
        assert "StateMismatchError" in err and "options differ" in err, err
    assert main(["events", *map(str, binlogs), "--source", "other", "--state", str(state),
                 "--out", str(out)]) == 2
    assert (state / "state.json").read_bytes() == before, "a refused run must not touch the state"


def test_missing_file_in_the_sequence_is_refused(binlogs: list[Path], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    state, out = tmp_path / "state", tmp_path / "out"
    assert _events(binlogs[:2], state, out) == 0
    assert _events(binlogs[3:], state, out) == 2       # binlogs[2] skipped
    assert "rotates to" in capsys.readouterr().err


def _forked_run(argv: list[str]) -> int:
    pid = os.fork()
    if pid == 0:     # the child: run the command, never return into pytest
        try:
            os._exit(main(argv))
        except BaseException:
            os._exit(3)
    return pid


def _wait(pid: int) -> int:
    _, status = os.waitpid(pid, 0)
    return status


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("compress", [(), ("--compress", "zstd")], ids=["plain", "zstd"])
def test_sigkill_at_random_moments_then_rerun_equals_one_run(binlogs: list[Path], tmp_path: Path,
                                                             compress: tuple[str, ...]) -> None:
    """Compressed: a kill in the middle of a frame leaves a torn frame past the committed length, which the
    rerun cuts back (``_concatenated`` reads every part as whole frames)."""
    files = binlogs[:3]             # a smaller input keeps the 50 seeds within seconds
    small = ["--commit-bytes", "16384", *compress]       # many committed steps, so kills land around them too
    reference = tmp_path / "one.jsonl"
    assert main(["events", *map(str, files), "--source", "inc:1", "--out", str(reference)]) == 0
    one_run = reference.read_bytes()
    base = tmp_path / "timing"
    started = time.monotonic()
    assert _events(files, base / "state", base / "out", *small) == 0
    duration = time.monotonic() - started
    killed_mid_run = 0
    for seed in range(KILL_SEEDS):
        rng = random.Random(seed)
        root = tmp_path / f"s{seed}"
        state, out = root / "state", root / "out"
        first = rng.randrange(len(files)) if seed % 4 == 0 else 0   # some seeds resume an earlier state
        if first:
            assert _events(files[:first], state, out, *small) == 0
        argv = ["events", *map(str, files), "--source", "inc:1", "--state", str(state), "--out", str(out),
                *small]
        pid = _forked_run(argv)
        time.sleep(rng.uniform(0, duration))
        os.kill(pid, signal.SIGKILL)
        status = _wait(pid)
        if os.WIFSIGNALED(status):
            killed_mid_run += 1
            # What a kill leaves: the state parses, and names no more output than exists on disk.
            doc = RunState.load(state)
            for entry in doc.outputs:
                assert (out / entry["file"]).exists() or (out / (entry["file"] + ".partial")).exists()
        else:
            assert os.WEXITSTATUS(status) == 0
        assert _events(files, state, out, *small) == 0, f"rerun after kill, seed {seed}"
        assert _concatenated(out) == one_run, f"seed {seed}"
    assert killed_mid_run >= KILL_SEEDS // 3, "the delays should kill most runs before they finish"


def test_state_dir_must_come_with_an_out_directory(binlogs: list[Path], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["events", str(binlogs[0]), "--state", str(tmp_path / "s")]) == 2
    assert "--state needs --out DIR" in capsys.readouterr().err


def test_gtid_set_merges_into_disjoint_intervals() -> None:
    from binlog_model.gtid import GtidSet

    for seed in range(200):
        rng = random.Random(seed)
        numbers = rng.sample(range(1, 60), rng.randint(1, 40))
        gtids = GtidSet()
        for n in numbers:
            gtids.add_mysql("3e11fa47-71ca-11e1-9e33-c80aa9429562", n)
        spans = gtids.intervals("3e11fa47-71ca-11e1-9e33-c80aa9429562")
        assert {x for lo, hi in spans for x in range(lo, hi + 1)} == set(numbers)
        assert all(spans[i][1] + 1 < spans[i + 1][0] for i in range(len(spans) - 1))
    gtids = GtidSet()
    for n in (1, 2, 3, 7):
        gtids.add_mysql("u", n)
    gtids.add_mariadb(0, 1, 41)
    gtids.add_mariadb(0, 2, 42)
    assert str(gtids) == "u:1-3:7,0-2-42"
    assert str(GtidSet.from_json(gtids.to_json())) == str(gtids)


def test_spark_state_records_the_gtid_set_events_state_records(mysql: Any, mysql_db: str,
                                                                tmp_path: Path) -> None:
    """``resolve --state`` records GTIDs from its pre-pass scans with the same recorder as ``events
    --state``: over the same MySQL files (GTIDs on, a history before them) both states hold the same,
    complete set, PREVIOUS_GTIDS included — a resume by GTID set needs the transactions before the files."""
    from binlog_model.gtid import GtidSet
    from binlog_model.runs.transactions import GtidRecorder
    from binlog_model.spark.partitions import scan_files

    mysql.execute(f"CREATE TABLE `{mysql_db}`.g (id INT PRIMARY KEY)")   # at least one GTID before the files
    mysql.flush_and_collect()
    files: list[Path] = []
    for n in range(2):
        mysql.execute([f"INSERT INTO `{mysql_db}`.g VALUES ({n})"])
        files += mysql.flush_and_collect(tmp_path / "binlogs")
    assert main(["events", *map(str, files), "--state", str(tmp_path / "state"), "--out",
                 str(tmp_path / "out")]) == 0
    events_gtids = RunState.load(tmp_path / "state").gtids

    recorder = GtidRecorder(GtidSet())
    for scan in scan_files(files):
        recorder.see_all(scan.events)
    spark_gtids = recorder.record()
    assert str(spark_gtids) == str(events_gtids)
    assert recorder.based, "the files' PREVIOUS_GTIDS reached the recorder"
    first = str(events_gtids).split(",")[0]
    assert first.split(":")[-1].startswith("1-"), f"the set starts at the server's first transaction: {first}"
