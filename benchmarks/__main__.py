"""``python -m benchmarks``: all peers side by side on freshly generated binlogs, tables of ratios.

Strategy: start a throwaway MariaDB (ROW, FULL image, FULL metadata), run the mixed-type workload on it
(``benchmarks.workload``), then measure, on that server's binlog files and in the same run: ours fully
resolved (``iter_binlog_events`` with the snapshot taken before the workload), ours decoder only
(``iter_events``), python-mysql-replication streaming the same binlog from the live server, and
``mariadb-binlog --verbose --base64-output=decode-rows`` (and ``-vv``) to /dev/null. Then the same workload
on a throwaway MySQL 9 (Debian sid's build, same options), whose binlog is measured with ours, ours decoder
only, python-mysql-replication and MySQL's own ``mysqlbinlog -v`` (and ``-vv``) from the same packages
(``--no-mysql`` leaves this part out; it is skipped, saying why, where sid cannot be reached).
Repetitions are interleaved (case A, B, C, A, B, C ...) so a load spike from other users of the machine
hits every case alike; the median repetition is reported. The result, with ``uptime``'s load, goes to
``benchmarks/results/<UTC time>.json`` so later changes can be compared.

``--quick``: about 20k row changes, one repetition; same tables. The last line is always
``ratio ours/pmr: X, ours/mariadb-binlog: Y`` (MariaDB's binlog); the line before it gives
``ours/mysqlbinlog`` on MySQL's binlog.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

from benchmarks.peers import median_result, run_case, run_mariadb_binlog, run_mysqlbinlog
from benchmarks.workload import Workload, live_server

RESULTS = Path(__file__).resolve().parent / "results"


def _load() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return ""


def _spark_available() -> bool:
    try:
        import pyspark  # noqa: F401

        from binlog_model.spark.session import check_java
        check_java()
    except Exception:
        return False
    return True


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _print_rows(results: dict[str, dict[str, Any]], out: Any = print) -> None:
    out(f"{'case':<24}{'seconds':>9}{'row changes':>13}{'rows/s':>11}{'MB/s':>9}{'peak RSS MB':>13}"
        f"  repetitions (s)")
    for r in results.values():
        out(f"{r['case']:<24}{r['seconds']:>9.2f}{r['rows']:>13}{_fmt(r['rows_per_s'], ',.0f'):>11}"
            f"{_fmt(r['mb_per_s'], '.1f'):>9}{r['max_rss_mb']:>13.1f}  {r['repetitions']}")


def _ratio(results: dict[str, dict[str, Any]], case: str, other: str) -> float | None:
    mine = results.get(case, {}).get("rows_per_s")
    peer = results.get(other, {}).get("rows_per_s")
    return mine / peer if mine and peer else None


def print_mysql_table(results: dict[str, dict[str, Any]], version: str,
                      out: Any = print) -> dict[str, float | None]:
    """Print the MySQL side's table and its ratio line; return the ratios."""
    _print_rows(results, out)
    ratios = {"ours/mysqlbinlog": _ratio(results, "ours", "mysqlbinlog"),
              "ours-proto/mysqlbinlog": _ratio(results, "ours-proto", "mysqlbinlog"),
              "ours/mysqlbinlog -vv": _ratio(results, "ours", "mysqlbinlog -vv"),
              "ours/pmr": _ratio(results, "ours", "pmr"),
              "ours-decoder/pmr": _ratio(results, "ours-decoder", "pmr")}
    out(f"ratios (rows/s, MySQL {version} binlog): "
        + ", ".join(f"{k} {_fmt(v, '.2f')}" for k, v in ratios.items()))
    return ratios


def print_table(results: dict[str, dict[str, Any]], out: Any = print) -> dict[str, float | None]:
    """Print the side-by-side table and the ratio line; return the ratios."""
    _print_rows(results, out)
    ours = results["ours"]["rows_per_s"]

    def ratio(other: str) -> float | None:
        peer = results.get(other, {}).get("rows_per_s")
        return ours / peer if ours and peer else None

    ratios = {"ours/pmr": ratio("pmr"), "ours/mariadb-binlog": ratio("mariadb-binlog"),
              "ours-proto/mariadb-binlog": _ratio(results, "ours-proto", "mariadb-binlog"),
              "ours/mariadb-binlog -vv": ratio("mariadb-binlog -vv"),
              "ours-decoder/pmr": (results["ours-decoder"]["rows_per_s"] or 0) / results["pmr"]["rows_per_s"]
              if results.get("pmr", {}).get("rows_per_s") else None}
    if "spark local[1]" in results and "spark local[2]" in results:
        ratios["spark local[2]/local[1]"] = (results["spark local[2]"]["rows_per_s"]
                                             / results["spark local[1]"]["rows_per_s"])
    out("ratios (rows/s): " + ", ".join(f"{k} {_fmt(v, '.2f')}" for k, v in ratios.items()))
    out(f"ratio ours/pmr: {_fmt(ratios['ours/pmr'], '.2f')}, "
        f"ours/mariadb-binlog: {_fmt(ratios['ours/mariadb-binlog'], '.2f')}")
    return ratios


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="about 20k row changes, one repetition")
    parser.add_argument("--changes", type=int, help="row changes in the workload (default 100000)")
    parser.add_argument("--repeat", type=int, help="repetitions per case (default 3; 1 with --quick)")
    parser.add_argument("--no-pmr", action="store_true", help="skip python-mysql-replication")
    parser.add_argument("--no-mysql", action="store_true",
                        help="skip the MySQL 9 binlog (ours and mysqlbinlog on the same workload)")
    parser.add_argument("--spark", action=argparse.BooleanOptionalAction, default=None,
                        help="measure binlog_model.spark local[1] and local[2] (on; off with --quick)")
    parser.add_argument("--slice-mb", type=int, default=16, help="Spark slice size in MB (default 16)")
    parser.add_argument("--spark-repeat", type=int, default=1,
                        help="repetitions of the Spark cases (default 1: a JVM run takes minutes here)")
    parser.add_argument("--output", type=Path, help="JSON result path (default benchmarks/results/)")
    args = parser.parse_args(argv)
    changes = args.changes or (20_000 if args.quick else 100_000)
    repeat = args.repeat or (1 if args.quick else 3)
    spark = (not args.quick) if args.spark is None else args.spark
    if spark and not _spark_available():
        print("Spark not measured: pyspark or Java 17+ is missing")
        spark = False
    workload = Workload.for_changes(changes)
    began = time.monotonic()
    load_before = _load()
    server, cached, files = live_server(workload)
    try:
        nbytes = sum(f.stat().st_size for f in files)
        print(f"binlog: {len(files)} file(s), {nbytes / 1e6:.1f} MB, {workload.row_changes} row changes, "
              f"{workload.row_images} row images; load {_load()}")
        runs: dict[str, list[dict[str, Any]]] = {}
        for rep in range(repeat):
            print(f"repetition {rep + 1}/{repeat}", flush=True)
            step = [
                run_case("ours", files, nbytes=nbytes, snapshot=str(cached.snapshot)),
                run_case("ours-proto", files, nbytes=nbytes, snapshot=str(cached.snapshot)),
                run_case("ours-decoder", files, nbytes=nbytes),
                run_mariadb_binlog(files, nbytes=nbytes, rows=workload.row_changes),
                run_mariadb_binlog(files, nbytes=nbytes, rows=workload.row_changes, verbose=2),
            ]
            if not args.no_pmr:
                step.append(run_case("pmr", files, nbytes=nbytes, socket=str(server.socket),
                                     log_file=files[0].name))
            if spark and rep < args.spark_repeat:
                for master in ("local[1]", "local[2]"):
                    step.append(run_case("spark", files, nbytes=nbytes, label=f"spark {master}",
                                         master=master, snapshot=str(cached.snapshot),
                                         slice_bytes=args.slice_mb << 20))
            for r in step:
                runs.setdefault(r["case"], []).append(r)
        version = server.version
    finally:
        server.stop()
    results = {case: median_result(rs) for case, rs in runs.items()}
    _check_counts(results, workload)
    mysql = None if args.no_mysql else _measure_mysql(workload, repeat, pmr=not args.no_pmr)
    print()
    ratios = print_table(results)
    if mysql is not None and "results" in mysql:
        print(f"\nMySQL {mysql['server']} binlog: {mysql['bytes'] / 1e6:.1f} MB, same workload")
        mysql["ratios"] = print_mysql_table(mysql["results"], mysql["server"])
    doc = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "quick": args.quick, "repeat": repeat,
        "workload": {"key": workload.key, "row_changes": workload.row_changes,
                     "row_images": workload.row_images, "bytes": nbytes, "files": len(files)},
        "server": version, "python": platform.python_version(), "machine": platform.machine(),
        "cpus": os.cpu_count(), "load_before": load_before, "load_after": _load(),
        "wall_seconds": round(time.monotonic() - began, 1),
        "results": results, "ratios": ratios, "mysql": mysql,
    }
    RESULTS.mkdir(exist_ok=True)
    path = args.output or RESULTS / f"compare-{'quick-' if args.quick else ''}{doc['when']}.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"(results written to {path}; load {doc['load_after']})")
    if mysql is not None and "ratios" in mysql:
        print(f"ratio on the MySQL {mysql['server']} binlog: "
              f"ours/mysqlbinlog: {_fmt(mysql['ratios']['ours/mysqlbinlog'], '.2f')}, "
              f"ours/pmr: {_fmt(mysql['ratios']['ours/pmr'], '.2f')}")
    elif mysql is not None:
        print(f"MySQL not measured: {mysql['skipped']}")
    # The contract: the last line is the ratio line.
    print(f"ratio ours/pmr: {_fmt(ratios['ours/pmr'], '.2f')}, "
          f"ours/mariadb-binlog: {_fmt(ratios['ours/mariadb-binlog'], '.2f')}")
    return 0


def _check_counts(results: dict[str, dict[str, Any]], workload: Workload) -> None:
    for case in ("ours", "ours-proto", "ours-decoder", "pmr"):
        if case in results and results[case]["rows"] != workload.row_changes:
            print(f"WARNING: {case} counted {results[case]['rows']} row changes, "
                  f"the workload made {workload.row_changes}")


def _measure_mysql(workload: Workload, repeat: int, *, pmr: bool) -> dict[str, Any]:
    """The same workload on a throwaway MySQL 9; ours, mysqlbinlog -v/-vv and pmr on its binlog."""
    from binlog_model.testing.mysql import mysql_available

    ok, reason = mysql_available()
    if not ok:
        return {"skipped": reason}
    server, cached, files = live_server(workload, kind="mysql")
    try:
        nbytes = sum(f.stat().st_size for f in files)
        print(f"MySQL binlog: {len(files)} file(s), {nbytes / 1e6:.1f} MB; load {_load()}")
        runs: dict[str, list[dict[str, Any]]] = {}
        for rep in range(repeat):
            print(f"MySQL repetition {rep + 1}/{repeat}", flush=True)
            step = [
                run_case("ours", files, nbytes=nbytes, snapshot=str(cached.snapshot)),
                run_case("ours-proto", files, nbytes=nbytes, snapshot=str(cached.snapshot)),
                run_case("ours-decoder", files, nbytes=nbytes),
                run_mysqlbinlog(files, nbytes=nbytes, rows=workload.row_changes),
                run_mysqlbinlog(files, nbytes=nbytes, rows=workload.row_changes, verbose=2),
            ]
            if pmr:
                step.append(run_case("pmr", files, nbytes=nbytes, socket=str(server.socket),
                                     log_file=files[0].name, is_mariadb=False))
            for r in step:
                runs.setdefault(r["case"], []).append(r)
        version = server.version
    finally:
        server.stop()
    results = {case: median_result(rs) for case, rs in runs.items()}
    _check_counts(results, workload)
    return {"server": version, "bytes": nbytes, "files": len(files), "results": results}


if __name__ == "__main__":
    raise SystemExit(main())
