"""Per-table Parquet output (``binlog-model resolve``): the folder layout, the writer settings and the files
Spark tasks write with pyarrow. Publishing them is ``sinks.publish``'s.

Strategy: each typed change table goes to ``OUT/db=<db>/table=<table>/`` (Hive-style folder names, so
Spark and other engines read the folder as one table). Timestamps are written as INT64 microseconds,
readable everywhere, not Spark's legacy INT96. The frames are Spark DataFrames, taken as they come: this
module never imports pyspark (only ``spark/`` does). A task writes each file under
``<staging>/_attempts/<partition>-<attempt>/`` and commits it by moving it into its table folder of the
staging tree (``part-<partition>.parquet``: a retried task writes the same file again). A table's
``SCHEMA_FILE`` holds the Spark DDL that reads every incremental run's files of the folder.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

__all__ = ["ATTEMPTS", "SCHEMA_FILE", "SPARK_SETTINGS", "TableFile", "configure", "table_folder",
           "table_schema", "write_empty", "write_table"]

SCHEMA_FILE = "_schema.ddl"
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


# -- files written by tasks (pyarrow) ------------------------------------------------------------------------

ATTEMPTS = "_attempts"
# Parquet as Spark writes it: snappy; timestamps are INT64 microseconds (the Arrow types are microseconds).
_WRITER_OPTIONS: dict[str, Any] = {"compression": "snappy"}


class TableFile:
    """One Parquet file of one table written by one task attempt, committed into the job's staging tree.

    ``write`` takes Arrow tables of the table's schema (each call one row group); ``commit`` closes the
    file and renames it from the attempt's folder to ``<staging>/db=…/table=…/part-<partition>.parquet``."""

    def __init__(self, fs: Any, staging: str, attempt: str, db: str, table: str, partition: int,
                 schema: Any) -> None:
        import pyarrow.parquet as pq

        self.fs = fs
        name = f"part-{partition:05d}.parquet"
        self.relative = f"{table_folder(db, table)}/{name}"
        self.temp = f"{staging}/{ATTEMPTS}/{attempt}/{self.relative}"
        self.final = f"{staging}/{self.relative}"
        fs.create_dir(self.temp.rsplit("/", 1)[0], recursive=True)
        self.rows = 0
        self._writer = pq.ParquetWriter(self.temp, schema, filesystem=fs, **_WRITER_OPTIONS)

    def write(self, table: Any) -> None:
        self._writer.write_table(table)
        self.rows += table.num_rows

    def commit(self) -> str:
        """Close and move into the table folder; the path relative to the staging folder."""
        self._writer.close()
        self.fs.create_dir(self.final.rsplit("/", 1)[0], recursive=True)
        self.fs.move(self.temp, self.final)
        return self.relative

    def abort(self) -> None:
        with contextlib.suppress(Exception):
            self._writer.close()


def write_empty(fs: Any, staging: str, db: str, table: str, schema: Any) -> str:
    """An empty file with ``schema`` for a table that got no rows (its folder then reads with its types)."""
    import pyarrow.parquet as pq

    relative = f"{table_folder(db, table)}/part-empty.parquet"
    fs.create_dir(f"{staging}/{table_folder(db, table)}", recursive=True)
    pq.write_table(schema.empty_table(), f"{staging}/{relative}", filesystem=fs, **_WRITER_OPTIONS)
    return relative


def table_schema(folder: str | os.PathLike[str]) -> str | None:
    """The Spark DDL of a table folder's ``SCHEMA_FILE`` (what incremental runs stage), None without one."""
    path = Path(folder) / SCHEMA_FILE
    return path.read_text(encoding="utf-8").strip() if path.exists() else None
