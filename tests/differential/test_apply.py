"""``binlog-model apply`` against real servers (MariaDB 10.11, MariaDB 11.8, MySQL 9.7): a seeded random
workload (``tests/_replica_workload``) runs on the server, ``apply`` reads the server's own binlog folder,
and every replica table equals ``SELECT *`` on the source, value for value (as a multiset for the table
without a key). Increments (a run, more writes and rotations, another run) give the same tables, and the
replica's version at each recorded position equals the snapshot taken there. An independent oracle: the same
binlog files replayed by the server's own tools into a scratch server of the same kind (``tests/_replay``)
give the replica's tables.

Large runs: ``BINLOG_MODEL_REPLICA_SEEDS=N`` runs the workload tests over N seeds (the first is CI's), and
``BINLOG_MODEL_REPLICA_SCALE=K`` makes the three oracle tests' workloads K times as long; with either set,
each of those tests prints its seed, statements and values compared (``pytest -s``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from binlog_model.cli import main
from binlog_model.sinks.delta import DeltaReplica
from binlog_model.testing.localserver import LocalServer
from tests._replay import replay
from tests._replica_workload import TABLES, Workload, replica_rows, source_rows, start_workload

pytest.importorskip("deltalake")


def _binlogs_since(server: LocalServer, first: str) -> list[Path]:
    names = [row[0] for row in server.query("SHOW BINARY LOGS")]
    return [server.binlog_dir / n for n in names[names.index(first):]]


def _apply(server: LocalServer, first: str, state: Path, to: Path, *extra: str) -> int:
    files = _binlogs_since(server, first)
    return main(["apply", *map(str, files), "--state", str(state), "--to", f"delta:{to}",
                 "--allow-incomplete-tail", "--no-progress", *extra])


def _replica(to: Path) -> DeltaReplica:
    return DeltaReplica(to, json.loads((to / "_binlog_model.json").read_text())["app_id"])


def _assert_equal(server: LocalServer, db: str, to: Path, version_of: Any = None) -> int:
    """Every workload table of ``db`` equals its replica table; returns the values compared."""
    conn = server.connect(db)
    compared = 0
    try:
        for table in TABLES:
            names, kinds, expected = source_rows(conn, table)
            data = _replica(to).read(db, table, version=None if version_of is None else version_of(table))
            assert [n for n in data.column_names if not n.startswith("binlog_")] == names, table
            got = replica_rows(data, names, kinds)
            assert got == expected, f"{db}.{table} differs from SELECT *"
            compared += len(expected) * len(names)
    finally:
        conn.close()
    return compared


SEEDS = [20261128 + n for n in range(int(os.environ.get("BINLOG_MODEL_REPLICA_SEEDS", "1")))]
SCALE = int(os.environ.get("BINLOG_MODEL_REPLICA_SCALE", "1"))
REPORT = "BINLOG_MODEL_REPLICA_SEEDS" in os.environ or "BINLOG_MODEL_REPLICA_SCALE" in os.environ


def _report(test: str, server: LocalServer, work: Workload, compared: int) -> None:
    if REPORT:
        print(f"\n{test} on {server.version}: seed {work.seed}, {work.statements} statements, "
              f"{compared} values compared")


@pytest.fixture(params=SEEDS)
def workload(request: pytest.FixtureRequest, server: LocalServer, fresh_db: str
             ) -> tuple[LocalServer, str, str, Workload]:
    first, work = start_workload(server, fresh_db, seed=request.param)
    return server, fresh_db, first, work


def test_replica_equals_the_source_after_a_random_workload(workload: Any, tmp_path: Path) -> None:
    server, db, first, work = workload
    state, to = tmp_path / "state", tmp_path / "replica"
    for _ in range(250 * SCALE):
        work.step()
    assert _apply(server, first, state, to) == 0
    compared = _assert_equal(server, db, to)
    assert compared > 300
    # an increment after more writes and rotations continues the same tables
    for _ in range(150 * SCALE):
        work.step()
    server.execute("FLUSH BINARY LOGS")
    assert _apply(server, first, state, to) == 0
    compared += _assert_equal(server, db, to)
    assert compared > 600
    _report("source", server, work, compared)
    # a run with nothing new makes no Delta commit
    versions = {t: _replica(to).path(db, t) for t in TABLES}
    before = {t: len(list((p / "_delta_log").glob("*.json"))) for t, p in versions.items()}
    assert _apply(server, first, state, to) == 0
    assert {t: len(list((p / "_delta_log").glob("*.json"))) for t, p in versions.items()} == before


def test_replica_equals_an_independent_replay(workload: Any, scratch: LocalServer, tmp_path: Path) -> None:
    """The oracle that shares no code with ours: the binlog files ``apply`` read, replayed by the server's
    own tools (``mysqlbinlog | mysql``, ``mariadb-binlog | mariadb``) into a scratch server of the same
    kind, give tables equal to the replica's, value for value (as a multiset for the keyless table)."""
    server, db, first, work = workload
    for _ in range(150 * SCALE):    # the small workload: the replay and a second server are the cost here
        work.step()
    server.execute("FLUSH BINARY LOGS")
    files = _binlogs_since(server, first)
    state, to = tmp_path / "state", tmp_path / "replica"
    assert _apply(server, first, state, to) == 0
    replay(server, files, scratch, db)
    try:
        # the replay's own tables are what the source shows, or the oracle says nothing
        assert _tables(scratch, db) == _tables(server, db)
        compared = _assert_equal(scratch, db, to)
        assert compared > 300
        _report("replay", server, work, compared)
    finally:
        scratch.execute(f"DROP DATABASE IF EXISTS `{db}`")


def _tables(server: LocalServer, db: str) -> dict[str, Any]:
    conn = server.connect(db)
    try:
        return {table: source_rows(conn, table) for table in TABLES}
    finally:
        conn.close()


def test_version_at_each_position_equals_the_snapshot_there(workload: Any, tmp_path: Path) -> None:
    server, db, first, work = workload
    conn = server.connect(db)
    snapshots: list[tuple[str, dict[str, Any]]] = []
    for _ in range(10):
        for _ in range(25 * SCALE):
            work.step()
        server.execute("FLUSH BINARY LOGS")     # a commit point of the run: the end of a file
        file = str(server.query("SHOW BINARY LOGS")[-1][0])
        snapshots.append((f"{file}:4", {t: source_rows(conn, t) for t in TABLES}))
    conn.close()
    state, to = tmp_path / "state", tmp_path / "replica"
    assert _apply(server, first, state, to) == 0
    replica = _replica(to)
    checked = compared = 0
    for position, tables in snapshots:
        for table, (names, kinds, expected) in tables.items():
            # the end of the file before the snapshot's (the commit at that file's end recorded it)
            version = replica.as_of(db, table, _end_of_previous(server, position.split(":")[0]))
            assert version is not None, (position, table)
            data = replica.read(db, table, version=version)
            present = [n for n in names if n in data.column_names]
            assert present == names, (position, table)
            assert replica_rows(data, names, kinds) == expected, (position, table)
            checked += 1
            compared += len(expected) * len(names)
    assert checked == 10 * len(TABLES)
    _report("snapshots", server, work, compared)


def _end_of_previous(server: LocalServer, file: str) -> str:
    names = [row[0] for row in server.query("SHOW BINARY LOGS")]
    sizes = {row[0]: int(row[1]) for row in server.query("SHOW BINARY LOGS")}
    before = names[names.index(file) - 1]
    return f"{before}:{sizes[before]}"


def test_live_apply_follows_the_server_while_it_writes(workload: Any, tmp_path: Path) -> None:
    """``apply mysql://…`` follows the server while the workload runs, is killed (-9) once on the way, and a
    last run with ``--stop-at-end`` catches up: the replica equals the source.
    ``BINLOG_MODEL_LIVE_APPLY_KILLS=N`` kills it N times instead, each at a seeded step of a longer workload
    and a seeded moment after it (a campaign; CI kills once)."""
    import random
    import signal
    import subprocess
    import sys
    import time

    server, db, first, work = workload
    state, to = tmp_path / "state", tmp_path / "replica"
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo), "BINLOG_MODEL_PASSWORD": ""}
    args = [sys.executable, "-m", "binlog_model.cli", "apply", f"mysql://root@localhost/?socket={server.socket}",
            "--state", str(state), "--to", f"delta:{to}", "--from", f"{first}:4", "--tables", f"{db}.*",
            "--commit-interval", "200ms", "--no-progress"]
    def start() -> subprocess.Popen[str]:
        """A follower, once it streams (its signal handlers are set by then)."""
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                cwd=repo)
        assert proc.stderr is not None
        for line in proc.stderr:
            if "streaming from" in line:
                return proc
        raise AssertionError(f"the follower ended before it streamed: {proc.wait()}")

    kills = int(os.environ.get("BINLOG_MODEL_LIVE_APPLY_KILLS", "1"))
    rng = random.Random(f"{server.label}:live-kills")
    steps = 200 if kills == 1 else 20 * kills
    plan = ({80: 1.0} if kills == 1
            else {s: rng.uniform(0.1, 1.5) for s in rng.sample(range(10, steps), kills)})
    follower = start()
    try:
        for step in range(steps):
            work.step()
            if step in plan:
                time.sleep(plan[step])
                follower.send_signal(signal.SIGKILL)        # a crash while following
                follower.communicate(timeout=60)
                follower = start()
        time.sleep(1.0)
        follower.send_signal(signal.SIGTERM)        # a clean stop: the transaction finished and committed
        _out, err = follower.communicate(timeout=120)
        assert follower.returncode == 0, err
    finally:
        if follower.poll() is None:
            follower.kill()
    done = subprocess.run([*args, "--stop-at-end"], capture_output=True, text=True, env=env, cwd=repo,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert _assert_equal(server, db, to) > 300


def test_replica_under_minimal_images_and_partial_json(workload: Any, tmp_path: Path) -> None:
    """``binlog_row_image=MINIMAL`` (and, on MySQL, ``binlog_row_value_options=PARTIAL_JSON``): updates log
    only the changed columns, JSON updates only their diffs; the replica completes them from its rows."""
    server, db, first, work = workload
    work.run("SET SESSION binlog_row_image = 'MINIMAL'")
    if "mariadb" not in server.version.lower():
        work.run("SET SESSION binlog_row_value_options = 'PARTIAL_JSON'")
    state, to = tmp_path / "state", tmp_path / "replica"
    for _ in range(250):
        work.step()
    if "mariadb" not in server.version.lower():     # the diffs are there to be completed
        logged = tmp_path / "events.jsonl"
        assert main(["events", *map(str, _binlogs_since(server, first)), "--out", str(logged),
                     "--allow-incomplete-tail", "--no-progress"]) == 0
        assert logged.read_text().count("jsonDiff") >= 5
    assert _apply(server, first, state, to) == 0
    assert _assert_equal(server, db, to) > 300


def test_every_ddl_kind_drop_and_recreate(server: LocalServer, fresh_db: str, tmp_path: Path) -> None:
    """ADD (with a default, AFTER a column), MODIFY, CHANGE (rename), DROP COLUMN, a new primary key,
    CONVERT TO, partitioning, TRUNCATE, DROP TABLE and a re-created table of the same name: the replica's
    columns and rows equal the source's after each; the dropped table's history is kept aside."""
    server.execute("FLUSH BINARY LOGS")
    first = str(server.query("SHOW BINARY LOGS")[-1][0])
    db = fresh_db
    server.execute([
        f"CREATE TABLE `{db}`.t (id INT PRIMARY KEY, a VARCHAR(10), n INT)",
        f"INSERT INTO `{db}`.t VALUES (1, 'x', 10), (2, 'y', 20), (3, NULL, 30)",
        f"ALTER TABLE `{db}`.t ADD COLUMN extra DECIMAL(6,2) NOT NULL DEFAULT 1.25 AFTER id",
        f"ALTER TABLE `{db}`.t MODIFY COLUMN n BIGINT",
        f"ALTER TABLE `{db}`.t CHANGE COLUMN a label VARCHAR(20)",
        f"UPDATE `{db}`.t SET n = n + 1 WHERE id = 2",
        f"ALTER TABLE `{db}`.t DROP COLUMN extra",
        f"ALTER TABLE `{db}`.t DROP PRIMARY KEY, ADD PRIMARY KEY (id, n)",
        f"UPDATE `{db}`.t SET n = 99 WHERE id = 1",
        f"ALTER TABLE `{db}`.t CONVERT TO CHARACTER SET utf8mb4",
        f"ALTER TABLE `{db}`.t PARTITION BY HASH (id) PARTITIONS 2",
        f"INSERT INTO `{db}`.t VALUES (4, 'z', 40)",
        f"ALTER TABLE `{db}`.t ADD COLUMN flag TINYINT NOT NULL DEFAULT 3, RENAME TO `{db}`.t2",
        f"INSERT INTO `{db}`.t2 VALUES (5, 'w', 50, 1)",
        f"RENAME TABLE `{db}`.t2 TO `{db}`.t",
        f"CREATE TABLE `{db}`.gone (id INT PRIMARY KEY, v INT)",
        f"INSERT INTO `{db}`.gone VALUES (1, 1), (2, 2)",
        f"TRUNCATE TABLE `{db}`.gone",
        f"INSERT INTO `{db}`.gone VALUES (3, 3)",
        f"DROP TABLE `{db}`.gone",
        f"CREATE TABLE `{db}`.gone (k VARCHAR(5) PRIMARY KEY)",
        f"INSERT INTO `{db}`.gone VALUES ('new')",
    ])
    state, to = tmp_path / "state", tmp_path / "replica"
    assert _apply(server, first, state, to) == 0
    replica = _replica(to)
    conn = server.connect(db)
    try:
        for table in ("t", "gone"):
            names, kinds, expected = source_rows(conn, table)
            data = replica.read(db, table)
            assert [n for n in data.column_names if not n.startswith("binlog_")] == names
            assert replica_rows(data, names, kinds) == expected, table
    finally:
        conn.close()
    aside = list((to / "_dropped" / db).iterdir())
    assert len(aside) == 1 and aside[0].name.startswith("gone@")
    # the dropped table as it was: its last row
    assert replica.read(db, aside[0].name, dropped=True).num_rows == 1


def test_initial_live_snapshot_then_the_binlog_from_its_position(workload: Any, tmp_path: Path) -> None:
    """``--initial live``: tables that hold rows before the state starts are read from the server at a
    recorded position (in chunks), then followed from there; a later run resumes from the state and takes
    no new snapshot. The replica equals the source after both."""
    import os
    import subprocess
    import sys

    server, db, _first, work = workload
    for _ in range(150):
        work.step()
    state, to = tmp_path / "state", tmp_path / "replica"
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo), "BINLOG_MODEL_PASSWORD": ""}
    args = [sys.executable, "-m", "binlog_model.cli", "apply", f"mysql://root@localhost/?socket={server.socket}",
            "--state", str(state), "--to", f"delta:{to}", "--initial", "live", "--initial-chunk", "7",
            "--tables", f"{db}.*", "--stop-at-end", "--no-progress"]
    first = subprocess.run(args, capture_output=True, text=True, env=env, cwd=repo, timeout=300, check=False)
    assert first.returncode == 0, first.stderr
    assert f"initial snapshot of {len(TABLES)} table(s)" in first.stderr
    assert _assert_equal(server, db, to) > 100
    for _ in range(100):
        work.step()
    again = subprocess.run(args, capture_output=True, text=True, env=env, cwd=repo, timeout=300, check=False)
    assert again.returncode == 0, again.stderr
    assert "initial snapshot" not in again.stderr
    assert _assert_equal(server, db, to) > 100


def test_initial_live_without_reload_privilege(workload: Any, tmp_path: Path) -> None:
    """An account with replication privileges and SELECT, but no RELOAD: MariaDB's snapshot takes no lock
    and works; MySQL's needs FLUSH TABLES WITH READ LOCK, and the run fails at once with one line naming
    RELOAD, before anything is written."""
    import os
    import secrets
    import subprocess
    import sys

    server, db, _first, work = workload
    for _ in range(40):
        work.step()
    user, password = f"nr_{secrets.token_hex(3)}", "no-reload-pw-1"
    server.execute(["SET SESSION sql_log_bin = 0", f"CREATE USER '{user}'@'%' IDENTIFIED BY '{password}'",
                    f"GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '{user}'@'%'",
                    f"GRANT SELECT ON `{db}`.* TO '{user}'@'%'"])
    try:
        repo = Path(__file__).resolve().parents[2]
        state, to = tmp_path / "state", tmp_path / "replica"
        done = subprocess.run(
            [sys.executable, "-m", "binlog_model.cli", "apply", f"mysql://{user}@127.0.0.1:{server.port}",
             "--state", str(state), "--to", f"delta:{to}", "--initial", "live", "--tables", f"{db}.*",
             "--stop-at-end", "--no-progress"], capture_output=True, text=True, cwd=repo, timeout=300,
            env={**os.environ, "PYTHONPATH": str(repo), "BINLOG_MODEL_PASSWORD": password}, check=False)
        if "mariadb" in server.version.lower():
            assert done.returncode == 0, done.stderr
            assert _assert_equal(server, db, to) > 100
        else:
            assert done.returncode == 2, done.stderr
            assert done.stderr.count("\n") == 1 and "RELOAD" in done.stderr, done.stderr
            assert not any(to.glob("*/*/_delta_log"))
    finally:
        server.execute(["SET SESSION sql_log_bin = 0", f"DROP USER '{user}'@'%'"])


def test_mariadb_snapshot_starts_over_when_ddl_races_it(mariadb: LocalServer, mariadb_db: str) -> None:
    """MariaDB's lock-free snapshot reads the schema before and after the snapshot starts: an ALTER in
    between (here, right after the first read) makes it start over, and the schema it returns is the one
    the snapshot's rows have."""
    from binlog_model.replica.initial import _mariadb_snapshot
    from schema_tracker.snapshot import catalog_from_server

    mariadb.execute(f"CREATE TABLE `{mariadb_db}`.t (id INT PRIMARY KEY)")
    reads: list[int] = []

    def read_catalog(conn: Any) -> Any:
        catalog = catalog_from_server(conn, databases=[mariadb_db])
        reads.append(len(catalog.table(mariadb_db, "t").columns))    # type: ignore[union-attr]
        if len(reads) == 1:
            mariadb.execute(f"ALTER TABLE `{mariadb_db}`.t ADD COLUMN extra INT")   # another session's DDL
        return catalog

    conn = mariadb.connect(mariadb_db)
    try:
        file, offset, catalog = _mariadb_snapshot(conn, read_catalog)
    finally:
        conn.close()
    assert reads == [1, 2, 2, 2]          # the first attempt saw the ALTER land: a second one
    assert [c.name for c in catalog.table(mariadb_db, "t").columns] == ["id", "extra"]  # type: ignore[union-attr]
    assert file and offset > 4
