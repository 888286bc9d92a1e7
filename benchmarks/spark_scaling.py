"""``python -m benchmarks.spark_scaling``: rows/s of the ``mysql-binlog`` source under local[1] vs local[2].

Strategy: a throwaway MariaDB (``MariaDBServer``) writes ``--files`` binlog files (default 8) of about
``--rows`` row changes each (INSERT batches, UPDATEs and DELETEs on a mixed-type table, with an ALTER in
the middle file so the DDL pre-pass and historical resolution are exercised), rotated with FLUSH BINARY
LOGS. Each master then runs in a child process of its own (a fresh JVM, nothing cached): the source is
read and every row fully materialised (``write.format("noop")``), timed from the read to the end of the
job, median of ``--repeat`` runs. It prints rows/s per master and the local[2]/local[1] ratio (2 cores
here: the ideal is 2.0; the planner's pre-pass and Python worker start-up are the serial part). The
single-process pipeline (``iter_binlog_events``) is timed on the same files in the same run, and each
master's line gives how many cores the whole machine kept busy during its timed runs (/proc/stat), which
explains the ratio: the JVM turns the Arrow batches into rows on another core while the Python worker
decodes, so local[1] already keeps more than one core busy (other work on the machine shows there too).
``--binlogs DIR`` measures existing files instead of generating new ones.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def generate(dest: Path, files: int, rows: int) -> list[Path]:
    from binlog_model.testing.mariadb import MariaDBServer

    with MariaDBServer(row_image="FULL", row_metadata="FULL") as server:
        server.execute(["CREATE DATABASE bench",
                        "CREATE TABLE bench.t (id INT PRIMARY KEY, qty INT UNSIGNED, price DECIMAL(12,2), "
                        "name VARCHAR(40), created DATETIME(6), flags SET('a','b','c'), "
                        "big BIGINT UNSIGNED)"])
        next_id = 0
        for n in range(files):
            if n == files // 2:
                server.execute("ALTER TABLE bench.t ADD COLUMN note TEXT", database="bench")
            batch = 500
            for start in range(0, rows * 3 // 4, batch):
                values = ", ".join(
                    f"({next_id + i}, {i}, {i}.25, 'name {i}', '2024-01-02 03:04:05.{i % 1000000:06d}', "
                    f"'a,c', {2**63 + i})" for i in range(min(batch, rows * 3 // 4 - start)))
                server.execute(f"INSERT INTO t (id, qty, price, name, created, flags, big) VALUES {values}",
                               database="bench")
                next_id += min(batch, rows * 3 // 4 - start)
            low, high = next_id - rows // 4, next_id - rows // 8
            server.execute([f"UPDATE t SET qty = qty + 1 WHERE id >= {high}",
                            f"DELETE FROM t WHERE id < {high} AND id >= {low}"], database="bench")
            server.execute("FLUSH BINARY LOGS")
        return server.flush_and_collect(dest)


def _machine_ticks() -> tuple[int, int]:
    """(busy, total) CPU ticks of the whole machine so far (Linux /proc/stat; zeros elsewhere)."""
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            ticks = [int(v) for v in fh.readline().split()[1:]]
    except OSError:
        return 0, 0
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)     # idle + iowait
    return sum(ticks) - idle, sum(ticks)


def measure(master: str, paths: list[str], repeat: int) -> dict[str, float]:
    from binlog_model.spark.job import local_session

    spark = local_session(master)
    times = []
    rows = 0
    busy = total = 0
    for _ in range(repeat):
        busy_before, total_before = _machine_ticks()
        started = time.perf_counter()
        df = spark.read.format("mysql-binlog").option("paths", json.dumps(paths)).load()
        df.write.format("noop").mode("overwrite").save()
        times.append(time.perf_counter() - started)
        busy_after, total_after = _machine_ticks()
        busy += busy_after - busy_before
        total += total_after - total_before
        rows = df.where("operation != 'SCHEMA'").count()
    spark.stop()
    seconds = statistics.median(times)
    return {"rows": rows, "seconds": seconds, "rows_per_s": rows / seconds,
            "busy_cores": (os.cpu_count() or 1) * busy / total if total else float("nan")}


def measure_pipeline(paths: list[str], repeat: int) -> dict[str, float]:
    """The single-process ``iter_binlog_events`` on the same files, every row change counted."""
    from binlog_model.pipeline import iter_binlog_events

    times = []
    rows = 0
    for _ in range(repeat):
        started = time.perf_counter()
        rows = sum(len(event.rows) for event in iter_binlog_events(paths))
        times.append(time.perf_counter() - started)
    seconds = statistics.median(times)
    return {"rows": rows, "seconds": seconds, "rows_per_s": rows / seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--rows", type=int, default=20000, help="row changes per file (about)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--binlogs", type=Path, help="measure these existing binlog files (a directory) "
                        "instead of generating new ones")
    parser.add_argument("--child", nargs=2, metavar=("MASTER", "PATHS_JSON"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child[0], json.loads(args.child[1]), args.repeat)))
        return
    with tempfile.TemporaryDirectory(prefix="spark-scaling-") as tmp:
        if args.binlogs:
            files = sorted(p for p in args.binlogs.iterdir() if p.suffix[1:].isdigit())
        else:
            files = generate(Path(tmp), args.files, args.rows)
        paths = json.dumps([str(p) for p in files])
        print(f"{len(files)} binlog files, {sum(p.stat().st_size for p in files) / 1e6:.1f} MB")
        pipe = measure_pipeline([str(p) for p in files], args.repeat)
        print(f"pipeline (one process): {pipe['rows']} rows in {pipe['seconds']:.2f}s = "
              f"{pipe['rows_per_s']:,.0f} rows/s")
        results = {}
        for master in ("local[1]", "local[2]"):
            done = subprocess.run([sys.executable, "-m", "benchmarks.spark_scaling", "--repeat",
                                   str(args.repeat), "--child", master, paths],
                                  capture_output=True, text=True, check=False)
            if done.returncode:
                sys.exit(f"{master} run failed:\n{done.stderr[-3000:]}")
            results[master] = json.loads(done.stdout.strip().splitlines()[-1])
            r = results[master]
            print(f"{master}: {r['rows']} rows in {r['seconds']:.2f}s = {r['rows_per_s']:,.0f} rows/s "
                  f"(machine busy: {r['busy_cores']:.2f} of {os.cpu_count()} cores, all processes)")
        ratio = results["local[2]"]["rows_per_s"] / results["local[1]"]["rows_per_s"]
        print(f"local[2] / local[1] = {ratio:.2f}x; local[1] / pipeline = "
              f"{results['local[1]']['rows_per_s'] / pipe['rows_per_s']:.2f}")
        # The ratio means little on a busy machine: say how busy it was.
        print(f"load average (1, 5, 15 min) at the end: {os.getloadavg()}, cores: {os.cpu_count()}")


if __name__ == "__main__":
    main()
