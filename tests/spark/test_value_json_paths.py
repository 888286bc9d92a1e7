"""Value -> JSON text: every fast path against the one reference, byte for byte.

A model ``Value`` becomes JSON text (``{"intValue":5}``, the data source's map columns) in one reference,
``binlog_model.spark.value_json.value_json`` (protobuf's ``json_format``, pure Python), and in two fast
paths that must give the same bytes:

- ``arrow_compute``: ``arrow_batch.value_texts``, Arrow compute over the serialized values, per kind;
- ``compiled``: ``_speedups.arrow_columns``, the C builder of the data source's batches (it hands FLOAT and
  the rare kinds back to the reference: those values are compared too, so a change there shows).

Inputs: every value of every golden fixture (all servers), every value the shared corpus decodes to
(skipped when the corpus is absent), and hand-built edge values (named as such: every kind with its edges,
and every BMP character inside a string, which checks both the no-escape shortcut and the escapes).

The other JSON text, a MySQL JSON column (binary JSON -> text), has its own one reference,
``JsonDocument.to_json`` (binlog_model/wire/values.py; resolve/convert.py and resolve/json_diff.py render
through it), and one fast path, ``_speedups.json_text``: tests/property/test_json_text_compiled.py compares
them on the same fixtures and corpus, the test-suite binlogs, hypothesis documents and hand-built edges.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.errors import BinlogError
from binlog_model.runs.pipeline import iter_binlog_events
from binlog_model.spark.value_json import value_json
from binlog_model.testing.golden import fixture_events, iter_fixture_dirs
from tests._paths import CORPUS, REPO, binlogs_under
from tests.spark._values import edge_values

pytest.importorskip("pyarrow")

from binlog_model.spark import arrow_batch

_PER_ROW = 50


def _event_of(values: list[pb.Value]) -> bytes:
    """One INSERT event carrying ``values`` as its rows' after images (``_PER_ROW`` a row)."""
    event = pb.BinlogEvent(db="d", table="t", operation=pb.BinlogEvent.INSERT,
                           position=pb.BinlogPosition(file="b.000001"))
    for start in range(0, len(values), _PER_ROW):
        row = event.rows.add(row_index=start)
        for i, value in enumerate(values[start:start + _PER_ROW]):
            row.after.add(name=f"c{i}", value=value)
    return event.SerializeToString()


def _arrow_compute(values: list[pb.Value]) -> list[str]:
    return arrow_batch.value_texts([v.SerializeToString() for v in values]).to_pylist()


def _compiled(values: list[pb.Value]) -> list[str]:
    if arrow_batch._ARROW_COLUMNS is None:
        pytest.skip("the compiled core is not built (or is switched off)")
    rows = -(-len(values) // _PER_ROW)
    batch = arrow_batch._compiled_batch([_event_of(values)], False, rows)
    assert batch is not None, "the C builder handed real values back to Python: nothing compared"
    return [text for row in batch.column("after").to_pylist() for _, text in row]


FAST_PATHS: dict[str, Callable[[list[pb.Value]], list[str]]] = {
    "arrow_compute": _arrow_compute, "compiled": _compiled}


def _values_of(events: object) -> list[pb.Value]:
    found: list[pb.Value] = []
    for event in events:  # type: ignore[attr-defined]
        for row in event.rows:
            for column in (*row.primary_key, *row.before, *row.after):
                found.append(column.value)
    return found


def _distinct(values: list[pb.Value]) -> list[pb.Value]:
    """One value per distinct serialization, in a stable order (the comparisons cost per value)."""
    by_bytes = {v.SerializeToString(): v for v in values}
    return [by_bytes[k] for k in sorted(by_bytes)]


@functools.cache
def _golden() -> tuple[pb.Value, ...]:
    values: list[pb.Value] = []
    for fixture in iter_fixture_dirs(REPO / "binlog_model" / "fixtures" / "golden"):
        values += _values_of(fixture_events(fixture))
    return tuple(_distinct(values))


@functools.cache
def _corpus() -> tuple[pb.Value, ...]:
    values: list[pb.Value] = []
    for rel in binlogs_under(CORPUS):
        events: list[pb.BinlogEvent] = []
        try:
            for event in iter_binlog_events(CORPUS / rel, lenient_ddl=True):
                events.append(event)
        except BinlogError:
            pass            # a file the library refuses part-way: the events before the error still count
        values += _values_of(events)
    return tuple(_distinct(values))


def _every_bmp_character() -> list[pb.Value]:
    """Hand-built: each BMP character (surrogates excepted) between two letters, as a string value."""
    return [pb.Value(string_value=f"a{chr(c)}b") for c in range(0x10000) if not 0xD800 <= c < 0xE000]


@functools.cache
def _edges() -> tuple[pb.Value, ...]:
    return (*edge_values(), *_every_bmp_character())


SOURCES: dict[str, Callable[[], tuple[pb.Value, ...]]] = {
    "golden": _golden, "corpus": _corpus, "edges": _edges}


@functools.cache
def _reference(source: str) -> tuple[str, ...]:
    return tuple(value_json(v) for v in SOURCES[source]())


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("path", FAST_PATHS)
def test_fast_path_gives_the_reference_text(path: str, source: str) -> None:
    values = list(SOURCES[source]())
    if source == "corpus" and not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found: {CORPUS} (set BINLOG_MODEL_SHARED)")
    got = FAST_PATHS[path](values)
    want = _reference(source)
    assert len(got) == len(want)
    differ = [(values[i], g, w) for i, (g, w) in enumerate(zip(got, want, strict=True)) if g != w]
    assert not differ, f"{len(differ)} of {len(want)} texts differ from value_json; first: {differ[0]}"


_KINDS = {field.name for field in pb.Value.DESCRIPTOR.oneofs_by_name["kind"].fields}


def test_the_inputs_are_not_vacuous() -> None:
    """The fixtures give thousands of values of the common kinds, and fixtures plus edges hold every kind
    of Value (and an empty one): a path cannot pass by comparing little or nothing."""
    golden = _golden()
    assert len(golden) >= 10_000
    common = {"int_value", "long_value", "uint64_value", "string_value", "decimal_value", "null_value",
              "json_value", "time_micros", "timestamp_micros", "bit_value", "datetime_value", "date_value",
              "set_value", "bytes_value", "double_value", "float_value"}
    assert common <= {v.WhichOneof("kind") for v in golden}
    kinds = {v.WhichOneof("kind") for v in (*golden, *_edges())}
    assert kinds == _KINDS | {None}
    if CORPUS.is_dir():
        assert len(_corpus()) >= 100, "the shared corpus decodes to few values: the collection broke?"
