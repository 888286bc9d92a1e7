"""The driver JVM's start options (``spark.jvm``): the quick-start flags, the user's after ours, and when a
class archive is used, created or left out (no JVM runs here; the CLI test runs a real one)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from binlog_model.spark import jvm


@pytest.fixture()
def spark_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "spark"
    (home / "jars").mkdir(parents=True)
    (home / "jars" / "spark-core.jar").write_bytes(b"jar")
    monkeypatch.setenv("BINLOG_MODEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(jvm.ARCHIVE_ENV, raising=False)
    monkeypatch.setattr(jvm, "_PENDING", [])
    if jvm._java_binary() is None:
        pytest.skip("no java binary here")
    return home


def test_without_an_archive_only_a_creating_run_writes_one(spark_home: Path, tmp_path: Path) -> None:
    plain = jvm.driver_java_options(None, str(spark_home))
    assert plain == ""      # a DataFrame user's JVM: only an archive, when there is one
    quick = jvm.driver_java_options(None, str(spark_home), quick_start=True)
    assert quick == "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmn64m"
    assert jvm._PENDING == []
    creating = jvm.driver_java_options("-Dmine=1", str(spark_home), create_archive=True)
    assert "-XX:ArchiveClassesAtExit=" in creating and creating.endswith("-Dmine=1")   # the user's last
    temp, final = jvm._PENDING[0]
    assert temp.parent == final.parent == tmp_path / "cache" / "jvm" and temp.name.endswith(".tmp")


def test_an_archive_in_place_is_used_and_a_changed_jar_means_another(spark_home: Path) -> None:
    jvm.driver_java_options(None, str(spark_home), create_archive=True)
    _temp, final = jvm._PENDING.pop()
    final.write_bytes(b"archive")
    assert f"-XX:SharedArchiveFile={final} -Xshare:auto" in jvm.driver_java_options(None, str(spark_home))
    (spark_home / "jars" / "extra.jar").write_bytes(b"new")
    assert "SharedArchiveFile" not in jvm.driver_java_options(None, str(spark_home))


def test_switched_off_and_stale_temporaries(spark_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = jvm.cache_root() / "jvm"
    folder.mkdir(parents=True)
    stale, fresh = folder / "a.jsa.1.tmp", folder / "b.jsa.2.tmp"
    for path in (stale, fresh):
        path.write_bytes(b"torn")
    old = time.time() - 2 * 24 * 3600
    os.utime(stale, (old, old))
    jvm.driver_java_options(None, str(spark_home), create_archive=True)
    assert not stale.exists() and fresh.exists()        # a JVM may still be writing the fresh one
    monkeypatch.setenv(jvm.ARCHIVE_ENV, "0")
    assert jvm.driver_java_options(None, str(spark_home), create_archive=True, quick_start=True) == (
        "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmn64m")


def test_executors_of_a_quick_start_job_get_the_quick_flags_then_the_users() -> None:
    assert jvm.executor_java_options(None) == "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmn64m"
    assert jvm.executor_java_options("-XX:+UseG1GC -Dmine=1") == (
        "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmn64m -XX:+UseG1GC -Dmine=1")   # a later -XX wins
