"""The task side of the ``mysql-binlog`` source: the reader options, the shipped schema history and the
decoding of one slice, shared by the batch source (``datasource``), the stream source (``streaming``) and
the typed job's tasks (``typed_write``).

Strategy: everything a task needs rides in its ``SlicePartition`` (the slice and the history as compressed
JSON, ``pack_history``) plus the parsed ``ReadOptions``, so an executor plans nothing: ``decode_slice``
runs the slice (``partitions.slice_source``, a byte range of one file as an event source) through the one
``Runner`` and a ``StatementAssembler`` built on that history, and ``read_slice`` turns the events into
Arrow record batches of ``arrow_batch.ARROW_SCHEMA``. A worker parses a history once (cached by digest).
This module imports none of the modules that plan or run jobs; they import it.
"""

from __future__ import annotations

import gc
import hashlib
import json
import sys
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import InputPartition

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.errors import ConfigError
from binlog_model.gtid import GtidSet
from binlog_model.position import EventPosition
from binlog_model.resolve.assembler import StatementAssembler
from binlog_model.resolve.compiled_rows import RawImages
from binlog_model.resolve.options import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS, ResolveOptions
from binlog_model.runs.runner import Runner
from binlog_model.spark.arrow_batch import ArrowBatch
from binlog_model.spark.partitions import Slice, slice_source
from binlog_model.wire.header import EventType
from schema_tracker.history import SchemaHistory

__all__ = ["ReadOptions", "SlicePartition", "decode_slice", "pack_history", "prepare_worker", "read_slice",
           "shipped_history"]

_BATCH_ROWS = 4096

_DEFAULT_RESOLVE = ResolveOptions()


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """The parsed reader options (all picklable)."""

    paths: tuple[str, ...]
    source: str = ""
    snapshot: str | None = None
    resolve: ResolveOptions = _DEFAULT_RESOLVE     # ResolveOptions.parse on the driver
    lenient_ddl: bool = False
    verify_checksum: bool = True
    mode: str = "rows"
    slice_bytes: int = 64 << 20
    min_slices: int = 1
    start: EventPosition | None = None
    stop: EventPosition | None = None
    skip_gtids: GtidSet | None = None
    plan_file: str | None = None

    @classmethod
    def parse(cls, options: dict[str, str]) -> ReadOptions:
        """Spark reader options (case-insensitive keys) → ``ReadOptions``; ``ConfigError`` on bad ones."""
        opts = {k.lower(): v for k, v in options.items()}
        raw = opts.get("paths") or opts.get("path")
        if not raw:
            raise ConfigError("mysql-binlog: give the binlog paths: .load('dir/or/glob') or "
                              ".option('paths', ...)")
        paths = tuple(json.loads(raw)) if raw.lstrip().startswith("[") else tuple(
            p for p in raw.split(",") if p)
        ddl = opts.get("ddl", "strict").lower()
        if ddl not in ("strict", "lenient"):
            raise ConfigError(f"mysql-binlog: ddl must be strict or lenient, not {ddl!r}")
        mode = opts.get("mode", "rows").lower()
        if mode not in ("rows", "events"):
            raise ConfigError(f"mysql-binlog: mode must be rows or events, not {mode!r}")
        include = [s.strip() for s in opts.get("alwaysinclude", "").split(",") if s.strip()]
        source = opts.get("source", "")
        # The same parse as the CLI's and iter_binlog_events': on the driver, so a bad value fails the read
        # before any task starts.
        resolve = ResolveOptions.parse(
            source=source, always_include=include, image=opts.get("image", "changed"),
            statement_text=opts.get("statementtext", "all"), max_rows=_int(opts, "maxrows", DEFAULT_MAX_ROWS),
            max_bytes=_int(opts, "maxbytes", DEFAULT_MAX_BYTES),
            allow_incomplete_tail=_bool(opts, "allowincompletetail", False),
            tables=[opts.get("tables", "")], exclude_tables=[opts.get("excludetables", "")])
        return cls(
            paths=paths, source=source, snapshot=opts.get("snapshot") or None, resolve=resolve,
            lenient_ddl=ddl == "lenient", verify_checksum=_bool(opts, "verifychecksum", True), mode=mode,
            slice_bytes=_int(opts, "slicebytes", 64 << 20), min_slices=_int(opts, "minslices", 1),
            start=_position(opts.get("startposition")), stop=_position(opts.get("stopposition")),
            skip_gtids=GtidSet.parse(opts["gtidset"]) if opts.get("gtidset") else None,
            plan_file=opts.get("planfile") or None,
        )

    def assembler_options(self) -> ResolveOptions:
        return self.resolve


def _int(opts: dict[str, str], key: str, default: int) -> int:
    try:
        value = int(opts.get(key, default))
    except ValueError as err:
        raise ConfigError(f"mysql-binlog: option {key} must be an integer, got {opts[key]!r}") from err
    if value < 1:
        raise ConfigError(f"mysql-binlog: option {key} must be positive, got {value}")
    return value


def _bool(opts: dict[str, str], key: str, default: bool) -> bool:
    value = opts.get(key)
    if value is None:
        return default
    if value.lower() not in ("true", "false"):
        raise ConfigError(f"mysql-binlog: option {key} must be true or false, got {value!r}")
    return value.lower() == "true"


def _position(text: str | None) -> EventPosition | None:
    if not text:
        return None
    name, sep, offset = text.rpartition(":")
    if not sep or not offset.isdigit():
        raise ConfigError(f"mysql-binlog: a position is FILE:OFFSET (mysql-bin.000003:4), got {text!r}")
    return EventPosition(name, int(offset))


def _in_range(event: pb.BinlogEvent, options: ReadOptions) -> bool:
    if options.skip_gtids is not None and options.skip_gtids.contains(event):
        return False
    if options.start is None and options.stop is None:
        return True
    here = EventPosition(event.position.file, event.position.offset)
    if options.start is not None and here < options.start:
        return False
    return options.stop is None or here < options.stop


def read_slice(piece: Slice, history: dict[str, Any] | bytes, options: ReadOptions
               ) -> Iterator[pa.RecordBatch]:
    """Decode one slice with the shipped history (its JSON document, or ``pack_history`` bytes); yield
    Arrow batches of ``ARROW_SCHEMA``."""
    # Without a range to check, the events stay bytes: the compiled row builder's, never parsed in Python.
    everything = options.start is None and options.stop is None and options.skip_gtids is None
    events_mode = options.mode == "events"
    batch = ArrowBatch(events_mode)
    for event in decode_slice(piece, history, options, serialized=everything):
        if everything:
            batch.add(event)
        elif _in_range(event, options):
            batch.add(event.SerializeToString())
        else:
            continue
        if batch.size >= _BATCH_ROWS:
            yield batch.build()
            batch = ArrowBatch(events_mode)
    if batch.size:
        yield batch.build()


# The events that carry only a statement's text (MySQL's ROWS_QUERY, MariaDB's ANNOTATE_ROWS): its
# ``statement`` and ``trace_info`` fields, which no typed table holds.
STATEMENT_TEXT_TYPES: frozenset[int] = frozenset({EventType.ROWS_QUERY_LOG_EVENT,
                                                   EventType.ANNOTATE_ROWS_EVENT})


def decode_slice(piece: Slice, history: dict[str, Any] | bytes, options: ReadOptions, *,
                 serialized: bool = True, without_text: bool = False, raw: RawImages | None = None
                 ) -> Iterator[Any]:
    """The assembled ``BinlogEvent``s of one slice (serialized bytes, or messages), resolved with the
    shipped history: what every task of the source and of the typed job decodes. ``without_text``: the
    statement-text events are passed over unparsed (the typed job: its tables hold neither ``statement``
    nor ``trace_info``, and a statement still ends at its last rows event's STMT_END flag), so the events
    lack those two fields and are otherwise the same. ``raw``: the typed job's raw row images
    (``compiled_rows.RawImages``)."""
    assembler = StatementAssembler(_history_for(history, options.lenient_ddl), options.assembler_options(),
                                   serialized=serialized, raw=raw)
    source = slice_source(piece, verify_checksum=options.verify_checksum,
                          drop_types=STATEMENT_TEXT_TYPES if without_text else frozenset())
    return Runner(source, assembler).events()


def pack_history(doc: dict[str, Any]) -> bytes:
    """A history document as it rides in every partition: compact JSON, zlib-compressed (a history repeats
    itself a lot: 4.6 MB of JSON for 300 tables and 600 DDL statements packs into 44 kB)."""
    return zlib.compress(json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8"), 6)


# Executor-side: the parsed history of the last few reads, by digest of the packed bytes. Parsing replays
# every change (0.2 s for the history above), once per slice before; now once per Python worker.
_PARSED: OrderedDict[bytes, SchemaHistory] = OrderedDict()
_PARSED_MAX = 4


def shipped_history(shipped: bytes) -> SchemaHistory:
    """The history of ``pack_history`` bytes, parsed once per worker (cached by digest): shared, so the
    caller must not change it (``_history_for`` gives each slice its own copy)."""
    digest = hashlib.sha256(shipped).digest()
    cached = _PARSED.get(digest)
    if cached is None:
        try:
            doc = json.loads(zlib.decompress(shipped))
        except (zlib.error, ValueError) as err:
            raise ConfigError(f"mysql-binlog: the schema history shipped with the partition is "
                              f"corrupt: {err}") from err
        cached = SchemaHistory.from_json(doc)
        _PARSED[digest] = cached
        while len(_PARSED) > _PARSED_MAX:
            _PARSED.popitem(last=False)
    else:
        _PARSED.move_to_end(digest)
    return cached


def _history_for(shipped: dict[str, Any] | bytes, lenient: bool) -> SchemaHistory:
    if isinstance(shipped, dict):
        history = SchemaHistory.from_json(shipped)
    else:
        history = shipped_history(shipped).copy()   # the assembler may record into it; slices must not
    history.lenient = lenient                        # see each other's
    return history


@dataclass(frozen=True)
class SlicePartition(InputPartition):
    """One task of the source: a slice and the history it decodes with."""

    piece: Slice
    history: bytes      # pack_history of the history document


_WORKER_READY = False


def prepare_worker() -> None:
    """Once per Python worker: say in the worker's log (an executor's stderr) what runs differently from a
    full install, e.g. the pure-Python protobuf of a ``spark-pack`` zip; and freeze the worker's objects
    so far out of the cyclic garbage collector. A reused worker runs a full ``gc.collect()`` after every
    task (pyspark's daemon does), which walked every module, pyarrow and protobuf object each time: 40% of
    the worker's CPU on a read of 42 small slices. Frozen objects are still freed by reference counting;
    only cycles among them would stay, and they are the process's long-lived state."""
    global _WORKER_READY
    if _WORKER_READY:
        return
    _WORKER_READY = True
    from binlog_model.spark.pack import runtime_notes

    for note in runtime_notes():
        print(f"binlog-model: {note}", file=sys.stderr, flush=True)
    gc.freeze()
