"""What ``tail`` reports and writes, on a real MariaDB: the last ``--stats`` line at ``--stop-at-end``
says it caught up, a resume with nothing new names the position it stands at (not "the start"), and
``--json-values plain`` writes plain values."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from binlog_model.testing.localserver import LocalServer
from tests._live import tail_output, tail_to_end

pytestmark = pytest.mark.server


def test_stop_at_end_is_caught_up_and_a_resume_with_nothing_new_names_its_position(
        mariadb: LocalServer, mariadb_db: str, capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BINLOG_MODEL_PASSWORD", "")
    file, offset = mariadb.binlog_position()
    mariadb.execute(["CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1), (2)"],
                    database=mariadb_db)
    end_file, end_offset = mariadb.binlog_position()
    url = f"mysql://root@localhost/?socket={mariadb.socket}"

    status, _, lines = tail_to_end(capsys, url, tmp_path, "--from", f"{file}:{offset}", "--stats")
    assert status == 0, lines
    stats = [json.loads(line) for line in lines if line.startswith("{")]
    assert stats and stats[-1]["caught_up"] is True and stats[-1]["lag_seconds"] == 0, lines
    summary = lines[-1]
    assert summary.startswith("tail: ") and summary.endswith(f"state at {end_file}:{end_offset}"), lines

    status, _, lines = tail_to_end(capsys, url, tmp_path, "--stats")        # nothing new since
    assert status == 0, lines
    assert re.fullmatch(rf"tail: 0 events, 0 commits, \d+ reconnects; state at {end_file}:{end_offset}",
                        lines[-1]), lines


def test_tail_writes_plain_json_values(mariadb: LocalServer, mariadb_db: str,
                                       capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BINLOG_MODEL_PASSWORD", "")
    file, offset = mariadb.binlog_position()
    mariadb.execute(["CREATE TABLE p (id BIGINT UNSIGNED PRIMARY KEY, d DECIMAL(6,2), s SET('a','b'))",
                     "INSERT INTO p VALUES (18446744073709551615, 12.50, 'a,b'), (7, NULL, '')"],
                    database=mariadb_db)
    url = f"mysql://root@localhost/?socket={mariadb.socket}"
    status, _, lines = tail_to_end(capsys, url, tmp_path, "--from", f"{file}:{offset}",
                                   "--json-values", "plain")
    assert status == 0, lines
    events = [json.loads(line) for line in tail_output(tmp_path).splitlines()]
    (insert,) = [e for e in events if e.get("operation") == "INSERT"]
    assert [r["after"] for r in insert["rows"]] == [
        {"id": "18446744073709551615", "d": "12.50", "s": ["a", "b"]}, {"id": 7, "d": None, "s": []}]
