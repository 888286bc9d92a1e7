"""The CI-sized scale test of issue 23: ``binlog-model resolve`` on about 200 MB of real MySQL 9 binlogs
(three files, three tables, DDL between the files; ``benchmarks.resolve.generate``, made once per session) in
``local[2]`` with a 512m driver completes, and every table equals the single-process typed path: the
pipeline's events (``iter_binlog_events``, full images) typed in this process by the same lineages. Speed is
the benchmark's (``python -m benchmarks.resolve``), never asserted here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from binlog_model.testing.mysql import mysql_available
from tests._paths import REPO

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark


@pytest.fixture(scope="session")
def archive(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    from benchmarks.resolve import generate

    ok, reason = mysql_available()
    if not ok:
        pytest.skip(f"no local MySQL: {reason}")
    dest = Path(os.environ.get("BINLOG_MODEL_SCALE_DIR") or tmp_path_factory.mktemp("scale"))
    files = generate(dest, files=3, file_mb=64)
    assert sum(p.stat().st_size for p in files) > 180 << 20
    return files


def _sorted(table: Any) -> Any:
    import pyarrow.compute as pc

    order = table.column("binlog_order").combine_chunks()
    keys = [f"_k{i}" for i in range(order.type.num_fields)]
    for i, name in enumerate(keys):
        table = table.append_column(name, pc.struct_field(order, [i]))
    return table.sort_by([(k, "ascending") for k in keys]).drop_columns(keys)


def _single_process_tables(files: list[Path]) -> dict[tuple[str, str], Any]:
    """The typed tables of the whole archive in this process: the pipeline's events, typed per lineage."""
    import pyarrow as pa

    from binlog_model._pb import binlog_event_pb2 as pb
    from binlog_model.runs.pipeline import iter_binlog_events
    from binlog_model.spark.datasource import plan
    from binlog_model.spark.typed import table_lineages, typed_schema
    from binlog_model.spark.typed_arrow import typed_batch

    lineages = table_lineages(plan(files, image="full")[0])
    owners: dict[tuple[str, str], list[Any]] = {}
    for lineage in lineages.values():
        for name in lineage.logged_names:
            owners.setdefault(name, []).append(lineage)
    pending: dict[tuple[str, str], list[bytes]] = {key: [] for key in lineages}
    batches: dict[tuple[str, str], list[Any]] = {key: [] for key in lineages}
    for event in iter_binlog_events(files, image="full"):
        if event.operation == pb.BinlogEvent.SCHEMA:
            continue
        for lineage in owners[(event.db, event.table)]:
            key = (lineage.db, lineage.table)
            pending[key].append(event.SerializeToString())
            if len(pending[key]) >= 200:
                batches[key] += typed_batch(pending[key], lineage, typed_schema(lineage)[1])
                pending[key] = []
    out = {}
    for key, lineage in lineages.items():
        schema = typed_schema(lineage)[1]
        batches[key] += typed_batch(pending[key], lineage, schema) if pending[key] else []
        if batches[key]:
            out[key] = pa.Table.from_batches(batches[key], schema)
    return out


def test_resolve_200mb_in_local2_with_a_512m_driver_equals_the_single_process_path(
        archive: list[Path], tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    out, log = tmp_path / "out", tmp_path / "spark.log"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-m", "binlog_model.cli", "resolve", *map(str, archive), "--out",
                           str(out), "--master", "local[2]", "--driver-memory", "512m",
                           "--log-file", str(log)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    want = _single_process_tables(archive)
    assert {("bench", "mixed"), ("bench", "orders"), ("bench", "notes")} <= set(want)
    written = sum(t.num_rows for t in want.values())
    assert f"{len(archive)} files, {written} row changes" in done.stdout
    for (db, table), expected in want.items():
        got = pq.read_table(out / f"db={db}" / f"table={table}")
        assert got.schema.equals(expected.schema), (db, table)
        assert got.num_rows == expected.num_rows, (db, table)
        assert _sorted(got).equals(_sorted(expected)), (db, table)
