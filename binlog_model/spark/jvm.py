"""The Java options of a driver JVM this package starts: a short start for a job whose work is in Python.

Strategy: ``binlog-model resolve`` does its work in Python tasks; the driver's JVM schedules them and
carries small results. Its start (loading and verifying about 9,000 classes of Spark) was about half of a
one-file run's wall time, so the driver gets three standard HotSpot options, unless the user's
``spark.driver.extraJavaOptions`` say otherwise (theirs come after ours, and a later ``-XX`` wins):

- ``-XX:TieredStopAtLevel=1``: the client compiler only (a driver that runs no row code has no loop worth
  the optimising compiler's start-up work);
- ``-XX:+UseSerialGC``: one collector thread (the heap holds task results, not data);
- AppCDS (``-XX:SharedArchiveFile``): the classes loaded by the previous start, mapped from an archive
  instead of being parsed and verified again. The first run without an archive writes one at its JVM's
  exit (``-XX:ArchiveClassesAtExit`` into a temporary name); a later run adopts it once that JVM has
  exited. ``-XX:+VerifySharedSpaces`` checks the archive's checksums and ``-Xshare:auto`` runs without it
  when it does not fit (another JVM, another class path, a torn file), so a bad archive costs the saving,
  never the run. The archive is keyed by the java binary and the jars of the class path, and lives in
  the user's cache folder (``$BINLOG_MODEL_CACHE`` or ``~/.cache/binlog-model/jvm``); set
  ``BINLOG_MODEL_JVM_ARCHIVE=0`` to leave it out.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from pathlib import Path

from binlog_model.io.cache import cache_root

__all__ = ["ARCHIVE_ENV", "driver_java_options"]

ARCHIVE_ENV = "BINLOG_MODEL_JVM_ARCHIVE"
_FAST_START = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
# The JVM prints CDS warnings (classes it cannot archive) on stdout: not for a user's terminal.
_QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"


def driver_java_options(user_options: str | None, spark_home: str | None, jars: str | None = None) -> str:
    """``spark.driver.extraJavaOptions`` for a driver JVM this process launches: ours, then the user's."""
    ours = [_FAST_START]
    archive = _archive_options(spark_home, jars)
    if archive:
        ours.append(archive)
    if user_options:
        ours.append(user_options)
    return " ".join(ours)


def _archive_options(spark_home: str | None, jars: str | None) -> str:
    if os.environ.get(ARCHIVE_ENV, "") in ("0", "false", "no") or not spark_home:
        return ""
    java = _java_binary()
    jar_dir = Path(spark_home) / "jars"
    if java is None or not jar_dir.is_dir():
        return ""
    try:
        folder = cache_root() / "jvm"
        folder.mkdir(parents=True, exist_ok=True)
        final = folder / f"spark-driver-{_key(java, jar_dir, jars)}.jsa"
        if not final.is_file():
            _adopt_finished(final)
        if final.is_file():
            return f"-XX:SharedArchiveFile={final} -XX:+VerifySharedSpaces -Xshare:auto {_QUIET}"
        # This run writes one (at its JVM's exit) under a name of its own; a later run adopts it.
        return f"-XX:ArchiveClassesAtExit={folder / f'{final.name}.{os.getpid()}.tmp'} {_QUIET}"
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


def _adopt_finished(final: Path) -> None:
    """Rename an archive a finished run wrote to ``final``. The writer's JVM outlives its Python process by
    the dump itself, so a temporary archive is taken only when no JVM holds it open any more."""
    for candidate in final.parent.glob(f"{final.name}.*.tmp"):
        with contextlib.suppress(OSError):
            if candidate.stat().st_size and not _held_open(candidate):
                if final.is_file():
                    candidate.unlink()      # another finished run's: one archive is enough
                else:
                    os.replace(candidate, final)


def _held_open(path: Path) -> bool:
    """Whether a process has ``path`` open (a JVM still writing the archive). Where /proc cannot tell, a
    file younger than a minute counts as held."""
    proc = Path("/proc")
    if not (proc / "self" / "fd").is_dir():
        import time

        return time.time() - path.stat().st_mtime < 60
    target = str(path.resolve())
    for pid in os.listdir(proc):
        if not pid.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in os.listdir(proc / pid / "fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(proc / pid / "fd" / fd) == target:
                        return True
    return False
