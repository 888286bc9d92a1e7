"""The replica's row images read in C (``_speedups.replica_images``) against the reference it stands in for,
``TableBatch._image``: the same values (type and text), the same invalid names, for every row event of
every golden fixture (every server family, under every row image the resolver can give) and every binlog of
the shared corpus; where the C code hands an event back (None), the reference runs. Then the batches
themselves: ``TableBatch.add`` with the event's bytes and without them gives the same rows to merge. Hand-made
events (named as such) hold the edge cases: values a type cannot hold, names that differ in case or are not
columns, JSON diffs and bytes the C code must hand back. ``benchmarks.fuzz.native replica`` fuzzes it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.compiled import speedups
from binlog_model.errors import BinlogError
from binlog_model.io.file_source import FileSource
from binlog_model.io.snapshots import load_snapshot
from binlog_model.replica.batch import MISSING, Meta, ReplicaError, TableBatch
from binlog_model.replica.layout import TableLayout
from binlog_model.resolve.assembler import StatementAssembler
from binlog_model.resolve.options import ResolveOptions
from binlog_model.runs.runner import Runner
from binlog_model.testing.golden import (
    SNAPSHOT_NAME,
    binlog_files,
    fixture_options,
    iter_fixture_dirs,
    read_meta,
)
from schema_tracker.history import SchemaHistory
from tests._paths import CORPUS, REPO, binlogs_under

pytestmark = pytest.mark.skipif(not hasattr(speedups, "replica_images"),
                                reason="the compiled core is not built")

GOLDEN = REPO / "binlog_model" / "fixtures" / "golden"
_OPS = (pb.BinlogEvent.INSERT, pb.BinlogEvent.UPDATE, pb.BinlogEvent.DELETE)
META = Meta(1, "", "binlog.000001", 4)


def _shown(values: list[Any] | None) -> list[tuple[str, str]] | None:
    """Values as their types and texts: 1 and 1.0, Decimal('1.0') and Decimal('1.00') differ."""
    return None if values is None else [(type(v).__name__, repr(v)) for v in values]


def _reference(batch: TableBatch, event: pb.BinlogEvent) -> list[tuple[Any, ...]]:
    op = event.operation
    out = []
    for row in event.rows:
        before = (batch._image(row.before, META, batch._before_reads)[0]
                  if op in (pb.BinlogEvent.UPDATE, pb.BinlogEvent.DELETE) else None)
        after = invalid = None
        if op in (pb.BinlogEvent.INSERT, pb.BinlogEvent.UPDATE):
            after, invalid, diffs = batch._image(row.after, META)
            if diffs:
                return [("diffs",)]
        out.append((_shown(before), _shown(after), invalid))
    return out


def compare(batch: TableBatch, data: bytes, counts: Counter[str]) -> None:
    """One serialized row event both ways (``counts``: events compared, handed back)."""
    event = pb.BinlogEvent.FromString(data)
    got = speedups.replica_images(data, event.operation, batch._plan)
    want = _reference(batch, event)
    if got is None:
        counts["handed back"] += 1
        return
    assert want != [("diffs",)], "a JSON diff the C code did not hand back"
    assert [(_shown(b), _shown(a), i) for b, a, i in got] == want, (event.db, event.table, event.position)
    counts["compared"] += 1
    counts["rows"] += len(want)


def _events(files: list[Path], options: ResolveOptions, history: SchemaHistory | None
            ) -> Iterator[tuple[bytes, Any]]:
    """Each serialized row event with its table's schema as the assembler has it at that event."""
    asm = StatementAssembler(history, options, serialized=True)
    events = Runner(FileSource(files, partial_tail=options.allow_incomplete_tail), asm).events()
    while True:
        try:
            data = next(events)
        except StopIteration:
            return
        except BinlogError:     # a corpus binlog without the schema of its tables: compared up to there
            return
        event = pb.BinlogEvent.FromString(data)
        if event.operation in _OPS:
            yield data, asm.history.catalog.table(event.db, event.table)


def _compare_all(files: list[Path], options: ResolveOptions, history: SchemaHistory | None,
                 counts: Counter[str]) -> None:
    layouts: dict[int, TableBatch] = {}
    for data, schema in _events(files, options, history):
        if schema is None:
            continue
        batch = layouts.get(id(schema))
        if batch is None:
            batch = layouts[id(schema)] = TableBatch(TableLayout.of(schema))
        compare(batch, data, counts)


def _images(recorded: Any) -> list[ResolveOptions]:
    base = {"source": recorded.source, "always_include": list(recorded.always_include)}
    return [ResolveOptions.parse(image=image, **base)
            for image in dict.fromkeys([recorded.image, "full", "changed_with_old", "after"])]


@pytest.mark.parametrize("fixture", list(iter_fixture_dirs(GOLDEN)),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_images_are_the_references_on_every_fixture(fixture: Path) -> None:
    meta = read_meta(fixture)
    recorded = fixture_options(fixture, meta)
    snapshot = fixture / SNAPSHOT_NAME
    counts: Counter[str] = Counter()
    for options in _images(recorded):
        history = load_snapshot(snapshot) if snapshot.exists() else None
        _compare_all(binlog_files(fixture, meta), options, history, counts)
    assert counts["compared"] >= 1, counts


def test_the_c_code_reads_most_row_events_of_the_fixtures() -> None:
    """Handing every event back would pass the comparisons: most must be read in C."""
    counts: Counter[str] = Counter()
    for fixture in iter_fixture_dirs(GOLDEN):
        if fixture.name == "all_types":       # SET, GEOMETRY, VECTOR and JSON diffs go the reference
            continue
        meta = read_meta(fixture)
        recorded = fixture_options(fixture, meta)
        snapshot = fixture / SNAPSHOT_NAME
        options = ResolveOptions.parse(image=recorded.image, source=recorded.source)
        history = load_snapshot(snapshot) if snapshot.exists() else None
        _compare_all(binlog_files(fixture, meta), options, history, counts)
    assert counts["compared"] >= 0.9 * (counts["compared"] + counts["handed back"]), counts
    assert counts["rows"] >= 1000, counts


@pytest.mark.parametrize("name", binlogs_under(CORPUS) or [None], ids=lambda p: p or "absent")
def test_the_images_are_the_references_on_the_corpus(name: str | None) -> None:
    if name is None:
        pytest.skip(f"the shared corpus is absent ({CORPUS})")
    counts: Counter[str] = Counter()
    _compare_all([CORPUS / name], ResolveOptions.parse(allow_incomplete_tail=True), None, counts)


@pytest.mark.parametrize("fixture", [GOLDEN / family / name for family in ("mysql", "mariadb")
                                     for name in ("pk_updates", "transactions", "no_primary_key")],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_batch_merges_the_same_rows_with_and_without_the_bytes(fixture: Path) -> None:
    meta = read_meta(fixture)
    recorded = fixture_options(fixture, meta)
    snapshot = fixture / SNAPSHOT_NAME
    for image in dict.fromkeys([recorded.image, "full", "changed_with_old"]):
        options = ResolveOptions.parse(image=image, source=recorded.source)
        history = load_snapshot(snapshot) if snapshot.exists() else None
        both: dict[tuple[str, str, int], tuple[TableBatch, TableBatch]] = {}
        for n, (data, schema) in enumerate(_events(binlog_files(fixture, meta), options, history)):
            if schema is None:
                continue
            key = (schema.db, schema.name, id(schema))
            if key not in both:
                layout = TableLayout.of(schema)
                both[key] = (TableBatch(layout), TableBatch(layout))
            at = Meta(n, "", "binlog.000001", n)
            event = pb.BinlogEvent.FromString(data)
            with_bytes, without = both[key]
            outcomes = []
            for batch, given in ((with_bytes, data), (without, None)):
                try:
                    batch.add(event, at, given)
                    outcomes.append("taken")
                except ReplicaError as err:     # an image without the key (the "after" image): alike
                    outcomes.append(str(err))
            assert outcomes[0] == outcomes[1]
        assert both
        for with_bytes, without in both.values():
            if with_bytes.layout.keyless:
                counts = lambda digests: {}     # noqa: E731  (a replica without rows yet)
                assert with_bytes.keyless_rows(counts).equals(without.keyless_rows(counts))
            else:
                assert with_bytes.keyed_rows().equals(without.keyed_rows())


# --- hand-made events: the edge cases ---------------------------------------------------------------------

def _batch(ddl: str) -> TableBatch:
    history = SchemaHistory()
    history.apply(ddl, "d")
    table = history.catalog.table("d", ddl.split()[2])
    assert table is not None
    return TableBatch(TableLayout.of(table))


def _event(op: int, before: list[pb.Column] | None, after: list[pb.Column] | None) -> bytes:
    event = pb.BinlogEvent(db="d", table="t", operation=op)
    row = event.rows.add()
    if before is not None:
        row.before.extend(before)
    if after is not None:
        row.after.extend(after)
    return event.SerializeToString()


def _col(name: str, **value: Any) -> pb.Column:
    return pb.Column(name=name, value=pb.Value(**value))


WIDE = ("CREATE TABLE t (id INT PRIMARY KEY, small SMALLINT, big BIGINT UNSIGNED, price DECIMAL(5,2), "
        "d DATE, dt DATETIME(6), ts TIMESTAMP(6) NULL, f FLOAT, x DOUBLE, s VARCHAR(10), b VARBINARY(10), "
        "tm TIME, j JSON)")


@pytest.mark.parametrize("columns", [
    # in range and plain
    [_col("id", int_value=1), _col("small", int_value=-32768), _col("big", uint64_value=2**64 - 1),
     _col("price", decimal_value="-999.99"), _col("d", date_value=pb.Date(year=2024, month=2, day=29)),
     _col("dt", datetime_value=pb.DateTime(year=1, month=1, day=1, micros=999999)),
     _col("ts", timestamp_micros=1), _col("f", float_value=0.1), _col("x", double_value=float("nan")),
     _col("s", string_value="é€😀"), _col("b", bytes_value=b"\x00\xff"), _col("tm", time_micros=-1),
     _col("j", json_value='{"a": 1}')],
    # what the types cannot hold: invalid names, null values
    [_col("id", int_value=1), _col("small", long_value=2**40), _col("price", decimal_value="1000.00"),
     _col("d", date_value=pb.Date()), _col("dt", datetime_value=pb.DateTime(year=2024, month=13, day=1)),
     _col("ts", timestamp_micros=0), _col("tm", uint64_value=2**63)],
    # decimals the reference quantizes, or whose digits do not fit
    [_col("id", int_value=1), _col("price", decimal_value="1.5")],
    [_col("id", int_value=1), _col("price", decimal_value="-0001.25")],
    [_col("id", int_value=1), _col("price", decimal_value="1.255")],
    [_col("id", int_value=1), _col("price", decimal_value="12345")],
    [_col("id", int_value=1), _col("price", decimal_value="1e2")],
    # names: another case, not a column, no name; nulls and values with no kind; columns out of order
    [_col("ID", int_value=1), _col("Small", int_value=2), _col("nope", int_value=3),
     pb.Column(value=pb.Value(int_value=4)), _col("s", null_value=0), pb.Column(name="b"),
     _col("x", double_value=1.5), _col("f", float_value=2.5)],
    # a year past 9999, and a date-time field past INT_MAX
    [_col("id", int_value=1), _col("d", date_value=pb.Date(year=10000, month=1, day=1)),
     _col("dt", datetime_value=pb.DateTime(year=2**31, month=1, day=1))],
    # past any date (the reference raised OverflowError), and a decimal that is not a number's text (it
    # raised InvalidOperation): invalid values, found by the fuzz target
    [_col("id", int_value=1), _col("ts", timestamp_micros=2**62), _col("price", decimal_value="-")],
], ids=["plain", "invalid", "quantized", "leading-zeros", "too-many-places", "too-many-digits", "exponent",
        "names", "out-of-range-dates", "past-any-date"])
def test_hand_made_values_are_the_references(columns: list[pb.Column]) -> None:
    batch = _batch(WIDE)
    counts: Counter[str] = Counter()
    for op in _OPS:
        compare(batch, _event(op, columns, columns), counts)
    assert counts["compared"] == 3, counts


def test_a_before_image_is_read_for_its_key_alone() -> None:
    batch = _batch("CREATE TABLE t (id INT PRIMARY KEY, small SMALLINT)")
    data = _event(pb.BinlogEvent.DELETE, [_col("small", long_value=2**40), _col("id", int_value=7)], None)
    got = speedups.replica_images(data, pb.BinlogEvent.DELETE, batch._plan)
    assert got == [([7, MISSING], None, None)]


@pytest.mark.parametrize("case", ["json diff", "set", "geometry", "raw text", "an int into a decimal",
                                  "a name not ASCII", "two values", "truncated", "a bad wire type"])
def test_what_the_c_code_hands_back(case: str) -> None:
    batch = _batch("CREATE TABLE t (id INT PRIMARY KEY, j JSON, st SET('a','b'), g GEOMETRY, "
                   "s VARCHAR(5), price DECIMAL(5,2), `ü` INT)")
    diff = pb.JsonDiff(operations=[pb.JsonDiffOperation(path="$.a", value="1")])
    columns = {
        "json diff": [_col("id", int_value=1), _col("j", json_diff=diff)],
        "set": [_col("id", int_value=1), _col("st", set_value=pb.SetValue(labels=["a"]))],
        "geometry": [_col("id", int_value=1), _col("g", geometry_value=pb.Geometry(wkb=b"\x01"))],
        "raw text": [_col("id", int_value=1), _col("s", raw_text_value=pb.RawText(data=b"\xff"))],
        "an int into a decimal": [_col("id", int_value=1), _col("price", int_value=5)],
        "a name not ASCII": [_col("id", int_value=1), _col("Ü", int_value=5)],
    }
    if case in columns:
        data = _event(pb.BinlogEvent.INSERT, None, columns[case])
    else:
        data = _event(pb.BinlogEvent.INSERT, None, [_col("id", int_value=1)])
        column = b"\x0a\x02id\x12\x02\x10\x01"          # name "id", value int_value 1
        if case == "two values":
            column += b"\x12\x02\x10\x02"
        elif case == "truncated":
            column = column[:-1]
        else:
            column += b"\x1a\x01\x00"                    # field 3 (invisible) as bytes
        row = b"\x22" + bytes([len(column)]) + column
        data = b"\x50\x01\x5a" + bytes([len(row)]) + row     # operation INSERT, one row
    assert speedups.replica_images(data, pb.BinlogEvent.INSERT, batch._plan) is None
    event = pb.BinlogEvent()
    try:
        event.ParseFromString(data)
    except Exception:
        return
    batch.add(event, META, data)      # the reference takes it
    assert batch.events == 1


def test_a_decimal_keeps_its_text() -> None:
    batch = _batch("CREATE TABLE t (id INT PRIMARY KEY, price DECIMAL(5,2))")
    data = _event(pb.BinlogEvent.INSERT, None,
                  [_col("id", int_value=1), _col("price", decimal_value="-0.50")])
    (_, after, invalid), = speedups.replica_images(data, pb.BinlogEvent.INSERT, batch._plan)
    assert after == [1, Decimal("-0.50")] and str(after[1]) == "-0.50" and invalid == set()
