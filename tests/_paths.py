"""Where the shared test material lives, and the skip that applies when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("BINLOG_MODEL_SHARED", REPO.parent / "shared"))
CORPUS = SHARED / "corpus"
SEEDS = SHARED / "seeds"
SPEC = SEEDS / "000_fea5b78a4e888a0c.txt"


def require(path: Path) -> Path:
    """Return ``path``, or skip the calling test with the reason when it does not exist."""
    if not path.exists():
        pytest.skip(f"shared test material not found: {path} (set BINLOG_MODEL_SHARED)")
    return path
