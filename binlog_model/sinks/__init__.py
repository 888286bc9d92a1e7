"""Sinks: where resolved ``BinlogEvent`` s go.

- ``jsonl.JsonlSink``: JSON lines (canonical proto3 JSON), UTF-8.
- ``delimited.DelimitedSink``: length-delimited protobuf records; also the framing and its reader
  (``iter_delimited``), and ``write_serialized`` for bytes a compiled builder already serialized.
- ``parquet``: the per-table Parquet layout the Spark jobs write (``DIR/db=<db>/table=<table>/``).

``open_sink(fmt, path)`` picks the event sink of a ``--format`` name. Every event sink has the same
interface (``base.EventSink``): ``write(event)``, ``write_all(events) -> count``,
``flush``/``sync``/``close``, and ``events``/``bytes_written`` counters.
"""

from __future__ import annotations

import os
from typing import IO

from binlog_model.errors import ConfigError
from binlog_model.sinks.base import EventSink
from binlog_model.sinks.delimited import DelimitedSink
from binlog_model.sinks.jsonl import JsonlSink

__all__ = ["FORMATS", "DelimitedSink", "EventSink", "JsonlSink", "open_sink"]

# --format name -> sink class
FORMATS: dict[str, type[EventSink]] = {"jsonl": JsonlSink, "proto": DelimitedSink}


def open_sink(fmt: str, target: str | os.PathLike[str] | IO[bytes], *, json_defaults: bool = False
              ) -> EventSink:
    """The sink for ``fmt`` (``"jsonl"`` or ``"proto"``) writing to ``target``: a path (a new file the sink
    owns and closes) or a binary stream (left open). ``json_defaults`` applies to JSON lines."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown output format {fmt!r}: expected one of {', '.join(FORMATS)}")
    options = {"include_defaults": json_defaults} if fmt == "jsonl" else {}
    if isinstance(target, str | os.PathLike):
        return FORMATS[fmt].open(target, **options)
    return FORMATS[fmt](target, **options)
