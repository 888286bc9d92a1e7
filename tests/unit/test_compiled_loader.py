"""The loader of the compiled core: on when built, off with a reason when forced or missing.

Each state runs in its own interpreter (the choice is made once per process, at import): built and
allowed (on), ``BINLOG_MODEL_PURE=1`` (off), the extension refused by the import system, and a copy of the
package with the C sources but no built module (a checkout that was never built). ``scripts/test.sh``
builds the extension in place and sets ``BINLOG_MODEL_REQUIRE_COMPILED=1``, so there "on" is required;
elsewhere that one test skips when no built module sits in the package.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import binlog_model
from tests._paths import REPO

_STATUS = "import binlog_model; print(binlog_model.compiled_core())"


def _run(code: str, *, pythonpath: Path = REPO, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if k != "BINLOG_MODEL_PURE"}
    environ.update(env, PYTHONPATH=str(pythonpath))
    # cwd too: ``python -c`` puts the working folder first on sys.path
    done = subprocess.run([sys.executable, "-c", code], env=environ, cwd=pythonpath, capture_output=True,
                          text=True, timeout=120, check=True)
    return done.stdout


def _built() -> list[Path]:
    return sorted((REPO / "binlog_model").glob("_speedups.*.so"))


def test_on_when_built_and_not_forced_pure() -> None:
    if not _built() and os.environ.get("BINLOG_MODEL_REQUIRE_COMPILED") != "1":
        pytest.skip("no built extension in binlog_model/ (scripts/test.sh builds it in place)")
    out = _run(_STATUS + "; from binlog_model.compiled import speedups; print(speedups.__name__)")
    assert out.splitlines() == ["on", "binlog_model._speedups"]
    version = _run("from binlog_model.cli import main; main(['--version'])")
    assert version.splitlines()[-1] == "compiled core: on"


@pytest.mark.parametrize("value", ["1", "yes"])
def test_pure_env_forces_the_reference_path(value: str) -> None:
    out = _run(_STATUS + "; from binlog_model.compiled import speedups; print(speedups)",
               BINLOG_MODEL_PURE=value)
    assert out.splitlines() == [f"off (BINLOG_MODEL_PURE={value})", "None"]
    version = _run("from binlog_model.cli import main; main(['--version'])", BINLOG_MODEL_PURE=value)
    assert version.splitlines()[-1] == f"compiled core: off (BINLOG_MODEL_PURE={value})"


def test_pure_env_zero_or_empty_does_not_force() -> None:
    for value in ("0", ""):
        out = _run(_STATUS, BINLOG_MODEL_PURE=value)
        assert "BINLOG_MODEL_PURE" not in out


def test_off_with_reason_when_the_extension_cannot_be_imported() -> None:
    # sys.modules[name] = None makes every import of it raise ImportError, as a missing module does.
    out = _run("import sys; sys.modules['binlog_model._speedups'] = None; " + _STATUS
               + "; from binlog_model.compiled import speedups; print(speedups)")
    status, module = out.splitlines()
    assert status.startswith("off (not built: import of binlog_model._speedups halted"), status
    assert "C compiler" in status
    assert module == "None"


def test_off_in_a_checkout_with_sources_but_no_build(tmp_path: Path) -> None:
    # A copy of the package without any built module: the sources' folder imports as a namespace package.
    shutil.copytree(REPO / "binlog_model", tmp_path / "binlog_model",
                    ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    (tmp_path / "binlog_model" / "_speedups").mkdir(exist_ok=True)
    out = _run("import binlog_model, sys; print(binlog_model.__file__); print(binlog_model.compiled_core())",
               pythonpath=tmp_path)
    where, status = out.splitlines()
    assert Path(where).is_relative_to(tmp_path)
    assert status.startswith("off (not built: only the C sources were found"), status
    version = _run("from binlog_model.cli import main; main(['--version'])", pythonpath=tmp_path)
    assert version.splitlines()[-1] == f"compiled core: {status}"


def test_status_is_exported() -> None:
    assert "compiled_core" in binlog_model.__all__
    status = binlog_model.compiled_core()
    assert status == "on" or (status.startswith("off (") and status.endswith(")"))
