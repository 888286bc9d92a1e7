"""``python -m benchmarks.size``: bytes per row change of our output against Debezium's JSON, and the rows/s
cost of ``--compress zstd``.

Strategy: for each data set, our output is what ``events`` writes by default (``image="changed"``: the PK,
the always-included columns and the changed columns): length-delimited protobuf and JSON lines, each plain
and through ``io.compression.ZstdFrameWriter`` at levels 1, 3, 9 and 19 (the writer ``--compress zstd``
uses). The Debezium side is built from the *full* images of the same changes: one Kafka record value per
row change as Debezium 2.7's MySQL connector emits it through Kafka Connect's JsonConverter with its
default ``schemas.enable=true``, compact JSON::

    {"schema": {"type": "struct", "name": "<server>.<db>.<table>.Envelope", "version": 1, "optional": false,
                "fields": [before and after: the table's row struct (optional), source:
                           io.debezium.connector.mysql.Source, op, ts_ms, transaction: event.block]},
     "payload": {"before": {...}|null, "after": {...}|null,
                 "source": {"version", "connector", "name", "ts_ms", "snapshot", "db", "sequence", "table",
                            "server_id", "gtid", "file", "pos", "row", "thread", "query"},
                 "op": "c"|"u"|"d", "ts_ms": ..., "transaction": null}}

Values and their schema follow Debezium's default modes: DECIMAL ``precise`` (bytes: base64 of the
unscaled two's-complement integer; ``org.apache.kafka.connect.data.Decimal`` with scale and precision),
DATETIME as epoch microseconds (``MicroTimestamp``; ``Timestamp``, milliseconds, for fsp <= 3: values
here are still written in microseconds, a few bytes more), TIMESTAMP as an ISO-8601 UTC string
(``ZonedTimestamp``), DATE as epoch days, TIME as microseconds (``MicroTime``), BLOB/BINARY/BIT as base64
(``Bits`` with its length), ENUM/SET as labels (``Enum``/``EnumSet`` with the allowed labels), JSON as its
text (``Json``), YEAR as ``Year``; INT UNSIGNED and BIGINT int64. The column schemas come from the
snapshot's catalog; a table the catalog does not know (the spec fixture's, created inside the binlog) gets
them from its first row's value kinds. The record key (``{"id": ...}``, with its own schema) and Kafka's
framing are not counted; ``include.query`` is off (Debezium's default) so ``query`` is null, while our
events carry the statement text once per event (ANNOTATE_ROWS) and it is counted. Debezium's value
without schemas (``-schema``) and with zstd at level 3 are shown as well.

The rows/s cost: whole ``binlog-model events`` processes over a larger workload's binlog, writing a file,
plain and with ``--compress zstd``, in interleaved rounds; every round is printed and kept in the JSON.

Data sets: the spec example as MariaDB wrote it (``fixtures/golden/mariadb/spec_example``, with
``always_include=ppc.campaigns.currency``), the spec's own MySQL 5.7 events (the helpers of
``tests/golden/test_spec_golden.py``; needs the shared seeds), and a ~100k-row-change workload.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.io.compression import DEFAULT_LEVEL, ZstdFrameWriter
from binlog_model.io.snapshots import load_snapshot
from binlog_model.runs.pipeline import iter_binlog_events
from binlog_model.sinks.delimited import encode_delimited
from binlog_model.sinks.jsonl import encode_jsonl
from schema_tracker.model import Catalog, ColumnSchema

__all__ = ["debezium_envelopes", "debezium_field_schema", "debezium_value", "debezium_value_schema",
           "measure_output", "measure_rates"]

ROOT = Path(__file__).resolve().parents[1]
SPEC_FIXTURE = ROOT / "fixtures" / "golden" / "mariadb" / "spec_example"
_EPOCH_DATE = datetime.date(1970, 1, 1)
_EPOCH = datetime.datetime(1970, 1, 1)
_OP = {pb.BinlogEvent.INSERT: "c", pb.BinlogEvent.UPDATE: "u", pb.BinlogEvent.DELETE: "d"}
# A fixed processing time: 13 digits like any real ts_ms.
_TS_MS = 1_763_000_000_000
#: the zstd levels measured
LEVELS = (1, 3, 9, 19)
#: the rate cases: name -> extra `events` options
RATE_CASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("proto", ("--format", "proto")),
    ("proto+zstd1", ("--format", "proto", "--compress", "zstd")),          # the default level
    ("proto+zstd3", ("--format", "proto", "--compress", "zstd", "--compress-level", "3")),
    ("jsonl", ("--format", "jsonl")),
    ("jsonl+zstd1", ("--format", "jsonl", "--compress", "zstd")),
)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def debezium_value(value: pb.Value) -> Any:
    """One column value as Debezium's JSON converter writes it (default modes, schemas disabled)."""
    kind = value.WhichOneof("kind")
    if kind is None or kind == "null_value":
        return None
    if kind in ("int_value", "long_value", "uint64_value", "double_value", "float_value", "string_value",
                "json_value", "time_micros"):
        return getattr(value, kind)
    if kind == "decimal_value":
        text = value.decimal_value
        negative = text.startswith("-")
        unscaled = int(text.lstrip("-").replace(".", "") or "0") * (-1 if negative else 1)
        size = max(1, (unscaled.bit_length() + 8) // 8)
        return _b64(unscaled.to_bytes(size, "big", signed=True))
    if kind == "bytes_value":
        return _b64(value.bytes_value)
    if kind == "bit_value":
        bits = value.bit_value
        return _b64(bits.to_bytes(max(1, (bits.bit_length() + 7) // 8), "little"))
    if kind == "date_value":
        d = value.date_value
        try:
            return (datetime.date(d.year, d.month, d.day) - _EPOCH_DATE).days
        except ValueError:
            return None     # Debezium turns zero/invalid dates into null (or a default)
    if kind == "datetime_value":
        t = value.datetime_value
        try:
            moment = datetime.datetime(t.year, t.month, t.day, t.hour, t.minute, t.second, t.micros)
        except ValueError:
            return None
        return (moment - _EPOCH) // datetime.timedelta(microseconds=1)
    if kind == "timestamp_micros":
        moment = _EPOCH + datetime.timedelta(microseconds=value.timestamp_micros)
        return moment.strftime("%Y-%m-%dT%H:%M:%S") + (f".{moment.microsecond:06d}" if moment.microsecond
                                                        else "") + "Z"
    if kind == "set_value":
        return ",".join(value.set_value.labels)
    if kind == "raw_text_value":
        return _b64(value.raw_text_value.data)
    if kind == "geometry_value":
        return {"wkb": _b64(value.geometry_value.wkb), "srid": value.geometry_value.srid}
    if kind == "vector_value":
        return list(value.vector_value.values)
    raise ValueError(f"no Debezium mapping for value kind {kind}")


def _image(columns: Iterable[pb.Column]) -> dict[str, Any] | None:
    out = {c.name: debezium_value(c.value) for c in columns}
    return out or None


# Debezium's MySQL type mapping (default modes), as Kafka Connect schema fields: (type, logical name,
# parameters) by MySQL data_type. Integers follow the connector's table: signed INT is int32, INT
# UNSIGNED and BIGINT int64 (BIGINT UNSIGNED: int64 in the default "long" mode).
_INT_TYPES = {"tinyint": "int16", "smallint": "int16", "mediumint": "int32", "int": "int32",
              "integer": "int32", "bigint": "int64"}
_UNSIGNED_WIDER = {"int16": "int32", "int32": "int64", "int64": "int64"}
_TEXT_TYPES = ("char", "varchar", "tinytext", "text", "mediumtext", "longtext")
_BINARY_TYPES = ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "geometry")


def debezium_field_schema(column: ColumnSchema) -> dict[str, Any]:
    """The Kafka Connect schema of one column, as Debezium's MySQL connector declares it (default modes:
    ``decimal.handling.mode=precise``, ``time.precision.mode=adaptive_time_microseconds``,
    ``bigint.unsigned.handling.mode=long``)."""
    t = column.data_type
    field: dict[str, Any]
    if t in _INT_TYPES:
        kind = _INT_TYPES[t]
        field = {"type": _UNSIGNED_WIDER[kind] if column.unsigned else kind}
    elif t in ("float",):
        field = {"type": "float"}
    elif t in ("double", "real"):
        field = {"type": "double"}
    elif t == "decimal":
        field = {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
                 "parameters": {"scale": str(column.scale or 0),
                                "connect.decimal.precision": str(column.precision or 10)}}
    elif t == "datetime":
        field = {"type": "int64", "name": "io.debezium.time.MicroTimestamp" if (column.fsp or 0) > 3
                 else "io.debezium.time.Timestamp", "version": 1}
    elif t == "timestamp":
        field = {"type": "string", "name": "io.debezium.time.ZonedTimestamp", "version": 1}
    elif t == "date":
        field = {"type": "int32", "name": "io.debezium.time.Date", "version": 1}
    elif t == "time":
        field = {"type": "int64", "name": "io.debezium.time.MicroTime", "version": 1}
    elif t == "year":
        field = {"type": "int32", "name": "io.debezium.time.Year", "version": 1}
    elif t == "enum":
        field = {"type": "string", "name": "io.debezium.data.Enum", "version": 1,
                 "parameters": {"allowed": ",".join(column.enum_values)}}
    elif t == "set":
        field = {"type": "string", "name": "io.debezium.data.EnumSet", "version": 1,
                 "parameters": {"allowed": ",".join(column.enum_values)}}
    elif t == "json":
        field = {"type": "string", "name": "io.debezium.data.Json", "version": 1}
    elif t == "bit":
        field = ({"type": "boolean"} if column.length == 1 else
                 {"type": "bytes", "name": "io.debezium.data.Bits", "version": 1,
                  "parameters": {"length": str(column.length or 1)}})
    elif t in _BINARY_TYPES:
        field = {"type": "bytes"}
    else:           # the text types and anything else: a string
        field = {"type": "string"}
    return {**field, "optional": column.nullable, "field": column.name}


# A value's kind -> a column schema, for a table the catalog does not know (its DDL is inside the binlog).
_KIND_SCHEMA = {"int_value": {"type": "int32"}, "long_value": {"type": "int64"},
                "uint64_value": {"type": "int64"}, "double_value": {"type": "double"},
                "float_value": {"type": "float"}, "string_value": {"type": "string"},
                "json_value": {"type": "string", "name": "io.debezium.data.Json", "version": 1},
                "decimal_value": {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
                                  "version": 1, "parameters": {"scale": "2"}},
                "bytes_value": {"type": "bytes"}, "date_value": {"type": "int32", "name":
                                                                   "io.debezium.time.Date", "version": 1},
                "datetime_value": {"type": "int64", "name": "io.debezium.time.MicroTimestamp", "version": 1},
                "timestamp_micros": {"type": "string", "name": "io.debezium.time.ZonedTimestamp",
                                     "version": 1},
                "time_micros": {"type": "int64", "name": "io.debezium.time.MicroTime", "version": 1},
                "set_value": {"type": "string", "name": "io.debezium.data.EnumSet", "version": 1}}

#: the ``source`` block's schema (Debezium 2.7's MySQL connector)
_SOURCE_SCHEMA = {"type": "struct", "fields": [
    {"type": "string", "optional": False, "field": "version"},
    {"type": "string", "optional": False, "field": "connector"},
    {"type": "string", "optional": False, "field": "name"},
    {"type": "int64", "optional": False, "field": "ts_ms"},
    {"type": "string", "optional": True, "name": "io.debezium.data.Enum", "version": 1,
     "parameters": {"allowed": "true,last,false,incremental"}, "default": "false", "field": "snapshot"},
    {"type": "string", "optional": False, "field": "db"},
    {"type": "string", "optional": True, "field": "sequence"},
    {"type": "string", "optional": True, "field": "table"},
    {"type": "int64", "optional": False, "field": "server_id"},
    {"type": "string", "optional": True, "field": "gtid"},
    {"type": "string", "optional": False, "field": "file"},
    {"type": "int64", "optional": False, "field": "pos"},
    {"type": "int32", "optional": False, "field": "row"},
    {"type": "int64", "optional": True, "field": "thread"},
    {"type": "string", "optional": True, "field": "query"}],
    "optional": False, "name": "io.debezium.connector.mysql.Source", "field": "source"}
_TRANSACTION_SCHEMA = {"type": "struct", "fields": [
    {"type": "string", "optional": False, "field": "id"},
    {"type": "int64", "optional": False, "field": "total_order"},
    {"type": "int64", "optional": False, "field": "data_collection_order"}],
    "optional": True, "name": "event.block", "version": 1, "field": "transaction"}


def debezium_value_schema(name: str, db: str, table: str, fields: list[dict[str, Any]]) -> dict[str, Any]:
    """The value schema of a table's change events (``schemas.enable=true``): the envelope of ``before`` /
    ``after`` (the row struct), ``source``, ``op``, ``ts_ms`` and ``transaction``."""
    row = f"{name}.{db}.{table}.Value"
    return {"type": "struct", "fields": [
        {"type": "struct", "fields": fields, "optional": True, "name": row, "field": "before"},
        {"type": "struct", "fields": fields, "optional": True, "name": row, "field": "after"},
        _SOURCE_SCHEMA,
        {"type": "string", "optional": False, "field": "op"},
        {"type": "int64", "optional": True, "field": "ts_ms"},
        _TRANSACTION_SCHEMA],
        "optional": False, "name": f"{name}.{db}.{table}.Envelope", "version": 1}


def debezium_envelopes(events: Iterable[pb.BinlogEvent], name: str = "bench", *, schemas: bool = True,
                       catalog: Catalog | None = None) -> Iterable[bytes]:
    """One compact-JSON Debezium record value per row change of full-image ``events`` (``image="full"``):
    with ``schemas`` (the JsonConverter's default, ``schemas.enable=true``) ``{"schema":...,"payload":...}``,
    else the payload alone. A table's schema comes from ``catalog`` when it knows the table, else from the
    kinds of the first row's values."""
    schema_texts: dict[tuple[str, str], str] = {}
    for event in events:
        op = _OP.get(event.operation)
        if op is None:
            continue
        key = (event.db, event.table)
        if schemas and key not in schema_texts and event.rows:
            known = catalog.table(event.db, event.table) if catalog is not None else None
            if known is not None:
                fields = [debezium_field_schema(c) for c in known.columns]
            else:
                first = event.rows[0].after or event.rows[0].before
                fields = [{**_KIND_SCHEMA.get(c.value.WhichOneof("kind") or "", {"type": "string"}),
                           "optional": True, "field": c.name} for c in first]
            schema_texts[key] = json.dumps(debezium_value_schema(name, *key, fields), separators=(",", ":"),
                                           ensure_ascii=False)
        for n, row in enumerate(event.rows):
            payload = {
                "before": _image(row.before), "after": _image(row.after),
                "source": {
                    "version": "2.7.3.Final", "connector": "mysql", "name": name,
                    "ts_ms": event.utc_timestamp.seconds * 1000, "snapshot": "false", "db": event.db,
                    "sequence": None, "table": event.table, "server_id": event.server_id,
                    "gtid": event.gtid or None, "file": event.position.file, "pos": event.position.offset,
                    "row": n, "thread": None, "query": None,
                },
                "op": op, "ts_ms": _TS_MS, "transaction": None,
            }
            text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
            if schemas:
                # the converter's {"schema":...,"payload":...}, compact as it writes it
                text = f'{{"schema":{schema_texts[key]},"payload":{text}}}'
            yield text.encode("utf-8")


class _Counter:
    """A write-only stream that counts the bytes written to it."""

    def __init__(self) -> None:
        self.bytes = 0

    def write(self, data: bytes | bytearray | memoryview) -> int:
        self.bytes += len(data)
        return len(data)

    def flush(self) -> None:
        pass


class _Sizes:
    """One output's byte count, plain and through a ``ZstdFrameWriter`` per level (as ``--compress zstd``
    writes it: one frame per commit; here one per ``FRAME_BYTES`` of output, about what a default
    ``events --state`` commit writes)."""

    FRAME_BYTES = 64 << 20

    def __init__(self, levels: Iterable[int]) -> None:
        self.plain = 0
        self._since_frame = 0
        self.counters = {level: _Counter() for level in levels}
        self.writers = {level: ZstdFrameWriter(self.counters[level], level=level, owns_raw=False)  # type: ignore[arg-type]
                        for level in self.counters}

    def add(self, record: bytes) -> None:
        self.plain += len(record)
        self._since_frame += len(record)
        for writer in self.writers.values():
            writer.write(record)
        if self._since_frame >= self.FRAME_BYTES:
            self._since_frame = 0
            for writer in self.writers.values():
                writer.end_frame()

    def result(self, changes: int) -> dict[str, Any]:
        for writer in self.writers.values():
            writer.end_frame()
        per = (lambda n: n / changes) if changes else (lambda n: None)
        return {"bytes": self.plain, "bytes_per_change": per(self.plain),
                "zstd": {str(level): {"bytes": c.bytes, "bytes_per_change": per(c.bytes)}
                         for level, c in self.counters.items()}}


def measure_output(make: Callable[[str], Iterable[pb.BinlogEvent]], catalog: Catalog | None = None,
                   levels: Iterable[int] = LEVELS) -> dict[str, Any]:
    """Bytes per row change of one data set: our output as ``events`` writes it by default (``image=
    "changed"``; length-delimited proto and JSON lines, plain and zstd at ``levels``) and Debezium's
    record values for the full images of the same changes (with and without schemas; zstd at level 3 as
    a what-if: Kafka compresses batches, not whole files)."""
    levels = tuple(levels)
    proto, jsonl = _Sizes(levels), _Sizes(levels)
    changes = 0
    for event in make("changed"):
        proto.add(encode_delimited(event))
        jsonl.add(encode_jsonl(event))
        if event.operation in _OP:
            changes += len(event.rows)
    with_schema, without = _Sizes((3,)), _Sizes(())
    dbz_changes = 0
    for record in debezium_envelopes(make("full"), catalog=catalog):
        with_schema.add(record)
        dbz_changes += 1
    for record in debezium_envelopes(make("full"), schemas=False):
        without.add(record)
    return {"row_changes": changes, "proto": proto.result(changes), "jsonl": jsonl.result(changes),
            "debezium": with_schema.result(dbz_changes), "debezium_no_schema": without.result(dbz_changes)}


def measure_rates(files: list[Path], snapshot: Path, row_changes: int, rounds: int = 3,
                  cases: Iterable[tuple[str, tuple[str, ...]]] = ()) -> dict[str, Any]:
    """Rows/s of whole ``binlog-model events`` processes writing a file, plain and compressed, in
    ``rounds`` interleaved rounds (every case once per round): each case's seconds, rows/s and output
    bytes per round, and the median."""
    cases = tuple(cases) or RATE_CASES
    runs: dict[str, list[dict[str, float]]] = {name: [] for name, _ in cases}
    with tempfile.TemporaryDirectory(prefix="size-rate-") as tmp:
        for _ in range(rounds):
            for name, extra in cases:
                out = Path(tmp) / "out"
                argv = [sys.executable, "-m", "binlog_model.cli", "events", *map(str, files), "--snapshot",
                        str(snapshot), "--out", str(out), *extra]
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                subprocess.run(argv, check=True, cwd=ROOT)
                seconds = time.perf_counter() - started
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                # CPU seconds (every thread: the zstd worker's too) say the cost when the machine is shared
                cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                runs[name].append({"seconds": seconds, "rows_per_s": row_changes / seconds,
                                   "cpu_seconds": cpu, "rows_per_cpu_s": row_changes / cpu,
                                   "output_bytes": out.stat().st_size})
                out.unlink()
    return {name: {"rounds": r, "median_rows_per_s": statistics.median(x["rows_per_s"] for x in r),
                   "median_rows_per_cpu_s": statistics.median(x["rows_per_cpu_s"] for x in r)}
            for name, r in runs.items()}


def _spec_fixture(image: str) -> Iterable[pb.BinlogEvent]:
    files = sorted((SPEC_FIXTURE / "binlogs").iterdir())
    return iter_binlog_events(files, source="ppc:1", always_include=["ppc.campaigns.currency"], image=image)


def _spec_seed(image: str) -> list[pb.BinlogEvent]:
    # The spec's own MySQL 5.7 row events, through the acceptance test's helpers (same stream, same schema);
    # only the assembler's image mode changes.
    sys.path.insert(0, str(ROOT))
    import tests.golden.test_spec_golden as spec
    from binlog_model.resolve.assembler import StatementAssembler
    from binlog_model.resolve.options import ResolveOptions

    original = spec._assembler

    def assembler() -> StatementAssembler:
        return StatementAssembler(spec._history(), ResolveOptions(
            source=spec.SOURCE, always_include={("ppc", "campaigns"): ("currency",)},
            image=image))  # type: ignore[arg-type]
    spec._assembler = assembler
    try:
        return spec._dml_events()
    finally:
        spec._assembler = original


def main(argv: list[str] | None = None) -> int:
    from benchmarks.workload import Workload, ensure_workload

    parser = argparse.ArgumentParser(prog="python -m benchmarks.size", description=__doc__.split("\n")[0])
    parser.add_argument("--changes", type=int, default=100_000, help="row changes of the size workload")
    parser.add_argument("--rate-changes", type=int, default=300_000,
                        help="row changes of the workload the rows/s cost of compression is timed on")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the rate cases")
    parser.add_argument("--rate-cases", default=",".join(name for name, _ in RATE_CASES),
                        help="the rate cases to time, comma-separated")
    parser.add_argument("--no-sizes", action="store_true", help="time the rate cases only")
    parser.add_argument("--output", type=Path, help="JSON result path (default benchmarks/results/)")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    if not args.no_sizes:
        _print_sizes(results, args.changes)
    wanted = args.rate_cases.split(",")
    rate_workload = Workload.for_changes(args.rate_changes)
    rate_cached = ensure_workload(rate_workload)
    size = sum(p.stat().st_size for p in rate_cached.binlogs)
    rates = measure_rates(rate_cached.binlogs, rate_cached.snapshot, rate_workload.row_changes, args.rounds,
                          [case for case in RATE_CASES if case[0] in wanted])
    print(f"rows/s of `events` to a file, {rate_workload.row_changes} row changes ({size / 1e6:.0f} MB of "
          f"binlog), {args.rounds} interleaved rounds (whole processes; wall and CPU seconds):")
    for name, r in rates.items():
        per_round = ", ".join(f"{x['rows_per_s']:,.0f}" for x in r["rounds"])
        per_cpu = ", ".join(f"{x['rows_per_cpu_s']:,.0f}" for x in r["rounds"])
        print(f"  {name:<12} median {r['median_rows_per_s']:>9,.0f} rows/s (rounds {per_round}), "
              f"{r['median_rows_per_cpu_s']:>9,.0f} rows/CPU-s (rounds {per_cpu}); output "
              f"{r['rounds'][0]['output_bytes'] / 1e6:.1f} MB")
    for fmt in ("proto", "jsonl"):
        if fmt not in rates:
            continue
        plain, plain_cpu = rates[fmt]["median_rows_per_s"], rates[fmt]["median_rows_per_cpu_s"]
        for name, r in rates.items():
            if name.startswith(fmt + "+"):
                print(f"  cost of {name}: {1 - r['median_rows_per_s'] / plain:+.1%} rows/s, "
                      f"{1 - r['median_rows_per_cpu_s'] / plain_cpu:+.1%} rows/CPU-s")
    doc = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "load": os.getloadavg(),
           "results": results, "rates": {"row_changes": rate_workload.row_changes, "binlog_bytes": size,
                                          "cases": rates}}
    path = args.output or Path(__file__).resolve().parent / "results" / f"size-{doc['when']}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"(results written to {path})")
    return 0


def _print_sizes(results: dict[str, Any], changes: int) -> None:
    from benchmarks.workload import Workload, ensure_workload

    results["spec_example (MariaDB fixture)"] = measure_output(_spec_fixture)
    try:
        results["spec examples (MySQL 5.7 seed events)"] = measure_output(_spec_seed)
    except Exception as err:  # the shared seeds are optional outside this machine
        print(f"spec seed events not measured: {type(err).__name__}: {err}")
    workload = Workload.for_changes(changes)
    cached = ensure_workload(workload)
    history = load_snapshot(cached.snapshot)
    results[f"workload ({workload.row_changes} row changes)"] = measure_output(
        lambda image: iter_binlog_events(cached.binlogs, snapshot=history, image=image), history.catalog)
    print("bytes per row change; ours as `events` writes it (image=changed), Debezium's record value "
          "(full images, JsonConverter, schemas.enable=true; '-schema': false)")
    head = "".join(f"{c:>10}" for c in ("proto", *(f"pb+z{lv}" for lv in LEVELS), "jsonl",
                                         *(f"js+z{lv}" for lv in LEVELS), "dbz", "dbz+z3", "-schema",
                                         f"dbz/pb+z{DEFAULT_LEVEL}"))
    print(f"{'data set':<40}{'changes':>8}{head}")
    for name, r in results.items():
        p, j, d = r["proto"], r["jsonl"], r["debezium"]
        cells = [p["bytes_per_change"], *(p["zstd"][str(lv)]["bytes_per_change"] for lv in LEVELS),
                 j["bytes_per_change"], *(j["zstd"][str(lv)]["bytes_per_change"] for lv in LEVELS),
                 d["bytes_per_change"], d["zstd"]["3"]["bytes_per_change"],
                 r["debezium_no_schema"]["bytes_per_change"],
                 d["bytes_per_change"] / p["zstd"][str(DEFAULT_LEVEL)]["bytes_per_change"]]
        print(f"{name:<40}{r['row_changes']:>8}" + "".join(f"{c:>10.1f}" for c in cells))


if __name__ == "__main__":
    raise SystemExit(main())
