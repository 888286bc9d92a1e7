"""JSON Lines of ``BinlogEvent`` s: one canonical proto3-JSON object per line, UTF-8.

Strategy: each line is ``binlog_model.messages.to_json`` (compact, non-ASCII text as is) plus ``\\n``,
written as UTF-8 bytes so the byte count is exact (incremental runs commit output by length).
"""

from __future__ import annotations

from typing import IO

from google.protobuf.message import Message

from binlog_model.messages import to_json
from binlog_model.sinks.base import EventSink

__all__ = ["JsonlSink", "encode_jsonl"]


def encode_jsonl(event: Message, *, include_defaults: bool = False) -> bytes:
    """One JSON line (with its newline) of ``event`` as UTF-8 bytes."""
    return (to_json(event, include_defaults=include_defaults) + "\n").encode("utf-8")


class JsonlSink(EventSink):
    """``BinlogEvent`` s as JSON lines on a binary stream. ``include_defaults`` also writes fields at their
    default value (0, false, empty)."""

    format_name = "jsonl"
    suffix = "jsonl"

    def __init__(self, stream: IO[bytes], *, owns_stream: bool = False, include_defaults: bool = False
                 ) -> None:
        super().__init__(stream, owns_stream=owns_stream)
        self.include_defaults = include_defaults

    def encode(self, event: Message) -> bytes:
        return encode_jsonl(event, include_defaults=self.include_defaults)
