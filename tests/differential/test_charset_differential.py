"""The charset differential (issue 22): seeded random scenarios (tests/charset_random.py) run on each server
of the matrix. A dump snapshot is taken at a random point; the binlog after it is decoded with that snapshot
and the tables it rebuilds must equal SELECT for every value, or the decoder must stop with the one typed
error the tracker owns up to (``ALLOWED_STOP``: CONVERT TO CHARACTER SET re-reading an ENUM/SET label into
bytes that are not text in the new charset), on at most ``MAX_STOPS`` seeds per server. A silent difference,
any other error, or more stops than that fails the test. CI runs a fixed sample;
``BINLOG_MODEL_CHARSET_SEEDS=N`` runs N seeds and ``BINLOG_MODEL_CHARSET_STATEMENTS=M`` makes each longer.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pymysql
import pytest

from binlog_model import iter_binlog_events
from binlog_model.errors import BinlogError, UnsupportedDDLError
from binlog_model.io.snapshots import load_snapshot
from tests.charset_random import generate

SEEDS = range(int(os.environ.get("BINLOG_MODEL_CHARSET_SEEDS", "6")))
STATEMENTS = int(os.environ.get("BINLOG_MODEL_CHARSET_STATEMENTS", "60"))
#: the typed stop a scenario may end in: the tracker refuses a CONVERT TO whose re-read ENUM/SET labels are
#: not text in the new charset (schema_tracker/changes.py), rather than guess them
ALLOWED_STOP = (UnsupportedDDLError, re.compile(
    r"CONVERT TO CHARACTER SET \w+ re-reads the bytes of column '[^']*''s labels in \w+, where they are not "
    r"valid text; .*statement: ALTER TABLE .* CONVERT TO CHARACTER SET \w+$"))
#: how many seeds of one server may end in it (CI's sample stops on one of six per server): a regression
#: that makes the stop the rule, not the exception, fails
MAX_STOPS = max(2, len(SEEDS) // 3)
_stops: Counter[str] = Counter()


def _value(value: Any) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "set_value":
        return ",".join(value.set_value.labels)
    if kind == "null_value" or kind is None:
        return None
    return getattr(value, kind)


def _run(server: Any, statements: list[str]) -> int:
    """Run statements on one connection (the session's charset settings carry over); refused ones are
    skipped, as the server does not log them. Returns how many ran."""
    conn = server.connect()
    ran = 0
    try:
        with conn.cursor() as cur:
            cur.execute("SET NAMES utf8mb4")
            for sql in statements:
                try:
                    cur.execute(sql)
                    ran += 1
                except pymysql.Error:
                    continue
        conn.commit()
    finally:
        conn.close()
    return ran


def _rebuild(events: list[Any]) -> dict[tuple[str, str], dict[int, dict[str, Any]]]:
    tables: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    for e in events:
        if not e.rows:
            continue
        rows = tables.setdefault((e.db, e.table), {})
        for row in e.rows:
            if row.after:
                image = {c.name: _value(c.value) for c in row.after}
                rows[image["id"]] = image
            else:
                rows.pop({c.name: _value(c.value) for c in row.before}["id"], None)
    return tables


@pytest.mark.parametrize("seed", SEEDS)
def test_charset_scenarios_decode_as_select_or_stop_typed(server: Any, seed: int, tmp_path: Path) -> None:
    kind = server.label.replace(" ", "").replace(".", "").lower()
    scenario = generate(seed * 7919 + len(kind), f"cs{seed}_{kind[:6]}", STATEMENTS)
    try:
        _run(server, scenario.before)
        made = [db for db in scenario.databases
                if server.query("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = %s",
                                args=(db,))[0][0]]
        dump = subprocess.run([*server.dump_command(), "--no-data", f"--socket={server.socket}",
                               "--user=root", "--databases", *made],
                              capture_output=True, text=True, check=False)
        assert dump.returncode == 0, dump.stderr
        snapshot = tmp_path / "snapshot.sql"
        snapshot.write_text(dump.stdout)
        server.flush_and_collect()
        _run(server, scenario.after)
        files = server.flush_and_collect()
        try:
            history = load_snapshot(str(snapshot))
            events = [e for e in iter_binlog_events(files, snapshot=history, image="full")
                      if e.db in scenario.databases]
        except BinlogError as err:   # the one typed stop is allowed, a few times; a wrong value never is
            kind_allowed, text_allowed = ALLOWED_STOP
            if not (type(err) is kind_allowed and text_allowed.fullmatch(str(err))):
                raise
            _stops[server.label] += 1
            assert _stops[server.label] <= MAX_STOPS, (
                f"seed {seed}: {_stops[server.label]} typed stops on {server.label} (at most {MAX_STOPS} of "
                f"{len(SEEDS)} seeds): {err}")
            pytest.xfail(f"typed stop: {type(err).__name__}: {err}")
        rebuilt = _rebuild(events)
        compared = 0
        for (db, table), rows in sorted(rebuilt.items()):
            names = [r[0] for r in server.query(
                "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s "
                "AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION", args=(db, table))]
            selected = {r[0]: dict(zip(names, r, strict=True))
                        for r in server.query(f"SELECT * FROM `{db}`.`{table}`")}
            differences = [(key, name, (rows.get(key) or {}).get(name), (selected.get(key) or {}).get(name))
                           for key in sorted(rows.keys() | selected.keys()) for name in names
                           if (rows.get(key) or {}).get(name) != (selected.get(key) or {}).get(name)]
            assert not differences, f"seed {seed}: {db}.{table} (id, column, decoded, SELECT): {differences}"
            compared += sum(len(r) for r in rows.values())
        print(f"seed {seed} on {server.label}: {len(scenario.after)} statements after the snapshot, "
              f"{len(rebuilt)} tables, {compared} values equal SELECT")
        assert compared > 0, f"seed {seed}: no row reached the binlog (every insert refused?)"
    finally:
        for db in scenario.databases:
            server.execute(f"DROP DATABASE IF EXISTS `{db}`")
