"""``python -m benchmarks.decode``: the decoder alone on a MariaDB binlog of at least 1M row images.

Strategy: the mixed-type workload (``benchmarks.workload``) sized by row images, generated once and cached;
``binlog_model.io.files.iter_events`` runs over it in a child process pinned to one core (``peers``), and
the median repetition gives events/s, row changes/s, row images/s, MB/s and peak RSS.

``--memory``: peak RSS of a file decode on a ~100 MB binlog set against the same set read ten times over
(~1 GB; the file list repeats, so no extra disk is used), for the decoder alone and fully resolved
(``iter_binlog_events``). Memory is flat when the 1 GB figure is within 10% of the 100 MB one.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from benchmarks.peers import median_result, run_case
from benchmarks.workload import Workload, ensure_workload


def _load() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return ""


def decode_speed(images: int, repeat: int) -> dict[str, Any]:
    workload = Workload.for_images(images)
    cached = ensure_workload(workload)
    nbytes = cached.binlog_bytes
    runs = [run_case("ours-decoder", cached.binlogs, nbytes=nbytes) for _ in range(repeat)]
    r = median_result(runs)
    secs = r["seconds"]
    out = {"workload": cached.meta, "seconds": secs, "repetitions": r["repetitions"],
           "events": r["events"], "events_per_s": r["events"] / secs,
           "row_changes": r["rows"], "row_changes_per_s": r["rows"] / secs,
           "row_images": workload.row_images, "row_images_per_s": workload.row_images / secs,
           "mb": nbytes / 1e6, "mb_per_s": nbytes / 1e6 / secs, "max_rss_mb": r["max_rss_mb"]}
    print(f"decoder on {nbytes / 1e6:.0f} MB ({workload.row_images} row images, {r['rows']} row changes, "
          f"{r['events']} events), median of {repeat}: {secs:.2f} s {r['repetitions']}")
    print(f"  {out['events_per_s']:,.0f} events/s  {out['row_changes_per_s']:,.0f} row changes/s  "
          f"{out['row_images_per_s']:,.0f} row images/s  {out['mb_per_s']:.1f} MB/s  "
          f"peak RSS {r['max_rss_mb']:.1f} MB")
    return out


def memory(changes: int, times: int) -> dict[str, Any]:
    workload = Workload.for_changes(changes)
    cached = ensure_workload(workload)
    nbytes = cached.binlog_bytes
    out: dict[str, Any] = {"workload": cached.meta}
    for case, extra in (("ours-decoder", {"sort": False}), ("ours", {"snapshot": str(cached.snapshot)})):
        small = run_case(case, cached.binlogs, nbytes=nbytes, **extra)
        big = run_case(case, list(cached.binlogs) * times, nbytes=nbytes * times, **extra)
        growth = big["max_rss_mb"] / small["max_rss_mb"] - 1
        out[case] = {"small_mb": nbytes / 1e6, "small_rss_mb": small["max_rss_mb"],
                     "big_mb": nbytes * times / 1e6, "big_rss_mb": big["max_rss_mb"], "growth": growth,
                     "small_seconds": small["seconds"], "big_seconds": big["seconds"]}
        print(f"{case:<14} peak RSS {small['max_rss_mb']:.1f} MB on {nbytes / 1e6:.0f} MB, "
              f"{big['max_rss_mb']:.1f} MB on {nbytes * times / 1e6:.0f} MB ({growth:+.1%}; "
              f"{big['seconds']:.0f} s)")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.decode", description=__doc__.split("\n")[0])
    parser.add_argument("--images", type=int, default=1_000_000, help="row images (default 1M)")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions (default 3)")
    parser.add_argument("--memory", action="store_true", help="also compare peak RSS on ~100 MB and ~1 GB")
    parser.add_argument("--memory-changes", type=int, default=150_000,
                        help="row changes of the ~100 MB set (default 150000)")
    parser.add_argument("--output", type=Path, help="JSON result path (default benchmarks/results/)")
    args = parser.parse_args(argv)
    doc: dict[str, Any] = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "load_before": _load()}
    doc["decode"] = decode_speed(args.images, args.repeat)
    if args.memory:
        doc["memory"] = memory(args.memory_changes, 10)
    doc["load_after"] = _load()
    path = args.output or Path(__file__).resolve().parent / "results" / f"decode-{doc['when']}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"(results written to {path}; load {doc['load_after']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
