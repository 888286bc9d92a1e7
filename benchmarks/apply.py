"""``python -m benchmarks.apply``: ``binlog-model apply`` against a MariaDB replica applying the same binlogs.

Strategy: a throwaway MariaDB (``MariaDBServer``, ROW binlog, FULL images) creates a table of ``--rows``
rows, then runs ``--changes`` row changes (70% updates, 20% inserts, 10% deletes; 10% of the keys take half
of the updates, the hot keys), in transactions of 100 changes, and the binlog files are collected. Then,
side by side, whole processes:

- ``binlog-model apply FILES --state S --to delta:T`` (archive mode, ``--commit-bytes`` sized for commits
  of about 100k changes, ``--checkpoint-every`` as given), timed with its peak RSS;
- the peer: ``mariadb-binlog FILES | mariadb`` into a fresh MariaDB of the same version (a replica applying
  the same binlogs, loaded from the same initial data: the table's creation and initial rows are in the
  binlogs for both).

Each is run ``--rounds`` times, interleaved; it prints row changes/s per round and the median ratio. The
read cost after many small commits is measured by ``--small-commits N`` (with ``--skip-rounds``, alone): N
one-row commits into a table, then the time to read it with no upkeep, with ``apply``'s upkeep
(``optimize.compact()`` and a checkpoint every ``--checkpoint-every`` commits) and fully compacted.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def generate(dest: Path, rows: int, changes: int, seed: int) -> list[Path]:
    from binlog_model.testing.mariadb import MariaDBServer

    rng = random.Random(seed)
    with MariaDBServer(row_image="FULL", row_metadata="FULL") as server:
        server.execute(["CREATE DATABASE bench",
                        "CREATE TABLE bench.t (id INT PRIMARY KEY, qty INT, price DECIMAL(12,2), "
                        "name VARCHAR(40), updated DATETIME(6), big BIGINT UNSIGNED)"])
        conn = server.connect("bench")
        cur = conn.cursor()
        batch = 1000
        for start in range(0, rows, batch):
            cur.execute("INSERT INTO t VALUES " + ", ".join(
                f"({i}, {i % 1000}, {i}.25, 'name {i}', '2024-01-02 03:04:05.{i % 1000000:06d}', {i * 7})"
                for i in range(start, min(rows, start + batch))))
            conn.commit()
        next_id = rows
        hot = max(1, rows // 10)
        done = 0
        while done < changes:
            for _ in range(100):
                kind = rng.random()
                if kind < 0.7:
                    key = rng.randrange(hot) if rng.random() < 0.5 else rng.randrange(next_id)
                    cur.execute("UPDATE t SET qty = qty + 1, updated = NOW(6) WHERE id = %s", (key,))
                elif kind < 0.9:
                    cur.execute("INSERT INTO t VALUES (%s, 1, 1.50, 'new', NOW(6), 1)", (next_id,))
                    next_id += 1
                else:
                    cur.execute("DELETE FROM t WHERE id = %s", (rng.randrange(next_id),))
            conn.commit()
            done += 100
        conn.close()
        return server.flush_and_collect(dest, include_previous=True)


def _apply(files: list[Path], work: Path, commit_bytes: int, checkpoint_every: int) -> tuple[float, int]:
    state, target = work / "state", work / "replica"
    shutil.rmtree(work, ignore_errors=True)
    args = [sys.executable, "-m", "binlog_model.cli", "apply", *map(str, files), "--state", str(state),
            "--to", f"delta:{target}", "--commit-bytes", str(commit_bytes),
            "--checkpoint-every", str(checkpoint_every), "--no-progress"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    began = time.monotonic()
    subprocess.run(args, check=True, cwd=REPO, capture_output=True)
    seconds = time.monotonic() - began
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) // 1024


def _peer(files: list[Path]) -> float:
    from binlog_model.testing.mariadb import MariaDBServer

    with MariaDBServer(row_image="FULL", row_metadata="FULL") as target:
        began = time.monotonic()
        binlog = subprocess.Popen(["mariadb-binlog", *map(str, files)], stdout=subprocess.PIPE)
        subprocess.run(["mariadb", "-uroot", f"--socket={target.socket}"], stdin=binlog.stdout, check=True)
        binlog.wait()
        seconds = time.monotonic() - began
    return seconds


def small_commits(work: Path, commits: int, every: int, without_upkeep: bool) -> dict[str, float]:
    """Read time of a table after ``commits`` one-row commits: with ``apply``'s upkeep
    (``sinks.delta.DeltaReplica.upkeep`` every ``every`` commits), fully compacted, and (``without_upkeep``:
    each commit then reads a longer log, so the writing alone grows with the square of ``commits``) with no
    upkeep."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    def read(path: Path) -> float:
        began = time.monotonic()
        rows = DeltaTable(str(path)).to_pyarrow_table().num_rows
        assert rows == commits
        return time.monotonic() - began

    result: dict[str, float] = {"commits": commits, "upkeep_every": every}
    for upkeep in (False, True) if without_upkeep else (True,):
        path = work / f"small-{upkeep}"
        shutil.rmtree(path, ignore_errors=True)
        for i in range(commits):
            write_deltalake(str(path), pa.table({"id": [i], "v": [f"value {i}"]}), mode="append")
            if upkeep and (i + 1) % every == 0:
                DeltaTable(str(path)).optimize.compact()
                DeltaTable(str(path)).create_checkpoint()
        result["read_upkept_s" if upkeep else "read_no_upkeep_s"] = round(
            statistics.median(read(path) for _ in range(3)), 3)
    DeltaTable(str(path)).optimize.compact()
    DeltaTable(str(path)).create_checkpoint()
    result["read_compacted_s"] = round(statistics.median(read(path) for _ in range(3)), 3)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--changes", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--commit-bytes", type=int, default=16 << 20)
    parser.add_argument("--checkpoint-every", type=int, default=100)
    parser.add_argument("--small-commits", type=int, default=0)
    parser.add_argument("--skip-rounds", action="store_true", help="only the --small-commits measurement")
    parser.add_argument("--without-upkeep", action="store_true", help="--small-commits also with no upkeep")
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    work = args.dir or Path(tempfile.mkdtemp(prefix="bench-apply-"))
    if args.skip_rounds:
        print(json.dumps(small_commits(work, args.small_commits, args.checkpoint_every,
                                       args.without_upkeep)))
        return 0
    binlogs = work / "binlogs"
    files = sorted(binlogs.iterdir()) if binlogs.is_dir() and any(binlogs.iterdir()) else \
        generate(binlogs, args.rows, args.changes, args.seed)
    total = args.rows + args.changes
    size = sum(f.stat().st_size for f in files)
    print(f"{len(files)} binlog file(s), {size / 1e6:.1f} MB, {total} row changes "
          f"({args.rows} initial rows + {args.changes} changes)")
    rounds: list[dict[str, Any]] = []
    for n in range(args.rounds):
        ours, rss = _apply(files, work / "run", args.commit_bytes, args.checkpoint_every)
        peer = _peer(files)
        rounds.append({"apply_s": round(ours, 2), "peer_s": round(peer, 2), "apply_rss_mb": rss,
                       "apply_changes_per_s": round(total / ours), "peer_changes_per_s": round(total / peer)})
        print(f"round {n + 1}: apply {ours:.2f} s ({total / ours:,.0f} changes/s, peak RSS {rss} MB); "
              f"mariadb-binlog | mariadb {peer:.2f} s ({total / peer:,.0f} changes/s); "
              f"ratio {peer / ours:.2f}")
    ratio = statistics.median(r["peer_s"] / r["apply_s"] for r in rounds)
    print(f"median ratio (apply changes/s over the replica's): {ratio:.2f}")
    result: dict[str, Any] = {"files": len(files), "bytes": size, "row_changes": total, "rounds": rounds,
                              "median_ratio": round(ratio, 3)}
    if args.small_commits:
        result["small_commits"] = small_commits(work, args.small_commits, args.checkpoint_every,
                                                args.without_upkeep)
        print(json.dumps(result["small_commits"]))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
