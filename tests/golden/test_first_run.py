"""What a new user hits first: snapshots of every kind, and the errors of the first runs, each one line.

Snapshots: a real ``mysqldump``/``mariadb-dump --no-data DB`` (no ``USE`` line) works as is (the header
names the database), without its header it asks for ``--database``; a live server URL gives the same
schema as the dump; ``schema --save`` then ``events --snapshot`` agrees with ``events`` alone on every
golden fixture (both take the server charset from the binlog). Errors: ``--always-include`` typos, an
unwritable ``--out``, an unknown ``--server-charset``, a reader that stops early, the type names in a
schema mismatch, the wording of the incomplete-transaction and unknown-table errors.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from binlog_model.cli import main
from binlog_model.testing.golden import fixture_options, iter_fixture_dirs, read_meta
from schema_tracker.history import catalog_to_json
from tests._paths import CORPUS, REPO, require

GOLDEN = REPO / "fixtures" / "golden"
FIXTURES = sorted(iter_fixture_dirs(GOLDEN))


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main(args)
    out, err = capsys.readouterr()
    return status, out, err


def _fixture_args(fixture: Path) -> list[str]:
    meta = read_meta(fixture)
    options = fixture_options(fixture, meta)
    files = sorted(str(p) for p in (fixture / "binlogs").iterdir())
    args = [*files, "--source", options.source, "--image", options.image]
    for spec in options.always_include:
        args += ["--always-include", spec]
    return args


# --- schema --save → events --snapshot ------------------------------------------------------------------


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_schema_save_then_events_snapshot_agrees_with_events_alone(
        fixture: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted(str(p) for p in (fixture / "binlogs").iterdir())
    saved = tmp_path / "h.json"
    # A fixture whose binlogs start after its tables were made (the spec's example on MySQL) starts from
    # its snapshot on both sides; the others start empty.
    start = fixture / "snapshot.json"
    starts_with_tables = start.is_file() and bool(json.loads(start.read_text())["initial"]["databases"])
    base = ["--snapshot", str(start)] if starts_with_tables else []
    assert _run(["schema", *files, *base, "--save", str(saved)], capsys)[0] == 0
    status, alone, err = _run(["events", *_fixture_args(fixture), *base], capsys)
    assert status == 0, err
    status, with_snapshot, err = _run(["events", *_fixture_args(fixture), "--snapshot", str(saved)], capsys)
    assert status == 0, err
    assert with_snapshot == alone
    # Both took the server charset from the binlog (the fixture server's, utf8mb4 unless its flags say
    # otherwise), not a latin1 default.
    flags = read_meta(fixture)["server"].get("flags", [])
    charset = next((f.split("=", 1)[1] for f in flags if f.startswith("--character-set-server=")), "utf8mb4")
    assert json.loads(saved.read_text())["initial"]["server_charset"] == charset


def test_a_saved_history_is_a_snapshot_for_schema_too(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted(str(p) for p in (GOLDEN / "mariadb" / "ddl_between_dml" / "binlogs").iterdir())
    saved = tmp_path / "history.json"
    assert _run(["schema", *files, "--save", str(saved)], capsys)[0] == 0
    # The same binlog again on top of its own history: its DDL is recognised as done, not applied twice.
    status, out, err = _run(["schema", *files, "--snapshot", str(saved), "--json"], capsys)
    assert status == 0, err
    assert json.loads(out)["final"] == json.loads(saved.read_text())["final"]
    # A history saved from SQL, continued by more SQL.
    base, more = tmp_path / "a_base.sql", tmp_path / "b_more.sql"
    base.write_text("CREATE DATABASE shop;\nUSE shop;\nCREATE TABLE items (id INT PRIMARY KEY);\n")
    more.write_text("ALTER TABLE items ADD COLUMN name VARCHAR(10);\n")
    assert _run(["schema", "--sql", str(base), "--save", str(tmp_path / "h2.json")], capsys)[0] == 0
    status, out, err = _run(["schema", "--snapshot", str(tmp_path / "h2.json"), "--sql", str(more),
                             "-d", "shop", "--json"], capsys)
    assert status == 0, err
    (table,) = json.loads(out)["final"]["tables"]
    assert [c["name"] for c in table["columns"]] == ["id", "name"]


def test_unknown_server_charset_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sql = tmp_path / "a.sql"
    sql.write_text("CREATE DATABASE d;\n")
    status, _, err = _run(["schema", "--sql", str(sql), "--server-charset", "klingon"], capsys)
    assert status == 2
    assert "unknown --server-charset 'klingon'" in err and err.count("\n") == 1
    status, out, _ = _run(["schema", "--sql", str(sql), "--server-charset", "UTF8", "--json"], capsys)
    assert status == 0
    assert json.loads(out)["final"]["databases"][0]["charset"] == "utf8mb3"


# --- single-database dumps and live servers, on MariaDB and MySQL ----------------------------------------


@pytest.fixture
def one_db_binlogs(server: Any, fresh_db: str, tmp_path: Path) -> tuple[Any, str, Path, list[Path]]:
    """Tables created before the binlogs start, a real ``--no-data`` dump of that one database, and the
    binlog files holding only this test's DML."""
    server.execute([f"CREATE TABLE `{fresh_db}`.items (id INT PRIMARY KEY, name VARCHAR(20), "
                    "price DECIMAL(8,2), currency CHAR(3))",
                    f"CREATE TABLE `{fresh_db}`.notes (body TEXT)"])
    dump = tmp_path / "dump.sql"
    done = subprocess.run([*server.dump_command(), "--no-data", f"--socket={server.socket}", "--user=root",
                           fresh_db], capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    dump.write_bytes(done.stdout)
    assert b"USE " not in done.stdout, "a dump of one database names it only in its header"
    server.flush_and_collect()         # from here on the binlog holds only this test's statements
    server.execute([f"INSERT INTO `{fresh_db}`.items VALUES (1, 'pen', 1.50, 'EUR'), (2, 'ink', 7.25, 'USD')",
                    f"UPDATE `{fresh_db}`.items SET price = 2.00 WHERE id = 1",
                    f"INSERT INTO `{fresh_db}`.notes VALUES ('hello')",
                    f"DELETE FROM `{fresh_db}`.items WHERE id = 2"])
    files = server.flush_and_collect(tmp_path / "binlogs")
    return server, fresh_db, dump, files


def test_single_database_dump_is_a_snapshot(one_db_binlogs: tuple[Any, str, Path, list[Path]], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    _, db, dump, files = one_db_binlogs
    args = ["events", *map(str, files), "--always-include", f"{db}.items.currency"]
    status, out, err = _run([*args, "--snapshot", str(dump)], capsys)
    assert status == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    update = next(e for e in events if e.get("operation") == "UPDATE")
    assert update["db"] == db and update["table"] == "items"
    assert [c["name"] for c in update["rows"][0]["before"]] == ["currency"]
    # Without the header line the dump names no database: the error says what to do, in one line.
    headless = tmp_path / "headless.sql"
    headless.write_text(re.sub(r"(?m)^-- Host:.*$", "", dump.read_text()))
    status, _, err = _run([*args, "--snapshot", str(headless)], capsys)
    assert status == 2 and "--database" in err and "no USE statement" in err and err.count("\n") == 1
    status, again, err = _run([*args, "--snapshot", str(headless), "--database", db], capsys)
    assert status == 0, err
    assert again == out


def test_live_server_snapshot_equals_the_dump(one_db_binlogs: tuple[Any, str, Path, list[Path]],
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    server, db, dump, files = one_db_binlogs
    user, password = f"snap_{db[-6:]}", "s3cret-pw"
    server.execute([f"CREATE USER '{user}'@'%' IDENTIFIED BY '{password}'",
                    f"GRANT SELECT ON `{db}`.* TO '{user}'@'%'"])
    try:
        monkeypatch.setenv("BINLOG_MODEL_PASSWORD", password)
        url = f"mysql://{user}@127.0.0.1:{server.port}/{db}"
        if server.family == "MySQL":
            # caching_sha2_password sends the password over TCP only with TLS or an RSA exchange; over the
            # socket it is plain. The socket form of the URL exists for exactly this.
            url = f"mysql://{user}@localhost/{db}?socket={server.socket}"
        args = ["events", *map(str, files)]
        status, from_url, err = _run([*args, "--snapshot", url], capsys)
        assert status == 0, err
        status, from_dump, err = _run([*args, "--snapshot", str(dump)], capsys)
        assert status == 0, err
        assert from_url == from_dump
        from binlog_model.io.live import catalog_from_url
        from binlog_model.io.snapshots import read_sql_text
        from schema_tracker.snapshot import catalog_from_dump
        live = catalog_from_url(url)
        dumped = catalog_from_dump(read_sql_text(dump), live.__class__(server_charset=live.server_charset,
                                                                        server_collation=live.server_collation))
        def shape(catalog: Any) -> list[Any]:
            # What typing rows depends on (defaults and display widths differ between the two sources).
            return [(t["db"], t["name"], t["primary_key"],
                     [(c["name"], c["data_type"], c["length"], c["precision"], c["scale"], c["unsigned"],
                       c["charset"], c["nullable"]) for c in t["columns"]])
                    for t in catalog_to_json(catalog)["tables"]]
        assert shape(live) == shape(dumped)
        # A wrong password is one line that does not echo it; a password in the URL wins over the
        # environment's, and is never echoed either.
        monkeypatch.setenv("BINLOG_MODEL_PASSWORD", "wrong-pw")
        status, _, err = _run([*args, "--snapshot", url], capsys)
        assert status == 2 and "refused the login" in err and "wrong-pw" not in err and err.count("\n") == 1
        with_password = url.replace(f"//{user}@", f"//{user}:{password}@")
        status, from_url_password, err = _run([*args, "--snapshot", with_password], capsys)
        assert status == 0, err
        assert from_url_password == from_dump and password not in err
        bad = url.replace(f"//{user}@", f"//{user}:bad-in-url@")
        status, _, err = _run([*args, "--snapshot", bad], capsys)
        assert status == 2 and "refused the login" in err and "bad-in-url" not in err and err.count("\n") == 1
    finally:
        server.execute(f"DROP USER '{user}'@'%'")


# --- errors ---------------------------------------------------------------------------------------------

SPEC = GOLDEN / "mariadb" / "spec_example"


def _spec_files() -> list[str]:
    return sorted(str(p) for p in (SPEC / "binlogs").iterdir())


def test_always_include_typo_in_a_column_fails_at_the_tables_first_row_event(
        capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(["events", *_spec_files(), "--always-include", "ppc.campaigns.curency"], capsys)
    assert status == 2
    assert "curency" in err and "ppc.campaigns" in err and "currency" in err, err   # lists the real columns
    assert err.count("\n") == 1


def test_always_include_typo_is_caught_at_start_when_the_snapshot_knows_the_table(
        one_db_binlogs: tuple[Any, str, Path, list[Path]], capsys: pytest.CaptureFixture[str]) -> None:
    _, db, dump, files = one_db_binlogs
    status, out, err = _run(["events", *map(str, files), "--snapshot", str(dump),
                             "--always-include", f"{db}.items.curency"], capsys)
    assert status == 2 and "in the snapshot" in err and "curency" in err
    assert out == "", "the error comes before any event"


def test_always_include_table_never_seen_is_a_warning_in_stats(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(["events", *_spec_files(), "--always-include", "ppc.campains.currency", "--stats"],
                          capsys)
    assert status == 0
    assert "warning: --always-include names table ppc.campains" in err


def test_out_into_a_missing_directory_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(["events", *_spec_files(), "--out", str(tmp_path / "no" / "such" / "x.jsonl")],
                          capsys)
    assert status == 2 and "does not exist" in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_reader_that_stops_early_ends_the_run_quietly() -> None:
    files = sorted(str(p) for p in (GOLDEN / "mariadb" / "large_statement" / "binlogs").iterdir())
    proc = subprocess.Popen([sys.executable, "-m", "binlog_model.cli", "events", *files],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.read(100)          # like `| head -c 100`: read a little, then go away
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0, err
    assert first and err == b""


def test_schema_mismatch_names_mysql_types() -> None:
    from binlog_model.errors import SchemaMismatchError
    from binlog_model.io.files import iter_events
    from binlog_model.io.snapshots import load_snapshot
    from binlog_model.resolve.assembler import StatementAssembler
    from binlog_model.wire.events import QueryEvent

    wrong = ("CREATE DATABASE ppc;\nUSE ppc;\n"
             "CREATE TABLE campaigns (cid INT PRIMARY KEY, name DATE, currency INT, geo INT, shows INT, "
             "clicks INT);")
    events = list(iter_events(_spec_files()))
    # Start after the fixture's own CREATE TABLE, so the (wrong) snapshot is what the rows meet.
    created = min(i for i, e in enumerate(events)
                  if isinstance(e, QueryEvent) and "CREATE TABLE" in e.query and "campaigns" in e.query)
    from schema_tracker.snapshot import catalog_from_dump
    assembler = StatementAssembler(load_snapshot(catalog_from_dump(wrong)))
    with pytest.raises(SchemaMismatchError) as caught:
        list(assembler.assemble(events[created + 1:]))
    text = str(caught.value)
    assert "type=" not in text and "meta=" not in text
    assert "binlog columns: ['@1 INT', '@2 BLOB/TEXT', '@3 ENUM (1-byte)'" in text, text


def test_unknown_table_error_says_the_setting_was_off(capsys: pytest.CaptureFixture[str]) -> None:
    # A MySQL 5.7 binlog (no column names in TABLE_MAP) whose tables were created before it starts.
    path = require(CORPUS / "mysql-binlog-connector-java" / "src" / "test" / "resources" /
                   "mysql-bin.checksum-crc32")
    _, _, err = _run(["events", str(path)], capsys)
    if "UnknownTableError" not in err:
        pytest.skip(f"the corpus file defines its tables: {err.strip()}")
    assert "did not run with binlog_row_metadata=FULL" in err
    assert "carries no column names (binlog_row_metadata=FULL)" not in err


def test_incomplete_transaction_error_names_the_flag(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    data = (SPEC / "binlogs" / "mysql-bin.000001").read_bytes()
    # Cut the file at the end of an event inside a transaction: find a TABLE_MAP (type 19) boundary.
    from binlog_model.io.files import iter_events
    cut = next(e.header.offset + e.header.event_size
               for e in iter_events(SPEC / "binlogs" / "mysql-bin.000001") if e.header.event_type == 19)
    path = tmp_path / "mysql-bin.000001"
    path.write_bytes(data[:cut])
    status, _, err = _run(["events", str(path)], capsys)
    assert status == 2 and "IncompleteTransactionError" in err
    assert "--allow-incomplete-tail" in err and "(no XID/COMMIT) (expected" not in err
    status, _, err = _run(["events", str(path), "--allow-incomplete-tail", "--stats"], capsys)
    assert status == 0 and "incomplete_transactions=1" in err
    # Cut inside an event: the flag stops before it too, and counts its bytes.
    path.write_bytes(data[:cut + 7])
    status, _, err = _run(["events", str(path)], capsys)
    assert status == 2 and "--allow-incomplete-tail" in err
    status, _, err = _run(["events", str(path), "--allow-incomplete-tail", "--stats"], capsys)
    assert status == 0 and "partial_tail_bytes=7" in err


def test_resolve_checks_its_snapshot_and_state_before_spark(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(["resolve", *_spec_files(), "--out", str(tmp_path / "o"), "--snapshot",
                           str(tmp_path / "nope.sql")], capsys)
    assert status == 2 and "snapshot file not found" in err and err.count("\n") == 1
    status, _, err = _run(["resolve", "--out", str(tmp_path / "o"), "--state", str(tmp_path / "s")], capsys)
    assert status == 2 and "--state needs the binlog PATHS" in err
