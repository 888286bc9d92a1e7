"""CREATE/DROP/TRUNCATE/RENAME of tables and databases, and ALTER DATABASE."""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from binlog_model.errors import SchemaError
from schema_tracker.changes import (
    AlterDatabase,
    CreateDatabase,
    CreateTable,
    DropDatabase,
    DropTable,
    RenameTable,
    TruncateTable,
    ViewsChanged,
)
from schema_tracker.ddl import keys
from schema_tracker.ddl.context import Ctx, ident, need_table, qualified, table_name
from schema_tracker.ddl.dialect import SerialDefaultValueColumnConstraint, session, tokenize, unsupported
from schema_tracker.ddl.script import (
    matching_paren,
    split_commas,
    without_checks,
    without_column_qualifiers,
    without_index_types,
)
from schema_tracker.ddl.types import column_def
from schema_tracker.model import (
    ColumnSchema,
    TableSchema,
    charset_of_collation,
)


def properties_of(tree: exp.Expression) -> list[exp.Expression]:
    props = tree.args.get("properties")
    return list(props.expressions) if isinstance(props, exp.Properties) else []


def charset_options(options: list[exp.Expression], fallback: tuple[str, str]) -> tuple[str, str] | None:
    """(charset, collation) set by CHARACTER SET / COLLATE options, or None when neither is present."""
    charset = collation = None
    for opt in options:
        if isinstance(opt, exp.CharacterSetProperty):
            charset = session().charset(opt.this.name)
        elif isinstance(opt, exp.CollateProperty):
            collation = session().collation(opt.this.name)
    if charset is None and collation is None:
        return None
    if charset is not None and charset.upper() == "DEFAULT":
        charset = fallback[0]
    if collation is None:
        collation = session().default_collation(charset or fallback[0])
    return charset or charset_of_collation(collation), collation


TableOptions = tuple[str | None, str | None, str | None]  # charset, collation, engine as written

# Words that end the table options of a CREATE TABLE (what follows is partitioning or a query).
_OPTIONS_END = frozenset({"PARTITION", "PARTITION BY", "AS", "SELECT", "IGNORE", "REPLACE", "WITH", "TABLE",
                          "VALUES", "START"})


def split_create_table(text: str, tokens: list[Token]) -> tuple[str, TableOptions] | None:
    """``CREATE TABLE name (definitions)`` and the charset/collation/engine of the table options after it,
    read from tokens: sqlglot does not parse every table option (CHECKSUM, TABLESPACE, DATA DIRECTORY,
    UNION=(…), STORAGE…) nor every partitioning clause, and none of them changes a column. None when the
    statement has no definition list, or when a query follows it (CREATE TABLE … SELECT)."""
    start = next((i for i, t in enumerate(tokens) if t.token_type == TokenType.L_PAREN), -1)
    if start < 0:
        return None
    end = matching_paren(tokens, start)
    if end < 0:
        return None
    options, query_follows = read_table_options(tokens[end + 1:])
    if query_follows:
        return None
    return text[:tokens[end].end + 1], options


def view_statement(ctx: Ctx, verb: str, tokens: list[Token]) -> None:
    """CREATE/ALTER/DROP VIEW: only the view's name matters (no rows, but the name is taken)."""
    i = next((n for n, t in enumerate(tokens) if t.text.upper() == "VIEW"), len(tokens)) + 1
    if verb == "ALTER":
        return
    if verb == "DROP":
        if i + 1 < len(tokens) and tokens[i].text.upper() == "IF" and tokens[i + 1].text.upper() == "EXISTS":
            i += 2
        names = [qualified(ctx, [t for t in part if t.text.upper() not in ("RESTRICT", "CASCADE")])
                 for part in split_commas(tokens[i:])]
        for db, name in names:
            _set_view(ctx, db, name, present=False)
        return
    if i + 1 < len(tokens) and tokens[i].text.upper() == "IF":  # MariaDB: CREATE VIEW IF NOT EXISTS
        i += 3
    end = i + 3 if i + 1 < len(tokens) and tokens[i + 1].token_type == TokenType.DOT else i + 1
    db, name = qualified(ctx, tokens[i:end])
    _set_view(ctx, db, name, present=True)


def _set_view(ctx: Ctx, db: str, name: str, *, present: bool) -> None:
    current = ctx.catalog.views.get(ctx.catalog.fold(db), frozenset())
    key = ctx.catalog.fold(name)
    wanted = current | {key} if present else current - {key}
    if wanted != current:
        ctx.emit(ViewsChanged(db, tuple(sorted(wanted))))


def create_table_text(text: str, statement: str) -> tuple[str, TableOptions | None]:
    """The CREATE TABLE text ``apply`` gives sqlglot (index types and column qualifiers dropped, table
    options and partitioning cut off), and the table options read from tokens (None: no definition list
    or a query follows, the whole text is parsed)."""
    text = without_index_types(text, tokenize(text, statement))
    text = without_column_qualifiers(text, tokenize(text, statement))
    text = without_checks(text, tokenize(text, statement))
    split = split_create_table(text, tokenize(text, statement))
    return (split[0], split[1]) if split is not None else (text, None)


def read_table_options(tail: list[Token]) -> tuple[TableOptions, bool]:
    """The charset, collation and engine that table options name (other options are passed over), and
    whether a query follows them (CREATE TABLE … SELECT). Reading stops at a partitioning clause."""
    charset = collation = engine = None
    i = 0
    while i < len(tail):
        word = tail[i].text.upper()
        if tail[i].token_type == TokenType.L_PAREN and i + 1 < len(tail) \
                and tail[i + 1].text.upper() == "SELECT":
            return (charset, collation, engine), True
        if word == "START" and i + 1 < len(tail) and tail[i + 1].text.upper() == "TRANSACTION":
            # MySQL 8.0.21+ logs CREATE TABLE … SELECT as the full CREATE TABLE with START TRANSACTION
            # among its options (the rows follow as row events)
            i += 2
            continue
        if word in _OPTIONS_END:  # a real query after the options: the columns come from it
            return (charset, collation, engine), word not in ("PARTITION", "PARTITION BY")
        value = tail[i + 1:]
        if value and value[0].token_type == TokenType.EQ:
            value = value[1:]
        if word in ("CHARACTER SET", "CHARSET", "CHARACTER") and value:
            if value[0].text.upper() == "SET":
                value = value[1:]
                if value and value[0].token_type == TokenType.EQ:
                    value = value[1:]
            charset = value[0].text if value else None
        elif word == "COLLATE" and value:
            collation = value[0].text
        elif word in ("ENGINE", "TYPE") and value:
            engine = value[0].text
        elif tail[i].token_type == TokenType.L_PAREN:  # UNION=(t1, t2): skip the list
            close = matching_paren(tail, i)
            i = close if close > 0 else len(tail)
        i += 1
    return (charset, collation, engine), False


def options_charset(options: TableOptions, fallback: tuple[str, str]) -> tuple[str, str] | None:
    """(charset, collation) the table options set, or None when they name neither."""
    charset, collation, _ = options
    if charset is None and collation is None:
        return None
    charset = session().charset(charset) if charset is not None else None
    if charset is not None and charset.upper() == "DEFAULT":
        charset = fallback[0]
    if collation is not None and collation.upper() == "DEFAULT":
        collation = None
    coll = session().collation(collation) if collation \
        else session().default_collation(charset or fallback[0])
    return charset or charset_of_collation(coll), coll


def create(ctx: Ctx, tree: exp.Create, options: TableOptions | None = None) -> None:
    kind = (tree.args.get("kind") or "").upper()
    props = properties_of(tree)
    if any(isinstance(p, exp.TemporaryProperty) for p in props):
        return
    if kind in ("DATABASE", "SCHEMA"):
        # sqlglot puts the name in Table.db when options follow (CREATE SCHEMA s CHARACTER SET x)
        name = tree.this.name or (tree.this.db if isinstance(tree.this, exp.Table) else "")
        if not name:
            raise unsupported("CREATE DATABASE without a name")
        if ctx.catalog.database(name) is not None:
            if tree.args.get("exists"):
                return
            if not tree.args.get("replace"):
                ctx.schema_is_past(f"CREATE DATABASE {name!r}: the database already exists", name)
        server = ctx.server_defaults()
        charset, collation = charset_options(props, server) or server
        ctx.emit(CreateDatabase(name, charset, collation))
        return
    schema = tree.this
    table = schema.this if isinstance(schema, exp.Schema) else schema
    if not isinstance(table, exp.Table):
        raise unsupported("CREATE TABLE without a table name")
    db, name = table_name(ctx, table)
    ctx.target = (db, name)
    if tree.args.get("exists") and (ctx.catalog.table(db, name) is not None or ctx.catalog.is_view(db, name)):
        return  # the name is taken (by a table or a view): the server changes nothing
    if ctx.catalog.table(db, name) is not None and not tree.args.get("replace"):
        # (lenient: the binlog's definition replaces the snapshot's, as it is the one in force from here)
        ctx.schema_is_past(f"CREATE TABLE {name!r}: the table already exists", db, name)
    like = next((p for p in props if isinstance(p, exp.LikeProperty)), None)
    if like is None and isinstance(schema, exp.Schema) and len(schema.expressions) == 1 \
            and isinstance(schema.expressions[0], exp.LikeProperty):
        like = schema.expressions[0]  # CREATE TABLE t3 (LIKE t1): the parenthesised form
    if like is not None:
        src = need_table(ctx, *table_name(ctx, like.this))
        like_pk = () if src.implicit_primary_key else src.primary_key  # re-derived by settle_primary_keys
        ctx.emit(CreateTable(db, name, src.columns, like_pk, src.charset, src.collation, src.engine,
                             unique_keys=src.unique_keys))
        return
    if tree.args.get("expression") is not None or not isinstance(schema, exp.Schema):
        raise unsupported("CREATE TABLE … SELECT: the columns come from a query (row-based logging writes "
                           "a plain CREATE TABLE instead)")
    if options is not None:
        charset, collation = options_charset(options, ctx.database_defaults(db)) or \
            ctx.database_defaults(db)
        engine = options[2]
    else:
        charset, collation = charset_options(props, ctx.database_defaults(db)) or \
            ctx.database_defaults(db)
        engine = next((p.this.name for p in props if isinstance(p, exp.EngineProperty)), None)
    shell = TableSchema(db, name, (), (), charset, collation, engine)
    columns: list[ColumnSchema] = []
    pk: tuple[str, ...] = ()
    unique: keys.Keys = ()
    names: set[str] = set()
    functional: list[tuple[str, list[exp.Expression]]] = []
    for item in schema.expressions:
        if isinstance(item, exp.ColumnDef):
            col, inline_pk = column_def(item, shell)
            columns.append(col)
            if inline_pk:
                pk = (col.name,)
            if has_inline_unique(item):
                unique, key_name = keys.with_key(unique, None, [exp.column(col.name)], names)
                names.add(key_name.lower())
        elif (found := primary_key_of(item)) is not None:
            pk = found
        elif (uk := keys.unique_key(item)) is not None:
            unique, key_name = keys.with_key(unique, uk[0], uk[1], names)
            names.add(key_name.lower())
            if keys.functional_parts(uk[1]):
                functional.append((key_name, uk[1]))
        elif isinstance(item, exp.IndexColumnConstraint):
            parts = keys.key_parts(item)
            explicit = keys.index_name(item)
            key_name = explicit if explicit is not None else keys.with_key((), None, parts, names)[1]
            names.add(key_name.lower())
            if keys.functional_parts(parts):
                functional.append((key_name, parts))
    for key_name, parts in functional:  # hidden columns come after every declared column
        columns.extend(keys.hidden_columns(replace(shell, columns=tuple(columns)), key_name, parts))
    ctx.emit(CreateTable(db, name, tuple(columns), pk, charset, collation, engine, unique_keys=unique))


def has_inline_unique(node: exp.ColumnDef) -> bool:
    """Whether a column definition carries ``UNIQUE [KEY]`` (a key named after the column)."""
    kind = node.args.get("kind")
    if isinstance(kind, exp.DataType) and kind.this.name == "SERIAL":
        return True  # SERIAL is BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE
    for cons in node.args.get("constraints") or []:
        found = cons.args.get("kind") if isinstance(cons, exp.ColumnConstraint) else cons
        if isinstance(found, exp.UniqueColumnConstraint | SerialDefaultValueColumnConstraint):
            return True
    return False


def primary_key_of(item: exp.Expression) -> tuple[str, ...] | None:
    """The key columns when ``item`` is a table-level PRIMARY KEY (possibly named by CONSTRAINT)."""
    if isinstance(item, exp.Constraint):
        for inner in item.expressions:
            if (found := primary_key_of(inner)) is not None:
                return found
        return None
    if isinstance(item, exp.PrimaryKey):
        return tuple(ident(e) for e in item.expressions)
    return None


def drop(ctx: Ctx, tree: exp.Drop) -> None:
    kind = (tree.args.get("kind") or "").upper()
    if tree.args.get("temporary"):
        return
    targets = tree.args.get("tables") or [tree.this]
    if kind in ("DATABASE", "SCHEMA"):
        for t in targets:
            ctx.emit(DropDatabase(t.db or t.name))
        return
    for t in targets:
        db, name = table_name(ctx, t)
        if ctx.catalog.table(db, name) is not None:
            ctx.emit(DropTable(db, name))
        elif not tree.args.get("exists") and ctx.catalog.database(db) is not None \
                and not ctx.catalog.is_view(db, name):
            # the server refuses to drop a missing table, so a database that holds every table it had
            # (a snapshot's, or one created in the binlog) cannot lack it
            ctx.schema_is_past(f"DROP TABLE {name!r}: the table does not exist", db, name)
        # A table of a database the schema does not know (outside the snapshot, or before the binlog's
        # start) is left alone: the result (no such table) is what the catalog already says. So is a
        # database: a snapshot of some databases cannot tell one it lacks from one it leaves out.


def truncate(ctx: Ctx, tree: exp.Expression) -> None:
    if not isinstance(tree, exp.TruncateTable):
        raise unsupported("TRUNCATE statement not understood")
    for t in tree.expressions:
        db, name = table_name(ctx, t)
        if ctx.catalog.table(db, name) is not None:
            ctx.emit(TruncateTable(db, name))


def rename_tables(ctx: Ctx, text: str, tokens: list[Token]) -> None:
    # sqlglot returns RENAME as a Command whose argument is the raw rest of the statement.
    rest = text[tokens[0].end + 1:]
    toks = tokenize(rest, text)
    if toks and toks[0].text.upper() == "USER":
        return  # RENAME USER: accounts, no table
    if not toks or toks[0].text.upper() not in ("TABLE", "TABLES"):
        raise unsupported("only RENAME TABLE is understood")
    i = 1
    if_exists = i + 1 < len(toks) and toks[i].text.upper() == "IF" and toks[i + 1].text.upper() == "EXISTS"
    if if_exists:
        i += 2
    pairs = []
    for part in split_commas(toks[i:]):
        words = [t.text.upper() if t.token_type == TokenType.VAR else "" for t in part]
        if "TO" not in words:
            raise unsupported("RENAME TABLE pair without TO")
        k = words.index("TO")
        pairs.append((qualified(ctx, part[:k]), qualified(ctx, part[k + 1:])))
    for (db, name), (new_db, new_name) in pairs:
        ctx.target = (db, name)
        if if_exists and ctx.catalog.table(db, name) is None and not ctx.catalog.is_view(db, name):
            continue  # MariaDB's RENAME TABLE IF EXISTS passes over a missing table
        if ctx.catalog.table(db, name) is None and ctx.catalog.is_view(db, name):
            _set_view(ctx, db, name, present=False)  # RENAME TABLE moves a view too
            _set_view(ctx, new_db, new_name, present=True)
            continue
        need_table(ctx, db, name)
        ctx.emit(RenameTable(db, name, new_db, new_name))



def alter_database(ctx: Ctx, tokens: list[Token]) -> None:
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
                raise unsupported("ALTER DATABASE option without a value")
            if w == "COLLATE":
                collation = session().collation(words[j])
            else:
                charset = session().charset(words[j])
            i = j
        i += 1
    if charset is None and collation is None:
        return  # COMMENT, READ ONLY, UPGRADE DATA DIRECTORY NAME: nothing a table inherits
    if collation is None:
        collation = session().default_collation(charset or "")
    ctx.emit(AlterDatabase(name, charset or charset_of_collation(collation), collation))

