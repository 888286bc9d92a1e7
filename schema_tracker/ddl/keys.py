"""Keys that change what a row holds or how it is identified: UNIQUE keys (the implicit primary key) and
functional key parts (the hidden generated columns MySQL 8.0.13+ adds for them).

UNIQUE keys made of whole columns are kept in ``TableSchema.unique_keys`` in the order the server sorts
keys in (definition order). Without a PRIMARY KEY the first of them whose columns are all NOT NULL is the
primary key (``TableSchema.implied_primary_key``); ``settle_primary_keys`` re-derives it after every
statement and emits ``PrimaryKeyChanged(implicit=True)`` when it moved.

A functional key part ``INDEX i ((a + b))`` makes MySQL add a hidden VIRTUAL generated column named
``!hidden!<index>!<part>!<n>``, appended after the columns the table has at that moment (later columns
come after it) and dropped with its index. MySQL 8.0.13-8.0.17 wrote these columns into TABLE_MAP and row
images; 8.0.18+ leaves them out (BUG#29390506). The tracker keeps them, flagged ``hidden``, so either
layout can be matched; their ``data_type`` is ``""`` because the expression's type is not in the text.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from schema_tracker.changes import (
    HIDDEN_PREFIX,
    CreateOrModifyColumn,
    CreateTable,
    DropColumn,
    PrimaryKeyChanged,
    apply_change,
)
from schema_tracker.ddl.context import Ctx, ident
from schema_tracker.model import ColumnSchema, TableSchema

__all__ = ["functional_parts", "hidden_columns", "key_parts", "settle_primary_keys", "unique_key",
           "with_key", "without_index"]

Keys = tuple[tuple[str, tuple[str, ...]], ...]
_MAX_NAME = 64
FUNCTIONAL_INDEX_NAME = "functional_index"


def key_parts(node: exp.Expression) -> list[exp.Expression]:
    """The key parts of a UNIQUE/INDEX node (``Schema`` of parts, or ``IndexParameters``)."""
    inner = node.this if isinstance(node, exp.UniqueColumnConstraint) else node
    if isinstance(inner, exp.Schema):
        return list(inner.expressions)
    if isinstance(node, exp.IndexColumnConstraint):
        return list(node.expressions)
    if isinstance(node, exp.IndexParameters):
        return list(node.args.get("columns") or [])
    return []


def _is_functional(part: exp.Expression) -> bool:
    inner = part.this if isinstance(part, exp.Ordered) else part
    return isinstance(inner, exp.Paren)


def functional_parts(parts: list[exp.Expression]) -> list[int]:
    """Positions (from 0) of the functional key parts ``((expr))``."""
    return [i for i, p in enumerate(parts) if _is_functional(p)]


def _whole_columns(parts: list[exp.Expression]) -> tuple[str, ...] | None:
    """Column names when every part is a whole column (no prefix ``a(10)``, no expression), else None."""
    out = []
    for part in parts:
        inner = part.this if isinstance(part, exp.Ordered) else part
        if isinstance(inner, exp.Column | exp.Identifier):
            out.append(ident(inner))
        else:
            return None
    return tuple(out)


def index_name(node: exp.Expression) -> str | None:
    """The explicit name of an index node (``UNIQUE KEY uk (…)``, ``INDEX i (…)``), or None."""
    inner = node.this if isinstance(node, exp.UniqueColumnConstraint) else node
    if isinstance(inner, exp.Schema) and isinstance(inner.this, exp.Identifier):
        return inner.this.name
    if isinstance(node, exp.IndexColumnConstraint) and isinstance(node.this, exp.Identifier):
        return node.this.name
    return None


def unique_key(item: exp.Expression) -> tuple[str | None, list[exp.Expression]] | None:
    """(name or None, parts) when ``item`` is a table-level UNIQUE key (possibly ``CONSTRAINT c UNIQUE``)."""
    if isinstance(item, exp.Constraint):
        for inner in item.expressions:
            found = unique_key(inner)
            if found is not None:
                return found[0] or item.this.name, found[1]
        return None
    if isinstance(item, exp.UniqueColumnConstraint) and isinstance(item.this, exp.Schema):
        return index_name(item), key_parts(item)
    return None


def _free_name(base: str, taken: set[str]) -> str:
    """The server's name for an unnamed key: its first column's name, then ``name_2``, ``name_3``…"""
    if base.lower() not in taken:
        return base
    n = 2
    while f"{base}_{n}".lower() in taken:
        n += 1
    return f"{base}_{n}"


def with_key(keys: Keys, name: str | None, parts: list[exp.Expression], taken: set[str]) -> tuple[Keys, str]:
    """``keys`` plus a UNIQUE key (only whole-column keys can identify a row, so others are named but
    not kept); and the key's name."""
    cols = _whole_columns(parts)
    if name is None:
        first = parts[0] if parts else None
        base = FUNCTIONAL_INDEX_NAME if first is None or _is_functional(first) else ident(first)
        name = _free_name(base, taken | {n.lower() for n, _ in keys})
    if cols is None:
        return keys, name
    return (*keys, (name, cols)), name


def without_index(keys: Keys, name: str) -> Keys:
    return tuple((n, c) for n, c in keys if n.lower() != name.lower())


def hidden_columns(table: TableSchema, index: str, parts: list[exp.Expression]) -> list[ColumnSchema]:
    """The hidden generated columns MySQL adds for the functional parts of index ``index``."""
    taken = {c.name.lower() for c in table.columns}
    out = []
    for i in functional_parts(parts):
        part = parts[i].this if isinstance(parts[i], exp.Ordered) else parts[i]
        count = 0
        while True:
            suffix = f"!{i}!{count}"
            name = (HIDDEN_PREFIX + index)[:_MAX_NAME - len(suffix)] + suffix
            if name.lower() not in taken:
                break
            count += 1
        taken.add(name.lower())
        out.append(ColumnSchema(name, "", generated=part.this.sql("mysql"), hidden=True))
    return out


def add_hidden(ctx: Ctx, t: TableSchema, index: str, parts: list[exp.Expression]) -> None:
    for col in hidden_columns(t, index, parts):
        ctx.emit(CreateOrModifyColumn(t.db, t.name, col))


def drop_hidden(ctx: Ctx, t: TableSchema, index: str) -> None:
    prefix = (HIDDEN_PREFIX + index + "!").lower()
    for col in t.columns:
        if col.hidden and col.name.lower().startswith(prefix):
            ctx.emit(DropColumn(t.db, t.name, col.name))


def settle_primary_keys(ctx: Ctx) -> None:
    """After a statement: every table it touched that has no PRIMARY KEY gets the implied one."""
    seen: set[tuple[str, str]] = set()
    for change in list(ctx.changes):
        key = (getattr(change, "db", ""), getattr(change, "table", ""))
        new_name = getattr(change, "new_table", None)
        if new_name is not None:
            key = (getattr(change, "new_db", key[0]), new_name)
        if key in seen or not key[1]:
            continue
        seen.add(key)
        t = ctx.catalog.table(*key)
        if t is None or (t.primary_key and not t.implicit_primary_key):
            continue
        want = t.implied_primary_key()
        if want == t.primary_key and bool(want) == t.implicit_primary_key:
            continue
        created = [i for i, c in enumerate(ctx.changes) if isinstance(c, CreateTable)
                   and (c.db, c.table) == (t.db, t.name)]
        found = ctx.changes[created[-1]] if _only_change(ctx, created, t) else None
        if isinstance(found, CreateTable):
            # A CREATE TABLE carries its implicit key itself: one CreateTable, as for a PRIMARY KEY.
            create = replace(found, primary_key=want, implicit_primary_key=bool(want))
            ctx.changes[created[-1]] = create
            ctx.catalog = apply_change(ctx.catalog, create)
        else:
            ctx.emit(PrimaryKeyChanged(t.db, t.name, want, implicit=bool(want)))


def _only_change(ctx: Ctx, created: list[int], t: TableSchema) -> bool:
    """The table's CreateTable is the last change made to it in this statement."""
    if not created:
        return False
    later = ctx.changes[created[-1] + 1:]
    return not any((getattr(c, "db", ""), getattr(c, "table", "")) == (t.db, t.name) for c in later)
