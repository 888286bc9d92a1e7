"""Live connections against real servers: TLS as ``--ssl-mode`` asks (issue 39, item 6), and failures that
cannot heal ending the run at once with one line while those that can are retried (item 7).

The TLS servers (MySQL 9.7, MariaDB 10.11 and 11.8, one each for this module) start with a CA, a server
certificate for the name ``localhost`` only, and a client certificate that the test makes; the session
MariaDB 10.11 offers no TLS at all. Each case runs the tail (``binlog-model tail``, in this process) and a
``mysql://`` schema snapshot (``binlog-model schema --snapshot``), the two kinds of live connection.
Connect timeouts are short, so a failure that is wrongly retried shows as a failure, not as a slow pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from binlog_model.testing.localserver import LocalServer
from tests._certs import SERVER_NAME, Certificates, make_certificates
from tests._live import assert_one_error, snapshot, tail_output, tail_to_end

PASSWORD = "trust-pw-1"
Capture = pytest.CaptureFixture[str]


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("certs"))


def _tls_server(kind: str, certs: Certificates) -> LocalServer:
    tls_args = [f"--ssl-ca={certs.ca}", f"--ssl-cert={certs.server_cert}", f"--ssl-key={certs.server_key}"]
    if kind == "mysql":
        from binlog_model.testing.mysql import MySQLServer, mysql_available
        ok, reason = mysql_available()
        server: LocalServer = MySQLServer(extra_args=tls_args)
    elif kind == "mariadb11":
        from binlog_model.testing.mariadb11 import MariaDB11Server, mariadb11_available
        ok, reason = mariadb11_available()
        server = MariaDB11Server(extra_args=tls_args)
    else:
        from binlog_model.testing.mariadb import MariaDBServer, mariadb_available
        ok, reason = mariadb_available()
        server = MariaDBServer(extra_args=tls_args)
    if not ok:
        pytest.skip(f"no local {kind}: {reason}")
    return server


@pytest.fixture(scope="module", params=["mysql", "mariadb", "mariadb11"])
def tls_server(request: pytest.FixtureRequest, certificates: Certificates) -> Iterator[LocalServer]:
    """A server of this module's own with TLS from the test's certificates, its users and one table."""
    with _tls_server(request.param, certificates) as server:
        # (one connection: its sql_log_bin = 0 keeps the users out of the binlog)
        server.execute(["SET SESSION sql_log_bin = 0",
                        f"CREATE USER 'tls_u'@'%' IDENTIFIED BY '{PASSWORD}' REQUIRE SSL",
                        f"CREATE USER 'x509_u'@'%' IDENTIFIED BY '{PASSWORD}' REQUIRE X509",
                        "GRANT REPLICATION SLAVE, REPLICATION CLIENT, SELECT ON *.* TO 'tls_u'@'%'",
                        "GRANT REPLICATION SLAVE, REPLICATION CLIENT, SELECT ON *.* TO 'x509_u'@'%'"])
        server.execute(["CREATE DATABASE tr", "CREATE TABLE tr.t (id INT PRIMARY KEY, v VARCHAR(10))",
                        "INSERT INTO tr.t VALUES (1, 'over-tls')"])
        yield server


@pytest.fixture(autouse=True)
def _password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BINLOG_MODEL_PASSWORD", PASSWORD)


# --- item 6: TLS ---------------------------------------------------------------------------------------


def test_verify_ca_and_verify_identity_with_the_right_ca(tls_server: LocalServer, certificates: Certificates,
                                                         capsys: Capture, tmp_path: Path) -> None:
    """The CA that signed the server's certificate: verify-ca by address, verify-identity by the name in the
    certificate, both for the dump and for a snapshot (the user may log in over TLS only)."""
    by_ip = f"mysql://tls_u@127.0.0.1:{tls_server.port}"
    by_name = f"mysql://tls_u@{SERVER_NAME}:{tls_server.port}"
    ca = str(certificates.ca)
    status, _, lines = tail_to_end(capsys, by_ip, tmp_path, "--ssl-mode", "verify-ca", "--ssl-ca", ca)
    assert status == 0, lines
    assert "over-tls" in tail_output(tmp_path)
    status, out, lines = snapshot(capsys, f"{by_name}/tr?ssl-mode=verify-identity&ssl-ca={ca}", tmp_path)
    assert status == 0, lines
    assert '"tr"' in out
    # the URL's options and the flags together; the same value both ways is no conflict
    status, _, lines = snapshot(capsys, f"{by_ip}/tr?ssl-ca={ca}", tmp_path, "--ssl-mode", "verify-ca",
                                "--ssl-ca", ca)
    assert status == 0, lines
    assert_one_error(snapshot(capsys, f"{by_ip}/tr?ssl-mode=verify-ca", tmp_path, "--ssl-mode", "required"),
                     "ConfigError", "--ssl-mode required conflicts with ssl-mode=verify-ca")


def test_preferred_uses_tls_and_disabled_does_not(tls_server: LocalServer, capsys: Capture,
                                                  tmp_path: Path) -> None:
    """``tls_u`` may log in over TLS only: the default mode logs in (TLS, as the server offers it), and
    ``disabled`` is refused by the server (the login went in clear)."""
    url = f"mysql://tls_u@127.0.0.1:{tls_server.port}/tr"
    status, _, lines = snapshot(capsys, url, tmp_path)
    assert status == 0, lines
    assert_one_error(snapshot(capsys, url, tmp_path, "--ssl-mode", "disabled"), "ServerAuthenticationError",
                     "tls_u")


def test_wrong_ca_fails_in_one_line(tls_server: LocalServer, certificates: Certificates, capsys: Capture,
                                    tmp_path: Path) -> None:
    url = f"mysql://tls_u@127.0.0.1:{tls_server.port}"
    wrong = str(certificates.other_ca)
    assert_one_error(tail_to_end(capsys, url, tmp_path, "--ssl-ca", wrong), "TlsError", "fails verification",
                     "verify-ca", "--ssl-ca", f"127.0.0.1:{tls_server.port}")
    assert tail_output(tmp_path) == ""
    assert_one_error(snapshot(capsys, f"{url}/tr?ssl-mode=verify-ca&ssl-ca={wrong}", tmp_path),
                     "TlsError", "fails verification")


def test_verify_identity_refuses_another_host_name(tls_server: LocalServer, certificates: Certificates,
                                                   capsys: Capture, tmp_path: Path) -> None:
    """The certificate names ``localhost``; connected to as 127.0.0.1, verify-ca accepts it (above) and
    verify-identity does not."""
    url = f"mysql://tls_u@127.0.0.1:{tls_server.port}"
    verify = ("--ssl-mode", "verify-identity", "--ssl-ca", str(certificates.ca))
    assert_one_error(tail_to_end(capsys, url, tmp_path, *verify), "TlsError", "mismatch", "127.0.0.1")
    assert_one_error(snapshot(capsys, f"{url}/tr", tmp_path, *verify), "TlsError", "mismatch")


def test_client_certificate_for_require_x509(tls_server: LocalServer, certificates: Certificates,
                                             capsys: Capture, tmp_path: Path) -> None:
    url = f"mysql://x509_u@127.0.0.1:{tls_server.port}"
    client = ("--ssl-cert", str(certificates.client_cert), "--ssl-key", str(certificates.client_key))
    status, _, lines = tail_to_end(capsys, url, tmp_path, "--ssl-ca", str(certificates.ca), *client)
    assert status == 0, lines
    assert "over-tls" in tail_output(tmp_path)
    status, _, lines = snapshot(capsys, f"{url}/tr", tmp_path, "--ssl-mode", "required", *client)
    assert status == 0, lines
    # without the certificate the account cannot log in: one line, no retry
    assert_one_error(snapshot(capsys, f"{url}/tr", tmp_path, "--ssl-mode", "required"),
                     "ServerAuthenticationError", "x509_u", "--ssl-cert")


def test_required_against_a_server_without_tls(mariadb: LocalServer, capsys: Capture, tmp_path: Path) -> None:
    """The session MariaDB 10.11 offers no TLS: ``required`` refuses it before logging in."""
    url = f"mysql://root@127.0.0.1:{mariadb.port}"
    assert_one_error(tail_to_end(capsys, url, tmp_path, "--ssl-mode", "required"),
                     "TlsError", "does not offer it", f"127.0.0.1:{mariadb.port}")
    assert_one_error(snapshot(capsys, f"{url}/mysql?ssl-mode=required", tmp_path),
                     "TlsError", "does not offer it")


def test_the_spark_snapshot_option_carries_tls_in_its_url(tls_server: LocalServer,
                                                           certificates: Certificates) -> None:
    """The Spark ``snapshot`` option is a string handed to ``load_snapshot`` (spark/datasource.py,
    spark/streaming.py): its TLS options travel in the URL's query."""
    from binlog_model.errors import TlsError
    from binlog_model.io.snapshots import load_snapshot

    url = f"mysql://tls_u@127.0.0.1:{tls_server.port}/tr?ssl-mode=verify-ca&connect-timeout=2&ssl-ca="
    history = load_snapshot(url + str(certificates.ca))
    assert [(t["db"], t["name"]) for t in history.to_json()["initial"]["tables"]] == [("tr", "t")]
    with pytest.raises(TlsError, match="fails verification"):
        load_snapshot(url + str(certificates.other_ca))
