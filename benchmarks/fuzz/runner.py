"""One fuzz worker: make input ``i`` of a seed, run its target under a watchdog, judge the outcome.

Strategy: input ``i`` is a pure function of (seed, i, the seed pools), so any finding is repeated from its
index alone. Each input runs under ``setitimer`` with a limit proportional to its size (a slow input is
re-run once with four times the limit before it counts as a hang, since the CPU is shared), so a Python
loop that makes no progress is interrupted and reported instead of wedging the run. A hang inside C code
would not be interrupted: the supervisor (``__main__``) watches the worker's progress and restarts it.
Memory: the process runs under an address-space limit (a runaway allocation becomes ``MemoryError``, a
finding), every ``mem_every``-th input runs under ``tracemalloc`` and its peak is held against
``MEM_FACTOR * size + MEM_CONSTANT``, and a jump of the process peak RSS during one input is a finding.

Outcomes: ``ok``, ``error`` (a ``BinlogError``: the contract), or a finding: ``escape`` (any other
exception), ``hang``, ``memory``, ``mismatch`` (whole vs chunked decoding differ), ``internal`` (the
decoder's catch-all wrapped a non-BinlogError: a parser bug, though the contract held).
"""

from __future__ import annotations

import hashlib
import json
import random
import resource
import signal
import time
import traceback
import tracemalloc
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.fuzz import mutate
from benchmarks.fuzz.seeds import Pools
from benchmarks.fuzz.targets import TARGETS, DifferentialMismatch
from binlog_model.errors import BinlogError

MEM_FACTOR = 64
MEM_CONSTANT = 32 << 20
RSS_JUMP = 256 << 20
# Target weights per 20 inputs: decoder, pipeline, ddl.
_SCHEDULE = ("decoder",) * 9 + ("pipeline",) * 7 + ("ddl",) * 4


def time_limit(size: int) -> float:
    """Seconds allowed for an input of ``size`` bytes (at least 20 KB/s, plus start-up slack)."""
    return 2.0 + size / 20_000


class Timeout(BaseException):
    """The watchdog fired (a BaseException, so a library ``except Exception`` cannot swallow it)."""


def _alarm(signum: int, frame: Any) -> None:
    raise Timeout()


@dataclass
class Case:
    index: int
    target: str
    data: bytes
    options: dict[str, Any]
    origin: str = ""


def make_case(seed: int, index: int, pools: Pools, targets: tuple[str, ...]) -> Case:
    rng = random.Random(f"{seed}:{index}")
    schedule = [t for t in _SCHEDULE if t in targets] or list(targets)
    target = schedule[index % len(schedule)]
    if target == "ddl":
        base = rng.choice(pools.ddl)
        data = mutate.mutate_ddl_bytes(rng, base, pools.ddl) if rng.random() < 0.85 else base
        options = {"lenient": rng.random() < 0.5, "db": rng.choice(("db", "db", "other", None))}
        return Case(index, target, data, options, "ddl")
    k = rng.randrange(len(pools.binlogs))
    base = pools.binlogs[k]
    data = mutate.mutate_binlog(rng, base, pools.binlogs) if rng.random() < 0.95 else base
    options: dict[str, Any] = {"verify_checksum": rng.random() < 0.3}
    if target == "decoder" and rng.random() < 0.12:
        return Case(index, target, mutate.json_document(rng), {"json": True}, "json")
    if target == "decoder":
        options["chunks"] = [rng.choice((1, 2, 3, 7, 19, 64, 500, 4096)) for _ in range(rng.randint(1, 4))]
    else:
        options.update(lenient=rng.random() < 0.5,
                       image=rng.choice(("changed", "changed_with_old", "full", "after")),
                       max_rows=rng.choice((1, 3, 1000)), statement_text=rng.choice(("all", "first", "none")))
        if rng.random() < 0.2:
            options["always_include"] = [rng.choice(("test", "db", "a")) + "." + rng.choice(("t", "t1", "x"))
                                         + "." + rng.choice(("id", "a", "nope"))]
    return Case(index, target, data, options, pools.binlog_names[k])


@dataclass
class Result:
    kind: str              # ok, error, escape, hang, memory, mismatch, internal
    detail: str = ""
    signature: str = ""
    seconds: float = 0.0
    peak: int | None = None


def _where(tb: Any) -> str:
    """The innermost frame in the library (binlog_model, schema_tracker), else the innermost."""
    frames = traceback.extract_tb(tb)
    ours = [f for f in frames if "/binlog_model/" in f.filename or "/schema_tracker/" in f.filename]
    frame = (ours or frames or [None])[-1]
    if frame is None:
        return "?"
    return f"{frame.filename.rsplit('/', 2)[-2]}/{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}"


def run_case(case: Case, *, trace_memory: bool = False, limit: float | None = None) -> Result:
    """Run one case under the watchdog; classify what came out."""
    limit = time_limit(len(case.data)) if limit is None else limit
    target = TARGETS[case.target]
    old = signal.signal(signal.SIGALRM, _alarm)
    if trace_memory:
        tracemalloc.start()
    start = time.perf_counter()
    try:
        signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            target(case.data, case.options)
            result = Result("ok")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except Timeout:
        result = Result("hang", f"no result after {limit:.1f} s", f"{case.target}:hang")
    except BinlogError as err:
        cause = err.__cause__
        if "internal decoder failure" in str(err) and cause is not None:
            result = Result("internal", f"{type(cause).__name__}: {cause}",
                            f"{case.target}:internal:{type(cause).__name__}:{_where(cause.__traceback__)}")
        else:
            result = Result("error", type(err).__name__)
    except MemoryError as err:
        result = Result("memory", f"MemoryError {err}", f"{case.target}:memory:{_where(err.__traceback__)}")
    except DifferentialMismatch as err:
        result = Result("mismatch", str(err), f"{case.target}:mismatch")
    except Exception as err:
        result = Result("escape", f"{type(err).__name__}: {err}"[:500],
                        f"{case.target}:escape:{type(err).__name__}:{_where(err.__traceback__)}")
        result.detail += "\n" + "".join(traceback.format_exception(err))[-3000:]
    finally:
        signal.signal(signal.SIGALRM, old)
    result.seconds = time.perf_counter() - start
    if trace_memory:
        result.peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        if result.kind in ("ok", "error") and result.peak > MEM_FACTOR * len(case.data) + MEM_CONSTANT:
            detail = f"tracemalloc peak {result.peak} bytes for {len(case.data)} input bytes"
            result = Result("memory", detail, f"{case.target}:memory", result.seconds, result.peak)
    return result


FINDINGS = ("escape", "hang", "memory", "mismatch", "internal")


@dataclass
class Stats:
    inputs: int = 0
    by_target: Counter[str] = field(default_factory=Counter)
    by_kind: Counter[str] = field(default_factory=Counter)
    signatures: Counter[str] = field(default_factory=Counter)
    bytes_in: int = 0
    max_input: int = 0
    traced: int = 0
    max_peak: int = 0
    max_peak_input: int = 0
    peak_by_size: dict[str, int] = field(default_factory=dict)
    slowest: float = 0.0
    slowest_size: int = 0

    def add(self, case: Case, result: Result) -> None:
        self.inputs += 1
        size = len(case.data)
        self.by_target[case.target] += 1
        self.by_kind[result.kind] += 1
        self.bytes_in += size
        self.max_input = max(self.max_input, size)
        if result.signature:
            self.signatures[result.signature] += 1
        if result.seconds > self.slowest:
            self.slowest, self.slowest_size = result.seconds, size
        if result.peak is not None:
            self.traced += 1
            bucket = _bucket(size)
            self.peak_by_size[bucket] = max(self.peak_by_size.get(bucket, 0), result.peak)
            if result.peak > self.max_peak:
                self.max_peak, self.max_peak_input = result.peak, size

    def as_dict(self) -> dict[str, Any]:
        return {"inputs": self.inputs, "by_target": dict(self.by_target), "by_kind": dict(self.by_kind),
                "findings": {k: self.by_kind.get(k, 0) for k in FINDINGS},
                "signatures": dict(self.signatures), "bytes_in": self.bytes_in, "max_input": self.max_input,
                "traced_inputs": self.traced, "max_traced_peak": self.max_peak,
                "max_traced_peak_input_bytes": self.max_peak_input,
                "traced_peak_by_input_size": self.peak_by_size,
                "slowest_seconds": round(self.slowest, 3), "slowest_input_bytes": self.slowest_size,
                "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def _bucket(size: int) -> str:
    for limit, name in ((1 << 10, "<1KiB"), (4 << 10, "<4KiB"), (16 << 10, "<16KiB"), (64 << 10, "<64KiB"),
                        (256 << 10, "<256KiB")):
        if size < limit:
            return name
    return ">=256KiB"


def save_finding(out: Path, seed: int, case: Case, result: Result, first_only: bool = True) -> Path | None:
    """Write the input and what happened, once per signature."""
    key = hashlib.sha1(result.signature.encode()).hexdigest()[:12]
    base = out / "findings" / f"{case.target}-{result.kind}-{key}"
    if first_only and base.with_suffix(".json").exists():
        return None
    base.parent.mkdir(parents=True, exist_ok=True)
    base.with_suffix(".bin").write_bytes(case.data)
    base.with_suffix(".json").write_text(json.dumps({
        "seed": seed, "index": case.index, "target": case.target, "options": case.options,
        "kind": result.kind, "signature": result.signature, "detail": result.detail,
        "input_bytes": len(case.data), "origin": case.origin}, indent=1))
    return base


def judge(case: Case, trace_memory: bool) -> Result:
    """``run_case`` plus the second chance for a slow input and the RSS-jump check."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    result = run_case(case, trace_memory=trace_memory)
    if result.kind == "hang":
        retry = run_case(case, limit=time_limit(len(case.data)) * 4)
        if retry.kind != "hang":
            retry.detail = f"slow ({result.detail}), then {retry.kind} {retry.detail}"
            result = retry
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    if after - before > RSS_JUMP + MEM_FACTOR * len(case.data) and result.kind in ("ok", "error"):
        result = Result("memory", f"peak RSS rose by {(after - before) >> 20} MiB during one input of "
                        f"{len(case.data)} bytes", f"{case.target}:memory:rss", result.seconds)
    return result
