"""One task of ``binlog-model resolve``: a slice → the typed Parquet files of every table it meets.

Strategy: the task decodes its slice with the shipped history (``reading.decode_slice``: the same slicing,
resume and schema-at-position as the ``mysql-binlog`` source; without the statement-text events, whose
text no typed table holds) and routes each serialized event by its logged
name (read from its header, ``wire_views.event_header``: its rows are counted, not parsed) to the table
lineages that own the name (``typed.table_lineages``, computed once per Python worker from the shipped
history). Each table buffers its events' bytes; when a table holds ``TABLE_ROWS`` rows or all
tables together ``BUFFER_BYTES`` bytes (the largest is flushed), its events become typed Arrow columns in bulk
(``typed_arrow.typed_batch``; for the tables the C code types, from raw row images instead of built
``Row``s: ``compiled_rows.RawImages``) and one Parquet row group (``sinks.parquet.TableFile``, pyarrow, any
``pyarrow.fs`` filesystem). A task's memory is therefore bounded by those constants and by one transaction
of its slice, not by the slice, and never by the archive; nothing goes through the JVM's rows. At the end
the task commits its files (one rename each into the job's staging tree) and returns a small result: the
files, the change rows per logged name and operation (the summary), the typed rows per table and
operation, and, for names no lineage owns (lenient DDL), their column names. Those tables are written in a
second pass (``untyped``: every column name the whole job saw, so all their files have one schema).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.compiled import speedups
from binlog_model.resolve.compiled_rows import RawImages, RawImagesRefused
from binlog_model.sinks.parquet import TableFile
from binlog_model.spark.partitions import Slice
from binlog_model.spark.reading import ReadOptions, decode_slice, prepare_worker, shipped_history
from binlog_model.spark.typed import TableLineage, table_lineages, typed_schema, untyped_lineage
from binlog_model.spark.typed_arrow import compiled_typing, typed_batch
from binlog_model.spark.value_json import OPERATIONS
from binlog_model.spark.wire_views import EventHeader, event_header

__all__ = ["BUFFER_BYTES", "TABLE_ROWS", "SliceTask", "slice_label", "write_slice"]

# A table's events are typed and written as one row group when it holds this many rows ...
TABLE_ROWS = 131_072
# ... or, when the events of all tables buffered in a task hold this many bytes, the largest table's are.
# (16 MiB, not 48: the same CPU in an A/B of six 64 MB slices, 5.97 against 6.15 s, and a worker's peak
# RSS 218 MB instead of 330 MB.)
BUFFER_BYTES = 16 << 20

_SCHEMA = pb.BinlogEvent.SCHEMA


@dataclass(frozen=True)
class SliceTask:
    """What one Spark task gets: its slice (``partition``: its place in the job), the packed history, the
    reader options, the staging folder (``fs_uri``: a local path or a URI) and the job id. ``untyped``:
    the second pass, writing only these tables (name → every column name the job saw)."""

    partition: int
    piece: Slice
    history: bytes
    options: ReadOptions
    staging: str
    job: str
    untyped: dict[tuple[str, str], list[str]] | None = None


@dataclass
class SliceResult:
    partition: int
    files: list[tuple[str, str, str, int]] = field(default_factory=list)     # db, table, path, rows
    logged: dict[tuple[str, str, str], int] = field(default_factory=dict)    # (db, table, op) → rows
    typed: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)
    untyped: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    seconds: float = 0.0


def slice_label(piece: Slice) -> str:
    """``binlog.000004@268435456``: how a message names a slice."""
    return f"{os.path.basename(piece.path.rstrip('/'))}@{piece.start}"


# Per worker, from the shipped history: the lineages, those that own each logged name, and the names whose
# every owner the C code types (their rows come as raw row images).
_Lineages = tuple[dict[tuple[str, str], TableLineage], dict[tuple[str, str], list[TableLineage]],
                  frozenset[tuple[str, str]]]
_LINEAGES: dict[bytes, _Lineages] = {}


def _lineages(packed: bytes) -> _Lineages:
    """The lineages of the shipped history, per logged name those that own it, and the names typed from raw
    row images (once per worker)."""
    found = _LINEAGES.get(packed)
    if found is None:
        lineages = table_lineages(shipped_history(packed))
        owners: dict[tuple[str, str], list[TableLineage]] = {}
        for lineage in lineages.values():
            for name in lineage.logged_names:
                owners.setdefault(name, []).append(lineage)
        raw = frozenset(name for name, owning in owners.items()
                        if all(compiled_typing(typed_schema(lineage)[1], lineage) for lineage in owning)
                        ) if hasattr(speedups, "row_images") else frozenset()
        _LINEAGES.clear()
        found = _LINEAGES[packed] = (lineages, owners, raw)
    return found


class _Table:
    """One output table in one task: its buffered events and its file."""

    def __init__(self, lineage: TableLineage) -> None:
        self.lineage = lineage
        self.schema = typed_schema(lineage)[1]
        self.payloads: list[bytes] = []
        self.headers: list[EventHeader] = []    # their headers, read once by the task
        self.rows = 0
        self.bytes = 0
        self.file: TableFile | None = None
        self.counts: dict[str, int] = {}
        # The raw row images' contexts when the C code types this table (its events may hold such rows).
        self.contexts: list[tuple[Any, bytes]] | None = None


class _Writer:
    def __init__(self, task: SliceTask, fs: Any, staging: str, raw: RawImages | None) -> None:
        from pyspark import TaskContext

        context = TaskContext.get()
        attempt = context.attemptNumber() if context is not None else 0
        self.task = task
        self.fs = fs
        self.staging = staging
        self.attempt = f"{task.partition:05d}-{attempt}"
        self.tables: dict[tuple[str, str], _Table] = {}
        self.buffered = 0
        self.raw = raw
        # pyarrow encodes and compresses a row group without the GIL: one thread writes it while the task
        # decodes on. At most one write waits, so a task holds at most one row group more.
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="binlog-model-parquet")
        self._pending: Future[None] | None = None

    def add(self, lineage: TableLineage, payload: bytes, header: EventHeader, rows: int) -> None:
        key = (lineage.db, lineage.table)
        table = self.tables.get(key)
        if table is None:
            table = self.tables[key] = _Table(lineage)
            if self.raw is not None and compiled_typing(table.schema, lineage):
                table.contexts = self.raw.contexts
        table.payloads.append(payload)
        table.headers.append(header)
        table.rows += rows
        table.bytes += len(payload)
        self.buffered += len(payload)
        if table.rows >= TABLE_ROWS:
            self.flush(table)
        elif self.buffered >= BUFFER_BYTES:
            self.flush(max(self.tables.values(), key=lambda t: t.bytes))

    def flush(self, table: _Table) -> None:
        if not table.payloads:
            return
        batches = typed_batch(table.payloads, table.lineage, table.schema, table.headers, table.contexts)
        self.buffered -= table.bytes
        table.payloads, table.headers, table.rows, table.bytes = [], [], 0, 0
        rows = pa.Table.from_batches(batches, table.schema)
        if not rows.num_rows:
            return
        for item in pc.value_counts(rows.column("binlog_operation")).to_pylist():
            table.counts[item["values"]] = table.counts.get(item["values"], 0) + item["counts"]
        if table.file is None:
            table.file = TableFile(self.fs, self.staging, self.attempt, table.lineage.db, table.lineage.table,
                                   self.task.partition, table.schema)
        self._drain()
        self._pending = self._pool.submit(table.file.write, rows)

    def _drain(self) -> None:
        """Wait for the write in flight (its error, if it failed, is raised here)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def finish(self, result: SliceResult) -> None:
        for table in self.tables.values():
            self.flush(table)
        self._drain()
        self._pool.shutdown()
        for key, table in self.tables.items():
            if table.counts:
                result.typed[key] = table.counts
            if table.file is not None:
                result.files.append((key[0], key[1], table.file.commit(), table.file.rows))

    def abort(self) -> None:
        with contextlib.suppress(Exception):
            self._drain()
        self._pool.shutdown()
        for table in self.tables.values():
            if table.file is not None:
                table.file.abort()


def write_slice(task: SliceTask, *, raw_images: bool = True) -> SliceResult:
    """The Spark task (``rdd.map``): decode, type, write and commit one slice; the small result.
    ``raw_images``: type the rows of the tables the C code types from their raw row images
    (``compiled_rows.RawImages``); where those meet what only built rows handle, the slice runs again
    without them (same result)."""
    from binlog_model.io.files import output_filesystem

    prepare_worker()
    started = time.monotonic()
    _fault(task)
    fs, staging = output_filesystem(task.staging)
    _lineages_all, owners, raw_tables = _lineages(task.history)
    untyped = task.untyped
    only = {k: untyped_lineage(k[0], k[1], names) for k, names in untyped.items()} if untyped else None
    raw = RawImages(raw_tables) if raw_images and only is None else None
    try:
        result = _write(task, fs, staging, owners, only, raw)
    except RawImagesRefused:
        result = _write(task, fs, staging, owners, only, None)
    result.seconds = time.monotonic() - started
    if _fault(task, after=True):
        result.untyped[("", "")] = ["x" * (768 << 20)]
    return result


def _write(task: SliceTask, fs: Any, staging: str, owners: dict[tuple[str, str], list[TableLineage]],
           only: dict[tuple[str, str], TableLineage] | None, raw: RawImages | None) -> SliceResult:
    result = SliceResult(task.partition)
    writer = _Writer(task, fs, staging, raw)
    logged = result.logged
    seen: dict[tuple[str, str], dict[str, None]] = {}
    try:
        for payload in decode_slice(task.piece, task.history, task.options, without_text=True, raw=raw):
            event = event_header(payload)
            name = (event.db, event.table)
            rows = event.rows
            op = event.operation
            key = (name[0], name[1], OPERATIONS[op])
            logged[key] = logged.get(key, 0) + (rows or 1)
            if op == _SCHEMA:
                continue
            if only is not None:
                lineage = only.get(name)
                if lineage is not None:
                    writer.add(lineage, payload, event, rows or 1)
                continue
            found = owners.get(name)
            if found is None:
                names = seen.setdefault(name, {})
                for row in pb.BinlogEvent.FromString(payload).rows:
                    for column in (*row.after, *row.before):
                        names.setdefault(column.name)
                continue
            for lineage in found:
                writer.add(lineage, payload, event, rows or 1)
        writer.finish(result)
    except BaseException:
        writer.abort()
        raise
    result.untyped = {name: list(names) for name, names in seen.items()}
    return result


def slice_bytes(piece: Slice) -> int:
    """A slice's bytes, for the progress display (to the file's end: its stored size)."""
    from binlog_model.io.files import binlog_size

    return (piece.end if piece.end is not None else max(piece.start, binlog_size(piece.path))) - piece.start


def write_counted(item: tuple[SliceTask, int], counts: Any) -> SliceResult:
    """``write_slice`` of ``item``'s task, then its slice's bytes (``item[1]``) and row changes added to the
    job's ``counts`` accumulator (``PairSum``), which the driver's progress display reads."""
    task, size = item
    result = write_slice(task)
    counts.add((size, sum(n for (_db, _table, op), n in result.logged.items() if op != "SCHEMA")))
    return result


class PairSum:
    """The accumulator parameter of ``write_counted``'s counts: pairs of integers, added element-wise
    (pyspark's ``AccumulatorParam`` protocol: ``zero`` and ``addInPlace``)."""

    def zero(self, value: tuple[int, int]) -> tuple[int, int]:
        return (0, 0)

    def addInPlace(self, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
        return (a[0] + b[0], a[1] + b[1])


def iter_results(tasks: list[SliceTask]) -> Iterator[SliceResult]:
    """The tasks run in this process, one after the other (tests and tools without Spark)."""
    for task in tasks:
        yield write_slice(task)


def _fault(task: SliceTask, *, after: bool = False) -> bool:
    """Test hook: ``BINLOG_MODEL_TEST_FAULT=<kind>:<partition>`` makes that task fail as a real failure
    would (``exit``: the Python worker dies; ``memory``: it runs out of memory; ``jvm``: its result is too
    big for the JVM's heap), so the tests can check the one-line message the command prints. Unset in any
    real run."""
    spec = os.environ.get("BINLOG_MODEL_TEST_FAULT", "")
    kind, _, where = spec.partition(":")
    if not spec or str(task.partition) != where:
        return False
    if kind == "exit" and not after:
        os._exit(137)
    if kind == "memory" and not after:
        raise MemoryError()
    return kind == "jvm" and after
