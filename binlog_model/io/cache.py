"""The user cache folder: fetched servers and test data (``testing``), the driver JVM's class archive."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_root"]


def cache_root() -> Path:
    """``$BINLOG_MODEL_CACHE``, else ``$XDG_CACHE_HOME/binlog-model``, else ``~/.cache/binlog-model``."""
    override = os.environ.get("BINLOG_MODEL_CACHE")
    if override:
        return Path(override).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "binlog-model"
