"""Daily increments over a live datadir, across rotations (issue 39, item 1): a run reads the server's
active binlog, the server writes more and rotates (``FLUSH BINARY LOGS`` closes the file and clears the
LOG_EVENT_BINLOG_IN_USE_F flag of its FORMAT_DESCRIPTION), the next run continues the state; the runs'
output equals one run over the closed files. On MariaDB 10.11, MariaDB 11.8 and MySQL 9.7, reading the
server's own binlog folder, for ``events --state`` and ``resolve --state``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from binlog_model.cli import main
from binlog_model.io.state import RunState
from binlog_model.testing.localserver import LocalServer


def _rotate(server: LocalServer) -> None:
    server.execute("FLUSH BINARY LOGS")


def _write(server: LocalServer, db: str, first: int) -> None:
    server.execute([f"INSERT INTO `{db}`.t VALUES ({first}, 'a{first}', {first}.5)",
                    f"INSERT INTO `{db}`.t VALUES ({first + 1}, 'b{first}', NULL)",
                    f"UPDATE `{db}`.t SET s = CONCAT(s, '!') WHERE id = {first}",
                    f"DELETE FROM `{db}`.t WHERE id = {first + 1}"])


def _binlogs_since(server: LocalServer, first: str) -> list[Path]:
    """The server's own binlog files from ``first`` on (the active one included), in its folder."""
    names = [row[0] for row in server.query("SHOW BINARY LOGS")]
    return [server.binlog_dir / n for n in names[names.index(first):]]


def _active(server: LocalServer) -> str:
    return str(server.query("SHOW BINARY LOGS")[-1][0])


@pytest.fixture
def live_history(server: LocalServer, fresh_db: str) -> tuple[LocalServer, str, str]:
    """A fresh active binlog holding this test's table and a few changes; returns (server, db, its name)."""
    _rotate(server)
    first = _active(server)
    server.execute(f"CREATE TABLE `{fresh_db}`.t (id INT PRIMARY KEY, s VARCHAR(20), d DECIMAL(8,2))")
    _write(server, fresh_db, 1)
    return server, fresh_db, first


def _concatenated(state: Path, out: Path) -> bytes:
    names = [o["file"] for o in RunState.load(state).outputs]
    assert sorted(p.name for p in out.iterdir()) == sorted(names), "stray or missing output files"
    return b"".join((out / n).read_bytes() for n in names)


def test_events_state_continues_a_file_read_while_active(live_history: tuple[LocalServer, str, str],
                                                         tmp_path: Path) -> None:
    server, db, first = live_history
    state, out = tmp_path / "state", tmp_path / "out"

    def run() -> int:
        files = _binlogs_since(server, first)
        return main(["events", *map(str, files), "--source", "rot:1", "--state", str(state),
                     "--out", str(out), "--allow-incomplete-tail", "--no-progress"])

    assert run() == 0                      # the active file, its FORMAT_DESCRIPTION flagged in use
    _write(server, db, 10)
    _rotate(server)                        # closes it: the flag is cleared in place
    _write(server, db, 20)
    assert run() == 0, "the run after a rotation continues the state"
    _write(server, db, 30)
    _rotate(server)
    assert run() == 0
    _rotate(server)

    whole = tmp_path / "whole.jsonl"
    closed = _binlogs_since(server, first)[:-1]
    assert main(["events", *map(str, closed), "--source", "rot:1", "--out", str(whole), "--no-progress"]) == 0
    expected = whole.read_bytes()
    assert expected.count(b'"INSERT"') >= 8
    assert _concatenated(state, out) == expected


def test_a_replaced_file_is_still_refused_naming_what_differs(live_history: tuple[LocalServer, str, str],
                                                              tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Only the in-use flag may differ: a file with another server id in its FORMAT_DESCRIPTION (a server
    reset, another server's file under the same name) is refused, and the message names the field."""
    server, _db, first = live_history
    _rotate(server)
    closed = _binlogs_since(server, first)[:-1]
    copies = tmp_path / "binlogs"
    copies.mkdir()
    for path in closed:
        (copies / path.name).write_bytes(path.read_bytes())
    state, out = tmp_path / "state", tmp_path / "out"
    args = ["--source", "rot:1", "--state", str(state), "--out", str(out), "--no-progress"]
    assert main(["events", str(copies / closed[0].name), *args]) == 0
    data = bytearray((copies / closed[0].name).read_bytes())
    data[4 + 5] ^= 0x7F                     # the FORMAT_DESCRIPTION's server_id (hand-mutated copy)
    (copies / closed[0].name).write_bytes(bytes(data))
    capsys.readouterr()
    assert main(["events", *(str(copies / p.name) for p in closed), *args]) == 2
    err = capsys.readouterr().err
    assert "StateMismatchError" in err and "differs in server_id" in err, err


def _rows(spark: Any, folder: Any) -> list[tuple[Any, ...]]:
    """A typed table's rows (its columns, the operation and the order), sorted."""
    from binlog_model.spark.incremental import read_table

    df = read_table(spark, folder)
    cols = [c for c in df.columns if not c.startswith("binlog_") or c == "binlog_operation"]
    return sorted(tuple(r) for r in df.select(*cols, "binlog_order").collect())


def _assert_equals_one_run_over_the_closed_files(spark: Any, server: LocalServer, first: str, db: str,
                                                 out: Path, tmp_path: Path, at_least: int) -> None:
    """Rotate, resolve the closed files in one run, and compare table t with what the runs wrote to ``out``.
    """
    from binlog_model.spark.job import run_resolve

    _rotate(server)
    closed = _binlogs_since(server, first)[:-1]
    full = run_resolve(spark, closed, tmp_path / "full", source="rot:1")
    [table] = [t for t in full.tables if t.path and t.db == db]
    written = _rows(spark, out / f"db={db}" / "table=t")
    assert len(written) >= at_least
    assert written == _rows(spark, table.path)


@pytest.mark.spark
def test_resolve_state_continues_a_file_read_while_active(live_history: tuple[LocalServer, str, str],
                                                          tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    from binlog_model.spark.job import run_resolve
    from binlog_model.spark.session import local_session

    spark = local_session("local[2]")
    server, db, first = live_history
    state, out = tmp_path / "state", tmp_path / "daily"
    run_resolve(spark, _binlogs_since(server, first), out, source="rot:1", state_dir=state)
    _write(server, db, 10)
    _rotate(server)
    run_resolve(spark, _binlogs_since(server, first), out, source="rot:1", state_dir=state)
    _assert_equals_one_run_over_the_closed_files(spark, server, first, db, out, tmp_path, at_least=8)
    assert RunState.load(state).runs == 2


@pytest.mark.spark
def test_resolve_stream_continues_a_file_read_while_active(live_history: tuple[LocalServer, str, str],
                                                           tmp_path: Path) -> None:
    """The streaming source over a copy of the datadir kept in sync (as rsync would): the first batch reads
    the active file, the next ones the same file closed (its in-use flag cleared) and the file after it."""
    pytest.importorskip("pyspark")
    import shutil

    from binlog_model.spark.session import local_session
    from binlog_model.spark.stream_resolve import run_resolve_stream

    spark = local_session("local[2]")
    server, db, first = live_history
    mirror, out, ck = tmp_path / "mirror", tmp_path / "stream", tmp_path / "ck"
    mirror.mkdir()

    def sync() -> None:
        for path in _binlogs_since(server, first):
            shutil.copyfile(path, mirror / path.name)

    sync()
    run_resolve_stream(spark, [mirror], out, ck, source="rot:1", timeout=300)
    _write(server, db, 10)
    _rotate(server)
    _write(server, db, 20)
    sync()
    run_resolve_stream(spark, [mirror], out, ck, source="rot:1", timeout=300)
    _assert_equals_one_run_over_the_closed_files(spark, server, first, db, out, tmp_path, at_least=12)
