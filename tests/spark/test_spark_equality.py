"""The Spark data source gives exactly the library's non-Spark output (``iter_binlog_events``).

Acceptance 1: for the golden fixtures (every scenario) and for the corpus files that resolve without a
snapshot, every row change and every field of the ``mysql-binlog`` source equals the rows derived from
``iter_binlog_events`` on the same files, and the serialized ``BinlogEvent``s carried by the source equal
the pipeline's events one for one, in order. Slices are forced small so files are cut at transaction
starts and decoded by independent tasks (the resume path), which the equality then covers.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.errors import BinlogError
from binlog_model.runs.pipeline import iter_binlog_events
from tests._paths import CORPUS, REPO, binlogs_under, require

pytest.importorskip("pyspark")
from binlog_model.spark.datasource import plan
from binlog_model.spark.session import local_session
from binlog_model.spark.value_json import event_rows

pytestmark = pytest.mark.spark

GOLDEN = REPO / "fixtures" / "golden" / "mariadb"
SCENARIOS = sorted(d.name for d in GOLDEN.iterdir() if (d / "binlogs").is_dir())
# all_types has a GEOMETRY CREATE TABLE the DDL parser cannot follow: both sides read it leniently.
LENIENT = {"all_types"}


@pytest.fixture(scope="module")
def spark() -> Any:
    return local_session("local[2]")


def _spark_rows(spark: Any, paths: list[Path], **options: str) -> list[dict[str, Any]]:
    listed = json.dumps([str(p) for p in paths])
    df = spark.read.format("mysql-binlog").options(paths=listed, **options).load()
    return [_plain(r.asDict(recursive=True)) for r in df.collect()]


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    out = dict(row)
    ts = out["utcTimestamp"]
    out["utcTimestamp"] = None if ts is None else int(ts.timestamp() * 1_000_000)
    for name in ("primaryKey", "before", "after"):
        if out[name] is not None:
            out[name] = dict(out[name])
    if out["event"] is not None:
        out["event"] = bytes(out["event"])
    return out


def _pipeline_rows(events: list[pb.BinlogEvent], mode: str = "rows") -> list[dict[str, Any]]:
    rows = []
    for event in events:
        for row in event_rows(event, mode=mode):
            for name in ("primaryKey", "before", "after"):
                if row[name] is not None:
                    row[name] = dict(row[name])
            rows.append(row)
    return rows


def _key(row: dict[str, Any]) -> tuple[Any, ...]:
    k = row["orderKey"]
    return (k["fileSeq"], row["file"], k["offset"], k["innerIndex"], k["eventIndex"], k["rowIndex"])


def _events_from(rows: list[dict[str, Any]]) -> list[pb.BinlogEvent]:
    out = []
    for row in sorted(rows, key=_key):
        if row["event"] is not None:
            out.append(pb.BinlogEvent.FromString(row["event"]))
    return out


def _assert_same(spark_rows: list[dict[str, Any]], expected_events: list[pb.BinlogEvent]) -> None:
    expected = _pipeline_rows(expected_events)
    assert len(spark_rows) == len(expected)
    got = sorted(spark_rows, key=_key)
    want = sorted(expected, key=_key)
    for g, w in zip(got, want, strict=True):
        assert g == w
    assert _events_from(spark_rows) == expected_events


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_golden_fixture_equals_pipeline(spark: Any, scenario: str) -> None:
    files = sorted((GOLDEN / scenario / "binlogs").iterdir())
    lenient = scenario in LENIENT
    ddl = "lenient" if lenient else "strict"
    _, slices = plan(files, ddl=ddl, sliceBytes="2048")
    if sum(f.stat().st_size for f in files) > 8192:
        assert len(slices) > 2, "small slices must cut the file at transaction starts"
    expected = list(iter_binlog_events(files, source=f"golden:{scenario}", lenient_ddl=lenient))
    assert expected, "the fixture has events"
    rows = _spark_rows(spark, files, source=f"golden:{scenario}", ddl=ddl, sliceBytes="2048")
    _assert_same(rows, expected)


def _corpus_files() -> list[Path]:
    """Corpus binlogs that resolve without a snapshot (lenient DDL): each file is its own history."""
    require(CORPUS)
    chosen = []
    for path in (CORPUS / rel for rel in binlogs_under(CORPUS)):
        try:
            if list(iter_binlog_events(path, lenient_ddl=True)):
                chosen.append(path)
        except BinlogError:
            continue        # needs a snapshot (rows for tables created before the file) or is incomplete
    return chosen


def test_corpus_equals_pipeline(spark: Any) -> None:
    files = _corpus_files()
    assert len(files) >= 10, files
    for path in files:
        expected = list(iter_binlog_events(path, source="corpus", lenient_ddl=True))
        rows = _spark_rows(spark, [path], source="corpus", ddl="lenient", sliceBytes="512")
        _assert_same(rows, expected)


def test_events_mode_one_row_per_event(spark: Any) -> None:
    files = sorted((GOLDEN / "ddl_between_dml" / "binlogs").iterdir())
    expected = list(iter_binlog_events(files))
    rows = _spark_rows(spark, files, mode="events")
    assert len(rows) == len(expected)
    assert all(r["before"] is None and r["after"] is None for r in rows)
    assert sorted(rows, key=_key) == sorted(_pipeline_rows(expected, mode="events"), key=_key)


def test_start_and_stop_position_select_events(spark: Any) -> None:
    files = sorted((GOLDEN / "transactions" / "binlogs").iterdir())
    events = list(iter_binlog_events(files))
    positions = sorted({(e.position.file, e.position.offset) for e in events})
    start, stop = positions[2], positions[-2]
    rows = _spark_rows(spark, files, startPosition=f"{start[0]}:{start[1]}",
                       stopPosition=f"{stop[0]}:{stop[1]}")
    got = {(r["file"], r["offset"]) for r in rows}
    assert got == {p for p in positions if start <= p < stop}


def test_corrupted_copy_fails_with_location(spark: Any, tmp_path: Path) -> None:
    """Hand-built corruption: one byte of a real fixture flipped in a copy."""
    src = GOLDEN / "spec_example" / "binlogs" / "mysql-bin.000001"
    bad = tmp_path / "mysql-bin.000001"
    shutil.copyfile(src, bad)
    data = bytearray(bad.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad.write_bytes(bytes(data))
    with pytest.raises(Exception) as info:
        _spark_rows(spark, [bad])
    text = str(info.value)
    assert "ChecksumMismatchError" in text or "DecodeError" in text
    assert "mysql-bin.000001" in text
