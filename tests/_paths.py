"""Where the shared test material lives, and the skip that applies when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"


def _shared() -> Path:
    """``$BINLOG_MODEL_SHARED``, else ``../shared`` beside the checkout, else the team machines'
    ``/work/shared`` (so a clone made elsewhere, as CI does, still finds it)."""
    if "BINLOG_MODEL_SHARED" in os.environ:
        return Path(os.environ["BINLOG_MODEL_SHARED"])
    for candidate in (REPO.parent / "shared", Path("/work/shared")):
        if candidate.is_dir():
            return candidate
    return REPO.parent / "shared"


SHARED = _shared()
CORPUS = SHARED / "corpus"
SEEDS = SHARED / "seeds"
SPEC = SEEDS / "000_fea5b78a4e888a0c.txt"


def require(path: Path) -> Path:
    """Return ``path``, or skip the calling test with the reason when it does not exist."""
    if not path.exists():
        pytest.skip(f"shared test material not found: {path} (set BINLOG_MODEL_SHARED)")
    return path


def binlogs_under(root: Path) -> list[str]:
    """Every binlog file (by its magic bytes) under ``root``, as paths relative to it, sorted; [] when
    ``root`` is absent (a test suite that is not installed)."""
    if not root.is_dir():
        return []
    found = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = Path(dirpath) / name
            try:
                with path.open("rb") as fh:
                    if fh.read(4) == b"\xfebin":
                        found.append(str(path.relative_to(root)))
            except OSError:
                continue
    return sorted(found)
