"""The scenarios and golden fixtures shipped with binlog-model: where they are, installed or in a checkout.

Strategy: the repository keeps them in ``fixtures/`` (``scenarios/*.sql``, ``scenarios/<server>/*.sql``
and ``golden/<server>/<scenario>/``), the place people look. ``binlog_model/fixtures`` is a symlink to that
folder, so a wheel ships the same files as package data of ``binlog_model`` (no top-level ``fixtures``
package, a name PyPI already has), found here with ``importlib.resources``. Paths are resolved, so in a
checkout they are the repository's ``fixtures/`` paths. Where the symlink did not survive (a checkout
without symlinks), the repository folder next to the package is used.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["FIXTURES_DIR", "GOLDEN_DIR", "SCENARIO_DIR", "golden_dir"]


def _fixtures_dir() -> Path:
    packaged = resources.files("binlog_model") / "fixtures"
    if isinstance(packaged, Path) and packaged.is_dir():
        return packaged.resolve()
    return Path(__file__).resolve().parents[2] / "fixtures"      # a source checkout without the symlink


FIXTURES_DIR = _fixtures_dir()
SCENARIO_DIR = FIXTURES_DIR / "scenarios"
GOLDEN_DIR = FIXTURES_DIR / "golden"


def golden_dir(server: str) -> Path:
    """The golden fixtures of one server (``mariadb`` or ``mysql``): one directory per scenario. (A
    scenario's dialect variant for a server: ``scenario.scenario_for_dialect``.)"""
    return GOLDEN_DIR / server
