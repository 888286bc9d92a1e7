"""Publishing typed Parquet output (``binlog-model resolve``) on any ``pyarrow.fs`` filesystem, so that a
reader of ours never sees half of a job or of a run: the tree's manifest, a whole job's publish, and the
publish of an incremental run's staged files.

Strategy: ``OUT/_manifest.json`` (``MANIFEST``) lists every committed data file of every table folder. It is
written last, in one write (a local file replaced atomically; one PUT on an object store, which readers see
whole or not at all), so it is the commit point on every filesystem. Our readers (``committed_files``,
``spark.incremental.read_table``) read the files it lists and nothing else.

- A whole job (``publish_job``) on a local disk swaps its staging tree and ``OUT`` in one
  ``renameat2(RENAME_EXCHANGE)``. On an object store (S3, GCS), where a folder cannot be renamed, each
  staged file is moved (copied) into ``OUT`` under a name of its job (``<job>-part-NNNNN.parquet``), the
  manifest naming exactly those files is written, then every file it does not name (the previous job's)
  is deleted. Elsewhere (HDFS) ``OUT`` is moved aside and the staging tree moved in.
- An incremental run (``publish``) moves each staged data file into its table folder under a name starting
  with the run (``run-NNNNNN-part-…``, ``batch-NNNNNNNNN-part-…``), applies the folder moves of renamed
  tables (``MOVES_FILE``), replaces the tables' ``SCHEMA_FILE`` s and writes the manifest with the run's
  files added. It is idempotent: the staged files are listed once (``_publish.json`` in the staging
  folder) and a move whose source is gone was done, so a run killed anywhere in it is finished by the next
  (``runs.commit``).

What a reader that lists files by itself sees (``spark.read.parquet(OUT/db=…/table=…)``): on a local disk,
each data file whole or not at all, and a run's files appearing one by one while it publishes; on an
object store, additionally a job's new files beside the previous job's until the manifest is written and
the old ones are deleted (and both after a publish killed in between, until the next run). Read through
the manifest for a consistent view.
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

from binlog_model.errors import ConfigError
from binlog_model.faults import kill_point
from binlog_model.io.documents import encode_json, fsync_dir, write_bytes_atomic
from binlog_model.sinks.parquet import ATTEMPTS, SCHEMA_FILE, table_folder

__all__ = [
    "MANIFEST",
    "MOVES_FILE",
    "SUCCESS_FILE",
    "check_output",
    "committed_files",
    "drop_attempts",
    "drop_tree",
    "job_staging",
    "prepare_stream_output",
    "publish",
    "publish_job",
    "read_manifest",
    "stage_layout",
    "table_folders",
]

MANIFEST = "_manifest.json"
MANIFEST_FORMAT = "binlog-model/parquet-manifest"
MOVES_FILE = "_moves.json"
SUCCESS_FILE = "_SUCCESS"
_PLAN_FILE = "_publish.json"
_STAGING_MARK = ".resolve-"


# -- documents on any filesystem --------------------------------------------------------------------------

def _local(fs: Any) -> bool:
    import pyarrow.fs as pafs

    return isinstance(fs, pafs.LocalFileSystem)


def _object_store(fs: Any) -> bool:
    """A filesystem without folder renames (S3, GCS): publishing copies files and commits by manifest."""
    return not _local(fs) and getattr(fs, "type_name", "") in ("s3", "gcs")


def _exists(fs: Any, path: str) -> bool:
    import pyarrow.fs as pafs

    return bool(fs.get_file_info(path).type != pafs.FileType.NotFound)


def _read(fs: Any, path: str) -> bytes | None:
    if not _exists(fs, path):
        return None
    with fs.open_input_stream(path) as fh:
        return bytes(fh.read())


def _write(fs: Any, path: str, data: bytes) -> None:
    """``data`` as ``path``, whole or not at all (atomic replace locally; one PUT on an object store)."""
    if _local(fs):
        write_bytes_atomic(Path(path), data)
        return
    fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
    with fs.open_output_stream(path) as fh:
        fh.write(data)


def _files_under(fs: Any, root: str) -> list[str]:
    """Every file under ``root``, as paths relative to it, sorted ([] when ``root`` is absent)."""
    import pyarrow.fs as pafs

    found = fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
    return sorted(i.path[len(root.rstrip("/")) + 1:] for i in found if i.type == pafs.FileType.File)


def _move(fs: Any, src: str, dst: str) -> None:
    fs.create_dir(dst.rsplit("/", 1)[0], recursive=True)
    fs.move(src, dst)


# -- the manifest ------------------------------------------------------------------------------------------

def read_manifest(fs: Any, out: str) -> dict[str, list[str]]:
    """The committed data files of ``out``: table folder (``db=…/table=…``) → file names; {} without one."""
    data = _read(fs, f"{out}/{MANIFEST}")
    if data is None:
        return {}
    doc = json.loads(data)
    if not isinstance(doc, dict) or doc.get("format") != MANIFEST_FORMAT:
        raise ConfigError(f"{out}/{MANIFEST} is not a binlog-model manifest")
    return {folder: list(names) for folder, names in doc["tables"].items()}


def _write_manifest(fs: Any, out: str, tables: Mapping[str, Sequence[str]]) -> None:
    doc = {"format": MANIFEST_FORMAT, "version": 1,
           "tables": {folder: sorted(set(names)) for folder, names in sorted(tables.items()) if names}}
    _write(fs, f"{out}/{MANIFEST}", encode_json(doc))


def committed_files(out: str | os.PathLike[str], db: str, table: str) -> list[str] | None:
    """The committed data files of table ``db.table`` under ``out`` (a local folder or a URI), as full
    names; None when ``out`` has no manifest (written by a version before manifests: list the folder)."""
    from binlog_model.io.files import output_filesystem

    fs, root = output_filesystem(out)
    tables = read_manifest(fs, root)
    if not tables and not _exists(fs, f"{root}/{MANIFEST}"):
        return None
    base = os.fspath(out).rstrip("/")
    folder = table_folder(db, table)
    return [f"{base}/{folder}/{name}" for name in tables.get(folder, [])]


def table_folders(out: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """``(db, table)`` of every table folder (``db=…/table=…``) under ``out``, sorted: the manifest's tables
    and the folders with a ``_schema.ddl`` (a table without committed rows); without a manifest (a tree
    written before manifests), every folder holding a file."""
    from binlog_model.io.files import output_filesystem
    from binlog_model.sinks.parquet import SCHEMA_FILE

    fs, root = output_filesystem(out)
    manifest = read_manifest(fs, root)
    folders = set(manifest)
    for relative in _files_under(fs, root):
        parts = relative.split("/")
        if len(parts) == 3 and parts[0].startswith("db=") and parts[1].startswith("table=") \
                and (parts[2] == SCHEMA_FILE or not manifest):
            folders.add(f"{parts[0]}/{parts[1]}")
    pairs = (folder.split("/") for folder in folders)
    return sorted((db.removeprefix("db="), table.removeprefix("table=")) for db, table in pairs)


def _data_files(relative: Sequence[str]) -> list[str]:
    """The data files (``db=…/table=…/NAME.parquet``) among paths relative to a tree's root."""
    return [p for p in relative if p.startswith("db=") and p.endswith(".parquet") and p.count("/") == 2]


# -- a whole job ---------------------------------------------------------------------------------------------

def job_staging(out: str, job: str) -> str:
    """The staging folder of a job writing ``out`` (a filesystem path): beside it, so renames stay on one
    filesystem."""
    parent, _, name = out.rstrip("/").rpartition("/")
    return f"{parent}/.{name}{_STAGING_MARK}{job}"


def check_output(fs: Any, out: str) -> None:
    """``ConfigError`` when ``out`` holds anything a resolve job did not write (a job replaces the whole
    folder); leftovers of killed jobs beside it are cleaned up (a half-done two-rename publish finished)."""
    import pyarrow.fs as pafs

    parent, _, name = out.rstrip("/").rpartition("/")
    prefix = f".{name}{_STAGING_MARK}"
    info = fs.get_file_info(out)
    if info.type == pafs.FileType.NotFound and not _object_store(fs):
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
               if not (i.base_name.startswith("db=") or i.base_name in (SUCCESS_FILE, MANIFEST))]
    if foreign:
        raise ConfigError(f"--out {out} holds {', '.join(sorted(foreign)[:3])}, which a resolve job did not "
                          "write: the job replaces the whole folder, so give a new or empty directory")


def publish_job(fs: Any, staging: str, out: str) -> None:
    """Make the staging tree ``out`` (see the module's docstring): an exchange on a local disk, files and a
    manifest on an object store, two renames elsewhere."""
    drop_attempts(staging, fs)
    fs.create_dir(staging, recursive=True)          # a job that wrote no table still publishes
    files = _data_files(_files_under(fs, staging))
    if _object_store(fs):
        _publish_job_by_manifest(fs, staging, out, files)
        return
    _write_manifest(fs, staging, _by_folder(files))
    _write(fs, f"{staging}/{SUCCESS_FILE}", b"")
    if not _exists(fs, out):
        fs.create_dir(out.rstrip("/").rpartition("/")[0] or "/", recursive=True)
        fs.move(staging, out)
        return
    if _local(fs) and _exchange(staging, out):
        fs.delete_dir(staging)          # the old tree, now at the staging name
        return
    aside = f"{staging}.old"
    fs.move(out, aside)
    kill_point("publish-aside")
    fs.move(staging, out)
    fs.delete_dir(aside)


def _by_folder(files: Sequence[str]) -> dict[str, list[str]]:
    tables: dict[str, list[str]] = {}
    for path in files:
        folder, _, name = path.rpartition("/")
        tables.setdefault(folder, []).append(name)
    return tables


def _publish_job_by_manifest(fs: Any, staging: str, out: str, files: Sequence[str]) -> None:
    """An object store's publish: the job's files copied in under its name, the manifest, the old files
    deleted, then the staging folder."""
    job = staging.rsplit(_STAGING_MARK, 1)[1]
    published = []
    for path in files:
        folder, _, name = path.rpartition("/")
        target = f"{folder}/{job}-{name}"
        _move(fs, f"{staging}/{path}", f"{out}/{target}")
        kill_point("publish-move")
        published.append(target)
    _write_manifest(fs, out, _by_folder(published))
    kill_point("publish-manifest")
    keep = {*published, MANIFEST}
    for path in _files_under(fs, out):
        if path not in keep:
            fs.delete_file(f"{out}/{path}")
    _write(fs, f"{out}/{SUCCESS_FILE}", b"")
    fs.delete_dir(staging)


def drop_attempts(staging: str, fs: Any = None) -> None:
    """Delete what task attempts left unfinished (failed or lost attempts) under ``staging``."""
    import pyarrow.fs as pafs

    if fs is None:
        fs = pafs.LocalFileSystem()
    if fs.get_file_info(f"{staging}/{ATTEMPTS}").type == pafs.FileType.Directory:
        fs.delete_dir(f"{staging}/{ATTEMPTS}")


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


# -- incremental runs ----------------------------------------------------------------------------------------

def stage_layout(fs: Any, staged: str, schemas: Mapping[tuple[str, str], str],
                 moves: Sequence[tuple[str, str, str, str]]) -> None:
    """Stage each table's ``SCHEMA_FILE`` (``schemas``: (db, table) → Spark DDL) and the renames
    (``moves``: old db, old table, new db, new table) that ``publish`` applies."""
    for (db, table), ddl in schemas.items():
        _write(fs, f"{staged}/{table_folder(db, table)}/{SCHEMA_FILE}", (ddl + "\n").encode("utf-8"))
    pairs = [[table_folder(old_db, old_table), table_folder(db, table)]
             for old_db, old_table, db, table in moves]
    _write(fs, f"{staged}/{MOVES_FILE}", json.dumps(pairs).encode("utf-8"))


def _publish_plan(fs: Any, staged: str) -> dict[str, Any]:
    """What ``staged`` holds to publish, listed once (before the first move) and read back by a rerun."""
    path = f"{staged}/{_PLAN_FILE}"
    data = _read(fs, path)
    if data is not None:
        return dict(json.loads(data))
    relative = _files_under(fs, staged)
    moves = _read(fs, f"{staged}/{MOVES_FILE}")
    plan = {"files": _data_files(relative),
            "schemas": [p.rpartition("/")[0] for p in relative if p.endswith("/" + SCHEMA_FILE)],
            "moves": json.loads(moves) if moves is not None else []}
    _write(fs, path, encode_json(plan))
    return plan


def publish(fs: Any, staged: str, out: str, run: str) -> None:
    """Publish the staged run ``run`` into ``out`` (see the module's docstring); nothing when ``staged`` is
    gone (published and cleaned up)."""
    if not _exists(fs, staged):
        return
    plan = _publish_plan(fs, staged)
    tables = read_manifest(fs, out)
    if not tables and not _exists(fs, f"{out}/{MANIFEST}"):
        tables = _by_folder(_data_files(_files_under(fs, out)))    # a tree from before manifests
    for old, new in plan["moves"]:
        for name in _files_under(fs, f"{out}/{old}"):
            _move(fs, f"{out}/{old}/{name}", f"{out}/{new}/{name}")
        if _exists(fs, f"{out}/{old}"):
            fs.delete_dir(f"{out}/{old}")
        tables.setdefault(new, []).extend(tables.pop(old, []))
    touched: set[str] = set()
    for path in plan["files"]:
        folder, _, name = path.rpartition("/")
        if _exists(fs, f"{staged}/{path}"):
            _move(fs, f"{staged}/{path}", f"{out}/{folder}/{run}-{name}")
            kill_point("publish-move")
        tables.setdefault(folder, []).append(f"{run}-{name}")
        touched.add(folder)
    for folder in plan["schemas"]:
        schema = f"{staged}/{folder}/{SCHEMA_FILE}"
        if tables.get(folder) and _exists(fs, schema):
            _move(fs, schema, f"{out}/{folder}/{SCHEMA_FILE}")
            touched.add(folder)
    if _local(fs):
        for folder in touched:
            fsync_dir(f"{out}/{folder}")
    _write_manifest(fs, out, tables)
    kill_point("publish-manifest")


def drop_tree(fs: Any, folder: str, *, ignore_errors: bool = False) -> None:
    """Delete a folder (a staging area no state commits) and everything in it; nothing when absent.
    ``ignore_errors``: after a commit, a leftover is only clutter the next run's recovery deletes."""
    if _local(fs):
        if os.path.isdir(folder):
            shutil.rmtree(folder, ignore_errors=ignore_errors)
        return
    with contextlib.suppress(*((OSError,) if ignore_errors else ())):
        if _exists(fs, folder):
            fs.delete_dir(folder)


def prepare_stream_output(out: Path, own: frozenset[str]) -> None:
    """Create ``out`` for ``resolve --stream``; ``ConfigError`` when it holds anything but table folders
    (``db=*``), the manifest and the names in ``own`` (the stream's state and staging)."""
    if out.exists() and any(p.name not in own | {MANIFEST} and not p.name.startswith("db=")
                            for p in out.iterdir()):
        raise ConfigError(f"{out} holds other things than resolve --stream tables: give an empty or new "
                          "folder")
    out.mkdir(parents=True, exist_ok=True)
