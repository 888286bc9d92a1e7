"""The functional spec's example (seeds/000, ``fixtures/scenarios/spec_example.sql``) as a golden fixture:
the spec's decode options and MySQL flags, the run on one MySQL server that gives its events the spec's
transaction numbers (``SpecRunOnMySQL``), and the fields in which each server's fixture documentedly
differs from the spec's listing (``default_differences``, recorded in ``meta.json`` as
``differences_from_spec``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from binlog_model.errors import ConfigError

__all__ = [
    "SPEC_ALWAYS_INCLUDE",
    "SPEC_DDL_FIRST_GNO",
    "SPEC_DML_FIRST_GNO",
    "SPEC_EXAMPLE",
    "SPEC_EXAMPLE_MARIADB11_DIFFERENCES",
    "SPEC_EXAMPLE_MARIADB_DIFFERENCES",
    "SPEC_EXAMPLE_MYSQL_DIFFERENCES",
    "SPEC_EXAMPLE_MYSQL_KNOWN",
    "SPEC_MYSQL_SERVER",
    "SPEC_SOURCE",
    "SpecRunOnMySQL",
    "default_differences",
]

#: the scenario that reproduces the functional spec's example (seeds/000)
SPEC_EXAMPLE = "spec_example"
#: the spec's decode options: its source label and "currency is always passed, even when unchanged"
SPEC_SOURCE = "ppc:1"
SPEC_ALWAYS_INCLUDE = ("ppc.campaigns.currency",)
#: the spec's first MySQL transaction numbers: the DML example starts at gno 8, the DDL example at gno 7
SPEC_DML_FIRST_GNO = 8
SPEC_DDL_FIRST_GNO = 7
#: the spec's MySQL 5.7 flags on MySQL 9 (seeds/000: noblob, rows-query events, GTID, server id 12345;
#: latin1 is 5.7's default server charset, which the spec's listings assume; --master-info-repository is gone)
SPEC_MYSQL_SERVER = {"row_image": "NOBLOB", "row_metadata": "MINIMAL", "rows_query_log_events": True,
                     "gtid": True, "server_id": 12345,
                     "extra_args": ("--character-set-server=latin1", "--collation-server=latin1_swedish_ci")}


@dataclass(slots=True)
class SpecRunOnMySQL:
    """Drives the spec example on one MySQL server so that its events carry the spec's numbers.

    The spec's example starts from a schema holding ``ppc.campaigns`` and shows two series of GTIDs from two
    servers: the DML as gno 8, 9, 10 of one uuid, the DDL as gno 7..12 of another. So: the scenario's
    first three statements (CREATE DATABASE, USE, CREATE TABLE campaigns) run before the snapshot and the
    binlog reset; ``gtid_purged`` then makes the server's own next gno 8; the DDL runs with
    ``SET GTID_NEXT='<second uuid>:7'`` etc., as a replica logs another source's transactions (the second
    uuid is made at run time). Only the GTID uuids and the (pinned) timestamps differ from the spec.
    """

    scenario: Any
    dml_uuid: str = ""
    ddl_uuid: str = ""

    def __post_init__(self) -> None:
        heads = [" ".join(s.split()[:2]).upper() for s in self.scenario.statements]
        expected = (["CREATE DATABASE", "USE `PPC`", "CREATE TABLE", "INSERT INTO", "UPDATE `CAMPAIGNS`",
                     "DELETE FROM"] + ["CREATE TABLE"] + ["ALTER TABLE"] * 4 + ["DROP TABLE"])
        if heads != expected:
            raise ConfigError(f"scenario {self.scenario.path} no longer has the spec example's shape "
                              f"(prelude, 3 DML, 6 DDL): {heads}")

    @property
    def prelude(self) -> list[str]:
        return list(self.scenario.statements[:3])

    def run(self, server: Any, scenario: Any, binlog_dir: Path) -> list[Path]:
        import uuid

        from binlog_model.testing.sqlserver import run_statements

        statements = list(scenario.statements)
        dml, ddl = statements[3:6], statements[6:]
        server.reset_binlogs()
        self.dml_uuid = str(server.query("SELECT @@GLOBAL.server_uuid")[0][0])
        self.ddl_uuid = str(uuid.uuid4())
        server.execute(f"SET GLOBAL gtid_purged = '{self.dml_uuid}:1-{SPEC_DML_FIRST_GNO - 1}'")
        conn = server.connect()
        try:
            run_statements(conn, [*scenario.session_setup(), statements[1], *dml])
            for gno, statement in enumerate(ddl, SPEC_DDL_FIRST_GNO):
                run_statements(conn, [f"SET GTID_NEXT = '{self.ddl_uuid}:{gno}'", statement])
            run_statements(conn, ["SET GTID_NEXT = 'AUTOMATIC'"])
        finally:
            conn.close()
        files: list[Path] = server.flush_and_collect(binlog_dir)
        return files

    def meta(self) -> dict[str, Any]:
        return {"prelude_before_snapshot": self.prelude,
                "dml": {"uuid": self.dml_uuid, "first_gno": SPEC_DML_FIRST_GNO,
                        "how": f"SET GLOBAL gtid_purged = '<server_uuid>:1-{SPEC_DML_FIRST_GNO - 1}'"},
                "ddl": {"uuid": self.ddl_uuid, "first_gno": SPEC_DDL_FIRST_GNO,
                        "how": "SET GTID_NEXT = '<second uuid>:<gno>' before each statement"}}


# -- the spec example on MariaDB ----------------------------------------------------------------------------

# What the MariaDB fixture of the spec's example (fixtures/scenarios/spec_example.sql) must show differently
# from the spec's MySQL 5.7 listing (seeds/000). "field" names a field of the spec's vocabulary; the test
# tests/golden/test_golden_fixtures.py checks that exactly these fields differ and that everything else
# matches.
SPEC_EXAMPLE_MARIADB_DIFFERENCES: tuple[dict[str, str], ...] = (
    {"field": "leadingEvents",
     "spec": "none: the spec's example starts from a snapshot holding ppc.campaigns",
     "mariadb": "SCHEMA createDatabase ppc, SCHEMA createTable campaigns",
     "why": "the scenario creates the database and table itself, on an empty server"},
    {"field": "utcTimestamp", "spec": "each statement's own 2018 wall-clock time",
     "mariadb": "2018-05-29T06:22:10Z for every event",
     "why": "the scenario pins SET SESSION timestamp once (the spec's first example) for stable fixtures"},
    {"field": "source", "spec": "ppc:1", "mariadb": "fixture:spec_example",
     "why": "the source label is the caller's; fixtures are labelled fixture:<scenario>"},
    {"field": "serverUuid",
     "spec": "1d3a69ea-6308-11e8-b040-0242ac110002, 495bea6a-6961-11e8-abee-0242ac110003",
     "mariadb": "empty", "why": "MariaDB GTIDs carry no server UUID (domain-server-sequence)"},
    {"field": "gtid", "spec": "uuid:gno, e.g. 1d3a69ea-6308-11e8-b040-0242ac110002:8",
     "mariadb": "domain-server-seq, e.g. 0-1-3", "why": "MariaDB's GTID format"},
    {"field": "transactionId", "spec": "the MySQL gno: 8, 9, 10, then 7..12",
     "mariadb": "the MariaDB sequence number: 3, 4, 5, then 6..11",
     "why": "one fresh server runs the whole scenario, so sequence numbers count from its first statement"},
    {"field": "gtidEvent", "spec": "GTID_LOG_EVENT", "mariadb": "GTID_EVENT",
     "why": "MariaDB's GTID event (162) instead of MySQL's GTID_LOG_EVENT (33)"},
    {"field": "statementEvent", "spec": "ROWS_QUERY_LOG_EVENT", "mariadb": "ANNOTATE_ROWS_EVENT",
     "why": "MariaDB logs the row statement's text in ANNOTATE_ROWS (160), not ROWS_QUERY (29)"},
    {"field": "charset", "spec": "latin1 (MySQL 5.7's default server charset; the listing prints none)",
     "mariadb": "utf8mb4", "why": "the harness's MariaDB runs with --character-set-server=utf8mb4"},
)

# The same on MariaDB 11.8: every difference is the same, but utf8mb4 is its own default server charset.
SPEC_EXAMPLE_MARIADB11_DIFFERENCES: tuple[dict[str, str], ...] = (
    *SPEC_EXAMPLE_MARIADB_DIFFERENCES[:-1],
    {"field": "charset", "spec": "latin1 (MySQL 5.7's default server charset; the listing prints none)",
     "mariadb": "utf8mb4",
     "why": "MariaDB 11.8's default server charset (utf8mb4, collation utf8mb4_uca1400_ai_ci); the harness "
            "sets none"},
)


# -- the spec example on MySQL 9 -----------------------------------------------------------------------------

# What the MySQL fixture of the spec's example must show differently from the spec's listing: only the GTID
# uuids and the timestamps. tests/golden/test_golden_mysql.py checks that exactly these fields differ.
SPEC_EXAMPLE_MYSQL_DIFFERENCES: tuple[dict[str, str], ...] = (
    {"field": "utcTimestamp", "spec": "each statement's own 2018 wall-clock time",
     "mysql": "2018-05-29T06:22:10Z for every event",
     "why": "the scenario pins SET SESSION timestamp once (the spec's first example) for stable fixtures"},
    {"field": "serverUuid",
     "spec": "1d3a69ea-6308-11e8-b040-0242ac110002 (DML), 495bea6a-6961-11e8-abee-0242ac110003 (DDL)",
     "mysql": "the generating server's server_uuid (DML) and a second uuid made at generation time (DDL); "
              "both in meta.json spec_run",
     "why": "a fresh server has its own uuid; the spec's DML and DDL came from two servers"},
    {"field": "gtid", "spec": "<spec uuid>:<gno>", "mysql": "<fixture uuid>:<same gno>",
     "why": "the uuid part, as serverUuid; the transaction numbers are the spec's"},
)

SPEC_EXAMPLE_MYSQL_KNOWN = (
    "The spec's flags on MySQL 9: binlog_row_image=NOBLOB, binlog_rows_query_log_events=ON, gtid_mode=ON,"
    " enforce_gtid_consistency=ON, server_id=12345, and MySQL 5.7's default server charset latin1;"
    " binlog_row_metadata is MINIMAL (MySQL 8+'s default; 5.7 had none); --master-info-repository no"
    " longer exists.",
    "CREATE DATABASE ppc and CREATE TABLE campaigns run before the binlog starts: they are the snapshot the"
    " spec's example starts from (snapshot.json).",
    "GTIDs: the DML is logged as the server's own gno 8-10 (gtid_purged 1-7), the DDL as gno 7-12 of a second"
    " uuid (SET GTID_NEXT), matching the spec's transaction numbers; the uuids differ (meta.json spec_run).",
    "Event timestamps are pinned by the scenario's @timestamp directive; FORMAT_DESCRIPTION and file-start"
    " events carry the generation time.",
    "GTID events carry MySQL 8+'s commit timestamps and transaction length; table_id values, thread ids and"
    " log positions differ from the spec's mysqlbinlog listing.",
)


def default_differences(fixture_dir: Path, meta: dict[str, Any]) -> tuple[dict[str, str], ...] | None:
    """The documented spec differences for a fixture, when it is the spec example on MariaDB (10.11 or
    11.8) or MySQL."""
    if Path(fixture_dir).name != SPEC_EXAMPLE:
        return None
    from binlog_model.testing.mariadb11 import MARIADB11_SERIES

    server = meta.get("server", {})
    if server.get("product") == "MariaDB":
        if str(server.get("version", "")).startswith(MARIADB11_SERIES):
            return SPEC_EXAMPLE_MARIADB11_DIFFERENCES
        return SPEC_EXAMPLE_MARIADB_DIFFERENCES
    if "spec_run" in meta:
        return SPEC_EXAMPLE_MYSQL_DIFFERENCES
    return None
