"""``apply --to delta:s3://…`` against the S3 test server (moto) and MariaDB 10.11 (the store is the subject
here; the replica's semantics run on all three server kinds in test_apply.py): the seeded random workload
with a DROP and a RENAME (table moves, a copy then a delete on an object store) gives tables equal to
``SELECT *``; runs killed after a Delta commit, after a state commit and between a move's copy and its
delete resume; an unreachable store fails before anything is written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from binlog_model.faults import KILL_AT
from binlog_model.sinks.delta import OWNER_FILE, DeltaReplica
from binlog_model.testing.localserver import LocalServer
from tests._replica_workload import TABLES, replica_rows, source_rows, start_workload

pytest.importorskip("deltalake")

REPO = Path(__file__).resolve().parents[2]
BUCKET = "replica-bkt"      # its own bucket: the filesystem cache is per bucket


def _run(args: list[str], env: dict[str, str], kill_at: str | None = None
         ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), **env, **({KILL_AT: kill_at} if kill_at else {})}
    return subprocess.run([sys.executable, "-m", "binlog_model.cli", "apply", *args], capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=600, check=False)


def test_replica_on_s3_equals_the_source_and_survives_a_kill_inside_a_move(
        mariadb: LocalServer, mariadb_db: str, s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, db = mariadb, mariadb_db
    first, work = start_workload(server, db, seed=20261129)
    conn = work.conn
    for _ in range(150):
        work.step()
    work.run("CREATE TABLE gone (id INT PRIMARY KEY, v INT)")
    work.run("INSERT INTO gone VALUES (1, 1)")
    work.run("DROP TABLE gone")
    work.run("CREATE TABLE moved (id INT PRIMARY KEY)")
    work.run("INSERT INTO moved VALUES (7)")
    work.run("RENAME TABLE moved TO arrived")
    for _ in range(50):
        work.step()
    server.execute("FLUSH BINARY LOGS")
    names = [row[0] for row in server.query("SHOW BINARY LOGS")]
    files = [str(server.binlog_dir / n) for n in names[names.index(first):]]
    s3.filesystem().create_dir(BUCKET)
    root = f"s3://{BUCKET}/{db}"
    args = [*files, "--state", str(tmp_path / "state"), "--to", f"delta:{root}", "--tables", f"{db}.*",
            "--allow-incomplete-tail", "--no-progress", "--commit-bytes", "3000"]
    # killed after a Delta commit the state does not name yet, then after a state commit (while the next
    # commit's MERGEs may run), then after the dropped table's objects were copied aside, before the
    # originals were deleted: each run resumes from the last
    for kill_at in ("replica-commit:3", "state-committed:2", "replica-moved:1"):
        killed = _run(args, s3.env(), kill_at=kill_at)
        assert killed.returncode == -9, (kill_at, killed.stderr)
    done = _run(args, s3.env())
    assert done.returncode == 0, done.stderr

    for key, value in s3.env().items():
        monkeypatch.setenv(key, value)
    with s3.filesystem().open_input_stream(f"{BUCKET}/{db}/{OWNER_FILE}") as fh:
        replica = DeltaReplica(root, json.loads(fh.read())["app_id"])
    compared = 0
    for table in [*TABLES, "arrived"]:
        names_, kinds, expected = source_rows(conn, table)
        data = replica.read(db, table)
        assert [n for n in data.column_names if not n.startswith("binlog_")] == names_, table
        assert replica_rows(data, names_, kinds) == expected, f"{db}.{table} differs from SELECT *"
        compared += len(expected) * len(names_)
    conn.close()
    assert compared > 300
    assert {t for _, t in replica.tables()} == {*TABLES, "arrived"}
    assert [name.split("@")[0] for name in _listing(s3, f"{BUCKET}/{db}/_dropped/{db}")] == ["gone"]
    aside = _listing(s3, f"{BUCKET}/{db}/_dropped/{db}")[0]
    assert replica.read(db, aside, dropped=True).to_pylist()[0]["id"] == 1


def _listing(s3: Any, prefix: str) -> list[str]:
    import pyarrow.fs as pafs

    return sorted(i.base_name for i in s3.filesystem().get_file_info(pafs.FileSelector(prefix)))


def test_an_unreachable_store_fails_before_anything_is_written(
        mariadb: LocalServer, mariadb_db: str, tmp_path: Path) -> None:
    from binlog_model.testing.localserver import free_port

    server = mariadb
    server.execute(f"CREATE TABLE `{mariadb_db}`.t (id INT PRIMARY KEY)")
    names = [row[0] for row in server.query("SHOW BINARY LOGS")]
    endpoint = f"http://127.0.0.1:{free_port()}"        # nothing listens there
    env = {"AWS_ENDPOINT_URL": endpoint, "AWS_ENDPOINT_URL_S3": endpoint, "AWS_ACCESS_KEY_ID": "x",
           "AWS_SECRET_ACCESS_KEY": "y", "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_EC2_METADATA_DISABLED": "true"}
    failed = _run([str(server.binlog_dir / names[-1]), "--state", str(tmp_path / "state"), "--to",
                   "delta:s3://nowhere/replica", "--allow-incomplete-tail", "--no-progress"], env)
    assert failed.returncode == 2, failed.stderr
    assert failed.stderr.count("\n") == 1, failed.stderr
    assert "cannot reach the replica's store s3://nowhere/replica" in failed.stderr
    from binlog_model.io.state import RunState

    assert RunState.load(tmp_path / "state").position is None       # nothing applied
