"""``resolve --stream``: the typed per-table tables kept current by a Structured Streaming query.

Strategy: the query's source is the ``mysql-binlog`` stream (``spark.streaming``: offsets at transaction
boundaries in Spark's checkpoint, read limits, ``Trigger.AvailableNow``), asked for its plan rather than its
rows (the internal option ``_output=tasks``: one row per slice, holding the slice and the packed schema
history at the batch's end). Its ``foreachBatch`` function runs the typed job's own tasks on those slices
(``job._resolve``: ``typed_write.write_slice`` per slice, pyarrow Parquet, nothing through Spark's rows),
into ``OUT/_staging/batch-NNNNNNNNN/``, then publishes them as ``resolve --state`` does
(``sinks.parquet.publish``: each file one rename into ``OUT/db=…/table=…/`` as ``batch-NNNNNNNNN-part-…``,
the folders' ``_schema.ddl``, renamed tables' folders moved).

Exactly once by batch id: ``OUT/_stream.json`` records the last batch published, and the batch being
published while it is (``publishing``). A batch Spark runs again after a crash (its id is not in Spark's
commit log yet) is skipped when ``_stream.json`` already has it, and a publish a crash cut short is finished
before anything else; staging folders no state names are deleted. Spark re-plans a re-run batch with the
same offsets, so it holds the same rows. One query per ``OUT`` and checkpoint.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from binlog_model.errors import BinlogError, ConfigError
from binlog_model.io.documents import read_json, write_json_atomic
from binlog_model.io.files import absolute_name
from binlog_model.sinks import parquet
from binlog_model.spark import incremental as inc
from binlog_model.spark.job import SparkJobError, _reader_options, _resolve, root_cause
from binlog_model.spark.partitions import Slice
from binlog_model.spark.reading import shipped_history

__all__ = ["STATE_FILE", "StreamResolveResult", "run_resolve_stream"]

STATE_FILE = "_stream.json"
STAGING = "_staging"


@dataclass
class StreamResolveResult:
    """What a ``run_resolve_stream`` call did: batches published (skipped: already published by an earlier
    run), row changes, and per table the row changes by operation over those batches."""

    batches: int = 0
    skipped: int = 0
    rows: int = 0
    seconds: float = 0.0
    tables: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)


class _Sink:
    """The ``foreachBatch`` function (runs on the driver, once per micro-batch)."""

    def __init__(self, spark: Any, out: Path, options: dict[str, str], source: str,
                 say: Callable[[str], None], result: StreamResolveResult) -> None:
        self.spark, self.out, self.options, self.source, self.say = spark, out, options, source, say
        self.result = result
        self.recovered = False

    def _state(self) -> dict[str, Any]:
        path = self.out / STATE_FILE
        try:
            doc = read_json(path)
        except FileNotFoundError:
            return {"batch": None, "publishing": None}
        if not isinstance(doc, dict) or "batch" not in doc:
            raise ConfigError(f"{path} is not the state of a resolve --stream output")
        return doc

    def _save(self, doc: dict[str, Any]) -> None:
        write_json_atomic(self.out / STATE_FILE, doc)

    def recover(self) -> dict[str, Any]:
        """Finish a publish a killed run cut short; delete staging folders no state names."""
        state = self._state()
        if state.get("publishing"):
            parquet.publish(self.out / STAGING / state["publishing"], self.out, state["publishing"])
            state = {"batch": state["batch"], "publishing": None}
            self._save(state)
        parquet.drop_tree(self.out / STAGING, ignore_errors=True)
        self.recovered = True
        return state

    def __call__(self, frame: Any, batch_id: int) -> None:
        state = self.recover() if not self.recovered else self._state()
        if state["batch"] is not None and batch_id <= state["batch"]:
            self.say(f"batch {batch_id}: already published, skipped")
            self.result.skipped += 1
            return
        started = time.monotonic()
        rows = frame.collect()
        name = f"batch-{batch_id:09d}"
        staged = self.out / STAGING / name
        if rows:
            packed = rows[0]["history"]
            history = shipped_history(packed).copy()
            slices = [Slice.from_json(json.loads(r["piece"])) for r in rows]
            files = sorted({s.path for s in slices})
            job = f"{name}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
            done = _resolve(self.spark, files, str(staged), self.options, history, slices, self.say, started,
                            self.source, job)
            parquet.drop_attempts(str(staged))
            inc._stage_schemas(staged, history)
            self._save({"batch": batch_id, "publishing": name})
            parquet.publish(staged, self.out, name)
            self.result.rows += done.rows
            for table in done.tables:
                mine = self.result.tables.setdefault((table.db, table.table), {})
                for op, count in table.operations.items():
                    mine[op] = mine.get(op, 0) + count
        self._save({"batch": batch_id, "publishing": None})
        parquet.drop_tree(self.out / STAGING, ignore_errors=True)
        self.result.batches += 1
        self.say(f"batch {batch_id}: {len(rows)} slices published in {time.monotonic() - started:.1f}s")


def run_resolve_stream(spark: Any, paths: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str],
                       checkpoint: str | os.PathLike[str], *, source: str = "", snapshot: str | None = None,
                       lenient_ddl: bool = False, always_include: Sequence[str] = (),
                       slice_bytes: int = 64 << 20, every: float | None = None,
                       max_files_per_trigger: int | None = None, max_bytes_per_trigger: int | None = None,
                       progress: Callable[[str], None] | None = None,
                       timeout: float | None = None) -> StreamResolveResult:
    """Keep the typed tables of the binlogs arriving in ``paths`` (folders or globs) current in ``out`` (a
    local folder: batches are published by renames), with Spark's checkpoint and the stream's schema
    histories in ``checkpoint``. ``every`` None: ``Trigger.AvailableNow`` (read what is there now, in
    batches within the limits, and return: run it from a scheduler every N minutes); else a trigger every
    ``every`` seconds until the query is stopped or ``timeout`` seconds pass. Raises ``SparkJobError`` (one
    line: the root cause) when the query fails."""
    from pyspark.errors import StreamingQueryException

    say = progress or (lambda _text: None)
    target = Path(absolute_name(out))
    ck = Path(absolute_name(checkpoint))
    parquet.prepare_stream_output(target, frozenset({STATE_FILE, STAGING}))
    options = _reader_options([absolute_name(p) for p in paths], source, lenient_ddl, always_include,
                              slice_bytes)
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
    sink = _Sink(spark, target, options, source, say, result)
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
