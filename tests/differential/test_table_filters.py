"""Table filters (``--tables`` / ``--exclude-tables``, issue 42) on binlogs a live server writes, on MariaDB
10.11, MariaDB 11.8 and MySQL 9.7: the rows of the tables kept equal the unfiltered output restricted to
them (query and row indexes included), the tables left out are absent and their row images never decoded
(by either row builder), their DDL is still tracked (a later run that includes them reads their rows with
the altered schema), and a pattern that matches nothing is a warning naming it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from binlog_model import iter_binlog_events
from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.cli import main
from binlog_model.io.snapshots import save_history
from binlog_model.messages import from_json
from binlog_model.resolve import compiled_rows
from binlog_model.resolve.assembler import StatementAssembler
from binlog_model.resolve.options import ResolveOptions
from binlog_model.resolve.table_filter import TableFilter
from binlog_model.testing.localserver import LocalServer
from binlog_model.wire import rows as wire_rows
from tests.golden.test_compiled_rows import _compare

_SCHEMA = [
    "CREATE TABLE orders (id INT PRIMARY KEY, amount DECIMAL(10,2), note VARCHAR(20))",
    "CREATE TABLE audit_log (id INT PRIMARY KEY, what VARCHAR(40))",
    "CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(20))",
]
# Transactions that mix the tables, so a statement of a table left out sits between kept ones.
_FIRST = [
    "INSERT INTO customers VALUES (1, 'ann'), (2, 'bob')",
    "BEGIN",
    "INSERT INTO audit_log VALUES (1, 'before orders')",
    "INSERT INTO orders VALUES (1, 9.99, 'a'), (2, 5.00, 'b')",
    "INSERT INTO audit_log VALUES (2, 'after orders')",
    "UPDATE orders SET amount = 10.49 WHERE id = 1",
    "COMMIT",
    "UPDATE orders o JOIN customers c ON c.id = o.id SET o.note = 'joined', c.name = 'ann2'",
    "ALTER TABLE audit_log ADD COLUMN extra INT AFTER id",
    "INSERT INTO audit_log VALUES (3, 42, 'altered')",
    "DELETE FROM orders WHERE id = 2",
]
_SECOND = [
    "INSERT INTO audit_log VALUES (4, 43, 'later')",
    "UPDATE audit_log SET extra = 44 WHERE id = 3",
    "INSERT INTO orders VALUES (3, 1.00, 'c')",
]


@pytest.fixture
def workload(server: LocalServer, fresh_db: str, tmp_path: Path) -> tuple[str, list[Path], list[Path]]:
    """(db, the files of _FIRST, the files of _SECOND): copies of the closed binlogs of each part."""
    server.flush_and_collect(tmp_path / "before")      # this test's files hold only its own statements
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        for sql in [*_SCHEMA, *_FIRST]:
            cur.execute(sql)
    first = server.flush_and_collect(tmp_path / "first")
    with conn.cursor() as cur:
        for sql in _SECOND:
            cur.execute(sql)
    conn.close()
    second = server.flush_and_collect(tmp_path / "second")
    return fresh_db, first, second


def _events(paths: list[Path], **options: Any) -> list[pb.BinlogEvent]:
    return list(iter_binlog_events(paths, lenient_ddl=False, **options))


def _ours(events: list[pb.BinlogEvent], db: str) -> list[pb.BinlogEvent]:
    return [e for e in events if e.db == db]


def test_kept_rows_equal_the_unfiltered_output_restricted(
        workload: tuple[str, list[Path], list[Path]]) -> None:
    db, first, second = workload
    files = [*first, *second]
    everything = _ours(_events(files), db)
    assert {e.table for e in everything if e.operation != pb.BinlogEvent.SCHEMA} == {
        "orders", "audit_log", "customers"}

    kept = _events(files, tables=[f"{db}.orders", f"{db}.cust*"])
    assert kept == [e for e in everything if e.table in ("orders", "customers")
                    or (e.operation == pb.BinlogEvent.SCHEMA and not e.table)]
    # the statement of audit_log between two of orders still counts: indexes as unfiltered
    assert sorted({e.query_index for e in kept if e.table == "orders"}) == [0, 1, 3]

    left_out = _events(files, exclude_tables=[f"{db.upper()}.AUDIT_*"])    # names compare case-insensitively
    assert left_out == [e for e in everything if e.table != "audit_log"]

    both = _events(files, tables=[f"{db}.*"], exclude_tables=[f"{db}.orders"])   # exclusion wins
    assert both == [e for e in everything if e.table != "orders"]

    # a whole database left out: its CREATE/DROP DATABASE events too
    assert _ours(_events(files, exclude_tables=[f"{db}.*"]), db) == []


def test_rows_left_out_are_never_decoded(workload: tuple[str, list[Path], list[Path]],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    db, first, second = workload
    decoded: list[tuple[str, str]] = []
    decode_images = wire_rows._decode_images

    def spy(event: Any) -> Any:
        decoded.append((event.table_map.schema, event.table_map.table))
        return decode_images(event)
    monkeypatch.setattr(wire_rows, "_decode_images", spy)
    built: list[tuple[str, str]] = []
    if compiled_rows.speedups is not None:
        build = compiled_rows.CompiledRows.build

        def spy_build(self: Any, event: Any, first_row_index: int) -> Any:
            built.append((self.plan.db, self.plan.table))
            return build(self, event, first_row_index)
        monkeypatch.setattr(compiled_rows.CompiledRows, "build", spy_build)
    kept = _events([*first, *second], tables=[f"{db}.orders"])
    assert {e.table for e in kept if e.operation != pb.BinlogEvent.SCHEMA} == {"orders"}
    touched = {t for d, t in decoded + built if d == db}
    assert touched == {"orders"}, touched


def test_filtered_output_is_the_same_compiled_and_pure(workload: tuple[str, list[Path], list[Path]],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    db, first, second = workload
    _compare([*first, *second], monkeypatch, tables=[f"{db}.orders", f"{db}.audit_log"],
             exclude_tables=[f"{db}.audit_log"])


def test_ddl_of_tables_left_out_is_still_tracked(workload: tuple[str, list[Path], list[Path]],
                                                  tmp_path: Path) -> None:
    """The first part is read without audit_log; its ALTER still reaches the history, so a second run
    that includes audit_log (from the first run's history) reads its rows with the column it added."""
    db, first, second = workload
    options = ResolveOptions.parse(exclude_tables=[f"{db}.audit_log"])
    assembler = StatementAssembler(options=options)
    filtered = list(iter_binlog_events(first, assembler=assembler))
    assert not [e for e in filtered if e.table == "audit_log"]
    audit = assembler.history.catalog.table(db, "audit_log")
    assert audit is not None and [c.name for c in audit.columns] == ["id", "extra", "what"]

    save_history(assembler.history, tmp_path / "history.json")
    later = _ours(_events(second, snapshot=str(tmp_path / "history.json")), db)
    unfiltered = [e for e in _ours(_events([*first, *second]), db)
                  if e.position.file in {p.name for p in second}]
    assert later == unfiltered
    inserted = [e for e in later if e.table == "audit_log" and e.operation == pb.BinlogEvent.INSERT]
    assert [[(c.name, c.value.int_value) for c in r.after if c.name == "extra"] for r in inserted[0].rows] \
        == [[("extra", 43)]]


def test_cli_warns_about_a_pattern_that_matches_nothing(workload: tuple[str, list[Path], list[Path]],
                                                         tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    db, first, _second = workload
    out = tmp_path / "events.jsonl"
    assert main(["events", *map(str, first), "--tables", f"{db}.orders", "--tables", f"{db}.ordres",
                 "--exclude-tables", "nosuchdb.*", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"warning: table pattern '{db}.ordres' matched no table" in err
    assert "warning: table pattern 'nosuchdb.*' matched no table" in err
    assert f"'{db}.orders'" not in err
    events = [from_json(line) for line in out.read_text().splitlines()]
    assert {e.table for e in events if e.db == db and e.operation != pb.BinlogEvent.SCHEMA} == {"orders"}
    # a malformed pattern is one line naming it, before anything is read
    assert main(["events", *map(str, first), "--tables", "orders"]) == 2
    assert "--tables takes DB.TABLE" in capsys.readouterr().err


def test_filter_survives_pickling() -> None:
    import pickle

    table_filter = TableFilter.from_patterns(["shop.*,*.audit_?"], ["shop.secret"])
    copy = pickle.loads(pickle.dumps(table_filter))
    assert copy == table_filter
    assert [copy("shop", "orders"), copy("SHOP", "Secret"), copy("x", "audit_1"), copy("x", "audit_12")] == [
        True, False, True, False]


def test_dump_leaves_out_the_table_maps_and_rows_of_tables_left_out(
        workload: tuple[str, list[Path], list[Path]], capsys: pytest.CaptureFixture[str]) -> None:
    db, first, _second = workload
    assert main(["dump", *map(str, first)]) == 0
    everything = capsys.readouterr().out
    assert main(["dump", *map(str, first), "--exclude-tables", f"{db}.audit_log", "--tables", f"{db}.*"]) == 0
    dumped = capsys.readouterr()
    assert f"`{db}`.`audit_log`" in everything and f"`{db}`.`audit_log`" not in dumped.out
    assert "ALTER TABLE audit_log ADD COLUMN extra" in dumped.out        # every other event is printed
    kept = [line for line in everything.splitlines() if line.startswith("###")
            and f"`{db}`.`audit_log`" not in line]
    assert [line for line in dumped.out.splitlines() if line.startswith("### ") and "`" in line] == [
        line for line in kept if "`" in line]
    assert dumped.err == ""


def test_tail_filters_as_events_does(server: LocalServer, workload: tuple[str, list[Path], list[Path]],
                                     tmp_path: Path) -> None:
    """``tail --tables`` over the server's binlog from the workload's first file gives what ``events
    --tables`` gives over the copies of those files; the filter is part of the state's options."""
    import os
    import subprocess
    import sys

    db, first, second = workload
    pattern = [("--tables", f"{db}.orders"), ("--tables", f"{db}.audit_log"),
               ("--exclude-tables", f"{db}.audit_*")]
    flags = [arg for pair in pattern for arg in pair]
    env = {**os.environ, "BINLOG_MODEL_PASSWORD": ""}
    command = [sys.executable, "-m", "binlog_model.cli", "tail", f"mysql://root@localhost/?socket={server.socket}",
               "--state", str(tmp_path / "state"), "--out", str(tmp_path / "out"), "--from",
               f"{first[0].name}:4", "--stop-at-end", *flags]
    done = subprocess.run(command, env=env, capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()
    tailed = [from_json(line) for part in sorted((tmp_path / "out").glob("part-*.jsonl"))
              for line in part.read_text().splitlines()]
    expected = _events([*first, *second], tables=[f"{db}.orders", f"{db}.audit_log"],
                       exclude_tables=[f"{db}.audit_*"])
    assert [e for e in tailed if e.db == db] == _ours(expected, db)
    assert {e.table for e in tailed if e.db == db and e.operation != pb.BinlogEvent.SCHEMA} == {"orders"}
    # another filter on the same state is refused
    again = subprocess.run([*command[:-len(flags)], "--tables", f"{db}.*"], env=env, capture_output=True,
                           timeout=120, check=False)
    assert again.returncode == 2 and b"tables" in again.stderr and b"StateMismatchError" in again.stderr
