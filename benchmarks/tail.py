"""``python -m benchmarks.tail``: ``binlog-model tail`` against a live server, the C tools and
python-mysql-replication, and the tail's end-to-end lag under a steady write load.

Strategy: ``generate`` writes a production-shaped binlog on a throwaway server of each kind (MySQL 9.7 from
Debian sid, MariaDB 10.11): ``benchmarks.resolve.write_batch`` rounds (500-row INSERTs into the 16-type
``mixed`` table and the narrow ``orders`` table, 100-row INSERTs of JSON/text ``notes``, 500-row UPDATEs
with FULL images, DELETEs) until the binlog holds ``--mb`` MB, a rotation (``FLUSH BINARY LOGS``) and a
DDL every ~100 MB. The row changes counted are the server's affected rows. The server is shut down
cleanly and its whole datadir cached (``meta.json`` marks a complete entry), so a run starts a server on a
copy of it (the binlog index rewritten to the copy's paths) in seconds instead of writing the data again.

``run`` then times, against that one running server and as a user runs them (a child process each, the
interpreter's start included; the wall time, the CPU time and the 1-minute load average before and after
each run are recorded):

- ``tail``: ``binlog-model tail URL --from earliest --stop-at-end --format proto --out DIR`` with a fresh
  state, over the server's unix socket;
- ``events``: ``binlog-model events FILES --format proto`` over the same server's binlog files (the local
  reference the tail must match);
- the C tools: ``mysqlbinlog`` (MySQL, the server's own build) / ``mariadb-binlog`` (MariaDB)
  ``--read-from-remote-server --to-last-log -v``, with ``--base64-output=decode-rows`` (the fast form) and
  without (also the BINLOG base64 blocks), to /dev/null; and ``-v`` into a file in the work folder (``-v >
  file``), as a user keeps its output: the tail writes its output files there too, so this case pays
  for the same kind of writes (its output is ~2.8x the binlog's size, the tail's about 1x);
- ``pmr``: python-mysql-replication's ``BinLogStreamReader`` (``blocking=False``) reading every value of
  every row image, from a separate venv (``--pmr-python``; never a dependency of the project), over the
  first ``--pmr-rows`` row changes (its rate is that count over its whole command's time).
- with ``--baseline DIR``: the same tail command from another checkout (the code before a change).

Our commands run with their bytecode compiled beforehand, as a pip-installed package has it
(``benchmarks.bytecode``).

The fast cases repeat ``--repeat`` times, interleaved, and the median is reported; pmr runs once.

``--lag-seconds`` adds the lag measurement: on a fresh server of each kind a tail follows (``--stats``)
while a writer commits ``--lag-rate`` row changes per second in 500-row statements at a steady pace
(INSERT, UPDATE, DELETE of the narrow table, each its own transaction). The writer notes the wall-clock
time each COMMIT returned and the total row changes so far; each ``--stats`` line (written after the
tail's commit is durable) is stamped when it arrives with the number of events committed. A
transaction's lag is the time from its COMMIT to the first tail commit that holds it (each statement is
one ``BinlogEvent``: the n-th statement is committed once the tail's ``events`` reach n);
p50/p99/max are reported.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.bytecode import compiled_env
from benchmarks.resolve import _BETWEEN, _NOTES, _ORDERS, write_batch
from benchmarks.workload import _DDL

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable
KINDS = ("mysql", "mariadb")
_EXTRA = {"mysql": ["--max-binlog-size=1073741824", "--innodb-buffer-pool-size=512M",
                    "--innodb-redo-log-capacity=512M"],
          "mariadb": ["--max-binlog-size=1073741824", "--innodb-buffer-pool-size=512M",
                      "--innodb-log-file-size=512M"]}


def _server_class(kind: str) -> type:
    if kind == "mysql":
        from binlog_model.testing.mysql import MySQLServer
        return MySQLServer
    if kind == "mariadb":
        from binlog_model.testing.mariadb import MariaDBServer
        return MariaDBServer
    raise ValueError(f"unknown kind {kind!r}: expected one of {KINDS}")


def _new_server(kind: str, datadir: Path | None = None) -> Any:
    """A server of ``kind`` (ROW, FULL image and metadata); on a copy of ``datadir`` when given."""
    base = _server_class(kind)
    if datadir is None:
        return base(row_image="FULL", row_metadata="FULL", extra_args=_EXTRA[kind])
    cached: Path = datadir

    class Cached(base):  # type: ignore[misc, valid-type]
        def _prepare_datadir(self) -> None:
            shutil.copytree(cached, self.datadir, symlinks=True)
            # the binlog index names files by the path they were written at: the copy's instead
            for index in self.datadir.glob("*.index"):
                names = [Path(line.strip()).name for line in index.read_text().splitlines() if line.strip()]
                index.write_text("".join(f"{self.datadir / name}\n" for name in names))

    return Cached(row_image="FULL", row_metadata="FULL", extra_args=_EXTRA[kind])


def _binlogs(server: Any) -> list[tuple[str, int]]:
    return [(str(r[0]), int(r[1])) for r in server.query("SHOW BINARY LOGS")]


def generate(kind: str, dest: Path, mb: int, seed: int = 20261126) -> dict[str, Any]:
    """The cached server of ``kind`` in ``dest`` (``datadir/`` and ``meta.json``), written when missing."""
    meta_path = dest / "meta.json"
    if meta_path.is_file():
        return dict(json.loads(meta_path.read_text()))
    rnd = random.Random(seed)
    began = time.monotonic()
    server = _new_server(kind).start()
    try:
        server.reset_binlogs()
        server.execute(["CREATE DATABASE bench"])
        conn = server.connect("bench")
        rows, next_id, rotations = 0, 1, 0
        with conn.cursor() as cur:
            for stmt in (_DDL, _ORDERS, _NOTES):
                cur.execute(stmt)
            while True:
                rows += write_batch(cur, rnd, next_id)
                next_id += 500
                if next_id % 20000 == 1:
                    total = sum(size for _, size in _binlogs(server))
                    print(f"  {kind}: {total >> 20} MB, {rows:,} row changes, "
                          f"{time.monotonic() - began:.0f} s", flush=True)
                    if total >= mb << 20:
                        break
                    if total >= (rotations + 1) * (100 << 20):     # a rotation and a DDL every ~100 MB
                        cur.execute("FLUSH BINARY LOGS")
                        rotations += 1
                        for stmt in _BETWEEN[(rotations - 1) % len(_BETWEEN)]:
                            cur.execute(stmt.format(n=rotations))
        conn.close()
        files = _binlogs(server)
        meta = {"kind": kind, "server": server.version, "row_changes": rows, "binlogs": [n for n, _ in files],
                "bytes": sum(s for _, s in files), "seconds": round(time.monotonic() - began, 1)}
        # a clean shutdown, then the datadir is the cache entry
        pid = server.pid
        assert pid is not None
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 120
        while server.running and time.monotonic() < deadline:
            time.sleep(0.2)
        if server.running:
            raise RuntimeError(f"{kind} did not shut down")
        tmp = dest / "datadir.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copytree(server.datadir, tmp, symlinks=True)
        shutil.rmtree(dest / "datadir", ignore_errors=True)
        tmp.rename(dest / "datadir")
    finally:
        server.stop()
    meta_path.write_text(json.dumps(meta, indent=2))
    return meta


# --- timing ------------------------------------------------------------------------------------------------

def timed(cmd: list[str], env: dict[str, str] | None = None, stdout: Any = subprocess.DEVNULL,
          log: Path | None = None, cwd: Path = REPO) -> dict[str, Any]:
    """Run ``cmd`` whole; its wall time, its CPU time (user + system, the process and its children), exit
    status and the 1-minute load average before and after."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.monotonic()
    with open(log or os.devnull, "ab") as err:
        code = subprocess.run(cmd, stdout=stdout, stderr=err, env=env, cwd=cwd, check=False).returncode
    seconds = time.monotonic() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"seconds": round(seconds, 3), "cpu_seconds": round(cpu, 3), "exit": code,
            "load": [round(load, 2), round(os.getloadavg()[0], 2)]}


_PMR_SCRIPT = r"""
import sys, time
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent
socket, first, is_mariadb, limit = sys.argv[1], sys.argv[2], sys.argv[3] == "1", int(sys.argv[4])
began = time.monotonic()
stream = BinLogStreamReader(connection_settings={"unix_socket": socket, "user": "root", "passwd": ""},
                            server_id=4000000123, blocking=False, resume_stream=True, log_file=first,
                            log_pos=4, is_mariadb=is_mariadb,
                            only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent])
rows = 0
touched = 0
for event in stream:
    for row in event.rows:
        rows += 1
        for image in (row.get("values"), row.get("before_values"), row.get("after_values")):
            if image is not None:
                for value in image.values():
                    touched += value is not None
    if limit and rows >= limit:
        break
stream.close()
print(rows, touched, time.monotonic() - began)
"""


def _digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 22):
                h.update(chunk)
    return h.hexdigest()


def _pmr(python: str, socket: str, first: str, kind: str, work: Path, log: Path,
         limit: int) -> dict[str, Any]:
    """python-mysql-replication over the first ``limit`` row changes (0: all): its rate is ``rows`` over the
    whole command's time, as for the other cases."""
    script = work / "pmr_stream.py"
    script.write_text(_PMR_SCRIPT)
    out = work / "pmr.out"
    with open(out, "wb") as fh:
        run = timed([python, str(script), socket, first, "1" if kind == "mariadb" else "0", str(limit)],
                    stdout=fh, log=log)
    text = out.read_text().split()
    run["rows"] = int(text[0]) if text else None
    return run


def _env(work: Path, *checkouts: Path) -> dict[str, str]:
    """The environment our commands run in (see the module docstring)."""
    return compiled_env(work, *checkouts, PYTHONPATH=str(REPO), BINLOG_MODEL_PASSWORD="")


def measure(kind: str, dest: Path, meta: dict[str, Any], work: Path, repeat: int, pmr_python: str | None,
            log: Path, pmr_rows: int = 0, baseline: Path | None = None) -> dict[str, Any]:
    """Every case against one server of ``kind`` started on the cached datadir."""
    rows = int(meta["row_changes"])
    results: dict[str, Any] = {"kind": kind, "server": meta["server"], "row_changes": rows,
                               "bytes": meta["bytes"], "cases": {}}
    with _new_server(kind, dest / "datadir") as server:
        files = [server.binlog_dir / name for name, _ in _binlogs(server)]
        first = files[0].name
        env = _env(work, REPO, *([baseline] if baseline is not None else []))
        url = f"mysql://root@localhost/?socket={server.socket}"
        if kind == "mysql":
            from binlog_model.testing.mysql import mysql_tool
            tool, tool_name = mysql_tool("mysqlbinlog"), "mysqlbinlog"
        else:
            tool, tool_name = ["mariadb-binlog"], "mariadb-binlog"
        remote = [*tool, "--read-from-remote-server", f"--socket={server.socket}", "--user=root",
                  "--to-last-log", first]

        def tail_case(checkout: Path = REPO) -> dict[str, Any]:
            run_dir = work / f"tail-{kind}"
            shutil.rmtree(run_dir, ignore_errors=True)
            run = timed([PY, "-m", "binlog_model.cli", "tail", url, "--state", str(run_dir / "state"),
                         "--out", str(run_dir / "out"), "--format", "proto", "--from", "earliest",
                         "--stop-at-end", "--no-progress"], {**env, "PYTHONPATH": str(checkout)}, log=log,
                        cwd=checkout)     # python -m puts the working directory first on the path
            parts = sorted((run_dir / "out").iterdir())
            run["output_bytes"] = sum(p.stat().st_size for p in parts)
            run["sha256"] = _digest(parts)
            shutil.rmtree(run_dir, ignore_errors=True)
            return run

        def events_case() -> dict[str, Any]:
            out = work / f"events-{kind}.pb"
            run = timed([PY, "-m", "binlog_model.cli", "events", *map(str, files), "--format", "proto",
                         "--out", str(out)], env, log=log)
            run["output_bytes"] = out.stat().st_size if out.exists() else 0
            run["sha256"] = _digest([out]) if out.exists() else None
            out.unlink(missing_ok=True)
            return run

        def tool_to_file() -> dict[str, Any]:
            out = work / f"{tool_name}.out"
            with open(out, "wb") as fh:
                run = timed([*remote, "-v"], stdout=fh, log=log)
            run["output_bytes"] = out.stat().st_size
            out.unlink()
            return run

        cases = {
            "tail --format proto": tail_case,
            "events --format proto": events_case,
            f"{tool_name} -v decode-rows": lambda: timed([*remote, "-v", "--base64-output=decode-rows"],
                                                         log=log),
            f"{tool_name} -v": lambda: timed([*remote, "-v"], log=log),
            f"{tool_name} -v > file": tool_to_file,
        }
        if baseline is not None:        # the same command from another checkout (the code before a change)
            cases[f"tail --format proto ({baseline.name})"] = lambda: tail_case(baseline)
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in cases}
        for n in range(repeat):
            for name, case in cases.items():
                run = case()
                runs[name].append(run)
                print(f"  {kind} [{n + 1}/{repeat}] {name}: {run['seconds']:.2f} s, exit {run['exit']}, "
                      f"load {run['load'][0]:.2f}-{run['load'][1]:.2f}", flush=True)
        if pmr_python:
            run = _pmr(pmr_python, str(server.socket), first, kind, work, log, pmr_rows)
            runs["pmr"] = [run]
            print(f"  {kind} pmr: {run['seconds']:.2f} s, {run.get('rows')} rows, exit {run['exit']}",
                  flush=True)
    digests = {r.get("sha256") for name in runs if name.startswith(("tail", "events")) for r in runs[name]}
    results["tail_equals_events"] = len(digests) == 1 and None not in digests
    for name, done in runs.items():
        ordered = sorted(done, key=lambda r: r["seconds"])
        median = ordered[len(ordered) // 2]
        counted = median.get("rows") or rows       # pmr: the rows it read
        results["cases"][name] = {**median, "rows_per_s": round(counted / median["seconds"]),
                                  "repetitions": [r["seconds"] for r in done],
                                  "loads": [r["load"] for r in done]}
    return results


# --- lag ---------------------------------------------------------------------------------------------------

class SteadyWriter(threading.Thread):
    """``rate`` row changes per second for ``seconds``: 500-row INSERT, UPDATE and DELETE statements of a
    narrow table, each its own transaction, at a fixed pace. ``commits``: (wall time the COMMIT returned,
    row changes so far) per statement; each statement is one ``BinlogEvent`` of the tail (500 rows, under
    ``--max-rows``)."""

    def __init__(self, server: Any, rate: int, seconds: float, batch: int = 500) -> None:
        super().__init__(daemon=True)
        self.server, self.rate, self.seconds, self.batch = server, rate, seconds, batch
        self.commits: list[tuple[float, int]] = []
        self.behind = 0.0               # the most the writer fell behind its schedule (s)
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            rnd = random.Random(7)
            conn = self.server.connect("lagbench")
            batch, total, next_id = self.batch, 0, 1
            began = time.monotonic()
            step = 0
            with conn.cursor() as cur:
                while time.monotonic() - began < self.seconds:
                    kind = step % 3
                    if kind == 0:
                        values = ",".join(f"({i},{rnd.randint(1, 10**6)},{rnd.randint(1, 99)},"
                                          f"{rnd.randint(1, 10**7) / 100:.2f},'c{rnd.getrandbits(40):x}')"
                                          for i in range(next_id, next_id + batch))
                        sql = f"INSERT INTO t (id,customer,qty,price,code) VALUES {values}"
                    elif kind == 1:
                        sql = (f"UPDATE t SET qty = qty + 1 "
                               f"WHERE id BETWEEN {next_id} AND {next_id + batch - 1}")
                    else:
                        sql = f"DELETE FROM t WHERE id BETWEEN {next_id} AND {next_id + batch - 1}"
                        next_id += batch
                    total += cur.execute(sql)       # autocommit: the statement is its transaction
                    self.commits.append((time.time(), total))
                    step += 1
                    due = began + step * batch / self.rate
                    now = time.monotonic()
                    if due > now:
                        time.sleep(due - now)
                    else:
                        self.behind = max(self.behind, now - due)
            conn.close()
        except BaseException as err:        # reported by the caller
            self.error = err


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure_lag(kind: str, rate: int, seconds: float, work: Path, log: Path,
                extra: list[str] | None = None) -> dict[str, Any]:
    """The tail's end-to-end lag at a steady ``rate`` row changes/s (see the module docstring)."""
    run_dir = work / f"lag-{kind}"
    shutil.rmtree(run_dir, ignore_errors=True)
    with _new_server(kind) as server:
        server.execute(["CREATE DATABASE lagbench",
                        "CREATE TABLE lagbench.t (id BIGINT NOT NULL PRIMARY KEY, customer INT NOT NULL, "
                        "qty INT NOT NULL, price DECIMAL(10,2) NOT NULL, code VARCHAR(32) NOT NULL)"])
        env = _env(work, REPO)
        cmd = [PY, "-m", "binlog_model.cli", "tail", f"mysql://root@localhost/?socket={server.socket}",
               "--state", str(run_dir / "state"), "--out", str(run_dir / "out"), "--format", "proto",
               "--from", "now", "--stats", "--no-progress", *(extra or [])]
        load = os.getloadavg()[0]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=REPO)
        stamps: list[tuple[float, int, float]] = []     # (arrival, events committed, lag the tail reports)
        lines: list[str] = []

        def read() -> None:
            assert proc.stderr is not None
            for raw in proc.stderr:
                now = time.time()
                text = raw.decode(errors="replace").strip()
                lines.append(text)
                if text.startswith("{"):
                    doc = json.loads(text)
                    stamps.append((now, int(doc["events"]), float(doc["lag_seconds"])))
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            deadline = time.monotonic() + 60
            while (not any("streaming from" in line for line in lines) and time.monotonic() < deadline
                   and proc.poll() is None):
                time.sleep(0.05)
            if not any("streaming from" in line for line in lines):
                raise RuntimeError(f"the tail did not start: {lines[-5:]}")
            writer = SteadyWriter(server, rate, seconds)
            writer.start()
            writer.join()
            if writer.error is not None:
                raise writer.error
            total = writer.commits[-1][1]
            deadline = time.monotonic() + 60
            while (not stamps or stamps[-1][1] < total) and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            reader.join(timeout=5)
        with open(log, "a") as fh:
            fh.write("\n".join(lines) + "\n")
    shutil.rmtree(run_dir, ignore_errors=True)
    lags: list[float] = []
    k = 0
    for n, (committed_at, _) in enumerate(writer.commits, 1):
        while k < len(stamps) and stamps[k][1] < n:        # the first tail commit holding statement n
            k += 1
        if k == len(stamps):
            raise RuntimeError(f"the tail never committed statement {n} ({stamps[-1:]})")
        lags.append(max(0.0, stamps[k][0] - committed_at))
    span = writer.commits[-1][0] - writer.commits[0][0]
    return {"kind": kind, "rate_asked": rate,
            "rate_written": round(writer.commits[-1][1] / span) if span else None,
            "writer_behind_max_s": round(writer.behind, 3), "transactions": len(lags),
            "row_changes": writer.commits[-1][1], "tail_commits": len(stamps), "options": extra or [],
            "p50_s": round(_percentile(lags, 0.5), 3), "p99_s": round(_percentile(lags, 0.99), 3),
            "max_s": round(max(lags), 3), "mean_s": round(statistics.fmean(lags), 3),
            "reported_lag_max_s": max(s[2] for s in stamps),
            "load": [round(load, 2), round(os.getloadavg()[0], 2)]}


# --- report ------------------------------------------------------------------------------------------------

def report(results: dict[str, Any]) -> None:
    for kind, res in results.get("throughput", {}).items():
        cases = res["cases"]
        print(f"\n{kind} {res['server']}: {res['row_changes']:,} row changes, "
              f"{res['bytes'] / 1e6:.0f} MB of binlog; tail output = events output: "
              f"{res['tail_equals_events']}")
        print(f"{'case':<34} {'seconds':>8} {'CPU s':>6} {'rows/s':>10} {'tail ÷ it':>10}  loads")
        tail = cases.get("tail --format proto", {}).get("rows_per_s")
        for name, case in cases.items():
            ratio = f"{tail / case['rows_per_s']:.2f}" if tail and case.get("rows_per_s") else "-"
            loads = " ".join(f"{a:.1f}-{b:.1f}" for a, b in case["loads"])
            cpu = f"{case['cpu_seconds']:.1f}" if "cpu_seconds" in case else "-"
            print(f"{name:<34} {case['seconds']:>8.2f} {cpu:>6} {case['rows_per_s']:>10,} {ratio:>10}  "
                  f"{loads}")
    for lag in results.get("lag", []):
        print(f"\nlag {lag['kind']} {' '.join(lag['options'])}: {lag['rate_written']:,} row changes/s "
              f"written ({lag['row_changes']:,} in {lag['transactions']} transactions), tail commits "
              f"{lag['tail_commits']}: p50 {lag['p50_s']} s, p99 {lag['p99_s']} s, max {lag['max_s']} s "
              f"(writer behind its pace at most {lag['writer_behind_max_s']} s; "
              f"load {lag['load'][0]}-{lag['load'][1]})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path.home() / ".cache" / "binlog-model-bench" / "tail",
                        help="where the generated servers live (cached)")
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated: mysql, mariadb")
    parser.add_argument("--mb", type=int, default=400, help="binlog size to generate per server")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pmr-python", default="/tmp/pmr-venv/bin/python",
                        help="a python with mysql-replication installed ('' to skip pmr)")
    parser.add_argument("--pmr-rows", type=int, default=200_000,
                        help="python-mysql-replication reads the first N row changes only (0: all; it runs "
                             "at ~1/20 of the others' rate)")
    parser.add_argument("--baseline", type=Path,
                        help="also time the tail of this checkout (the code before a change)")
    parser.add_argument("--lag-seconds", type=float, default=20, help="0: no lag measurement")
    parser.add_argument("--lag-rate", type=int, default=20000)
    parser.add_argument("--lag-args", default="", help="more tail arguments for the lag runs (one string)")
    parser.add_argument("--no-throughput", action="store_true")
    parser.add_argument("--generate-only", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    work = Path(tempfile.mkdtemp(prefix="bench-tail-"))
    log = work / "commands.log"
    results: dict[str, Any] = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                               "load_at_start": os.getloadavg(), "throughput": {}, "lag": []}
    pmr = args.pmr_python if args.pmr_python and Path(args.pmr_python).exists() else None
    if args.pmr_python and pmr is None:
        print(f"pmr not measured: {args.pmr_python} does not exist "
              "(python3 -m venv /tmp/pmr-venv && /tmp/pmr-venv/bin/pip install mysql-replication)")
    try:
        for kind in kinds:
            dest = args.dir / f"{kind}-{args.mb}mb"
            meta = generate(kind, dest, args.mb)
            print(f"{kind} {meta['server']}: {meta['bytes'] / 1e6:.0f} MB in {len(meta['binlogs'])} binlogs, "
                  f"{meta['row_changes']:,} row changes", flush=True)
            if args.generate_only or args.no_throughput:
                continue
            results["throughput"][kind] = measure(kind, dest, meta, work, args.repeat, pmr, log,
                                                  args.pmr_rows, args.baseline)
        if not args.generate_only and args.lag_seconds > 0:
            for kind in kinds:
                results["lag"].append(measure_lag(kind, args.lag_rate, args.lag_seconds, work, log,
                                                  args.lag_args.split()))
        report(results)
        if args.json:
            args.json.write_text(json.dumps(results, indent=2))
            print(f"(results: {args.json})")
    finally:
        print(f"(log: {log})")


if __name__ == "__main__":
    main()
