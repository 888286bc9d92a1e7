"""``python -m benchmarks.apply``: ``binlog-model apply`` against MariaDB's own tools, one mode a run.

Every server is a throwaway MariaDB (``MariaDBServer``, ROW binlog, FULL images, an InnoDB buffer pool of
``--buffer-pool-mb``), the source and the peer alike. The table ``bench.t`` gets ``--rows`` rows (1,000 a
statement); the changes are 70% updates (10% of the keys, the hot keys, take half of them), 20% inserts and
10% deletes, in transactions of 100 sent in one round trip each.

- **rounds** (the default): ``--rows`` rows, then ``--changes`` changes; the binlog files are collected.
  Then, interleaved ``--rounds`` times, whole processes: ``binlog-model apply FILES --state S --to
  delta:T`` (archive mode, ``--commit-bytes``, ``--checkpoint-every``), timed with its own peak RSS, and the
  peer ``mariadb-binlog FILES | mariadb`` into a fresh MariaDB (a replica applying the same binlogs from
  the same initial data: the table's creation and rows are in the binlogs). Row changes/s a round, and the
  median ratio.
- **--memory N,M,…**: archive-mode ``apply`` after ``--rows`` rows and N changes, for each N: its peak RSS
  (``wait4``'s rusage of that process alone).
- **--initial-live**: a ``--rows``-row table, then, interleaved: ``apply mysql://… --initial live
  --stop-at-end`` against ``mariadb-dump --single-transaction bench > FILE``.
- **--lag SECONDS**: a writer process at ``--rate`` changes/s for SECONDS while ``apply mysql://…
  --initial live --commit-interval 1s`` follows; each transaction's lag is the timestamp of the first Delta
  commit holding it minus the moment its COMMIT returned to the writer. The writer sends each transaction's
  changes of one kind as statements of up to ``--statement-rows`` rows (100; with 1, the single-row
  statements of the other modes, this 2-core machine's server stays near 10k changes/s). Last, the replica
  is compared with the source.
- **--small-commits N** (with ``--skip-rounds``, alone): N one-row commits into a table, then the time to
  read it with no upkeep, with ``apply``'s upkeep (``optimize.compact()`` and a checkpoint every
  ``--checkpoint-every`` commits) and fully compacted.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


TABLE = ("CREATE TABLE bench.t (id INT PRIMARY KEY, qty INT, price DECIMAL(12,2), name VARCHAR(40), "
         "updated DATETIME(6), big BIGINT UNSIGNED)")


def _server(buffer_pool_mb: int) -> Any:
    """A throwaway MariaDB of the harness's kind, with an InnoDB buffer pool of ``buffer_pool_mb`` (the
    harness's 16 MB would make a 1M-row table disk-bound); the same for the source and the peer."""
    from binlog_model.testing.mariadb import MariaDBServer

    return MariaDBServer(row_image="FULL", row_metadata="FULL",
                         extra_args=[f"--innodb-buffer-pool-size={buffer_pool_mb}M"])


def _load(server: Any, rows: int) -> Any:
    """``bench.t`` with ``rows`` rows (1,000 a statement); the open connection (multi-statement on)."""
    from pymysql.constants import CLIENT

    server.execute(["CREATE DATABASE bench", TABLE])
    conn = server.connect("bench", client_flag=CLIENT.MULTI_STATEMENTS, autocommit=False)
    cur = conn.cursor()
    batch = 1000
    for start in range(0, rows, batch):
        cur.execute("INSERT INTO t VALUES " + ", ".join(
            f"({i}, {i % 1000}, {i}.25, 'name {i}', '2024-01-02 03:04:05.{i % 1000000:06d}', {i * 7})"
            for i in range(start, min(rows, start + batch))))
        conn.commit()
    return conn


class Changes:
    """The change mix: 70% updates (half of them on the 10% hot keys), 20% inserts, 10% deletes, as SQL
    statements, ``per`` to a transaction. ``statement_rows`` above 1 groups a transaction's changes of one
    kind into statements of up to that many rows (a multi-row ``INSERT``, ``UPDATE``/``DELETE … WHERE id IN
    (…)`` of distinct keys): the same row changes for far less of the server's per-statement work, which is
    what lets one 2-core machine produce 20k changes/s beside the follower."""

    def __init__(self, rows: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.next_id = rows
        self.hot = max(1, rows // 10)

    def transaction(self, per: int, stamp: str = "NOW(6)", statement_rows: int = 1) -> str:
        rng = self.rng
        changes: list[tuple[str, int]] = []
        for _ in range(per):
            kind = rng.random()
            if kind < 0.7:
                changes.append(("update", rng.randrange(self.hot) if rng.random() < 0.5
                                else rng.randrange(self.next_id)))
            elif kind < 0.9:
                changes.append(("insert", self.next_id))
                self.next_id += 1
            else:
                changes.append(("delete", rng.randrange(self.next_id)))
        if statement_rows <= 1:
            return ";".join(self._statement(kind, [key], stamp) for kind, key in changes)
        return ";".join(self._statement(kind, group, stamp)
                        for kind in ("update", "insert", "delete")
                        for group in _groups([key for k, key in changes if k == kind], statement_rows))

    @staticmethod
    def _statement(kind: str, keys: list[int], stamp: str) -> str:
        if kind == "insert":
            return "INSERT INTO t VALUES " + ", ".join(f"({key}, 1, 1.50, 'new', {stamp}, 1)" for key in keys)
        where = f"id = {keys[0]}" if len(keys) == 1 else f"id IN ({', '.join(map(str, keys))})"
        if kind == "update":
            return f"UPDATE t SET qty = qty + 1, updated = {stamp} WHERE {where}"
        return f"DELETE FROM t WHERE {where}"


def _groups(keys: list[int], size: int) -> Iterator[list[int]]:
    """``keys`` in statements of at most ``size`` distinct keys (a key drawn twice goes to a later one)."""
    pending = keys
    while pending:
        group: list[int] = []
        seen: set[int] = set()
        later: list[int] = []
        for key in pending:
            if key in seen or len(group) >= size:
                later.append(key)
            else:
                seen.add(key)
                group.append(key)
        yield group
        pending = later


def _run(conn: Any, sql: str) -> int:
    """Several statements in one round trip, then commit; the rows they changed (the server's count)."""
    cur = conn.cursor()
    cur.execute(sql)
    changed = max(cur.rowcount, 0)
    while cur.nextset():
        changed += max(cur.rowcount, 0)
    conn.commit()
    return changed


def generate(dest: Path, rows: int, changes: int, seed: int, buffer_pool_mb: int) -> list[Path]:
    """Binlogs of ``rows`` initial rows, then ``changes`` row changes in transactions of 100 (each
    transaction's statements sent in one round trip)."""
    with _server(buffer_pool_mb) as server:
        conn = _load(server, rows)
        mix = Changes(rows, seed)
        for _ in range(0, changes, 100):
            _run(conn, mix.transaction(100))
        conn.close()
        return server.flush_and_collect(dest, include_previous=True)


def _child(args: list[str], **kw: Any) -> tuple[float, int]:
    """Run a whole process: its wall seconds and its own peak RSS in MB (``wait4``'s rusage)."""
    began = time.monotonic()
    proc = subprocess.Popen(args, cwd=REPO, **kw)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.monotonic() - began
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, args)
    return seconds, usage.ru_maxrss // 1024


def _apply(files: list[Path], work: Path, commit_bytes: int, checkpoint_every: int) -> tuple[float, int]:
    """Archive-mode ``apply`` as a whole process: seconds and its peak RSS (MB)."""
    state, target = work / "state", work / "replica"
    shutil.rmtree(work, ignore_errors=True)
    return _child([sys.executable, "-m", "binlog_model.cli", "apply", *map(str, files), "--state", str(state),
                   "--to", f"delta:{target}", "--commit-bytes", str(commit_bytes),
                   "--checkpoint-every", str(checkpoint_every), "--no-progress"],
                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _peer(files: list[Path], buffer_pool_mb: int) -> float:
    with _server(buffer_pool_mb) as target:
        began = time.monotonic()
        binlog = subprocess.Popen(["mariadb-binlog", *map(str, files)], stdout=subprocess.PIPE)
        subprocess.run(["mariadb", "-uroot", f"--socket={target.socket}"], stdin=binlog.stdout, check=True)
        binlog.wait()
        seconds = time.monotonic() - began
    return seconds


def _load_avg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def archive_rounds(work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Mode ``rounds`` (the default): archive-mode ``apply`` against ``mariadb-binlog | mariadb``."""
    binlogs = work / "binlogs"
    files = sorted(binlogs.iterdir()) if binlogs.is_dir() and any(binlogs.iterdir()) else \
        generate(binlogs, args.rows, args.changes, args.seed, args.buffer_pool_mb)
    total = args.rows + args.changes
    size = sum(f.stat().st_size for f in files)
    print(f"{len(files)} binlog file(s), {size / 1e6:.1f} MB, {total} row changes "
          f"({args.rows} initial rows + {args.changes} changes)", flush=True)
    rounds: list[dict[str, Any]] = []
    for n in range(args.rounds):
        load = _load_avg()
        ours, rss = _apply(files, work / "run", args.commit_bytes, args.checkpoint_every)
        peer = _peer(files, args.buffer_pool_mb)
        rounds.append({"apply_s": round(ours, 2), "peer_s": round(peer, 2), "apply_rss_mb": rss,
                       "apply_changes_per_s": round(total / ours), "peer_changes_per_s": round(total / peer),
                       "load_before": load, "load_after": _load_avg()})
        print(f"round {n + 1}: apply {ours:.2f} s ({total / ours:,.0f} changes/s, peak RSS {rss} MB); "
              f"mariadb-binlog | mariadb {peer:.2f} s ({total / peer:,.0f} changes/s); "
              f"ratio {peer / ours:.2f}; load {load} -> {_load_avg()}", flush=True)
    ratio = statistics.median(r["peer_s"] / r["apply_s"] for r in rounds)
    print(f"median ratio (apply changes/s over the replica's): {ratio:.2f}")
    return {"files": len(files), "bytes": size, "row_changes": total, "rounds": rounds,
            "median_ratio": round(ratio, 3)}


def memory(work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Mode ``--memory N,M,…``: the peak RSS of archive-mode ``apply`` after ``--rows`` initial rows and N
    changes, for each N (binlogs generated once per N under ``DIR/binlogs-N``)."""
    result: dict[str, Any] = {"rows": args.rows, "runs": []}
    for changes in (int(n) for n in args.memory.split(",")):
        binlogs = work / f"binlogs-{changes}"
        files = sorted(binlogs.iterdir()) if binlogs.is_dir() and any(binlogs.iterdir()) else \
            generate(binlogs, args.rows, changes, args.seed, args.buffer_pool_mb)
        size = sum(f.stat().st_size for f in files)
        load = _load_avg()
        seconds, rss = _apply(files, work / "run", args.commit_bytes, args.checkpoint_every)
        run = {"changes": changes, "files": len(files), "bytes": size, "apply_s": round(seconds, 1),
               "peak_rss_mb": rss, "load_before": load, "load_after": _load_avg()}
        result["runs"].append(run)
        print(json.dumps(run), flush=True)
    return result


def _live_apply(server: Any, work: Path, extra: list[str], **kw: Any) -> list[str]:
    """The command line of ``apply mysql://…`` on ``server`` (password: ``$BINLOG_MODEL_PASSWORD``)."""
    shutil.rmtree(work, ignore_errors=True)
    return [sys.executable, "-m", "binlog_model.cli", "apply", f"mysql://root@localhost/?socket={server.socket}",
            "--state", str(work / "state"), "--to", f"delta:{work / 'replica'}", "--tables", "bench.*",
            "--no-progress", *extra]


def initial_live(work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Mode ``--initial-live``: a table of ``--rows`` rows, then, interleaved, ``apply mysql://… --initial
    live --stop-at-end`` against ``mariadb-dump --single-transaction bench > FILE`` (whole processes)."""
    env = {**os.environ, "BINLOG_MODEL_PASSWORD": ""}
    rounds: list[dict[str, Any]] = []
    with _server(args.buffer_pool_mb) as server:
        _load(server, args.rows).close()
        dump = server.dump_command()
        for n in range(args.rounds):
            load = _load_avg()
            cmd = _live_apply(server, work / "live", ["--initial", "live", "--stop-at-end",
                                                      "--initial-chunk", str(args.initial_chunk)])
            ours, rss = _child(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            with open(work / "dump.sql", "wb") as out:
                peer, _ = _child([*dump, "-uroot", f"--socket={server.socket}", "--single-transaction",
                                  "bench"], stdout=out)
            rounds.append({"apply_s": round(ours, 2), "dump_s": round(peer, 2), "apply_rss_mb": rss,
                           "apply_rows_per_s": round(args.rows / ours),
                           "dump_rows_per_s": round(args.rows / peer), "load_before": load,
                           "load_after": _load_avg()})
            print(f"round {n + 1}: apply --initial live {ours:.2f} s ({args.rows / ours:,.0f} rows/s, "
                  f"peak RSS {rss} MB); mariadb-dump {peer:.2f} s ({args.rows / peer:,.0f} rows/s); ratio "
                  f"{peer / ours:.2f}; load {load} -> {_load_avg()}", flush=True)
    ratio = statistics.median(r["dump_s"] / r["apply_s"] for r in rounds)
    print(f"median ratio (apply rows/s over mariadb-dump's): {ratio:.2f}")
    return {"rows": args.rows, "rounds": rounds, "median_ratio": round(ratio, 3)}


def _writer(socket: str, rows: int, seed: int, rate: float, seconds: float, per: int, statement_rows: int,
            out: Path) -> None:
    """The lag mode's writer (a process of its own): transactions of ``per`` changes (in statements of up to
    ``statement_rows`` rows) at ``rate`` changes/s for ``seconds``. Transaction n also inserts row n into
    ``bench.stamps``; the wall clock when its COMMIT returned is written to ``out`` (JSON) with the changes
    asked and the rows the server reports changed (a DELETE of a key already gone changes none)."""
    import pymysql
    from pymysql.constants import CLIENT

    conn = pymysql.connect(unix_socket=socket, user="root", password="", database="bench", autocommit=False,
                           client_flag=CLIENT.MULTI_STATEMENTS)
    mix = Changes(rows, seed)
    committed: list[float] = []
    began = time.time()
    done = changed = 0
    while (now := time.time()) - began < seconds:
        ahead = done / rate - (now - began)
        if ahead > 0:
            time.sleep(ahead)
        n = len(committed) + 1
        changed += _run(conn, f"INSERT INTO stamps VALUES ({n});"
                        + mix.transaction(per, statement_rows=statement_rows)) - 1
        committed.append(time.time())
        done += per
    out.write_text(json.dumps({"changes": done, "changed_rows": changed, "seconds": time.time() - began,
                               "committed": committed}))
    conn.close()


def _replica_equals(server: Any, path: Path, deadline: float) -> bool:
    """Whether the replica of ``bench.t`` equals ``SELECT *`` on the source, value for value, once the
    follower has caught up (tried until ``deadline``, at least once)."""
    from deltalake import DeltaTable

    conn = server.connect("bench")
    cur = conn.cursor()
    cur.execute("SELECT * FROM t ORDER BY id")
    source = [tuple(row) for row in cur.fetchall()]
    conn.close()
    columns = ["id", "qty", "price", "name", "updated", "big"]
    while True:
        replica = DeltaTable(str(path)).to_pyarrow_table(columns=columns).sort_by("id")
        if list(zip(*(replica.column(c).to_pylist() for c in columns), strict=True)) == source:
            return True
        if time.time() >= deadline:
            return False
        time.sleep(1)


def lag(work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Mode ``--lag SECONDS``: a writer process drives ``--rate`` row changes/s (transactions of
    ``--per-transaction``) into the table of ``--rows`` rows for SECONDS, while ``apply mysql://…
    --initial live --commit-interval 1s`` follows. Transaction n also inserts row n into ``bench.stamps``, and
    the writer notes when its COMMIT returned. Afterwards each version of the replica's ``stamps`` table is
    read: a transaction's lag is the timestamp of the first Delta commit holding its row minus its commit.
    One the replica does not hold ``--catch-up`` seconds after the writer ended counts as infinite (null).
    Last, the replica's ``bench.t`` is compared with the source's, value for value."""
    from deltalake import DeltaTable

    env = {**os.environ, "BINLOG_MODEL_PASSWORD": ""}
    with _server(args.buffer_pool_mb) as server:
        _load(server, args.rows).close()
        server.execute(["CREATE TABLE bench.stamps (n INT PRIMARY KEY)"])
        cmd = _live_apply(server, work / "lag", ["--initial", "live", "--commit-interval", "1s",
                                                 "--checkpoint-every", str(args.checkpoint_every)])
        follower = subprocess.Popen(cmd, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    text=True)
        assert follower.stderr is not None
        for line in follower.stderr:
            if "streaming from" in line:
                break
        else:
            raise RuntimeError(f"apply ended before it streamed: {follower.wait()}")
        load = _load_avg()
        subprocess.run([sys.executable, "-c", "import pathlib, benchmarks.apply as b; "
                        f"b._writer({str(server.socket)!r}, {args.rows}, {args.seed}, {args.rate}, "
                        f"{args.lag}, {args.per_transaction}, {args.statement_rows}, "
                        f"pathlib.Path({str(work / 'writer.json')!r}))"],
                       cwd=REPO, check=True)
        load_end = _load_avg()
        written = json.loads((work / "writer.json").read_text())
        committed = written["committed"]
        path = str(work / "lag" / "replica" / "bench" / "stamps")
        deadline = time.time() + args.catch_up
        while time.time() < deadline:       # the follower catches up (or the wait ends)
            if DeltaTable(path).to_pyarrow_table(columns=["n"]).num_rows >= len(committed):
                break
            time.sleep(1)
        equal = _replica_equals(server, work / "lag" / "replica" / "bench" / "t", deadline)
        follower.terminate()
        follower.communicate(timeout=300)
    table = DeltaTable(path)
    lags: dict[int, float] = {}
    for entry in sorted(table.history(), key=lambda h: h["version"]):
        at = entry["timestamp"] / 1000
        version = DeltaTable(path, version=entry["version"]).to_pyarrow_table(columns=["n"])
        for n in version.column("n").to_pylist():
            if n not in lags:
                lags[n] = at - committed[n - 1]
    # a transaction the replica did not hold by the end of the wait counts as an infinite lag (null below)
    values = sorted(lags.values()) + [math.inf] * (len(committed) - len(lags))

    def pct(q: float) -> float | None:
        value = values[min(len(values) - 1, int(q * len(values)))] if values else math.inf
        return None if value == math.inf else round(value, 2)

    result = {"rate_asked": args.rate, "statement_rows": args.statement_rows,
              "rate_achieved": round(written["changes"] / written["seconds"]),
              "rows_changed_per_s": round(written["changed_rows"] / written["seconds"]),
              "seconds": round(written["seconds"], 1), "transactions": len(committed),
              "replicated": len(lags), "lag_p50_s": pct(0.5), "lag_p99_s": pct(0.99), "lag_max_s": pct(1.0),
              "lag_max_replicated_s": round(max(lags.values()), 2) if lags else None,
              "replica_equals_source": equal,
              "load_at_start": load, "load_at_writer_end": load_end}
    print(json.dumps(result))
    return result


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
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog="""\
modes (one a run):
  (default)         rounds: archive-mode apply against mariadb-binlog | mariadb (--rows, --changes, --rounds)
  --memory N,M      the peak RSS of archive-mode apply after --rows rows and N, then M, changes
  --initial-live    apply mysql://... --initial live --stop-at-end against mariadb-dump --single-transaction
                    of a --rows-row table (--rounds, interleaved)
  --lag SECONDS     a writer at --rate changes/s for SECONDS while apply mysql://... --commit-interval 1s
                    follows; lag = Delta commit time - source COMMIT time, p50/p99/max
  --small-commits N --skip-rounds: the read cost after N one-row commits""")
    parser.add_argument("--rows", type=int, default=100_000, help="rows of the table before the changes")
    parser.add_argument("--changes", type=int, default=100_000, help="row changes after the rows (rounds)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--commit-bytes", type=int, default=16 << 20)
    parser.add_argument("--checkpoint-every", type=int, default=100)
    parser.add_argument("--buffer-pool-mb", type=int, default=1024,
                        help="innodb_buffer_pool_size of every MariaDB started (source and peer alike)")
    parser.add_argument("--memory", default="", metavar="N,M", help="mode: peak RSS after N, then M, changes")
    parser.add_argument("--initial-live", action="store_true",
                        help="mode: --initial live against mariadb-dump")
    parser.add_argument("--initial-chunk", type=int, default=50_000,
                        help="--initial-live: apply's --initial-chunk")
    parser.add_argument("--lag", type=float, default=0, metavar="SECONDS",
                        help="mode: the lag while following")
    parser.add_argument("--rate", type=float, default=20_000, help="--lag: row changes/s the writer aims at")
    parser.add_argument("--per-transaction", type=int, default=100, help="--lag: row changes per transaction")
    parser.add_argument("--statement-rows", type=int, default=100,
                        help="--lag: row changes of one kind grouped into statements of up to this many rows "
                             "(1: a statement each, as the other modes)")
    parser.add_argument("--catch-up", type=float, default=300,
                        help="--lag: seconds to wait, after the writer, for the follower to catch up")
    parser.add_argument("--small-commits", type=int, default=0)
    parser.add_argument("--skip-rounds", action="store_true", help="only the --small-commits measurement")
    parser.add_argument("--without-upkeep", action="store_true", help="--small-commits also with no upkeep")
    parser.add_argument("--dir", type=Path, default=None,
                        help="work folder (default: a new temporary one); binlogs generated there are reused")
    parser.add_argument("--json", type=Path, default=None, help="write the results there too")
    args = parser.parse_args(argv)
    work = args.dir or Path(tempfile.mkdtemp(prefix="bench-apply-"))
    work.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any]
    if args.skip_rounds:
        result = small_commits(work, args.small_commits, args.checkpoint_every, args.without_upkeep)
        print(json.dumps(result))
    elif args.memory:
        result = memory(work, args)
    elif args.initial_live:
        result = initial_live(work, args)
    elif args.lag:
        result = lag(work, args)
    else:
        result = archive_rounds(work, args)
        if args.small_commits:
            result["small_commits"] = small_commits(work, args.small_commits, args.checkpoint_every,
                                                    args.without_upkeep)
            print(json.dumps(result["small_commits"]))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
