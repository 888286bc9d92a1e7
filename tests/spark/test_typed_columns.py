"""The compiled typed-column builder (``_speedups.typed_columns``) gives exactly the pure-Python typed path.

Differential, pyarrow only (no Spark): ``typed_arrow.typed_batch`` with the C builder against the same call
with the C builder switched off (``_Rows._bulk``: protobuf views and Arrow compute), batch for batch, equal
in schema, values and nulls, on every golden fixture and every binlog of the shared corpus that resolves,
each table typed from its lineage and again as an untyped table (every column a string: every value
through the per-value reference, so the C code's hand-back path is covered too). Hand-built values of
every kind into every column type check the C rules' edges against the per-value reference; hand-built
bytes a serializer would not write must be refused by C (None), never typed wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.compiled import speedups
from binlog_model.errors import BinlogError
from binlog_model.runs.pipeline import iter_binlog_events
from tests._paths import CORPUS, REPO, binlogs_under
from tests.spark._values import edge_values

pytest.importorskip("pyarrow")

import pyarrow as pa

from binlog_model.spark import typed_arrow
from binlog_model.spark.partitions import build_history, scan_files
from binlog_model.spark.typed import ColumnOut, TableLineage, table_lineages, typed_schema, untyped_lineage
from schema_tracker.model import ColumnSchema

pytestmark = pytest.mark.skipif(getattr(speedups, "typed_columns", None) is None,
                                reason="the compiled core is not built")

GOLDEN = REPO / "fixtures" / "golden" / "mariadb"
SCENARIOS = sorted(d.name for d in GOLDEN.iterdir() if (d / "binlogs").is_dir())
LENIENT = {"all_types"}


def _both(payloads: list[bytes], lineage: TableLineage, monkeypatch: pytest.MonkeyPatch
          ) -> tuple[list[pa.RecordBatch], list[pa.RecordBatch]]:
    """(C, Python) typed batches of the same payloads; the C run must not fall back."""
    _, schema = typed_schema(lineage)

    def refuse(*_args: Any) -> Any:
        raise AssertionError("the C builder refused bytes a serializer wrote")

    with monkeypatch.context() as patched:
        patched.setattr(typed_arrow._Rows, "_bulk", refuse)
        compiled = typed_arrow.typed_batch(payloads, lineage, schema)
    with monkeypatch.context() as patched:
        patched.setattr(typed_arrow, "_TYPED_COLUMNS", None)
        python = typed_arrow.typed_batch(payloads, lineage, schema)
    return compiled, python


def _assert_identical(compiled: list[pa.RecordBatch], python: list[pa.RecordBatch]) -> int:
    assert len(compiled) == len(python)
    for c, p in zip(compiled, python, strict=True):
        assert c.schema == p.schema
        for name in c.schema.names:
            got, want = c.column(name), p.column(name)
            assert got.null_count == want.null_count, name
            assert got.equals(want), (name, got.to_pylist()[:5], want.to_pylist()[:5])
    return sum(b.num_rows for b in compiled)


def _differential(files: list[Path], lenient: bool, monkeypatch: pytest.MonkeyPatch) -> int:
    history = build_history(scan_files([str(f) for f in files]))
    history.lenient = lenient
    events = [e for e in iter_binlog_events(files, lenient_ddl=lenient, image="full")
              if e.operation != pb.BinlogEvent.SCHEMA]
    by_name: dict[tuple[str, str], list[pb.BinlogEvent]] = {}
    for event in events:
        by_name.setdefault((event.db, event.table), []).append(event)
    lineages = list(table_lineages(history).values())
    for (db, table), met in by_name.items():
        names = list(dict.fromkeys(c.name for e in met for r in e.rows for c in (*r.after, *r.before)))
        lineages.append(untyped_lineage(db, table, names))
    rows = 0
    for lineage in lineages:
        payloads = [e.SerializeToString() for name in lineage.logged_names for e in by_name.get(name, [])]
        if payloads:
            rows += _assert_identical(*_both(payloads, lineage, monkeypatch))
    return rows


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_compiled_typed_batches_equal_python_on_golden_fixtures(scenario: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    files = sorted((GOLDEN / scenario / "binlogs").iterdir())
    assert _differential(files, scenario in LENIENT, monkeypatch) > 0


def test_compiled_typed_batches_equal_python_on_the_shared_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    checked = 0
    for relative in binlogs_under(CORPUS):
        try:
            checked += _differential([CORPUS / relative], True, monkeypatch)
        except BinlogError:
            continue        # a file that does not resolve on its own (see tests/golden/test_corpus_events.py)
    if not checked:
        pytest.skip(f"no shared corpus under {CORPUS}")
    assert checked > 100


_INTS = {"int_value", "long_value", "time_micros", "bit_value", "uint64_value"}
# Column types (their Spark DDL) and the value kinds that can land in each: its own and those of every type
# ``widen`` merges into it (None: all, a widened string column).
_KINDS_INTO: dict[str, set[str] | None] = {
    "int": {"int_value"}, "bigint": _INTS - {"uint64_value"}, "decimal(20,0)": _INTS,
    "decimal(9,2)": _INTS | {"decimal_value"}, "decimal(5,1)": _INTS | {"decimal_value"},
    "decimal(38,10)": _INTS | {"decimal_value"}, "float": {"float_value"},
    "double": {"float_value", "double_value", "int_value"}, "date": {"date_value"},
    "timestamp_ntz": {"date_value", "datetime_value"}, "timestamp": {"timestamp_micros"}, "string": None,
    "binary": {"bytes_value", "string_value", "json_value", "geometry_value"},
    "array<float>": {"vector_value"},
}


def _one_column(spark: str) -> TableLineage:
    lineage = untyped_lineage("d", "t", ["c"])
    lineage.columns = [ColumnOut("c", spark, ColumnSchema("c", "int"))]
    return lineage


def _event(values: list[pb.Value], operation: int = pb.BinlogEvent.INSERT) -> pb.BinlogEvent:
    image = "before" if operation == pb.BinlogEvent.DELETE else "after"
    event = pb.BinlogEvent(db="d", table="t", operation=operation, gtid="u:1",
                           position=pb.BinlogPosition(file="binlog.000001", offset=4))
    for i, value in enumerate(values):
        row = event.rows.add(row_index=i)
        getattr(row, image).add(name="c", value=value)
        getattr(row, image).add(name="unknown", value=pb.Value(int_value=i))
    return event


@pytest.mark.parametrize("spark", list(_KINDS_INTO))
def test_compiled_rules_equal_the_reference_on_hand_built_values(spark: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Every kind into every column type: the same value or the same binlog_invalid mark as the per-row
    reference (``typed_rows`` over ``convert_value``), nulls and names no version knows included."""
    values = edge_values() + [pb.Value(decimal_value=t) for t in
                              ("99999999.99", "100000000.00", "0.125", "-0.10", "1e3", "00000.50", ".5",
                               "12345678901234567890123456.7", "1234567890123456789012345678")]
    values += [pb.Value(int_value=v) for v in (2**31 - 1, -2**31)] + \
              [pb.Value(long_value=v) for v in (2**31, -2**31 - 1, 10**18)]
    for y, m, d in ((2020, 1, 2**32 - 1), (2020, 1, 2**31), (2020, 2**32 - 1, 1), (2**32 - 1, 1, 1)):
        values += [pb.Value(date_value=pb.Date(year=y, month=m, day=d)),
                   pb.Value(datetime_value=pb.DateTime(year=y, month=m, day=d, hour=2**32 - 1))]
    values += [pb.Value(datetime_value=pb.DateTime(year=2020, month=1, day=1, micros=10**6))]
    kinds = _KINDS_INTO[spark]
    values = [v for v in values
              if kinds is None or v.WhichOneof("kind") in kinds | {"null_value", "raw_text_value", None}]
    lineage = _one_column(spark)
    _, schema = typed_schema(lineage)
    events = [_event(values), _event(values[:50], pb.BinlogEvent.DELETE), _event([])]
    payloads = [e.SerializeToString() for e in events]
    with monkeypatch.context() as patched:
        patched.setattr(typed_arrow._Rows, "_bulk", None)
        got = [r for b in typed_arrow.typed_batch(payloads, lineage, schema) for r in b.to_pylist()]
    want = typed_arrow._reference_batch(payloads, lineage, schema).to_pylist()
    key = lambda r: (r["binlog_operation"], r["binlog_order"]["rowIndex"])  # noqa: E731
    assert [repr(r) for r in sorted(got, key=key)] == [repr(r) for r in sorted(want, key=key)]


def test_bytes_no_serializer_writes_are_refused() -> None:
    """Hand-built corruption: C answers None (the caller types the batch the Python way), never a row."""
    good = _event([pb.Value(int_value=5)]).SerializeToString()
    typed = speedups.typed_columns
    targets = [(1, 0, 0)]

    def resolve(_version: int, name: bytes) -> int:
        return 0 if name == b"c" else -1

    assert typed([good], 4, [0], targets, resolve) is not None
    row = pb.Row(row_index=0)
    row.after.add(name="c", value=pb.Value(int_value=1))
    row.after.add(name="c", value=pb.Value(int_value=2))           # a column twice in one row
    twice = pb.BinlogEvent(db="d", table="t", operation=1, rows=[row]).SerializeToString()
    cut = good[:-3]                                                 # truncated
    column = b"\x0a\x01c" + b"\x12\x03\xa8\x01\x05"                 # Value field 21: no such kind
    row_bytes = b"\x22" + bytes([len(column)]) + column
    unknown_value = pb.BinlogEvent(db="d", table="t", operation=1).SerializeToString() + \
        b"\x5a" + bytes([len(row_bytes)]) + row_bytes
    bad_utf8 = good.replace(b"\x0a\x01c", b"\x0a\x01\xff")          # a column name that is not UTF-8
    for payload in (twice, cut, unknown_value, bad_utf8):
        assert payload != good
        assert typed([payload], 4, [0], targets, resolve) is None


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field(number: int, data: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(data)) + data


# Hand-built text for the UTF-8 automaton: every rule of strict UTF-8 at its edges, at several distances
# from the eight-byte ASCII skip (a Value's text is otherwise what a serializer wrote, so always valid).
_TEXTS = [b"", b"plain ascii", "été λ 表 😀".encode(), "x" * 7 + "é", "x" * 8 + "é" + "y" * 9 + "表",
          b"\xc2\x80", b"\xdf\xbf", b"\xe0\xa0\x80", b"\xed\x9f\xbf", b"\xee\x80\x80", b"\xf0\x90\x80\x80",
          b"\xf4\x8f\xbf\xbf", b"\xf3\xbf\xbf\xbf",
          b"\xc0\x80", b"\xc1\xbf", b"\xe0\x9f\xbf", b"\xed\xa0\x80", b"\xf0\x8f\xbf\xbf",
          b"\xf4\x90\x80\x80",
          b"\xf5\x80\x80\x80", b"\xff", b"\x80", b"\xbf", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"\xc3\x28",
          b"\xe2\x28\xa1", b"\xf0\x28\x8c\xbc"]
_TEXTS = [t.encode() if isinstance(t, str) else t for t in _TEXTS]
_TEXTS += [b"abcdefgh" * k + t for t in (b"\xc3\xa9", b"\xc3", b"\xed\xa0\x80") for k in (1, 2)]
# Characters across an eight-byte word's end, then ASCII words after them (valid, cut, or bad).
_TEXTS += [b"x" * k + c + b"y" * 17 for k in (5, 6, 7)
           for c in ("表".encode(), "😀".encode(), b"\xe2\x82", b"\xc3(", b"\xf0\x9f\x98")]


@pytest.mark.parametrize("text", _TEXTS)
def test_compiled_utf8_check_follows_python(text: bytes) -> None:
    """A string value and a column name: typed when Python decodes the bytes, refused (None) when not."""
    typed = speedups.typed_columns
    value = _field(4, text)                                                   # Value.string_value
    for name, entry in ((b"c", _field(1, b"c") + _field(2, value)),           # the value's text
                        (text, _field(1, text) + _field(2, _field(4, b"v")))):   # the column's name
        row = b"\x08\x00" + _field(4, entry)
        payload = pb.BinlogEvent(db="d", table="t", operation=1).SerializeToString() + _field(11, row)
        for expected in (0, 1, 10**12):        # the row-count hint: none, exact, past the input's size
            got = typed([payload], 4, [0], [(9, 0, 0)], lambda _v, n, name=name: 0 if n == name else -1,
                        expected)
            try:
                want = text.decode("utf-8")
            except UnicodeDecodeError:
                assert got is None, (text, name)
                continue
            assert got is not None, (text, name)
            rows, _, _, [(_, data, offsets, _)], _ = got
            column = pa.Array.from_buffers(pa.string(), rows,
                                           [None, pa.py_buffer(offsets), pa.py_buffer(data)])
            assert column.to_pylist() == [want if name == b"c" else "v"]


def _view_header(payload: bytes) -> tuple[Any, ...]:
    view = pb.BinlogEvent.FromString(payload)
    position, stamp = view.position, view.utc_timestamp
    return (view.db, view.table, view.operation, len(view.rows), position.file, position.offset,
            position.inner_index if position.HasField("inner_index") else -1, view.gtid, stamp.seconds,
            stamp.nanos, view.event_index, view.row_index)


def test_compiled_event_headers_equal_protobuf_on_golden_fixtures() -> None:
    """``_speedups.event_header`` reads what protobuf's parser reads, on every event of the golden
    fixtures."""
    checked = 0
    for scenario in SCENARIOS:
        files = sorted((GOLDEN / scenario / "binlogs").iterdir())
        for event in iter_binlog_events(files, lenient_ddl=scenario in LENIENT, image="full"):
            payload = event.SerializeToString()
            got = speedups.event_header(payload)
            if event.operation == pb.BinlogEvent.SCHEMA and event.schema_changes:
                assert got is None          # schema changes: left to protobuf's parser
                continue
            assert got == _view_header(payload)
            checked += 1
    assert checked > 100


def test_compiled_event_header_edges() -> None:
    """Hand-built bytes: the fields as protobuf reads them, or None (then protobuf's parser decides), never
    a header protobuf would not give."""
    base = pb.BinlogEvent(db="d", table="t", operation=2, gtid="u:7", event_index=3, row_index=9,
                          position=pb.BinlogPosition(file="binlog.000002", offset=77, inner_index=0))
    base.utc_timestamp.seconds, base.utc_timestamp.nanos = 1_700_000_000, 5
    base.rows.add(row_index=9)
    good = base.SerializeToString()
    header = speedups.event_header
    assert header(good) == _view_header(good)
    assert header(good)[6] == 0                                             # inner_index 0, present
    for same in (good + b"\xf8\x0f\x01",                                     # an unknown field
                 good + b"\x12\x00",                                         # source, empty
                 good + b"\x50\x03",                                         # operation again: the last
                 good + b"\x10\x05",                                         # source as a varint: skipped
                 b"\x50\xff\xff\xff\xff\x0f" + good[:0]):                    # an enum past int32 range
        assert header(same) == _view_header(same)
    for refused in (good + _field(13, b"\x10\x05"),                          # a second position
                    good + b"\x40\x01",                                      # db as a varint
                    good + _field(8, b"\xff"),                               # db not UTF-8
                    good + _field(2, b"\xc3"),                               # source not UTF-8
                    good + _field(12, b""),                                  # schema changes
                    good + b"\x58\x01",                                      # rows as a varint
                    good[:-1]):                                              # truncated
        assert header(refused) is None, refused
