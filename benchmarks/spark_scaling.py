"""``python -m benchmarks.spark_scaling``: rows/s of the ``mysql-binlog`` source under local[1] vs local[2].

Strategy: a throwaway MariaDB (``MariaDBServer``) writes ``--files`` binlog files (default 8) of about
``--rows`` row changes each (INSERT batches, UPDATEs and DELETEs on a mixed-type table, with an ALTER in the
middle file so the DDL pre-pass and historical resolution are exercised), rotated with FLUSH BINARY LOGS. Each
master then runs in a child process of its own (a fresh JVM, nothing cached): the source is read and every row
fully materialised (``write.format("noop")``), timed from the read to the end of the job, median of
``--repeat`` runs after ``--warmup`` (3) untimed ones: the steady state, once the JVM's JIT has settled (the
first read of a session takes 2-3x as long). ``--pin`` runs local[N] on N CPUs only, so local[1] cannot borrow
a second core for the JVM while its Python worker decodes: the per-core scaling. It prints rows/s per master
and the local[2]/local[1] ratio (2 cores here: the ideal is 2.0; the planner's pre-pass and Python worker
start-up are the serial part). The single-process pipeline (``iter_binlog_events``) is timed on the same files
in the same run, and each master's line gives how many cores the whole machine kept busy during its timed runs
(/proc/stat), which explains the ratio: the JVM turns the Arrow batches into rows on another core while the
Python worker decodes, so local[1] already keeps more than one core busy (other work on the machine shows
there too). ``--binlogs DIR`` measures existing files instead of generating new ones. Each master's line also
splits the CPU of a read between the Python workers (decode, assemble, Arrow batches) and the JVM (Arrow to
rows, the sink), from /proc. The read asks for ``--slices-per-core`` (2) slices per core of the machine
(``minSlices``, as ``run_resolve`` does), so a core does not idle while the other finishes a last large slice;
``--masters`` picks the masters (``local[2]`` alone for a long run on a large set).

Beyond one machine: ``--cluster`` adds a standalone cluster of two 1-core workers on 127.0.0.1
(``binlog_model.testing.spark_cluster``; master, workers and executors are JVMs of their own, the tasks
run only on the executors), and ``--s3`` reads the same files from moto's S3 server on 127.0.0.1
(``binlog_model.testing.s3server``), in ``local[2]`` and on the cluster, with the bytes the server
served per byte of input. ``--target-mb N`` grows the generated set to N MB by copying the files written
after the ALTER under the next sequence numbers (same table definition, so the copies decode; the
generation itself stays short). The driver's pre-pass (``plan``: one read of every file, row bodies
skipped) is timed alone on the same files, so its share of each run shows. ``--json FILE`` also writes
the figures as JSON.
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
from typing import Any

REPO = Path(__file__).resolve().parents[1]


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


def replicate(files: list[Path], target_mb: int) -> list[Path]:
    """Copy the files written after the ALTER (the second half) under the next sequence numbers until the
    set holds ``target_mb`` MB; the originals first."""
    import shutil

    out = list(files)
    tail = files[len(files) // 2 + 1:] or files[-1:]
    stem = files[0].name.rsplit(".", 1)[0]
    seq = max(int(f.name.rsplit(".", 1)[1]) for f in files)
    n = 0
    while sum(f.stat().st_size for f in out) < target_mb * 1e6:
        seq += 1
        copy = files[0].parent / f"{stem}.{seq:06d}"
        shutil.copyfile(tail[n % len(tail)], copy)
        out.append(copy)
        n += 1
    return out


def _machine_ticks() -> tuple[int, int]:
    """(busy, total) CPU ticks of the whole machine so far (Linux /proc/stat; zeros elsewhere)."""
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            ticks = [int(v) for v in fh.readline().split()[1:]]
    except OSError:
        return 0, 0
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)     # idle + iowait
    return sum(ticks) - idle, sum(ticks)


def _process_cpu(me: int) -> dict[str, float]:
    """CPU seconds so far of this run's JVM (the child ``SparkSubmit`` of ``me``) and of its Python
    workers (the daemons it started and their forks), from /proc (zeros elsewhere): where a read's time
    goes, JVM side (Arrow to rows, the sink) against Python side (decode, assemble, Arrow batches)."""
    procs: dict[int, tuple[str, int, int]] = {}
    try:
        entries = [d for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return {"jvm": 0.0, "python_workers": 0.0}
    for name in entries:
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        procs[int(name)] = (cmd, int(fields[1]), int(fields[11]) + int(fields[12]))
    tick = os.sysconf("SC_CLK_TCK")
    jvms = {pid for pid, (cmd, ppid, _) in procs.items() if ppid == me and "SparkSubmit" in cmd}
    daemons = {pid for pid, (_, ppid, _) in procs.items() if ppid in jvms}
    workers = {pid for pid, (_, ppid, _) in procs.items() if ppid in daemons}
    return {"jvm": sum(procs[p][2] for p in jvms) / tick,
            "python_workers": sum(procs[p][2] for p in daemons | workers) / tick}


def measure(master: str, paths: list[str], repeat: int, min_slices: int = 1, warmup: int = 1
            ) -> dict[str, float]:
    from binlog_model.spark.session import local_session

    conf = {}
    if master.startswith("spark://"):
        # The package as "installed on every node": this Python and this checkout.
        conf = {"spark.pyspark.python": sys.executable, "spark.executorEnv.PYTHONPATH": str(REPO),
                "spark.executor.memory": "768m"}
    started = time.perf_counter()
    spark = local_session(master, conf=conf)
    session = time.perf_counter() - started
    times = []
    rows = 0
    busy = total = 0
    cpu = {"jvm": 0.0, "python_workers": 0.0}

    def read() -> Any:
        df = (spark.read.format("mysql-binlog").option("paths", json.dumps(paths))
              .option("minSlices", str(min_slices)).load())
        df.write.format("noop").mode("overwrite").save()
        return df

    warm_started = time.perf_counter()
    for _ in range(warmup):
        # Steady state: the JVM's JIT and the Python workers' imports happen in these untimed reads.
        read()
    warmup_s = time.perf_counter() - warm_started
    for _ in range(repeat):
        busy_before, total_before = _machine_ticks()
        cpu_before = _process_cpu(os.getpid())
        started = time.perf_counter()
        df = read()
        times.append(time.perf_counter() - started)
        busy_after, total_after = _machine_ticks()
        cpu_after = _process_cpu(os.getpid())
        for key in cpu:
            cpu[key] += cpu_after[key] - cpu_before[key]
        busy += busy_after - busy_before
        total += total_after - total_before
    served = _served_bytes()          # before the row count, which reads the set once more
    rows = df.where("operation != 'SCHEMA'").count()
    spark.stop()
    seconds = statistics.median(times)
    return {"rows": rows, "seconds": seconds, "rows_per_s": rows / seconds, "session_s": session,
            "warmup_s": warmup_s, "cpus": len(os.sched_getaffinity(0)),
            "busy_cores": (os.cpu_count() or 1) * busy / total if total else float("nan"),
            "served_bytes": served, "jvm_cpu_s": cpu["jvm"] / repeat,
            "python_cpu_s": cpu["python_workers"] / repeat}


def _served_bytes() -> int | None:
    """Object bytes the benchmark's S3 server has served since the parent reset its count (None without
    one)."""
    endpoint = os.environ.get("BINLOG_MODEL_BENCH_S3")
    if not endpoint:
        return None
    import urllib.request

    with urllib.request.urlopen(f"{endpoint}/_served", timeout=30) as answer:
        return int(json.loads(answer.read())["bytes"])


def measure_prepass(paths: list[str]) -> float:
    """Seconds of the driver's planning alone (the pre-pass over every file, history, slices)."""
    from binlog_model.spark.datasource import plan

    started = time.perf_counter()
    plan(paths, minSlices="4")
    return time.perf_counter() - started


def measure_pipeline(paths: list[str], repeat: int) -> dict[str, float]:
    """The single-process ``iter_binlog_events`` on the same files, every row change counted."""
    from binlog_model.runs.pipeline import iter_binlog_events

    times = []
    rows = 0
    for _ in range(repeat):
        started = time.perf_counter()
        rows = sum(len(event.rows) for event in iter_binlog_events(paths))
        times.append(time.perf_counter() - started)
    seconds = statistics.median(times)
    return {"rows": rows, "seconds": seconds, "rows_per_s": rows / seconds}


def _child(master: str, paths: list[str], repeat: int, env: dict[str, str], min_slices: int, warmup: int,
           pin: bool) -> dict[str, Any]:
    from binlog_model.testing.spark_cluster import node_env

    done = subprocess.run([sys.executable, "-m", "benchmarks.spark_scaling", "--repeat", str(repeat),
                           "--min-slices", str(min_slices), "--warmup", str(warmup),
                           *(["--pin"] if pin else []), "--child", master, json.dumps(paths)],
                          capture_output=True, text=True,
                          check=False, cwd=REPO, env=node_env({**env, "PYTHONPATH": str(REPO)}))
    if done.returncode:
        sys.exit(f"{master} run failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--rows", type=int, default=20000, help="row changes per file (about)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--binlogs", type=Path, help="measure these existing binlog files (a directory) "
                        "instead of generating new ones")
    parser.add_argument("--target-mb", type=int, default=0, help="grow the generated set to this many MB")
    parser.add_argument("--cluster", action="store_true", help="also a 2-worker standalone cluster")
    parser.add_argument("--s3", action="store_true", help="also read the files from an S3 server")
    parser.add_argument("--no-pipeline", action="store_true", help="skip the single-process pipeline")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("--masters", default="local[1],local[2]",
                        help="comma-separated local masters to run (local[1] is the ratios' base)")
    parser.add_argument("--slices-per-core", type=int, default=2, help="the read's minSlices is this "
                        "times the machine's cores, as run_resolve does (so no core idles at the end)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed reads first in each session (the "
                        "JVM's JIT and the workers' imports), so the timed reads are the steady state")
    parser.add_argument("--pin", action="store_true", help="run local[N] on N CPUs only "
                        "(sched_setaffinity: the JVM and its Python workers share them), so local[1] cannot "
                        "borrow a second core for the JVM while its Python worker decodes")
    parser.add_argument("--min-slices", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--child", nargs=2, metavar=("MASTER", "PATHS_JSON"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        master = args.child[0]
        if args.pin and master.startswith("local["):
            width = master[len("local["):-1]
            n = (os.cpu_count() or 1) if width == "*" else int(width)
            os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:n])   # inherited by the JVM and workers
        print(json.dumps(measure(master, json.loads(args.child[1]), args.repeat, args.min_slices,
                                 args.warmup)))
        return
    import signal
    from contextlib import ExitStack

    # A kill (SIGTERM) unwinds like an error, so the cluster, the S3 server and the temp files go too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with tempfile.TemporaryDirectory(prefix="spark-scaling-") as tmp, ExitStack() as stack:
        if args.binlogs:
            files = sorted(p for p in args.binlogs.iterdir() if p.suffix[1:].isdigit())
        else:
            files = generate(Path(tmp), args.files, args.rows)
            if args.target_mb:
                files = replicate(files, args.target_mb)
        paths = [str(p) for p in files]
        size = sum(p.stat().st_size for p in files)
        print(f"{len(files)} binlog files, {size / 1e6:.1f} MB", flush=True)
        figures: dict[str, Any] = {"files": len(files), "bytes": size, "repeat": args.repeat,
                                   "cores": os.cpu_count(), "runs": {}}
        if not args.no_pipeline:
            pipe = measure_pipeline(paths, args.repeat)
            figures["pipeline"] = pipe
            print(f"pipeline (one process): {pipe['rows']} rows in {pipe['seconds']:.2f}s = "
                  f"{pipe['rows_per_s']:,.0f} rows/s", flush=True)
        figures["prepass_s"] = {"file": measure_prepass(paths)}
        print(f"driver pre-pass alone (files): {figures['prepass_s']['file']:.2f}s", flush=True)
        s3 = s3_paths = None
        extra_env: dict[str, str] = {}
        if args.s3:
            from binlog_model.testing.s3server import S3Server

            s3 = stack.enter_context(S3Server(log_dir=tmp))
            s3_paths = s3.upload(files, "bench/binlogs")
            extra_env = {**s3.env(), "BINLOG_MODEL_BENCH_S3": s3.endpoint}
            os.environ.update(extra_env)
            figures["prepass_s"]["s3"] = measure_prepass(s3_paths)
            print(f"driver pre-pass alone (s3): {figures['prepass_s']['s3']:.2f}s", flush=True)
        runs: list[tuple[str, str, list[str]]] = [(m.strip(), "file", paths) for m in args.masters.split(",")]
        min_slices = args.slices_per_core * (os.cpu_count() or 1)
        cluster_url = ""
        if args.cluster:
            from binlog_model.testing.spark_cluster import SparkCluster

            cluster = stack.enter_context(SparkCluster(workers=2, cores=1, memory="1g",
                                                       work_dir=Path(tempfile.mkdtemp(dir=tmp)),
                                                       extra_env=extra_env))
            cluster_url = cluster.master_url
            runs.append((cluster_url, "file", paths))
        if s3 is not None and s3_paths is not None:
            runs.append(("local[2]", "s3", s3_paths))
            if cluster_url:
                runs.append((cluster_url, "s3", s3_paths))
        for master, where, inputs in runs:
            if s3 is not None:
                s3.reset()
            r = _child(master, inputs, args.repeat, extra_env, min_slices, args.warmup, args.pin)
            name = "cluster (2 workers x 1 core)" if master.startswith("spark://") else master
            if s3 is not None and where == "s3":
                # Each repetition reads the set once more: bytes per byte of input per run.
                r["read_per_input_byte"] = r["served_bytes"] / size / args.repeat
            figures["runs"][f"{name} / {where}"] = r
            extra = (f", {r['read_per_input_byte']:.3f} bytes read per input byte"
                     if "read_per_input_byte" in r else "")
            print(f"{name} from {where}: {r['rows']} rows in {r['seconds']:.2f}s = {r['rows_per_s']:,.0f} "
                  f"rows/s (session start {r['session_s']:.1f}s; machine busy: {r['busy_cores']:.2f} of "
                  f"{os.cpu_count()} cores; on {r['cpus']} CPUs; CPU per read: Python workers "
                  f"{r['python_cpu_s']:.1f}s, JVM {r['jvm_cpu_s']:.1f}s){extra}", flush=True)
        first = next(iter(figures["runs"].values()))
        base = figures["runs"].get("local[1] / file", first)["rows_per_s"]
        print("\n| run | rows/s | vs local[1] | seconds | bytes read / input byte | busy cores | "
              "Python / JVM CPU s |")
        print("|---|---|---|---|---|---|---|")
        if "pipeline" in figures:
            pipe = figures["pipeline"]
            print(f"| pipeline, one process / file | {pipe['rows_per_s']:,.0f} | "
                  f"{pipe['rows_per_s'] / base:.2f} | {pipe['seconds']:.1f} | | |")
        for name, r in figures["runs"].items():
            read = f"{r['read_per_input_byte']:.3f}" if "read_per_input_byte" in r else ""
            print(f"| {name} | {r['rows_per_s']:,.0f} | {r['rows_per_s'] / base:.2f} | {r['seconds']:.1f} | "
                  f"{read} | {r['busy_cores']:.2f} | {r['python_cpu_s']:.1f} / {r['jvm_cpu_s']:.1f} |")
        if "local[2] / file" in figures["runs"] and "local[1] / file" in figures["runs"]:
            ratio = figures["runs"]["local[2] / file"]["rows_per_s"] / base
            print(f"\nlocal[2] / local[1] = {ratio:.2f}x")
        if "pipeline" in figures and "local[1] / file" in figures["runs"]:
            print(f"local[1] / pipeline = {base / figures['pipeline']['rows_per_s']:.2f}x")
        # The ratio means little on a busy machine: say how busy it was.
        figures["loadavg_end"] = os.getloadavg()
        print(f"load average (1, 5, 15 min) at the end: {os.getloadavg()}, cores: {os.cpu_count()}")
        if args.json:
            args.json.write_text(json.dumps(figures, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
