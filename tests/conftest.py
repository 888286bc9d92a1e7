"""Shared pytest fixtures: one real MariaDB per test session, a fresh database per test, Docker servers.

Strategy: the session-scoped ``mariadb`` server starts once (about a second) and is always stopped at
session end, even when tests fail. Tests isolate themselves with ``fresh_db`` (a uniquely named database,
dropped afterwards) and set per-session options such as ``binlog_row_image`` on their own connection.
Where a server cannot exist (no mariadbd, no Docker engine) the fixture skips with the reason, which
``-ra`` prints in the summary.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Iterator
from typing import Any

import pytest

from binlog_model.testing.mariadb import MariaDBServer, mariadb_available

_db_counter = itertools.count(1)


@pytest.fixture(scope="session")
def mariadb() -> Iterator[MariaDBServer]:
    """A running local MariaDB (ROW binlog, FULL row image, FULL row metadata, GTID, ANNOTATE_ROWS)."""
    ok, reason = mariadb_available()
    if not ok:
        pytest.skip(f"no local MariaDB: {reason}")
    server = MariaDBServer(row_image="FULL", row_metadata="FULL")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fresh_db(mariadb: MariaDBServer) -> Iterator[str]:
    """Create a uniquely named database (``t_<counter>_<hex>``) on the session server; drop it afterwards."""
    name = f"t_{next(_db_counter)}_{secrets.token_hex(3)}"
    mariadb.execute(f"CREATE DATABASE `{name}`")
    try:
        yield name
    finally:
        if mariadb.running:
            mariadb.execute(f"DROP DATABASE IF EXISTS `{name}`")


# --- Docker-backed MySQL servers (testcontainers); skipped where no engine answers -----------------------


@pytest.fixture(scope="session")
def docker_client() -> Any:
    """A docker SDK client whose engine answered a ping; skips with the reason otherwise."""
    from binlog_model.testing.containers import docker_available
    from binlog_model.testing.containers import docker_client as make_client

    ok, reason = docker_available()
    if not ok:
        pytest.skip(reason)
    return make_client()


def _container(docker_client: Any, kind: str) -> Iterator[Any]:
    from binlog_model.testing.containers import server_for

    server = server_for(kind)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def mysql57(docker_client: Any) -> Iterator[Any]:
    """``mysql:5.7`` with exactly the spec's flags (NOBLOB image, ROWS_QUERY events, GTID on)."""
    yield from _container(docker_client, "mysql57")


@pytest.fixture(scope="session")
def mysql80(docker_client: Any) -> Iterator[Any]:
    """``mysql:8.0`` with the spec's flags plus ``--binlog-row-metadata=FULL``."""
    yield from _container(docker_client, "mysql80")


@pytest.fixture(scope="session")
def mysql80_compressed(docker_client: Any) -> Iterator[Any]:
    """``mysql:8.0`` as ``mysql80`` plus ``--binlog-transaction-compression=ON`` (TRANSACTION_PAYLOAD)."""
    yield from _container(docker_client, "mysql80_compressed")
