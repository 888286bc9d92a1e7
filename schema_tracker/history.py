"""The schema history: every applied DDL with its binlog position and GTID, and the catalog after it.

Strategy: an append-only list of ``HistoryEntry`` (position, GTID, default database, statement, typed
changes, catalog after). ``at(position)`` bisects it. The JSON form stores the starting catalog and the
changes, never sqlglot output, so ``from_json`` rebuilds every catalog with ``changes.apply_change`` alone
(no SQL parsing on Spark executors) and checks the result against the stored final catalog.

Format (stable; a new layout gets a new ``version``)::

    {"format": "binlog-model/schema-history", "version": 1,
     "initial": <catalog>, "entries": [{"position": {"file": ..., "offset": ...} | null, "gtid": ...,
     "default_db": ..., "statement": ..., "changes": [{"type": "CreateTable", ...}]}], "final": <catalog>}
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from binlog_model.errors import ConfigError, SchemaError
from binlog_model.position import EventPosition
from schema_tracker import changes as _changes
from schema_tracker.changes import SchemaChange, apply_change
from schema_tracker.model import (
    Catalog,
    ColumnSchema,
    DatabaseSchema,
    ServerSession,
    TableSchema,
    default_collation,
)
from schema_tracker.statement import Statement

__all__ = ["FORMAT", "VERSION", "HistoryEntry", "SchemaHistory", "catalog_from_json",
           "catalog_to_json", "change_from_json", "change_to_json"]

FORMAT = "binlog-model/schema-history"
VERSION = 1

_CHANGE_TYPES: dict[str, type] = {name: getattr(_changes, name) for name in _changes.__all__
                                  if dataclasses.is_dataclass(getattr(_changes, name))}


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One statement that changed the schema (or was skipped in lenient mode)."""

    position: EventPosition | None
    gtid: str | None
    default_db: str | None
    statement: str
    changes: tuple[SchemaChange, ...]
    catalog: Catalog


class SchemaHistory:
    """Catalog versions keyed by binlog position.

    ``apply`` records statements in binlog order; a position earlier than the last recorded one raises
    ``ConfigError``. Statements that change nothing (DML, BEGIN, an already-existing table with IF NOT
    EXISTS) are not recorded.

    ``server_version`` names the server whose DDL is replayed (FORMAT_DESCRIPTION's, kept up to date by
    the DDL pass, ``binlog_model.resolve.ddl_pass``): where MySQL and MariaDB disagree, the tracker
    follows it.
    """

    def __init__(self, initial: Catalog | None = None, *, lenient: bool = False,
                 server_version: str = "") -> None:
        self.initial = initial if initial is not None else Catalog()
        self.lenient = lenient
        self.server_version = server_version
        self._entries: list[HistoryEntry] = []
        self._keys: list[tuple[int, str, int]] = []

    @property
    def entries(self) -> tuple[HistoryEntry, ...]:
        return tuple(self._entries)

    @property
    def catalog(self) -> Catalog:
        """The catalog after the last recorded statement."""
        return self._entries[-1].catalog if self._entries else self.initial

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[HistoryEntry]:
        return iter(self._entries)

    def apply(self, sql: str, default_db: str | None, position: EventPosition | None = None,
              gtid: str | None = None, *, session: ServerSession | None = None) -> tuple[SchemaChange, ...]:
        """Apply one statement (see ``ddl.apply``) and record it when it changed anything. Without
        ``session``, the statement is read as ``server_version`` logged it under the default sql_mode."""
        # sqlglot comes with the first statement: a reader of a history never needs it
        from schema_tracker import ddl

        session = session or ServerSession(self.server_version)
        catalog, changes = ddl.apply(self.catalog, sql, default_db, position, lenient=self.lenient,
                                 session=session)
        if changes:
            self._record(HistoryEntry(position, gtid, default_db, sql, changes, catalog))
        return changes

    def apply_statement(self, statement: Statement) -> tuple[SchemaChange, ...]:
        """Apply a logged statement (see ``Statement``) read as ``server_version`` read it under the
        statement's sql_mode and utf8mb4 default collation; record it when it changed anything."""
        server = None
        if statement.server_charset:
            server = (statement.server_charset,
                      statement.server_collation or default_collation(statement.server_charset))
        session = ServerSession(self.server_version, statement.sql_mode, statement.utf8mb4_collation,
                                server, dict(statement.charset_collations))
        return self.apply(statement.sql, statement.default_db, statement.position, statement.gtid,
                          session=session)

    def apply_script(self, text: str, default_db: str | None = None, *, source: str = "<sql>"
                     ) -> list[tuple[str, tuple[SchemaChange, ...]]]:
        """Apply a script of ``;``-separated statements, following ``USE``. Statement n (from 1) is
        recorded at ``EventPosition(source, n)``. Returns (statement, changes) for every statement."""
        from schema_tracker import ddl

        out = []
        db = default_db
        for n, sql in enumerate(ddl.split_statements(text), start=1):
            used = ddl.parse_use(sql)
            if used is not None:
                db = used
                continue
            out.append((sql, self.apply(sql, db, EventPosition(source, n))))
        return out

    def copy(self) -> SchemaHistory:
        """An independent history with the same entries (entries and catalogs are immutable and shared);
        recording into the copy leaves this one unchanged."""
        other = SchemaHistory(self.initial, lenient=self.lenient, server_version=self.server_version)
        other._entries = list(self._entries)
        other._keys = list(self._keys)
        return other

    def _record(self, entry: HistoryEntry) -> None:
        if entry.position is not None:
            key = entry.position.sort_key()
            if self._keys and key < self._keys[-1]:
                raise ConfigError(f"schema history positions must not go backwards: {entry.position} after "
                                  f"{self._entries[-1].position}")
            self._keys.append(key)
        elif self._keys:
            raise ConfigError("an entry without a position cannot follow positioned entries")
        self._entries.append(entry)

    def at(self, position: EventPosition) -> Catalog:
        """The catalog in force for an event at ``position``: after every DDL recorded strictly before it."""
        unpositioned = len(self._entries) - len(self._keys)
        i = bisect.bisect_left(self._keys, position.sort_key()) + unpositioned
        return self._entries[i - 1].catalog if i > 0 else self.initial

    # --- JSON --------------------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "lenient": self.lenient,
            "server_version": self.server_version,
            "initial": catalog_to_json(self.initial),
            "entries": [
                {
                    "position": None if e.position is None else
                    {"file": e.position.file, "offset": e.position.offset},
                    "gtid": e.gtid,
                    "default_db": e.default_db,
                    "statement": e.statement,
                    "changes": [change_to_json(c) for c in e.changes],
                }
                for e in self._entries
            ],
            "final": catalog_to_json(self.catalog),
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> SchemaHistory:
        """Rebuild a history saved by ``to_json``. Raises ``SchemaError`` on a foreign or corrupt document."""
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise SchemaError(f"not a schema history document (expected format {FORMAT!r})")
        if doc.get("version") != VERSION:
            raise SchemaError(f"unsupported schema history version {doc.get('version')!r} "
                              f"(this library reads version {VERSION})")
        try:
            history = cls(catalog_from_json(doc["initial"]), lenient=bool(doc.get("lenient", False)),
                          server_version=str(doc.get("server_version", "")))
            for item in doc["entries"]:
                pos = item["position"]
                position = None if pos is None else EventPosition(pos["file"], int(pos["offset"]))
                changes = tuple(change_from_json(c) for c in item["changes"])
                catalog = history.catalog
                for change in changes:
                    catalog = apply_change(catalog, change)
                history._record(HistoryEntry(position, item["gtid"], item["default_db"], item["statement"],
                                             changes, catalog))
        except (KeyError, TypeError, ValueError) as err:
            raise SchemaError(f"corrupt schema history document: {type(err).__name__}: {err}") from err
        # Both sides through the current model, so a document written before a field with a default
        # existed (``invisible``, ``hidden`` …) still reads as consistent.
        final = catalog_to_json(catalog_from_json(doc["final"])) if "final" in doc else None
        if final is not None and catalog_to_json(history.catalog) != final:
            raise SchemaError("schema history document is inconsistent: replaying its changes does not give "
                              "its final catalog")
        return history


# --- (de)serialisation of the model --------------------------------------------------------------------


def _plain(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, tuple | list):
        return [_plain(x) for x in obj]
    return obj


def column_from_json(doc: dict[str, Any]) -> ColumnSchema:
    return ColumnSchema(**{**doc, "enum_values": tuple(doc.get("enum_values", ()))})


def _keys_from_json(doc: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple((str(name), tuple(cols)) for name, cols in doc or ())


def _table_from_json(doc: dict[str, Any]) -> TableSchema:
    return TableSchema(**{**doc, "columns": tuple(column_from_json(c) for c in doc["columns"]),
                          "primary_key": tuple(doc["primary_key"]),
                          "unique_keys": _keys_from_json(doc.get("unique_keys"))})


def catalog_to_json(catalog: Catalog) -> dict[str, Any]:
    """A catalog as plain JSON data (databases and tables sorted by name)."""
    return {
        "server_charset": catalog.server_charset,
        "server_collation": catalog.server_collation,
        "lower_case_table_names": catalog.lower_case_table_names,
        "databases": [_plain(catalog.databases[k]) for k in sorted(catalog.databases)],
        "tables": [_plain(t) for t in catalog.iter_tables()],
        "views": {db: sorted(names) for db, names in sorted(catalog.views.items())},
    }


def catalog_from_json(doc: dict[str, Any]) -> Catalog:
    cat = Catalog(server_charset=doc["server_charset"], server_collation=doc["server_collation"],
                  lower_case_table_names=int(doc["lower_case_table_names"]))
    for d in doc["databases"]:
        cat = cat.with_database(DatabaseSchema(**d))
    for t in doc["tables"]:
        cat = cat.with_table(_table_from_json(t))
    for db, names in (doc.get("views") or {}).items():
        cat = cat.with_views(db, frozenset(names))
    return cat


def change_to_json(change: SchemaChange) -> dict[str, Any]:
    return {"type": type(change).__name__, **_plain(change)}


def change_from_json(doc: dict[str, Any]) -> SchemaChange:
    fields = dict(doc)
    kind = _CHANGE_TYPES.get(fields.pop("type", ""))
    if kind is None:
        raise ValueError(f"unknown schema change type {doc.get('type')!r}")
    if "columns" in fields:
        fields["columns"] = tuple(column_from_json(c) for c in fields["columns"])
    if "column" in fields:
        fields["column"] = column_from_json(fields["column"])
    if "primary_key" in fields:
        fields["primary_key"] = tuple(fields["primary_key"])
    if "views" in fields:
        fields["views"] = tuple(fields["views"])
    if "unique_keys" in fields:
        fields["unique_keys"] = _keys_from_json(fields["unique_keys"])
    result: SchemaChange = kind(**fields)
    return result
