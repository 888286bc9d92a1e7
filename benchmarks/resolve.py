"""``python -m benchmarks.resolve``: the whole ``binlog-model resolve`` command at production size.

Strategy: ``generate`` writes a real MySQL 9 binlog set (Debian sid's build, ``binlog_model.testing.mysql``)
of ``--files`` files of about ``--file-mb`` MB each: three tables (the benchmark's 16-type ``mixed`` table,
a narrow ``orders`` table and a JSON/text ``notes`` table), multi-row INSERTs, UPDATEs of whole batches
(FULL images: before and after) and DELETEs, and DDL between the files (a column added to ``mixed``, a
column of ``orders`` widened, ``notes`` dropped and created again), each file closed with FLUSH BINARY LOGS.
The set is cached under ``--dir`` (``meta.json`` marks a complete set). ``run`` then times, as a user would
run them, each command in a child process: ``binlog-model events FILES --format proto`` (the single
process) and ``binlog-model resolve FILES`` per ``--masters`` (``local[2]``, ``local[1]``, ``cluster`` for
the standalone harness of two 1-core workers), the JVM start included. While a command runs, its process
tree is sampled from /proc: every process's peak RSS (``VmHWM``) is kept, and the report gives the peak of
the Python driver, of each JVM and of the Python workers. ``--subset N`` times the first N files only (the
memory bound: peak RSS on a small and a large archive). ``--repeat N`` runs N rounds of every case,
interleaved, and reports each case's median time (a shared machine's speed drifts between runs). Figures
print as a table and go to ``--json``.
Our commands, and the Spark Python workers they start, run with their bytecode compiled beforehand, as
installed (``benchmarks.bytecode``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.bytecode import compiled_env
from benchmarks.workload import _DDL, _row_sql

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable

_ORDERS = ("CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, customer INT NOT NULL, qty INT NOT NULL, "
           "price DECIMAL(10,2) NOT NULL, placed DATETIME(3) NOT NULL, code VARCHAR(32) NOT NULL) "
           "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4")
_NOTES = ("CREATE TABLE notes (id INT NOT NULL PRIMARY KEY, doc JSON, body TEXT, at TIMESTAMP(6) NULL) "
          "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4")
# DDL before file n (n >= 1), cycling: every kind of schema change the typed tables follow.
_BETWEEN = [
    ["ALTER TABLE mixed ADD COLUMN note{n} VARCHAR(20) DEFAULT NULL"],
    ["ALTER TABLE orders MODIFY qty BIGINT NOT NULL"],
    ["DROP TABLE notes", _NOTES.replace("at TIMESTAMP(6) NULL", "at TIMESTAMP(6) NULL, extra INT")],
    ["ALTER TABLE mixed ADD COLUMN tag{n} INT DEFAULT {n}"],
]


def _binlog_sizes(conn: Any) -> list[tuple[str, int]]:
    with conn.cursor() as cur:
        cur.execute("SHOW BINARY LOGS")
        return [(r[0], int(r[1])) for r in cur.fetchall()]


def generate(dest: Path, files: int, file_mb: int, seed: int = 20261126) -> list[Path]:
    """Write the set into ``dest/binlogs`` (cached: a complete set is reused)."""
    from binlog_model.testing.mysql import MySQLServer

    meta_path = dest / "meta.json"
    if meta_path.is_file():
        meta = json.loads(meta_path.read_text())
        return [dest / "binlogs" / name for name in meta["binlogs"]]
    rnd = random.Random(seed)
    began = time.monotonic()
    extra = ["--max-binlog-size=1073741824", "--innodb-buffer-pool-size=512M",
             "--innodb-redo-log-capacity=512M"]
    with MySQLServer(extra_args=extra) as server:
        server.reset_binlogs()
        server.execute(["CREATE DATABASE bench"])
        conn = server.connect("bench")
        next_id = 1
        rows = 0
        with conn.cursor() as cur:
            for stmt in (_DDL, _ORDERS, _NOTES):
                cur.execute(stmt)
            for n in range(files):
                if n:
                    for stmt in _BETWEEN[(n - 1) % len(_BETWEEN)]:
                        cur.execute(stmt.format(n=n))
                current = _binlog_sizes(conn)[-1][0]
                while True:
                    start = next_id
                    write_batch(cur, rnd, start)
                    next_id += 500
                    rows += 500 + 500 + 100 + 500 + 500 + 250 + 500 + 100
                    if next_id % 20000 == 1:
                        sizes = dict(_binlog_sizes(conn))
                        size = sizes.get(current, 0)
                        print(f"  file {n + 1}/{files}: {size >> 20} MB, {rows:,} row changes, "
                              f"{time.monotonic() - began:.0f} s", flush=True)
                        if size >= file_mb << 20 or _binlog_sizes(conn)[-1][0] != current:
                            break
                cur.execute("FLUSH BINARY LOGS")
        conn.close()
        tmp = dest / "binlogs.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        found = server.flush_and_collect(tmp, include_previous=True)
        version = server.version
    final = dest / "binlogs"
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    kept = [final / p.name for p in found if (final / p.name).stat().st_size > 4096]
    meta = {"binlogs": [p.name for p in kept], "bytes": sum(p.stat().st_size for p in kept),
            "row_changes_about": rows, "server": version, "seconds": round(time.monotonic() - began, 1)}
    meta_path.write_text(json.dumps(meta, indent=2))
    return kept


def write_batch(cur: Any, rnd: random.Random, start: int) -> int:
    """One round of the production-shaped workload on ids ``start``..``start + 499``: 500-row INSERTs into
    ``mixed`` and ``orders``, 100 rows into ``notes``, UPDATEs of the two 500-row batches (FULL images),
    DELETEs of half a batch of ``mixed`` and of the rows of ``orders`` / ``notes`` before ``start``.
    Returns the row changes the server reported (the affected rows)."""
    changed = 0
    values = ",".join(_row_sql(rnd, i, 160) for i in range(start, start + 500))
    cols = "id,big,name,body,amount,created,seen,status,tags,score,doc,flags,day,span,yr,payload"
    orders = ",".join(f"({i},{rnd.randint(1, 10**6)},{rnd.randint(1, 99)},"
                      f"{rnd.randint(1, 10**7) / 100:.2f},'2025-0{rnd.randint(1, 9)}-1"
                      f"{rnd.randint(0, 9)} 1{rnd.randint(0, 9)}:3{rnd.randint(0, 9)}:00.1"
                      f"{rnd.randint(10, 99)}','c{rnd.getrandbits(40):x}')"
                      for i in range(start, start + 500))
    notes = ",".join(f"({i},'{{\"k\": {rnd.randint(0, 999)}, \"s\": \"n{i}\"}}',"
                     f"'body {i} {rnd.random()}',"
                     f"FROM_UNIXTIME({rnd.randint(10**9, 17 * 10**8)}))"
                     for i in range(start, start + 100))
    for sql in (f"INSERT INTO mixed ({cols}) VALUES {values}",
                f"INSERT INTO orders (id,customer,qty,price,placed,code) VALUES {orders}",
                f"INSERT INTO notes (id,doc,body,at) VALUES {notes}",
                f"UPDATE mixed SET big = big + 1, status = 'active', name = CONCAT(name, '~') "
                f"WHERE id BETWEEN {start} AND {start + 499}",
                f"UPDATE orders SET qty = qty + 1 WHERE id BETWEEN {start} AND {start + 499}",
                f"DELETE FROM mixed WHERE id BETWEEN {start} AND {start + 249}",
                f"DELETE FROM orders WHERE id < {start}",
                f"DELETE FROM notes WHERE id < {start}"):
        changed += max(0, cur.execute(sql))
    return changed


# -- measuring ----------------------------------------------------------------------------------------------

def _children(pid: int) -> list[int]:
    """Every child of ``pid``, whichever of its threads started it (the JVM forks from many threads)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                found += [int(p) for p in fh.read().split()]
        except OSError:
            continue
    return found


def _status(pid: int) -> tuple[str, int] | None:
    """(kind, peak RSS in bytes) of a process: kind is jvm, python-worker, python or other."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
        with open(f"/proc/{pid}/status") as fh:
            hwm = next((int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM:")), 0)
    except (OSError, StopIteration, ValueError):
        return None
    exe = os.path.basename(argv[0].decode(errors="replace")) if argv else ""
    text = b" ".join(argv).decode(errors="replace")
    if exe == "java":
        kind = "jvm"
    elif "pyspark" in text:
        kind = "python-worker"
    elif exe.startswith("python"):
        kind = "python"
    else:
        kind = "other"
    return kind, hwm


class TreeSampler:
    """Every process under ``pid`` (recursively), its kind and peak RSS, sampled every ``every`` s."""

    def __init__(self, pid: int, every: float = 0.25, extra: list[int] | None = None) -> None:
        self.pid = pid
        self.extra = extra or []
        self.every = every
        self.peaks: dict[int, tuple[str, int]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            todo = [self.pid, *self.extra]
            while todo:
                pid = todo.pop()
                found = _status(pid)
                if found is not None:
                    old = self.peaks.get(pid)
                    # A process exiting shows an empty command line ("other"): keep what it was.
                    kind = found[0] if found[0] != "other" or old is None else old[0]
                    self.peaks[pid] = (kind, max(found[1], old[1] if old else 0))
                todo += _children(pid)
            self._stop.wait(self.every)

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> dict[str, Any]:
        by: dict[str, list[int]] = {}
        for kind, peak in self.peaks.values():
            by.setdefault(kind, []).append(peak)
        return {kind: {"count": len(v), "max_mb": round(max(v) / 2**20, 1)} for kind, v in sorted(by.items())}


def timed(cmd: list[str], env: dict[str, str], log: Path, extra: list[int] | None = None) -> dict[str, Any]:
    """Run ``cmd``; its wall time, the peak RSS of every process under it (and under ``extra``: the
    cluster's master and workers, whose children are the executors) and the 1-minute load average before
    and after (the machine is shared: a figure means little without it)."""
    load = os.getloadavg()[0]
    began = time.monotonic()
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        with TreeSampler(proc.pid, extra=extra) as sampler:
            code = proc.wait()
    seconds = time.monotonic() - began
    return {"seconds": round(seconds, 2), "exit": code, "rss": sampler.summary(),
            "load": [round(load, 2), round(os.getloadavg()[0], 2)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path.home() / ".cache" / "binlog-model-bench" / "resolve",
                        help="where the generated set lives (cached)")
    parser.add_argument("--files", type=int, default=5)
    parser.add_argument("--file-mb", type=int, default=450)
    parser.add_argument("--generate-only", action="store_true")
    parser.add_argument("--masters", default="local[2],local[1]",
                        help="comma-separated: local[N] and/or cluster")
    parser.add_argument("--subset", type=int, default=0, help="time the first N files only")
    parser.add_argument("--no-events", action="store_true", help="skip the single-process run")
    parser.add_argument("--resolve-args", default="", help="more arguments for resolve (one string)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds of every case, interleaved; the table gives each case's median")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    dest = args.dir / f"{args.files}x{args.file_mb}mb"
    dest.mkdir(parents=True, exist_ok=True)
    files = generate(dest, args.files, args.file_mb)
    meta = json.loads((dest / "meta.json").read_text())
    if args.subset:
        files = files[:args.subset]
    size = sum(p.stat().st_size for p in files)
    sizes = ", ".join(f"{p.stat().st_size >> 20} MB" for p in files)
    print(f"{len(files)} files, {size / 1e6:.1f} MB ({sizes}), {meta['server']}", flush=True)
    if args.generate_only:
        return
    work = Path(tempfile.mkdtemp(prefix="bench-resolve-"))
    env = compiled_env(work, REPO, PYTHONPATH=str(REPO), PYSPARK_PYTHON=PY)
    log = work / "commands.log"
    results: dict[str, Any] = {"files": len(files), "bytes": size,
                               "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    try:
        rows = None
        cluster = None
        names = ([] if args.no_events else ["events"]) + [m for m in args.masters.split(",") if m]
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        for _round in range(args.repeat):       # interleaved: a machine's drift hits every case alike
            for name in names:
                if name == "events":
                    run = timed([PY, "-m", "binlog_model.cli", "events", *map(str, files), "--format",
                                 "proto", "--out", str(work / "ev.pb")], env, log)
                    (work / "ev.pb").unlink(missing_ok=True)
                    runs[name].append(run)
                    print(f"events --format proto: {run}", flush=True)
                    continue
                extra = args.resolve_args.split()
                if name == "cluster":
                    from binlog_model.testing.spark_cluster import SparkCluster
                    cluster = SparkCluster(workers=2, cores=1).start() if cluster is None else cluster
                    spark_master = cluster.master_url
                    # The executors see only what the application ships: this checkout on their path.
                    extra += ["--conf", f"spark.executorEnv.PYTHONPATH={REPO}"]
                else:
                    spark_master = name
                out = work / "out"
                roots = [p.pid for p in cluster._procs] if name == "cluster" and cluster is not None else None
                run = timed([PY, "-m", "binlog_model.cli", "resolve", *map(str, files), "--out", str(out),
                             "--master", spark_master, "--log-file", str(work / f"spark-{name}.log"), *extra],
                            env, log, roots)
                text = log.read_text(errors="replace")
                line = next((ln for ln in reversed(text.splitlines()) if ln.startswith("== ")), "")
                if line:
                    rows = int(line.split(" row changes")[0].rsplit(" ", 1)[-1])
                run["rows"] = rows
                shutil.rmtree(out, ignore_errors=True)
                runs[name].append(run)
                print(f"resolve {name}: {run}", flush=True)
        for name, done in runs.items():
            results[name] = _median_run(done)
        if cluster is not None:
            cluster.stop()
        if rows:
            base = results.get("events", {}).get("seconds")
            print(f"\n{'run':<24} {'seconds':>8} {'rows/s':>10} {'vs events':>9} {'load':>11}  peak RSS (MB)")
            for name, run in results.items():
                if not isinstance(run, dict) or "seconds" not in run:
                    continue
                rate = rows / run["seconds"]
                ratio = f"{base / run['seconds']:.2f}" if base else "-"
                rss = ", ".join(f"{k} x{v['count']}: {v['max_mb']}" for k, v in run["rss"].items())
                load = "-".join(f"{x:.1f}" for x in run["load"])
                each = "/".join(f"{x:.1f}" for x in run.get("all_seconds", []))
                print(f"{name:<24} {run['seconds']:>8.1f} {rate:>10,.0f} {ratio:>9} {load:>11}  {rss}"
                      + (f"  (runs: {each})" if len(run.get("all_seconds", [])) > 1 else ""))
            results["rows"] = rows
        if args.json:
            args.json.write_text(json.dumps(results, indent=2))
    finally:
        print(f"(log: {log})")


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One case over its repeats: the median seconds (every repeat's kept in ``all_seconds``), the peak RSS
    of each kind of process over all repeats, the load from the first to the last."""
    ordered = sorted(runs, key=lambda r: r["seconds"])
    median = dict(ordered[len(ordered) // 2])
    rss: dict[str, dict[str, Any]] = {}
    for run in runs:
        for kind, seen in run.get("rss", {}).items():
            mine = rss.setdefault(kind, {"count": seen["count"], "max_mb": seen["max_mb"]})
            mine["max_mb"] = max(mine["max_mb"], seen["max_mb"])
    median.update(rss=rss, all_seconds=[r["seconds"] for r in runs],
                  load=[runs[0]["load"][0], runs[-1]["load"][-1]])
    return median


if __name__ == "__main__":
    main()
