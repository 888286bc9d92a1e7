"""``python -m benchmarks.filters``: what ``--tables`` saves when 1 table of 20 is selected (issue 42).

Strategy: a throwaway MariaDB (ROW, FULL image, FULL metadata) writes an archive of 20 alike tables, each
getting the same inserts and updates interleaved (so the selected table's rows are spread through every
file); the binlogs are cached under ``benchmarks.workload.cache_root()``. Then the whole process
``binlog-model events FILES --out /dev/null`` is timed with and without ``--tables bench.t07``
(repetitions interleaved, the median reported): ``--format proto`` and ``jsonl`` with the compiled core,
and ``proto`` with ``BINLOG_MODEL_PURE=1``.
The result goes to ``benchmarks/results/filters-<UTC time>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.workload import cache_root

RESULTS = Path(__file__).resolve().parent / "results"
TABLES = 20
SELECTED = "bench.t07"


def _archive(rows_per_table: int) -> list[Path]:
    """The cached binlog files of the 20-table archive, generated on a miss."""
    from binlog_model.testing.mariadb import MariaDBServer

    folder = cache_root() / f"filters-{TABLES}x{rows_per_table}"
    done = folder / "done"
    if done.exists():
        return sorted(folder.glob("mysql-bin.*"))
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    print(f"generating {TABLES} tables x {rows_per_table} rows (inserts, then updates of every row)")
    with MariaDBServer(row_image="FULL", row_metadata="FULL") as server:
        server.execute("CREATE DATABASE bench")
        conn = server.connect("bench")
        with conn.cursor() as cur:
            for t in range(TABLES):
                cur.execute(f"CREATE TABLE t{t:02d} (id INT PRIMARY KEY, name VARCHAR(40), "
                            "amount DECIMAL(12,2), at DATETIME(3), qty INT, note VARCHAR(100))")
            server.reset_binlogs()
            batch = 500
            for first in range(0, rows_per_table, batch):
                for t in range(TABLES):      # interleaved: every table in every stretch of the archive
                    values = ",".join(
                        f"({i}, 'name {i} of t{t}', {i * 1.25:.2f}, '2026-01-01 00:00:00.{i % 1000:03d}', "
                        f"{i % 97}, REPEAT('x', {40 + i % 60}))" for i in range(first, first + batch))
                    cur.execute(f"INSERT INTO t{t:02d} VALUES {values}")
            for first in range(0, rows_per_table, batch):
                for t in range(TABLES):
                    cur.execute(f"UPDATE t{t:02d} SET qty = qty + 1, amount = amount * 2 "
                                f"WHERE id >= {first} AND id < {first + batch}")
        conn.close()
        files = server.flush_and_collect(folder, include_previous=True)
    done.write_text(json.dumps([f.name for f in files]))
    return sorted(files)


def _time(files: list[Path], extra: list[str], pure: bool) -> float:
    env = {**os.environ, "BINLOG_MODEL_PURE": "1"} if pure else {
        k: v for k, v in os.environ.items() if k != "BINLOG_MODEL_PURE"}
    command = [sys.executable, "-m", "binlog_model.cli", "events", *map(str, files), "--out", os.devnull,
               *extra]
    started = time.monotonic()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.monotonic() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.filters", description=__doc__)
    parser.add_argument("--rows-per-table", type=int, default=15_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-pure", action="store_true", help="Leave out the pure-Python runs.")
    args = parser.parse_args(argv)
    files = _archive(args.rows_per_table)
    size = sum(f.stat().st_size for f in files)
    print(f"archive: {len(files)} files, {size / 1e6:.0f} MB, {TABLES} tables x {args.rows_per_table} rows "
          "(inserted, then updated)")
    result: dict[str, Any] = {"archive_mb": size / 1e6, "tables": TABLES,
                              "rows_per_table": args.rows_per_table,
                              "load": Path("/proc/loadavg").read_text().strip(), "runs": {}}
    # (core, --format): the pure path only with proto (its JSON formatting is the compiled path's)
    setups = [("compiled", "proto"), ("compiled", "jsonl")] + ([] if args.no_pure else [("pure", "proto")])
    for core, fmt in setups:
        cases = {"all tables": ["--format", fmt],
                 f"--tables {SELECTED}": ["--format", fmt, "--tables", SELECTED]}
        seconds: dict[str, list[float]] = {case: [] for case in cases}
        for _ in range(args.repeat):
            for case, extra in cases.items():
                seconds[case].append(_time(files, extra, core == "pure"))
        medians = {case: statistics.median(times) for case, times in seconds.items()}
        result["runs"][f"{core} {fmt}"] = {"seconds": seconds, "median": medians}
        whole, one = medians.values()
        print(f"{core} core, --format {fmt}: all tables {whole:.2f} s, --tables {SELECTED} {one:.2f} s: "
              f"{whole / one:.1f}x faster ({size / 1e6 / whole:.0f} vs {size / 1e6 / one:.0f} MB/s)")
    RESULTS.mkdir(exist_ok=True)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    (RESULTS / f"filters-{stamp}.json").write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
