"""The main job on a 3-file MySQL 9.7 archive with its dump as snapshot (issue 22): a database created after
the dump without a charset, a TEXT and a VARCHAR(255) column of non-latin1 text and DDL between files. Before
the fix the job stopped with ``maximum byte length is 1020 in the binlog but 255 in the schema`` (and a TEXT
alone came out as mojibake); the typed tables must hold exactly what SELECT returns."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests._paths import REPO

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark

TEXTS = ["βeta 日本 ü", "Привет 🙂", "Grüße", "Καλημέρα"]


def test_resolve_with_a_dump_snapshot_keeps_new_databases_text(mysql: Any, mysql_db: str,
                                                                 tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    app, shop = mysql_db, f"{mysql_db}_shop"
    mysql.execute(f"CREATE TABLE `{app}`.t (id INT PRIMARY KEY, v VARCHAR(40))")
    dump = subprocess.run([*mysql.dump_command(), "--no-data", f"--socket={mysql.socket}", "--user=root",
                           "--databases", app], capture_output=True, text=True, check=True)
    snapshot = tmp_path / "app.sql"
    snapshot.write_text(dump.stdout)
    mysql.flush_and_collect()
    archive = tmp_path / "binlogs"
    try:
        files = [
            [f"CREATE DATABASE `{shop}`",
             f"CREATE TABLE `{shop}`.notes (id INT PRIMARY KEY, body TEXT)",
             f"INSERT INTO `{shop}`.notes VALUES (1, '{TEXTS[0]}'), (2, '{TEXTS[1]}')"],
            [f"CREATE TABLE `{shop}`.titles (id INT PRIMARY KEY, title VARCHAR(255))",
             f"INSERT INTO `{shop}`.titles VALUES (1, '{TEXTS[2]}')",
             f"INSERT INTO `{app}`.t VALUES (1, '{TEXTS[3]}')"],
            [f"ALTER TABLE `{shop}`.titles ADD COLUMN sub TEXT",
             f"INSERT INTO `{shop}`.titles VALUES (2, '{TEXTS[0]}', '{TEXTS[1]}')",
             f"UPDATE `{shop}`.notes SET body = '{TEXTS[3]}' WHERE id = 2"],
        ]
        for statements in files:
            mysql.execute(statements)
            mysql.flush_and_collect(archive)
        assert len(list(archive.iterdir())) == 3
        out = tmp_path / "out"
        env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
        done = subprocess.run([sys.executable, "-m", "binlog_model.cli", "resolve", str(archive),
                               "--snapshot", str(snapshot), "--out", str(out), "--master", "local[1]"],
                              capture_output=True, text=True, env=env, cwd=REPO, timeout=600, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        for db, table, columns in ((shop, "notes", ["id", "body"]), (shop, "titles", ["id", "title", "sub"]),
                                   (app, "t", ["id", "v"])):
            typed = pq.read_table(out / f"db={db}" / f"table={table}").to_pylist()
            # the last image of each key: the table's current rows, as SELECT returns them
            latest: dict[int, tuple[Any, ...]] = {}
            for row in sorted(typed, key=lambda r: tuple(r["binlog_order"].values())):
                latest[row["id"]] = tuple(row.get(c) for c in columns)
            listed = ", ".join(columns)
            selected = {r[0]: tuple(r) for r in mysql.query(f"SELECT {listed} FROM `{db}`.`{table}`")}
            assert latest == selected, f"{db}.{table}"
    finally:
        mysql.execute(f"DROP DATABASE IF EXISTS `{shop}`")
