"""CI's fuzz smoke: about 60 s of ``python -m benchmarks.fuzz`` with a fixed seed, over all three targets.

It fails when any input lets a non-``BinlogError`` escape, hangs (the per-input watchdog, or the worker
stops making progress), breaks the memory bound, or decodes differently whole and chunked. The failure
message names the saved finding files; replay one with ``python -m benchmarks.fuzz --replay FILE.bin
--target T --options '...'`` (target and options are in FILE.json). The long campaign is the same command
with ``--inputs 1000000`` (docs/fuzzing.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._paths import REPO

SEED = 16
SECONDS = 55


@pytest.mark.fuzz
def test_fuzz_smoke_fixed_seed(tmp_path: Path) -> None:
    out = tmp_path / "fuzz"
    env = {**os.environ, "PYTHONPATH": str(REPO), "BINLOG_MODEL_FUZZ_TMP": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.fuzz", "--seed", str(SEED), "--seconds", str(SECONDS),
         "--out", str(out), "--mem-every", "10", "--hard-hang", "30"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=SECONDS + 240)
    summary_file = out / "summary.json"
    assert summary_file.is_file(), f"no summary (exit {done.returncode}): {done.stderr[-2000:]}"
    summary = json.loads(summary_file.read_text())
    details = [json.loads(p.read_text()) for p in sorted((out / "findings").glob("*.json"))]
    assert summary["findings"] == {"escape": 0, "hang": 0, "internal": 0, "memory": 0, "mismatch": 0}, (
        json.dumps(details, indent=1)[:6000])
    assert summary["worker_restarts"] == 0
    assert done.returncode == 0
    # It really ran: every target, and enough inputs to mean something even on a loaded machine.
    assert set(summary["by_target"]) == {"decoder", "pipeline", "ddl"}
    assert summary["inputs"] >= 500
    assert summary["traced_inputs"] > 0
