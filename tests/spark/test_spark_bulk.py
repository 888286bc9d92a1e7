"""The bulk Arrow builders give exactly the per-value references (pure, no SparkSession).

``arrow_batch.ArrowBatch`` (the data source's batches) against ``value_json.event_rows``, and
``typed_arrow.typed_batch`` (the typed job's batches) against ``typed.typed_rows``, on every golden fixture,
on hand-built values for the edge cases fixtures lack, and on hand-built bytes a serializer would not
write (which must take the reference path, not give a wrong row).
"""

from __future__ import annotations

from typing import Any

import pytest

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.runs.pipeline import iter_binlog_events
from tests._paths import REPO
from tests.spark._values import edge_values

# pyarrow only: the builders (and the compiled core's batches) need no Spark; the one test that plans
# through the data source's driver code imports pyspark itself.
pytest.importorskip("pyarrow")

import pyarrow as pa

from binlog_model.spark import typed_arrow
from binlog_model.spark.arrow_batch import ArrowBatch
from binlog_model.spark.typed import table_lineages, typed_schema
from binlog_model.spark.typed_arrow import convert_values, typed_batch
from binlog_model.spark.typed_values import _Invalid, convert_value
from binlog_model.spark.value_json import event_rows, value_json

GOLDEN = REPO / "fixtures" / "golden" / "mariadb"
SCENARIOS = sorted(d.name for d in GOLDEN.iterdir() if (d / "binlogs").is_dir())
LENIENT = {"all_types"}


def _reference_rows(events: list[pb.BinlogEvent], mode: str) -> list[dict[str, Any]]:
    rows = []
    for event in events:
        for row in event_rows(event, mode=mode):
            ts = row.pop("utcTimestamp")
            rows.append(row | {"utcTimestamp": ts})
    return rows


def _bulk_rows(events: list[pb.BinlogEvent], mode: str) -> list[dict[str, Any]]:
    batch = ArrowBatch(mode == "events")
    for event in events:
        batch.add(event.SerializeToString())
    rows = batch.build().to_pylist()
    for row in rows:
        ts = row.pop("utcTimestamp")
        row["utcTimestamp"] = None if ts is None else int(ts.timestamp()) * 1_000_000 + ts.microsecond
    return rows


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("mode", ["rows", "events"])
def test_data_source_batches_equal_the_per_value_reference(scenario: str, mode: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    events = list(iter_binlog_events(sorted((GOLDEN / scenario / "binlogs").iterdir()),
                                     lenient_ddl=scenario in LENIENT))
    # The bulk path itself, not its fallback, must give the reference's rows.
    monkeypatch.setattr(ArrowBatch, "_maps_one_by_one", None)
    assert _bulk_rows(events, mode) == _reference_rows(events, mode)


_INTS = {"int_value", "long_value", "time_micros", "bit_value", "uint64_value"}
# Per typed column type, the value kinds that can land in it (its own and those of every type ``widen``
# merges into it; a widened ``string`` column takes them all).
_KINDS_INTO: list[tuple[pa.DataType, set[str] | None]] = [
    (pa.int32(), {"int_value"}), (pa.int64(), _INTS - {"uint64_value"}), (pa.decimal128(20, 0), _INTS),
    (pa.decimal128(9, 2), _INTS | {"decimal_value"}), (pa.decimal128(5, 1), _INTS | {"decimal_value"}),
    (pa.float32(), {"float_value"}), (pa.float64(), {"float_value", "double_value", "int_value"}),
    (pa.date32(), {"date_value"}), (pa.timestamp("us"), {"date_value", "datetime_value"}),
    (pa.timestamp("us", tz="UTC"), {"timestamp_micros"}), (pa.string(), None),
    (pa.binary(), {"bytes_value", "string_value", "json_value", "geometry_value"}),
    (pa.list_(pa.float32()), {"vector_value"}),
]


@pytest.mark.parametrize(("target", "kinds"), _KINDS_INTO, ids=[str(t) for t, _ in _KINDS_INTO])
def test_typed_conversion_equals_the_reference_on_hand_built_values(target: pa.DataType,
                                                                     kinds: set[str] | None) -> None:
    """Every kind a typed column can receive (widened columns included): the same value, or the same
    invalid mark, as ``convert_value`` one by one."""
    values = [v for v in edge_values()
              if kinds is None or v.WhichOneof("kind") in kinds | {"null_value", "raw_text_value", None}]
    got, bad = convert_values([v.SerializeToString() for v in values], target)
    want, want_bad = [], []
    for value in values:
        try:
            want.append(convert_value(value_json(value), target))
            want_bad.append(False)
        except _Invalid:
            want.append(None)
            want_bad.append(True)
    assert bad.to_pylist() == want_bad
    # repr: NaN equals itself, -0.0 is not 0.0
    assert [repr(v) for v in got.to_pylist()] == [repr(v) for v in pa.array(want, target).to_pylist()]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_typed_batches_equal_the_per_row_reference(scenario: str, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pyspark")  # the driver's planning lives in the data source module
    from binlog_model.spark.datasource import plan

    files = sorted((GOLDEN / scenario / "binlogs").iterdir())
    lenient = scenario in LENIENT
    history, _ = plan(files, ddl="lenient" if lenient else "strict", image="full")
    events = list(iter_binlog_events(files, lenient_ddl=lenient, image="full"))
    checked = 0
    for lineage in table_lineages(history).values():
        _, schema = typed_schema(lineage)
        payloads = [e.SerializeToString() for e in events
                    if (e.db, e.table) in lineage.logged_names and e.operation != pb.BinlogEvent.SCHEMA]
        want = typed_arrow._reference_batch(payloads, lineage, schema).to_pylist()
        with monkeypatch.context() as patched:
            patched.setattr(typed_arrow, "_reference_batch", None)     # the bulk path, no fallback
            got = [r for b in typed_batch(payloads, lineage, schema) for r in b.to_pylist()]
        key = lambda r: tuple(r["binlog_order"].values())  # noqa: E731
        assert sorted(got, key=key) == sorted(want, key=key)
        checked += len(got)
    assert checked


def test_bytes_no_serializer_writes_take_the_reference_path() -> None:
    """Hand-built: a row whose row_index 0 is written explicitly, and a column entry without a value, are
    legal protobuf the bulk split cannot place; the batch must come out as the reference gives it."""
    path = GOLDEN / "spec_example" / "binlogs"
    events = list(iter_binlog_events(sorted(path.iterdir())))
    with_rows = next(e for e in events if e.rows)
    odd = bytearray(with_rows.SerializeToString())
    row = pb.Row(row_index=0)
    row.after.add(name="x")                    # a column entry with no value at all
    explicit_zero = b"\x08\x00" + row.SerializeToString()
    tail = b"\x5a" + bytes([len(explicit_zero)]) + explicit_zero        # one more rows entry (field 11)
    odd_payload = bytes(odd) + tail
    batch = ArrowBatch()
    batch.add(odd_payload)
    got = batch.build().to_pylist()
    want = list(event_rows(pb.BinlogEvent.FromString(odd_payload)))
    assert [dict(r["after"] or []) for r in got] == [dict(r["after"] or []) for r in want]
    assert [r["rowIndex"] for r in got] == [r["rowIndex"] for r in want]
