"""``python -m benchmarks.fuzz``: fuzz the decoder, the pipeline and the schema tracker.

    python -m benchmarks.fuzz --seed 16 --inputs 1000000 --log fuzz.log       # the long campaign
    python -m benchmarks.fuzz --seed 16 --seconds 60                          # the CI smoke's run
    python -m benchmarks.fuzz --target ddl --seed 3 --inputs 5000             # one target
    python -m benchmarks.fuzz --replay findings/x.bin --target pipeline --options '{"lenient": true}'

Strategy: a supervisor process starts one worker process (``--worker``) that runs inputs ``start..stop``
of the seed and writes the index it is on into a small shared file. When the worker dies (a crash, the
address-space limit, a hang in C code that the per-input alarm cannot break) the supervisor records that
input as a finding (the restarted worker regenerates and saves it) and starts a new worker after it.
Findings go to ``OUT/findings/`` (input bytes + JSON: seed, index, target, options, traceback), once per
signature; the final summary (inputs/s, outcomes, findings, memory peaks) goes to ``OUT/summary.json``
and the last line of stdout. Exit status 1 when there was any finding.
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import resource
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

_INDEX = struct.Struct("<q")
ADDRESS_SPACE = 4 << 30


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.fuzz", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=16)
    p.add_argument("--inputs", type=int, default=0, help="stop after this many inputs (0: no limit)")
    p.add_argument("--seconds", type=float, default=0, help="stop after this long (0: no limit)")
    p.add_argument("--target", default="decoder,pipeline,ddl", help="comma list of decoder, pipeline, ddl")
    p.add_argument("--out", type=Path, default=Path("/tmp/binlog-model-fuzz"))
    p.add_argument("--log", type=Path, help="append progress lines here too")
    p.add_argument("--mem-every", type=int, default=50, help="trace memory of every n-th input")
    p.add_argument("--start", type=int, default=0, help="first input index")
    p.add_argument("--hard-hang", type=float, default=120.0,
                   help="seconds without progress before the supervisor kills the worker")
    p.add_argument("--replay", type=Path, help="run one saved input (with --target and --options)")
    p.add_argument("--options", default="{}", help="JSON options for --replay")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--crashed", type=int, default=-1, help=argparse.SUPPRESS)
    p.add_argument("--crash-kind", default="crash", help=argparse.SUPPRESS)
    p.add_argument("--deadline", type=float, default=0, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def _targets(args: argparse.Namespace) -> tuple[str, ...]:
    targets = tuple(t.strip() for t in args.target.split(",") if t.strip())
    bad = [t for t in targets if t not in ("decoder", "pipeline", "ddl")]
    if bad or not targets:
        raise SystemExit(f"unknown target(s) {bad}: use decoder, pipeline, ddl")
    return targets


def _emit(line: dict[str, Any], log: Path | None) -> None:
    text = json.dumps(line, sort_keys=True)
    print(text, flush=True)
    if log is not None:
        with log.open("a") as fh:
            fh.write(text + "\n")


# --- worker ----------------------------------------------------------------------------------------


def _worker(args: argparse.Namespace) -> int:
    from benchmarks.fuzz import runner
    from benchmarks.fuzz.seeds import load_pools
    from benchmarks.fuzz.targets import cleanup, setup_catalog

    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or hard > ADDRESS_SPACE:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, hard))
    targets = _targets(args)
    pools = load_pools()
    setup_catalog(pools.ddl_setup)
    out: Path = args.out
    stats = runner.Stats()
    if args.crashed >= 0:
        case = runner.make_case(args.seed, args.crashed, pools, targets)
        kind = args.crash_kind
        what = "hung" if kind == "hang" else "died"
        result = runner.Result(kind, f"the worker process {what} on this input",
                               f"{case.target}:{kind}:process")
        runner.save_finding(out, args.seed, case, result)
        stats.add(case, result)
    shared = mmap.mmap(os.open(out / "worker.index", os.O_RDWR), _INDEX.size)
    index = args.start
    stop = args.start + args.inputs if args.inputs else 1 << 62
    started = last = time.monotonic()
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))  # finish this input, then summarize
    while index < stop and (not args.deadline or time.time() < args.deadline) and not stopping:
        shared[:] = _INDEX.pack(index)
        case = runner.make_case(args.seed, index, pools, targets)
        result = runner.judge(case, trace_memory=bool(args.mem_every) and index % args.mem_every == 0)
        stats.add(case, result)
        if result.kind in runner.FINDINGS:
            saved = runner.save_finding(out, args.seed, case, result)
            if saved is not None:
                _emit({"finding": result.signature, "index": index, "file": str(saved)}, None)
        index += 1
        now = time.monotonic()
        if now - last >= 10:
            last = now
            _emit({"progress": index, "worker_seconds": round(now - started, 1), **stats.as_dict()}, None)
    shared[:] = _INDEX.pack(index)
    cleanup()
    _emit({"done": index, "worker_seconds": round(time.monotonic() - started, 1), **stats.as_dict()}, None)
    return 0


# --- supervisor ------------------------------------------------------------------------------------


def _merge(total: dict[str, Any], part: dict[str, Any]) -> None:
    for key in ("inputs", "bytes_in", "traced_inputs"):
        total[key] = total.get(key, 0) + part.get(key, 0)
    for key in ("max_input", "max_traced_peak", "slowest_seconds", "max_rss_mb"):
        total[key] = max(total.get(key, 0), part.get(key, 0))
    for key in ("by_target", "by_kind", "findings", "signatures", "traced_peak_by_input_size"):
        merged = total.setdefault(key, {})
        for k, v in part.get(key, {}).items():
            peak = key == "traced_peak_by_input_size"
            merged[k] = max(merged.get(k, 0), v) if peak else merged.get(k, 0) + v
    if part.get("max_traced_peak", 0) >= total.get("max_traced_peak", 0):
        total["max_traced_peak_input_bytes"] = part.get("max_traced_peak_input_bytes", 0)


def _supervise(args: argparse.Namespace) -> int:
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    index_file = out / "worker.index"
    index_file.write_bytes(_INDEX.pack(-1))
    started = time.time()
    deadline = started + args.seconds if args.seconds else 0
    stop = args.start + args.inputs if args.inputs else 0
    total: dict[str, Any] = {}
    start, crashed, crash_kind = args.start, -1, "crash"
    restarts = 0
    _emit({"start": args.start, "seed": args.seed, "targets": args.target, "command": " ".join(sys.argv)},
          args.log)
    while True:
        cmd = [sys.executable, "-m", "benchmarks.fuzz", "--worker", "--seed", str(args.seed), "--target",
               args.target, "--out", str(out), "--mem-every", str(args.mem_every), "--start", str(start),
               "--crashed", str(crashed), "--crash-kind", crash_kind]
        if stop:
            cmd += ["--inputs", str(stop - start)]
        if deadline:
            cmd += ["--deadline", str(deadline)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, bufsize=1)
        # SIGTERM or Ctrl-C to the supervisor: the worker finishes its input and reports, then the summary.
        signal.signal(signal.SIGTERM, lambda *_, p=proc: p.terminate())
        signal.signal(signal.SIGINT, lambda *_, p=proc: p.terminate())
        assert proc.stdout is not None
        os.set_blocking(proc.stdout.fileno(), False)
        last_index, last_change, final, lost_kind = -2, time.monotonic(), None, "crash"
        while True:
            line = proc.stdout.readline()
            if line:
                doc = json.loads(line)
                if "done" in doc:
                    final = doc
                else:
                    if args.log is not None:
                        prior = dict(total)
                        if "progress" in doc:
                            _merge(prior, doc)
                            doc = {"progress": doc["progress"], "elapsed": round(time.time() - started, 1),
                                   "inputs": prior.get("inputs", 0), "findings": prior.get("findings", {}),
                                   "by_kind": prior.get("by_kind", {}), "max_input": prior.get("max_input"),
                                   "max_traced_peak": prior.get("max_traced_peak"),
                                   "max_rss_mb": prior.get("max_rss_mb")}
                        _emit(doc, args.log)
                continue
            if proc.poll() is not None:
                rest = proc.stdout.read() or ""
                for extra in rest.splitlines():
                    doc = json.loads(extra)
                    if "done" in doc:
                        final = doc
                break
            current = _INDEX.unpack(index_file.read_bytes()[:_INDEX.size])[0]
            if current != last_index:
                last_index, last_change = current, time.monotonic()
            elif time.monotonic() - last_change > args.hard_hang:
                proc.kill()
                proc.wait()
                lost_kind = "hang"
                break
            time.sleep(0.2)
        if final is not None:
            _merge(total, final)
            break
        # The worker died or hung on input ``current``: record it and go on after it.
        current = _INDEX.unpack(index_file.read_bytes()[:_INDEX.size])[0]
        restarts += 1
        crash_kind = lost_kind
        _emit({"worker_lost": current, "kind": crash_kind, "returncode": proc.returncode}, args.log)
        total["inputs"] = total.get("inputs", 0) + max(current - start, 0)
        crashed, start = current, current + 1
        if (stop and start >= stop) or (deadline and time.time() >= deadline):
            break
    elapsed = time.time() - started
    total.update(seed=args.seed, targets=args.target, first_index=args.start,
                 elapsed_seconds=round(elapsed, 1),
                 inputs_per_second=round(total.get("inputs", 0) / max(elapsed, 1e-9), 1),
                 worker_restarts=restarts, command=" ".join(["python -m benchmarks.fuzz", *sys.argv[1:]]))
    (out / "summary.json").write_text(json.dumps(total, indent=1, sort_keys=True))
    _emit({"summary": total}, args.log)
    return 1 if any(total.get("findings", {}).values()) else 0


def _replay(args: argparse.Namespace) -> int:
    from benchmarks.fuzz import runner
    from benchmarks.fuzz.seeds import load_pools
    from benchmarks.fuzz.targets import cleanup, setup_catalog

    setup_catalog(load_pools(generated_ddl=0).ddl_setup)
    case = runner.Case(-1, _targets(args)[0], args.replay.read_bytes(), json.loads(args.options))
    try:
        result = runner.run_case(case, trace_memory=True)
    finally:
        cleanup()
    print(json.dumps({"kind": result.kind, "signature": result.signature, "detail": result.detail,
                      "seconds": round(result.seconds, 3), "peak": result.peak}, indent=1))
    return 0 if result.kind in ("ok", "error") else 1


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    if args.replay:
        return _replay(args)
    if args.worker:
        return _worker(args)
    return _supervise(args)


if __name__ == "__main__":
    sys.exit(main())
