"""schema_tracker: the table schemas in force at every binlog position, by replaying DDL with sqlglot.

``ddl.apply`` turns one statement into typed changes and a new immutable ``Catalog``; ``SchemaHistory``
records them by position and GTID and answers ``at(position)``; logged statements come in as plain
``Statement``s (this package never reads binlog events); ``snapshot`` builds a starting catalog
from a live server or a ``mysqldump --no-data`` file.
"""

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
