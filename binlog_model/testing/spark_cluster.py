"""A real Spark standalone cluster on 127.0.0.1 for tests and benchmarks: a master and N workers, each a JVM
of its own started from the installed pyspark's ``spark-class``.

Strategy: ``SPARK_HOME`` points at the pyspark package (it carries ``bin/`` and ``jars/``), and
``SPARK_LOCAL_IP=127.0.0.1`` binds every port (RPC, web UI) to loopback. Readiness is read from the master's
``/json`` status page (workers alive), not from log lines. The workers get a clean environment: no
``PYTHONPATH`` and no ``PYSPARK_PYTHON`` of the caller, so an executor sees only what the application
ships or configures (``spark.executorEnv.*``, ``spark.pyspark.python``, ``--py-files``), as on a real
cluster. ``extra_env`` is the node configuration every executor inherits (an object store's ``AWS_*``
variables, say). Stopped by pid, workers first. ``bare_python`` makes a Python that lacks this package
(a venv holding only the named packages of this one, linked), for executors "without the package".
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["SparkCluster", "bare_python", "node_env", "spark_home", "spark_submit"]

# The caller's variables a node of a real cluster would not have.
_NOT_INHERITED = ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYSPARK_SUBMIT_ARGS",
                  "SPARK_CONF_DIR", "VIRTUAL_ENV")


def spark_home() -> str:
    """The installed pyspark package directory, which is a Spark distribution (``bin/``, ``jars/``)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("pyspark is not installed")
    return str(spec.submodule_search_locations[0])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def node_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a cluster process (master, worker, spark-submit): loopback, pyspark's Spark."""
    env = {k: v for k, v in os.environ.items() if k not in _NOT_INHERITED}
    env.update(SPARK_HOME=spark_home(), SPARK_LOCAL_IP="127.0.0.1", SPARK_DAEMON_MEMORY="256m")
    env.update(extra or {})
    return env


class SparkCluster:
    """``with SparkCluster(workers=2) as cluster: cluster.submit([...])``; ``cluster.master_url``."""

    def __init__(self, *, workers: int = 2, cores: int = 1, memory: str = "1g",
                 work_dir: str | os.PathLike[str] | None = None, extra_env: Mapping[str, str] | None = None
                 ) -> None:
        self.workers = workers
        self.cores = cores
        self.memory = memory
        self.work_dir = Path(work_dir) if work_dir else Path(tempfile.mkdtemp(prefix="binlog-model-spark-"))
        self.extra_env = dict(extra_env or {})
        self.port = _free_port()
        self.ui_port = _free_port()
        self.master_url = f"spark://127.0.0.1:{self.port}"
        self._procs: list[subprocess.Popen[bytes]] = []

    def _spawn(self, name: str, args: Sequence[str]) -> subprocess.Popen[bytes]:
        log = open(self.work_dir / f"{name}.log", "ab")  # noqa: SIM115 - the child keeps it
        proc = subprocess.Popen([os.path.join(spark_home(), "bin", "spark-class"), *args], stdout=log,
                                stderr=subprocess.STDOUT, env=node_env(self.extra_env), cwd=self.work_dir)
        log.close()
        self._procs.append(proc)
        return proc

    def status(self) -> dict[str, Any]:
        """The master's ``/json`` status page (``aliveworkers``, ``activeapps``, ``completedapps`` ...)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=5) as answer:
            return json.loads(answer.read())

    def start(self, timeout: float = 120.0, *, wait: bool = True) -> SparkCluster:
        """Start the master and the workers; with ``wait`` (default) return once every worker registered
        (else call ``wait`` later: the JVMs boot while the caller does something else)."""
        self._spawn("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(self.port), "--webui-port", str(self.ui_port)])
        for n in range(self.workers):
            work = self.work_dir / f"worker-{n}"
            work.mkdir(exist_ok=True)
            self._spawn(f"worker-{n}", ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                        "--port", str(_free_port()), "--webui-port", str(_free_port()),
                                        "--cores", str(self.cores), "--memory", self.memory,
                                        "--work-dir", str(work), self.master_url])
        return self.wait(timeout) if wait else self

    def wait(self, timeout: float = 120.0) -> SparkCluster:
        """Return once every worker has registered with the master; ``RuntimeError`` (and everything
        stopped) when a process exits or ``timeout`` passes first."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.status().get("aliveworkers", 0) >= self.workers:
                    return self
            except OSError:
                pass
            dead = [p for p in self._procs if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                self.stop()
                logs = "\n".join(p.read_text(errors="replace")[-1500:] for p in self.work_dir.glob("*.log"))
                raise RuntimeError(f"the Spark cluster did not start ({len(dead)} processes exited):\n{logs}")
            time.sleep(0.5)

    def stop(self) -> None:
        procs, self._procs = self._procs, []
        for proc in reversed(procs):          # workers (and their executors) before the master
            if proc.poll() is None:
                proc.terminate()
        for proc in reversed(procs):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)

    def __enter__(self) -> SparkCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def submit(self, args: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
               timeout: float = 600) -> subprocess.CompletedProcess[str]:
        """``spark-submit --master <this cluster> ARGS`` (stdout and stderr captured)."""
        return spark_submit(["--master", self.master_url, *args], env={**self.extra_env, **(env or {})},
                            cwd=cwd, timeout=timeout)

    def executor_logs(self) -> dict[str, str]:
        """Every executor's stderr so far, by path (``worker-N/app-.../ID/stderr``)."""
        logs = sorted(self.work_dir.glob("worker-*/*/*/stderr"))
        return {str(p): p.read_text(errors="replace") for p in logs}


def spark_submit(args: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
                 timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """The installed pyspark's ``spark-submit ARGS``, a node's environment plus ``env``, output captured."""
    return subprocess.run([os.path.join(spark_home(), "bin", "spark-submit"), *args], env=node_env(env),
                          cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)


def bare_python(dest: str | os.PathLike[str], packages: Sequence[str] = ("pyarrow",)) -> str:
    """A Python without this package: a fresh venv (no pip) of this interpreter's base Python, holding only
    ``packages`` of this environment (linked, not copied). Returns its ``bin/python``."""
    dest = Path(dest)
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(dest)], check=True, capture_output=True)
    site = next((dest / "lib").glob("python3*/site-packages"))
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise RuntimeError(f"{name} is not installed here")
        source = Path(next(iter(spec.submodule_search_locations)))
        (site / source.name).symlink_to(source)
        for extra in source.parent.glob(f"{name}.libs"):      # vendored shared libraries, when any
            (site / extra.name).symlink_to(extra)
    return str(dest / "bin" / "python")
