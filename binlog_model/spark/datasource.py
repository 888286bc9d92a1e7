"""The ``mysql-binlog`` Spark Python Data Source: binlog files → one row per row change.

Strategy: ``partitions()`` runs on the driver: it expands the paths, runs the cheap DDL pre-pass on every
file in parallel threads (``partitions.scan_files``), replays the DDL in binlog order into one
``SchemaHistory`` and cuts the files into slices at transaction starts. Each ``InputPartition`` carries
its slice and the history as JSON, so ``read()`` on an executor needs nothing else: it decodes its slice
through a ``StatementAssembler`` built on that history (DDL already recorded at a position is reused, so
every row resolves with the schema in force at its position) and yields Arrow record batches.

Row layout (see docs/spark.md): the BinlogEvent fields, then ``primaryKey``/``before``/``after`` as
``map<string,string>`` whose values are the canonical proto3 JSON of the model ``Value`` (``{"intValue":5}``,
``{"uint64Value":"18446744073709551615"}``, ``{"nullValue":null}``: lossless, kind-tagged), an
``orderKey`` struct that totally orders the output, and ``event``: the serialized ``BinlogEvent`` on the
first row of each event (null on the others; ``statement`` likewise, so a 10,000-row INSERT's text is not
repeated 10,000 times). A SCHEMA event (or any event without rows) gives one row
with null maps. ``mode=events`` gives one row per BinlogEvent instead (maps null, ``event`` always set).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from google.protobuf import json_format
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.assemble import AssemblerOptions, StatementAssembler, parse_always_include
from binlog_model.errors import ConfigError
from binlog_model.pipeline import load_snapshot
from binlog_model.position import BinlogPosition, file_sequence
from binlog_model.spark.partitions import (
    Slice,
    build_history,
    expand_paths,
    iter_slice_events,
    plan_slices,
    scan_files,
)
from schema_tracker.history import SchemaHistory

__all__ = ["ARROW_SCHEMA", "SCHEMA_DDL", "BinlogDataSource", "GtidSet", "ReadOptions", "event_rows",
           "value_json"]

SCHEMA_DDL = (
    "source string, serverUuid string, transactionId long, queryIndex int, eventIndex int, rowIndex long, "
    "lastInStatement boolean, file string, offset long, nextOffset long, innerIndex int, "
    "utcTimestamp timestamp, db string, `table` string, operation string, gtid string, gtidDomainId int, "
    "serverId long, statement string, traceInfo string, primaryKey map<string,string>, "
    "before map<string,string>, after map<string,string>, "
    "orderKey struct<fileSeq:long, offset:long, innerIndex:int, eventIndex:int, rowIndex:long>, "
    "event binary"
)

_MAP = pa.map_(pa.string(), pa.string())
ARROW_SCHEMA = pa.schema([
    ("source", pa.string()), ("serverUuid", pa.string()), ("transactionId", pa.int64()),
    ("queryIndex", pa.int32()), ("eventIndex", pa.int32()), ("rowIndex", pa.int64()),
    ("lastInStatement", pa.bool_()), ("file", pa.string()), ("offset", pa.int64()),
    ("nextOffset", pa.int64()), ("innerIndex", pa.int32()), ("utcTimestamp", pa.timestamp("us", tz="UTC")),
    ("db", pa.string()), ("table", pa.string()), ("operation", pa.string()), ("gtid", pa.string()),
    ("gtidDomainId", pa.int32()), ("serverId", pa.int64()), ("statement", pa.string()),
    ("traceInfo", pa.string()), ("primaryKey", _MAP), ("before", _MAP), ("after", _MAP),
    ("orderKey", pa.struct([("fileSeq", pa.int64()), ("offset", pa.int64()), ("innerIndex", pa.int32()),
                            ("eventIndex", pa.int32()), ("rowIndex", pa.int64())])),
    ("event", pa.binary()),
])
_BATCH_ROWS = 4096
_OPERATIONS = {v.number: v.name for v in pb.BinlogEvent.Operation.DESCRIPTOR.values}


@dataclass(frozen=True, slots=True)
class GtidSet:
    """Transactions already processed, to skip: MySQL ``uuid:1-5:7,uuid2:1-3`` (gno intervals per server
    UUID) and/or MariaDB ``domain-server-seq`` items (``0-1-100``: every sequence number up to 100 in
    domain 0, as ``gtid_slave_pos``)."""

    mysql: tuple[tuple[str, int, int], ...] = ()
    mariadb: tuple[tuple[int, int], ...] = ()

    @classmethod
    def parse(cls, text: str) -> GtidSet:
        mysql: list[tuple[str, int, int]] = []
        mariadb: list[tuple[int, int]] = []
        for item in (i.strip() for i in text.split(",")):
            if not item:
                continue
            try:
                if ":" in item:
                    uuid, *ranges = item.split(":")
                    for r in ranges:
                        lo, _, hi = r.partition("-")
                        mysql.append((uuid.strip().lower(), int(lo), int(hi or lo)))
                else:
                    domain, _server, seq = item.split("-")
                    mariadb.append((int(domain), int(seq)))
            except ValueError as err:
                raise ConfigError(f"mysql-binlog: bad GTID set item {item!r} (expected uuid:1-5 or "
                                  "domain-server-seq)") from err
        return cls(tuple(mysql), tuple(mariadb))

    def contains(self, event: pb.BinlogEvent) -> bool:
        if event.server_uuid:
            uuid = event.server_uuid.lower()
            return any(u == uuid and lo <= event.transaction_id <= hi for u, lo, hi in self.mysql)
        if event.gtid:
            return any(d == event.gtid_domain_id and event.transaction_id <= seq for d, seq in self.mariadb)
        return False


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """The parsed reader options (all picklable)."""

    paths: tuple[str, ...]
    source: str = ""
    snapshot: str | None = None
    always_include: tuple[str, ...] = ()
    image: str = "changed"
    max_rows: int = 1000
    max_bytes: int = 4 << 20
    lenient_ddl: bool = False
    verify_checksum: bool = True
    allow_incomplete_tail: bool = False
    mode: str = "rows"
    slice_bytes: int = 64 << 20
    start: BinlogPosition | None = None
    stop: BinlogPosition | None = None
    skip_gtids: GtidSet | None = None

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
        include = tuple(s.strip() for s in opts.get("alwaysinclude", "").split(",") if s.strip())
        parse_always_include(include)      # validate on the driver
        return cls(
            paths=paths, source=opts.get("source", ""), snapshot=opts.get("snapshot") or None,
            always_include=include, image=opts.get("image", "changed"),
            max_rows=_int(opts, "maxrows", 1000), max_bytes=_int(opts, "maxbytes", 4 << 20),
            lenient_ddl=ddl == "lenient", verify_checksum=_bool(opts, "verifychecksum", True),
            allow_incomplete_tail=_bool(opts, "allowincompletetail", False), mode=mode,
            slice_bytes=_int(opts, "slicebytes", 64 << 20),
            start=_position(opts.get("startposition")), stop=_position(opts.get("stopposition")),
            skip_gtids=GtidSet.parse(opts["gtidset"]) if opts.get("gtidset") else None,
        )

    def assembler_options(self) -> AssemblerOptions:
        return AssemblerOptions(source=self.source, always_include=parse_always_include(self.always_include),
                                image=self.image, max_rows=self.max_rows,  # type: ignore[arg-type]
                                max_bytes=self.max_bytes, allow_incomplete_tail=self.allow_incomplete_tail)


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


# Fast paths for the common kinds, byte-identical to json_format (tests/test_spark_units.py checks).
_INT_TEXT = {"int_value": '{"intValue":%d}', "long_value": '{"longValue":"%d"}',
             "uint64_value": '{"uint64Value":"%d"}', "bit_value": '{"bitValue":"%d"}',
             "time_micros": '{"timeMicros":"%d"}', "timestamp_micros": '{"timestampMicros":"%d"}'}
_STR_KEY = {"string_value": '{"stringValue":', "decimal_value": '{"decimalValue":',
            "json_value": '{"jsonValue":'}


def value_json(value: pb.Value) -> str:
    """The canonical proto3 JSON of one model ``Value``, compact: ``{"intValue":5}``."""
    kind = value.WhichOneof("kind")
    if kind in _INT_TEXT:
        return _INT_TEXT[kind] % getattr(value, kind)
    if kind in _STR_KEY:
        return _STR_KEY[kind] + json.dumps(getattr(value, kind), ensure_ascii=False) + "}"
    if kind == "null_value":
        return '{"nullValue":null}'
    return slow_value_json(value)


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
        "db": event.db, "table": event.table, "operation": _OPERATIONS[event.operation], "gtid": event.gtid,
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


def _in_range(event: pb.BinlogEvent, options: ReadOptions) -> bool:
    if options.skip_gtids is not None and options.skip_gtids.contains(event):
        return False
    if options.start is None and options.stop is None:
        return True
    here = BinlogPosition(event.position.file, event.position.offset)
    if options.start is not None and here < options.start:
        return False
    return options.stop is None or here < options.stop


def read_slice(piece: Slice, history_json: dict[str, Any], options: ReadOptions) -> Iterator[pa.RecordBatch]:
    """Decode one slice with the shipped history; yield Arrow batches of ``ARROW_SCHEMA``."""
    history = SchemaHistory.from_json(history_json)
    history.lenient = options.lenient_ddl
    assembler = StatementAssembler(history, options.assembler_options())
    rows: list[dict[str, Any]] = []
    for event in assembler.assemble(iter_slice_events(piece, verify_checksum=options.verify_checksum)):
        if not _in_range(event, options):
            continue
        rows.extend(event_rows(event, mode=options.mode))
        if len(rows) >= _BATCH_ROWS:
            yield _batch(rows)
            rows = []
    if rows:
        yield _batch(rows)


def _batch(rows: list[dict[str, Any]]) -> pa.RecordBatch:
    # Column by column: several times faster than RecordBatch.from_pylist on rows of dicts.
    columns = [pa.array([r[f.name] for r in rows], type=f.type) for f in ARROW_SCHEMA]
    return pa.RecordBatch.from_arrays(columns, schema=ARROW_SCHEMA)


@dataclass(frozen=True)
class _Partition(InputPartition):
    piece: Slice
    history: dict[str, Any]


class BinlogReader(DataSourceReader):
    """Plans slices on the driver; decodes one slice per task."""

    def __init__(self, options: ReadOptions) -> None:
        self.options = options

    def partitions(self) -> Sequence[InputPartition]:
        options = self.options
        files = expand_paths(options.paths)
        if options.start is not None:
            files = [f for f in files if file_sequence(f.name) >= file_sequence(options.start.file)]
        if options.stop is not None:
            files = [f for f in files if file_sequence(f.name) <= file_sequence(options.stop.file)]
        scans = scan_files([str(f) for f in files], verify_checksum=options.verify_checksum)
        start = load_snapshot(options.snapshot, lenient=options.lenient_ddl)
        history = build_history(scans, history=start, options=options.assembler_options())
        doc = history.to_json()
        return [_Partition(piece, doc) for piece in plan_slices(scans, slice_bytes=options.slice_bytes)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, _Partition)
        yield from read_slice(partition.piece, partition.history, self.options)


class BinlogDataSource(DataSource):
    """``spark.read.format("mysql-binlog")``: options in docs/spark.md."""

    @classmethod
    def name(cls) -> str:
        return "mysql-binlog"

    def schema(self) -> str:
        return SCHEMA_DDL

    def reader(self, schema: StructType) -> DataSourceReader:
        return BinlogReader(ReadOptions.parse(dict(self.options)))


def plan(paths: Sequence[str | os.PathLike[str]], **options: str) -> tuple[SchemaHistory, list[Slice]]:
    """The driver's planning without Spark (for tests and tools): history and slices."""
    opts = ReadOptions.parse({"paths": json.dumps([os.fspath(p) for p in paths]), **options})
    scans = scan_files([str(f) for f in expand_paths(opts.paths)], verify_checksum=opts.verify_checksum)
    history = build_history(scans, history=load_snapshot(opts.snapshot, lenient=opts.lenient_ddl),
                            options=opts.assembler_options())
    return history, plan_slices(scans, slice_bytes=opts.slice_bytes)
