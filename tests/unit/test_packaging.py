"""Packaging: the scenarios and golden fixtures ship as package data of ``binlog_model``; there is no
top-level ``fixtures`` Python package (PyPI already has one by that name), and the repository's
``fixtures/`` folder stays the one place they live."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from importlib import metadata, resources
from importlib.machinery import PathFinder
from pathlib import Path

import pytest

from binlog_model.testing.bundled import FIXTURES_DIR, GOLDEN_DIR, SCENARIO_DIR, golden_dir
from binlog_model.testing.scenario import list_scenarios
from tests._paths import REPO


def _repo_files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_bundled_fixtures_are_the_repository_folder() -> None:
    link = REPO / "binlog_model" / "fixtures"
    assert link.is_symlink() and link.resolve() == (REPO / "fixtures").resolve()
    assert (REPO / "fixtures").resolve() == FIXTURES_DIR
    assert SCENARIO_DIR == FIXTURES_DIR / "scenarios" and GOLDEN_DIR == FIXTURES_DIR / "golden"
    assert not (REPO / "fixtures" / "__init__.py").exists()
    packaged = resources.files("binlog_model") / "fixtures" / "scenarios" / "spec_example.sql"
    assert packaged.read_bytes() == (REPO / "fixtures" / "scenarios" / "spec_example.sql").read_bytes()
    assert {p.name for p in list_scenarios()} >= {"spec_example.sql", "all_types.sql"}
    assert (golden_dir("mariadb") / "spec_example" / "expected.jsonl").is_file()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the sources (the build leaves build/ and egg-info behind), once."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    src = tmp_path / "src"
    for name in ("binlog_model", "schema_tracker", "fixtures"):
        shutil.copytree(REPO / name, src / name, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    if (REPO / "setup.py").exists():
        shutil.copy(REPO / "setup.py", src / "setup.py")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps",
                           "--no-build-isolation", "-q", "-w", str(tmp_path / "dist")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (built,) = (tmp_path / "dist").glob("binlog_model-*.whl")
    return built


def test_installed_wheel_has_no_top_level_fixtures_package(wheel: Path, tmp_path: Path) -> None:
    """What an install puts in site-packages (the wheel unpacked), read back through importlib: the
    distribution's files, the importable top-level names, and the scenario files under binlog_model."""
    site = tmp_path / "site-packages"
    zipfile.ZipFile(wheel).extractall(site)
    (dist,) = metadata.distributions(path=[str(site)])
    assert dist.metadata["Name"] == "binlog-model"
    installed = {f.parts[0] for f in dist.files or () if not f.parts[0].endswith(".dist-info")}
    assert installed == {"binlog_model", "schema_tracker"}
    assert PathFinder.find_spec("fixtures", [str(site)]) is None
    assert PathFinder.find_spec("binlog_model", [str(site)]) is not None
    scenarios = site / "binlog_model" / "fixtures" / "scenarios"
    assert (scenarios / "spec_example.sql").read_bytes() == (
        REPO / "fixtures" / "scenarios" / "spec_example.sql").read_bytes()
    assert any((site / "binlog_model" / "fixtures" / "golden").rglob("expected.jsonl"))


def test_wheel_has_the_fixtures_under_binlog_model(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"binlog_model", "schema_tracker"}
    prefix = "binlog_model/fixtures/"
    shipped = {n.removeprefix(prefix) for n in names if n.startswith(prefix)}
    assert shipped == _repo_files(REPO / "fixtures")
    assert "binlog_model/testing/bundled.py" in names and "binlog_model/sinks/delimited.py" in names
