"""The statement lane on a live dump (``tail``, ``apply mysql://…``) against the Python path.

A dump hands the decoder batches of whole events as they arrive; a statement that goes on in the next batch
is held by the decoder until then (and read by the Python path if anything else comes first). On a server
of the test's own (MariaDB 10.11 and MySQL 9.7), a seeded workload (every column type, DDL, rollbacks,
rotations), bursts of small multi-statement transactions and statements of ~300 KB (more than a batch) are
written; then ``tail --stop-at-end`` runs in this process twice, with the lane and without it
(``LANE_AVAILABLE`` off), and ``events`` without it reads the server's files. The three outputs must be the
same bytes, the lane must have read most of the small statements live, and statements must have been held.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from binlog_model.cli import main
from binlog_model.resolve import assembler as assembler_module
from binlog_model.resolve import lane as lane_module
from binlog_model.testing.localserver import LocalServer
from binlog_model.testing.workload import Workload
from binlog_model.wire.decoder import BinlogDecoder
from tests.differential.test_tail import _server

pytestmark = pytest.mark.skipif(not lane_module.AVAILABLE, reason="the compiled core is not built")

SOURCE = "lane:1"


@pytest.fixture(params=["mariadb", "mysql"])
def own_server(request: pytest.FixtureRequest) -> Iterator[LocalServer]:
    server = _server(request.param)
    if request.param == "mysql":    # without transaction compression: a payload's inner events take no lane
        from binlog_model.testing.mysql import MySQLServer
        server = MySQLServer(row_image="FULL", row_metadata="FULL")
    with server:
        server.execute("CREATE DATABASE ll")
        yield server


def _write(server: LocalServer) -> None:
    conn = server.connect("ll")
    with conn.cursor() as cur:
        workload = Workload(41)
        for sql in workload.setup():
            cur.execute(sql)
        units = workload.units()
        for n in range(1, 121):
            for step in next(units):
                step.run(cur)
            if n % 50 == 0:
                cur.execute("FLUSH BINARY LOGS")
        cur.execute("CREATE TABLE small (id INT PRIMARY KEY, n BIGINT, s VARCHAR(40))")
        for burst in range(40):
            cur.execute("BEGIN")
            for i in range(25):
                key = burst * 25 + i
                cur.execute("INSERT INTO small (id, n, s) VALUES (%s, %s, %s)", (key, key * 7, f"row {key}"))
                cur.execute("UPDATE small SET n = n + 1 WHERE id = %s", (key // 2,))
            cur.execute("COMMIT")
            if burst == 20:
                cur.execute("ALTER TABLE small ADD COLUMN t VARCHAR(10) DEFAULT 'x'")
        cur.execute("DELETE FROM small WHERE id % 3 = 0")
        # statements of ~40 rows events each (8 KB apiece): a dump's batch seldom holds one whole
        cur.execute("CREATE TABLE wide (id INT PRIMARY KEY, body TEXT)")
        for big in range(12):
            cur.execute("INSERT INTO wide VALUES " + ", ".join(
                f"({big * 300 + i}, REPEAT('{chr(97 + big)}', 1000))" for i in range(300)))
            cur.execute("UPDATE wide SET body = CONCAT(body, 'x') WHERE id %% 2 = %s", (big % 2,))
    conn.close()


def _tail(server: LocalServer, work: Path, monkeypatch: pytest.MonkeyPatch, *,
          lane: bool) -> tuple[bytes, int, int]:
    """``tail --stop-at-end`` in this process; its output, the statements the lane read, and the batches
    that came while the decoder held a statement's bytes for the lane."""
    read, held = [0], [0]
    real_run = lane_module.StatementLane.run
    real_receive = BinlogDecoder.receive_data

    def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        got = real_run(self, *args, **kwargs)
        if isinstance(got, tuple):
            read[0] += got[0].statements
        return got

    def receiving(self: BinlogDecoder, data: Any) -> None:
        held[0] += self.offset != self.received_end
        real_receive(self, data)

    with monkeypatch.context() as m:
        m.setattr(assembler_module, "LANE_AVAILABLE", lane)
        m.setattr(lane_module.StatementLane, "run", counting)
        m.setattr(BinlogDecoder, "receive_data", receiving)
        m.setenv("BINLOG_MODEL_PASSWORD", "")
        url = f"mysql://root@localhost/?socket={server.socket}"
        assert main(["tail", url, "--state", str(work / "state"), "--out", str(work / "out"),
                     "--source", SOURCE, "--format", "proto", "--stop-at-end", "--heartbeat", "1s"]) == 0
    parts = sorted((work / "out").iterdir())
    return b"".join(p.read_bytes() for p in parts), read[0], held[0]


def test_live_lane_writes_what_the_python_path_writes(own_server: LocalServer, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    _write(own_server)
    with_lane, laned, held = _tail(own_server, tmp_path / "lane", monkeypatch, lane=True)
    without, none, none_held = _tail(own_server, tmp_path / "python", monkeypatch, lane=False)
    assert none == none_held == 0
    files = own_server.flush_and_collect(tmp_path / "binlogs", include_previous=True)
    with monkeypatch.context() as m:
        m.setattr(assembler_module, "LANE_AVAILABLE", False)
        assert main(["events", *map(str, files), "--source", SOURCE, "--format", "proto",
                     "--out", str(tmp_path / "events.pb")]) == 0
    want = (tmp_path / "events.pb").read_bytes()
    assert len(want) > 100_000
    assert without == want, "the live Python path differs from events"
    assert with_lane == want, "the live lane differs from the Python path"
    # 2,000 single-row statements in 40 transactions are the lane's after each table's first statement
    assert laned >= 1500, f"the lane read only {laned} statements live"
    assert held > 0, "no statement was held over to the next batch: the wide statements did not test it"
