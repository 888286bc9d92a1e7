"""Shrink a finding to a small input that still shows it: ``python -m benchmarks.fuzz.minimize F.json``.

Strategy: greedy delta debugging while the outcome keeps its kind and exception type (line numbers may
move as code changes): first whole events are dropped (the magic and FORMAT_DESCRIPTION stay), then byte
ranges of halving sizes are deleted, then (for DDL) characters. Each try runs the target under the same
watchdog as the fuzzer, with a short limit for hangs. Writes ``F.min.bin`` beside the finding.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from benchmarks.fuzz import binlog as bl
from benchmarks.fuzz import runner


def _key(result: runner.Result) -> str:
    # kind and exception type, not the line: "pipeline:escape:ValueError"
    return ":".join(result.signature.split(":")[:3]) if result.signature else result.kind


def minimize(case: runner.Case, *, hang_limit: float = 1.0, budget: int = 3000) -> bytes:
    limit = hang_limit
    want = _key(runner.run_case(case, limit=limit))
    tries = 0

    def still(data: bytes) -> bool:
        nonlocal tries
        tries += 1
        trial = runner.Case(case.index, case.target, data, case.options)
        return _key(runner.run_case(trial, limit=limit)) == want

    data = case.data
    if case.target != "ddl":
        data = _drop_events(data, still)
    data = _drop_ranges(data, still, lambda: tries < budget)
    return data


def _drop_events(data: bytes, still: Callable[[bytes], bool]) -> bytes:
    log = bl.split(data)
    i = len(log.events) - 1
    while i >= 1:  # keep event 0 (FORMAT_DESCRIPTION)
        trial = bl.Binlog(log.magic, log.events[:i] + log.events[i + 1:], log.tail)
        if still(trial.to_bytes()):
            log = trial
        i -= 1
    if log.tail and still(bl.Binlog(log.magic, log.events, b"").to_bytes()):
        log.tail = b""
    return log.to_bytes()


def _drop_ranges(data: bytes, still: Callable[[bytes], bool], more: Callable[[], bool]) -> bytes:
    size = max(1, len(data) // 2)
    while size >= 1 and more():
        pos = 0
        while pos < len(data) and more():
            trial = data[:pos] + data[pos + size:]
            if still(trial):
                data = trial
            else:
                pos += size
        size //= 2
    return data


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.fuzz.minimize", description=__doc__)
    p.add_argument("finding", type=Path, help="a findings/*.json written by the fuzzer")
    p.add_argument("--budget", type=int, default=3000, help="at most this many target runs")
    args = p.parse_args(argv)
    from benchmarks.fuzz.seeds import load_pools
    from benchmarks.fuzz.targets import cleanup, setup_catalog

    setup_catalog(load_pools(generated_ddl=0).ddl_setup)
    doc = json.loads(args.finding.read_text())
    data = args.finding.with_suffix(".bin").read_bytes()
    case = runner.Case(doc["index"], doc["target"], data, doc["options"])
    try:
        small = minimize(case, budget=args.budget)
    finally:
        cleanup()
    out = args.finding.with_suffix(".min.bin")
    out.write_bytes(small)
    result = runner.run_case(runner.Case(case.index, case.target, small, case.options))
    print(json.dumps({"input_bytes": len(case.data), "minimized_bytes": len(small), "file": str(out),
                      "kind": result.kind, "signature": result.signature}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
