"""``python -m benchmarks.size``: serialized ``BinlogEvent`` bytes per row change against Debezium JSON.

Strategy: for each data set, run our pipeline twice, in the default mode (``image="changed"``: PK, the
always-included columns and the changed columns) and in ``image="full"`` mode, and sum
``len(event.SerializeToString())`` over the DML events. The Debezium side is built from the *full* images
of the same changes, one envelope per row change as Debezium's MySQL connector emits it with the JSON
converter and ``schemas.enable=false``::

    {"before": {...}|null, "after": {...}|null,
     "source": {"version", "connector", "name", "ts_ms", "snapshot", "db", "sequence", "table",
                "server_id", "gtid", "file", "pos", "row", "thread", "query"},
     "op": "c"|"u"|"d", "ts_ms": ..., "transaction": null}

Values follow Debezium's default modes: DECIMAL ``precise`` (base64 of the unscaled two's-complement
integer), DATETIME as epoch microseconds (MicroTimestamp), TIMESTAMP as an ISO-8601 UTC string
(ZonedTimestamp), DATE as epoch days, TIME as microseconds (MicroTime), BLOB/BINARY/BIT as base64, SET as
the comma-joined labels, JSON as its text. The record key (``{"id": ...}``) and Kafka framing are not
counted on either side; ``include.query`` is off (Debezium's default) so ``query`` is null, while our events
carry the statement text once per event (ANNOTATE_ROWS) and it is counted.

Data sets: the spec example as MariaDB wrote it (``fixtures/golden/mariadb/spec_example``, with
``always_include=ppc.campaigns.currency``), the spec's own MySQL 5.7 events (the helpers of
``tests/golden/test_spec_golden.py``; needs the shared seeds), and a ~100k-row-change workload.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import json
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.io.snapshots import load_snapshot
from binlog_model.runs.pipeline import iter_binlog_events

__all__ = ["debezium_envelopes", "debezium_value", "measure_events"]

ROOT = Path(__file__).resolve().parents[1]
SPEC_FIXTURE = ROOT / "fixtures" / "golden" / "mariadb" / "spec_example"
_EPOCH_DATE = datetime.date(1970, 1, 1)
_EPOCH = datetime.datetime(1970, 1, 1)
_OP = {pb.BinlogEvent.INSERT: "c", pb.BinlogEvent.UPDATE: "u", pb.BinlogEvent.DELETE: "d"}
# A fixed processing time: 13 digits like any real ts_ms.
_TS_MS = 1_763_000_000_000


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


def debezium_envelopes(events: Iterable[pb.BinlogEvent], name: str = "bench") -> Iterable[bytes]:
    """One compact-JSON Debezium envelope per row change of full-image ``events`` (``image="full"``)."""
    for event in events:
        op = _OP.get(event.operation)
        if op is None:
            continue
        for n, row in enumerate(event.rows):
            doc = {
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
            yield json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def measure_events(make: Callable[[str], Iterable[pb.BinlogEvent]]) -> dict[str, Any]:
    """Sizes for one data set; ``make(image)`` yields its BinlogEvents in that image mode."""
    out: dict[str, Any] = {}
    for image in ("changed", "full"):
        changes = total = statements = 0
        for event in make(image):
            if event.operation in _OP:
                changes += len(event.rows)
                total += len(event.SerializeToString())
                if event.HasField("statement"):
                    # What the statement text (ANNOTATE_ROWS / ROWS_QUERY) costs: the size without it.
                    size = len(event.SerializeToString())
                    event.ClearField("statement")
                    statements += size - len(event.SerializeToString())
        out[f"ours_{image}"] = {"bytes": total, "row_changes": changes, "statement_bytes": statements,
                                "bytes_per_change": total / changes if changes else None,
                                "bytes_per_change_without_statement":
                                    (total - statements) / changes if changes else None}
    sizes = [len(doc) for doc in debezium_envelopes(make("full"))]
    out["debezium"] = {"bytes": sum(sizes), "row_changes": len(sizes),
                       "bytes_per_change": sum(sizes) / len(sizes) if sizes else None}
    return out


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
    parser.add_argument("--changes", type=int, default=100_000, help="row changes in the workload")
    parser.add_argument("--output", type=Path, help="JSON result path (default benchmarks/results/)")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    results["spec_example (MariaDB fixture)"] = measure_events(_spec_fixture)
    try:
        results["spec examples (MySQL 5.7 seed events)"] = measure_events(_spec_seed)
    except Exception as err:  # the shared seeds are optional outside this machine
        print(f"spec seed events not measured: {type(err).__name__}: {err}")
    workload = Workload.for_changes(args.changes)
    cached = ensure_workload(workload)
    history = load_snapshot(cached.snapshot)
    results[f"workload ({workload.row_changes} row changes)"] = measure_events(
        lambda image: iter_binlog_events(cached.binlogs, snapshot=history, image=image))
    print("bytes per row change (ours: serialized BinlogEvent; '-stmt': without the statement text)")
    print(f"{'data set':<40}{'changes':>8}{'ours':>9}{'-stmt':>8}{'full':>9}{'-stmt':>8}{'debezium':>10}"
          f"{'dbz/ours':>10}{'dbz/full':>10}")
    for name, r in results.items():
        ours, full, dbz = r["ours_changed"], r["ours_full"], r["debezium"]["bytes_per_change"]
        print(f"{name:<40}{r['debezium']['row_changes']:>8}{ours['bytes_per_change']:>9.1f}"
              f"{ours['bytes_per_change_without_statement']:>8.1f}{full['bytes_per_change']:>9.1f}"
              f"{full['bytes_per_change_without_statement']:>8.1f}{dbz:>10.1f}"
              f"{dbz / ours['bytes_per_change']:>10.2f}{dbz / full['bytes_per_change']:>10.2f}")
    doc = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "results": results}
    path = args.output or Path(__file__).resolve().parent / "results" / f"size-{doc['when']}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"(results written to {path})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
