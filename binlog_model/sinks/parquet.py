"""Per-table Parquet output (``binlog-model resolve``): the folder layout, the writer settings, the files
Spark tasks write with pyarrow, the atomic publishing of a job, and the publishing of an incremental run's
staged files.

Strategy: each typed change table goes to ``OUT/db=<db>/table=<table>/`` (Hive-style folder names, so
Spark and other engines read the folder as one table). Timestamps are written as INT64 microseconds,
readable everywhere, not Spark's legacy INT96. The frames are Spark DataFrames, taken as they come: this
module never imports pyspark (only ``spark/`` does). An incremental run writes into a staging folder, then
``publish`` moves each staged data file into its table folder under a name starting with the run
(``run-NNNNNN-part-…``), each move a rename, so a reader sees a file whole or not at all; a table's
``SCHEMA_FILE`` (the Spark DDL that reads every run's files) replaces the old one, and ``MOVES_FILE`` lists
the folders a rename retired, whose files follow the table to its new folder. ``publish`` is idempotent:
what is already moved is not found again, so a run killed while publishing is finished by the next one.

A job (``binlog-model resolve`` without a state) writes into a staging folder beside ``OUT``
(``.OUT.resolve-<job>``): each task writes its files under ``_attempts/<partition>-<attempt>/`` and commits
them by renaming each into its table folder (``part-<partition>.parquet``: a retried task writes the same
file again); ``publish_job`` then swaps the staging folder and ``OUT`` in one ``renameat2(RENAME_EXCHANGE)``
and deletes the old tree, so ``OUT`` holds the previous tables or the new ones, never a mix. Where the
filesystem cannot exchange (another OS, an object store), ``OUT`` is moved aside and the new tree moved in:
two renames on a local disk (a run killed between them leaves ``OUT`` absent and both trees beside it;
the next run puts the new one in place), a copy on an object store (not atomic: a reader during the copy
can see a mix).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from binlog_model.io.documents import fsync_dir

__all__ = ["MOVES_FILE", "SCHEMA_FILE", "SPARK_SETTINGS", "TableFile", "check_output", "configure",
           "drop_attempts", "drop_tree", "job_staging", "publish", "publish_job", "stage_layout",
           "table_folder", "table_schema", "write_empty", "write_table"]

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


# -- files written by tasks (pyarrow), a job published atomically -------------------------------------------

_STAGING_MARK = ".resolve-"
_ATTEMPTS = "_attempts"
SUCCESS_FILE = "_SUCCESS"
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
        self.temp = f"{staging}/{_ATTEMPTS}/{attempt}/{self.relative}"
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


def job_staging(out: str, job: str) -> str:
    """The staging folder of a job writing ``out`` (a filesystem path): beside it, so renames stay on one
    filesystem."""
    parent, _, name = out.rstrip("/").rpartition("/")
    return f"{parent}/.{name}{_STAGING_MARK}{job}"


def check_output(fs: Any, out: str) -> None:
    """``ConfigError`` when ``out`` holds anything a resolve job did not write (a job replaces the whole
    folder); leftovers of killed jobs beside it are cleaned up (a half-done two-rename publish finished)."""
    import pyarrow.fs as pafs

    from binlog_model.errors import ConfigError

    parent, _, name = out.rstrip("/").rpartition("/")
    prefix = f".{name}{_STAGING_MARK}"
    info = fs.get_file_info(out)
    if info.type == pafs.FileType.NotFound:
        stale = [i for i in fs.get_file_info(pafs.FileSelector(parent or "/", allow_not_found=True))
                 if i.base_name.startswith(prefix)]
        done = [i for i in stale if not i.base_name.endswith(".old")
                and fs.get_file_info(f"{i.path}/{SUCCESS_FILE}").type == pafs.FileType.File]
        if done:        # killed between the two renames of a publish: the new tree goes in place
            fs.move(sorted(done, key=lambda i: i.path)[-1].path, out)
        info = fs.get_file_info(out)
    for stale_info in fs.get_file_info(pafs.FileSelector(parent or "/", allow_not_found=True)):
        if stale_info.base_name.startswith(prefix):
            fs.delete_dir(stale_info.path)
    if info.type == pafs.FileType.File:
        raise ConfigError(f"--out {out} is a file: give a directory for the tables")
    if info.type != pafs.FileType.Directory:
        return
    foreign = [i.base_name for i in fs.get_file_info(pafs.FileSelector(out))
               if not (i.base_name.startswith("db=") or i.base_name == SUCCESS_FILE)]
    if foreign:
        raise ConfigError(f"--out {out} holds {', '.join(sorted(foreign)[:3])}, which a resolve job did not "
                          "write: the job replaces the whole folder, so give a new or empty directory")


def publish_job(fs: Any, staging: str, out: str) -> None:
    """Make the staging tree ``out``: one atomic exchange where the filesystem has it, then the old tree
    is deleted (see the module's docstring)."""
    import pyarrow.fs as pafs

    drop_attempts(staging, fs)
    fs.create_dir(staging, recursive=True)          # a job that wrote no table still publishes
    with fs.open_output_stream(f"{staging}/{SUCCESS_FILE}") as fh:
        fh.write(b"")
    exists = fs.get_file_info(out).type != pafs.FileType.NotFound
    if not exists:
        fs.create_dir(out.rstrip("/").rpartition("/")[0] or "/", recursive=True)
        fs.move(staging, out)
        return
    if isinstance(fs, pafs.LocalFileSystem) and _exchange(staging, out):
        fs.delete_dir(staging)          # the old tree, now at the staging name
        return
    aside = f"{staging}.old"
    fs.move(out, aside)
    fs.move(staging, out)
    fs.delete_dir(aside)


def drop_attempts(staging: str, fs: Any = None) -> None:
    """Delete what task attempts left unfinished (failed or lost attempts) under ``staging``."""
    import pyarrow.fs as pafs

    if fs is None:
        fs = pafs.LocalFileSystem()
    if fs.get_file_info(f"{staging}/{_ATTEMPTS}").type == pafs.FileType.Directory:
        fs.delete_dir(f"{staging}/{_ATTEMPTS}")


def _exchange(a: str, b: str) -> bool:
    """Swap two paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``); False where unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    done = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    if done == 0:
        fsync_dir(Path(b).parent)
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EXDEV, errno.ENOTSUP):
        return False
    raise OSError(err, f"cannot publish {a} as {b}: {os.strerror(err)}")


def drop_tree(folder: Path, *, ignore_errors: bool = False) -> None:
    """Delete a local folder (a staging area no state commits) and everything in it; nothing when absent.
    ``ignore_errors``: after a commit, a leftover is only clutter the next run's recovery deletes."""
    if folder.is_dir():
        shutil.rmtree(folder, ignore_errors=ignore_errors)


def table_schema(folder: str | os.PathLike[str]) -> str | None:
    """The Spark DDL of a table folder's ``SCHEMA_FILE`` (what incremental runs stage), None without one."""
    path = Path(folder) / SCHEMA_FILE
    return path.read_text(encoding="utf-8").strip() if path.exists() else None


def prepare_stream_output(out: Path, own: frozenset[str]) -> None:
    """Create ``out`` for ``resolve --stream``; ``ConfigError`` when it holds anything but table folders
    (``db=*``) and the names in ``own`` (the stream's state and staging)."""
    from binlog_model.errors import ConfigError

    if out.exists() and any(p.name not in own and not p.name.startswith("db=") for p in out.iterdir()):
        raise ConfigError(f"{out} holds other things than resolve --stream tables: give an empty or new "
                          "folder")
    out.mkdir(parents=True, exist_ok=True)
