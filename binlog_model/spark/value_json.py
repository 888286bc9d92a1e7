"""The data source's row layout, one value and one row at a time: the reference the bulk builder is tested
against.

Strategy: ``value_json`` writes the canonical proto3 JSON of one model ``Value`` (``{"intValue":5}``),
byte-identical to ``json_format`` (``slow_value_json``), and ``event_rows`` gives the output rows of one
``BinlogEvent`` as dicts keyed like ``ARROW_SCHEMA``. The data source itself does not use them per value:
``binlog_model.spark.arrow_batch`` builds the same columns in bulk from the serialized events; the tests
compare the two on every fixture.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from google.protobuf import json_format

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.position import file_sequence

__all__ = ["OPERATIONS", "event_rows", "slow_value_json", "value_json"]

OPERATIONS = {v.number: v.name for v in pb.BinlogEvent.Operation.DESCRIPTOR.values}

# Fast paths for every kind but the floating and rare ones, byte-identical to json_format (proto3 JSON omits
# zero-valued fields of a sub-message and writes 64-bit integers as strings); tests/spark/test_spark_units.py
# compares them with ``slow_value_json`` on every kind of the golden fixtures.
_DATETIME_FIELDS = ("year", "month", "day", "hour", "minute", "second", "micros")
_DATE_FIELDS = ("year", "month", "day")


def _fields_json(message: Any, names: tuple[str, ...]) -> str:
    return ",".join([f'"{name}":{n}' for name in names if (n := getattr(message, name))])


# What json.dumps(ensure_ascii=False) escapes in a string: quote, backslash, control characters.
_NEEDS_ESCAPE = re.compile(r'[\x00-\x1f\\"]')


def _dumps(text: str) -> str:
    # Most text needs no escaping: skip the encoder for it.
    return json.dumps(text, ensure_ascii=False) if _NEEDS_ESCAPE.search(text) else '"' + text + '"'


def _dumps_list(items: list[str]) -> str:
    return json.dumps(items, ensure_ascii=False, separators=(",", ":"))


_VALUE_TEXT: dict[str, Any] = {
    "int_value": lambda v: f'{{"intValue":{v.int_value}}}',
    "long_value": lambda v: f'{{"longValue":"{v.long_value}"}}',
    "uint64_value": lambda v: f'{{"uint64Value":"{v.uint64_value}"}}',
    "bit_value": lambda v: f'{{"bitValue":"{v.bit_value}"}}',
    "time_micros": lambda v: f'{{"timeMicros":"{v.time_micros}"}}',
    "timestamp_micros": lambda v: f'{{"timestampMicros":"{v.timestamp_micros}"}}',
    "string_value": lambda v: '{"stringValue":' + _dumps(v.string_value) + "}",
    "decimal_value": lambda v: '{"decimalValue":' + _dumps(v.decimal_value) + "}",
    "json_value": lambda v: '{"jsonValue":' + _dumps(v.json_value) + "}",
    "null_value": lambda v: '{"nullValue":null}',
    "datetime_value": lambda v: ('{"datetimeValue":{' + _fields_json(v.datetime_value, _DATETIME_FIELDS)
                                 + "}}"),
    "date_value": lambda v: '{"dateValue":{' + _fields_json(v.date_value, _DATE_FIELDS) + "}}",
    "set_value": lambda v: ('{"setValue":{"labels":' + _dumps_list(list(v.set_value.labels)) + "}}"
                            if v.set_value.labels else '{"setValue":{}}'),
    "bytes_value": lambda v: '{"bytesValue":"' + base64.b64encode(v.bytes_value).decode("ascii") + '"}',
}


def value_json(value: pb.Value) -> str:
    """The canonical proto3 JSON of one model ``Value``, compact: ``{"intValue":5}``."""
    fast = _VALUE_TEXT.get(value.WhichOneof("kind"))
    return fast(value) if fast is not None else slow_value_json(value)


def slow_value_json(value: pb.Value) -> str:
    """``value_json`` through ``json_format`` (every kind)."""
    return json.dumps(json_format.MessageToDict(value), separators=(",", ":"), ensure_ascii=False)


def _columns_map(columns: Sequence[pb.Column]) -> list[tuple[str, str]]:
    return [(c.name, value_json(c.value)) for c in columns]


def event_rows(event: pb.BinlogEvent, *, mode: str = "rows") -> Iterator[dict[str, Any]]:
    """The output rows of one BinlogEvent, as dicts keyed like ``ARROW_SCHEMA``."""
    pos = event.position
    inner = pos.inner_index if pos.HasField("inner_index") else None
    base: dict[str, Any] = {
        "source": event.source, "serverUuid": event.server_uuid, "transactionId": event.transaction_id,
        "queryIndex": event.query_index, "eventIndex": event.event_index,
        "lastInStatement": event.last_in_statement, "file": pos.file, "offset": pos.offset,
        "nextOffset": pos.next_offset, "innerIndex": inner,
        "utcTimestamp": event.utc_timestamp.seconds * 1_000_000 + event.utc_timestamp.nanos // 1000,
        "db": event.db, "table": event.table, "operation": OPERATIONS[event.operation], "gtid": event.gtid,
        "gtidDomainId": event.gtid_domain_id, "serverId": event.server_id,
        "statement": event.statement if event.HasField("statement") else None,
        "traceInfo": event.trace_info if event.HasField("trace_info") else None,
    }
    seq = file_sequence(pos.file)
    payload = event.SerializeToString()

    def key(row_index: int) -> dict[str, int]:
        return {"fileSeq": seq, "offset": pos.offset, "innerIndex": -1 if inner is None else inner,
                "eventIndex": event.event_index, "rowIndex": row_index}

    if mode == "events" or not event.rows:
        yield {**base, "rowIndex": event.row_index, "primaryKey": None, "before": None, "after": None,
               "orderKey": key(event.row_index), "event": payload}
        return
    for i, row in enumerate(event.rows):
        if i == 1:
            base["statement"] = None        # a multi-row statement's text is carried once, not per row
        yield {**base, "rowIndex": row.row_index, "primaryKey": _columns_map(row.primary_key),
               "before": _columns_map(row.before) if event.operation != pb.BinlogEvent.INSERT else None,
               "after": _columns_map(row.after) if event.operation != pb.BinlogEvent.DELETE else None,
               "orderKey": key(row.row_index), "event": payload if i == 0 else None}
