"""Shared pytest fixtures: one real MariaDB 10.11, one MariaDB 11.8 and one MySQL 9 per test session, a fresh
database per test.

Strategy: the session-scoped ``mariadb`` (the machine's 10.11), ``mariadb11`` (Debian sid's 11.8 LTS) and
``mysql`` (Debian sid's 9.7) servers start once (about a second each) and are always stopped at session end,
even when tests fail. ``server`` is parametrized over the three kinds, so a test that takes it runs once per
server (ids ``[mariadb]`` / ``[mariadb11]`` / ``[mysql]``); ``fresh_db`` is a uniquely named database on that
same server, dropped afterwards. ``scratch`` is a second server of the same kind, started on first use and
shared by the session's tests of that kind (an independent replay target). Tests set per-session options such
as ``binlog_row_image`` on their own connection. Where a server cannot exist (no mariadbd, the pinned sid
build of MySQL or MariaDB 11.8 not to be had, no Docker engine) the fixture skips with the reason, and the run
ends with one line naming each missing server kind and why (``pytest_terminal_summary``); in CI
(``BINLOG_MODEL_REQUIRE_SERVERS`` or ``CI`` set) a missing local server kind fails instead
(``binlog_model.testing.availability``). A test never runs on another server instead, and a started server of
the wrong product or series fails the fixture.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Iterator
from typing import Any

import pytest

from binlog_model.testing.availability import missing_servers, servers_required
from binlog_model.testing.localserver import LocalServer
from binlog_model.testing.mariadb import MariaDBServer, mariadb_available
from binlog_model.testing.mariadb11 import MARIADB11_SERIES, MariaDB11Server, mariadb11_available
from binlog_model.testing.mysql import MySQLServer, mysql_available

#: the local server kinds every server-backed test runs on
SERVER_KINDS = ("mariadb", "mariadb11", "mysql")

_db_counter = itertools.count(1)


def _session_server(server: LocalServer) -> Iterator[Any]:
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def mariadb() -> Iterator[MariaDBServer]:
    """A running local MariaDB (ROW binlog, FULL row image, FULL row metadata, GTID, ANNOTATE_ROWS)."""
    ok, reason = mariadb_available()
    if not ok:
        pytest.skip(f"no local MariaDB: {reason}")
    yield from _session_server(MariaDBServer(row_image="FULL", row_metadata="FULL"))


@pytest.fixture(scope="session")
def mariadb11() -> Iterator[MariaDB11Server]:
    """A running local MariaDB 11.8 LTS (Debian sid build; the ``mariadb`` options, 11.8's own charset)."""
    ok, reason = mariadb11_available()
    if not ok:
        pytest.skip(f"no local MariaDB 11.8: {reason}")
    for server in _session_server(MariaDB11Server(row_image="FULL", row_metadata="FULL")):
        if not server.version.startswith(MARIADB11_SERIES) or "mariadb" not in server.version.lower():
            pytest.fail(f"the MariaDB 11.8 harness started {server.version}, not MariaDB {MARIADB11_SERIES}x")
        yield server


@pytest.fixture(scope="session")
def mysql() -> Iterator[MySQLServer]:
    """A running local MySQL 9 (Debian sid build; ROW binlog, FULL image, FULL metadata, GTID, ROWS_QUERY)."""
    ok, reason = mysql_available()
    if not ok:
        pytest.skip(f"no local MySQL: {reason}")
    for server in _session_server(MySQLServer(row_image="FULL", row_metadata="FULL")):
        if "mariadb" in server.version.lower():  # never let MariaDB stand in for MySQL
            pytest.fail(f"the MySQL harness started {server.version}, not MySQL")
        yield server


@pytest.fixture(scope="session", params=SERVER_KINDS)
def server(request: pytest.FixtureRequest) -> LocalServer:
    """The session server of each kind in turn: the test runs on MariaDB 10.11, MariaDB 11.8 and MySQL."""
    return request.getfixturevalue(request.param)  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def _scratch_servers() -> Iterator[dict[str, LocalServer]]:
    """The scratch servers started so far, by kind; all stopped at session end."""
    started: dict[str, LocalServer] = {}
    try:
        yield started
    finally:
        for scratch in started.values():
            scratch.stop()


@pytest.fixture
def scratch(server: LocalServer, _scratch_servers: dict[str, LocalServer]) -> LocalServer:
    """A second server of ``server``'s kind, empty of test data, to replay into (an oracle that shares nothing
    with the session server). Started on first use, then shared by the session's tests of that kind: each
    replays into a database of its own."""
    if server.label not in _scratch_servers:
        started = type(server)(row_image="FULL", row_metadata="FULL")   # type: ignore[call-arg]
        started.start()
        _scratch_servers[server.label] = started
    return _scratch_servers[server.label]


def _fresh_database(server: LocalServer) -> Iterator[str]:
    name = f"t_{next(_db_counter)}_{secrets.token_hex(3)}"
    server.execute(f"CREATE DATABASE `{name}`")
    try:
        yield name
    finally:
        if server.running:
            server.execute(f"DROP DATABASE IF EXISTS `{name}`")


@pytest.fixture
def fresh_db(server: LocalServer) -> Iterator[str]:
    """A uniquely named database (``t_<counter>_<hex>``) on ``server``; dropped afterwards."""
    yield from _fresh_database(server)


@pytest.fixture
def mariadb_db(mariadb: MariaDBServer) -> Iterator[str]:
    """As ``fresh_db``, on the MariaDB session server only (for MariaDB-only features)."""
    yield from _fresh_database(mariadb)


@pytest.fixture
def mariadb11_db(mariadb11: MariaDB11Server) -> Iterator[str]:
    """As ``fresh_db``, on the MariaDB 11.8 session server only (for what only 11.8 shows)."""
    yield from _fresh_database(mariadb11)


@pytest.fixture
def mysql_db(mysql: MySQLServer) -> Iterator[str]:
    """As ``fresh_db``, on the MySQL session server only (for MySQL-only features)."""
    yield from _fresh_database(mysql)


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


#: fixtures that bring up a real server: a test taking one (directly or through another fixture) is marked
#: ``server`` here, so a module's pure tests still run under ``-m "not server"``
_SERVER_FIXTURES = frozenset({"server", "mariadb", "mariadb11", "mysql", "fresh_db", "mariadb_db",
                              "mariadb11_db", "mysql_db"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _SERVER_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.server)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter: Any) -> Iterator[None]:
    """Last, after the short test summary: one line naming each local server kind that could not be had
    (its tests skipped; in CI they failed), and why."""
    yield
    missing = missing_servers()
    if missing:
        what = ("missing, required in this run: their tests failed" if servers_required()
                else "missing here: their tests skipped")
        terminalreporter.write_line(f"server kinds {what}: " + "; ".join(
            f"{kind}: {reason}" for kind, reason in sorted(missing.items())), yellow=True, bold=True)
