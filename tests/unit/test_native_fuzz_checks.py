"""The compiled-core fuzz harness's own checks can fail: a leaking call, a call whose memory is out of
proportion to its input, and a contract break are each reported as a finding (deliberately bad target
functions, named as such), and a well-behaved call of the real ``json_text`` is not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.fuzz.native import Finding, Runner, Target
from binlog_model.compiled import speedups

_KEPT: list[bytes] = []


def _leaking_call(data: bytes) -> None:  # deliberately bad: keeps a copy of every input forever
    _KEPT.append(bytes(data) * 8)


def _greedy_call(data: bytes) -> bytes:  # deliberately bad: 4 MiB for any input
    return bytes(4 << 20)


def _breaking_run(data: bytes) -> None:  # deliberately bad: the contract check fires
    raise Finding("C renders a document the reference refuses")


def _runner(tmp_path: Path, target: Target) -> Runner:
    return Runner([target], tmp_path, leak_every=0, mem_every=1, lsan=False)


def test_leak_is_a_finding(tmp_path: Path) -> None:
    runner = _runner(tmp_path, Target("leaky", [b"x"], lambda d: None, _leaking_call))
    runner.one(runner.targets[0], b"y" * 1000, "leak")
    assert runner.totals.leaks == 1 and runner.totals.findings == 1
    assert "leak:" in (tmp_path / "findings" / "leaky-leak.txt").read_text()


def test_memory_out_of_proportion_is_a_finding(tmp_path: Path) -> None:
    runner = _runner(tmp_path, Target("greedy", [b"x"], lambda d: None, _greedy_call))
    runner.one(runner.targets[0], b"z" * 100, "mem")
    assert runner.totals.findings == 1 and runner.totals.leaks == 0
    assert "memory: traced peak" in (tmp_path / "findings" / "greedy-mem.txt").read_text()


def test_contract_break_is_a_finding(tmp_path: Path) -> None:
    runner = _runner(tmp_path, Target("broken", [b"x"], _breaking_run, lambda d: None))
    runner.one(runner.targets[0], b"abc", "break")
    assert runner.totals.findings == 1
    assert (tmp_path / "findings" / "broken-break.bin").read_bytes() == b"abc"


@pytest.mark.skipif(speedups is None, reason="compiled core off")
def test_the_real_json_text_passes_the_checks(tmp_path: Path) -> None:
    assert speedups is not None
    docs = [b"", b"\x04\x01", bytes([0x0C, 3]) + b"abc", b"\x02\x01\x00\x07\x00\x04\x02\x00" * 1]
    runner = _runner(tmp_path, Target("json", docs, lambda d: None, speedups.json_text))
    for i, doc in enumerate(docs * 50):
        runner.one(runner.targets[0], doc, f"ok{i}")
    summary = runner.summary()
    assert summary["findings"] == 0 and summary["traced_inputs"] == 200
    json.dumps(summary)
