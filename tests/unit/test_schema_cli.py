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


def test_ddl_prints_the_final_schema_as_the_binlogs_server_writes_it() -> None:
    result = CliRunner().invoke(command, [str(require(BINLOG)), "--ddl"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.startswith("CREATE DATABASE IF NOT EXISTS `test`;\n")
    assert "CREATE TABLE `test`.`LINEITEM` (\n  `L_ORDERKEY` bigint NOT NULL,\n  `L_PARTKEY` int NOT NULL," \
        in out
    assert "  PRIMARY KEY (`L_ORDERKEY`, `L_LINENUMBER`, `L_SHIPDATE`)\n) DEFAULT CHARSET=utf8mb3" in out
    assert "int(11)" not in out   # a MySQL 8 binlog: no display widths
    mariadb = CliRunner().invoke(command, [str(require(BINLOG)), "--ddl", "--ddl-for", "mariadb"]).output
    assert "  `L_ORDERKEY` bigint(20) NOT NULL,\n  `L_PARTKEY` int(11) NOT NULL," in mariadb


def test_ddl_at_a_position_is_the_schema_before_the_statement_there(tmp_path: Path) -> None:
    script = tmp_path / "ddl.sql"
    script.write_text("CREATE TABLE t (a int PRIMARY KEY);\nALTER TABLE t ADD b varchar(3) AFTER a;\n"
                      "CREATE TABLE u (x bigint unsigned);\n")
    base = ["--sql", str(script), "-d", "db", "--ddl"]
    before = CliRunner().invoke(command, [*base, "--at", "ddl.sql:2"])
    assert before.exit_code == 0, before.output
    assert before.output == ("CREATE DATABASE IF NOT EXISTS `db`;\n"
                             "CREATE TABLE `db`.`t` (\n  `a` int(11) NOT NULL,\n  PRIMARY KEY (`a`)\n"
                             ") DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci;\n")
    end = CliRunner().invoke(command, base).output
    assert "  `a` int(11) NOT NULL,\n  `b` varchar(3) DEFAULT NULL,\n" not in end   # no DEFAULT was given
    assert "  `a` int(11) NOT NULL,\n  `b` varchar(3),\n" in end
    assert "CREATE TABLE `db`.`u` (\n  `x` bigint(20) unsigned\n)" in end


def test_a_mysql9_dump_reads_and_prints_without_display_widths(tmp_path: Path) -> None:
    # mysqldump names its server in the header; MySQL 8.0.19+ and 9 write `bigint`, not `bigint(20)`
    dump = tmp_path / "ppc-schema.sql"
    dump.write_text("-- MySQL dump 10.13  Distrib 9.7.0, for Linux (x86_64)\n--\n"
                    "-- Host: localhost    Database: ppc\n-- Server version\t9.7.0\n\n"
                    "CREATE TABLE `campaigns` (\n  `id` bigint NOT NULL AUTO_INCREMENT,\n"
                    "  `cid` int unsigned NOT NULL,\n  PRIMARY KEY (`id`)\n"
                    ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci;\n")
    history = CliRunner().invoke(command, ["--sql", str(dump), "-d", "ppc"])
    assert history.exit_code == 0, history.output
    assert "    `id` bigint NOT NULL AUTO_INCREMENT\n    `cid` int unsigned NOT NULL\n" in history.output
    ddl = CliRunner().invoke(command, ["--snapshot", str(dump), "--sql", "/dev/null", "-d", "ppc", "--ddl"])
    assert ddl.exit_code == 0, ddl.output
    assert "  `id` bigint NOT NULL AUTO_INCREMENT,\n  `cid` int unsigned NOT NULL,\n" in ddl.output


@pytest.mark.parametrize(("args", "message"), [
    (["--at", "binlog.000001:4"], "--at and --ddl-for go with --ddl"),
    (["--ddl", "--at", "binlog.000001"], "--at 'binlog.000001' is not FILE:POS"),
    (["--ddl", "--json"], "give --ddl or --json, not both"),
])
def test_ddl_option_errors_are_one_line(tmp_path: Path, args: list[str], message: str, capsys: Any) -> None:
    script = tmp_path / "ddl.sql"
    script.write_text("CREATE TABLE t (a int);\n")
    assert main(["schema", "--sql", str(script), "-d", "db", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ConfigError: ") and message in err and len(err.strip().splitlines()) == 1
