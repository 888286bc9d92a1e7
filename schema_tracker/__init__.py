"""schema_tracker: the table schemas in force at every binlog position, by replaying DDL with sqlglot.

``ddl.apply`` turns one statement into typed changes and a new immutable ``Catalog``; ``SchemaHistory``
records them by position and GTID and answers ``at(position)``; logged statements come in as plain
``Statement``s (this package never reads binlog events); ``snapshot`` builds a starting catalog
from a live server or a ``mysqldump --no-data`` file.

Every name is imported on first use (PEP 562): a reader of a schema history (the binlog hot path, a Spark
executor) never pays for sqlglot, which only ``ddl`` (replaying a statement) needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from schema_tracker.changes import (
        AlterDatabase,
        CreateDatabase,
        CreateOrModifyColumn,
        CreateTable,
        DropColumn,
        DropDatabase,
        DropTable,
        PrimaryKeyChanged,
        RenameColumn,
        RenameTable,
        SchemaChange,
        SkippedStatement,
        TableCharsetChanged,
        TruncateTable,
        apply_change,
    )
    from schema_tracker.ddl import apply, split_statements
    from schema_tracker.history import HistoryEntry, SchemaHistory
    from schema_tracker.model import Catalog, ColumnSchema, DatabaseSchema, TableSchema
    from schema_tracker.snapshot import catalog_from_dump, catalog_from_server
    from schema_tracker.statement import Statement

# public name -> module that defines it (imported on first attribute access)
_LAZY = {
    "AlterDatabase": "schema_tracker.changes",
    "CreateDatabase": "schema_tracker.changes",
    "CreateOrModifyColumn": "schema_tracker.changes",
    "CreateTable": "schema_tracker.changes",
    "DropColumn": "schema_tracker.changes",
    "DropDatabase": "schema_tracker.changes",
    "DropTable": "schema_tracker.changes",
    "PrimaryKeyChanged": "schema_tracker.changes",
    "RenameColumn": "schema_tracker.changes",
    "RenameTable": "schema_tracker.changes",
    "SchemaChange": "schema_tracker.changes",
    "SkippedStatement": "schema_tracker.changes",
    "TableCharsetChanged": "schema_tracker.changes",
    "TruncateTable": "schema_tracker.changes",
    "apply_change": "schema_tracker.changes",
    "apply": "schema_tracker.ddl",
    "split_statements": "schema_tracker.ddl",
    "HistoryEntry": "schema_tracker.history",
    "SchemaHistory": "schema_tracker.history",
    "Catalog": "schema_tracker.model",
    "ColumnSchema": "schema_tracker.model",
    "DatabaseSchema": "schema_tracker.model",
    "TableSchema": "schema_tracker.model",
    "catalog_from_dump": "schema_tracker.snapshot",
    "catalog_from_server": "schema_tracker.snapshot",
    "Statement": "schema_tracker.statement",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'schema_tracker' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "AlterDatabase",
    "Catalog",
    "ColumnSchema",
    "CreateDatabase",
    "CreateOrModifyColumn",
    "CreateTable",
    "DatabaseSchema",
    "DropColumn",
    "DropDatabase",
    "DropTable",
    "HistoryEntry",
    "PrimaryKeyChanged",
    "RenameColumn",
    "RenameTable",
    "SchemaChange",
    "SchemaHistory",
    "SkippedStatement",
    "Statement",
    "TableCharsetChanged",
    "TableSchema",
    "TruncateTable",
    "apply",
    "apply_change",
    "catalog_from_dump",
    "catalog_from_server",
    "split_statements",
]
