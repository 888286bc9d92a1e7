"""The data source's row layout, one value and one row at a time: the reference the bulk builders are tested
against.

Strategy: ``value_json`` is the one reference for a model ``Value``'s JSON text, the canonical compact
proto3 JSON (``{"intValue":5}``) that protobuf's own ``json_format`` writes; ``event_rows`` gives the output
rows of one ``BinlogEvent`` as dicts keyed like ``ARROW_SCHEMA``. The data source does not use them per
value: the bulk builders make the same texts from the serialized events, with Arrow compute
(``arrow_batch.value_texts``) or in C (``_speedups.arrow_columns``); they call ``value_json`` for the rare
kinds and for bytes they cannot split, and tests/spark/test_value_json_paths.py compares each of them with
``value_json`` on every golden fixture, the shared corpus and hand-built edge values.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from google.protobuf import json_format

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.position import file_sequence

__all__ = ["OPERATIONS", "event_rows", "value_json"]

OPERATIONS = {v.number: v.name for v in pb.BinlogEvent.Operation.DESCRIPTOR.values}


def value_json(value: pb.Value) -> str:
    """The canonical proto3 JSON of one model ``Value``, compact: ``{"intValue":5}`` (64-bit integers as
    strings, zero-valued fields of a sub-message left out, text as ``json.dumps(ensure_ascii=False)``)."""
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
