"""Typed schema changes of the tracker → the protobuf ``SchemaChange`` oneof, and SCHEMA BinlogEvents.

Strategy: one small function per change type in a table keyed by the change class, so a new change type
fails loudly (``KeyError`` → ``SchemaError``) instead of being dropped from the model. ``schema_events``
groups one DDL statement's changes into one SCHEMA BinlogEvent per table (consecutive changes of a table).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.errors import SchemaError, UnsupportedDDLError
from binlog_model.position import EventPosition
from binlog_model.resolve.options import StatementText
from binlog_model.resolve.statement_text import printable, put_statement
from binlog_model.resolve.types import map_column
from schema_tracker import changes as ch
from schema_tracker.changes import SchemaChange
from schema_tracker.model import ColumnSchema

__all__ = ["column_definition", "schema_change_to_proto", "schema_events"]


def _column_fields(column: ColumnSchema) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "column_name": column.name,
        "column_type": map_column(column).column_type,
        "nullable": column.nullable,
        "mysql_type": column.column_type,
        "auto_increment": column.auto_increment,
        "charset": column.charset or "",
        "collation": column.collation or "",
        "generated": column.generated is not None,
        "invisible": column.invisible,
    }
    if column.has_default and column.default is not None:
        fields["default_value"] = column.default
    return fields


def column_definition(column: ColumnSchema) -> pb.ColumnDefinition:
    return pb.ColumnDefinition(**_column_fields(column))


def _create_table(c: ch.CreateTable) -> pb.SchemaChange:
    return pb.SchemaChange(create_table=pb.CreateTable(
        # hidden functional-index columns are never part of the visible schema
        columns=[column_definition(col) for col in c.columns if not col.hidden],
        primary_key=list(c.primary_key),
        charset=c.charset or "", collation=c.collation or ""))


def _create_or_modify(c: ch.CreateOrModifyColumn) -> pb.SchemaChange:
    return pb.SchemaChange(create_or_modify_column=pb.CreateOrModifyColumn(
        **_column_fields(c.column), first=c.first, after_column=c.after or ""))


_CONVERTERS: dict[type, Callable[[Any], pb.SchemaChange]] = {
    ch.CreateTable: _create_table,
    ch.CreateOrModifyColumn: _create_or_modify,
    ch.RenameColumn: lambda c: pb.SchemaChange(rename_column=pb.RenameColumn(
        old_column_name=c.old_name, new_column_name=c.new_name)),
    ch.DropColumn: lambda c: pb.SchemaChange(drop_column=pb.DropColumn(column_name=c.column_name)),
    ch.DropTable: lambda c: pb.SchemaChange(drop_table=pb.DropTable()),
    ch.RenameTable: lambda c: pb.SchemaChange(rename_table=pb.RenameTable(
        old_db=c.db, old_table=c.table, new_db=c.new_db, new_table=c.new_table)),
    ch.TruncateTable: lambda c: pb.SchemaChange(truncate_table=pb.TruncateTable()),
    ch.PrimaryKeyChanged: lambda c: pb.SchemaChange(primary_key_changed=pb.PrimaryKeyChanged(
        primary_key=list(c.primary_key))),
    ch.TableCharsetChanged: lambda c: pb.SchemaChange(table_charset_changed=pb.TableCharsetChanged(
        charset=c.charset, collation=c.collation)),
    ch.CreateDatabase: lambda c: pb.SchemaChange(create_database=pb.CreateDatabase(
        charset=c.charset, collation=c.collation)),
    ch.AlterDatabase: lambda c: pb.SchemaChange(alter_database=pb.AlterDatabase(
        charset=c.charset, collation=c.collation)),
    ch.DropDatabase: lambda c: pb.SchemaChange(drop_database=pb.DropDatabase()),
    # The reason may quote statement bytes that are not valid text: shown escaped (it is a message, not data).
    ch.SkippedStatement: lambda c: pb.SchemaChange(skipped_statement=pb.SkippedStatement(
        reason=c.reason.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))),
}


def schema_change_to_proto(change: SchemaChange) -> pb.SchemaChange:
    """The protobuf form of one tracker change. Raises ``SchemaError`` for a change type it does not know."""
    convert = _CONVERTERS.get(type(change))
    if convert is None:
        raise SchemaError(f"no protobuf form for schema change {type(change).__name__}")
    return convert(change)


def schema_events(changes: Sequence[SchemaChange], common: Mapping[str, Any], *, text: str, charset: str,
                  statement_text: StatementText, position: EventPosition) -> list[pb.BinlogEvent]:
    """The SCHEMA BinlogEvents of one DDL statement: consecutive changes of one table form one event.

    ``common``: the fields every event of the statement shares (identity, query index, server id...).
    ``text``/``charset``: the statement (``statement_text`` says which events carry it). Raises
    ``UnsupportedDDLError`` when a name is not valid text."""
    groups = _group_by_table(changes)
    out = []
    for index, (db, table, group) in enumerate(groups):
        try:
            event = pb.BinlogEvent(db=db, table=table, operation=pb.BinlogEvent.SCHEMA, event_index=index,
                                   last_in_statement=index == len(groups) - 1, **common)
            event.schema_changes.extend(schema_change_to_proto(c) for c in group)
        except UnicodeEncodeError as err:
            # Identifiers are UTF-8 in the server (and in every TABLE_MAP): one that is not valid text
            # could never match a rows event, so it is an error, not a name to guess at.
            raise UnsupportedDDLError(
                "the statement names a database, table or column whose bytes are not valid text in the "
                "statement's charset", table=f"{printable(db)}.{printable(table)}", position=position,
                statement=printable(text)) from err
        put_statement(event, text, charset, statement_text == StatementText.ALL
                      or (statement_text == StatementText.FIRST and index == 0))
        out.append(event)
    return out


def _group_by_table(changes: Sequence[SchemaChange]) -> list[tuple[str, str, list[SchemaChange]]]:
    groups: list[tuple[str, str, list[SchemaChange]]] = []
    for change in changes:
        db, table = change.db, change.table
        if groups and groups[-1][0] == db and groups[-1][1] == table:
            groups[-1][2].append(change)
        else:
            groups.append((db, table, [change]))
    return groups
