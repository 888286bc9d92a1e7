"""The fast JSON of a BinlogEvent against the reference, byte for byte.

The reference is protobuf's ``json_format`` (``reference=True``); the fast paths are what ``to_json`` and the
JSON lines sink use: the compiled encoder from the serialized event (``_speedups.jsonl_event``, when the
compiled core is on: typed values, no defaults) and the Python one (``binlog_model.json_encoder``).

Compared: the JSON line (``encode_jsonl``) of every event of every golden fixture (all servers), of every
event the shared corpus decodes to (skipped when the corpus is absent), of events built from the hand-made
edge values of every ``Value`` kind, and of hypothesis-generated events that set every field of the schema,
each at its edges (zero where presence keeps it, unknown enum numbers, empty and non-ASCII text), in both
``--json-values`` forms, with and without ``--json-defaults``. The fixture and corpus runs also check that the
fast path ran (no event fell back to json_format). The serialized form (``encode_jsonl_serialized``, what the
sink gets from the runner) is compared on the same inputs, and the compiled encoder is fuzzed with truncated
and altered bytes: a line, then the reference line of what protobuf parses from them, or None.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from binlog_model import json_encoder
from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.errors import BinlogError
from binlog_model.messages import to_dict, to_json
from binlog_model.runs.pipeline import iter_binlog_events
from binlog_model.sinks.jsonl import encode_jsonl, encode_jsonl_serialized
from binlog_model.testing.golden import fixture_events, iter_fixture_dirs
from tests._paths import CORPUS, REPO, binlogs_under
from tests.spark._values import edge_values

FORMS = [("typed", False), ("plain", False), ("typed", True), ("plain", True)]


def _outcome(event: pb.BinlogEvent, json_values: str, include_defaults: bool, *, reference: bool) -> object:
    """The line, or the error (type and text) when there is none: e.g. a ``plain`` TIMESTAMP beyond
    Python's datetime range raises in both paths."""
    try:
        return encode_jsonl(event, json_values=json_values, include_defaults=include_defaults,
                            reference=reference)
    except Exception as exc:
        return type(exc), str(exc)


def _serialized_differences(events: list[pb.BinlogEvent]) -> list[str]:
    out = []
    for i, event in enumerate(events):
        got = encode_jsonl_serialized(event.SerializeToString())
        want = encode_jsonl(event, reference=True)
        if got != want:
            out.append(f"event #{i}:\n  serialized {got!r}\n  reference  {want!r}")
    return out


def _differences(events: list[pb.BinlogEvent], json_values: str, include_defaults: bool) -> list[str]:
    out = []
    for i, event in enumerate(events):
        got = _outcome(event, json_values, include_defaults, reference=False)
        want = _outcome(event, json_values, include_defaults, reference=True)
        if got != want:
            out.append(f"event #{i}:\n  fast      {got!r}\n  reference {want!r}")
    return out


@functools.cache
def _golden() -> tuple[pb.BinlogEvent, ...]:
    events: list[pb.BinlogEvent] = []
    for fixture in iter_fixture_dirs(REPO / "fixtures" / "golden"):
        events += fixture_events(fixture)
    return tuple(events)


@functools.cache
def _corpus() -> tuple[pb.BinlogEvent, ...]:
    events: list[pb.BinlogEvent] = []
    for rel in binlogs_under(CORPUS):
        try:
            for event in iter_binlog_events(CORPUS / rel, lenient_ddl=True):
                events.append(event)
        except BinlogError:
            pass            # a file the library refuses part-way: the events before the error still count
    return tuple(events)


@functools.cache
def _edges() -> tuple[pb.BinlogEvent, ...]:
    """Hand-built: every edge value of every kind, 20 a row, in each row image, with and without names."""
    values = edge_values()
    events = []
    for start in range(0, len(values), 20):
        event = pb.BinlogEvent(db="d", table="t", operation=pb.BinlogEvent.UPDATE)
        row = event.rows.add(row_index=start)
        for i, value in enumerate(values[start:start + 20]):
            for image in (row.primary_key, row.before, row.after):
                image.add(name=f"c{i}" if i % 3 else "", value=value, invisible=i % 4 == 1)
        row.after.add(name="no value")
        events.append(event)
    return tuple(events)


SOURCES = {"golden": _golden, "corpus": _corpus, "edges": _edges}


@pytest.mark.parametrize(("json_values", "include_defaults"), FORMS)
@pytest.mark.parametrize("source", SOURCES)
def test_fast_json_lines_are_the_reference_bytes(source: str, json_values: str,
                                                 include_defaults: bool) -> None:
    if source == "corpus" and not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found: {CORPUS} (set BINLOG_MODEL_SHARED)")
    events = list(SOURCES[source]())
    before = dict(json_encoder.FALLBACKS)
    differ = _differences(events, json_values, include_defaults)
    assert not differ, f"{len(differ)} of {len(events)} lines differ; first: {differ[0]}"
    fell_back = {k: n - before.get(k, 0) for k, n in json_encoder.FALLBACKS.items() if n != before.get(k, 0)}
    # Every event took a fast path: the compiled one for typed values without defaults (it leaves the
    # events with schema changes to the Python one), the Python one for the rest.
    rare = sum(1 for e in events if e.schema_changes or e.HasField("statement_raw"))
    if json_values == "typed" and not include_defaults and json_encoder.COMPILED:
        assert fell_back == ({"compiled_refused": rare} if rare else {})
    else:
        assert fell_back == {}


@pytest.mark.parametrize("source", SOURCES)
def test_lines_of_serialized_events_are_the_reference_bytes(source: str) -> None:
    """What the sink writes for the runner's serialized events (the compiled encoder, when it is on)."""
    if source == "corpus" and not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found: {CORPUS} (set BINLOG_MODEL_SHARED)")
    events = list(SOURCES[source]())
    differ = _serialized_differences(events)
    assert not differ, f"{len(differ)} of {len(events)} lines differ; first: {differ[0]}"


def test_the_inputs_are_not_vacuous() -> None:
    golden = _golden()
    assert len(golden) >= 500
    assert sum(len(e.rows) for e in golden) >= 5_000
    assert any(e.schema_changes for e in golden) and any(e.HasField("statement") for e in golden)
    if CORPUS.is_dir():
        assert len(_corpus()) >= 100, "the shared corpus decodes to few events: the collection broke?"


def test_schema_is_the_one_the_encoder_knows() -> None:
    """A field added to the proto must be added to json_encoder too (until then every event is
    json_format's, correct but slow: this test says so)."""
    assert json_encoder.SCHEMA_OK


def test_a_timestamp_json_format_refuses_is_refused_the_same_way() -> None:
    event = pb.BinlogEvent(db="d")
    event.utc_timestamp.seconds = 300_000_000_000          # past year 9999: ToJsonString raises
    with pytest.raises(Exception) as fast:
        to_json(event)
    with pytest.raises(Exception) as reference:
        to_json(event, reference=True)
    assert type(fast.value) is type(reference.value) and str(fast.value) == str(reference.value)


def test_other_messages_are_json_formats() -> None:
    position = pb.BinlogPosition(file="b.000001", offset=4)
    assert to_dict(position) == {"file": "b.000001", "offset": "4"}


# -- generated events ---------------------------------------------------------------------------------------

_U32, _U64 = st.integers(0, 2**32 - 1), st.integers(0, 2**64 - 1)
_I32, _I64 = st.integers(-2**31, 2**31 - 1), st.integers(-2**63, 2**63 - 1)
_TEXT = st.text(max_size=12)
_FLOATS = st.floats(allow_nan=True, allow_infinity=True)
_F32 = st.floats(width=32, allow_nan=True, allow_infinity=True)


def _value_kinds() -> st.SearchStrategy[pb.Value]:
    date = st.builds(pb.Date, year=_U32, month=_U32, day=_U32)
    datetime = st.builds(pb.DateTime, year=_U32, month=_U32, day=_U32, hour=_U32, minute=_U32, second=_U32,
                         micros=_U32)
    op = st.builds(pb.JsonDiffOperation, op=st.integers(0, 5), path=_TEXT, value=st.none() | _TEXT)
    return st.one_of(
        st.just(pb.Value()), st.builds(pb.Value, null_value=st.just(0)), st.builds(pb.Value, int_value=_I32),
        st.builds(pb.Value, long_value=_I64), st.builds(pb.Value, string_value=_TEXT),
        st.builds(pb.Value, bytes_value=st.binary(max_size=10)), st.builds(pb.Value, decimal_value=_TEXT),
        st.builds(pb.Value, double_value=_FLOATS), st.builds(pb.Value, float_value=_F32),
        st.builds(pb.Value, datetime_value=datetime), st.builds(pb.Value, date_value=date),
        st.builds(pb.Value, timestamp_micros=_I64), st.builds(pb.Value, time_micros=_I64),
        st.builds(pb.Value, uint64_value=_U64), st.builds(pb.Value, json_value=_TEXT),
        st.builds(pb.Value, set_value=st.builds(pb.SetValue, labels=st.lists(_TEXT, max_size=3))),
        st.builds(pb.Value, bit_value=_U64),
        st.builds(pb.Value, geometry_value=st.builds(pb.Geometry, srid=_U32, wkb=st.binary(max_size=8))),
        st.builds(pb.Value, vector_value=st.builds(pb.Vector, values=st.lists(_F32, max_size=3))),
        st.builds(pb.Value, raw_text_value=st.builds(pb.RawText, data=st.binary(max_size=6), charset=_TEXT)),
        st.builds(pb.Value, json_diff=st.builds(pb.JsonDiff, operations=st.lists(op, max_size=2))))


def _column() -> st.SearchStrategy[pb.Column]:
    return st.builds(pb.Column, name=_TEXT, value=st.none() | _value_kinds(), invisible=st.booleans())


def _row() -> st.SearchStrategy[pb.Row]:
    columns = st.lists(_column(), max_size=4)
    return st.builds(pb.Row, row_index=_U64, primary_key=columns, before=columns, after=columns)


def _schema_change() -> st.SearchStrategy[pb.SchemaChange]:
    definition = st.builds(pb.ColumnDefinition, column_name=_TEXT, column_type=st.integers(0, 20),
                           nullable=st.booleans(), mysql_type=_TEXT, default_value=st.none() | _TEXT,
                           charset=_TEXT, invisible=st.booleans())
    return st.one_of(
        st.just(pb.SchemaChange()),
        st.builds(pb.SchemaChange, create_table=st.builds(
            pb.CreateTable, columns=st.lists(definition, max_size=2),
            primary_key=st.lists(_TEXT, max_size=2))),
        st.builds(pb.SchemaChange, create_or_modify_column=st.builds(
            pb.CreateOrModifyColumn, column_name=_TEXT, column_type=st.integers(0, 20),
            default_value=st.none() | _TEXT, first=st.booleans(), after_column=_TEXT)),
        st.builds(pb.SchemaChange, drop_table=st.just(pb.DropTable())),
        st.builds(pb.SchemaChange, skipped_statement=st.builds(pb.SkippedStatement, statement=_TEXT,
                                                               reason=_TEXT)))


@st.composite
def _events(draw: st.DrawFn) -> pb.BinlogEvent:
    e = pb.BinlogEvent()
    if draw(st.booleans()):
        e.utc_timestamp.seconds = draw(st.integers(-62135596800, 253402300799))
        e.utc_timestamp.nanos = draw(st.sampled_from([0, 1, 1000, 1_000_000, 999_999_999])
                                     | st.integers(0, 10**9 - 1))
    for name, strategy in (("source", _TEXT), ("server_uuid", _TEXT), ("transaction_id", _U64),
                           ("query_index", _U32), ("row_index", _U64), ("db", _TEXT), ("table", _TEXT),
                           ("operation", st.integers(0, 6)), ("gtid", _TEXT), ("event_index", _U32),
                           ("last_in_statement", st.booleans()), ("server_id", _U32),
                           ("gtid_domain_id", _U32)):
        if draw(st.booleans()):
            setattr(e, name, draw(strategy))
    for name in ("trace_info", "statement"):            # optional: present even when empty
        text = draw(st.none() | _TEXT)
        if text is not None:
            setattr(e, name, text)
    e.rows.extend(draw(st.lists(_row(), max_size=3)))
    e.schema_changes.extend(draw(st.lists(_schema_change(), max_size=2)))
    if draw(st.booleans()):
        e.position.file = draw(_TEXT)
        e.position.offset, e.position.next_offset = draw(_U64), draw(_U64)
        inner = draw(st.none() | _U32)
        if inner is not None:
            e.position.inner_index = inner
    if draw(st.booleans()):
        e.statement_raw.data = draw(st.binary(max_size=6))
        e.statement_raw.charset = draw(_TEXT)
    return e


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event=_events())
def test_generated_events_give_the_reference_bytes(event: pb.BinlogEvent) -> None:
    for json_values, include_defaults in FORMS:
        assert not _differences([event], json_values, include_defaults)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event=_events())
def test_generated_serialized_events_give_the_reference_bytes(event: pb.BinlogEvent) -> None:
    assert not _serialized_differences([event])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event=_events(), data=st.data())
def test_compiled_encoder_on_damaged_bytes_gives_the_reference_line_or_none(event: pb.BinlogEvent,
                                                                           data: st.DataObject) -> None:
    """Fuzz: the compiled encoder on truncated and altered bytes never reads outside them, and any line it
    writes is the reference line of what protobuf parses from the same bytes; otherwise None."""
    if not json_encoder.COMPILED:
        pytest.skip("the compiled core is not built (or is switched off)")
    body = bytearray(event.SerializeToString())
    if body and data.draw(st.booleans()):
        del body[data.draw(st.integers(0, len(body) - 1)):]
    for _ in range(data.draw(st.integers(0, 3))):
        if body:
            body[data.draw(st.integers(0, len(body) - 1))] = data.draw(st.integers(0, 255))
    line = json_encoder.compiled_line(bytes(body))
    if line is None:
        return
    parsed = pb.BinlogEvent.FromString(bytes(body))     # C wrote a line: protobuf must parse the bytes too
    assert line == encode_jsonl(parsed, reference=True)


def _all_field_paths(descriptor: object, prefix: str = "") -> Iterator[str]:
    for field in descriptor.fields:  # type: ignore[attr-defined]
        yield prefix + field.name


def test_generated_events_reach_every_event_field() -> None:
    """The strategy sets each field of BinlogEvent (a new field must be added to it, and to the encoder)."""
    set_by_strategy = {"utc_timestamp", "source", "server_uuid", "transaction_id", "query_index", "row_index",
                       "trace_info", "db", "table", "operation", "rows", "schema_changes", "position", "gtid",
                       "statement", "event_index", "last_in_statement", "server_id", "gtid_domain_id",
                       "statement_raw"}
    assert set(_all_field_paths(pb.BinlogEvent.DESCRIPTOR)) == set_by_strategy


# Each byte the compiled string writer treats apart (a control byte, '"', '\\', DEL, a multi-byte
# character), at each place of strings around its short path's limit (64 bytes) and its 8-byte steps.
_SPECIALS = ["\x00", "\x1f", "\n", '"', "\\", "\x7f", "é", "€", "😀"]
_LENGTHS = [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 66, 71, 72, 73, 130]


def _strings_with_a_special_everywhere() -> Iterator[str]:
    for n in _LENGTHS:
        yield "a" * n
        for special in _SPECIALS:
            for at in range(n):
                yield "a" * at + special + "a" * (n - at - 1)


def test_strings_are_escaped_as_the_reference_at_every_place() -> None:
    events = []
    for text in _strings_with_a_special_everywhere():
        event = pb.BinlogEvent(db=text, table=text[::-1], statement=text)
        event.rows.add().after.add(name=text, value=pb.Value(string_value=text))
        events.append(event)
    assert len(events) > 5000
    if json_encoder.COMPILED:       # the compiled writer takes them all (not left to Python)
        assert all(json_encoder.compiled_line(e.SerializeToString()) is not None for e in events)
    assert not _serialized_differences(events)
    for json_values, include_defaults in FORMS:
        assert not _differences(events, json_values, include_defaults)
