"""``resolve --stream``: the typed per-table tables kept current by a Structured Streaming query.

Strategy: the query's source is the ``mysql-binlog`` stream (``spark.streaming``: offsets at transaction
boundaries in Spark's checkpoint, read limits, ``Trigger.AvailableNow``), asked for its plan rather than its
rows (the internal option ``_output=tasks``: one row per slice, holding the slice and the packed schema
history at the batch's end). Its ``foreachBatch`` function runs the typed job's own tasks on those slices
(``job._resolve``: ``typed_write.write_slice`` per slice, pyarrow Parquet, nothing through Spark's rows),
into ``OUT/_staging/batch-NNNNNNNNN/``, then commits them as ``resolve --state`` does (``runs.commit``: the
state with its commit marker, each file one move into ``OUT/db=…/table=…/`` as ``batch-NNNNNNNNN-part-…``,
the folders' ``_schema.ddl``, renamed tables' folders moved, the manifest).

Exactly once by batch id: the stream's ``RunState`` (``OUT/_stream/state.json``, locked while the query runs)
records the last batch published (``stream_batch``) in the same atomic save as the commit marker. A batch
Spark runs again after a crash (its id is not in Spark's commit log yet) is skipped when the state already
has it, and a publish a crash cut short is finished before anything else; staging folders no state names
are deleted. Spark re-plans a re-run batch with the same offsets, so it holds the same rows. One query per
``OUT`` and checkpoint.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from binlog_model.errors import BinlogError
from binlog_model.io.files import absolute_name
from binlog_model.io.state import RunState, adopt_legacy_stream_state, lock_state
from binlog_model.resolve.table_filter import TableFilter
from binlog_model.runs.commit import STAGING, StagedOutput
from binlog_model.sinks.publish import prepare_stream_output
from binlog_model.spark import incremental as inc
from binlog_model.spark.failures import SparkJobError, root_cause
from binlog_model.spark.job import TableSummary, _reader_options, _resolve
from binlog_model.spark.partitions import Slice
from binlog_model.spark.reading import shipped_history

__all__ = ["STATE_DIR", "StreamResolveResult", "run_resolve_stream"]

STATE_DIR = "_stream"                   # the stream's RunState: state.json and state.lock
LEGACY_STATE_FILE = "_stream.json"      # what outputs written before it hold instead


@dataclass
class StreamResolveResult:
    """What a ``run_resolve_stream`` call did: batches published (skipped: already published by an earlier
    run), row changes, and per table (``TableSummary``, as the batch job's ``ResolveResult`` has them) the
    row changes by operation over those batches, with the columns and versions of the last batch."""

    batches: int = 0
    skipped: int = 0
    rows: int = 0
    seconds: float = 0.0
    tables: list[TableSummary] = field(default_factory=list)

    def add(self, summaries: Iterable[TableSummary]) -> None:
        """One batch's tables: operations summed per table, a table with none left out."""
        by_key = {(t.db, t.table): t for t in self.tables}
        for t in summaries:
            if not any(t.operations.values()):
                continue
            mine = by_key.get((t.db, t.table))
            if mine is None:
                by_key[(t.db, t.table)] = replace(t, operations=dict(t.operations))
                continue
            for op, count in t.operations.items():
                mine.operations[op] = mine.operations.get(op, 0) + count
            mine.columns = t.columns or mine.columns
            mine.schema_versions = t.schema_versions or mine.schema_versions
            mine.path, mine.untyped = t.path or mine.path, t.untyped
        self.tables = sorted(by_key.values(), key=lambda s: (s.db, s.table))


class _Sink:
    """The ``foreachBatch`` function (runs on the driver, once per micro-batch): each batch one staged run
    of ``runs.commit``, its id recorded in the state with the commit."""

    def __init__(self, spark: Any, out: StagedOutput, state: RunState, options: dict[str, str], source: str,
                 say: Callable[[str], None], result: StreamResolveResult) -> None:
        self.spark, self.out, self.state, self.options, self.source, self.say = (
            spark, out, state, options, source, say)
        self.result = result

    def __call__(self, frame: Any, batch_id: int) -> None:
        state = self.state
        if state.stream_batch is not None and batch_id <= state.stream_batch:
            self.say(f"batch {batch_id}: already published, skipped")
            self.result.skipped += 1
            return
        started = time.monotonic()
        rows = frame.collect()
        name = f"batch-{batch_id:09d}"
        if rows:
            packed = rows[0]["history"]
            history = shipped_history(packed).copy()
            slices = [Slice.from_json(json.loads(r["piece"])) for r in rows]
            files = sorted({s.path for s in slices})
            job = f"{name}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
            done = _resolve(self.spark, files, self.out.staging(name), self.options, history, slices,
                            self.say, started, self.source, job)
            inc.stage_schemas(self.out, name, history)
            self.result.rows += done.rows
            self.result.add(done.tables)
        state.stream_batch = batch_id
        state.runs += 1
        self.out.commit(state, name)
        self.result.batches += 1
        self.say(f"batch {batch_id}: {len(rows)} slices published in {time.monotonic() - started:.1f}s")


def run_resolve_stream(spark: Any, paths: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str],
                       checkpoint: str | os.PathLike[str], *, source: str = "", snapshot: str | None = None,
                       lenient_ddl: bool = False, always_include: Sequence[str] = (),
                       slice_bytes: int = 64 << 20, every: float | None = None,
                       max_files_per_trigger: int | None = None, max_bytes_per_trigger: int | None = None,
                       progress: Callable[[str], None] | None = None,
                       timeout: float | None = None,
                       tables: TableFilter | None = None) -> StreamResolveResult:
    """Keep the typed tables of the binlogs arriving in ``paths`` (folders or globs) current in ``out`` (a
    local folder: batches are published by renames), with Spark's checkpoint and the stream's schema
    histories in ``checkpoint``. ``every`` None: ``Trigger.AvailableNow`` (read what is there now, in
    batches within the limits, and return: run it from a scheduler every N minutes); else a trigger every
    ``every`` seconds until the query is stopped or ``timeout`` seconds pass. Raises ``SparkJobError`` (one
    line: the root cause) when the query fails, ``StateLockedError`` while another query writes ``out``."""
    say = progress or (lambda _text: None)
    target = Path(absolute_name(out))
    ck = Path(absolute_name(checkpoint))
    prepare_stream_output(target, frozenset({STATE_DIR, STAGING, LEGACY_STATE_FILE}))
    # One query per output: the state is locked while it runs, and a publish a killed one committed is
    # finished before anything else.
    with lock_state(target / STATE_DIR):
        state = RunState.load(target / STATE_DIR)
        adopt_legacy_stream_state(state, target / LEGACY_STATE_FILE)
        staged = StagedOutput(target)
        staged.recover(state)
        return _run_query(spark, paths, staged, state, ck, source=source, snapshot=snapshot,
                          lenient_ddl=lenient_ddl, always_include=always_include, slice_bytes=slice_bytes,
                          every=every, max_files_per_trigger=max_files_per_trigger,
                          max_bytes_per_trigger=max_bytes_per_trigger, say=say, timeout=timeout,
                          tables=tables)


def _run_query(spark: Any, paths: Sequence[str | os.PathLike[str]], staged: StagedOutput, state: RunState,
               ck: Path, *, source: str, snapshot: str | None, lenient_ddl: bool,
               always_include: Sequence[str], slice_bytes: int, every: float | None,
               max_files_per_trigger: int | None, max_bytes_per_trigger: int | None,
               say: Callable[[str], None], timeout: float | None,
               tables: TableFilter | None = None) -> StreamResolveResult:
    from pyspark.errors import StreamingQueryException

    options = _reader_options([absolute_name(p) for p in paths], source, lenient_ddl, always_include,
                              slice_bytes, tables)
    # As run_resolve: slices made smaller when a batch would give fewer than two per core.
    stream_options = {**options, "schemaLocation": str(ck / "binlog-schema"), "_output": "tasks",
                      "minSlices": str(2 * max(1, spark.sparkContext.defaultParallelism))}
    if snapshot:
        stream_options["snapshot"] = snapshot
    if max_files_per_trigger:
        stream_options["maxFilesPerTrigger"] = str(max_files_per_trigger)
    if max_bytes_per_trigger:
        stream_options["maxBytesPerTrigger"] = str(max_bytes_per_trigger)
    result = StreamResolveResult()
    started = time.monotonic()
    sink = _Sink(spark, staged, state, options, source, say, result)
    writer = (spark.readStream.format("mysql-binlog").options(**stream_options).load().writeStream
              .foreachBatch(sink).option("checkpointLocation", str(ck / "spark")))
    writer = writer.trigger(availableNow=True) if every is None else writer.trigger(
        processingTime=f"{every} seconds")
    query = writer.start()
    try:
        if every is None:
            query.awaitTermination(timeout)
        elif not query.awaitTermination(timeout):
            query.stop()
    except StreamingQueryException as err:
        raise SparkJobError(root_cause(str(err)) or "the streaming query failed") from err
    except BinlogError:
        raise
    finally:
        if query.isActive:
            query.stop()
    failure = query.exception()
    if failure is not None:
        raise SparkJobError(root_cause(str(failure)) or "the streaming query failed")
    result.seconds = time.monotonic() - started
    return result
