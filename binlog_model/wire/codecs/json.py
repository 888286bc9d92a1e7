"""Codec for JSON columns (MySQL 5.7+ binary JSON; MariaDB's JSON is LONGTEXT and never reaches here).

Strategy: a JSON column is a BLOB (meta = length-prefix size) holding one binary JSON document, decoded
by ``json_binary``. Partial updates (MySQL 8 PARTIAL_UPDATE_ROWS_EVENT) carry a diff list instead.
"""

from __future__ import annotations

from binlog_model.wire.codecs._bounds import Buffer, prefixed
from binlog_model.wire.json_binary import parse_json_binary, parse_json_diffs
from binlog_model.wire.values import JsonDiffs, JsonDocument

__all__ = ["decode_json", "decode_json_diffs"]


def decode_json(buf: Buffer, pos: int, meta: int) -> tuple[JsonDocument, int]:
    """JSON: a length prefix of ``meta`` bytes, then a binary JSON document."""
    start, end = prefixed(buf, pos, meta, "JSON")
    return JsonDocument(parse_json_binary(memoryview(buf)[start:end])), end


def decode_json_diffs(buf: Buffer, pos: int, meta: int) -> tuple[JsonDiffs, int]:
    """A partially updated JSON column: a length prefix of ``meta`` bytes, then the diff list."""
    start, end = prefixed(buf, pos, meta, "JSON diff")
    return parse_json_diffs(memoryview(buf)[start:end]), end
