"""The ``mysql-binlog`` Spark Python Data Source: binlog files → one row per row change.

Strategy: ``partitions()`` runs on the driver: it expands the paths, runs the cheap DDL pre-pass on every
file in parallel threads (``partitions.scan_files``), replays the DDL in binlog order into one
``SchemaHistory`` and cuts the files into slices at transaction starts. Each ``InputPartition`` carries
its slice and the history as compressed JSON (parsed once per Python worker, cached by digest), so
``read()`` on an executor needs nothing else: it runs its slice (``partitions.slice_source``, a byte range
of the file as an event source) through the one ``Runner`` and a ``StatementAssembler`` built on that
history (DDL already recorded at a position is reused, so every row resolves with the schema in force at
its position) and yields Arrow record batches, built in bulk from the serialized events (``arrow_batch``:
no Python object per row or value).

Row layout (see docs/spark.md): the BinlogEvent fields, then ``primaryKey``/``before``/``after`` as
``map<string,string>`` whose values are the canonical proto3 JSON of the model ``Value`` (``{"intValue":5}``,
``{"uint64Value":"18446744073709551615"}``, ``{"nullValue":null}``: lossless, kind-tagged), an
``orderKey`` struct that totally orders the output, and ``event``: the serialized ``BinlogEvent`` on the
first row of each event (null on the others; ``statement`` likewise, so a 10,000-row INSERT's text is not
repeated 10,000 times). A SCHEMA event (or any event without rows) gives one row
with null maps. ``mode=events`` gives one row per BinlogEvent instead (maps null, ``event`` always set).
"""

from __future__ import annotations

import base64
import gc
import hashlib
import json
import os
import sys
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.errors import ConfigError
from binlog_model.gtid import GtidSet
from binlog_model.io.documents import read_json, write_text
from binlog_model.io.snapshots import load_snapshot
from binlog_model.position import BinlogPosition, file_sequence
from binlog_model.resolve.assembler import StatementAssembler
from binlog_model.resolve.options import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS, ResolveOptions
from binlog_model.runs.runner import Runner
from binlog_model.spark.arrow_batch import ARROW_SCHEMA, ArrowBatch
from binlog_model.spark.partitions import (
    FileScan,
    Slice,
    build_history,
    expand_paths,
    plan_slices,
    scan_files,
    slice_source,
)
from binlog_model.spark.value_json import event_rows, value_json
from schema_tracker.history import SchemaHistory

__all__ = ["ARROW_SCHEMA", "SCHEMA_DDL", "BinlogDataSource", "GtidSet", "ReadOptions", "decode_slice",
           "event_rows", "load_plan", "pack_history", "plan", "prepare_worker", "read_slice", "save_plan",
           "shipped_history", "value_json"]

# The row schema is stated once, as Arrow (``arrow_batch.ARROW_SCHEMA``, what the readers build); Spark's
# DDL of it is derived, with every name quoted (``table`` is a keyword).
SCHEMA_DDL = ", ".join(f"`{field.name}` {field.dataType.simpleString()}"
                       for field in from_arrow_schema(ARROW_SCHEMA).fields)

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
    start: BinlogPosition | None = None
    stop: BinlogPosition | None = None
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
            allow_incomplete_tail=_bool(opts, "allowincompletetail", False))
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


def _position(text: str | None) -> BinlogPosition | None:
    if not text:
        return None
    name, sep, offset = text.rpartition(":")
    if not sep or not offset.isdigit():
        raise ConfigError(f"mysql-binlog: a position is FILE:OFFSET (mysql-bin.000003:4), got {text!r}")
    return BinlogPosition(name, int(offset))


def _in_range(event: pb.BinlogEvent, options: ReadOptions) -> bool:
    if options.skip_gtids is not None and options.skip_gtids.contains(event):
        return False
    if options.start is None and options.stop is None:
        return True
    here = BinlogPosition(event.position.file, event.position.offset)
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


def decode_slice(piece: Slice, history: dict[str, Any] | bytes, options: ReadOptions, *,
                 serialized: bool = True) -> Iterator[Any]:
    """The assembled ``BinlogEvent``s of one slice (serialized bytes, or messages), resolved with the
    shipped history: what every task of the source and of the typed job decodes."""
    assembler = StatementAssembler(_history_for(history, options.lenient_ddl), options.assembler_options(),
                                   serialized=serialized)
    return Runner(slice_source(piece, verify_checksum=options.verify_checksum), assembler).events()


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
class _Partition(InputPartition):
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


class BinlogReader(DataSourceReader):
    """Plans slices on the driver; decodes one slice per task."""

    def __init__(self, options: ReadOptions) -> None:
        self.options = options

    def partitions(self) -> Sequence[InputPartition]:
        options = self.options
        files = [str(f) for f in expand_paths(options.paths)]
        if options.start is not None:
            files = [f for f in files if file_sequence(f) >= file_sequence(options.start.file)]
        if options.stop is not None:
            files = [f for f in files if file_sequence(f) <= file_sequence(options.stop.file)]
        if options.plan_file is not None:
            # Planned already (run_resolve): the pre-pass over every byte is not run a second time.
            doc, slices = load_plan(options.plan_file, files)
        else:
            scans = scan_files(files, verify_checksum=options.verify_checksum, row_transactions=False)
            start = load_snapshot(options.snapshot, lenient=options.lenient_ddl)
            doc = build_history(scans, history=start, options=options.assembler_options()).to_json()
            slices = plan_slices(scans, slice_bytes=options.slice_bytes, min_slices=options.min_slices)
        packed = pack_history(doc)
        return [_Partition(piece, packed) for piece in slices]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, _Partition)
        prepare_worker()
        yield from read_slice(partition.piece, partition.history, self.options)


class BinlogDataSource(DataSource):
    """``spark.read.format("mysql-binlog")``: options in docs/spark.md."""

    @classmethod
    def name(cls) -> str:
        return "mysql-binlog"

    def schema(self) -> str:
        if self.options.get("_output") == "tasks":     # resolve --stream's plan rows (spark.stream_resolve)
            from binlog_model.spark.stream_resolve import TASKS_DDL

            return TASKS_DDL
        return SCHEMA_DDL

    def reader(self, schema: StructType) -> DataSourceReader:
        return BinlogReader(ReadOptions.parse(dict(self.options)))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """``spark.readStream.format("mysql-binlog")``: ``binlog_model.spark.streaming``."""
        from binlog_model.spark.streaming import BinlogStreamReader

        return BinlogStreamReader(dict(self.options))


def plan(paths: Sequence[str | os.PathLike[str]], *, scan: Callable[..., list[FileScan]] | None = None,
         **options: str) -> tuple[SchemaHistory, list[Slice]]:
    """The driver's planning (for the job, tests and tools): history and slices. ``scan``: how the files'
    pre-pass runs (``scan_files``' signature; default: threads on the driver)."""
    opts = ReadOptions.parse({"paths": json.dumps([os.fspath(p) for p in paths]), **options})
    files = [str(f) for f in expand_paths(opts.paths)]
    # Only the history is built from the scans' events: transactions of rows only are left out of them.
    scans = (scan or scan_files)(files, verify_checksum=opts.verify_checksum, row_transactions=False)
    history = build_history(scans, history=load_snapshot(opts.snapshot, lenient=opts.lenient_ddl),
                            options=opts.assembler_options())
    return history, plan_slices(scans, slice_bytes=opts.slice_bytes, min_slices=opts.min_slices)


_PLAN_FORMAT = "binlog-model-spark-plan"


def save_plan(path: str | os.PathLike[str], files: Sequence[str | os.PathLike[str]], history: SchemaHistory,
              slices: Sequence[Slice]) -> None:
    """Write a driver's plan (``plan``'s result for ``files``) for the ``planFile`` reader option."""
    doc = {"format": _PLAN_FORMAT, "files": [os.fspath(f) for f in files], "history": history.to_json(),
           "slices": [{"path": s.path, "file_index": s.file_index, "start": s.start, "end": s.end,
                       "format_description": None if s.format_description is None
                       else base64.b64encode(s.format_description).decode("ascii")} for s in slices]}
    write_text(path, json.dumps(doc))


def load_plan(path: str, files: Sequence[str]) -> tuple[dict[str, Any], list[Slice]]:
    """The history document and slices saved by ``save_plan``; ``ConfigError`` when the file is not a plan
    or was made for other files than ``files`` (the reader's, in binlog order)."""
    try:
        doc = read_json(path)
    except (OSError, ValueError) as err:
        raise ConfigError(f"mysql-binlog: cannot read planFile {path!r}: {err}") from err
    if not isinstance(doc, dict) or doc.get("format") != _PLAN_FORMAT:
        raise ConfigError(f"mysql-binlog: planFile {path!r} is not a plan written by save_plan")
    if doc["files"] != list(files):
        raise ConfigError(f"mysql-binlog: planFile {path!r} was planned for other files "
                          f"({len(doc['files'])} files, this read has {len(files)})")
    slices = [Slice(s["path"], s["file_index"], s["start"], s["end"],
                    None if s["format_description"] is None else base64.b64decode(s["format_description"]))
              for s in doc["slices"]]
    return doc["history"], slices
