"""binlog_model.messages and sinks.delimited: the spec's fields, proto3 JSON/dict round trips and
length-delimited streams.

The sample event is the spec's first example (INSERT into ppc.campaigns, GTID ...:8) written out by hand
as the spec lists it, plus one value of every kind and every schema change, so a round trip that loses any
field fails. Corrupt streams are hand-made cuts and flips of a real encoding, named as such.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from google.protobuf.internal.encoder import _VarintBytes  # independent varint encoder

from binlog_model.errors import DecodeError, TruncatedEventError
from binlog_model.messages import (
    BinlogEvent,
    Column,
    ColumnDefinition,
    CreateTable,
    Date,
    DateTime,
    Geometry,
    JsonDiff,
    JsonDiffOperation,
    RawText,
    Row,
    SchemaChange,
    SetValue,
    Value,
    Vector,
    from_dict,
    from_json,
    to_dict,
    to_display_dict,
    to_json,
)
from binlog_model.messages import ColumnType as CT
from binlog_model.sinks.delimited import (
    encode_delimited,
    iter_delimited,
    parse_delimited,
    read_delimited,
    write_delimited,
)

# The names the spec lists for a BinlogEvent and a Row (lowerCamelCase in JSON).
SPEC_EVENT_FIELDS = {"utcTimestamp", "source", "serverUuid", "transactionId", "queryIndex", "rowIndex",
                     "traceInfo", "db", "table", "operation", "rows", "schemaChanges"}
SPEC_ROW_FIELDS = {"rowIndex", "primaryKey", "before", "after"}


def spec_insert_event() -> BinlogEvent:
    """The spec's INSERT example, as its listing gives it, plus the audit fields."""
    event = BinlogEvent(
        source="ppc:1", server_uuid="1d3a69ea-6308-11e8-b040-0242ac110002", transaction_id=8, query_index=0,
        row_index=0, db="ppc", table="campaigns", operation=BinlogEvent.INSERT,
        gtid="1d3a69ea-6308-11e8-b040-0242ac110002:8", server_id=12345, last_in_statement=True,
        statement="INSERT INTO campaigns (cid, name, currency, geo, shows, clicks) \nVALUES ...")
    event.utc_timestamp.FromSeconds(1527574930)
    event.position.file, event.position.offset, event.position.next_offset = "binlog.000001", 1124, 1211
    for i, (cid, name, cur, geo, shows, clicks) in enumerate(
            [(1, "one", "RUB", "", 0, 0), (2, "two", "USD", "10000,-123", 123, 456)]):
        row = event.rows.add(row_index=i)
        row.primary_key.add(name="cid", value=Value(long_value=cid))
        for col, val in [("cid", Value(long_value=cid)), ("name", Value(string_value=name)),
                         ("currency", Value(string_value=cur)), ("geo", Value(string_value=geo)),
                         ("shows", Value(int_value=shows)), ("clicks", Value(int_value=clicks))]:
            row.after.add(name=col, value=val)
    return event


def every_kind_event() -> BinlogEvent:
    """One value of every Value kind (hand-written), and every schema change."""
    values = [
        Value(null_value=0), Value(int_value=-(2**31)), Value(long_value=-(2**63)),
        Value(string_value="😀"), Value(bytes_value=b"\x00\xff"),
        Value(decimal_value="-0.000000000000000001"),
        Value(double_value=1e308), Value(float_value=0.5),
        Value(datetime_value=DateTime(year=0, month=0, day=0, micros=1)), Value(date_value=Date()),
        Value(timestamp_micros=1527574930_000001), Value(time_micros=-3020399000000),
        Value(uint64_value=2**64 - 1), Value(json_value='{"a": [1, 2]}'),
        Value(set_value=SetValue(labels=["a", "c"])), Value(set_value=SetValue()), Value(bit_value=2**64 - 1),
        Value(geometry_value=Geometry(srid=4326, wkb=b"\x01\x01")),
        Value(vector_value=Vector(values=[1.0, -2.5])),
        Value(raw_text_value=RawText(data=b"\xff", charset="utf8mb4")),
        Value(json_diff=JsonDiff(operations=[
            JsonDiffOperation(op=JsonDiffOperation.REPLACE, path='$."ü"[last]', value='{"a": 1.50}'),
            JsonDiffOperation(op=JsonDiffOperation.REMOVE, path="$.b")])),
    ]
    event = BinlogEvent(operation=BinlogEvent.UPDATE, trace_info="reqid:1:web:save", gtid="0-1-5",
                        gtid_domain_id=0, transaction_id=5, event_index=3, row_index=3000)
    row = Row(row_index=3000, before=[Column(name=f"c{i}", value=v) for i, v in enumerate(values)])
    row.after.extend(Column(name=f"c{i}", value=v) for i, v in enumerate(values))
    row.after[1].invisible = True
    event.rows.append(row)
    event.position.inner_index = 0
    changes = {
        "create_table": CreateTable(columns=[ColumnDefinition(column_name="foo", column_type=CT.INTEGER,
                                                              nullable=False, mysql_type="int(11)")],
                                    primary_key=["foo"]),
    }
    event.schema_changes.append(SchemaChange(**changes))
    for name in ("create_or_modify_column", "rename_column", "drop_column", "drop_table", "rename_table",
                 "truncate_table", "primary_key_changed", "table_charset_changed", "create_database",
                 "alter_database", "drop_database", "skipped_statement"):
        change = SchemaChange()
        getattr(change, name).SetInParent()
        event.schema_changes.append(change)
    return event


def test_the_model_has_every_field_the_spec_names() -> None:
    assert {f.json_name for f in BinlogEvent.DESCRIPTOR.fields} >= SPEC_EVENT_FIELDS
    assert {f.json_name for f in Row.DESCRIPTOR.fields} >= SPEC_ROW_FIELDS
    changes = {f.name for f in SchemaChange.DESCRIPTOR.oneofs_by_name["change"].fields}
    assert changes >= {"create_table", "create_or_modify_column", "rename_column", "drop_column",
                       "drop_table"}
    assert [v.name for v in BinlogEvent.Operation.DESCRIPTOR.values][1:] == [
        "INSERT", "UPDATE", "DELETE", "SCHEMA"]
    assert {"INTEGER", "LONG", "STRING"} <= set(CT.keys())


def test_json_uses_the_spec_names_and_round_trips() -> None:
    event = spec_insert_event()
    text = to_json(event)
    assert "\n" not in text
    data = json.loads(text)
    assert data["utcTimestamp"] == "2018-05-29T06:22:10Z"
    assert data["serverUuid"] == "1d3a69ea-6308-11e8-b040-0242ac110002"
    assert data["transactionId"] == "8"  # proto3 JSON: 64-bit integers are strings
    assert data["operation"] == "INSERT"
    assert [c["name"] for c in data["rows"][1]["after"]] == [
        "cid", "name", "currency", "geo", "shows", "clicks"]
    assert data["rows"][1]["after"][0]["value"] == {"longValue": "2"}
    assert data["rows"][1]["after"][4]["value"] == {"intValue": 123}
    assert from_json(text) == event
    assert from_json(to_json(event, indent=2)) == event


def test_defaults_are_omitted_unless_asked() -> None:
    event = spec_insert_event()
    assert "queryIndex" not in to_dict(event)
    full = to_dict(event, include_defaults=True)
    assert full["queryIndex"] == 0 and full["rows"][0]["before"] == []
    assert from_dict(full) == event


def test_every_kind_round_trips_through_json_dict_and_bytes() -> None:
    event = every_kind_event()
    assert from_json(to_json(event)) == event
    assert from_dict(to_dict(event)) == event
    assert BinlogEvent.FromString(event.SerializeToString()) == event
    kinds = [c.value.WhichOneof("kind") for c in from_json(to_json(event)).rows[0].after]
    assert len(set(kinds)) == len(Value.DESCRIPTOR.oneofs_by_name["kind"].fields)
    # NULL survives JSON as a kind, distinct from an absent column.
    assert json.loads(to_json(event))["rows"][0]["after"][0] == {"name": "c0", "value": {"nullValue": None}}
    assert kinds[0] == "null_value"
    # An empty SET and a zero date are still values of their kind.
    assert kinds[15] == "set_value" and kinds[9] == "date_value"


@pytest.mark.parametrize("text", ["not json", "[1, 2]", '{"rows": 5}', '{"noSuchField": 1}',
                                  '{"operation": "MERGE"}', b"\xff\xfe"])
def test_bad_json_is_a_decode_error(text: str | bytes) -> None:
    with pytest.raises(DecodeError):
        from_json(text)


def test_display_dict_is_close_to_the_spec_listing() -> None:
    view = to_display_dict(spec_insert_event())
    assert view["utcTimestamp"] == "2018-05-29 06:22:10"
    assert view["transactionId"] == 8
    assert view["rows"][0] == {"rowIndex": 0, "primaryKey": {"cid": 1}, "before": {},
                               "after": {"cid": 1, "name": "one", "currency": "RUB", "geo": "", "shows": 0,
                                         "clicks": 0}}
    json.dumps(to_display_dict(every_kind_event()))  # every kind renders as plain JSON


# --- length-delimited streams ----------------------------------------------------------------------------


def test_delimited_round_trip_through_a_file(tmp_path: Path) -> None:
    events = [spec_insert_event(), every_kind_event(), BinlogEvent()]
    path = tmp_path / "events.pb"
    with path.open("wb") as fp:
        written = write_delimited(fp, events[0])
        written += write_delimited(fp, events[1:])
    assert written == path.stat().st_size
    with path.open("rb") as fp:
        assert list(iter_delimited(fp, file=str(path))) == events
    with path.open("rb") as fp:
        assert list(read_delimited(fp)) == events
    assert parse_delimited(path.read_bytes()) == events


def test_delimited_framing_is_the_standard_varint_prefix() -> None:
    # Java's writeDelimitedTo: varint32 length, then the message.
    event = every_kind_event()
    body = event.SerializeToString()
    assert len(body) > 127  # a multi-byte varint
    assert encode_delimited(event) == _VarintBytes(len(body)) + body


class _CountingReader(io.BytesIO):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.reads = 0

    def read(self, n: int | None = -1) -> bytes:
        self.reads += 1
        return super().read(n)


def test_iteration_is_lazy() -> None:
    stream = _CountingReader(b"".join(encode_delimited(spec_insert_event()) for _ in range(50)))
    it = iter_delimited(stream)
    next(it)
    assert stream.tell() < len(stream.getvalue()) // 10
    assert sum(1 for _ in it) == 49


def test_every_truncation_is_a_truncated_event_error() -> None:
    # Hand-made corruption: every proper prefix of a two-record stream that does not end on a record boundary.
    first, second = encode_delimited(spec_insert_event()), encode_delimited(every_kind_event())
    data = first + second
    for cut in range(1, len(data)):
        if cut == len(first):
            assert len(parse_delimited(data[:cut])) == 1
            continue
        with pytest.raises(TruncatedEventError) as info:
            parse_delimited(data[:cut], file="cut.pb")
        assert info.value.file == "cut.pb"
        assert info.value.offset == (0 if cut < len(first) else len(first))


@pytest.mark.parametrize(("data", "message"), [
    (b"\xff" * 11, "longer than 10 bytes"),
    (_VarintBytes(1 << 40) + b"x", "exceeds the protobuf limit"),
    (b"\x03\xff\xff\xff", "not a BinlogEvent"),  # hand-made: a field tag with an invalid wire type
])
def test_garbage_is_a_decode_error(data: bytes, message: str) -> None:
    with pytest.raises(DecodeError, match=message) as info:
        parse_delimited(data)
    assert not isinstance(info.value, TruncatedEventError)
    assert info.value.offset == 0


def test_a_huge_length_prefix_does_not_allocate_it() -> None:
    # Hand-made: a 1 GiB length with 10 bytes behind it ends as truncated, after reading only what exists.
    stream = _CountingReader(_VarintBytes(1 << 30) + b"0123456789")
    with pytest.raises(TruncatedEventError, match="10 of 1073741824"):
        list(iter_delimited(stream))
    assert stream.reads < 10
