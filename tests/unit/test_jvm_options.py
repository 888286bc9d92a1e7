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
    monkeypatch.setattr(jvm, "_PENDING_EXECUTOR", [])
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


def test_a_cluster_is_local_only_when_every_master_host_is_this_machine() -> None:
    import socket
    assert jvm.is_local_cluster("spark://localhost:7077")
    assert jvm.is_local_cluster("spark://127.0.0.1:7077,127.0.0.2:7078")
    assert jvm.is_local_cluster(f"spark://{socket.gethostname()}:7077")
    assert jvm.is_local_cluster("local-cluster[2,1,1024]")
    assert not jvm.is_local_cluster("spark://spark-master.example.com:7077")
    assert not jvm.is_local_cluster("spark://localhost:7077,spark-master.example.com:7077")
    assert not jvm.is_local_cluster("local[2]")
    assert not jvm.is_local_cluster("yarn")
    assert not jvm.is_local_cluster(None)


def test_executors_on_this_machine_record_their_classes_then_use_the_archive(spark_home: Path) -> None:
    quick = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmn64m"
    quiet = "-Xlog:cds=off -Xlog:cds+dynamic=off"
    master = "spark://127.0.0.1:7077"
    if jvm._jcmd() is None:
        pytest.skip("no jcmd here (a JRE without the JDK's tools): no executor archive is made")
    # A remote cluster: the quick flags only (the cache path would not exist on its nodes).
    assert jvm.executor_java_options(None, "spark://spark-master.example.com:7077", str(spark_home),
                                     create_archive=True) == quick
    # No archive: a creating job's executors record what jcmd's dump needs; a job that may not create one
    # gets nothing more.
    assert jvm.executor_java_options(None, master, str(spark_home)) == quick
    assert jvm.executor_java_options("-Dmine=1", master, str(spark_home), create_archive=True) == (
        f"{quick} -XX:+RecordDynamicDumpInfo {quiet} -Dmine=1")
    (final,) = jvm._PENDING_EXECUTOR
    assert final.parent == jvm.cache_root() / "jvm" and final.name.startswith("spark-executor-")
    assert "spark-executor-" not in jvm.driver_java_options(None, str(spark_home), create_archive=True)
    jvm.dump_executor_archive("app-without-executors-here")     # no such process: nothing, no error
    assert not final.exists() and not jvm._PENDING_EXECUTOR
    final.parent.mkdir(parents=True, exist_ok=True)
    final.write_bytes(b"a stand-in archive (hand-built, named so)")
    assert jvm.executor_java_options(None, master, str(spark_home), create_archive=True) == (
        f"{quick} -XX:SharedArchiveFile={final} -Xshare:auto {quiet}")


def test_hot_jars_come_first_after_the_users_entries(tmp_path: Path) -> None:
    jars = tmp_path / "spark" / "jars"
    jars.mkdir(parents=True)
    for name in ("aircompressor-2.0.jar", "netty-transport-4.2.13.Final.jar",
                 "netty-transport-classes-epoll-4.2.13.Final.jar", "scala-library-2.13.18.jar",
                 "spark-core_2.13-4.3.0.jar", "spark-core-extras_2.13-4.3.0.jar", "spark-core.txt"):
        (jars / name).write_bytes(b"jar")
    path = jvm.hot_class_path(None, str(tmp_path / "spark")).split(os.pathsep)
    # The most used first, each matched by its name and a version (never a longer name that starts alike).
    assert [Path(p).name for p in path] == ["spark-core_2.13-4.3.0.jar", "scala-library-2.13.18.jar",
                                            "netty-transport-4.2.13.Final.jar",
                                            "netty-transport-classes-epoll-4.2.13.Final.jar"]
    assert all(Path(p).parent == jars for p in path)
    mine = jvm.hot_class_path("/opt/mine.jar", str(tmp_path / "spark"))
    assert mine.split(os.pathsep)[0] == "/opt/mine.jar" and mine.split(os.pathsep)[1:] == path
    assert jvm.hot_class_path("/opt/mine.jar", None) == "/opt/mine.jar"
    assert jvm.hot_class_path(None, str(tmp_path / "nowhere")) == ""


def test_the_class_path_is_part_of_an_archives_key(spark_home: Path) -> None:
    first = jvm.driver_java_options(None, str(spark_home), "|/a.jar", create_archive=True)
    second = jvm.driver_java_options(None, str(spark_home), "|/b.jar:/a.jar", create_archive=True)
    named = [jvm._PENDING[0][1], jvm._PENDING[1][1]]
    assert named[0] != named[1] and first != second


def test_a_driver_that_runs_the_tasks_has_an_archive_of_its_own() -> None:
    from binlog_model.spark.session import _archive_key

    settings = {"spark.jars": "/x.jar"}
    # local[N] loads the executor's classes too: its archive is not a cluster driver's
    assert _archive_key(settings, "/a.jar", runs_tasks=True) != _archive_key(settings, "/a.jar")
    assert _archive_key(settings, "/a.jar") != _archive_key(settings, "/b.jar")
    assert _archive_key({}, "/a.jar") != _archive_key(settings, "/a.jar")
