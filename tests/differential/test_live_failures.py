"""Transient or permanent, decided once (issue 39, item 7), against real servers: what cannot heal ends
``tail`` and a ``mysql://`` snapshot at once with one line naming the cause and the remedy (a missing
privilege names its ``GRANT``, and that ``GRANT`` is enough); an unreachable server fails the first
connection after ``--connect-timeout``; and a server restarted under a running tail is waited for, however
short ``--connect-timeout`` is, once a session worked. (A purged position: ``test_tail.py``'s
``test_purged_position_exits_3``.)
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from binlog_model.testing.localserver import LocalServer, free_port
from tests._live import assert_one_error, snapshot, tail_output, tail_to_end

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "fail-pw-1"
Capture = pytest.CaptureFixture[str]


@pytest.fixture(autouse=True)
def _password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BINLOG_MODEL_PASSWORD", PASSWORD)


def _account(server: LocalServer, *statements: str) -> None:
    """Account statements kept out of the binlog (the session servers' binlogs are other tests' input)."""
    server.execute(["SET SESSION sql_log_bin = 0", *statements])


def test_missing_privileges_name_the_grant(server: LocalServer, fresh_db: str, capsys: Capture,
                                          tmp_path: Path) -> None:
    """A user without replication privileges: the tail stops at once, naming the GRANT; with only one of
    the two, it names it again; with the GRANT it named, the tail runs. A snapshot without SELECT names
    its GRANT the same way."""
    user = f"np_{secrets.token_hex(3)}"
    _account(server, f"CREATE USER '{user}'@'%' IDENTIFIED BY '{PASSWORD}'")
    try:
        file, offset = server.binlog_position()
        url = f"mysql://{user}@127.0.0.1:{server.port}"
        start = ("--from", f"{file}:{offset}")
        grant = f"GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '{user}'@'%'"
        assert_one_error(tail_to_end(capsys, url, tmp_path / "a", *start), "PrivilegeError", grant,
                         f"127.0.0.1:{server.port}")
        _account(server, f"GRANT REPLICATION CLIENT ON *.* TO '{user}'@'%'")       # not REPLICATION SLAVE
        assert_one_error(tail_to_end(capsys, url, tmp_path / "b", *start), "PrivilegeError", grant,
                         "REPLICATION SLAVE")
        _account(server, f"GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '{user}'@'%'")
        status, _, lines = tail_to_end(capsys, url, tmp_path / "c", *start)
        assert status == 0, lines

        server.execute(f"CREATE TABLE `{fresh_db}`.t (id INT PRIMARY KEY)")
        assert_one_error(snapshot(capsys, f"{url}/{fresh_db}", tmp_path), "ConfigError",
                         f"GRANT SELECT ON `{fresh_db}`.* TO '{user}'")
        _account(server, f"GRANT SELECT ON `{fresh_db}`.* TO '{user}'@'%'")
        status, out, lines = snapshot(capsys, f"{url}/{fresh_db}", tmp_path)
        assert status == 0, lines
        assert f'"{fresh_db}"' in out
    finally:
        _account(server, f"DROP USER '{user}'@'%'")


def test_wrong_password_fails_at_once(mariadb: LocalServer, capsys: Capture, tmp_path: Path) -> None:
    user = f"pw_{secrets.token_hex(3)}"
    _account(mariadb, f"CREATE USER '{user}'@'%' IDENTIFIED BY 'another-password'")
    try:
        url = f"mysql://{user}@127.0.0.1:{mariadb.port}"
        # a long --connect-timeout: a refusal that were retried would not end in time (pytest-timeout)
        assert_one_error(tail_to_end(capsys, url, tmp_path, "--connect-timeout", "600"),
                         "ServerAuthenticationError", user, "password")
    finally:
        _account(mariadb, f"DROP USER '{user}'@'%'")


@pytest.mark.timeout(120)
def test_unknown_host_fails_at_once(capsys: Capture, tmp_path: Path) -> None:
    """DNS has no such name: not retried for the 600 s of --connect-timeout."""
    url = "mysql://u@nonexistent.invalid:3306"
    assert_one_error(tail_to_end(capsys, url, tmp_path, "--connect-timeout", "600"),
                     "UnknownHostError", "nonexistent.invalid")
    assert_one_error(snapshot(capsys, f"{url}/db?connect-timeout=600", tmp_path),
                     "UnknownHostError", "nonexistent.invalid")


def test_unreachable_first_connection_fails_after_connect_timeout(capsys: Capture, tmp_path: Path) -> None:
    """Nothing listens on the port: the first connection is retried for --connect-timeout, then one line
    names host:port, the cause and the remedy (no hanging cron job)."""
    port = free_port()
    url = f"mysql://u@127.0.0.1:{port}"
    for outcome in (tail_to_end(capsys, url, tmp_path, "--connect-timeout", "0.5"),
                    snapshot(capsys, f"{url}/db?connect-timeout=0.5", tmp_path)):
        assert_one_error(outcome, "ServerUnreachableError", f"127.0.0.1:{port}", "within 0.5 s", "refused",
                         "--connect-timeout")


def test_first_connection_is_retried_until_connect_timeout(capsys: Capture, tmp_path: Path) -> None:
    """A listener that hangs up on every connection (a server restarting behind a proxy): the first
    connection is tried again and again within --connect-timeout, then the run fails naming it."""
    accepted = []
    done = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)       # (a closed socket does not wake a blocked accept: the loop looks)
    port = listener.getsockname()[1]

    def hang_up() -> None:
        while not done.is_set():
            with contextlib.suppress(TimeoutError):
                conn, _ = listener.accept()
                accepted.append(1)
                conn.close()
    thread = threading.Thread(target=hang_up, daemon=True)
    thread.start()
    try:
        outcome = tail_to_end(capsys, f"mysql://u@127.0.0.1:{port}", tmp_path, "--connect-timeout", "1")
    finally:
        done.set()
        thread.join(timeout=10)
        listener.close()
    assert_one_error(outcome, "ServerUnreachableError", f"127.0.0.1:{port}", "within 1 s")
    assert len(accepted) >= 2, "the first connection was not tried again"


def test_server_killed_and_restarted_under_a_running_tail(tmp_path: Path) -> None:
    """Once a session worked, a lost dump and refused connections (the server killed, then starting) are
    retried, whatever --connect-timeout says, and the tail resumes where it was."""
    from binlog_model.testing.mariadb import MariaDBServer, mariadb_available

    ok, reason = mariadb_available()
    if not ok:
        pytest.skip(f"no local MariaDB: {reason}")
    with MariaDBServer() as server:
        server.execute(["SET SESSION sql_log_bin = 0", f"CREATE USER 'rs'@'%' IDENTIFIED BY '{PASSWORD}'",
                        "GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'rs'@'%'"])
        server.execute(["CREATE DATABASE rs", "CREATE TABLE rs.t (id INT PRIMARY KEY, v VARCHAR(20))",
                        "INSERT INTO rs.t VALUES (1, 'before-restart')"])
        log = tmp_path / "tail.log"
        args = ["tail", f"mysql://rs@127.0.0.1:{server.port}", "--state", str(tmp_path / "state"), "--out",
                str(tmp_path / "out"), "--heartbeat", "1s", "--commit-interval", "50ms", "--connect-timeout",
                "0.5"]
        env = {**os.environ, "PYTHONPATH": str(ROOT), "BINLOG_MODEL_PASSWORD": PASSWORD}
        with open(log, "wb") as err:
            tail = subprocess.Popen([sys.executable, "-m", "binlog_model.cli", *args], cwd=ROOT, env=env,
                                    stdout=subprocess.DEVNULL, stderr=err)
        try:
            _wait_until(tail, lambda: "before-restart" in tail_output(tmp_path))
            # killed (no shutdown; the harness started it, by its pid), then started on the same datadir
            assert server.pid is not None
            os.kill(server.pid, signal.SIGKILL)
            # refused twice while it is down (the second past the 0.5 s of --connect-timeout), then back
            _wait_until(tail, lambda: log.read_text().count("Connection refused") >= 2)
            server.restart()
            server.execute("INSERT INTO rs.t VALUES (2, 'after-restart')")
            _wait_until(tail, lambda: "after-restart" in tail_output(tmp_path))
            tail.send_signal(signal.SIGTERM)
            tail.wait(timeout=60)
        finally:
            if tail.poll() is None:
                tail.kill()
                tail.wait()
        text = log.read_text()
        assert tail.returncode == 0, text
        assert "reconnecting" in text, text
        # (the statement once: the row was not written again by the resumed session)
        assert tail_output(tmp_path).count("VALUES (1, 'before-restart')") == 1, "resumed without repeating"


def _wait_until(tail: subprocess.Popen[bytes], ready: object, timeout: float = 60) -> None:
    """Until ``ready()``; fails when the tail exits first or nothing happens in ``timeout`` seconds."""
    assert callable(ready)
    deadline = time.monotonic() + timeout
    while not ready():
        assert tail.poll() is None, f"the tail exited with {tail.returncode}"
        assert time.monotonic() < deadline, "the tail did not get there"
        time.sleep(0.05)
