"""MySQL 5.7 / 8.0 servers in Docker (testcontainers), with the same API shape as ``MariaDBServer``.

Strategy: a plain ``testcontainers`` ``DockerContainer`` per server, started from the official ``mysql``
image with ``MYSQL_ALLOW_EMPTY_PASSWORD=1`` and the server flags given on the command line (the image's
entrypoint passes them to ``mysqld``). Readiness is "root can connect over the mapped TCP port": the image's
first-boot init runs a temporary server with networking off, so a TCP connection only succeeds once the real
server is up. Binlog files are copied out with the Docker API's ``get_archive`` (what ``docker cp`` does).

``docker_available()`` pings the engine with a short timeout, so test fixtures can skip quickly with the
reason where no Docker engine answers (as on machines without Docker).
"""

from __future__ import annotations

import contextlib
import io
import shutil
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from binlog_model.errors import ConfigError
from binlog_model.testing.sqlserver import HarnessError, SqlServer

__all__ = [
    "MYSQL80_COMPRESSED_FLAGS",
    "MYSQL80_FLAGS",
    "SERVER_KINDS",
    "SPEC_MYSQL57_FLAGS",
    "MySQLContainerServer",
    "docker_available",
    "docker_client",
    "server_for",
]

# Exactly the server flags of the functional spec's MySQL 5.7 example.
SPEC_MYSQL57_FLAGS: tuple[str, ...] = (
    "--binlog-format=row",
    "--binlog-row-image=noblob",
    "--binlog-rows-query-log-events",
    "--enforce-gtid-consistency",
    "--gtid-mode=ON",
    "--log-bin=binlog",
    "--master-info-repository=TABLE",
    "--server-id=12345",
)
# MySQL 8.0: the same, plus the optional TABLE_MAP metadata (column names, signedness, charsets, PK ...).
MYSQL80_FLAGS: tuple[str, ...] = (*SPEC_MYSQL57_FLAGS, "--binlog-row-metadata=FULL")
# MySQL 8.0 with zstd-compressed transactions (TRANSACTION_PAYLOAD_EVENT).
MYSQL80_COMPRESSED_FLAGS: tuple[str, ...] = (*MYSQL80_FLAGS, "--binlog-transaction-compression=ON")

SERVER_KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "mysql57": ("mysql:5.7", SPEC_MYSQL57_FLAGS),
    "mysql80": ("mysql:8.0", MYSQL80_FLAGS),
    "mysql80_compressed": ("mysql:8.0", MYSQL80_COMPRESSED_FLAGS),
}

_PING_TIMEOUT = 3
_DATADIR = "/var/lib/mysql"


def docker_available() -> tuple[bool, str]:
    """Does a Docker engine answer a ping within a few seconds? ``(True, version)`` or ``(False, reason)``.

    Never raises; the reason starts with ``no Docker engine:`` so a pytest skip summary says it plainly.
    """
    try:
        import docker
    except ImportError as err:
        return False, f"no Docker engine: docker SDK not installed ({err}); install the 'fixtures' extra"
    try:
        client = docker.from_env(timeout=_PING_TIMEOUT)
        try:
            client.ping()
            version = client.version().get("Version", "?")
        finally:
            client.close()
    except Exception as err:  # the SDK raises DockerException, requests and OS errors alike
        return False, f"no Docker engine: {err}"
    return True, f"Docker engine {version}"


def docker_client() -> Any:
    """A docker SDK client from the environment (``DOCKER_HOST`` or the default socket)."""
    import docker

    return docker.from_env(timeout=30)


def server_for(kind: str) -> MySQLContainerServer:
    """A not-yet-started server of one of ``SERVER_KINDS``: mysql57, mysql80, mysql80_compressed."""
    try:
        image, flags = SERVER_KINDS[kind]
    except KeyError:
        raise ConfigError(f"unknown server kind {kind!r}; expected one of {sorted(SERVER_KINDS)}") from None
    return MySQLContainerServer(image=image, flags=flags)


class MySQLContainerServer(SqlServer):
    """An official ``mysql`` image in Docker, root without password, binlog flags from ``flags``."""

    start_timeout = 180.0  # first boot initialises a datadir (and may pull the image before that)

    def __init__(self, image: str = "mysql:5.7", flags: Sequence[str] = SPEC_MYSQL57_FLAGS) -> None:
        self.image = image
        self.flags = tuple(flags)
        self.binlog_basename = _flag_value(self.flags, "--log-bin") or "binlog"
        self.binlog_dir = _DATADIR  # inside the container
        self.version = ""
        self.host = ""
        self.port = 0
        self.startup_seconds = 0.0
        self._container: Any = None
        self._tmp: Path | None = None
        super().__init__()
        self.label = image

    @property
    def running(self) -> bool:
        return self._container is not None

    def _launch(self, began: float) -> None:
        """Start the container and wait until root can connect; else ``HarnessError`` with the log tail."""
        from testcontainers.core.container import DockerContainer

        if self._container is not None:
            raise HarnessError(f"{self.image} container already started")
        try:
            container = (DockerContainer(self.image)
                         .with_env("MYSQL_ALLOW_EMPTY_PASSWORD", "1")
                         .with_command(list(self.flags))
                         .with_exposed_ports(3306))
            container.start()
        except Exception as err:
            raise HarnessError(f"cannot start {self.image} container: {err}") from err
        self._container = container
        self.host = container.get_container_host_ip()
        self.port = int(container.get_exposed_port(3306))
        self._wait_ready(began)

    def stop(self) -> None:
        """Stop and remove the container and the local copies of collected binlogs. Idempotent."""
        container, self._container = self._container, None
        if container is not None:
            with contextlib.suppress(Exception):
                container.stop()
        tmp, self._tmp = self._tmp, None
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        self._collected.clear()

    def _endpoint(self) -> dict[str, Any]:
        return {"host": self.host, "port": self.port}

    def flush_and_collect(self, dest_dir: Path | None = None, *,
                          include_previous: bool = False) -> list[Path]:
        """``FLUSH BINARY LOGS`` and copy the closed binlog files out of the container, oldest first.

        Same selection as ``MariaDBServer.flush_and_collect``. Without ``dest_dir`` the copies go to a temp
        directory that ``stop()`` removes.
        """
        if self._container is None:
            raise HarnessError(f"{self.image} container is not started")
        closed = self._flush_closed_names(include_previous)
        if dest_dir is None:
            if self._tmp is None:
                self._tmp = Path(tempfile.mkdtemp(prefix="binlog-model-mysql-"))
            dest_dir = self._tmp
        dest = Path(dest_dir)
        dest.mkdir(parents=True, exist_ok=True)
        wrapped = self._container.get_wrapped_container()
        return [_copy_out(wrapped, f"{self.binlog_dir}/{name}", dest / name) for name in closed]

    def reproducible_flags(self) -> list[str]:
        """The image and server flags (for fixture metadata)."""
        return [f"image={self.image}", *self.flags]

    def log_tail(self, lines: int = 40) -> str:
        """The last ``lines`` lines of the container's output ('' if unavailable)."""
        if self._container is None:
            return ""
        try:
            out, err = self._container.get_logs()
        except Exception:
            return ""
        text = (out + err).decode(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def __repr__(self) -> str:
        return f"MySQLContainerServer(image={self.image!r}, port={self.port or None})"


def _flag_value(flags: Sequence[str], name: str) -> str | None:
    for flag in flags:
        if flag.startswith(name + "="):
            return flag.split("=", 1)[1]
    return None


def _copy_out(container: Any, source: str, target: Path) -> Path:
    try:
        chunks, _stat = container.get_archive(source)
        data = b"".join(chunks)
    except Exception as err:
        raise HarnessError(f"cannot copy {source} out of the container: {err}") from err
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        member = next((m for m in tar.getmembers() if m.isfile()), None)
        extracted = tar.extractfile(member) if member is not None else None
        if extracted is None:
            raise HarnessError(f"docker get_archive of {source} returned no regular file")
        target.write_bytes(extracted.read())
    return target
