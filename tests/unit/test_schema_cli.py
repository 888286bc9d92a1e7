"""``binlog-model schema``: text and JSON output over real binlogs and SQL files, and its errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from binlog_model.cli import main
from binlog_model.commands.schema import command
from binlog_model.io.snapshots import load_history
from schema_tracker.history import FORMAT
from tests._paths import CORPUS, require

BINLOG = CORPUS / "mysql-cdc-rs/tests/events/8.0/02_query_bigger/binlog.000733"
DUMP = CORPUS / "binlog-parser/data/fixtures/test_db.sql"


def test_binlog_text_output_lists_history_and_catalog() -> None:
    result = CliRunner().invoke(command, [str(require(BINLOG))])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "# at binlog.000733:236 db test" in out  # anonymous GTIDs are not shown as GTIDs
    assert "-> CreateTable test.LINEITEM (16 columns, primary key ['L_ORDERKEY', 'L_LINENUMBER', " in out
    assert "-> DropTable test.Demo" in out
    assert "== final catalog ==" in out and "`L_QUANTITY` decimal(12,3) NOT NULL" in out


def test_sql_json_output_is_one_versioned_document(tmp_path: Path) -> None:
    script = tmp_path / "ddl.sql"
    script.write_text("CREATE TABLE t (a int PRIMARY KEY, e enum('x','y'));\n"
                      "ALTER TABLE t CHANGE a b bigint NOT NULL, ADD c varchar(3) CHARACTER SET latin1;\n")
    saved = tmp_path / "h.json"
    result = CliRunner().invoke(command, ["--sql", str(script), "-d", "db", "--json", "--save", str(saved)])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["format"] == FORMAT and len(doc["entries"]) == 2
    assert [c["type"] for c in doc["entries"][1]["changes"]] == ["RenameColumn", "CreateOrModifyColumn",
                                                                 "CreateOrModifyColumn"]
    (table,) = doc["final"]["tables"]
    assert table["primary_key"] == ["b"]
    assert {c["name"]: c["charset"] for c in table["columns"]} == {"b": None, "e": "latin1", "c": "latin1"}
    assert load_history(saved).catalog.table("db", "t") is not None


def test_snapshot_seeds_the_catalog(tmp_path: Path) -> None:
    script = tmp_path / "ddl.sql"
    script.write_text("ALTER TABLE buildings ADD COLUMN floors int AFTER building_no;")
    result = CliRunner().invoke(command, ["--snapshot", str(require(DUMP)), "--sql", str(script),
                                          "-d", "test_db"])
    assert result.exit_code == 0, result.output
    assert "-> CreateOrModifyColumn test_db.buildings: `floors` int(11) AFTER `building_no`" in result.output


def test_unsupported_ddl_fails_with_one_line_or_is_skipped_when_lenient(tmp_path: Path,
                                                                        capsys: Any) -> None:
    script = tmp_path / "bad.sql"
    script.write_text("CREATE TABLE t (a int);\nALTER TABLE t ADD SYSTEM VERSIONING;\n")
    assert main(["schema", "--sql", str(script), "-d", "db"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: UnsupportedDDLError:") and "bad.sql:2" in err
    assert "SYSTEM VERSIONING" in err
    result = CliRunner().invoke(command, ["--sql", str(script), "-d", "db", "--lenient"])
    assert result.exit_code == 0
    assert "SkippedStatement db.t" in result.output and "[UNCERTAIN]" in result.output


@pytest.mark.parametrize("args", [[], ["x.bin", "--sql", "y.sql"]])
def test_bad_arguments(args: list[str]) -> None:
    assert main(["schema", *args]) == 2
