"""The measured cases: ours (resolved, decoder only), python-mysql-replication, mariadb-binlog, mysqlbinlog.

Strategy: every case runs in a child process of its own, so its peak RSS is its own (``os.wait4`` returns
the child's ``ru_maxrss``) and no import or cache of one case warms another. Python cases run this module
as ``python -m benchmarks.peers CASE JSON``: the child times only the decode loop (imports and setup
excluded), pins itself to one core, and prints one JSON line with its counts. ``mariadb-binlog`` and MySQL's
``mysqlbinlog`` are timed from the parent around the whole process (no separate setup worth excluding).

A case result is a dict: ``case``, ``seconds``, ``rows`` (row changes: an UPDATE's before/after pair counts
once, as every tool reports it), ``events``, ``bytes`` (binlog bytes read), ``max_rss_mb``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["CASES", "median_result", "run_binlog_tool", "run_case", "run_mariadb_binlog", "run_mysqlbinlog"]


# --- children ---------------------------------------------------------------------------------------------

def _pin_one_core() -> None:
    # "On one core": the decode loop is single-threaded anyway; pinning keeps the scheduler honest.
    if hasattr(os, "sched_setaffinity"):
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpus[-1]})


def _ours_resolved(args: dict[str, Any]) -> dict[str, Any]:
    from binlog_model.io.snapshots import load_snapshot
    from binlog_model.runs.pipeline import iter_binlog_events

    history = load_snapshot(args["snapshot"])
    began = time.perf_counter()
    events = rows = 0
    for event in iter_binlog_events(args["files"], snapshot=history, image=args.get("image", "changed"),
                                    max_rows=args.get("max_rows", 1000)):
        events += 1
        rows += len(event.rows)
    return {"seconds": time.perf_counter() - began, "events": events, "rows": rows}


def _ours_proto(args: dict[str, Any]) -> dict[str, Any]:
    # Fully resolved events written as length-delimited protobuf (``events --format proto``): the events'
    # bytes (a serialized assembler: with the compiled core, rows are never parsed into messages).
    from binlog_model.resolve.assembler import StatementAssembler
    from binlog_model.resolve.options import ResolveOptions
    from binlog_model.runs.pipeline import iter_binlog_events, load_snapshot

    history = load_snapshot(args["snapshot"])
    assembler = StatementAssembler(history, ResolveOptions(image=args.get("image", "changed"),
                                                           max_rows=args.get("max_rows", 1000)),
                                   serialized=True)
    began = time.perf_counter()
    events = 0
    with open(os.devnull, "wb") as out:
        write = out.write
        for body in iter_binlog_events(args["files"], assembler=assembler):
            write(_varint(len(body)))
            write(body)   # type: ignore[arg-type]  # a serialized assembler yields bytes
            events += 1
    return {"seconds": time.perf_counter() - began, "events": events, "rows": assembler.stats.row_changes}


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _ours_decoder(args: dict[str, Any]) -> dict[str, Any]:
    from binlog_model.io.files import iter_events
    from binlog_model.wire.rows import RowsEvent

    began = time.perf_counter()
    events = rows = 0
    for event in iter_events(args["files"], sort=args.get("sort", True)):
        events += 1
        if isinstance(event, RowsEvent):
            rows += len(event.rows)
    return {"seconds": time.perf_counter() - began, "events": events, "rows": rows}


def _pmr(args: dict[str, Any]) -> dict[str, Any]:
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

    stream = BinLogStreamReader(
        connection_settings={"unix_socket": args["socket"], "user": "root", "passwd": ""},
        server_id=4242, blocking=False, resume_stream=True, log_file=args["log_file"], log_pos=4,
        only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent],
        is_mariadb=args.get("is_mariadb", True),
        enable_logging=False)
    began = time.perf_counter()
    events = rows = values = 0
    try:
        for event in stream:
            events += 1
            for row in event.rows:
                rows += 1
                # Materialise (touch) every value of every image.
                for image in ("values", "before_values", "after_values"):
                    vals = row.get(image)
                    if vals is not None:
                        for _ in vals.values():
                            values += 1
    finally:
        stream.close()
    return {"seconds": time.perf_counter() - began, "events": events, "rows": rows, "values": values}


def _spark(args: dict[str, Any]) -> dict[str, Any]:
    # binlog_model.spark's public entry point: the mysql-binlog source, every row materialised.
    from binlog_model.spark.session import local_session

    spark = local_session(args["master"], app="binlog-model-bench")
    try:
        reader = (spark.read.format("mysql-binlog").option("paths", json.dumps(args["files"]))
                  .option("snapshot", args["snapshot"]).option("sliceBytes", str(args["slice_bytes"])))
        # The Python data source cannot prune columns, so count() materialises every row, as a noop
        # write does, and gives the count in the same pass.
        began = time.perf_counter()
        rows = reader.load().where("operation != 'SCHEMA'").count()
        seconds = time.perf_counter() - began
    finally:
        spark.stop()
    return {"seconds": seconds, "events": None, "rows": rows}


CASES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "ours": _ours_resolved,
    "ours-proto": _ours_proto,
    "ours-decoder": _ours_decoder,
    "pmr": _pmr,
    "spark": _spark,
}


def _vm_hwm_mb(pid: int | str = "self") -> float | None:
    # VmHWM is the peak RSS of the process image *after* exec; ru_maxrss also counts the pre-exec copy
    # of the (larger) parent, which hides small children.
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def _child_main(argv: Sequence[str]) -> None:
    case, payload = argv[0], json.loads(argv[1])
    if case != "spark":
        _pin_one_core()
    out = CASES[case](payload)
    out["vm_hwm_mb"] = _vm_hwm_mb()
    print(json.dumps(out), flush=True)


# --- parent -----------------------------------------------------------------------------------------------

def _wait(proc: subprocess.Popen[bytes]) -> tuple[int, float]:
    # wait4 gives this child's own rusage (RUSAGE_CHILDREN would mix all children so far).
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_maxrss / 1024.0


def run_case(case: str, files: Sequence[Path], *, nbytes: int, label: str | None = None,
             **args: Any) -> dict[str, Any]:
    """Run one Python case in a child process; returns its result with ``max_rss_mb`` and ``bytes``.

    The Spark case's RSS is the Python driver's only (the JVM is a process of its own)."""
    payload = {"files": [str(f) for f in files], **args}
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.peers", case, json.dumps(payload)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read()
    err = proc.stderr.read()
    code, rss = _wait(proc)
    if code != 0:
        raise RuntimeError(f"benchmark case {case} failed with exit code {code}:\n{err.decode()[-3000:]}")
    result = json.loads(out.decode().strip().splitlines()[-1])
    hwm = result.pop("vm_hwm_mb", None)
    result.update(case=label or case, max_rss_mb=round(hwm if hwm is not None else rss, 1), bytes=nbytes)
    return result


def run_mariadb_binlog(files: Sequence[Path], *, nbytes: int, verbose: int = 1,
                       rows: int = 0) -> dict[str, Any]:
    """``mariadb-binlog --verbose --base64-output=decode-rows FILES > /dev/null`` (``-vv`` with verbose=2)."""
    return run_binlog_tool(["mariadb-binlog"], "mariadb-binlog", files, nbytes=nbytes, verbose=verbose,
                           rows=rows)


def run_mysqlbinlog(files: Sequence[Path], *, nbytes: int, verbose: int = 1, rows: int = 0) -> dict[str, Any]:
    """MySQL's own ``mysqlbinlog --verbose --base64-output=decode-rows FILES > /dev/null`` from the same
    Debian sid packages as the MySQL 9 server (run through sid's loader; ``-vv`` with verbose=2)."""
    from binlog_model.testing.mysql import mysql_tool

    return run_binlog_tool(mysql_tool("mysqlbinlog"), "mysqlbinlog", files, nbytes=nbytes, verbose=verbose,
                           rows=rows)


def run_binlog_tool(argv: Sequence[str], name: str, files: Sequence[Path], *, nbytes: int, verbose: int = 1,
                    rows: int = 0) -> dict[str, Any]:
    """A server's binlog printer (``argv`` runs it) with ``--verbose`` x ``verbose`` to /dev/null, timed
    around the whole process; the case is called ``name`` (``name -vv`` with verbose=2)."""
    cmd = [*argv, *["--verbose"] * verbose, "--base64-output=decode-rows", *map(str, files)]
    began = time.perf_counter()
    with open(os.devnull, "wb") as devnull:
        proc = subprocess.Popen(cmd, stdout=devnull, stderr=subprocess.PIPE)
        # Poll VmHWM (monotone) until the process exits; the last reading is its peak within ~2 ms.
        peak = 0.0
        while proc.poll() is None:
            hwm = _vm_hwm_mb(proc.pid)
            if hwm is not None:
                peak = max(peak, hwm)
            time.sleep(0.002)
        code = proc.returncode
        assert proc.stderr is not None
        err = proc.stderr.read()
        rss = peak
    seconds = time.perf_counter() - began
    if code != 0:
        raise RuntimeError(f"{name} failed with exit code {code}: {err.decode(errors='replace')[-2000:]}")
    return {"case": name + (" -vv" if verbose > 1 else ""), "seconds": seconds, "rows": rows,
            "events": None, "bytes": nbytes, "max_rss_mb": round(rss, 1)}


def median_result(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The repetition with the median time, plus every repetition's seconds and the rates."""
    ordered = sorted(results, key=lambda r: r["seconds"])
    mid = dict(ordered[len(ordered) // 2])
    mid["repetitions"] = [round(r["seconds"], 3) for r in results]
    mid["max_rss_mb"] = max(r["max_rss_mb"] for r in results)
    seconds = mid["seconds"]
    mid["rows_per_s"] = mid["rows"] / seconds if seconds and mid["rows"] else None
    mid["mb_per_s"] = mid["bytes"] / 1e6 / seconds if seconds else None
    return mid


if __name__ == "__main__":
    _child_main(sys.argv[1:])
