"""ALTER TABLE: the action list split at top-level commas, each action applied in order.

Fallbacks, each for a statement sqlglot returns as ``exp.Command`` (tested in tests/unit/test_ddl_forms.py):
an ALTER TABLE action sqlglot cannot parse (``ADD (a int, b int)``, ``CONVERT TO CHARACTER SET``, some
index forms) is parsed on its own as ``ALTER TABLE t <action>``. ``ADD (…)`` becomes one ``ADD COLUMN``
per definition; ``CONVERT TO`` and index/constraint actions that sqlglot still cannot parse are read from
tokens (the latter change no column, so they only need recognising).

About 500 lines: one handler per ALTER action, all over the one table being changed; splitting them by
action would spread a single statement's rules over several modules.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from binlog_model.errors import SchemaError
from schema_tracker.changes import (
    CreateOrModifyColumn,
    DropColumn,
    PrimaryKeyChanged,
    RenameColumn,
    RenameTable,
    SchemaChange,
    TableCharsetChanged,
    UniqueKeysChanged,
    converted_column,
)
from schema_tracker.ddl import keys
from schema_tracker.ddl.context import Ctx, ident, need_table, qualified, table_name
from schema_tracker.ddl.create import (
    charset_options,
    has_inline_unique,
    options_charset,
    primary_key_of,
    read_table_options,
)
from schema_tracker.ddl.dialect import parse, session, tokenize, unsupported
from schema_tracker.ddl.script import split_commas, without_index_types
from schema_tracker.ddl.types import BINARY_OF, column_def
from schema_tracker.model import (
    TableSchema,
)

PARTITION_ACTIONS = frozenset({"PARTITION", "REMOVE", "COALESCE", "REORGANIZE", "EXCHANGE", "REBUILD",
                                "ANALYZE", "CHECK", "OPTIMIZE", "REPAIR", "DISCARD", "IMPORT", "DISABLE",
                                "ENABLE", "ORDER"})


def alter_table(ctx: Ctx, text: str, tokens: list[Token]) -> None:
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
    db, name = qualified(ctx, name_tokens)
    ctx.target = (db, name)
    actions = _join_name_lists([a for a in map(_without_partitioning, split_commas(tokens[i:])) if a])
    if ctx.catalog.table(db, name) is None and actions \
            and all(_is_partition_action([t.text.upper() for t in a]) for a in actions):
        return  # partition maintenance of a table the binlog never created (a temporary one): no columns
    before = need_table(ctx, db, name)
    # The server renames the table after every other action, wherever RENAME TO appears in the list.
    renames = [a for a in actions if a[0].text.upper() == "RENAME"
               and (len(a) < 2 or a[1].text.upper() not in ("COLUMN", "INDEX", "KEY"))]
    first_change = len(ctx.changes)
    others = [a for a in actions if not any(a is r for r in renames)]
    # The server works on the original table: drops first, then column changes, then new keys (which
    # may name columns this statement adds or renames), and the table's rename last.
    ordered = sorted(others, key=_action_phase)
    swapped: dict[str, str] = {}
    for n, action in enumerate(ordered + renames):
        if _action_phase(action) > 0 and not swapped and (n == 0 or _action_phase(ordered[n - 1]) == 0):
            swapped = _park_swapped_columns(ctx, db, name, ordered)
        piece = text[action[0].start:action[-1].end + 1]
        cleaned = without_index_types(piece, tokenize(piece, text))
        toks = action if cleaned == piece else tokenize(cleaned, text)
        if swapped:
            cleaned, toks = _with_parked_names(cleaned, toks, swapped)
        _alter_action(ctx, db, name, cleaned, toks)
    _keep_keys_of_readded_columns(ctx, before, ctx.changes[first_change:])


def _renamed_column(words: list[str], toks: list[Token]) -> tuple[int, int] | None:
    """(index of the old name, index of the new name) when the action renames a column
    (``CHANGE [COLUMN] old new …`` or ``RENAME COLUMN old TO new``)."""
    if words[:1] == ["CHANGE"]:
        i = 2 if len(words) > 1 and words[1] == "COLUMN" else 1
        return (i, i + 1) if i + 1 < len(toks) else None
    if words[:2] == ["RENAME", "COLUMN"] and len(toks) > 4:
        return 2, 4
    return None


def _park_swapped_columns(ctx: Ctx, db: str, name: str, actions: list[list[Token]]) -> dict[str, str]:
    """Column names in one ALTER refer to the original table, so ``RENAME COLUMN a TO b, RENAME COLUMN b
    TO a`` swaps them. Where a rename's new name is still held by a column this statement renames away,
    that column first moves to a parking name (``RenameColumn`` b → ``b~1``), and its own rename then
    starts from there: a consumer applying the renames in order ends with the server's columns."""
    t = need_table(ctx, db, name)
    renames = []
    for action in actions:
        found = _renamed_column([tk.text.upper() for tk in action], action)
        if found is not None:
            renames.append((action[found[0]].text, action[found[1]].text))
    sources = {old.lower() for old, new in renames if old.lower() != new.lower()}
    parked: dict[str, str] = {}
    for old, new in renames:
        holder = t.column(new)
        if holder is not None and holder.name.lower() in sources and old.lower() != new.lower() \
                and holder.name.lower() not in parked:
            spot = next(f"{holder.name}~{k}" for k in range(1, 1000)
                        if t.column(f"{holder.name}~{k}") is None)
            ctx.emit(RenameColumn(db, name, holder.name, spot))
            parked[holder.name.lower()] = spot
            t = need_table(ctx, db, name)
    return parked


def _with_parked_names(sql: str, toks: list[Token], parked: dict[str, str]) -> tuple[str, list[Token]]:
    """The action with the column it changes named by its parking name, if it has one."""
    words = [tk.text.upper() for tk in toks]
    found = _renamed_column(words, toks)
    if words[:1] in (["MODIFY"], ["DROP"], ["ALTER"]) and found is None:
        i = 2 if len(words) > 1 and words[1] == "COLUMN" else 1
        found = (i, i) if i < len(toks) else None
    if found is None or toks[found[0]].text.lower() not in parked:
        return sql, toks
    tok = toks[found[0]]
    start = tok.start - toks[0].start
    end = tok.end - toks[0].start + 1
    new_sql = sql[:start] + "`" + parked[tok.text.lower()].replace("`", "``") + "`" + sql[end:]
    return new_sql, tokenize(new_sql, new_sql)


_KEY_WORDS = frozenset({"PRIMARY KEY", "PRIMARY", "UNIQUE", "INDEX", "KEY", "FULLTEXT", "SPATIAL",
                        "CONSTRAINT", "FOREIGN", "FOREIGN KEY", "CHECK"})


def _action_phase(action: list[Token]) -> int:
    words = [t.text.upper() for t in action[:2]]
    if words[0] == "DROP" and not (len(words) > 1 and words[1] == "PARTITION"):
        return 0
    if words[0] == "ADD" and len(words) > 1 and words[1] in _KEY_WORDS:
        return 2
    return 1


def _without_partitioning(action: list[Token]) -> list[Token]:
    """The action without a partitioning clause written after it without a comma (``DROP FOREIGN KEY c
    PARTITION BY KEY (a)``, ``ADD … REMOVE PARTITIONING``): partitioning never changes a column."""
    depth = 0
    for n, tok in enumerate(action):
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
        elif tok.token_type == TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and n > 0:
            word = tok.text.upper()
            following = action[n + 1].text.upper() if n + 1 < len(action) else ""
            if word == "PARTITION BY" or (word == "PARTITION" and following == "BY") \
                    or (word == "REMOVE" and following == "PARTITIONING"):
                return action[:n]
    return action


def _keep_keys_of_readded_columns(ctx: Ctx, before: TableSchema, changes: list[SchemaChange]) -> None:
    """``DROP i, ADD i …`` in one ALTER: the server matches keys to the new column list by name, so the
    keys on ``i`` survive (the dropped column's keys come back on the added one)."""
    dropped = {c.column_name.lower() for c in changes if isinstance(c, DropColumn)}
    added = {c.column.name.lower() for c in changes if isinstance(c, CreateOrModifyColumn)}
    readded = dropped & added
    if not readded or any(isinstance(c, RenameTable) for c in changes):
        return
    t = need_table(ctx, before.db, before.name)
    explicit = before.primary_key and not before.implicit_primary_key
    dropped_pk = any(isinstance(c, PrimaryKeyChanged) and not c.primary_key for c in changes)
    if explicit and not dropped_pk and t.primary_key != before.primary_key \
            and {k.lower() for k in before.primary_key} & readded \
            and all(t.column(k) is not None for k in before.primary_key):
        ctx.emit(PrimaryKeyChanged(t.db, t.name, before.primary_key))
    lost = [k for k in before.unique_keys if k not in t.unique_keys and {c.lower() for c in k[1]} & readded
            and all(t.column(c) is not None for c in k[1])]
    if lost:
        ctx.emit(UniqueKeysChanged(t.db, t.name, (*t.unique_keys, *lost)))


def _is_partition_action(words: list[str]) -> bool:
    # The tokenizer may merge "PARTITION BY" into one token; its first word decides.
    return bool(words) and (words[0].split()[0] in PARTITION_ACTIONS
                            or (len(words) > 1 and words[1] == "PARTITION"))


# Words an ALTER TABLE action starts with (a piece starting otherwise continues the previous name list).
_ACTION_WORDS = PARTITION_ACTIONS | {"ADD", "DROP", "MODIFY", "CHANGE", "ALTER", "RENAME", "CONVERT", "FORCE",
                                     "ENGINE", "DEFAULT", "CHARACTER", "CHARSET", "COLLATE", "ALGORITHM",
                                     "LOCK", "TRUNCATE", "WITH", "WITHOUT", "UPGRADE", "SECONDARY_LOAD",
                                     "SECONDARY_UNLOAD", "AUTO_INCREMENT", "COMMENT"}


def _join_name_lists(actions: list[list[Token]]) -> list[list[Token]]:
    """``DROP PARTITION p0, p1`` and ``ORDER BY a, b`` end in a list of names that the comma split cut
    into separate actions: glue the bare names back onto the action they belong to."""
    out: list[list[Token]] = []
    for action in actions:
        bare = all(t.token_type in (TokenType.VAR, TokenType.IDENTIFIER, TokenType.DOT)
                   or t.text.upper() in ("ASC", "DESC") for t in action)
        # REORGANIZE PARTITION x0, x1 INTO (…): a name list that goes on after its last name
        named = action[0].token_type in (TokenType.VAR, TokenType.IDENTIFIER) \
            and action[0].text.upper() not in _ACTION_WORDS
        if (bare or named) and out and _is_partition_action([t.text.upper() for t in out[-1]]):
            out[-1] = out[-1] + action
        else:
            out.append(action)
    return out


def _alter_action(ctx: Ctx, db: str, name: str, sql: str, toks: list[Token]) -> None:
    words = [t.text.upper() for t in toks]
    if words[0] == "ADD":
        j = 2 if len(words) > 1 and words[1] == "COLUMN" else 1
        if j < len(words) and words[j] == "IF":
            j += 3
        if j < len(toks) and toks[j].token_type == TokenType.L_PAREN:
            inner = toks[j + 1:-1]
            for part in split_commas(inner):
                piece = sql[part[0].start - toks[0].start:part[-1].end - toks[0].start + 1]
                if part[0].text.upper() in ("PRIMARY KEY", "CONSTRAINT", "INDEX", "KEY", "UNIQUE"):
                    _alter_action(ctx, db, name, "ADD " + piece, tokenize("ADD " + piece, sql))
                else:
                    _alter_action(ctx, db, name, "ADD COLUMN " + piece, tokenize("ADD COLUMN " + piece, sql))
            return
    if _is_partition_action(words):
        return  # partition maintenance and row order: rows move, columns do not
    if words[0] == "ALTER" and len(words) > 1 and words[1] in ("CHECK", "CONSTRAINT"):
        return  # ALTER CHECK / CONSTRAINT c [NOT] ENFORCED: no column changes
    if words[0] == "ALTER" and "MASKING" in words:
        return  # ALTER COLUMN c SET/DROP MASKING POLICY: what readers see, not the column
    if words[:2] == ["RENAME", "AS"]:  # sqlglot knows RENAME [TO] only; AS is a MySQL synonym
        sql = "RENAME TO " + sql[toks[2].start - toks[0].start:]
    if words[0] == "CONVERT":
        _convert_charset(ctx, db, name, toks)
        return
    if words[0] in TABLE_OPTION_WORDS and not (words[0] == "INDEX" and words[1:2] != ["DIRECTORY"]):
        _table_options(ctx, db, name, toks)
        return
    tree = parse(f"ALTER TABLE `_` {sql}")
    if not isinstance(tree, exp.Alter):
        if _is_index_action(words):
            return  # index, foreign key or check: no column changes
        raise unsupported(f"ALTER TABLE action not understood: {sql}")
    for action in tree.args.get("actions") or []:
        _apply_action(ctx, db, name, action)
    options = list(tree.args.get("options") or [])
    if options:
        t = need_table(ctx, db, name)
        cs = charset_options(options, (t.charset or "", t.collation or ""))
        if cs is not None:
            ctx.emit(TableCharsetChanged(db, name, cs[0], cs[1]))


# Table options an ALTER TABLE action may start with (several may follow each other without commas).
TABLE_OPTION_WORDS = frozenset({
    "ENGINE", "TYPE", "AUTO_INCREMENT", "AVG_ROW_LENGTH", "CHECKSUM", "TABLE_CHECKSUM", "COMMENT",
    "COMPRESSION", "CONNECTION", "DATA", "INDEX", "DELAY_KEY_WRITE", "ENCRYPTION", "INSERT_METHOD",
    "KEY_BLOCK_SIZE", "MAX_ROWS", "MIN_ROWS", "PACK_KEYS", "PASSWORD", "ROW_FORMAT", "STATS_AUTO_RECALC",
    "STATS_PERSISTENT", "STATS_SAMPLE_PAGES", "TABLESPACE", "UNION", "STORAGE", "SECONDARY_ENGINE",
    "SECONDARY_ENGINE_ATTRIBUTE", "ENGINE_ATTRIBUTE", "AUTOEXTEND_SIZE", "DEFAULT", "CHARACTER SET",
    "CHARSET", "CHARACTER", "COLLATE", "ALGORITHM", "LOCK", "WITH", "WITHOUT", "SECONDARY_LOAD",
    "SECONDARY_UNLOAD", "PAGE_CHECKSUM", "TRANSACTIONAL", "SEQUENCE", "IETF_QUOTES", "PAGE_COMPRESSED",
    "PAGE_COMPRESSION_LEVEL", "ENCRYPTION_KEY_ID", "ENCRYPTED",
})


def _table_options(ctx: Ctx, db: str, name: str, toks: list[Token]) -> None:
    """Table options: only a new default charset/collation matters (the engine is not followed)."""
    options, _ = read_table_options(toks)
    t = need_table(ctx, db, name)
    cs = options_charset(options, (t.charset or "", t.collation or ""))
    if cs is not None:
        ctx.emit(TableCharsetChanged(db, name, cs[0], cs[1]))


def _is_index_action(words: list[str]) -> bool:
    if words[0] not in ("ADD", "DROP") or len(words) < 2:
        return False
    return words[1] in ("INDEX", "KEY", "UNIQUE", "FULLTEXT", "SPATIAL", "FOREIGN", "CONSTRAINT", "CHECK")


def _convert_charset(ctx: Ctx, db: str, name: str, toks: list[Token]) -> None:
    words = [t.text for t in toks]
    upper = [w.upper() for w in words]
    charset = collation = None
    for i, w in enumerate(upper[:-1]):
        if w in ("SET", "CHARSET", "CHARACTER SET"):
            charset = words[i + 1]
        elif w == "COLLATE":
            collation = words[i + 1]
    if charset is None:
        raise unsupported("CONVERT TO without CHARACTER SET")
    t = need_table(ctx, db, name)
    if charset.upper() == "DEFAULT":
        charset = ctx.database_defaults(db)[0]
    charset = session().charset(charset)
    collation = session().collation(collation) if collation else session().default_collation(charset)
    for col in t.columns:
        new = converted_column(col, charset, collation)
        if charset == "binary" and new.data_type in BINARY_OF:  # CONVERT TO CHARSET binary: byte strings
            new = replace(new, data_type=BINARY_OF[new.data_type], charset=None, collation=None)
        elif charset == "binary" and new.data_type in ("enum", "set"):
            new = replace(new, charset=None, collation=None)
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
    return False, ident(pos.this)


def _apply_action(ctx: Ctx, db: str, name: str, action: exp.Expression) -> None:
    t = need_table(ctx, db, name)
    if isinstance(action, exp.ColumnDef):  # ADD [COLUMN]
        col, inline_pk = column_def(action, t)
        if t.column(col.name) is not None:
            if action.args.get("exists"):
                return  # ADD COLUMN IF NOT EXISTS on an existing column
            ctx.schema_is_past(f"ADD COLUMN {col.name!r}: the column already exists", db, name)
            return
        first, after = _position(action)
        ctx.emit(CreateOrModifyColumn(db, name, col, first, after))
        if inline_pk:
            ctx.emit(PrimaryKeyChanged(db, name, (col.name,)))
        if has_inline_unique(action):
            _add_unique(ctx, db, name, None, [exp.column(col.name)])
    elif isinstance(action, exp.ModifyColumn):
        _modify(ctx, t, action)
    elif isinstance(action, exp.RenameColumn):
        old, new = ident(action.this), ident(action.args["to"])
        if t.column(old) is None:
            raise SchemaError(f"RENAME COLUMN: unknown column {old!r}", table=t.qualified_name)
        ctx.emit(RenameColumn(db, name, t.column(old).name, new))  # type: ignore[union-attr]
    elif isinstance(action, exp.Drop):
        kind = (action.args.get("kind") or "").upper()
        if kind == "COLUMN" or not kind:
            for target in action.args.get("tables") or [action.this]:
                col_name = ident(target)
                if t.column(col_name) is None:
                    if action.args.get("exists"):
                        continue
                    raise SchemaError(f"DROP COLUMN: unknown column {col_name!r}", table=t.qualified_name)
                ctx.emit(DropColumn(db, name, t.column(col_name).name))  # type: ignore[union-attr]
                t = need_table(ctx, db, name)
        elif kind in ("INDEX", "KEY", "CONSTRAINT"):
            # DROP INDEX `PRIMARY` and MySQL 8.0.19+'s DROP CONSTRAINT name (any kind of constraint)
            for target in action.args.get("tables") or [action.this]:
                drop_index(ctx, t, ident(target))
                t = need_table(ctx, db, name)
        elif kind not in ("FOREIGN KEY", "CHECK"):
            raise unsupported(f"ALTER TABLE DROP {kind} not understood")
    elif isinstance(action, exp.DropPrimaryKey):
        ctx.emit(PrimaryKeyChanged(db, name, ()))
    elif isinstance(action, exp.AddConstraint):
        for item in action.expressions:
            pk = primary_key_of(item)
            if pk is not None:
                cols = tuple(t.column(k).name if t.column(k) else k for k in pk)  # type: ignore[union-attr]
                ctx.emit(PrimaryKeyChanged(db, name, cols))
            elif (uk := keys.unique_key(item)) is not None:
                _add_unique(ctx, db, name, uk[0], uk[1])
            elif isinstance(item, exp.IndexColumnConstraint):
                add_index(ctx, need_table(ctx, db, name), keys.index_name(item), keys.key_parts(item))
            t = need_table(ctx, db, name)
    elif isinstance(action, exp.AlterColumn):
        _alter_column(ctx, t, action)
    elif isinstance(action, exp.AlterRename):
        new_db, new_name = table_name(ctx, action.this)
        ctx.emit(RenameTable(db, name, new_db, new_name))
        ctx.target = (new_db, new_name)
    elif isinstance(action, exp.RenameIndex):
        old_key, new_key = action.this.name, action.args["to"].name
        renamed = tuple((new_key if n.lower() == old_key.lower() else n, c) for n, c in t.unique_keys)
        if renamed != t.unique_keys:
            ctx.emit(UniqueKeysChanged(db, name, renamed))
    elif isinstance(action, exp.ForceProperty | exp.AlterIndex):
        return  # rebuilds and index visibility: no column changes
    else:
        raise unsupported(f"ALTER TABLE action {type(action).__name__} not understood")


def _modify(ctx: Ctx, t: TableSchema, action: exp.ModifyColumn) -> None:
    definition = action.this
    rename_from = action.args.get("rename_from")
    old_name = rename_from.name if rename_from is not None else definition.name
    old = t.column(old_name)
    if old is None:
        raise SchemaError(f"MODIFY/CHANGE: unknown column {old_name!r}", table=t.qualified_name)
    col, inline_pk = column_def(definition, t)
    if old.name.lower() in {k.lower() for k in t.primary_key} and not t.implicit_primary_key:
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
    if has_inline_unique(definition):
        _add_unique(ctx, t.db, t.name, None, [exp.column(col.name)])


def _add_unique(ctx: Ctx, db: str, name: str, key_name: str | None, parts: list[exp.Expression]) -> None:
    t = need_table(ctx, db, name)
    unique, key_name = keys.with_key(t.unique_keys, key_name, parts, set())
    if unique != t.unique_keys:
        ctx.emit(UniqueKeysChanged(db, name, unique))
    if keys.functional_parts(parts):
        keys.add_hidden(ctx, need_table(ctx, db, name), key_name, parts)


def add_index(ctx: Ctx, t: TableSchema, key_name: str | None, parts: list[exp.Expression]) -> None:
    """A non-unique index: only its functional parts change the table (hidden columns)."""
    if not keys.functional_parts(parts):
        return
    if key_name is None:
        _, key_name = keys.with_key(t.unique_keys, None, parts, set())
    keys.add_hidden(ctx, t, key_name, parts)


def drop_index(ctx: Ctx, t: TableSchema, key_name: str) -> None:
    """DROP INDEX: the key leaves the unique keys, and its hidden columns go with it. The index named
    PRIMARY is the primary key."""
    if key_name.upper() == "PRIMARY":
        if t.primary_key and not t.implicit_primary_key:
            ctx.emit(PrimaryKeyChanged(t.db, t.name, ()))
        return
    remaining = keys.without_index(t.unique_keys, key_name)
    if remaining != t.unique_keys:
        ctx.emit(UniqueKeysChanged(t.db, t.name, remaining))
    keys.drop_hidden(ctx, need_table(ctx, t.db, t.name), key_name)


def index_statement(ctx: Ctx, text: str, tokens: list[Token], verb: str) -> None:
    """CREATE [UNIQUE] INDEX … ON t (…) and DROP INDEX … ON t: unique keys and functional parts only."""
    unique = any(t.text.upper() == "UNIQUE" for t in tokens[1:3])
    functional = any(a.token_type == TokenType.L_PAREN and b.token_type == TokenType.L_PAREN
                     for a, b in itertools.pairwise(tokens))
    if verb == "CREATE" and not unique and not functional:
        return  # a plain index: no column changes, however sqlglot reads it
    tree = parse(text)
    if verb == "DROP" and isinstance(tree, exp.Drop):
        on = tree.args.get("cluster")
        if not isinstance(on, exp.OnProperty) or not isinstance(on.this, exp.Table):
            raise unsupported("DROP INDEX without ON table")
        db, name = table_name(ctx, on.this)
        t = ctx.catalog.table(db, name)
        if t is not None:  # an unknown table: nothing the catalog holds changes
            ctx.target = (db, name)
            for target in tree.args.get("tables") or [tree.this]:
                drop_index(ctx, need_table(ctx, db, name), ident(target))
        return
    if verb != "CREATE" or not isinstance(tree, exp.Create) or not isinstance(tree.this, exp.Index):
        raise unsupported("CREATE INDEX statement not understood")
    index = tree.this
    db, name = table_name(ctx, index.args["table"])
    ctx.target = (db, name)
    params = index.args.get("params")
    parts = keys.key_parts(params) if params is not None else []
    key_name = index.name or None
    if unique:
        _add_unique(ctx, db, name, key_name, parts)
    else:
        add_index(ctx, need_table(ctx, db, name), key_name, parts)


def _alter_column(ctx: Ctx, t: TableSchema, action: exp.AlterColumn) -> None:
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
        raise unsupported("ALTER COLUMN form not understood")
    ctx.emit(CreateOrModifyColumn(t.db, t.name, new))

