"""``resolve --state DIR``: incremental Spark runs that append Parquet files to the table folders.

Strategy: the same ``RunState`` as ``events --state`` (``binlog_model.io.state``). Planning reads only what is
new: ``io.file_source.FileSource.plan`` gives each file's start offset (checked against the state as ``events
--state`` checks it), the DDL pre-pass scans the files and keeps the events from there on, the history
continues the state's, and the first slice of a resumed file starts at the saved offset
(``BinlogDecoder.resume`` with the file's FORMAT_DESCRIPTION). A run writes its typed tables into
``OUT/_staging/run-NNNNNN/``, stages each table's schema file and the folder moves of renamed tables, records
what it read in the state and commits by ``runs.commit`` (the state with its commit marker, then the files
moved into ``OUT/db=…/table=…/`` as ``run-NNNNNN-part-…`` and the manifest, ``sinks.publish``). Resolve runs
read closed files: a file whose last transaction is not complete fails the run before anything is
committed."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from binlog_model.errors import ConfigError
from binlog_model.io.file_source import FileSource, FileStart
from binlog_model.io.files import base_name
from binlog_model.io.state import RunState
from binlog_model.runs.commit import StagedOutput
from binlog_model.runs.runner import resume_of
from binlog_model.runs.source import Position
from binlog_model.runs.transactions import GtidRecorder
from binlog_model.sinks.parquet import SCHEMA_FILE, table_folder, table_schema
from binlog_model.sinks.publish import committed_files, stage_layout, table_folders
from binlog_model.spark.partitions import FileScan, Slice, build_history, plan_slices, scan_files
from schema_tracker.history import SchemaHistory

__all__ = ["SCHEMA_FILE", "commit_and_publish", "plan_from_state", "read_table", "read_tables", "run_name",
           "stage_schemas"]


def run_name(state: RunState) -> str:
    """The name of the run that continues ``state``: its staging folder and its files' prefix."""
    return f"run-{state.runs + 1:06d}"


def plan_from_state(state: RunState, files: Sequence[Path], first_history: SchemaHistory, *,
                    verify_checksum: bool, slice_bytes: int, min_slices: int
                    ) -> tuple[SchemaHistory, list[Slice], list[FileScan], list[FileStart]]:
    """History and slices for what is new in ``files`` since ``state``."""
    starts = FileSource(files).plan(resume_of(state))
    scans = scan_files([s.path for s in starts], verify_checksum=verify_checksum)
    cut: list[FileScan] = []
    for begin, scan in zip(starts, scans, strict=True):
        if begin.offset:
            scan = replace(scan, events=tuple(e for e in scan.events if e.header.offset >= begin.offset),
                           tx_starts=tuple(t for t in scan.tx_starts if t >= begin.offset))
        cut.append(scan)
    history = SchemaHistory.from_json(state.history) if state.history is not None else first_history
    history = build_history(cut, history=history)
    slices: list[Slice] = []
    for piece in plan_slices(cut, slice_bytes=slice_bytes, min_slices=min_slices):
        offset = starts[piece.file_index].offset
        if piece.end is not None and piece.end <= offset:
            continue
        if piece.start < offset:
            fde = starts[piece.file_index].format_description
            piece = replace(piece, start=offset, format_description=fde)
        if piece.end is None or piece.end > piece.start:
            slices.append(piece)
    return history, slices, cut, starts


def commit_and_publish(state: RunState, out: StagedOutput, run: str, history: SchemaHistory,
                       scans: Sequence[FileScan]) -> None:
    """Record what the run read in ``state`` (position, files, GTIDs, history), then commit and publish the
    staged run (``runs.commit``)."""
    stage_schemas(out, run, history)
    if scans:
        last = scans[-1]
        state.position = Position(base_name(last.path), last.end, last.format_description).to_json()
    recorder = GtidRecorder(state.gtids)
    for scan in scans:
        state.files[base_name(scan.path)] = scan.end
        recorder.see_all(scan.events)
    recorder.record()
    state.history = history.to_json()
    state.runs += 1
    out.commit(state, run)


def stage_schemas(out: StagedOutput, run: str, history: SchemaHistory) -> None:
    """Stage each table's current typed schema (``SCHEMA_FILE``: the Spark DDL that holds every run's
    files, since a later run may have widened a type) and the folders a rename retired."""
    from binlog_model.spark.typed import table_lineages, typed_schema

    lineages = table_lineages(history)
    moves: list[tuple[str, str, str, str]] = []
    for (db, table), lineage in lineages.items():
        for old_db, old_table in lineage.logged_names:
            if (old_db, old_table) != (db, table) and (old_db, old_table) not in lineages:
                # Renamed: earlier runs' files of the old name follow the table to its new folder.
                moves.append((old_db, old_table, db, table))
    schemas = {key: typed_schema(lineage)[0] for key, lineage in lineages.items()}
    stage_layout(out.fs, out.staging_path(run), schemas, moves)


def read_table(spark: Any, folder: str | os.PathLike[str]) -> Any:
    """A table folder (``OUT/db=…/table=…``, local or a URI) written by resolve as one DataFrame: the files
    ``OUT``'s manifest commits (``sinks.publish``; every file of the folder for a tree without one), read
    with the folder's ``SCHEMA_FILE`` (runs before a type was widened wrote the narrower type; Spark's
    mergeSchema cannot merge int and bigint)."""
    name = os.fspath(folder).rstrip("/")
    root, db_part, table_part = name.rsplit("/", 2)
    files = committed_files(root, db_part.removeprefix("db="), table_part.removeprefix("table="))
    schema = table_schema(folder)
    reader = spark.read
    if schema is not None:
        reader = reader.schema(schema)
    if files is None:
        return reader.parquet(name)
    if not files:
        if schema is None:
            raise ConfigError(f"{name} has no committed files")
        return spark.createDataFrame([], schema)
    return reader.parquet(*files)


def read_tables(spark: Any, out: str | os.PathLike[str]) -> dict[tuple[str, str], Any]:
    """Every table of a resolve output ``out`` (local or a URI) as its own DataFrame, keyed ``(db, table)``
    in name order, each read as ``read_table`` reads it (its committed files, its own schema).

    Use this rather than ``spark.read.parquet(out)`` over the tree: Spark takes the schema of one file
    there, so every table would come back with one table's columns."""
    base = os.fspath(out).rstrip("/")
    return {(db, table): read_table(spark, f"{base}/{table_folder(db, table)}")
            for db, table in table_folders(out)}


def summary_options(options: dict[str, Any]) -> dict[str, Any]:
    """The resolve options that shape the output (compared with the state's)."""
    return {k: options[k] for k in ("source", "always_include", "lenient_ddl", "out") if k in options}
