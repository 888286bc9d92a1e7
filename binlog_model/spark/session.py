"""Spark's session on this machine or a cluster: the Java check, the SparkContext and SparkSession with the
package's small-session defaults and the JVMs' quick start (``jvm``), the Python workers warmed up while the
driver plans, and a stop that does not wait for pyspark's accumulator server.

``check_java`` runs ``java -version`` first so a missing or too old Java is a one-line ``SparkSetupError``,
not a JVM trace. Nothing here imports pyspark at import time.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping
from typing import Any

from binlog_model.errors import BinlogError

__all__ = ["SparkSetupError", "check_java", "local_context", "local_session", "spark_context", "stop_quickly",
           "warm_workers"]


class SparkSetupError(BinlogError):
    """Spark cannot run here (no Java 17+, no pyspark)."""



def check_java(java: str | None = None) -> int:
    """The major Java version on PATH (or ``JAVA_HOME``); ``SparkSetupError`` when absent or < 17."""
    exe = java or (os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME")
                   else shutil.which("java"))
    if not exe or not os.path.exists(exe):
        raise SparkSetupError("Java 17 or later is needed for Spark and no `java` was found: install a JDK "
                              "(e.g. apt-get install openjdk-17-jre-headless) or set JAVA_HOME")
    try:
        done = subprocess.run([exe, "-version"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError) as err:
        raise SparkSetupError(f"cannot run {exe} -version: {err}") from err
    m = re.search(r'version "(\d+)(?:\.(\d+))?', done.stderr + done.stdout)
    if not m:
        raise SparkSetupError(f"cannot tell the Java version from `{exe} -version`: {done.stderr.strip()!r}")
    major = int(m.group(1)) if m.group(1) != "1" else int(m.group(2) or 0)
    if major < 17:
        raise SparkSetupError(f"Spark 4 needs Java 17 or later; {exe} is Java {major}")
    return major


def local_context(master: str = "local[2]", *, app: str = "binlog-model",
                  conf: Mapping[str, str] | None = None, log_level: str = "ERROR",
                  create_archive: bool = False, quick_start: bool = False) -> Any:
    """A SparkContext on ``master`` (local by default; ``spark://...``, ``yarn`` ... work too) whose Python
    workers use this interpreter unless ``conf`` names another (``spark.pyspark.python``). Enough for
    ``run_resolve``, whose tasks are plain RDD tasks: a SparkSession's start (the SQL engine's classes)
    costs seconds it does not need. A driver JVM this call launches starts with ``jvm``'s options
    (``create_archive``, ``quick_start``: see ``jvm.driver_java_options``); with ``quick_start`` its Python
    daemons run ``spark.daemon`` where the executors can import it. ``conf`` entries override the
    small-session defaults."""
    try:
        from pyspark import SparkConf, SparkContext
        from pyspark.find_spark_home import _find_spark_home
    except ImportError as err:
        raise SparkSetupError("pyspark is not installed: pip install 'binlog-model[spark]'") from err
    from binlog_model.spark.daemon import DAEMON_MODULE, executors_import_package
    from binlog_model.spark.jvm import (
        driver_java_options,
        executor_java_options,
        hot_class_path,
        is_local_cluster,
        is_local_master,
    )

    if conf and conf.get("spark.pyspark.python"):
        # pyspark takes the Python of its workers (the data source's planner too) from this variable;
        # spark-submit sets it from the same setting.
        os.environ["PYSPARK_PYTHON"] = conf["spark.pyspark.python"]
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    settings = {"spark.ui.enabled": "false", "spark.driver.memory": "1g",
                "spark.ui.showConsoleProgress": "false", **(conf or {})}
    spark_home = _find_spark_home()
    if SparkContext._gateway is None and "PYSPARK_GATEWAY_PORT" not in os.environ:
        # This call launches the driver's JVM (spark-submit reads these options): its quick start.
        class_path = hot_class_path(settings.get("spark.driver.extraClassPath"), spark_home)
        if class_path:
            settings["spark.driver.extraClassPath"] = class_path
        settings["spark.driver.extraJavaOptions"] = driver_java_options(
            settings.get("spark.driver.extraJavaOptions"), spark_home,
            _archive_key(settings, class_path, runs_tasks=is_local_master(master)),
            create_archive=create_archive, quick_start=quick_start)
    if quick_start:
        class_path = settings.get("spark.executor.extraClassPath", "")
        if is_local_cluster(master):        # a remote node's jars are elsewhere
            class_path = hot_class_path(class_path, spark_home)
            if class_path:
                settings["spark.executor.extraClassPath"] = class_path
        settings["spark.executor.extraJavaOptions"] = executor_java_options(
            settings.get("spark.executor.extraJavaOptions"), master, spark_home,
            _archive_key(settings, class_path), create_archive=create_archive)
        if executors_import_package(master, settings):
            settings["spark.python.daemon.module"] = DAEMON_MODULE
    spark_conf = SparkConf().setMaster(master).setAppName(app)
    for key, value in settings.items():
        spark_conf.set(key, value)
    context = SparkContext.getOrCreate(spark_conf)
    context.setLogLevel(log_level)
    return context


def _archive_key(settings: Mapping[str, str], class_path: str, *, runs_tasks: bool = False) -> str:
    """What besides Spark's jars a JVM's class archive depends on: the added jars and class path, and for a
    driver whether it runs the tasks too (``local[N]``: it also loads the executor's classes)."""
    return f"{settings.get('spark.jars') or ''}|{class_path}{'|tasks' if runs_tasks else ''}"


def local_session(master: str = "local[2]", *, app: str = "binlog-model",
                  conf: Mapping[str, str] | None = None, log_level: str = "ERROR",
                  create_archive: bool = False, quick_start: bool = False) -> Any:
    """A SparkSession on ``local_context``'s context, the data source registered (what DataFrame users and
    ``resolve --stream`` need)."""
    from pyspark.sql import SparkSession

    local_context(master, app=app, conf=conf, log_level=log_level, create_archive=create_archive,
                  quick_start=quick_start)
    builder = SparkSession.builder
    for key, value in {"spark.sql.shuffle.partitions": "2", "spark.sql.session.timeZone": "UTC",
                       **{k: v for k, v in (conf or {}).items() if k.startswith("spark.sql.")}}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    from binlog_model.spark import register
    register(spark)
    return spark


def warm_workers(spark: Any) -> None:
    """Start every core's Python worker now, in a background job, so their start (the daemon's fork, the
    imports of pyarrow and this package) overlaps the driver's pre-pass instead of delaying the first
    slices. Workers are reused (``spark.python.worker.reuse``), so the slice tasks find them running. A
    failure here is left to the real job to report."""
    context = spark_context(spark)
    cores = max(1, context.defaultParallelism)

    def run() -> None:
        with contextlib.suppress(Exception):
            context.parallelize(range(cores), cores).foreach(_import_task_modules)

    threading.Thread(target=run, name="binlog-model-warm-workers", daemon=True).start()


def _import_task_modules(_item: Any) -> None:
    import binlog_model.spark.typed_write  # noqa: F401 - the import is the point


def spark_context(spark: Any) -> Any:
    """The SparkContext of a SparkSession, or the context itself (``run_resolve`` takes either)."""
    return getattr(spark, "sparkContext", spark)


def stop_quickly(spark: Any) -> None:
    """``spark.stop()`` (a SparkSession or its context) without its wait for pyspark's accumulator server:
    that server's one thread sits in a handler that polls the JVM's connection once a second, and
    ``stop()`` waits for it to notice, up to a second of nothing at the end of every command. Here the
    server is told to end and its socket closed, and its thread (a daemon) ends at its next poll."""
    server = getattr(spark_context(spark), "_accumulatorServer", None)
    if server is not None and hasattr(server, "server_shutdown"):
        def shutdown() -> None:
            server.server_shutdown = True                   # the handler's loop condition
            server._BaseServer__shutdown_request = True     # serve_forever's, as BaseServer.shutdown sets it
            server.server_close()
            if isinstance(server.server_address, str):      # a unix socket: its file, as pyspark removes it
                with contextlib.suppress(OSError):
                    os.remove(server.server_address)
        server.shutdown = shutdown
    spark.stop()
