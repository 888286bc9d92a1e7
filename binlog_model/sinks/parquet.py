"""Per-table Parquet output (``binlog-model resolve``): the folder layout, the writer settings, and the
publishing of an incremental run's staged files.

Strategy: each typed change table goes to ``OUT/db=<db>/table=<table>/`` (Hive-style folder names, so
Spark and other engines read the folder as one table). Timestamps are written as INT64 microseconds,
readable everywhere, not Spark's legacy INT96. The frames are Spark DataFrames, taken as they come: this
module never imports pyspark (only ``spark/`` does). An incremental run writes into a staging folder, then
``publish`` moves each staged data file into its table folder under a name starting with the run
(``run-NNNNNN-part-…``), each move a rename, so a reader sees a file whole or not at all; a table's
``SCHEMA_FILE`` (the Spark DDL that reads every run's files) replaces the old one, and ``MOVES_FILE`` lists
the folders a rename retired, whose files follow the table to its new folder. ``publish`` is idempotent:
what is already moved is not found again, so a run killed while publishing is finished by the next one.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from binlog_model.io.documents import fsync_dir

__all__ = ["MOVES_FILE", "SCHEMA_FILE", "SPARK_SETTINGS", "configure", "publish", "stage_layout",
           "table_folder", "write_table"]

SCHEMA_FILE = "_schema.ddl"
MOVES_FILE = "_moves.json"
# Spark settings of the Parquet writer: timestamps as INT64 microseconds.
SPARK_SETTINGS = {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"}


def table_folder(db: str, table: str) -> str:
    """The relative folder of one table: ``db=<db>/table=<table>``."""
    return f"db={db}/table={table}"


def configure(spark: Any) -> None:
    """Apply ``SPARK_SETTINGS`` to a Spark session before writing."""
    for key, value in SPARK_SETTINGS.items():
        spark.conf.set(key, value)


def write_table(frame: Any, out: str | os.PathLike[str], db: str, table: str) -> str:
    """Write a Spark DataFrame as the Parquet files of ``db.table`` under ``out`` (a local path or any URI
    Spark's writer accepts), replacing what the folder held; returns the folder."""
    target = f"{os.fspath(out).rstrip('/')}/{table_folder(db, table)}"
    frame.write.mode("overwrite").parquet(target)
    return target


def stage_layout(staged: Path, schemas: Mapping[tuple[str, str], str],
                 moves: Sequence[tuple[str, str, str, str]]) -> None:
    """Stage each table's ``SCHEMA_FILE`` (``schemas``: (db, table) → Spark DDL) and the renames
    (``moves``: old db, old table, new db, new table) that ``publish`` applies."""
    for (db, table), ddl in schemas.items():
        folder = staged / table_folder(db, table)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / SCHEMA_FILE).write_text(ddl + "\n", encoding="utf-8")
    pairs = [[table_folder(old_db, old_table), table_folder(db, table)]
             for old_db, old_table, db, table in moves]
    (staged / MOVES_FILE).write_text(json.dumps(pairs), encoding="utf-8")


def publish(staged: Path, out: Path, run: str) -> None:
    """Move every data file of ``staged`` into the same table folder under ``out`` (named ``<run>-…``),
    the schema files over the old ones, and the files of renamed tables' old folders to the new ones."""
    if not staged.is_dir():
        return
    moves_file = staged / MOVES_FILE
    for old, new in json.loads(moves_file.read_text()) if moves_file.exists() else []:
        source, target = out / old, out / new
        if source.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            for path in sorted(source.glob("*.parquet")):
                os.replace(path, target / path.name)
            shutil.rmtree(source)
    for path in sorted(staged.rglob("*.parquet")):
        folder = out / path.parent.relative_to(staged)
        folder.mkdir(parents=True, exist_ok=True)
        os.replace(path, folder / f"{run}-{path.name}")
        fsync_dir(folder)
    for path in sorted(staged.rglob(SCHEMA_FILE)):
        folder = out / path.parent.relative_to(staged)
        if any(folder.glob("*.parquet")):
            os.replace(path, folder / SCHEMA_FILE)
