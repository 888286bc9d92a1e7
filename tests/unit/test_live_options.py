"""The options of live connections without a server: the ``live`` extra missing, and ``--ssl-*`` as flags
and in a URL's query (what they mean together, and what is refused). The connections themselves are
tested against real servers in tests/differential/test_live_trust.py and test_live_failures.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from binlog_model.errors import ConfigError
from binlog_model.io.live import parse_server_url, url_with_options
from binlog_model.io.tls import TlsOptions

ROOT = Path(__file__).resolve().parents[2]
#: the CLI with pymysql unimportable (``None`` in ``sys.modules`` makes ``import pymysql`` raise ImportError)
NO_PYMYSQL = ("import sys; sys.modules['pymysql'] = None; from binlog_model.cli import main; "
              "sys.exit(main(sys.argv[1:]))")


@pytest.mark.parametrize("command", ["tail", "snapshot"])
def test_missing_pymysql_names_the_extra(command: str, tmp_path: Path) -> None:
    """pymysql not importable (as where the extra is not installed): one line naming the extra."""
    if command == "tail":
        args = ["tail", "mysql://u@127.0.0.1:1", "--state", str(tmp_path / "s"), "--out", str(tmp_path / "o")]
    else:
        (tmp_path / "none.sql").write_text("")
        args = ["schema", "--sql", str(tmp_path / "none.sql"), "--snapshot", "mysql://u@127.0.0.1:1/db"]
    done = subprocess.run([sys.executable, "-c", NO_PYMYSQL, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT),
                                            "BINLOG_MODEL_PASSWORD": ""})
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "error: MissingExtraError: live connections (tail, mysql:// snapshots) need pymysql: "
        "pip install 'binlog-model[live]'"]


def test_mode_follows_what_is_given() -> None:
    assert TlsOptions().effective_mode == "preferred"
    assert TlsOptions(ca="/ca.pem").effective_mode == "verify-ca"      # as the MySQL clients read --ssl-ca
    assert TlsOptions(cert="/c.pem", key="/k.pem").effective_mode == "required"
    assert TlsOptions("VERIFY_IDENTITY", ca="/ca.pem").effective_mode == "verify-identity"
    assert TlsOptions("disabled").connect_params() == {"ssl_disabled": True}
    assert TlsOptions("preferred").connect_params() == {}


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"mode": "sometimes"}, "give one of"),
    ({"cert": "/c.pem"}, "go together"),
    ({"mode": "required", "ca": "/ca.pem"}, "not be checked"),
    ({"mode": "preferred", "cert": "/c.pem", "key": "/k.pem"}, "required or stronger"),
])
def test_contradictions_are_refused(kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        TlsOptions(**kwargs)


def test_unreadable_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"--ssl-ca .*missing\.pem"):
        TlsOptions("verify-ca", ca=str(tmp_path / "missing.pem")).connect_params()


def test_flags_go_into_the_url_and_back() -> None:
    url = url_with_options("mysql://u@db.example:3307/app?ssl-mode=verify-identity",
                           TlsOptions(ca="/etc/ca.pem"), 5)
    server = parse_server_url(url)
    assert server.tls == TlsOptions("verify-identity", ca="/etc/ca.pem")
    assert (server.where, server.database, server.connect_timeout) == ("db.example:3307", "app", 5)
    assert url_with_options("dump.sql", TlsOptions("required"), 5) == "dump.sql"    # a file stays a file


@pytest.mark.parametrize(("url", "tls", "timeout", "message"), [
    ("mysql://u@h/db?ssl-mode=verify-ca", TlsOptions("required"), None, "conflicts with ssl-mode=verify-ca"),
    ("mysql://u@h/db?connect-timeout=5", TlsOptions(), 9.0, "conflicts with connect-timeout=5"),
])
def test_url_and_flag_disagreeing_is_an_error(url: str, tls: TlsOptions, timeout: float | None,
                                              message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        url_with_options(url, tls, timeout)


def test_a_misspelt_query_key_is_refused() -> None:
    """``ssl_mode`` for ``ssl-mode`` must not quietly mean an unverified connection."""
    with pytest.raises(ConfigError, match="unknown key 'ssl_mode'"):
        parse_server_url("mysql://u@h/db?ssl_mode=verify-ca")
