"""``python -m benchmarks.streaming``: the ``mysql-binlog`` stream's latency and throughput.

Strategy: the binlog set of ``benchmarks.resolve`` (real MySQL 9 files, DDL between them; cached), one
local Spark session for every measurement, so JVM start is in none of them.

- **Latency** (file write → row in the sink): a writer thread lays one of the files into a folder as a
  server writes its active binlog, a transaction (or a few: ``--tx-per-write``) every ``--write-ms``,
  noting when each byte range was written. A query reads the folder with a processing-time trigger of
  ``--triggers`` seconds (1 and 10 by default) into a ``foreachBatch`` sink that collects the batch's rows
  and notes the time it has them. A row's latency is that time minus the time its transaction was written;
  p50/p95/max per trigger.
- **Throughput**: the typed job (``run_resolve``) over the files, then ``run_resolve_stream`` with
  ``Trigger.AvailableNow`` over the same files (a new checkpoint and output), each timed whole in the same
  session; the ratio is row changes per second of the stream over the batch job's.

The machine's 1-minute load average is printed beside each figure (other work on the machine shows in it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.resolve import generate


def _load() -> float:
    return os.getloadavg()[0]


def _boundaries(path: Path) -> list[int]:
    """Offsets the file can be cut at between transactions: each transaction start, and the end."""
    from binlog_model.spark.partitions import scan_file

    scan = scan_file(path)
    return [*scan.tx_starts[1:], scan.size]


def latency(spark: Any, files: list[Path], trigger: float, write_ms: int, tx_per_write: int, seconds: float,
            work: Path) -> dict[str, Any]:
    """The archive holds every file but the last, which grows while the query runs."""
    folder = work / f"live-{trigger}"
    folder.mkdir(parents=True)
    for f in files[:-1]:
        shutil.copyfile(f, folder / f.name)
    source = files[-1]
    ends = _boundaries(source)
    data = source.read_bytes()
    written: list[tuple[int, float]] = []       # (end offset, time written)
    stop = threading.Event()

    def writer() -> None:
        with open(folder / source.name, "wb", buffering=0) as out:
            done = 0
            for i in range(0, len(ends), tx_per_write):
                if stop.is_set():
                    return
                end = ends[min(i + tx_per_write, len(ends)) - 1]
                out.write(data[done:end])
                written.append((end, time.time()))
                done = end
                time.sleep(write_ms / 1000)

    seen: list[tuple[int, float]] = []          # (event offset, time in the sink)

    def sink(frame: Any, _batch: int) -> None:
        offsets = [r[0] for r in frame.where(frame.file == source.name).select("offset").collect()]
        now = time.time()
        seen.extend((o, now) for o in offsets)

    thread = threading.Thread(target=writer, daemon=True)
    ck = work / f"ck-{trigger}"
    query = (spark.readStream.format("mysql-binlog").option("schemaLocation", str(ck / "schema"))
             .load(str(folder)).writeStream.foreachBatch(sink).option("checkpointLocation", str(ck))
             .trigger(processingTime=f"{trigger} seconds").start())
    query.processAllAvailable()          # the closed files first: latency is measured on the active one
    seen.clear()
    load_before = _load()
    thread.start()
    time.sleep(seconds)
    stop.set()
    thread.join()
    query.processAllAvailable()     # every row written reaches the sink: a backlog counts in the figures
    query.stop()
    import bisect

    keys = [e for e, _ in written]
    lat = []
    for offset, at in seen:
        i = bisect.bisect_right(keys, offset)
        if i < len(written):
            lat.append(at - written[i][1])
    lat.sort()
    # Every row of the transactions written (the file's rows before the first write are none).
    return {"trigger_s": trigger, "rows": len(lat), "rows_unmatched": len(seen) - len(lat),
            "writes": len(written),
            "p50_s": round(statistics.median(lat), 3) if lat else None,
            "p95_s": round(lat[int(0.95 * (len(lat) - 1))], 3) if lat else None,
            "max_s": round(lat[-1], 3) if lat else None, "load_before": load_before, "load_after": _load()}


def throughput(spark: Any, files: list[Path], work: Path) -> dict[str, Any]:
    from binlog_model.spark.job import run_resolve
    from binlog_model.spark.stream_resolve import run_resolve_stream

    folder = work / "archive"
    folder.mkdir()
    for f in files:
        shutil.copyfile(f, folder / f.name)
    load0 = _load()
    began = time.monotonic()
    batch = run_resolve(spark, [str(folder)], str(work / "batch-out"))
    batch_s = time.monotonic() - began
    load1 = _load()
    began = time.monotonic()
    stream = run_resolve_stream(spark, [folder], work / "stream-out", work / "stream-ck")
    stream_s = time.monotonic() - began
    return {"bytes": sum(f.stat().st_size for f in files), "batch_rows": batch.rows,
            "batch_s": round(batch_s, 1),
            "stream_rows": stream.rows, "stream_batches": stream.batches, "stream_s": round(stream_s, 1),
            "ratio": round((stream.rows / stream_s) / (batch.rows / batch_s), 3),
            "load_batch": load0, "load_stream": load1, "load_after": _load()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path.home() / ".cache" / "binlog-model-bench" / "stream")
    parser.add_argument("--files", type=int, default=3)
    parser.add_argument("--file-mb", type=int, default=40)
    parser.add_argument("--triggers", default="1,10")
    parser.add_argument("--write-ms", type=int, default=100)
    parser.add_argument("--tx-per-write", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--skip", default="", help="latency and/or throughput, comma-separated")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from binlog_model.spark.session import local_session

    files = generate(args.dir, args.files, args.file_mb)
    spark = local_session(args.master)
    spark.sparkContext.setLogLevel("ERROR")
    report: dict[str, Any] = {"master": args.master, "files": [f.name for f in files], "latency": []}
    with tempfile.TemporaryDirectory(prefix="bench-stream-") as tmp:
        work = Path(tmp)
        if "latency" not in args.skip:
            for trigger in (float(t) for t in args.triggers.split(",")):
                got = latency(spark, files, trigger, args.write_ms, args.tx_per_write, args.seconds, work)
                print(json.dumps(got), flush=True)
                report["latency"].append(got)
        if "throughput" not in args.skip:
            report["throughput"] = throughput(spark, files, work)
            print(json.dumps(report["throughput"]), flush=True)
    spark.stop()
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    sys.exit(0)


if __name__ == "__main__":
    main()
