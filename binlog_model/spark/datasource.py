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

import json
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from binlog_model.errors import ConfigError
from binlog_model.io.documents import load_json, write_text
from binlog_model.io.snapshots import load_snapshot
from binlog_model.position import file_sequence
from binlog_model.spark.arrow_batch import ARROW_SCHEMA
from binlog_model.spark.partitions import (
    FileScan,
    Slice,
    build_history,
    expand_paths,
    plan_slices,
    scan_files,
)
from binlog_model.spark.reading import ReadOptions, SlicePartition, pack_history, prepare_worker, read_slice
from binlog_model.spark.streaming import TASKS_DDL, BinlogStreamReader
from schema_tracker.history import SchemaHistory

__all__ = ["ARROW_SCHEMA", "SCHEMA_DDL", "BinlogDataSource", "BinlogReader", "load_plan", "plan", "save_plan"]

# The row schema is stated once, as Arrow (``arrow_batch.ARROW_SCHEMA``, what the readers build); Spark's
# DDL of it is derived, with every name quoted (``table`` is a keyword).
SCHEMA_DDL = ", ".join(f"`{field.name}` {field.dataType.simpleString()}"
                       for field in from_arrow_schema(ARROW_SCHEMA).fields)

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
        return [SlicePartition(piece, packed) for piece in slices]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, SlicePartition)
        prepare_worker()
        yield from read_slice(partition.piece, partition.history, self.options)


class BinlogDataSource(DataSource):
    """``spark.read.format("mysql-binlog")``: options in docs/spark.md."""

    @classmethod
    def name(cls) -> str:
        return "mysql-binlog"

    def schema(self) -> str:
        if self.options.get("_output") == "tasks":     # resolve --stream's plan rows (spark.stream_resolve)
            return TASKS_DDL
        return SCHEMA_DDL

    def reader(self, schema: StructType) -> DataSourceReader:
        return BinlogReader(ReadOptions.parse(dict(self.options)))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """``spark.readStream.format("mysql-binlog")``: ``binlog_model.spark.streaming``."""
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
           "slices": [s.to_json() for s in slices]}
    write_text(path, json.dumps(doc))


def load_plan(path: str, files: Sequence[str]) -> tuple[dict[str, Any], list[Slice]]:
    """The history document and slices saved by ``save_plan``; ``ConfigError`` when the file is not a plan
    or was made for other files than ``files`` (the reader's, in binlog order)."""
    doc = load_json(path, f"the planFile {path!r} of the mysql-binlog reader")
    if not isinstance(doc, dict) or doc.get("format") != _PLAN_FORMAT:
        raise ConfigError(f"mysql-binlog: planFile {path!r} is not a plan written by save_plan")
    if doc["files"] != list(files):
        raise ConfigError(f"mysql-binlog: planFile {path!r} was planned for other files "
                          f"({len(doc['files'])} files, this read has {len(files)})")
    slices = [Slice.from_json(s) for s in doc["slices"]]
    return doc["history"], slices
