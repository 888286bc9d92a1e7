"""CI's fuzz smoke of the compiled core: its entry points under AddressSanitizer + UBSan, about 60 s.

``benchmarks.fuzz.sanitized`` builds the extension with ``-fsanitize=address,undefined`` beside the normal
build (gcc here, so it runs on any CI machine), then ``benchmarks.fuzz.native all`` runs the seeded
mutation loop over ``build_rows`` (captured plans and row images of the seed binlogs), the raw row images
(``row_images`` and ``typed_columns``, differential against the built rows), ``json_text``
and ``arrow_columns`` (both differential against the Python reference) for a fixed time with the ASan
runtime preloaded. It fails on a sanitizer report (the process aborts), a contract break, a leak, or a
memory peak beyond the bound. The long run (1,000,000 inputs) is the documented command in
docs/fuzzing.md.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests._paths import REPO

SECONDS = 20


@pytest.mark.fuzz
def test_compiled_core_fuzz_smoke_under_asan(tmp_path: Path) -> None:
    if shutil.which("gcc") is None:
        pytest.skip("no gcc: the sanitized build needs it")
    build = tmp_path / "asan"
    done = subprocess.run([sys.executable, "-m", "benchmarks.fuzz.sanitized", "build", "--cc", "gcc", "--out",
                           str(build)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = tmp_path / "fuzz"
    run = subprocess.run([sys.executable, "-m", "benchmarks.fuzz.sanitized", "run", "--out", str(build), "--",
                          "python", "-m", "benchmarks.fuzz.native", "all", "--seconds", str(SECONDS),
                          "--mem-every", "10", "--out", str(out)],
                         cwd=REPO, capture_output=True, text=True, timeout=SECONDS + 240)
    reports = [line for line in run.stderr.splitlines()
               if "Sanitizer" in line or "runtime error" in line or "ERROR" in line]
    assert not reports, run.stderr[-6000:]
    assert run.returncode == 0, (run.stdout[-3000:], run.stderr[-3000:])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["sanitized"] is True and summary["toolchain"] == "gcc"
    assert summary["module"].startswith(str(build))
    assert summary["findings"] == 0 and summary["leaks"] == 0
    # It really ran, on both entry points, and the checks did work.
    assert set(summary["by_target"]) == {"rows", "raw", "json", "columns", "typed", "frames", "utf8",
                                          "jsonl", "textrows", "splice", "statements", "replica"}
    assert summary["inputs"] >= 3000
    assert summary["traced_inputs"] > 100
    stats = summary["target_stats"]
    assert stats["rows"]["rows_built"] > 0 and stats["rows"]["handed_back"] > 0
    assert stats["json"]["rendered"] > 0 and stats["json"]["handed_back"] > 0
    assert stats["columns"]["compared"] > 0 and stats["columns"]["handed_back"] > 0
    assert stats["utf8"]["valid"] > 0 and stats["utf8"]["invalid"] > 0
    assert stats["jsonl"]["written"] > 0 and stats["jsonl"]["handed_back"] > 0
    assert stats["raw"]["same"] > 0 and stats["raw"]["both_refused"] > 0
    assert stats["textrows"]["rows"] > 0 and stats["textrows"]["errors"] > 0
    assert stats["splice"]["joined"] > 0 and stats["splice"]["handed_back"] > 0
    assert stats["statements"]["runs"] > 0 and stats["statements"]["handed_back"] > 0
    assert stats["statements"]["pipelines"] > 0 and stats["statements"]["transactions"] > 0
    assert stats["replica"]["compared"] > 0 and stats["replica"]["handed_back"] > 0
