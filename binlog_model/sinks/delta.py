"""The replica's Delta tables: ``ROOT/<db>/<table>``, one Delta table per source table, written with
``deltalake`` (delta-rs, no JVM).

Exactly once: every commit carries ``Transaction(app_id, version)``, where ``version`` is the binlog
position order (``layout.position_order``) everything before which is applied to that table, and custom
metadata with the position (``binlog_model.position``) and the run's GTIDs (``binlog_model.gtids``). A run
that resumes from an older state reads a table's ``transaction_version`` and skips the changes before it:
a commit that landed in Delta but not in the state is never applied twice.

DROP TABLE moves the table's folder to ``ROOT/_dropped/<db>/<table>@<order>`` (its history is kept; a table
created again under the name starts a new one); RENAME TABLE moves it to the new name and leaves a marker
``ROOT/_renamed/<db>/<table>@<order>``. Both tell a resumed run that changes of the old name before that
order are done (``gone_at``). ``ROOT/_binlog_model.json`` names the app id that owns the tables: a target
that another state writes is refused.

ROOT is a local folder or an object store URI (``s3://bucket/replica``, any ``pyarrow.fs`` filesystem).
The folder work (the owner file, listing, moving a dropped or renamed table) goes through ``pyarrow.fs``; a
move on an object store is a copy, then a delete, which a run killed in between repeats. On S3 delta-rs
commits need a lock or conditional writes to be safe against concurrent writers; a replica has one writer
(the state is locked, the owner file names it), so ``AWS_S3_ALLOW_UNSAFE_RENAME`` is set unless the
environment configures a locking provider or conditional puts.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs

from binlog_model.errors import ConfigError, MissingExtraError
from binlog_model.faults import kill_point
from binlog_model.io.documents import write_bytes_atomic
from binlog_model.io.files import is_uri, name_like, output_filesystem
from binlog_model.replica.layout import KEYLESS, META, TableLayout, order_of

__all__ = ["OWNER_FILE", "ROW_GROUP_ROWS", "DeltaReplica", "ReplicaOwnerError", "require_deltalake"]

OWNER_FILE = "_binlog_model.json"
#: Parquet row groups of at most this many rows in every file written (delta-rs's default is 1M rows). A
#: MERGE rewrites each file it touches and its writer holds a row group at a time, so this bounds its
#: memory instead of the table's size: a MERGE of 100k keys into 1.1M / 1.57M rows peaked at 397 / 462 MB
#: with the default, 307 / 330 MB with this.
ROW_GROUP_ROWS = 65_536
_META_NAMES = {name for name, _ in META} | {name for name, _ in KEYLESS}


def require_deltalake() -> Any:
    """The deltalake module; ``MissingExtraError`` naming the extra when it is not installed."""
    try:
        import deltalake
    except ImportError:
        raise MissingExtraError("apply's Delta tables need deltalake: pip install 'binlog-model[replica]'"
                                ) from None
    return deltalake


class ReplicaOwnerError(ConfigError):
    """The target holds the tables of another state (another app id)."""


class DeltaReplica:
    """The Delta tables under ``root`` (a local folder or a URI) that the state with ``app_id`` writes.
    Raises ``ReplicaOwnerError`` for a root another state owns, ``ConfigError`` for a store it cannot
    reach (before anything is written)."""

    def __init__(self, root: str | os.PathLike[str], app_id: str, *, checkpoint_every: int = 100) -> None:
        require_deltalake()
        text = os.fspath(root)
        self.root = text if is_uri(text) else os.path.abspath(text)
        self.app_id = app_id
        self.checkpoint_every = checkpoint_every
        self._fs, self._base = output_filesystem(self.root)
        self._local = isinstance(self._fs, pafs.LocalFileSystem)
        self._options = _storage_options(self.root)
        self._versions: dict[tuple[str, str], int] = {}
        self.commits = 0
        try:
            self._claim()
        except OSError as err:
            raise ConfigError(f"cannot reach the replica's store {self.root}: {err}") from None

    def _claim(self) -> None:
        owner = f"{self._base}/{OWNER_FILE}"
        if self._info(owner).type == pafs.FileType.File:
            with self._fs.open_input_stream(owner) as fh:
                found = json.loads(fh.read()).get("app_id")
            if found != self.app_id:
                raise ReplicaOwnerError(f"{self.root} holds the replica tables of another state (app id "
                                        f"{found}, this state's is {self.app_id}): give another --to, or the "
                                        "state that wrote them")
            return
        self._write(owner, json.dumps({"app_id": self.app_id}).encode())

    # --- where things are -------------------------------------------------------------------------------

    def location(self, db: str, table: str, kind: str = "") -> str:
        """Where ``db.table`` lives (a path or a URI); ``kind``: ``_dropped`` for a table moved aside."""
        return name_like(self.root, self._inside(db, table, kind))

    def path(self, db: str, table: str) -> Path:
        """A local replica's table folder."""
        return Path(self.location(db, table))

    def _inside(self, db: str, table: str, kind: str = "") -> str:
        return "/".join(p for p in (self._base, kind, db, table) if p)

    def _info(self, path: str) -> Any:
        return self._fs.get_file_info(path)

    def _children(self, path: str) -> list[Any]:
        if self._info(path).type != pafs.FileType.Directory:
            return []
        return sorted(self._fs.get_file_info(pafs.FileSelector(path)), key=lambda i: i.base_name)

    def _write(self, path: str, data: bytes) -> None:
        if self._local:
            write_bytes_atomic(Path(path), data)
            return
        with self._fs.open_output_stream(path) as fh:      # one PUT: whole or not at all
            fh.write(data)

    def _table(self, db: str, table: str, version: int | None = None, kind: str = "") -> Any:
        from deltalake import DeltaTable

        return DeltaTable(_delta_uri(self.location(db, table, kind)), version=version,
                          storage_options=self._options)

    def exists(self, db: str, table: str) -> bool:
        return self._info(f"{self._inside(db, table)}/_delta_log").type == pafs.FileType.Directory

    def tables(self) -> list[tuple[str, str]]:
        """Every table of the replica, as (db, table)."""
        found = []
        for db in self._children(self._base):
            if db.type == pafs.FileType.Directory and not db.base_name.startswith("_"):
                found += [(db.base_name, t.base_name) for t in self._children(db.path)
                          if self.exists(db.base_name, t.base_name)]
        return found

    def version(self, db: str, table: str) -> int:
        """The order up to which ``db.table`` is applied (-1: the table does not exist)."""
        key = (db, table)
        if key not in self._versions:
            self._versions[key] = self._read_version(db, table)
        return self._versions[key]

    def cached_version(self, db: str, table: str) -> int | None:
        """``version`` if it is known without reading the store (None: not yet read)."""
        return self._versions.get((db, table))

    def _read_version(self, db: str, table: str) -> int:
        if not self.exists(db, table):
            return -1
        found = self._table(db, table).transaction_version(self.app_id)
        if found is None:
            raise ReplicaOwnerError(f"{self.location(db, table)} is a Delta table that this state did not "
                                    f"write (no transaction of app id {self.app_id})")
        return int(found)

    def schema(self, db: str, table: str) -> pa.Schema:
        """The table's current Arrow schema (plain types)."""
        return _without_views(pa.schema(self._table(db, table).schema().to_arrow()))

    def gone_at(self, db: str, table: str) -> int:
        """The latest order at which ``db.table`` was dropped or renamed away (-1: never)."""
        latest = -1
        for kind in ("_dropped", "_renamed"):
            for entry in self._children(self._inside(db, "", kind)):
                name, _, order = entry.base_name.rpartition("@")
                if name == table and order.isdigit():
                    latest = max(latest, int(order))
        return latest

    # --- commits ----------------------------------------------------------------------------------------

    def _properties(self, at: str, gtids: str) -> Any:
        """A commit's properties: the transaction version is the order of ``at`` (``FILE:OFFSET``: every
        change of the table before it is applied), the custom metadata names ``at`` and the GTIDs."""
        from deltalake import CommitProperties, Transaction

        return CommitProperties(app_transactions=[Transaction(self.app_id, order_of(at))],
                                custom_metadata={"binlog_model.position": at, "binlog_model.gtids": gtids})

    @staticmethod
    def _writer() -> Any:
        from deltalake import WriterProperties

        return WriterProperties(max_row_group_size=ROW_GROUP_ROWS)

    def _committed(self, db: str, table: str, at: str) -> None:
        kill_point("replica-commit")      # a commit landed, the state does not say so yet
        self._versions[(db, table)] = order_of(at)
        self.commits += 1
        if self.checkpoint_every and self.commits % self.checkpoint_every == 0:
            self.upkeep(db, table)

    def create(self, layout: TableLayout, at: str, gtids: str,
               data: pa.Table | pa.RecordBatchReader | None = None) -> None:
        """A new table (an existing one at the path is replaced: a re-created table starts anew), in one
        commit; a reader's batches are written as they come."""
        from deltalake import write_deltalake

        schema = layout.arrow_schema()
        write_deltalake(_delta_uri(self.location(layout.db, layout.table)),
                        data if data is not None else schema.empty_table(), mode="overwrite",
                        schema_mode="overwrite", commit_properties=self._properties(at, gtids),
                        storage_options=self._options, writer_properties=self._writer())
        self._committed(layout.db, layout.table, at)

    def append(self, layout: TableLayout, data: pa.Table, at: str, gtids: str) -> None:
        """Add rows (the initial snapshot's next chunk)."""
        from deltalake import write_deltalake

        write_deltalake(_delta_uri(self.location(layout.db, layout.table)), data, mode="append",
                        commit_properties=self._properties(at, gtids), storage_options=self._options,
                        writer_properties=self._writer())
        self._committed(layout.db, layout.table, at)

    def overwrite(self, layout: TableLayout, data: pa.Table, at: str, gtids: str) -> None:
        """Replace the table's rows and schema in one commit (TRUNCATE, a DDL that reshapes the table)."""
        if self.exists(layout.db, layout.table):
            data = _new_order(self.schema(layout.db, layout.table), data)
        self.create(layout, at, gtids, data)

    def mark(self, db: str, table: str, at: str, gtids: str) -> None:
        """A commit without rows: the table is applied up to ``at`` (after a rename)."""
        from deltalake import write_deltalake

        dt = self._table(db, table)
        write_deltalake(dt, pa.schema(dt.schema().to_arrow()).empty_table(), mode="append",
                        commit_properties=self._properties(at, gtids))
        self._committed(db, table, at)

    def merge(self, layout: TableLayout, source: pa.Table, at: str, gtids: str) -> None:
        """Apply one batch: per key, delete (``binlog_op`` 'd') or write the row ('u')."""
        dt = self._table(layout.db, layout.table)
        on = " AND ".join(f"t.{_quote(k)} = s.{_quote(k)}" for k in layout.key_names)
        (dt.merge(source, on, source_alias="s", target_alias="t", writer_properties=self._writer(),
                  commit_properties=self._properties(at, gtids))
         .when_matched_delete(predicate="s.binlog_op = 'd'")
         .when_matched_update_all(predicate="s.binlog_op = 'u'", except_cols=["binlog_op"])
         .when_not_matched_insert_all(predicate="s.binlog_op = 'u'", except_cols=["binlog_op"])
         .execute())
        self._committed(layout.db, layout.table, at)

    def drop(self, db: str, table: str, order: int) -> None:
        """Move the table aside to ``_dropped/<db>/<table>@<order>`` (its history kept)."""
        self._move(self._inside(db, table), self._inside(db, f"{table}@{order}", "_dropped"))
        self._versions.pop((db, table), None)

    def rename(self, db: str, table: str, new_db: str, new_table: str, order: int) -> None:
        """Move the table to its new name, and leave the marker ``_renamed/<db>/<table>@<order>``."""
        self._move(self._inside(db, table), self._inside(new_db, new_table))
        self._write(self._inside(db, f"{table}@{order}", "_renamed"), f"{new_db}.{new_table}\n".encode())
        self._versions.pop((db, table), None)
        self._versions.pop((new_db, new_table), None)

    def _move(self, source: str, target: str) -> None:
        """A table folder to ``target``, replacing what is there (a table of that name dropped in the same
        run, not yet moved aside, or a copy a killed run left). Locally one rename; on an object store a
        copy of every object, then the source deleted: a run killed in between moves it again."""
        if self._info(source).type != pafs.FileType.Directory:
            return
        if self._info(target).type != pafs.FileType.NotFound:
            self._fs.delete_dir(target)
        if self._local:
            Path(target).parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, target)
            return
        pafs.copy_files(source, target, source_filesystem=self._fs, destination_filesystem=self._fs)
        kill_point("replica-moved")       # copied, the source not yet deleted
        self._fs.delete_dir(source)

    # --- reads ------------------------------------------------------------------------------------------

    def read(self, db: str, table: str, columns: list[str] | None = None, filter: Any = None,
             version: int | None = None, *, dropped: bool = False) -> pa.Table:
        """The table's current rows, read with pyarrow from the files of its current version. Not through
        ``DeltaTable.to_pyarrow_dataset``: its scan threads call back into delta-rs's filesystem, and a
        process that used one aborts at exit now and then ("terminate called without an active
        exception", delta-io/delta-rs#2184). delta-rs writes no deletion vectors, so the files are the
        rows. ``version``: a Delta version (``as_of``) instead of the current one; ``dropped``: ``table``
        names a table moved aside (``<table>@<order>`` in ``_dropped/<db>``)."""
        dt = self._table(db, table, version, "_dropped" if dropped else "")
        schema = _without_views(pa.schema(dt.schema().to_arrow()))
        files = dt.file_uris()
        if not files:
            empty = schema.empty_table()
            return empty.select(columns) if columns is not None else empty
        paths = [f if self._local else f.split("://", 1)[1] for f in files]
        data = ds.dataset(paths, format="parquet", filesystem=self._fs)
        # by name, in the table's order: files written before a DDL that moved a column (MODIFY … FIRST)
        # or by a MERGE may hold the columns in another order
        names = schema.names if columns is None else columns
        wanted = pa.schema([schema.field(c) for c in names])
        try:        # pushed into the scan: only the row groups its statistics allow are read
            return data.to_table(columns=names, filter=filter).cast(wanted)
        except pa.ArrowNotImplementedError:
            # the files' own Arrow schema has view types, which a filter on text or bytes cannot compare
            # with: filtered after the cast to plain types
            return data.to_table(columns=names).cast(wanted).filter(filter)

    def rows_by_key(self, layout: TableLayout, keys: Iterable[tuple[Any, ...]]
                    ) -> dict[tuple[Any, ...], tuple[list[Any], set[str]]]:
        """The replica's rows of ``keys``: key → (values in layout order, invalid columns)."""
        keys = list(keys)
        if not keys:
            return {}
        first = layout.key[0]
        kind = layout.types[layout.index()[first.lower()]]
        table = self.read(layout.db, layout.table,
                          filter=ds.field(first).isin(pa.array({k[0] for k in keys}, type=kind)))
        wanted = set(keys)
        found: dict[tuple[Any, ...], tuple[list[Any], set[str]]] = {}
        names = layout.names
        for row in table.to_pylist():
            key = tuple(row[k] for k in layout.key)
            if key in wanted:
                found[key] = ([row[n] for n in names], set(row["binlog_invalid"] or ()))
        return found

    def copies(self, layout: TableLayout, digests: list[bytes]) -> dict[bytes, int]:
        """A keyless table's row count per digest."""
        if not digests or not self.exists(layout.db, layout.table):
            return {}
        wanted = pa.array(digests, type=pa.binary())
        table = self.read(layout.db, layout.table, columns=["binlog_row_hash", "binlog_copy"],
                          filter=ds.field("binlog_row_hash").isin(wanted))
        counts = table.group_by("binlog_row_hash").aggregate([("binlog_copy", "max")])
        return dict(zip(counts["binlog_row_hash"].to_pylist(), counts["binlog_copy_max"].to_pylist(),
                        strict=True))

    def as_of(self, db: str, table: str, position: str) -> int | None:
        """The Delta version of ``db.table`` that holds exactly the changes before ``position``
        (``FILE:OFFSET``, a transaction boundary), from the commits' metadata; None before the first."""
        wanted = order_of(position)
        best: tuple[int, int] | None = None
        for commit in self._table(db, table).history():
            at = commit.get("binlog_model.position")
            if at is None:
                continue        # an OPTIMIZE: the same rows as the commit before it
            found = (order_of(at), int(commit["version"]))
            if found[0] <= wanted and (best is None or found > best):
                best = found
        return None if best is None else best[1]

    # --- upkeep -----------------------------------------------------------------------------------------

    def upkeep(self, db: str, table: str) -> None:
        """A Delta checkpoint and the small files compacted (every ``checkpoint_every`` commits)."""
        self._table(db, table).optimize.compact(writer_properties=self._writer())
        self._table(db, table).create_checkpoint()


def user_columns(table: pa.Table) -> pa.Table:
    """A replica table's source columns (the ``binlog_*`` ones left out): what ``SELECT *`` compares to."""
    return table.select([n for n in table.column_names if n not in _META_NAMES])


def _without_views(schema: pa.Schema) -> pa.Schema:
    """delta-rs gives text and bytes as Arrow view types; the files (and our filters) have plain ones."""
    def plain(kind: pa.DataType) -> pa.DataType:
        if pa.types.is_string_view(kind):
            return pa.string()
        if pa.types.is_binary_view(kind):
            return pa.binary()
        if pa.types.is_list(kind) or pa.types.is_list_view(kind) or pa.types.is_large_list(kind):
            return pa.list_(plain(kind.value_type))
        return kind
    return pa.schema([field.with_type(plain(field.type)) for field in schema])


def _new_order(current: pa.Schema, data: pa.Table) -> pa.Table:
    """``data`` as an overwrite must give it to put its column order into the table's schema: delta-rs
    keeps the old schema when only the order differs (MODIFY … FIRST / AFTER), so there each field says
    its place in its metadata (``binlog_model.ordinal``), which makes the schema a new one."""
    if current.names == data.schema.names or sorted(current.names) != sorted(data.schema.names):
        return data
    fields = [f.with_metadata({**(f.metadata or {}), b"binlog_model.ordinal": str(i).encode()})
              for i, f in enumerate(data.schema)]
    return data.cast(pa.schema(fields, metadata=data.schema.metadata))


def _delta_uri(location: str) -> str:
    """A table's location as delta-rs names it (``s3a://`` is ``s3://`` there)."""
    return "s3://" + location[len("s3a://"):] if location.startswith("s3a://") else location


def _storage_options(root: str) -> dict[str, str]:
    """delta-rs options for an S3 root, beside the standard ``AWS_*`` environment it reads itself: plain
    HTTP when the endpoint is one (a local test server), and single-writer commits unless a locking
    provider or conditional puts are configured (see the module docstring)."""
    if not root.startswith(("s3://", "s3a://")):
        return {}
    options = {}
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or ""
    if endpoint.startswith("http://"):
        options["AWS_ALLOW_HTTP"] = "true"
    if not {"AWS_S3_LOCKING_PROVIDER", "AWS_CONDITIONAL_PUT"} & os.environ.keys():
        options["AWS_S3_ALLOW_UNSAFE_RENAME"] = "true"
    return options


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


