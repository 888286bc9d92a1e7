"""pyspark's Python worker daemon, importing pyspark from its installed package instead of Spark's zip.

Why: Spark puts ``$SPARK_HOME/python/lib/pyspark.zip`` (and py4j's zip) first on the path of the Python
daemon it starts on every executor. Python neither finds nor writes bytecode for a zip without any, so each
daemon and each worker it forks compiled pyspark's modules again: importing ``pyspark.daemon`` and
``pyspark.worker`` took 0.99 s of CPU from the zip and 0.20 s from an installed pyspark (this machine),
all of it before an executor's first task ran. When the installed package is the zip's own (the same
``version.py``, byte for byte: a pip-installed pyspark is the Spark home whose zip this is), the zip leaves
the path; otherwise nothing changes. ``session.local_context`` names this module
(``spark.python.daemon.module``) only for executors known to import this package
(``executors_import_package``).
"""

from __future__ import annotations

import importlib.machinery
import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence

__all__ = ["executors_import_package", "without_redundant_zips"]

DAEMON_MODULE = "binlog_model.spark.daemon"


def _package_of(entry: str) -> str | None:
    name = os.path.basename(entry)
    if os.path.basename(os.path.dirname(entry)) != "lib" or not name.endswith(".zip"):
        return None
    if name == "pyspark.zip":
        return "pyspark"
    if name.startswith("py4j-") and name.endswith("-src.zip"):
        return "py4j"
    return None


def _version_source(entry: str, package: str) -> bytes | None:
    """The bytes of ``package/version.py`` as the import system would load them from ``entry`` (a folder or
    a zip on the path), or None."""
    found = importlib.machinery.PathFinder.find_spec(package, [entry])
    if found is None or not found.submodule_search_locations:
        return None
    version = importlib.machinery.PathFinder.find_spec(f"{package}.version",
                                                        list(found.submodule_search_locations))
    if version is None or version.origin is None:
        return None
    get_data = getattr(version.loader, "get_data", None)
    if get_data is None:
        return None
    try:
        return bytes(get_data(version.origin))
    except OSError:
        return None


def without_redundant_zips(path: Sequence[str]) -> list[str]:
    """``path`` less each Spark zip (``…/lib/pyspark.zip``, ``…/lib/py4j-*-src.zip``) whose package another
    entry, not a zip, holds with the same ``version.py``."""
    kept = list(path)
    for entry in path:
        package = _package_of(entry)
        if package is None:
            continue
        zipped = _version_source(entry, package)
        if zipped is None:
            continue
        for other in path:
            if other != entry and not other.endswith(".zip") and _version_source(other, package) == zipped:
                kept.remove(entry)
                break
    return kept


def executors_import_package(master: str, settings: Mapping[str, str],
                              environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the Python daemons of a job on ``master`` with ``settings`` import this module: executors on
    this machine (``local[N]``, a cluster of this machine) that run this interpreter (``spark.pyspark.python``
    and ``PYSPARK_PYTHON`` unset or naming it), no ``--py-files`` or ``--archives`` (another copy of the
    package, or another Python), and this interpreter importing the module with the daemon's path (asked of
    it). ``False`` keeps Spark's own daemon: a daemon that cannot start would fail every task."""
    from binlog_model.spark.jvm import is_local_cluster, is_local_master

    local = is_local_master(master)
    if settings.get("spark.python.daemon.module") or not (local or is_local_cluster(master)):
        return False
    if settings.get("spark.submit.pyFiles") or re.search(r"--(py-files|archives)\b",
                                                         environ.get("PYSPARK_SUBMIT_ARGS", "")):
        return False
    python = settings.get("spark.pyspark.python") or environ.get("PYSPARK_PYTHON") or sys.executable
    if os.path.abspath(python) != os.path.abspath(sys.executable):     # a bare name: another Python
        return False
    # The daemon's path: Spark's zips, spark.executorEnv.PYTHONPATH, then the executor's own PYTHONPATH
    # (local[N]: this process's). Asked of the interpreter itself, without the current folder on its path:
    # an editable install or a .pth file is found as the daemon would find it.
    paths = [settings.get("spark.executorEnv.PYTHONPATH", "")]
    if local:
        paths.append(environ.get("PYTHONPATH", ""))
    env = {k: v for k, v in environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    try:
        done = subprocess.run([sys.executable, "-c", f"import sys; del sys.path[0]; import {DAEMON_MODULE}"],
                              env=env, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


if __name__ == "__main__":
    sys.path[:] = without_redundant_zips(sys.path)
    from pyspark import daemon

    daemon.manager()
