"""The state of one statement's replay (the catalog so far, the changes made) and name lookups."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from binlog_model.errors import SchemaError
from schema_tracker.changes import (
    SchemaChange,
    apply_change,
)
from schema_tracker.ddl.dialect import unsupported
from schema_tracker.model import (
    Catalog,
    TableSchema,
)


@dataclass(slots=True)
class Ctx:
    catalog: Catalog
    default_db: str | None
    changes: list[SchemaChange] = field(default_factory=list)
    target: tuple[str, str] | None = None  # the table a skipped statement makes uncertain

    def emit(self, change: SchemaChange) -> None:
        self.catalog = apply_change(self.catalog, change)
        self.changes.append(change)



def table_name(ctx: Ctx, table: exp.Table) -> tuple[str, str]:
    db = table.db or ctx.default_db
    if not db:
        raise SchemaError(f"no database selected for table {table.name!r}")
    return db, table.name


def need_table(ctx: Ctx, db: str, name: str) -> TableSchema:
    found = ctx.catalog.table(db, name)
    if found is None:
        raise SchemaError("table is not known to the schema tracker", table=f"{db}.{name}")
    return found


def ident(node: exp.Expression) -> str:
    """A column name from a key part: Column, Identifier, prefix ``a(10)`` or ordered ``a DESC``."""
    if isinstance(node, exp.Identifier):
        return node.name
    if isinstance(node, exp.Column | exp.Ordered | exp.ColumnPrefix):
        return ident(node.this)
    if isinstance(node, exp.Anonymous):  # a(10) read as a call
        return node.name
    found = node.find(exp.Identifier)
    if found is None:
        raise unsupported(f"cannot read a column name from {node.sql('mysql')}")
    return found.name



def qualified(ctx: Ctx, part: list[Token]) -> tuple[str, str]:
    names = [t.text for t in part if t.token_type != TokenType.DOT]
    if len(names) == 1 and len(part) == 1:
        if not ctx.default_db:
            raise SchemaError(f"no database selected for table {names[0]!r}")
        return ctx.default_db, names[0]
    if len(names) == 2 and len(part) == 3:
        return names[0], names[1]
    raise unsupported("cannot read a table name")

