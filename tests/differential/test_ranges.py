"""``dump`` and ``events`` ranges named as ``mysqlbinlog`` names them (issue 42): ``--start-position`` (of the
first file), ``--stop-position`` (of the last file), ``--start-datetime``, ``--stop-datetime``, and ``dump
--database``, compared with the server's own tool on binlogs it wrote: MySQL 9.7's ``mysqlbinlog``, MariaDB's
``mariadb-binlog`` (10.11's from Debian, 11.8's from its prefix). The events each prints are compared by
their header lines' ``end_log_pos`` (FORMAT_DESCRIPTION events aside: ``mariadb-binlog -vv
--base64-output=decode-rows`` leaves them out, where ``dump`` prints them as ``mysqlbinlog`` does).
``events`` outputs the BinlogEvents of the rows and DDL events the same range holds, with the schema of DDL
before the start still tracked.

The workload stamps its statements with ``SET TIMESTAMP`` a day ahead, an hour apart, so the datetimes fall
between events (the files' own FORMAT_DESCRIPTION events carry the real time, earlier than all of them).
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.cli import main
from binlog_model.io.files import iter_events
from binlog_model.messages import from_json
from binlog_model.testing.localserver import LocalServer
from binlog_model.wire import events as ev
from binlog_model.wire.rows import RowsEvent

# an event's header line, but a FORMAT_DESCRIPTION's ("Start:"), which mariadb-binlog -vv leaves out
_END = re.compile(r"^#\d{6} [ \d]\d:\d\d:\d\d server id \d+\s+end_log_pos (\d+)(?!.*\tStart: )", re.M)
_HOUR = 3600


def _tool(server: LocalServer) -> list[str]:
    if server.family == "mysql":
        from binlog_model.testing.mysql import mysql_tool
        return mysql_tool("mysqlbinlog")
    if "11." in server.label:
        from binlog_model.testing.mariadb11 import mariadb11_tool
        return mariadb11_tool("mariadb-binlog")
    return ["mariadb-binlog"]


@pytest.fixture(autouse=True)
def utc() -> Iterator[None]:
    """Datetimes are local time to both tools: the machine's zone is UTC for the test."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


@pytest.fixture
def two_files(server: LocalServer, fresh_db: str, tmp_path: Path) -> tuple[str, list[Path], int]:
    """(db, two binlog files of this test's transactions, the workload's first timestamp)."""
    base = (int(time.time()) // _HOUR + 24) * _HOUR
    server.flush_and_collect(tmp_path / "before")
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute(f"SET TIMESTAMP = {base}")
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20))")
        cur.execute("CREATE DATABASE IF NOT EXISTS other_db_for_ranges")
        cur.execute("CREATE TABLE IF NOT EXISTS other_db_for_ranges.o (id INT PRIMARY KEY)")
        for n in range(1, 9):
            cur.execute(f"SET TIMESTAMP = {base + n * _HOUR}")
            cur.execute(f"INSERT INTO t (id, s) VALUES ({n}, 'row {n}')")
            cur.execute(f"REPLACE INTO other_db_for_ranges.o VALUES ({n})")
            if n == 3:
                cur.execute("ALTER TABLE t ADD COLUMN extra INT")
            if n == 4:
                cur.execute("FLUSH BINARY LOGS")
            cur.execute(f"UPDATE t SET s = 'changed {n}' WHERE id = {n}")
    conn.close()
    files = server.flush_and_collect(tmp_path / "binlogs")
    assert len(files) == 2
    return fresh_db, files, base


def _theirs(server: LocalServer, files: list[Path], args: list[str]) -> list[int]:
    done = subprocess.run([*_tool(server), "-vv", "--base64-output=decode-rows", *args, *map(str, files)],
                          capture_output=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return [int(m) for m in _END.findall(done.stdout.decode(errors="replace"))]


def _ours(files: list[Path], args: list[str], capsys: pytest.CaptureFixture[str]) -> list[int]:
    assert main(["dump", *map(str, files), *args]) == 0
    return [int(m) for m in _END.findall(capsys.readouterr().out)]


def _offsets(files: list[Path], kind: type) -> list[tuple[str, int]]:
    return [(e.header.file, e.header.offset) for e in iter_events(files) if isinstance(e, kind)]


def _stamp(seconds: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds))


def _gtid_offsets(files: list[Path], index: int) -> list[int]:
    """The offsets of the transaction starts (GTID events) of file ``index``."""
    kinds = (ev.GtidEvent, ev.MariadbGtidEvent)
    return [offset for name, offset in _offsets(files, kinds) if name == str(files[index])]


def test_dump_ranges_are_mysqlbinlogs(server: LocalServer, two_files: tuple[str, list[Path], int],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    db, files, base = two_files
    first, last = _gtid_offsets(files, 0), _gtid_offsets(files, 1)
    cases = [
        ["--start-position", str(first[3])],                                   # of the first file only
        ["--stop-position", str(last[2])],                                     # of the last file only
        ["--start-position", str(first[5]), "--stop-position", str(last[1])],
        ["--start-position", str(first[2])],                                   # one file: both apply to it
        ["--start-datetime", _stamp(base + 2 * _HOUR)],
        ["--stop-datetime", _stamp(base + 6 * _HOUR)],
        ["--start-datetime", _stamp(base + 3 * _HOUR - 1), "--stop-datetime", _stamp(base + 7 * _HOUR)],
    ]
    if server.family == "mysql":
        # MariaDB's tool also drops the GTID events of the transactions it filters (MySQL's keeps them, and
        # says so): ours follows MySQL's
        cases += [["--database", db], ["--database", "other_db_for_ranges"]]
    for args in cases:
        inputs = files[:1] if args == ["--start-position", str(first[2])] else files
        theirs = _theirs(server, inputs, args)
        assert 0 < len(theirs) < len(_theirs(server, inputs, [])) or args[0] == "--database", args
        assert _ours(inputs, args, capsys) == theirs, args


def test_events_outputs_the_range_with_the_schema_of_before_it(
        two_files: tuple[str, list[Path], int], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db, files, base = two_files
    assert main(["events", *map(str, files), "--out", str(tmp_path / "all.jsonl")]) == 0
    everything = [e for e in map(from_json, (tmp_path / "all.jsonl").read_text().splitlines()) if e.db == db]
    # the range starts after the ALTER: the rows after it still carry its column
    start = _stamp(base + 4 * _HOUR)
    stop_at = _gtid_offsets(files, 1)[2]
    assert main(["events", *map(str, files), "--start-datetime", start, "--stop-position", str(stop_at),
                 "--out", str(tmp_path / "range.jsonl")]) == 0
    ranged = [e for e in map(from_json, (tmp_path / "range.jsonl").read_text().splitlines()) if e.db == db]
    rows = {(e.position.file, e.position.offset) for e in ranged}
    expected = [e for e in everything
                if e.utc_timestamp.seconds >= base + 4 * _HOUR
                and (e.position.file != files[1].name or e.position.offset < stop_at)]
    assert ranged == expected and rows
    assert all(e.operation != pb.BinlogEvent.SCHEMA for e in ranged)
    assert any(c.name == "extra" for e in ranged if e.operation == pb.BinlogEvent.INSERT
               for r in e.rows for c in r.after)
    # the rows outside were never resolved: a rows event count below the whole input's
    whole = sum(1 for e in iter_events(files) if isinstance(e, RowsEvent))
    assert len(ranged) < whole

    # past the stop nothing more is read: a damaged file after it is never opened
    name, number = files[1].name.rsplit(".", 1)
    damaged = tmp_path / f"{name}.{int(number) + 1:06d}"
    damaged.write_bytes(files[1].read_bytes()[:300])
    assert main(["events", *map(str, files), str(damaged), "--out", str(tmp_path / "whole.jsonl")]) == 2
    assert "TruncatedEventError" in capsys.readouterr().err
    assert main(["events", *map(str, files), str(damaged), "--stop-datetime", _stamp(base + 6 * _HOUR),
                 "--out", str(tmp_path / "stopped.jsonl")]) == 0
    stopped = [e for e in map(from_json, (tmp_path / "stopped.jsonl").read_text().splitlines()) if e.db == db]
    assert stopped == [e for e in everything if e.utc_timestamp.seconds < base + 6 * _HOUR]

    assert main(["events", *map(str, files), "--stop-datetime", "yesterday"]) == 2
    assert "--stop-datetime takes a date and time" in capsys.readouterr().err
    assert main(["events", *map(str, files), "--start-position", "4", "--state", str(tmp_path / "s"),
                 "--out", str(tmp_path / "o")]) == 2
    assert "do not go with --state" in capsys.readouterr().err
