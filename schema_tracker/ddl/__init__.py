"""DDL statements → typed schema changes, by walking sqlglot's tree (this package is the only one importing
sqlglot).

Strategy: classify a statement by its leading keywords (sqlglot's own tokenizer, never regexes), ignore
statements that cannot change a table's columns (``ignored``), and parse the rest with sqlglot 30.30.0
(pinned; ``tests/unit/test_ddl_tree_shape.py`` fails loudly if its tree moves). Every change is applied to the
catalog at once (``changes.apply_change``), so later actions of one ALTER see earlier ones.

Modules: ``dialect`` (sqlglot's dialect, tokens, trees), ``script`` (version comments, splitting, USE),
``ignored`` (statements that change nothing), ``types`` (column definitions), ``create`` (CREATE, DROP,
TRUNCATE, RENAME, ALTER DATABASE), ``alter`` (ALTER TABLE actions), ``shapes`` (pinned tree shapes).

Version comments ``/*!40101 … */`` and ``/*M!100100 … */`` (mysqldump, server-generated DDL) are unwrapped
before parsing, as the server executes their content.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from binlog_model.errors import SchemaError, UnsupportedDDLError
from binlog_model.position import EventPosition
from schema_tracker.changes import SchemaChange, SkippedStatement, apply_change
from schema_tracker.ddl.alter import alter_table, index_statement
from schema_tracker.ddl.context import Ctx
from schema_tracker.ddl.create import (
    alter_database,
    create,
    create_table_text,
    drop,
    rename_tables,
    truncate,
    view_statement,
)
from schema_tracker.ddl.dialect import in_session, parse, tokenize, unsupported
from schema_tracker.ddl.ignored import IGNORED_FIRST, IGNORED_KINDS, object_kind
from schema_tracker.ddl.keys import settle_primary_keys
from schema_tracker.ddl.script import (
    parse_use,
    quote_keyword_columns,
    split_statements,
    unwrap_version_comments,
)
from schema_tracker.ddl.shapes import statement_shapes, tree_shape
from schema_tracker.model import Catalog, ServerSession

__all__ = [
    "apply", "parse_use", "split_statements", "statement_shapes", "tree_shape", "unwrap_version_comments",
]


def apply(catalog: Catalog, sql: str, default_db: str | None, position: EventPosition | None = None, *,
          lenient: bool = False, session: ServerSession | None = None
          ) -> tuple[Catalog, tuple[SchemaChange, ...]]:
    """Apply one SQL statement to ``catalog``; return the new catalog and the changes it caused.

    ``default_db`` is the QUERY event's database (or the script's current ``USE``). Statements that cannot
    change a table (BEGIN, DML, GRANT, views, routines…) return ``(catalog, ())``. A schema change that is
    not understood raises ``UnsupportedDDLError``; a change naming an unknown table or column raises
    ``SchemaError``; both carry the statement and ``position``. With ``lenient=True`` such a statement is
    returned as one ``SkippedStatement`` instead, and the table it names (when known) is marked uncertain.
    ``session`` says which server logged the statement and under which sql_mode (``ServerSession``; the
    default reads it as MariaDB / MySQL 5.7 under the default sql_mode).
    """
    ctx = Ctx(catalog, default_db, lenient=lenient)
    try:
        with in_session(session or ServerSession()):
            try:
                _dispatch(ctx, sql)
            except SchemaError:
                raise
            except Exception as err:  # sqlglot's own failures (deep nesting too): typed, never a crash
                # The text may hold surrogate escapes of invalid bytes: shown escaped, never re-encoded.
                shown = f"{type(err).__name__}: {err}".encode("utf-8", "surrogateescape")
                raise UnsupportedDDLError("the statement could not be read ("
                                          + shown.decode("utf-8", "backslashreplace")[:200] + ")") from err
            settle_primary_keys(ctx)
    except SchemaError as err:
        if not lenient:
            if err.statement is None or err.position is None:
                raise type(err)(err.reason, table=err.table, position=position, statement=sql) from err
            raise
        db, table = ctx.target or (default_db or "", "")
        skipped = SkippedStatement(db, table, f"{type(err).__name__}: {err.reason}")
        return apply_change(catalog, skipped), (skipped,)
    return ctx.catalog, tuple(ctx.changes)



def _dispatch(ctx: Ctx, sql: str) -> None:
    text = unwrap_version_comments(sql).strip()
    tokens = tokenize(text, sql)
    if not tokens:
        return
    if any(t.token_type in (TokenType.VAR, TokenType.IDENTIFIER) and any(ord(ch) > 0xFFFF for ch in t.text)
           for t in tokens):
        # names are utf8mb3 in the server's dictionary: it stores such a name with '?' in place of each
        # 4-byte character, which no rule here can be sure to reproduce
        raise unsupported("a name holds characters outside the BMP (4-byte UTF-8), which the server "
                          "stores altered")
    first = tokens[0].text.upper()
    if first in IGNORED_FIRST or tokens[0].token_type == TokenType.L_PAREN:
        return
    if first == "RENAME":
        rename_tables(ctx, text, tokens)
        return
    if first == "TRUNCATE":
        truncate(ctx, parse(text))
        return
    if first not in ("CREATE", "DROP", "ALTER"):
        raise unsupported(f"unrecognised statement {first}")
    kind, temporary = object_kind(tokens[1:])
    if kind == "INDEX" and first in ("CREATE", "DROP") and not temporary:
        index_statement(ctx, text, tokens, first)
        return
    if kind == "VIEW" and not temporary:
        view_statement(ctx, first, tokens)
        return
    if kind in IGNORED_KINDS or temporary:
        return
    if kind not in ("TABLE", "TABLES", "DATABASE", "SCHEMA"):
        raise unsupported(f"unrecognised {first} statement")
    if first == "ALTER" and kind == "TABLE":
        alter_table(ctx, text, tokens)
    elif first == "ALTER":
        alter_database(ctx, tokens)
    else:
        options = None
        if first == "CREATE" and kind == "TABLE":
            text, options = create_table_text(text, sql)
        try:
            tree = parse(text)
        except UnsupportedDDLError:
            quoted = quote_keyword_columns(text, tokenize(text, sql)) if options is not None else text
            if quoted == text:
                raise
            tree = parse(quoted)  # a column named by a word sqlglot reserves (``any``)
        if isinstance(tree, exp.Command) and first == "CREATE":
            tree = parse(without_partitioning(text, tokenize(text, sql)))
        if isinstance(tree, exp.Create):
            create(ctx, tree, options)
        elif isinstance(tree, exp.Drop):
            drop(ctx, tree)
        else:
            raise unsupported(f"sqlglot returned {type(tree).__name__} for a {first} {kind} statement")


def without_partitioning(text: str, tokens: list[Token]) -> str:
    """CREATE TABLE text cut before a top-level PARTITION BY clause, which sqlglot's MySQL dialect does
    not parse for every form (KEY, LINEAR HASH...) and which never changes the columns."""
    depth = 0
    for tok in tokens:
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
        elif tok.token_type == TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and tok.text.upper() in ("PARTITION", "PARTITION BY"):
            return text[:tok.start]
    return text

