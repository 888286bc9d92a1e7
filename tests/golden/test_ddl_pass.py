"""One DDL pass: the ``schema`` CLI, the library and the Spark pre-pass build the same schema history from
the same binlogs, and it is the history the assembler builds while it decodes (GTIDs as the assembler
records them, the server charset adopted from the first DDL's ``collation_server``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from binlog_model.charsets import charset_for_collation_id
from binlog_model.io.files import iter_events
from binlog_model.io.snapshots import load_snapshot
from binlog_model.wire.events import QueryEvent
from tests._histories import three_histories
from tests._paths import REPO

GOLDEN = REPO / "fixtures" / "golden"
# Binlogs written by real MySQL 9.7, MariaDB 10.11 and MariaDB 11.8 servers
# (fixtures/golden/<server>/<scenario>/binlogs).
SCENARIOS = sorted(p.parent for p in GOLDEN.glob("*/*/binlogs"))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: f"{p.parent.name}-{p.name}")
def test_cli_library_and_spark_build_one_history(scenario: Path) -> None:
    files = sorted((scenario / "binlogs").iterdir())
    snapshot = scenario / "snapshot.json" if (scenario / "snapshot.json").is_file() else None
    docs = three_histories(files, snapshot)
    reference = docs["assembler"]
    assert reference["entries"], "the scenario has DDL"
    for name, doc in docs.items():
        assert doc == reference, f"{name} differs from the assembler's history"
    if snapshot is not None:       # the snapshot's server charset is kept
        assert reference["initial"] == load_snapshot(snapshot).to_json()["initial"]
        return
    # Collation adoption: no snapshot, so the server charset is the first DDL's collation_server.
    first_ddl = next(e for e in iter_events(files) if isinstance(e, QueryEvent)
                     and e.query.split(None, 1)[0].upper() not in ("BEGIN", "COMMIT"))
    assert first_ddl.collation_server is not None
    adopted = charset_for_collation_id(first_ddl.collation_server)
    assert reference["initial"]["server_charset"] == adopted
    # GTIDs: every recorded DDL carries the GTID of the transaction that logged it.
    mariadb = scenario.parent.name.startswith("mariadb")      # mariadb (10.11) and mariadb11
    for entry in reference["entries"]:
        gtid = entry["gtid"]
        assert gtid and (gtid.count("-") == 2 if mariadb else gtid.count(":") == 1), gtid
