"""Charset defaults after a dump snapshot (issue 22): a database created after the dump without a charset
takes the ``collation_server`` its own QUERY event logs, its tables take the database's default, and
``ALTER DATABASE`` changes that default for later tables. Decoded with the dump as snapshot, every text value
equals SELECT on each server of the matrix.

The scenario is the one a new user hit on MySQL 9.7 (default utf8mb4): ``mysqldump --no-data --databases
app`` as the snapshot, then ``CREATE DATABASE shop`` (no charset), a TEXT and a VARCHAR(255) table, and
non-latin1 text. Before the fix the TEXT came out as mojibake (``Î²eta``) and the VARCHAR(255) stopped with
``maximum byte length is 1020 in the binlog but 255 in the schema``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from binlog_model.cli import main

TEXT = "βeta 日本 ü"


def _dump(server: Any, db: str, out: Path) -> Path:
    done = subprocess.run([*server.dump_command(), "--no-data", f"--socket={server.socket}", "--user=root",
                           "--databases", db], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    out.write_text(done.stdout)
    return out


def _events(args: list[str], capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    capsys.readouterr()
    status = main(["events", *args])
    out, err = capsys.readouterr()
    assert status == 0, err
    return [json.loads(line) for line in out.splitlines()]


def _values(events: list[dict[str, Any]], db: str) -> dict[tuple[str, Any], dict[str, Any]]:
    """(table, id) → the after image of every insert into ``db``."""
    out = {}
    for e in events:
        if e.get("db") == db and e["operation"] == "INSERT":
            for row in e["rows"]:
                after = {c["name"]: next(iter(c["value"].values())) for c in row["after"]}
                out[(e["table"], after["id"])] = after
    return out


def _scenario(app: str, shop: str) -> list[str]:
    """The statements after the snapshot: new databases without a charset under the server default and
    under a session ``character_set_server``, ALTER DATABASE before a later table."""
    return [
        f"CREATE DATABASE `{shop}`",
        f"CREATE TABLE `{shop}`.notes (id INT PRIMARY KEY, body TEXT, title VARCHAR(255))",
        f"INSERT INTO `{shop}`.notes VALUES (1, '{TEXT}', '{TEXT}')",
        # the session's server default, not the global one, is what CREATE DATABASE takes
        "SET SESSION collation_server = 'latin1_swedish_ci'",
        f"CREATE DATABASE `{shop}_l1`",
        "SET SESSION collation_server = DEFAULT",
        f"CREATE TABLE `{shop}_l1`.notes (id INT PRIMARY KEY, body TEXT, title VARCHAR(255))",
        f"INSERT INTO `{shop}_l1`.notes VALUES (1, 'Grüße à ÿ', 'Ærø')",
        # a later default for later tables; the earlier table keeps latin1
        f"ALTER DATABASE `{shop}_l1` CHARACTER SET utf8mb4",
        f"CREATE TABLE `{shop}_l1`.later (id INT PRIMARY KEY, body TEXT, title VARCHAR(255))",
        f"INSERT INTO `{shop}_l1`.later VALUES (1, '{TEXT} 🙂', 'Κύριε')",
        f"INSERT INTO `{shop}_l1`.notes VALUES (2, 'ß', 'é')",
        f"INSERT INTO `{app}`.t VALUES (1, '{TEXT}')",
    ]


def test_new_databases_after_a_dump_snapshot_decode_as_the_server_stored_them(
        server: Any, fresh_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    app, shop = fresh_db, f"{fresh_db}_shop"
    server.execute(f"CREATE TABLE `{app}`.t (id INT PRIMARY KEY, v VARCHAR(40))")
    snapshot = _dump(server, app, tmp_path / "app.sql")
    server.flush_and_collect()
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SET NAMES utf8mb4")
            for sql in _scenario(app, shop):
                cur.execute(sql)
        conn.commit()
    finally:
        conn.close()
    try:
        files = [str(p) for p in server.flush_and_collect()]
        events = _events([*files, "--snapshot", str(snapshot)], capsys)
        tables = {(shop, "notes"): ("id", "body", "title"), (f"{shop}_l1", "notes"): ("id", "body", "title"),
                  (f"{shop}_l1", "later"): ("id", "body", "title"), (app, "t"): ("id", "v")}
        expected = {(db, table, row[0]): dict(zip(names, row, strict=True))
                    for (db, table), names in tables.items()
                    for row in server.query(f"SELECT * FROM `{db}`.`{table}`")}
        got = {(db, table, key): after for db in {db for db, _ in tables}
               for (table, key), after in _values(events, db).items()}
        assert len(expected) == 5
        assert got == expected
        assert got[(shop, "notes", 1)]["body"] == TEXT
        # without a snapshot the same binlog decodes the same
        alone = _events(files, capsys)
        for db in (shop, f"{shop}_l1"):
            assert _values(alone, db) == _values(events, db)
    finally:
        server.execute(f"DROP DATABASE IF EXISTS `{shop}`")
        server.execute(f"DROP DATABASE IF EXISTS `{shop}_l1`")


# --- the tracked charset checked against what the TABLE_MAP states -----------------------------------------


@pytest.fixture(scope="module")
def mysql_minimal() -> Any:
    """MySQL 9.7 with binlog_row_metadata=MINIMAL: charsets are still logged in the TABLE_MAP."""
    from binlog_model.testing.mysql import MySQLServer, mysql_available

    ok, reason = mysql_available()
    if not ok:
        pytest.skip(f"no local MySQL: {reason}")
    with MySQLServer(row_image="FULL", row_metadata="MINIMAL") as server:
        yield server


def test_a_snapshot_whose_charset_the_table_map_contradicts_is_a_typed_error(
        server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _contradicted_charset(server, tmp_path, capsys)


def test_the_charset_check_holds_with_minimal_row_metadata_on_mysql(
        mysql_minimal: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _contradicted_charset(mysql_minimal, tmp_path, capsys)


def _contradicted_charset(server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"cs_{tmp_path.name[-8:]}".replace("-", "_")
    server.execute([f"CREATE DATABASE `{db}` CHARACTER SET utf8mb4",
                    f"CREATE TABLE `{db}`.t (id INT PRIMARY KEY, body TEXT) CHARACTER SET utf8mb4"])
    # A snapshot that says latin1 where the server stores utf8mb4 (a stale or edited dump): decoding in it
    # would turn 'β' into 'Î²'.
    snapshot = tmp_path / "stale.sql"
    snapshot.write_text(f"CREATE DATABASE `{db}` CHARACTER SET latin1;\nUSE `{db}`;\n"
                        "CREATE TABLE t (id INT PRIMARY KEY, body TEXT) CHARACTER SET latin1;\n")
    server.flush_and_collect()
    try:
        server.execute(f"INSERT INTO `{db}`.t VALUES (1, '{TEXT}')")
        files = [str(p) for p in server.flush_and_collect()]
        for lenient, error in (([], "SchemaMismatchError"), (["--lenient-ddl"], "UncertainSchemaError")):
            capsys.readouterr()
            status = main(["events", *files, "--snapshot", str(snapshot), *lenient])
            out, err = capsys.readouterr()
            assert status != 0 and f"{db}.t" not in out
            line = err.strip().splitlines()[-1]
            assert line.startswith(f"error: {error}"), err
            assert "column 2 (body)" in line and "charset is utf8mb4 in the binlog" in line
            assert "latin1 in the schema" in line and f"table {db}.t" in line and " at " in line
    finally:
        server.execute(f"DROP DATABASE IF EXISTS `{db}`")
