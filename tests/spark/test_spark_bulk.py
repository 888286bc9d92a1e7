"""The bulk Arrow builders give exactly the per-value references (pure, no SparkSession).

``arrow_batch.ArrowBatch`` (the data source's batches) against ``value_json.event_rows``, and
``typed_arrow.typed_batch`` (the typed job's batches) against ``typed.typed_rows``, on every golden fixture,
on hand-built values for the edge cases fixtures lack, and on hand-built bytes a serializer would not
write (which must take the reference path, not give a wrong row).
"""

from __future__ import annotations

import math
import random
import struct
from typing import Any

import pyarrow as pa
import pytest

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.pipeline import iter_binlog_events
from tests._paths import REPO

pytest.importorskip("pyspark")

from binlog_model.spark import typed_arrow
from binlog_model.spark.arrow_batch import ArrowBatch, value_texts
from binlog_model.spark.datasource import plan
from binlog_model.spark.typed import table_lineages, typed_schema
from binlog_model.spark.typed_arrow import convert_values, typed_batch
from binlog_model.spark.typed_values import _Invalid, convert_value
from binlog_model.spark.value_json import event_rows, slow_value_json

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


def _edge_values() -> list[pb.Value]:
    """Hand-built values: every kind, with the edges of each (zero fields, escapes, non-finite floats...)."""
    values = []
    for p in [(2024, 1, 2, 3, 4, 5, 6), (0, 0, 0, 0, 0, 0, 0), (9999, 12, 31, 23, 59, 59, 999999),
              (0, 1, 0, 0, 0, 0, 1), (2018, 2, 29, 0, 0, 0, 0), (2000, 2, 29, 24, 0, 0, 0)]:
        values += [pb.Value(datetime_value=pb.DateTime(year=p[0], month=p[1], day=p[2], hour=p[3],
                                                       minute=p[4], second=p[5], micros=p[6])),
                   pb.Value(date_value=pb.Date(year=p[0], month=p[1], day=p[2]))]
    values += [pb.Value(set_value=pb.SetValue(labels=labels))
               for labels in ([], ["a"], ["a", 'b"', "é", "\x01"], [""], ["", ""])]
    values += [pb.Value(bytes_value=b) for b in (b"", b"\xff\x00", bytes(range(256)), "é".encode())]
    values += [pb.Value(string_value=t) for t in ("", 'é"\\\n\x00\u2028', "\U0001F600", "\x7f\x1f\\\\", "12")]
    values += [pb.Value(json_value='{"a": "x\\"y"}'), pb.Value(decimal_value="-12.340"),
               pb.Value(decimal_value="123456.7"), pb.Value(decimal_value="0.00000001")]
    values += [pb.Value(long_value=-5), pb.Value(time_micros=-5), pb.Value(uint64_value=2**64 - 1),
               pb.Value(int_value=-2**31), pb.Value(long_value=-2**63), pb.Value(long_value=3_000_000_000),
               pb.Value(bit_value=2**64 - 1), pb.Value(bit_value=5), pb.Value(timestamp_micros=0),
               pb.Value(timestamp_micros=-1), pb.Value(timestamp_micros=1_527_574_930_000_001),
               pb.Value(null_value=0), pb.Value(int_value=2**24 + 1), pb.Value(long_value=2**53 + 1)]
    rnd = random.Random(20261123)
    for _ in range(500):
        d = rnd.choice([rnd.random() * 10 ** rnd.randint(-30, 30), float(rnd.randint(-10**17, 10**17))])
        values += [pb.Value(double_value=d),
                   pb.Value(float_value=struct.unpack("f", rnd.randbytes(4))[0])]
    for v in (math.nan, math.inf, -math.inf, 0.0, -0.0, 5e-324, 1e16, 1e-5, 100.0):
        values += [pb.Value(double_value=v), pb.Value(float_value=v)]
    values += [pb.Value(geometry_value=pb.Geometry(srid=4326, wkb=b"\x01\x02")),
               pb.Value(vector_value=pb.Vector(values=[1.5, 2.0])),
               pb.Value(raw_text_value=pb.RawText(data=b"\xff", charset="utf8mb4")),
               pb.Value(json_diff=pb.JsonDiff(operations=[pb.JsonDiffOperation(op=1, path="$", value="1")])),
               pb.Value()]
    rnd.shuffle(values)
    return values


def test_value_texts_equal_json_format_on_hand_built_edge_values() -> None:
    values = _edge_values()
    got = value_texts([v.SerializeToString() for v in values]).to_pylist()
    assert got == [slow_value_json(v) for v in values]


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
    values = [v for v in _edge_values()
              if kinds is None or v.WhichOneof("kind") in kinds | {"null_value", "raw_text_value", None}]
    got, bad = convert_values([v.SerializeToString() for v in values], target)
    want, want_bad = [], []
    for value in values:
        try:
            want.append(convert_value(slow_value_json(value), target))
            want_bad.append(False)
        except _Invalid:
            want.append(None)
            want_bad.append(True)
    assert bad.to_pylist() == want_bad
    # repr: NaN equals itself, -0.0 is not 0.0
    assert [repr(v) for v in got.to_pylist()] == [repr(v) for v in pa.array(want, target).to_pylist()]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_typed_batches_equal_the_per_row_reference(scenario: str, monkeypatch: pytest.MonkeyPatch) -> None:
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
