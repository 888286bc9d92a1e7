"""Where the DDL pre-pass of a resolve runs (``partitions.scan_file`` per file): started on the driver
before the session (``prefetch_scans``, forked children per core, so the scan overlaps the JVM's start),
as Spark tasks on every core of the cluster for a large input, else in driver threads (``scan``).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from functools import partial
from typing import Any

from binlog_model.io.documents import log_tail
from binlog_model.spark.failures import LOG_FILE_CONF, SparkJobError, describe_failure
from binlog_model.spark.session import spark_context

__all__ = ["DRIVER_SCAN_BYTES", "SPARK_SCAN_BYTES", "master_cores", "prefetch_scans", "prefetch_worthwhile",
           "scan"]


# From this much input on, the DDL pre-pass runs as Spark tasks (one per file, on every core of the cluster);
# below it, in threads on the driver (one GIL: one core), where a Spark job's start would cost more.
SPARK_SCAN_BYTES = 128 << 20

# Pre-passes started before the session (``prefetch_scans``), by (files, verify_checksum).
_PREFETCHED: dict[tuple[tuple[str, ...], bool], Future[list[Any]]] = {}


# Up to this much local input the driver's own pre-pass (one core, about 0.5 GB/s) overlaps the executors'
# start on a cluster too; beyond it, or for URIs, the pre-pass runs as Spark tasks on every executor.
DRIVER_SCAN_BYTES = 8 << 30


def prefetch_worthwhile(master: str, paths: Sequence[str | os.PathLike[str]]) -> bool:
    """Whether the CLI starts the pre-pass of ``paths`` on the driver before the session: always for a local
    master; on a cluster for local files up to ``DRIVER_SCAN_BYTES`` (the executors start meanwhile)."""
    from binlog_model.io.files import binlog_size, is_uri
    from binlog_model.spark.partitions import expand_paths

    if master.startswith("local"):
        return True
    files = expand_paths(paths)
    return not any(is_uri(f) for f in files) and sum(binlog_size(f) for f in files) <= DRIVER_SCAN_BYTES


def master_cores(master: str) -> int:
    """The cores a master uses on this machine: N of ``local[N]`` / ``local[N,F]``, else every core."""
    m = re.fullmatch(r"local(?:\[(\d+)(?:,\d+)?\])?", master.strip())
    if m:
        return int(m.group(1) or 1)
    return os.cpu_count() or 1


def prefetch_scans(paths: Sequence[str | os.PathLike[str]], verify_checksum: bool = True,
                   processes: int | None = None) -> None:
    """Start the pre-pass of ``paths`` now, for the next ``run_resolve`` of the same files to take. The CLI
    calls it before the JVM starts, so the two overlap instead of adding up. Local files go to ``processes``
    forked children (default: one per core; ``partitions.fork_scans``), as the pre-pass is CPU-bound; one
    driver thread waits for them (URIs: the thread scans them itself)."""
    from binlog_model.spark.partitions import expand_paths, fork_scans

    files = tuple(expand_paths(paths))
    results = fork_scans(files, verify_checksum=verify_checksum, processes=processes or os.cpu_count() or 1,
                         row_transactions=False)
    scanning: Future[list[Any]] = Future()

    def wait() -> None:
        try:
            scanning.set_result(results())
        except BaseException as err:        # re-raised where the result is taken
            scanning.set_exception(err)

    # A daemon: a command failing before it takes the result exits at once, not after the scan.
    threading.Thread(target=wait, name="binlog-model-prepass", daemon=True).start()
    _PREFETCHED[(files, verify_checksum)] = scanning


def scan(spark: Any, paths: Sequence[str], verify_checksum: bool, row_transactions: bool = True
         ) -> list[Any]:
    """The pre-pass of ``paths`` (``partitions.scan_file`` per file): the prefetched one (made without
    transactions of rows only: only for a caller that asks for none), else Spark tasks for a large input,
    else driver threads."""
    from binlog_model.io.files import binlog_size
    from binlog_model.spark.partitions import scan_file, scan_file_or_none, scan_files

    started = None if row_transactions else _PREFETCHED.pop((tuple(paths), verify_checksum), None)
    if started is not None:
        return started.result()         # its typed error, if a file failed, as a driver scan raises it
    options: dict[str, Any] = {"verify_checksum": verify_checksum, "row_transactions": row_transactions}
    if len(paths) < 2 or sum(binlog_size(p) for p in paths) < SPARK_SCAN_BYTES:
        return scan_files(paths, **options)
    sc = spark_context(spark)
    conf = dict(sc.getConf().getAll())
    conf["master"] = sc.master
    try:
        found = sc.parallelize(list(paths), len(paths)).map(partial(scan_file_or_none, **options)).collect()
    except Exception as err:
        log = conf.get(LOG_FILE_CONF)
        raise SparkJobError(describe_failure(str(err), log_tail(log), [], conf) +
                            (f" (full Spark log: {log})" if log else "")) from err
    # A file whose bytes failed is scanned here again: its typed error, as the driver's own scan gives it.
    return [scan if scan is not None else scan_file(path, **options)
            for path, scan in zip(paths, found, strict=True)]
