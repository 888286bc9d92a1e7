"""``apply --initial DUMP.sql`` against real servers (MariaDB 10.11, MariaDB 11.8, MySQL 9.7): the server's
own dump tool (``mysqldump``/``mariadb-dump --single-transaction --source-data=2``) writes the tables in the
middle of a seeded random workload; ``apply`` over the server's binlog folder with that dump as its initial
data, then daily increments, gives tables equal to ``SELECT *``; so does following the live server from the
same dump. The dump's extended INSERTs (one line, or one row per line on MariaDB), ``--hex-blob`` and
``--skip-extended-insert`` are all read; a view, a trigger and a generated column pass through; a run killed
while it loads the dump loads it again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from binlog_model.cli import main
from binlog_model.faults import KILL_AT
from binlog_model.sinks.delta import DeltaReplica
from binlog_model.testing.localserver import LocalServer
from tests._replica_workload import TABLES, Workload, replica_rows, source_rows

pytest.importorskip("deltalake")

REPO = Path(__file__).resolve().parents[2]


def _mariadb(server: LocalServer) -> bool:
    return "mariadb" in server.version.lower()


def _dump(server: LocalServer, db: str | None, dest: Path, *extra: str) -> Path:
    """The server's own dump of ``db`` (None: --all-databases), with its binlog position."""
    position = ["--master-data=2", "--gtid"] if _mariadb(server) else ["--source-data=2"]
    chosen = ["--databases", db] if db else ["--all-databases", "--events"]
    with open(dest, "wb") as out:
        done = subprocess.run([*server.dump_command(), f"--socket={server.socket}", "-uroot",
                               "--single-transaction", *position, "--routines", "--triggers", *chosen,
                               *extra],
                              stdout=out, stderr=subprocess.PIPE, text=False, check=False, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    return dest


def _files(server: LocalServer, first: str) -> list[str]:
    names = [row[0] for row in server.query("SHOW BINARY LOGS")]
    return [str(server.binlog_dir / n) for n in names[names.index(first):]]


def _assert_equal(server: LocalServer, db: str, to: Path) -> int:
    replica = DeltaReplica(to, json.loads((to / "_binlog_model.json").read_text())["app_id"])
    conn = server.connect(db)
    compared = 0
    try:
        for table in TABLES:
            names, kinds, expected = source_rows(conn, table)
            data = replica.read(db, table)
            assert [n for n in data.column_names if not n.startswith("binlog_")] == names, table
            assert replica_rows(data, names, kinds) == expected, f"{db}.{table} differs from SELECT *"
            compared += len(expected) * len(names)
        cur = conn.cursor()
        cur.execute("SELECT id, a, g FROM t_gen")
        source = {row[0]: row[1:] for row in cur.fetchall()}
    finally:
        conn.close()
    # A generated column is as the source has it, or null and listed as unknown where nothing gave its value:
    # mysqldump leaves generated columns out (rows 1 and 3 are not changed after the dump), MariaDB 11 leaves
    # them out of UPDATE images (row 2 is updated after the dump). Never a stale value.
    unknown_where = {2} if server.version.startswith("11.") else set() if _mariadb(server) else {1, 3}
    got = {r["id"]: r for r in replica.read(db, "t_gen").to_pylist()}
    assert got.keys() == source.keys()
    for key, (a, g) in source.items():
        unknown = key in unknown_where
        assert got[key]["binlog_invalid"] == (["g"] if unknown else []), key
        assert (got[key]["a"], got[key]["g"]) == ((a, None) if unknown else (a, g)), key
    return compared


@pytest.fixture
def workload(server: LocalServer, fresh_db: str) -> tuple[LocalServer, str, str, Workload]:
    server.execute("FLUSH BINARY LOGS")
    first = str(server.query("SHOW BINARY LOGS")[-1][0])
    conn = server.connect(fresh_db)
    conn.autocommit(True)
    work = Workload(conn, fresh_db, seed=4711, vector=not _mariadb(server))
    work.create()
    # what a dump writes beside the rows: a view, a trigger, a generated column
    work.run("CREATE TABLE t_gen (id INT PRIMARY KEY, a INT, g INT AS (a * 2) STORED)")
    work.run("INSERT INTO t_gen (id, a) VALUES (1, 1), (2, 2), (3, NULL)")
    work.run("CREATE VIEW v_comp AS SELECT k1, k2 FROM t_comp")
    work.run("CREATE TRIGGER t_comp_ins BEFORE INSERT ON t_comp FOR EACH ROW SET NEW.k2 = NEW.k2")
    return server, fresh_db, first, work


@pytest.mark.parametrize("style", [(), ("--hex-blob", "--skip-extended-insert")],
                         ids=["extended", "hex-rows"])
def test_archive_from_a_dump_then_increments(workload: Any, tmp_path: Path, style: tuple[str, ...]) -> None:
    server, db, first, work = workload
    for _ in range(120):
        work.step()
    dump = _dump(server, db, tmp_path / "initial.sql", *style)
    for _ in range(80):
        work.step()
    work.run("UPDATE t_gen SET a = a + 10 WHERE id = 2")
    server.execute("FLUSH BINARY LOGS")
    state, to = tmp_path / "state", tmp_path / "replica"

    def apply() -> int:
        return main(["apply", *_files(server, first), "--state", str(state), "--to", f"delta:{to}",
                     "--initial", str(dump), "--initial-chunk", "5", "--tables", f"{db}.*",
                     "--allow-incomplete-tail", "--no-progress"])

    assert apply() == 0
    assert _assert_equal(server, db, to) > 300
    # the next day: more writes and a rotation; the same command resumes from the state, the dump unread
    for _ in range(80):
        work.step()
    server.execute("FLUSH BINARY LOGS")
    dump.write_bytes(b"")
    assert apply() == 0
    assert _assert_equal(server, db, to) > 300


def test_live_from_a_dump_and_a_kill_while_it_loads(workload: Any, tmp_path: Path) -> None:
    """``apply mysql://… --initial DUMP.sql``: the dump's rows, then the server's binlog from the dump's
    position. The first run is killed (-9) at its third Delta commit, inside the dump's load; the next run
    loads the dump again and catches up. Equal to ``SELECT *``."""
    server, db, _first, work = workload
    for _ in range(120):
        work.step()
    dump = _dump(server, db, tmp_path / "initial.sql")
    for _ in range(80):
        work.step()
    work.run("UPDATE t_gen SET a = a + 10 WHERE id = 2")
    state, to = tmp_path / "state", tmp_path / "replica"
    env = {**os.environ, "PYTHONPATH": str(REPO), "BINLOG_MODEL_PASSWORD": ""}
    args = [sys.executable, "-m", "binlog_model.cli", "apply", f"mysql://root@localhost/?socket={server.socket}",
            "--state", str(state), "--to", f"delta:{to}", "--initial", str(dump), "--initial-chunk", "5",
            "--tables", f"{db}.*", "--stop-at-end", "--no-progress"]
    killed = subprocess.run(args, capture_output=True, text=True, env={**env, KILL_AT: "replica-commit:3"},
                            cwd=REPO, timeout=300, check=False)
    assert killed.returncode == -9, killed.stderr
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=REPO, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "initial data of 6 table(s)" in done.stderr
    assert _assert_equal(server, db, to) > 300


def test_a_dump_without_a_position_is_refused(workload: Any, tmp_path: Path) -> None:
    server, db, first, _work = workload
    dump = tmp_path / "plain.sql"
    with open(dump, "wb") as out:
        subprocess.run([*server.dump_command(), f"--socket={server.socket}", "-uroot", "--single-transaction",
                        "--databases", db], stdout=out, check=True, timeout=300)
    state, to = tmp_path / "state", tmp_path / "replica"
    failed = subprocess.run([sys.executable, "-m", "binlog_model.cli", "apply", *_files(server, first),
                             "--state", str(state), "--to", f"delta:{to}", "--initial", str(dump),
                             "--tables", f"{db}.*", "--allow-incomplete-tail", "--no-progress"],
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                            cwd=REPO, timeout=300, check=False)
    assert failed.returncode == 2
    assert failed.stderr.count("\n") == 1, failed.stderr        # one line, with the cause and the remedy
    assert "DumpError" in failed.stderr and "--source-data=2" in failed.stderr
    assert not to.exists() or not any((to / db).glob("*/_delta_log"))


def test_a_dump_of_all_databases(scratch: LocalServer, tmp_path: Path) -> None:
    """``--all-databases``: the system databases' tables (MySQL dumps some of their rows without a CREATE
    TABLE) are passed over, the chosen table is loaded at the dump's position."""
    import secrets

    from binlog_model.replica.dump import load_initial_dump

    db = f"all_{secrets.token_hex(3)}"
    scratch.execute([f"CREATE DATABASE {db}", f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v TEXT)",
                     f"INSERT INTO {db}.t VALUES (1, 'a\\nb'), (2, NULL)"])
    try:
        dump = _dump(scratch, None, tmp_path / "all.sql")
        replica = DeltaReplica(tmp_path / "replica", "binlog-model-test")
        with open(dump, "rb") as fh:
            taken = load_initial_dump(fh, str(dump), replica, lambda d, t: d == db)
        assert (taken.tables, taken.rows) == (1, 2)
        assert replica.tables() == [(db, "t")]
        rows = sorted((r["id"], r["v"]) for r in replica.read(db, "t").to_pylist())
        assert rows == [(1, "a\nb"), (2, None)]
        assert taken.file == str(scratch.query("SHOW BINARY LOGS")[-1][0])
    finally:
        scratch.execute(f"DROP DATABASE {db}")
