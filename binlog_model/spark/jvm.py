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

the executors' JVMs of such a job (on a cluster) get the same two (``executor_java_options``), and a class
archive of their own when the cluster runs on this machine (below);

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
- The executors' archive (a standalone master on this machine, ``spark://localhost:…``, or
  ``local-cluster``): an executor loads other classes than a driver (a separate archive), and the Spark
  worker, not we, starts and ends its JVM (it sends SIGTERM and kills it 10 s later, often in the middle of
  an at-exit dump). So a job that finds none starts its executors with ``-XX:+RecordDynamicDumpInfo``, and
  after its tasks, before the executors stop, ``dump_executor_archive`` has one of them write its classes
  (``jcmd PID VM.cds dynamic_dump``, the JDK's tool) under a temporary name, renamed into place once jcmd
  reports it written. On another machine the path does
  not exist and ``-Xshare:auto`` runs without it. Without ``jcmd`` (a JRE only) there is no executor
  archive, nothing else.

and, for the JVMs it launches on this machine, the most used jars first on the class path
(``hot_class_path``): the application class loader looks a class up jar by jar in class-path order, and
Spark's ~280 jars are in alphabetical order, so the 1,300-1,900 classes a JVM loads from ``spark-core`` and
``scala-library`` were each found after ~200 misses (about 0.5 s of an executor's 2.5 s start without an
archive). The same jars stay in their place further on; apart from Spark's stub class in each of its jars
they hold no class another jar also has, so no class changes.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

from binlog_model.io.cache import cache_root

__all__ = ["ARCHIVE_ENV", "HOT_JARS", "close_driver_jvm", "driver_java_options", "dump_executor_archive",
           "executor_java_options", "hot_class_path", "is_local_cluster", "is_local_master"]

ARCHIVE_ENV = "BINLOG_MODEL_JVM_ARCHIVE"
_QUICK_START = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmn64m"
# The JVM prints CDS warnings (classes it cannot archive) on stdout: not for a user's terminal.
_QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
# A temporary archive older than this was left by a JVM that never finished: removed.
_STALE_SECONDS = 24 * 3600

# The jars a resolve job's driver and executors load most classes from, most first (``-Xlog:class+load`` of
# both, Spark 4.x): a jar's name up to its version, ``_2.13`` and the like left out.
HOT_JARS = ("spark-core", "scala-library", "log4j-core", "jackson-databind", "spark-config",
            "spark-network-common", "hadoop-client-runtime", "hadoop-client-api", "netty-common", "ivy",
            "netty-transport", "jackson-module-scala", "log4j-api", "netty-buffer", "jackson-core",
            "spark-common-utils", "py4j", "jackson-annotations", "netty-transport-classes-epoll",
            "json4s-ast", "log4j-1.2-api", "lz4-java", "spark-network-shuffle", "metrics-core",
            "json4s-core", "slf4j-api")

# The archive this process's driver JVM writes as it exits: (temporary name, final name).
_PENDING: list[tuple[Path, Path]] = []
# The executors' archive this process's job is to have an executor write (``dump_executor_archive``).
_PENDING_EXECUTOR: list[Path] = []


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


def executor_java_options(user_options: str | None, master: str | None = None, spark_home: str | None = None,
                          jars: str | None = None, *, create_archive: bool = False) -> str:
    """``spark.executor.extraJavaOptions`` of a job whose executors only run Python tasks (a cluster's
    ``binlog-model resolve``): the quick-start flags, a class archive when ``master`` runs on this machine
    (``create_archive``: have the executors write one when there is none; see the module docstring), then
    the user's. An executor JVM starts per job on every worker; without these its optimising compiler and
    parallel collector threads, and its class loading, take CPU from the Python workers on the same cores."""
    archive = _executor_archive_options(spark_home, jars, create_archive) if is_local_cluster(master) else ""
    return " ".join(o for o in (_QUICK_START, archive, user_options) if o)


def hot_class_path(user_class_path: str | None, spark_home: str | None) -> str:
    """An ``extraClassPath`` of a JVM this process launches: the user's entries (they keep precedence),
    then the ``HOT_JARS`` found in ``spark_home``'s jars folder; just the user's when none is found."""
    entries = [user_class_path] if user_class_path else []
    jar_dir = Path(spark_home) / "jars" if spark_home else None
    with contextlib.suppress(OSError):
        if jar_dir is not None and jar_dir.is_dir():
            names = sorted(e.name for e in os.scandir(jar_dir) if e.name.endswith(".jar"))
            for hot in HOT_JARS:
                pattern = re.compile(rf"{re.escape(hot)}(?:_\d+\.\d+)?-\d[^/]*\.jar")
                entries += [str(jar_dir / n) for n in names if pattern.fullmatch(n)][:1]
    return os.pathsep.join(entries)


def is_local_master(master: str) -> bool:
    """Whether ``master`` is ``local`` or ``local[...]``: the driver's JVM runs the tasks, no executors."""
    return re.fullmatch(r"local(\[.*\])?", master) is not None


def is_local_cluster(master: str | None) -> bool:
    """Whether ``master`` is a cluster whose workers run on this machine: ``local-cluster[...]`` or a
    standalone master on a loopback address or this host's name (``local[N]`` has no executors)."""
    if not master:
        return False
    if master.startswith("local-cluster"):
        return True
    if not master.startswith("spark://"):
        return False
    hosts = [h.rsplit(":", 1)[0].strip("[]") for h in master[len("spark://"):].split(",")]
    own = {"localhost", "::1", socket.gethostname()}       # no DNS lookup: it can hang
    return all(h in own or h.startswith("127.") for h in hosts)


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
    final = _archive_path(spark_home, jars, "driver")
    if final is None:
        return ""
    folder = final.parent
    try:
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


def _executor_archive_options(spark_home: str | None, jars: str | None, create: bool) -> str:
    final = _archive_path(spark_home, jars, "executor")
    if final is None:
        return ""
    if final.is_file():
        return f"-XX:SharedArchiveFile={final} -Xshare:auto {_QUIET}"
    if not create or _jcmd() is None:
        return ""
    _PENDING_EXECUTOR.append(final)
    return f"-XX:+RecordDynamicDumpInfo {_QUIET}"


def dump_executor_archive(app_id: str, timeout: float = 120.0) -> None:
    """When this job's executors were started to record their classes (no executor archive yet), have one
    of this application's executors on this machine write them, and put the archive in place when whole.
    Call after the job's tasks, before the context stops. Any failure leaves no archive, nothing else."""
    if not _PENDING_EXECUTOR:
        return
    final = _PENDING_EXECUTOR.pop()
    jcmd = _jcmd()
    temp = final.parent / f"{final.name}.{os.getpid()}.tmp"
    try:
        pid = _executor_pid(jcmd, app_id, timeout) if jcmd is not None else None
        if jcmd is None or pid is None:
            return
        final.parent.mkdir(parents=True, exist_ok=True)
        _drop_stale(final.parent)
        done = subprocess.run([str(jcmd), pid, "VM.cds", "dynamic_dump", str(temp)], capture_output=True,
                              text=True, timeout=timeout, check=False)
        # jcmd returns when the dump is written (or failed: then it says so and the file is not renamed).
        if done.returncode == 0 and "error" not in done.stdout.lower() and temp.is_file():
            os.replace(temp, final)
    except (OSError, subprocess.SubprocessError):
        pass
    finally:
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)


def _executor_pid(jcmd: Path, app_id: str, timeout: float) -> str | None:
    """The process id of an executor JVM of application ``app_id`` on this machine (``jcmd -l`` lists
    every JVM of this user with its main class and arguments)."""
    listed = subprocess.run([str(jcmd), "-l"], capture_output=True, text=True, timeout=timeout, check=False)
    for line in listed.stdout.splitlines():
        pid, _, command = line.partition(" ")
        if "CoarseGrainedExecutorBackend" in command and f"--app-id {app_id} " in command + " ":
            return pid
    return None


def _jcmd() -> Path | None:
    """The JDK's ``jcmd`` next to the java binary, or on the PATH."""
    java = _java_binary()
    beside = java.parent / "jcmd" if java is not None else None
    if beside is not None and beside.is_file():
        return beside
    found = shutil.which("jcmd")
    return Path(found) if found else None


def _archive_path(spark_home: str | None, jars: str | None, role: str) -> Path | None:
    """Where the archive of a JVM of ``role`` lives (in the cache folder), or None without an archive."""
    if os.environ.get(ARCHIVE_ENV, "") in ("0", "false", "no") or not spark_home:
        return None
    java = _java_binary()
    jar_dir = Path(spark_home) / "jars"
    if java is None or not jar_dir.is_dir():
        return None
    try:
        return cache_root() / "jvm" / f"spark-{role}-{_key(java, jar_dir, jars)}.jsa"
    except OSError:
        return None


def _java_binary() -> Path | None:
    home = os.environ.get("JAVA_HOME")
    found = Path(home) / "bin" / "java" if home else None
    if found is None or not found.is_file():
        which = shutil.which("java")
        found = Path(which) if which else None
    return found.resolve() if found is not None else None


def _key(java: Path, jar_dir: Path, jars: str | None) -> str:
    """What an archive depends on: the JVM (its binary), every jar of Spark's folder by name, size and
    modification time (a changed jar invalidates the archive; the JVM would refuse it anyway), and ``jars``:
    what else the JVM's class path holds (``spark.jars``, the extra class path), in its order."""
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
