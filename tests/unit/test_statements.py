"""The tracker's plain-statement input (``schema_tracker.Statement``) and the conversion of a decoded QUERY
event into it (``resolve.ddl_pass.statement_of``)."""

from __future__ import annotations

from binlog_model.io.files import iter_events
from binlog_model.position import EventPosition
from binlog_model.resolve.ddl_pass import DDL_SKIP_TYPES, statement_of
from binlog_model.wire.events import QueryEvent
from schema_tracker import SchemaHistory, Statement
from tests._paths import REPO

MYSQL_DDL = REPO / "fixtures/golden/mysql/ddl_between_dml/binlogs/binlog.000001"   # MySQL 9.7 output


def test_apply_statement_reads_with_the_statements_session_and_records_its_place() -> None:
    history = SchemaHistory(server_version="9.7.4")
    where = EventPosition("binlog.000003", 400)
    ansi = Statement('CREATE TABLE "t" ("a b" int, c varchar(2) CHARSET utf8mb4)', "d", where,
                     "3E11FA47-71CA-11E1-9E33-C80AA9429562:tag:7", sql_mode=4,
                     utf8mb4_collation="utf8mb4_general_ci")
    changes = history.apply_statement(ansi)
    assert changes and len(history) == 1
    entry = history.entries[0]
    assert (entry.position, entry.gtid, entry.default_db) == (where, ansi.gtid, "d")
    table = history.catalog.table("d", "t")
    assert table is not None and table.column_names == ("a b", "c")          # ANSI_QUOTES: "x" names
    assert table.columns[1].collation == "utf8mb4_general_ci"                 # the session's utf8mb4 default
    assert history.apply_statement(Statement("INSERT INTO t VALUES (1, 'x')", "d")) == ()
    assert len(history) == 1                                                  # DML changes nothing


def test_statement_of_a_real_query_event() -> None:
    queries = [e for e in iter_events(MYSQL_DDL, skip_types=DDL_SKIP_TYPES) if isinstance(e, QueryEvent)]
    ddl = next(e for e in queries if e.query.upper().startswith("ALTER TABLE"))
    where = EventPosition(MYSQL_DDL.name, ddl.header.offset)
    statement = statement_of(ddl, where, "u:5")
    assert statement == Statement(ddl.query, ddl.schema or None, where, "u:5", ddl.sql_mode or 0,
                                  "utf8mb4_0900_ai_ci", "utf8mb4", "utf8mb4_0900_ai_ci")
    assert ddl.default_collation_for_utf8mb4 == 255
    assert ddl.collation_server == 255   # the session's server default: what CREATE DATABASE takes
