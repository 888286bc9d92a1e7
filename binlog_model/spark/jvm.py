"""The Java options of a driver JVM this package starts: a short start for a job whose work is in Python.

Strategy: ``binlog-model resolve`` does its work in Python tasks; the driver's JVM schedules them and
carries small results. Its start (loading and verifying about 9,000 classes of Spark) was about half of a
one-file run's wall time, so the driver gets standard HotSpot options, unless the user's
``spark.driver.extraJavaOptions`` say otherwise (theirs come after ours, and a later ``-XX`` wins). With
``quick_start`` (the command line's jobs, whose JVM runs no row code):

- ``-XX:TieredStopAtLevel=1``: the client compiler only (no loop worth the optimising compiler's start-up
  work);
- ``-XX:+UseSerialGC -Xmn64m``: one collector thread and a small fixed young generation (the heap holds task
  results, not data, so its resident size stays flat whatever the archive's size);

the executors' JVMs of such a job (on a cluster) get the same two (``executor_java_options``);

and always (a DataFrame user's JVM too, whose peak speed it does not change):

- AppCDS (``-XX:SharedArchiveFile``): the classes loaded by an earlier start, mapped from an archive instead
  of being parsed and verified again. A run that may create it (the command line, ``create_archive``) and
  finds none has its JVM write one as it exits (``-XX:ArchiveClassesAtExit``, a temporary name);
  ``close_driver_jvm`` then ends that JVM, waits for it, and renames the archive into place only when the
  JVM exited cleanly: a JVM killed while writing leaves a torn file, and JDK 17 crashes on a truncated
  archive instead of running without it. ``-Xshare:auto`` runs without an archive that does not fit (an
  updated JVM, other jars). The archive is keyed by the java binary and the jars of the class path, and
  lives in the user's cache folder (``$BINLOG_MODEL_CACHE`` or ``~/.cache/binlog-model``, ``jvm/``); set
  ``BINLOG_MODEL_JVM_ARCHIVE=0`` to leave it out.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from binlog_model.io.cache import cache_root

__all__ = ["ARCHIVE_ENV", "close_driver_jvm", "driver_java_options", "executor_java_options"]

ARCHIVE_ENV = "BINLOG_MODEL_JVM_ARCHIVE"
_QUICK_START = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmn64m"
# The JVM prints CDS warnings (classes it cannot archive) on stdout: not for a user's terminal.
_QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
# A temporary archive older than this was left by a JVM that never finished: removed.
_STALE_SECONDS = 24 * 3600

# The archive this process's driver JVM writes as it exits: (temporary name, final name).
_PENDING: list[tuple[Path, Path]] = []


def driver_java_options(user_options: str | None, spark_home: str | None, jars: str | None = None, *,
                        create_archive: bool = False, quick_start: bool = False) -> str:
    """``spark.driver.extraJavaOptions`` for a driver JVM this process launches: ours, then the user's.
    ``create_archive``: without an archive, have this JVM write one (then call ``close_driver_jvm``);
    ``quick_start``: the flags of a JVM that only schedules Python tasks (see the module docstring)."""
    ours = [_QUICK_START] if quick_start else []
    archive = _archive_options(spark_home, jars, create_archive)
    if archive:
        ours.append(archive)
    if user_options:
        ours.append(user_options)
    return " ".join(ours)


def executor_java_options(user_options: str | None) -> str:
    """``spark.executor.extraJavaOptions`` of a job whose executors only run Python tasks (a cluster's
    ``binlog-model resolve``): the quick-start flags, then the user's. An executor JVM starts per job on
    every worker; without them its optimising compiler and parallel collector threads take CPU from the
    Python workers on the same cores. No class archive: it would have to exist on every node."""
    return " ".join(o for o in (_QUICK_START, user_options) if o)


def close_driver_jvm(timeout: float = 60.0) -> None:
    """End the driver JVM this process launched and wait for it, when it is to write the class archive (the
    JVM writes it as it exits), and keep the archive if it exited cleanly. Call after ``stop()``."""
    if not _PENDING:
        return
    from pyspark import SparkContext

    proc: Any = getattr(SparkContext._gateway, "proc", None)
    temp, final = _PENDING.pop()
    if proc is None:
        return
    # Spark's gateway server exits (System.exit(0)) when its standard input closes: the driver's own way out.
    with contextlib.suppress(OSError, AttributeError):
        proc.stdin.close()
    try:
        code = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        return
    with contextlib.suppress(OSError):
        if code == 0 and temp.is_file() and temp.stat().st_size:
            os.replace(temp, final)
        else:
            temp.unlink(missing_ok=True)


def _archive_options(spark_home: str | None, jars: str | None, create: bool) -> str:
    if os.environ.get(ARCHIVE_ENV, "") in ("0", "false", "no") or not spark_home:
        return ""
    java = _java_binary()
    jar_dir = Path(spark_home) / "jars"
    if java is None or not jar_dir.is_dir():
        return ""
    try:
        folder = cache_root() / "jvm"
        final = folder / f"spark-driver-{_key(java, jar_dir, jars)}.jsa"
        if final.is_file():
            return f"-XX:SharedArchiveFile={final} -Xshare:auto {_QUIET}"
        if not create:
            return ""
        folder.mkdir(parents=True, exist_ok=True)
        _drop_stale(folder)
        temp = folder / f"{final.name}.{os.getpid()}.tmp"
        _PENDING.append((temp, final))
        return f"-XX:ArchiveClassesAtExit={temp} {_QUIET}"
    except OSError:
        return ""           # an unwritable cache: a slower start, nothing else


def _java_binary() -> Path | None:
    home = os.environ.get("JAVA_HOME")
    found = Path(home) / "bin" / "java" if home else None
    if found is None or not found.is_file():
        which = shutil.which("java")
        found = Path(which) if which else None
    return found.resolve() if found is not None else None


def _key(java: Path, jar_dir: Path, jars: str | None) -> str:
    """What an archive depends on: the JVM (its binary) and every jar of the class path, by name, size and
    modification time (a changed jar invalidates the archive; the JVM would refuse it anyway)."""
    digest = hashlib.sha256()
    stat = java.stat()
    digest.update(f"{java}|{stat.st_size}|{stat.st_mtime_ns}|{jars or ''}".encode())
    for entry in sorted(os.scandir(jar_dir), key=lambda e: e.name):
        info = entry.stat()
        digest.update(f"|{entry.name}|{info.st_size}|{info.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def _drop_stale(folder: Path) -> None:
    """Remove temporary archives of runs that never finished writing one (killed JVMs)."""
    for temp in folder.glob("*.tmp"):
        with contextlib.suppress(OSError):
            if time.time() - temp.stat().st_mtime > _STALE_SECONDS:
                temp.unlink()
