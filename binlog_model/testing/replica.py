"""An in-memory replica that applies BinlogEvents, to prove the model loses nothing (differential tests).

Strategy: tables are ``(db, table)`` → column names in order, primary key, and rows as ``{column: value}``
dicts of ``binlog_model.messages.python_value`` values. Tables with a primary key index rows by the key tuple;
tables without one keep a list and find a row by a full before-image match (the multiset semantics of a
server applying row events to a key-less table). The replica needs complete images: decode with
``image="full"`` from a server running ``binlog_row_image=FULL``; the one exception is an UPDATE of a keyed
table logged with a MINIMAL image (before image = the primary key), which is merged onto the row it names,
``json_diff`` values applied to the document held.

Every check that can fail does so loudly with ``ReplicaError`` naming the table, the statement, its binlog
position and the row: an UPDATE/DELETE whose before image is not in the replica (or differs from it), an
INSERT of an existing key, an image lacking columns, a skipped (lenient) DDL, or an added column whose
value for existing rows the binlog does not carry (a non-NULL default). Events of databases outside
``databases`` (when given) are ignored, so a replica of one test's database can read a shared server's log.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.errors import BinlogError
from binlog_model.messages import python_value
from binlog_model.resolve.json_diff import apply_json_diff_text

__all__ = ["Replica", "ReplicaError", "ReplicaTable"]

Row = dict[str, Any]


class ReplicaError(BinlogError):
    """A BinlogEvent cannot be applied to the replica: the events and the replica's state disagree."""


@dataclass(slots=True)
class ReplicaTable:
    """One table's columns (in order), primary key and rows."""

    columns: list[str]
    primary_key: tuple[str, ...] = ()
    keyed: dict[tuple[Any, ...], Row] = field(default_factory=dict)   # with a primary key
    heap: list[Row] = field(default_factory=list)                     # without one

    def rows(self) -> list[Row]:
        return list(self.keyed.values()) if self.primary_key else list(self.heap)

    def key_of(self, row: Row) -> tuple[Any, ...]:
        return tuple(row[c] for c in self.primary_key)

    def named(self, key: tuple[Any, ...]) -> dict[str, Any]:
        return dict(zip(self.primary_key, key, strict=True))

    def reindex(self, primary_key: tuple[str, ...], where: str) -> None:
        rows = self.rows()
        self.primary_key, self.keyed, self.heap = primary_key, {}, []
        for row in rows:
            self.put(row, where)

    def put(self, row: Row, where: str) -> None:
        if not self.primary_key:
            self.heap.append(row)
            return
        key = self.key_of(row)
        if key in self.keyed:
            raise ReplicaError(f"{where}: duplicate primary key {self.named(key)}; row {row}")
        self.keyed[key] = row

    def take(self, before: Row, key: tuple[Any, ...] | None, where: str) -> Row:
        """Remove and return the row the before image names; it must equal the image on every column."""
        if self.primary_key:
            if key is None:
                key = self.key_of(before)
            row = self.keyed.pop(key, None)
            if row is None:
                raise ReplicaError(f"{where}: no row with primary key {self.named(key)}")
            if row != before:
                self.keyed[key] = row
                raise ReplicaError(f"{where}: replica row {row} differs from the before image {before}")
            return row
        for index, row in enumerate(self.heap):
            if row == before:
                return self.heap.pop(index)
        raise ReplicaError(f"{where}: no row equal to the before image {before} (table without primary key)")


class Replica:
    """Apply BinlogEvents (``image="full"``) to in-memory tables; read them back with ``table``/``tables``."""

    def __init__(self, databases: Iterable[str] | None = None) -> None:
        self.databases = frozenset(databases) if databases is not None else None
        self._tables: dict[tuple[str, str], ReplicaTable] = {}
        self.applied = 0

    @classmethod
    def from_catalog(cls, catalog: Any, databases: Iterable[str] | None = None) -> Replica:
        """An empty replica of every table in a ``schema_tracker`` ``Catalog`` (rows come from events)."""
        replica = cls(databases)
        for table in catalog.iter_tables():
            if replica._wanted(table.db):
                replica._tables[(table.db, table.name)] = ReplicaTable(list(table.column_names()),
                                                                     tuple(table.primary_key))
        return replica

    def tables(self, db: str | None = None) -> dict[tuple[str, str], ReplicaTable]:
        return {k: v for k, v in self._tables.items() if db is None or k[0] == db}

    def table(self, db: str, name: str) -> ReplicaTable:
        try:
            return self._tables[(db, name)]
        except KeyError:
            raise ReplicaError(f"replica has no table {db}.{name}") from None

    def _wanted(self, db: str) -> bool:
        return self.databases is None or db in self.databases

    def apply_all(self, events: Iterable[pb.BinlogEvent]) -> None:
        for event in events:
            self.apply(event)

    def apply(self, event: pb.BinlogEvent) -> None:
        """Apply one BinlogEvent. Raises ``ReplicaError`` naming the statement and position."""
        if not self._wanted(event.db):
            return
        where = (f"{event.db}.{event.table} {pb.BinlogEvent.Operation.Name(event.operation)} at "
                 f"{event.position.file}:{event.position.offset} (gtid {event.gtid}, statement "
                 f"{event.statement!r})")
        if event.operation == pb.BinlogEvent.SCHEMA:
            for change in event.schema_changes:
                self._apply_change(event, change, where)
        elif event.operation == pb.BinlogEvent.INSERT:
            table = self.table(event.db, event.table)
            for row in event.rows:
                table.put(self._image(table, row.after, f"{where} row {row.row_index} after"), where)
        elif event.operation == pb.BinlogEvent.UPDATE:
            table = self.table(event.db, event.table)
            for row in event.rows:
                here = f"{where} row {row.row_index}"
                if table.primary_key and [c.name for c in row.before] == list(table.primary_key):
                    self._update_minimal(table, row, here)
                    continue
                before = self._image(table, row.before, f"{here} before")
                after = self._image(table, row.after, f"{here} after")
                table.take(before, self._key(table, row, here), here)
                table.put(after, here)
        elif event.operation == pb.BinlogEvent.DELETE:
            table = self.table(event.db, event.table)
            for row in event.rows:
                here = f"{where} row {row.row_index}"
                before = self._image(table, row.before, f"{here} before")
                table.take(before, self._key(table, row, here), here)
        else:
            raise ReplicaError(f"{where}: unknown operation {event.operation}")
        self.applied += 1

    def _update_minimal(self, table: ReplicaTable, row: pb.Row, where: str) -> None:
        """A MINIMAL-image update (``binlog_row_image=MINIMAL``): the before image is the primary key, the
        after image the changed columns; a ``json_diff`` is applied to the document the replica holds, as a
        consumer does (``apply_json_diff_text``)."""
        key = self._key(table, row, where)
        assert key is not None
        current = table.keyed.get(key)
        if current is None:
            raise ReplicaError(f"{where}: no row with primary key {table.named(key)}")
        new = dict(current)
        for column in row.after:
            if column.name not in new:
                raise ReplicaError(f"{where}: after image names unknown column {column.name!r}")
            if column.value.WhichOneof("kind") == "json_diff":
                if not isinstance(current[column.name], str):
                    raise ReplicaError(f"{where}: a json_diff for {column.name!r}, which holds "
                                       f"{current[column.name]!r}")
                try:
                    new[column.name] = apply_json_diff_text(current[column.name],
                                                            column.value.json_diff.operations)
                except BinlogError as err:
                    raise ReplicaError(f"{where}: json_diff of {column.name!r} does not apply: "
                                       f"{err}") from err
            else:
                new[column.name] = python_value(column.value)
        table.take(current, key, where)
        table.put(new, where)

    @staticmethod
    def _image(table: ReplicaTable, columns: Iterable[pb.Column], where: str) -> Row:
        image = {c.name: python_value(c.value) for c in columns}
        if list(image) != table.columns:   # a full image names every column, in table order
            raise ReplicaError(f"{where}: image columns {list(image)} are not the table's {table.columns} "
                               "(decode with image='full' from binlog_row_image=FULL)")
        return image

    @staticmethod
    def _key(table: ReplicaTable, row: pb.Row, where: str) -> tuple[Any, ...] | None:
        if not table.primary_key:
            if row.primary_key:
                raise ReplicaError(f"{where}: primaryKey given for a table without one")
            return None
        key = {c.name: python_value(c.value) for c in row.primary_key}
        if tuple(key) != table.primary_key:
            raise ReplicaError(f"{where}: primaryKey columns {list(key)} are not {list(table.primary_key)}")
        return tuple(key.values())

    def _apply_change(self, event: pb.BinlogEvent, change: pb.SchemaChange, where: str) -> None:
        kind = change.WhichOneof("change")
        key = (event.db, event.table)
        if kind in ("create_database", "alter_database", "table_charset_changed"):
            return   # no row values change (CONVERT TO CHARACTER SET keeps the text)
        if kind == "drop_database":
            for k in [k for k in self._tables if k[0] == event.db]:
                del self._tables[k]
        elif kind == "create_table":
            if key in self._tables:
                raise ReplicaError(f"{where}: CREATE TABLE of an existing table")
            body = change.create_table
            self._tables[key] = ReplicaTable([c.column_name for c in body.columns], tuple(body.primary_key))
        elif kind == "drop_table":
            self._tables.pop(key, None)   # DROP TABLE IF EXISTS of an absent table is logged too
        elif kind == "rename_table":
            r = change.rename_table
            table = self._tables.pop((r.old_db, r.old_table), None)
            if table is None:
                raise ReplicaError(f"{where}: RENAME of unknown table {r.old_db}.{r.old_table}")
            if self._wanted(r.new_db):
                self._tables[(r.new_db, r.new_table)] = table
        elif kind == "truncate_table":
            self._truncate(self.table(*key))
        elif kind == "create_or_modify_column":
            self._column(self.table(*key), change.create_or_modify_column, where)
        elif kind == "rename_column":
            table, r = self.table(*key), change.rename_column
            old, new = r.old_column_name, r.new_column_name
            table.columns = [new if c == old else c for c in table.columns]
            for row in table.rows():
                row[new] = row.pop(old)
            pk = tuple(new if c == old else c for c in table.primary_key)
            for row in table.rows():   # keep dict order = column order
                _reorder(row, table.columns)
            table.reindex(pk, where)
        elif kind == "drop_column":
            table, name = self.table(*key), change.drop_column.column_name
            table.columns.remove(name)
            for row in table.rows():
                del row[name]
            table.reindex(tuple(c for c in table.primary_key if c != name), where)
        elif kind == "primary_key_changed":
            table = self.table(*key)
            table.reindex(tuple(change.primary_key_changed.primary_key), where)
        else:   # skipped_statement and anything newer: the replica can no longer vouch for its state
            raise ReplicaError(f"{where}: cannot apply schema change {kind}: {change}")

    @staticmethod
    def _truncate(table: ReplicaTable) -> None:
        table.keyed, table.heap = {}, []

    @staticmethod
    def _column(table: ReplicaTable, col: pb.CreateOrModifyColumn, where: str) -> None:
        name = col.column_name
        if name not in table.columns:
            default = col.default_value if col.HasField("default_value") else None
            if table.rows() and default is not None and default.upper() != "NULL":
                raise ReplicaError(f"{where}: ADD COLUMN {name} DEFAULT {default}: the value existing rows "
                                   "get is not in the binlog")
            if table.rows() and not col.nullable and default is None:
                raise ReplicaError(f"{where}: ADD COLUMN {name} NOT NULL without default: existing rows get "
                                   "an implicit value the binlog does not carry")
            for row in table.rows():
                row[name] = None
            position = len(table.columns)
        else:   # MODIFY/CHANGE: values are kept (the server converts them; row events show the result)
            position = table.columns.index(name)
            table.columns.remove(name)
        if col.first:
            position = 0
        elif col.after_column:
            if col.after_column not in table.columns:
                raise ReplicaError(f"{where}: AFTER unknown column {col.after_column}")
            position = table.columns.index(col.after_column) + 1
        table.columns.insert(position, name)
        for row in table.rows():
            _reorder(row, table.columns)


def _reorder(row: Row, columns: list[str]) -> None:
    values = [row[c] for c in columns]
    row.clear()
    row.update(zip(columns, values, strict=True))
