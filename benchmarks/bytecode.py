"""Our commands timed as a pip-installed package runs them: with their bytecode compiled beforehand.

Strategy: a session environment with ``PYTHONDONTWRITEBYTECODE`` (this project's sandbox sets it) makes every
timed run, and every Spark Python worker, compile ~100 modules from source first (~0.1-0.2 s of CPU each,
none of it the command's work). ``compiled_env`` compiles the packages of each checkout once
(``compileall``) into a cache of the benchmark's own (``PYTHONPYCACHEPREFIX``, so no checkout is written
to) and returns the environment the timed commands, and the Python workers they start, run with.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["PACKAGES", "compiled_env"]

PACKAGES = ("binlog_model", "schema_tracker")


def compiled_env(work: Path, *checkouts: Path, **extra: str) -> dict[str, str]:
    """This process's environment without ``PYTHONDONTWRITEBYTECODE``, with bytecode from ``work/pycache``
    compiled there for the ``checkouts``' packages, and ``extra`` set."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPYCACHEPREFIX=str(work / "pycache"), **extra)
    for checkout in checkouts:
        subprocess.run([sys.executable, "-m", "compileall", "-q", *(str(checkout / p) for p in PACKAGES)],
                       env=env, stdout=subprocess.DEVNULL, check=True)
    return env
