"""Sinks: where resolved ``BinlogEvent`` s go.

- ``jsonl.JsonlSink``: JSON lines (canonical proto3 JSON), UTF-8.
- ``delimited.DelimitedSink``: length-delimited protobuf records; also the framing and its reader
  (``iter_delimited``), and ``write_serialized`` for bytes a compiled builder already serialized.
- ``parquet``: the per-table Parquet layout the Spark jobs write (``DIR/db=<db>/table=<table>/``). The typed
  writer of those tables (``spark.typed_write``) is not an event sink: a table's columns and final name come
  from the schema history of the whole input (``spark.typed.table_lineages``, from the driver's DDL pre-pass)
  before its first row is written, while a sink behind a runner knows the history only up to the current
  event; and a Parquet file commits whole (its footer), by rename, not by ``sync`` and a committed length.

- ``delta.DeltaReplica``: ``apply``'s current-state Delta tables (one per source table, exactly once by
  transaction version). Fed by ``replica.writer.ReplicaWriter``, which is not an event sink either: a sink
  appends records and a commit makes a byte length durable, while a replica applies each change by key
  under the schema in force at its event, and commits per table with a transaction version
  (``replica.writer.ReplicaWriter`` is the runner's side of it).

``FORMATS`` is the one list of event sinks by ``--format`` name (``register_sink`` adds one); the command
line's choices, the incremental runs' file suffixes and the choice between messages and serialized bytes
all come from it. ``open_sink(fmt, path)`` opens the sink of a format. Every event sink has the same
interface (``base.EventSink``): ``write(event)`` (a message, or its serialized bytes),
``write_all(events) -> count``, ``flush``/``sync``/``close``, and ``events``/``bytes_written`` counters.
"""

from __future__ import annotations

import os
from typing import IO

from binlog_model.errors import ConfigError
from binlog_model.sinks.base import EventSink
from binlog_model.sinks.delimited import DelimitedSink
from binlog_model.sinks.jsonl import JsonlSink

__all__ = ["FORMATS", "DelimitedSink", "EventSink", "JsonlSink", "open_sink", "register_sink", "sink_class"]

# --format name -> sink class: the one list of formats
FORMATS: dict[str, type[EventSink]] = {}


def register_sink(cls: type[EventSink]) -> type[EventSink]:
    """Add an event sink class to ``FORMATS`` under its ``format_name`` (usable as a class decorator)."""
    if not cls.format_name or not cls.suffix:
        raise ConfigError(f"{cls.__name__} names no format_name and suffix")
    FORMATS[cls.format_name] = cls
    return cls


for _cls in (JsonlSink, DelimitedSink):
    register_sink(_cls)


def sink_class(fmt: str) -> type[EventSink]:
    """The sink class of ``fmt``; ``ConfigError`` naming the formats there are for any other name."""
    try:
        return FORMATS[fmt]
    except KeyError:
        raise ConfigError(f"unknown output format {fmt!r}: expected one of {', '.join(FORMATS)}") from None


def open_sink(fmt: str, target: str | os.PathLike[str] | IO[bytes], *, json_defaults: bool = False,
              json_values: str = "typed", zstd_level: int | None = None) -> EventSink:
    """The sink for ``fmt`` (a ``FORMATS`` name) writing to ``target``: a path (a new file the sink owns and
    closes) or a binary stream (left open). ``json_defaults`` and ``json_values`` (``typed``/``plain``)
    apply to text formats (JSON lines). ``zstd_level``: compress the output as zstd frames at that level
    (``io.compression.ZstdFrameWriter``: a frame ends at each ``flush``/``sync``); the sink's
    ``bytes_written`` then counts uncompressed bytes."""
    cls = sink_class(fmt)
    if zstd_level is not None:
        from binlog_model.io.compression import ZstdFrameWriter, create_zstd

        if isinstance(target, str | os.PathLike):
            stream = create_zstd(target, zstd_level)
        else:
            stream = ZstdFrameWriter(target, level=zstd_level, owns_raw=False)
        return cls(stream, owns_stream=True, include_defaults=json_defaults,  # type: ignore[arg-type]
                   json_values=json_values)
    if isinstance(target, str | os.PathLike):
        return cls.open(target, include_defaults=json_defaults, json_values=json_values)
    return cls(target, include_defaults=json_defaults, json_values=json_values)
