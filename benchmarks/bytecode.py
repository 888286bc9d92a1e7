"""Our commands timed as a pip-installed package runs them: with their bytecode compiled beforehand.

Strategy: a session environment with ``PYTHONDONTWRITEBYTECODE`` (this project's sandbox sets it) makes every
timed run, and every Spark Python worker, compile ~100 modules from source first (~0.1-0.2 s of CPU each,
none of it the command's work). ``compiled_env`` compiles the packages of each checkout once
(``compileall``, into the checkout's own ``__pycache__`` folders, which git ignores) and returns the
environment the timed commands, and the Python workers they start, run with. No ``PYTHONPYCACHEPREFIX``:
a prefix moves *every* module's bytecode there, the standard library's and the installed packages' too,
so the first command of a run compiled pymysql, sqlglot, pyspark ... from source (the tail's first round:
~1 s of CPU in ``compile``), which no installed package does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["PACKAGES", "compiled_env"]

PACKAGES = ("binlog_model", "schema_tracker")


def compiled_env(work: Path, *checkouts: Path, **extra: str) -> dict[str, str]:
    """This process's environment without ``PYTHONDONTWRITEBYTECODE`` or a bytecode prefix, with the
    ``checkouts``' packages compiled in place, and ``extra`` set. (``work``: kept for the callers.)"""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env.update(**extra)
    for checkout in checkouts:
        subprocess.run([sys.executable, "-m", "compileall", "-q", *(str(checkout / p) for p in PACKAGES)],
                       env=env, stdout=subprocess.DEVNULL, check=True)
    return env
