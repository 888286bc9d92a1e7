"""DDL statements → typed schema changes, by walking sqlglot's tree (the only module importing sqlglot).

Strategy: classify a statement by its leading keywords (sqlglot's own tokenizer, never regexes), ignore
statements that cannot change a table's columns (transactions, DML, grants, views, routines…), and parse
the rest with sqlglot 30.30.0 (pinned; ``tests/test_ddl_tree_shape.py`` fails loudly if its tree moves).
Every change is applied to the catalog at once (``changes.apply_change``), so later actions of one ALTER
see earlier ones.

Fallbacks, each for a statement sqlglot returns as ``exp.Command`` (tested in tests/test_ddl_forms.py):
- ``RENAME TABLE a TO b, c TO d``: read from the token stream.
- ``ALTER TABLE`` with an action sqlglot cannot parse (``ADD (a int, b int)``, ``CONVERT TO CHARACTER
  SET``, some index forms): the action list is split at top-level commas (tokens, so commas inside
  quotes, backticks and parentheses are safe) and each action is parsed on its own as
  ``ALTER TABLE t <action>``. ``ADD (…)`` becomes one ``ADD COLUMN`` per definition; ``CONVERT TO`` and
  index/constraint actions that sqlglot still cannot parse are read from tokens (the latter change no
  column, so they only need recognising).
- ``ALTER DATABASE``: read from tokens.

Version comments ``/*!40101 … */`` and ``/*M!100100 … */`` (mysqldump, server-generated DDL) are unwrapped
before parsing, as the server executes their content.

sqlglot's MySQL dialect reads some type names differently from MySQL (REAL as FLOAT, INT8 as TINYINT, LONG
as BIGINT) and does not tokenize others (POINT, NATIONAL CHAR...): ``_BinlogMySQL`` extends its keyword
table with MySQL's meaning. Still unsupported (``UnsupportedDDLError``): MULTIPOINT, GEOMETRYCOLLECTION,
INET4/INET6 and FLOAT/DOUBLE UNSIGNED, which sqlglot has no type for. JSON is recorded as ``json``
(MariaDB stores it as LONGTEXT).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.dialects.mysql import MySQL
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, TokenType

from binlog_model.errors import SchemaError, UnsupportedDDLError
from binlog_model.position import BinlogPosition
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
    converted_column,
)
from schema_tracker.model import (
    TEXTUAL_TYPES,
    Catalog,
    ColumnSchema,
    TableSchema,
    charset_of_collation,
    default_collation,
    mbmaxlen,
    normalize_charset,
    normalize_collation,
)

__all__ = [
    "apply", "parse_use", "split_statements", "statement_shapes", "tree_shape", "unwrap_version_comments",
]



class _BinlogMySQL(MySQL):
    """sqlglot's MySQL dialect with MySQL's own meaning for type names it reads differently (REAL is
    DOUBLE, INT8 is BIGINT, LONG [VARCHAR] is MEDIUMTEXT...) and the spatial types it does not tokenize."""

    class Tokenizer(MySQL.Tokenizer):
        KEYWORDS = {  # noqa: RUF012 - sqlglot's own convention for tokenizer tables
            **MySQL.Tokenizer.KEYWORDS,
            "REAL": TokenType.DOUBLE, "INT8": TokenType.BIGINT, "INT3": TokenType.MEDIUMINT,
            "MIDDLEINT": TokenType.MEDIUMINT, "LONG": TokenType.MEDIUMTEXT,
            "LONG VARCHAR": TokenType.MEDIUMTEXT,
            "LONG VARBINARY": TokenType.MEDIUMBLOB, "NATIONAL CHAR": TokenType.NCHAR,
            "NATIONAL CHARACTER": TokenType.NCHAR, "NATIONAL VARCHAR": TokenType.NVARCHAR,
            "POINT": TokenType.POINT, "LINESTRING": TokenType.LINESTRING, "POLYGON": TokenType.POLYGON,
            "MULTILINESTRING": TokenType.MULTILINESTRING, "MULTIPOLYGON": TokenType.MULTIPOLYGON,
            # Types sqlglot has no MySQL token for ride on unused type tokens, translated back by name in
            # _SIMPLE_TYPES: MariaDB's INET6/INET4, and the last two spatial collection types.
            "INET6": TokenType.IPADDRESS, "INET4": TokenType.INET,
            "MULTIPOINT": TokenType.INT4MULTIRANGE, "GEOMETRYCOLLECTION": TokenType.INT8MULTIRANGE,
            "GEOMCOLLECTION": TokenType.INT8MULTIRANGE,  # MySQL 8's synonym (MariaDB rejects it)
        }


_MYSQL: Dialect = _BinlogMySQL()


class _CommandFallbackFilter(logging.Filter):
    """Drop sqlglot's "Falling back to parsing as a 'Command'" warning: every such case is handled here on
    purpose (fallback or typed error), so the warning would only be noise in a long replay."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Falling back to parsing as a 'Command'" not in record.getMessage()


if not any(isinstance(f, _CommandFallbackFilter) for f in logging.getLogger("sqlglot").filters):
    logging.getLogger("sqlglot").addFilter(_CommandFallbackFilter())

# Leading keywords of statements that never change a table's columns.
_IGNORED_FIRST = frozenset({
    "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "XA", "START", "GRANT", "REVOKE", "FLUSH",
    "ANALYZE", "OPTIMIZE", "REPAIR", "CHECK", "CHECKSUM", "INSERT", "UPDATE", "DELETE", "REPLACE",
    "SELECT", "SET", "USE", "LOAD", "CALL", "DO", "SHOW", "LOCK", "UNLOCK", "RESET", "PURGE", "KILL",
    "HANDLER", "INSTALL", "UNINSTALL", "EXPLAIN", "DESCRIBE", "DESC", "WITH", "VALUES", "TABLE",
    "STOP", "CHANGE", "BINLOG", "PREPARE", "EXECUTE", "DEALLOCATE", "CACHE", "SHUTDOWN", "HELP", "BACKUP",
})
# Object kinds after CREATE/DROP/ALTER that never change a table's columns.
_IGNORED_KINDS = frozenset({
    "VIEW", "TRIGGER", "PROCEDURE", "FUNCTION", "EVENT", "USER", "ROLE", "INDEX", "SERVER", "SEQUENCE",
    "PACKAGE", "TABLESPACE", "LOGFILE", "SPATIAL", "RESOURCE", "SYNONYM", "UNDO",
})
_AFTER_DEFINER = _IGNORED_KINDS | {"SQL", "ALGORITHM", "TABLE", "DATABASE", "SCHEMA", "AGGREGATE"}
# Modifiers that may sit between CREATE/DROP and the object kind.
_MODIFIERS = frozenset({"OR", "REPLACE", "ONLINE", "OFFLINE", "IGNORE", "UNIQUE", "FULLTEXT", "AGGREGATE",
                        "NONATOMIC", "DEFINITION"})

_INT_TYPES: dict[str, tuple[str, bool]] = {
    "TINYINT": ("tinyint", False), "UTINYINT": ("tinyint", True),
    "SMALLINT": ("smallint", False), "USMALLINT": ("smallint", True),
    "MEDIUMINT": ("mediumint", False), "UMEDIUMINT": ("mediumint", True),
    "INT": ("int", False), "UINT": ("int", True),
    "BIGINT": ("bigint", False), "UBIGINT": ("bigint", True),
}
_INT_WIDTH = {"tinyint": (4, 3), "smallint": (6, 5), "mediumint": (9, 8), "int": (11, 10),
              "bigint": (20, 20)}
_SIMPLE_TYPES = {
    "DATE": "date", "JSON": "json", "GEOMETRY": "geometry", "UUID": "uuid",
    "TINYTEXT": "tinytext", "TEXT": "text", "MEDIUMTEXT": "mediumtext", "LONGTEXT": "longtext",
    "TINYBLOB": "tinyblob", "BLOB": "blob", "MEDIUMBLOB": "mediumblob", "LONGBLOB": "longblob",
    "VARCHAR": "varchar", "NVARCHAR": "varchar", "CHAR": "char", "NCHAR": "char",
    "BINARY": "binary", "VARBINARY": "varbinary", "BIT": "bit",
    "TIME": "time", "DATETIME": "datetime", "TIMESTAMP": "timestamp", "TIMESTAMPTZ": "timestamp",
    "YEAR": "year", "ENUM": "enum", "SET": "set", "POINT": "point", "LINESTRING": "linestring",
    "POLYGON": "polygon", "MULTILINESTRING": "multilinestring", "MULTIPOLYGON": "multipolygon",
    "IPADDRESS": "inet6", "INET": "inet4", "INT4MULTIRANGE": "multipoint",
    "INT8MULTIRANGE": "geometrycollection",
}
# ALTER TABLE actions that manage partitions (never columns).
# Also DISABLE/ENABLE KEYS and ORDER BY (row order), which touch no column either.
_PARTITION_ACTIONS = frozenset({"PARTITION", "REMOVE", "COALESCE", "REORGANIZE", "EXCHANGE", "REBUILD",
                                "ANALYZE", "CHECK", "OPTIMIZE", "REPAIR", "DISCARD", "IMPORT", "DISABLE",
                                "ENABLE", "ORDER"})
# Column constraint kinds that do not change what the tracker records.
_IGNORED_CONSTRAINTS = (
    exp.CommentColumnConstraint, exp.UniqueColumnConstraint, exp.OnUpdateColumnConstraint,
    exp.CheckColumnConstraint, exp.Reference, exp.IndexColumnConstraint,
)
_TEXT_SIZES = (("tinytext", "tinyblob", 255), ("text", "blob", 65535),
               ("mediumtext", "mediumblob", 16777215), ("longtext", "longblob", 4294967295))
_BINARY_OF = {"char": "binary", "varchar": "varbinary", "tinytext": "tinyblob", "text": "blob",
              "mediumtext": "mediumblob", "longtext": "longblob"}


# --- public helpers ----------------------------------------------------------------------------------------


def unwrap_version_comments(sql: str) -> str:
    """Replace ``/*!NNNNN text */`` and ``/*M!NNNNNN text */`` by ``text`` (dropped for version 999999, which
    no server runs); quotes and other comments are kept."""
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch in "'\"`":
            j = i + 1
            while j < n:
                if sql[j] == "\\" and ch != "`":
                    j += 2
                    continue
                if sql[j] == ch:
                    if j + 1 < n and sql[j + 1] == ch:  # doubled quote
                        j += 2
                        continue
                    break
                j += 1
            out.append(sql[i:j + 1])
            i = j + 1
        elif sql.startswith("/*!", i) or sql.startswith("/*M!", i):
            k = j = i + (3 if sql[i + 2] == "!" else 4)
            while j < n and sql[j].isdigit():
                j += 1
            end = sql.find("*/", j)
            end = n if end < 0 else end
            # version 999999 marks client-only text (mariadb-dump's "\\- enable the sandbox mode")
            if sql[k:j] != "999999":
                out.append(" " + sql[j:end] + " ")
            i = end + 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def split_statements(text: str) -> list[str]:
    """Split a script into statements at top-level semicolons (tokens, so quoted ``;`` are safe).

    Version comments are unwrapped first; comment-only pieces are dropped. ``DELIMITER`` scripts (stored
    routines) are not supported. Raises ``UnsupportedDDLError`` when the text cannot be tokenized.
    """
    text = unwrap_version_comments(text)
    tokens = _tokenize(text, None)
    out: list[str] = []
    start: Token | None = None
    last: Token | None = None
    for tok in tokens:
        if tok.token_type == TokenType.SEMICOLON:
            if start is not None and last is not None:
                out.append(text[start.start:last.end + 1])
            start = last = None
            continue
        if start is None:
            start = tok
        last = tok
    if start is not None and last is not None:
        out.append(text[start.start:last.end + 1])
    return out


def parse_use(sql: str) -> str | None:
    """The database a ``USE db`` statement selects, or None for any other statement."""
    tokens = _tokenize(unwrap_version_comments(sql), sql)
    if len(tokens) >= 2 and tokens[0].text.upper() == "USE":
        return tokens[1].text
    return None


def tree_shape(sql: str) -> str:
    """A compact signature of sqlglot's tree for ``sql`` (node classes, argument names, DataType and
    kinds), used to pin the parser's output in a golden file."""
    try:
        tree = sqlglot.parse_one(unwrap_version_comments(sql), read=_MYSQL)
    except SqlglotError as err:
        return f"ParseError({type(err).__name__})"
    return _shape(tree)


def statement_shapes(sql: str) -> list[str]:
    """``tree_shape`` of a statement and, for ALTER TABLE, of each action as ``apply`` parses it alone."""
    text = unwrap_version_comments(sql).strip()
    shapes = [tree_shape(text)]
    tokens = _tokenize(text, sql)
    if len(tokens) > 3 and tokens[0].text.upper() == "ALTER" and _object_kind(tokens[1:])[0] == "TABLE":
        i = next(n for n, t in enumerate(tokens) if t.text.upper() == "TABLE") + 1
        i += 3 if i + 1 < len(tokens) and tokens[i + 1].token_type == TokenType.DOT else 1
        for action in _split_commas(tokens[i:]):
            shapes.append(tree_shape("ALTER TABLE `_` " + text[action[0].start:action[-1].end + 1]))
    return shapes


def _shape(node: Any) -> str:
    if isinstance(node, list):
        return "[" + ",".join(_shape(x) for x in node) + "]"
    if not isinstance(node, exp.Expression):
        return "_"
    parts = []
    for key, value in node.args.items():
        if value is None or value is False or value == []:
            continue
        if isinstance(node, exp.DataType) and key == "this":
            parts.append(f"this={value.name}")
        elif isinstance(value, str) and not isinstance(node, exp.Identifier | exp.Literal | exp.Var) \
                and not (isinstance(node, exp.Command) and key != "this"):
            parts.append(f"{key}={value.upper()}")  # keywords (kind, position, Command's verb), not names
        elif isinstance(value, exp.Expression | list):
            parts.append(f"{key}={_shape(value)}")
        elif value is True:
            parts.append(key)
    return type(node).__name__ + ("(" + ",".join(parts) + ")" if parts else "")


# --- apply ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Ctx:
    catalog: Catalog
    default_db: str | None
    changes: list[SchemaChange] = field(default_factory=list)
    target: tuple[str, str] | None = None  # the table a skipped statement makes uncertain

    def emit(self, change: SchemaChange) -> None:
        self.catalog = apply_change(self.catalog, change)
        self.changes.append(change)


def apply(catalog: Catalog, sql: str, default_db: str | None, position: BinlogPosition | None = None, *,
          lenient: bool = False) -> tuple[Catalog, tuple[SchemaChange, ...]]:
    """Apply one SQL statement to ``catalog``; return the new catalog and the changes it caused.

    ``default_db`` is the QUERY event's database (or the script's current ``USE``). Statements that cannot
    change a table (BEGIN, DML, GRANT, views, routines…) return ``(catalog, ())``. A schema change that is
    not understood raises ``UnsupportedDDLError``; a change naming an unknown table or column raises
    ``SchemaError``; both carry the statement and ``position``. With ``lenient=True`` such a statement is
    returned as one ``SkippedStatement`` instead, and the table it names (when known) is marked uncertain.
    """
    ctx = _Ctx(catalog, default_db)
    try:
        try:
            _dispatch(ctx, sql)
        except _MALFORMED as err:
            # Malformed SQL can break sqlglot, or our walk over the tree it returns, in ways that are not
            # SqlglotError (TypeError, AttributeError on a missing node ...): a statement not understood.
            shown = f"{type(err).__name__}: {err}".encode("utf-8", "surrogateescape")
            raise _unsupported("the statement does not parse into a tree the tracker understands ("
                               + shown.decode("utf-8", "backslashreplace")[:200] + ")") from err
    except SchemaError as err:
        if not lenient:
            if err.statement is None or err.position is None:
                raise type(err)(err.reason, table=err.table, position=position, statement=sql) from err
            raise
        db, table = ctx.target or (default_db or "", "")
        skipped = SkippedStatement(db, table, f"{type(err).__name__}: {err.reason}")
        return apply_change(catalog, skipped), (skipped,)
    return ctx.catalog, tuple(ctx.changes)


_MALFORMED = (SqlglotError, AttributeError, TypeError, ValueError, IndexError, KeyError, RecursionError)


def _unsupported(message: str) -> UnsupportedDDLError:
    return UnsupportedDDLError(message)


def _tokenize(text: str, statement: str | None) -> list[Token]:
    try:
        return list(_MYSQL.tokenize(text))
    except SqlglotError as err:
        raise UnsupportedDDLError(f"cannot tokenize SQL: {err}", statement=statement or text) from err


def _parse(sql: str) -> Any:
    try:
        tree = sqlglot.parse_one(sql, read=_MYSQL)
    except SqlglotError as err:
        first = str(err).splitlines()[0]
        raise _unsupported(f"sqlglot cannot parse the statement: {first}") from err
    return tree


def _dispatch(ctx: _Ctx, sql: str) -> None:
    text = unwrap_version_comments(sql).strip()
    tokens = _tokenize(text, sql)
    if not tokens:
        return
    first = tokens[0].text.upper()
    if first in _IGNORED_FIRST or tokens[0].token_type == TokenType.L_PAREN:
        return
    if first == "RENAME":
        _rename_tables(ctx, text, tokens)
        return
    if first == "TRUNCATE":
        _truncate(ctx, _parse(text))
        return
    if first not in ("CREATE", "DROP", "ALTER"):
        raise _unsupported(f"unrecognised statement {first}")
    kind, temporary = _object_kind(tokens[1:])
    if kind in _IGNORED_KINDS or temporary:
        return
    if kind not in ("TABLE", "TABLES", "DATABASE", "SCHEMA"):
        raise _unsupported(f"unrecognised {first} statement")
    if first == "ALTER" and kind == "TABLE":
        _alter_table(ctx, text, tokens)
    elif first == "ALTER":
        _alter_database(ctx, tokens)
    else:
        tree = _parse(text)
        if isinstance(tree, exp.Command) and first == "CREATE":
            tree = _parse(_without_partitioning(text, tokens))
        if isinstance(tree, exp.Create):
            _create(ctx, tree)
        elif isinstance(tree, exp.Drop):
            _drop(ctx, tree)
        else:
            raise _unsupported(f"sqlglot returned {type(tree).__name__} for a {first} {kind} statement")


def _without_partitioning(text: str, tokens: list[Token]) -> str:
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


def _object_kind(tokens: list[Token]) -> tuple[str, bool]:
    """The object keyword after CREATE/DROP/ALTER, skipping modifiers; and whether TEMPORARY was seen."""
    temporary = False
    i = 0
    while i < len(tokens):
        word = tokens[i].text.upper()
        if word == "TEMPORARY":
            temporary = True
        elif word == "DEFINER":  # DEFINER = user@host: skip to the next keyword we know
            while i + 1 < len(tokens) and tokens[i + 1].text.upper() not in _AFTER_DEFINER:
                i += 1
        elif word == "ALGORITHM" or (word == "SQL" and i + 1 < len(tokens)
                                     and tokens[i + 1].text.upper() == "SECURITY"):
            i += 2
        elif word not in _MODIFIERS:
            return word, temporary
        i += 1
    return "", temporary


# --- names -------------------------------------------------------------------------------------------------


def _table_name(ctx: _Ctx, table: exp.Table) -> tuple[str, str]:
    db = table.db or ctx.default_db
    if not db:
        raise SchemaError(f"no database selected for table {table.name!r}")
    return db, table.name


def _need_table(ctx: _Ctx, db: str, name: str) -> TableSchema:
    found = ctx.catalog.table(db, name)
    if found is None:
        raise SchemaError("table is not known to the schema tracker", table=f"{db}.{name}")
    return found


def _ident(node: exp.Expression) -> str:
    """A column name from a key part: Column, Identifier, prefix ``a(10)`` or ordered ``a DESC``."""
    if isinstance(node, exp.Identifier):
        return node.name
    if isinstance(node, exp.Column | exp.Ordered | exp.ColumnPrefix):
        return _ident(node.this)
    if isinstance(node, exp.Anonymous):  # a(10) read as a call
        return node.name
    ident = node.find(exp.Identifier)
    if ident is None:
        raise _unsupported(f"cannot read a column name from {node.sql('mysql')}")
    return ident.name


# --- CREATE / DROP / TRUNCATE ------------------------------------------------------------------------------


def _props(tree: exp.Expression) -> list[exp.Expression]:
    props = tree.args.get("properties")
    return list(props.expressions) if isinstance(props, exp.Properties) else []


def _charset_options(options: list[exp.Expression], fallback: tuple[str, str]) -> tuple[str, str] | None:
    """(charset, collation) set by CHARACTER SET / COLLATE options, or None when neither is present."""
    charset = collation = None
    for opt in options:
        if isinstance(opt, exp.CharacterSetProperty):
            charset = normalize_charset(opt.this.name)
        elif isinstance(opt, exp.CollateProperty):
            collation = normalize_collation(opt.this.name)
    if charset is None and collation is None:
        return None
    if charset is not None and charset.upper() == "DEFAULT":
        charset = fallback[0]
    if collation is None:
        collation = default_collation(charset or fallback[0])
    return charset or charset_of_collation(collation), collation


def _create(ctx: _Ctx, tree: exp.Create) -> None:
    kind = (tree.args.get("kind") or "").upper()
    props = _props(tree)
    if any(isinstance(p, exp.TemporaryProperty) for p in props):
        return
    if kind in ("DATABASE", "SCHEMA"):
        name = tree.this.name
        if tree.args.get("exists") and ctx.catalog.database(name) is not None:
            return
        server = (ctx.catalog.server_charset, ctx.catalog.server_collation or "")
        charset, collation = _charset_options(props, server) or server
        ctx.emit(CreateDatabase(name, charset, collation))
        return
    schema = tree.this
    table = schema.this if isinstance(schema, exp.Schema) else schema
    if not isinstance(table, exp.Table):
        raise _unsupported("CREATE TABLE without a table name")
    db, name = _table_name(ctx, table)
    ctx.target = (db, name)
    if tree.args.get("exists") and ctx.catalog.table(db, name) is not None:
        return
    like = next((p for p in props if isinstance(p, exp.LikeProperty)), None)
    if like is not None:
        src = _need_table(ctx, *_table_name(ctx, like.this))
        ctx.emit(CreateTable(db, name, src.columns, src.primary_key, src.charset, src.collation, src.engine))
        return
    if tree.args.get("expression") is not None or not isinstance(schema, exp.Schema):
        raise _unsupported("CREATE TABLE … SELECT: the columns come from a query (row-based logging writes "
                           "a plain CREATE TABLE instead)")
    charset, collation = _charset_options(props, ctx.catalog.database_defaults(db)) or \
        ctx.catalog.database_defaults(db)
    engine = next((p.this.name for p in props if isinstance(p, exp.EngineProperty)), None)
    shell = TableSchema(db, name, (), (), charset, collation, engine)
    columns: list[ColumnSchema] = []
    pk: tuple[str, ...] = ()
    for item in schema.expressions:
        if isinstance(item, exp.ColumnDef):
            col, inline_pk = _column(item, shell)
            columns.append(col)
            if inline_pk:
                pk = (col.name,)
        elif (found := _primary_key(item)) is not None:
            pk = found
    ctx.emit(CreateTable(db, name, tuple(columns), pk, charset, collation, engine))


def _primary_key(item: exp.Expression) -> tuple[str, ...] | None:
    """The key columns when ``item`` is a table-level PRIMARY KEY (possibly named by CONSTRAINT)."""
    if isinstance(item, exp.Constraint):
        for inner in item.expressions:
            if (found := _primary_key(inner)) is not None:
                return found
        return None
    if isinstance(item, exp.PrimaryKey):
        return tuple(_ident(e) for e in item.expressions)
    return None


def _drop(ctx: _Ctx, tree: exp.Drop) -> None:
    kind = (tree.args.get("kind") or "").upper()
    if tree.args.get("temporary"):
        return
    targets = tree.args.get("tables") or [tree.this]
    if kind in ("DATABASE", "SCHEMA"):
        for t in targets:
            ctx.emit(DropDatabase(t.db or t.name))
        return
    for t in targets:
        db, name = _table_name(ctx, t)
        # Unknown tables are left alone: the result (no such table) is what the catalog already says.
        if ctx.catalog.table(db, name) is not None:
            ctx.emit(DropTable(db, name))


def _truncate(ctx: _Ctx, tree: exp.Expression) -> None:
    if not isinstance(tree, exp.TruncateTable):
        raise _unsupported("TRUNCATE statement not understood")
    for t in tree.expressions:
        db, name = _table_name(ctx, t)
        if ctx.catalog.table(db, name) is not None:
            ctx.emit(TruncateTable(db, name))


def _rename_tables(ctx: _Ctx, text: str, tokens: list[Token]) -> None:
    # sqlglot returns RENAME as a Command whose argument is the raw rest of the statement.
    rest = text[tokens[0].end + 1:]
    toks = _tokenize(rest, text)
    if not toks or toks[0].text.upper() not in ("TABLE", "TABLES"):
        raise _unsupported("only RENAME TABLE is understood")
    i = 1
    if_exists = i + 1 < len(toks) and toks[i].text.upper() == "IF" and toks[i + 1].text.upper() == "EXISTS"
    if if_exists:
        i += 2
    pairs = []
    for part in _split_commas(toks[i:]):
        words = [t.text.upper() if t.token_type == TokenType.VAR else "" for t in part]
        if "TO" not in words:
            raise _unsupported("RENAME TABLE pair without TO")
        k = words.index("TO")
        pairs.append((_qualified(ctx, part[:k]), _qualified(ctx, part[k + 1:])))
    for (db, name), (new_db, new_name) in pairs:
        ctx.target = (db, name)
        if if_exists and ctx.catalog.table(db, name) is None:
            continue  # MariaDB's RENAME TABLE IF EXISTS passes over a missing table
        _need_table(ctx, db, name)
        ctx.emit(RenameTable(db, name, new_db, new_name))


def _qualified(ctx: _Ctx, part: list[Token]) -> tuple[str, str]:
    names = [t.text for t in part if t.token_type != TokenType.DOT]
    if len(names) == 1 and len(part) == 1:
        if not ctx.default_db:
            raise SchemaError(f"no database selected for table {names[0]!r}")
        return ctx.default_db, names[0]
    if len(names) == 2 and len(part) == 3:
        return names[0], names[1]
    raise _unsupported("cannot read a table name")


def _split_commas(tokens: list[Token]) -> list[list[Token]]:
    parts: list[list[Token]] = [[]]
    depth = 0
    for tok in tokens:
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
        elif tok.token_type == TokenType.R_PAREN:
            depth -= 1
        elif tok.token_type == TokenType.COMMA and depth == 0:
            parts.append([])
            continue
        parts[-1].append(tok)
    return [p for p in parts if p]


# --- ALTER DATABASE -------------------------------------------------------------------------------------


def _alter_database(ctx: _Ctx, tokens: list[Token]) -> None:
    words = [t.text for t in tokens[2:]]
    upper = [w.upper() for w in words]
    name = ctx.default_db
    if upper and upper[0] not in ("DEFAULT", "CHARACTER", "CHARSET", "COLLATE", "READ", "COMMENT", "UPGRADE"):
        name = words[0]
        words, upper = words[1:], upper[1:]
    if not name:
        raise SchemaError("ALTER DATABASE without a database name or default database")
    charset = collation = None
    i = 0
    while i < len(upper):
        w = upper[i]
        if w in ("CHARACTER", "CHARSET", "CHARACTER SET", "COLLATE"):
            j = i + 1
            if w == "CHARACTER" and j < len(upper) and upper[j] == "SET":
                j += 1
            if j < len(upper) and upper[j] == "=":
                j += 1
            if j >= len(words):
                raise _unsupported("ALTER DATABASE option without a value")
            if w == "COLLATE":
                collation = normalize_collation(words[j])
            else:
                charset = normalize_charset(words[j])
            i = j
        i += 1
    if charset is None and collation is None:
        return  # COMMENT, READ ONLY, UPGRADE DATA DIRECTORY NAME: nothing a table inherits
    if collation is None:
        collation = default_collation(charset or "")
    ctx.emit(AlterDatabase(name, charset or charset_of_collation(collation), collation))


# --- ALTER TABLE -------------------------------------------------------------------------------------------


def _alter_table(ctx: _Ctx, text: str, tokens: list[Token]) -> None:
    i = 1
    while tokens[i].text.upper() in ("ONLINE", "OFFLINE", "IGNORE"):
        i += 1
    i += 1  # TABLE
    if i + 1 < len(tokens) and tokens[i].text.upper() == "IF" and tokens[i + 1].text.upper() == "EXISTS":
        i += 2
    if i + 2 < len(tokens) and tokens[i + 1].token_type == TokenType.DOT:
        name_tokens, i = tokens[i:i + 3], i + 3
    else:
        name_tokens, i = tokens[i:i + 1], i + 1
    db, name = _qualified(ctx, name_tokens)
    ctx.target = (db, name)
    _need_table(ctx, db, name)
    actions = _split_commas(tokens[i:])
    # The server renames the table after every other action, wherever RENAME TO appears in the list.
    renames = [a for a in actions if a[0].text.upper() == "RENAME"
               and (len(a) < 2 or a[1].text.upper() not in ("COLUMN", "INDEX", "KEY"))]
    for action in [a for a in actions if not any(a is r for r in renames)] + renames:
        _alter_action(ctx, db, name, text[action[0].start:action[-1].end + 1], action)


def _alter_action(ctx: _Ctx, db: str, name: str, sql: str, toks: list[Token]) -> None:
    words = [t.text.upper() for t in toks]
    if words[0] == "ADD":
        j = 2 if len(words) > 1 and words[1] == "COLUMN" else 1
        if j < len(words) and words[j] == "IF":
            j += 3
        if j < len(toks) and toks[j].token_type == TokenType.L_PAREN:
            inner = toks[j + 1:-1]
            for part in _split_commas(inner):
                piece = sql[part[0].start - toks[0].start:part[-1].end - toks[0].start + 1]
                if part[0].text.upper() in ("PRIMARY KEY", "CONSTRAINT", "INDEX", "KEY", "UNIQUE"):
                    _alter_action(ctx, db, name, "ADD " + piece, _tokenize("ADD " + piece, sql))
                else:
                    _alter_action(ctx, db, name, "ADD COLUMN " + piece, _tokenize("ADD COLUMN " + piece, sql))
            return
    # The tokenizer may merge "PARTITION BY" into one token; its first word decides.
    if words[0].split()[0] in _PARTITION_ACTIONS or (len(words) > 1 and words[1] == "PARTITION"):
        return  # partition maintenance: rows move, columns do not
    if words[:2] == ["RENAME", "AS"]:  # sqlglot knows RENAME [TO] only; AS is a MySQL synonym
        sql = "RENAME TO " + sql[toks[2].start - toks[0].start:]
    if words[0] == "CONVERT":
        _convert_charset(ctx, db, name, toks)
        return
    tree = _parse(f"ALTER TABLE `_` {sql}")
    if not isinstance(tree, exp.Alter):
        if _is_index_action(words):
            return  # index, foreign key or check: no column changes
        raise _unsupported(f"ALTER TABLE action not understood: {sql}")
    for action in tree.args.get("actions") or []:
        _apply_action(ctx, db, name, action)
    options = list(tree.args.get("options") or [])
    if options:
        t = _need_table(ctx, db, name)
        cs = _charset_options(options, (t.charset or "", t.collation or ""))
        if cs is not None:
            ctx.emit(TableCharsetChanged(db, name, cs[0], cs[1]))
        for opt in options:
            if isinstance(opt, exp.EngineProperty):
                t = _need_table(ctx, db, name)
                ctx.catalog = ctx.catalog.with_table(replace(t, engine=opt.this.name))


def _is_index_action(words: list[str]) -> bool:
    if words[0] not in ("ADD", "DROP") or len(words) < 2:
        return False
    return words[1] in ("INDEX", "KEY", "UNIQUE", "FULLTEXT", "SPATIAL", "FOREIGN", "CONSTRAINT", "CHECK")


def _convert_charset(ctx: _Ctx, db: str, name: str, toks: list[Token]) -> None:
    words = [t.text for t in toks]
    upper = [w.upper() for w in words]
    charset = collation = None
    for i, w in enumerate(upper[:-1]):
        if w in ("SET", "CHARSET", "CHARACTER SET"):
            charset = words[i + 1]
        elif w == "COLLATE":
            collation = words[i + 1]
    if charset is None:
        raise _unsupported("CONVERT TO without CHARACTER SET")
    t = _need_table(ctx, db, name)
    if charset.upper() == "DEFAULT":
        charset = ctx.catalog.database_defaults(db)[0]
    charset = normalize_charset(charset)
    collation = normalize_collation(collation) if collation else default_collation(charset)
    for col in t.columns:
        new = converted_column(col, charset, collation)
        if new != col:
            ctx.emit(CreateOrModifyColumn(db, name, new))
    ctx.emit(TableCharsetChanged(db, name, charset, collation))


def _position(node: exp.Expression) -> tuple[bool, str | None]:
    pos = node.args.get("position")
    if not isinstance(pos, exp.ColumnPosition):
        return False, None
    where = (pos.args.get("position") or "").upper()
    if where == "FIRST":
        return True, None
    return False, _ident(pos.this)


def _apply_action(ctx: _Ctx, db: str, name: str, action: exp.Expression) -> None:
    t = _need_table(ctx, db, name)
    if isinstance(action, exp.ColumnDef):  # ADD [COLUMN]
        col, inline_pk = _column(action, t)
        if t.column(col.name) is not None:
            if action.args.get("exists"):
                return  # ADD COLUMN IF NOT EXISTS on an existing column
            raise SchemaError(f"ADD COLUMN {col.name!r}: the column already exists", table=t.qualified_name)
        first, after = _position(action)
        ctx.emit(CreateOrModifyColumn(db, name, col, first, after))
        if inline_pk:
            ctx.emit(PrimaryKeyChanged(db, name, (col.name,)))
    elif isinstance(action, exp.ModifyColumn):
        _modify(ctx, t, action)
    elif isinstance(action, exp.RenameColumn):
        old, new = _ident(action.this), _ident(action.args["to"])
        if t.column(old) is None:
            raise SchemaError(f"RENAME COLUMN: unknown column {old!r}", table=t.qualified_name)
        ctx.emit(RenameColumn(db, name, t.column(old).name, new))  # type: ignore[union-attr]
    elif isinstance(action, exp.Drop):
        kind = (action.args.get("kind") or "").upper()
        if kind == "COLUMN" or not kind:
            for target in action.args.get("tables") or [action.this]:
                col_name = _ident(target)
                if t.column(col_name) is None:
                    if action.args.get("exists"):
                        continue
                    raise SchemaError(f"DROP COLUMN: unknown column {col_name!r}", table=t.qualified_name)
                ctx.emit(DropColumn(db, name, t.column(col_name).name))  # type: ignore[union-attr]
                t = _need_table(ctx, db, name)
        elif kind not in ("INDEX", "KEY", "FOREIGN KEY", "CONSTRAINT", "CHECK"):
            raise _unsupported(f"ALTER TABLE DROP {kind} not understood")
    elif isinstance(action, exp.DropPrimaryKey):
        ctx.emit(PrimaryKeyChanged(db, name, ()))
    elif isinstance(action, exp.AddConstraint):
        for item in action.expressions:
            pk = _primary_key(item)
            if pk is not None:
                cols = tuple(t.column(k).name if t.column(k) else k for k in pk)  # type: ignore[union-attr]
                ctx.emit(PrimaryKeyChanged(db, name, cols))
    elif isinstance(action, exp.AlterColumn):
        _alter_column(ctx, t, action)
    elif isinstance(action, exp.AlterRename):
        new_db, new_name = _table_name(ctx, action.this)
        ctx.emit(RenameTable(db, name, new_db, new_name))
        ctx.target = (new_db, new_name)
    elif isinstance(action, exp.ForceProperty | exp.RenameIndex | exp.AlterIndex):
        return  # rebuilds and index renames/visibility: no column changes
    else:
        raise _unsupported(f"ALTER TABLE action {type(action).__name__} not understood")


def _modify(ctx: _Ctx, t: TableSchema, action: exp.ModifyColumn) -> None:
    definition = action.this
    rename_from = action.args.get("rename_from")
    old_name = rename_from.name if rename_from is not None else definition.name
    old = t.column(old_name)
    if old is None:
        raise SchemaError(f"MODIFY/CHANGE: unknown column {old_name!r}", table=t.qualified_name)
    col, inline_pk = _column(definition, t)
    if old.name.lower() in {k.lower() for k in t.primary_key}:
        col = replace(col, nullable=False)  # PK columns stay NOT NULL, so this is no redefinition
    first, after = _position(definition)
    if rename_from is None:  # MODIFY
        ctx.emit(CreateOrModifyColumn(t.db, t.name, col, first, after))
    else:  # CHANGE: rename when the name differs, redefine when anything else does
        if old.name.lower() != col.name.lower() or old.name != col.name:
            ctx.emit(RenameColumn(t.db, t.name, old.name, col.name))
        if replace(old, name=col.name) != col or first or after is not None:
            ctx.emit(CreateOrModifyColumn(t.db, t.name, col, first, after))
    if inline_pk:
        ctx.emit(PrimaryKeyChanged(t.db, t.name, (col.name,)))


def _alter_column(ctx: _Ctx, t: TableSchema, action: exp.AlterColumn) -> None:
    col = t.column(action.name)
    if col is None:
        raise SchemaError(f"ALTER COLUMN: unknown column {action.name!r}", table=t.qualified_name)
    if action.args.get("drop"):
        new = replace(col, default=None, has_default=False)
    elif action.args.get("default") is not None:
        new = replace(col, default=action.args["default"].sql("mysql"), has_default=True)
    elif action.args.get("visible") is not None:
        new = replace(col, invisible=str(action.args["visible"]).upper() == "INVISIBLE")
    else:
        raise _unsupported("ALTER COLUMN form not understood")
    ctx.emit(CreateOrModifyColumn(t.db, t.name, new))


# --- column definitions ------------------------------------------------------------------------------------


def _int_param(node: exp.Expression) -> int:
    value = node.this if isinstance(node, exp.DataTypeParam) else node
    try:
        return int(value.name)
    except (ValueError, AttributeError) as err:
        raise _unsupported(f"type parameter is not an integer: {node.sql('mysql')}") from err


def _column(node: exp.ColumnDef, table: TableSchema) -> tuple[ColumnSchema, bool]:
    """The column a definition describes in ``table`` (for charset inheritance); and whether it carries
    an inline PRIMARY KEY."""
    kind = node.args.get("kind")
    if not isinstance(kind, exp.DataType):
        raise _unsupported(f"column {node.name!r} has no data type")
    col = _data_type(node.name, kind)
    charset = collation = None
    binary_attr = False
    nullable, pk = True, False
    for cons in node.args.get("constraints") or []:
        k = cons.args.get("kind") if isinstance(cons, exp.ColumnConstraint) else cons
        if isinstance(k, exp.NotNullColumnConstraint):
            nullable = bool(k.args.get("allow_null"))
        elif isinstance(k, exp.PrimaryKeyColumnConstraint):
            pk = True
        elif isinstance(k, exp.AutoIncrementColumnConstraint):
            col = replace(col, auto_increment=True)
        elif isinstance(k, exp.DefaultColumnConstraint):
            is_null = isinstance(k.this, exp.Null)
            col = replace(col, default=None if is_null else k.this.sql("mysql"), has_default=True)
        elif isinstance(k, exp.CharacterSetColumnConstraint):
            charset = normalize_charset(k.this.name)
        elif isinstance(k, exp.CollateColumnConstraint):
            collation = normalize_collation(k.this.name)
        elif isinstance(k, exp.ComputedColumnConstraint):
            col = replace(col, generated=k.this.sql("mysql"), generated_stored=bool(k.args.get("persisted")))
        elif isinstance(k, exp.InvisibleColumnConstraint):
            col = replace(col, invisible=True)
        elif isinstance(k, exp.ZeroFillColumnConstraint):
            col = replace(col, zerofill=True, unsigned=True)
            if col.data_type in _INT_WIDTH and node.args["kind"].expressions == []:
                col = replace(col, length=_INT_WIDTH[col.data_type][1])
        elif isinstance(k, exp.BinaryColumnConstraint):
            binary_attr = True
        elif isinstance(k, _IGNORED_CONSTRAINTS):
            continue
        else:
            raise _unsupported(f"column attribute {type(k).__name__} of {node.name!r} not understood")
    if col.data_type == "serial":
        col = replace(col, data_type="bigint", length=20, unsigned=True, auto_increment=True)
        nullable = False
    col = replace(col, nullable=nullable and not pk)
    if kind.this in (exp.DataType.Type.NCHAR, exp.DataType.Type.NVARCHAR):
        charset = charset or "utf8mb3"
    return _resolve_charset(col, table, charset, collation, binary_attr), pk


def _resolve_charset(col: ColumnSchema, table: TableSchema, charset: str | None, collation: str | None,
                     binary_attr: bool) -> ColumnSchema:
    if col.data_type not in TEXTUAL_TYPES:
        return col
    if charset == "binary" and col.data_type in _BINARY_OF:
        return _sized(replace(col, data_type=_BINARY_OF[col.data_type]), None)
    if collation is not None and charset is None:
        charset = charset_of_collation(collation)
    if charset is None:
        charset = table.charset or "latin1"
        collation = collation or table.collation or default_collation(charset)
    elif collation is None:
        collation = default_collation(charset)
    if binary_attr:
        collation = f"{charset}_bin"
    return _sized(replace(col, charset=charset, collation=collation), col.length)


def _sized(col: ColumnSchema, length: int | None) -> ColumnSchema:
    """TEXT(n)/BLOB(n): the smallest TEXT/BLOB type that holds n characters (bytes for BLOB)."""
    if col.data_type not in ("text", "blob") or length is None:
        return col
    need = length * (mbmaxlen(col.charset) if col.data_type == "text" else 1)
    text_t = col.data_type == "text"
    for text_name, blob_name, limit in _TEXT_SIZES:
        if need <= limit:
            return replace(col, data_type=text_name if text_t else blob_name, length=None)
    return replace(col, data_type="longtext" if text_t else "longblob", length=None)


def _data_type(name: str, kind: exp.DataType) -> ColumnSchema:
    dtype = kind.this.name
    params = [p for p in kind.expressions if not isinstance(p, exp.Literal) or not p.is_string] \
        if dtype not in ("ENUM", "SET") else []
    ints = [_int_param(p) for p in params]
    if dtype in _INT_TYPES:
        data_type, unsigned = _INT_TYPES[dtype]
        width = ints[0] if ints else _INT_WIDTH[data_type][1 if unsigned else 0]
        return ColumnSchema(name, data_type, length=width, unsigned=unsigned)
    if dtype == "BOOLEAN":
        return ColumnSchema(name, "tinyint", length=1)
    if dtype == "SERIAL":
        return ColumnSchema(name, "serial")
    if dtype in ("DECIMAL", "UDECIMAL"):
        precision = ints[0] if ints else 10
        scale = ints[1] if len(ints) > 1 else 0
        return ColumnSchema(name, "decimal", precision=precision, scale=scale, unsigned=dtype == "UDECIMAL")
    if dtype in ("FLOAT", "DOUBLE", "UDOUBLE", "UFLOAT"):
        base = "double" if "DOUBLE" in dtype else "float"
        unsigned = dtype.startswith("U")
        if len(ints) == 1:  # FLOAT(p): precision in bits picks FLOAT or DOUBLE
            return ColumnSchema(name, "double" if ints[0] > 24 else "float", unsigned=unsigned)
        if len(ints) == 2:
            return ColumnSchema(name, base, precision=ints[0], scale=ints[1], unsigned=unsigned)
        return ColumnSchema(name, base, unsigned=unsigned)
    if dtype in ("ENUM", "SET"):
        values = []
        for p in kind.expressions:
            if not (isinstance(p, exp.Literal) and p.is_string):
                raise _unsupported(f"{dtype} member of column {name!r} is not a string literal")
            values.append(p.this)
        return ColumnSchema(name, dtype.lower(), enum_values=tuple(values))
    if dtype in _SIMPLE_TYPES:
        data_type = _SIMPLE_TYPES[dtype]
        if data_type in ("time", "datetime", "timestamp"):
            return ColumnSchema(name, data_type, fsp=ints[0] if ints else 0)
        if data_type in ("char", "binary", "bit"):
            return ColumnSchema(name, data_type, length=ints[0] if ints else 1)
        if data_type == "year":
            return ColumnSchema(name, data_type, length=4)
        if data_type in ("varchar", "varbinary", "text", "blob"):
            return ColumnSchema(name, data_type, length=ints[0] if ints else None)
        return ColumnSchema(name, data_type)
    raise _unsupported(f"data type {kind.sql('mysql')} of column {name!r} not supported")

