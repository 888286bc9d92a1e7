"""The state of one statement's replay (the catalog so far, the changes made) and name lookups."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from binlog_model.errors import SchemaError, SchemaNewerThanBinlogError
from schema_tracker.changes import (
    SchemaChange,
    SkippedStatement,
    apply_change,
)
from schema_tracker.ddl.dialect import session, unsupported
from schema_tracker.model import (
    Catalog,
    TableSchema,
    default_collation,
)


@dataclass(slots=True)
class Ctx:
    catalog: Catalog
    default_db: str | None
    changes: list[SchemaChange] = field(default_factory=list)
    target: tuple[str, str] | None = None  # the table a skipped statement makes uncertain
    lenient: bool = False

    def schema_is_past(self, what: str, db: str, table: str = "") -> None:
        """The statement finds the schema already past it (``what``: which object and why): a
        ``SchemaNewerThanBinlogError``, or under ``lenient`` a record of it, and the replay goes on as the
        server ran the statement then (nothing becomes uncertain)."""
        reason = f"{what}; {SchemaNewerThanBinlogError.CAUSE}"
        if not self.lenient:
            raise SchemaNewerThanBinlogError(reason, table=f"{db}.{table}" if table else db)
        self.emit(SkippedStatement(db, "", f"SchemaNewerThanBinlogError: {reason}"))

    def emit(self, change: SchemaChange) -> None:
        self.catalog = apply_change(self.catalog, change)
        self.changes.append(change)

    def server_defaults(self) -> tuple[str, str]:
        """(charset, collation) a CREATE DATABASE without a charset takes: the statement's own
        ``collation_server`` as its QUERY event logged it (``SET SESSION collation_server`` included), else
        the catalog's (a snapshot's, or a script's caller's)."""
        logged = session().server_defaults
        if logged is not None:
            return logged
        return self.catalog.server_charset, self.catalog.server_collation or \
            default_collation(self.catalog.server_charset)

    def database_defaults(self, db: str) -> tuple[str, str]:
        """(charset, collation) a new table in ``db`` inherits: the database's own defaults; for a database
        the catalog does not know, the server defaults the statement runs under."""
        known = self.catalog.database(db)
        if known is not None:
            return known.charset, known.collation
        return self.server_defaults()



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
