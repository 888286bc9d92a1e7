"""Compact signatures of sqlglot's trees, pinned in ``tests/ddl_corpus/tree_shapes.jsonl`` so that a sqlglot
upgrade that moves an argument fails loudly before it can change a catalog."""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from schema_tracker.ddl.create import create_table_text
from schema_tracker.ddl.dialect import MYSQL, tokenize
from schema_tracker.ddl.ignored import object_kind
from schema_tracker.ddl.script import split_commas, unwrap_version_comments


def tree_shape(sql: str) -> str:
    """A compact signature of sqlglot's tree for ``sql`` (node classes, argument names, DataType and
    kinds), used to pin the parser's output in a golden file."""
    try:
        tree = sqlglot.parse_one(unwrap_version_comments(sql), read=MYSQL)
    except SqlglotError as err:
        return f"ParseError({type(err).__name__})"
    return _shape(tree)


def statement_shapes(sql: str) -> list[str]:
    """``tree_shape`` of a statement and, for ALTER TABLE, of each action as ``apply`` parses it alone; for
    CREATE TABLE, also of the text ``apply`` parses when it differs (options and partitioning cut off)."""
    text = unwrap_version_comments(sql).strip()
    shapes = [tree_shape(text)]
    tokens = tokenize(text, sql)
    if len(tokens) > 3 and tokens[0].text.upper() == "CREATE" and object_kind(tokens[1:])[0] == "TABLE":
        parsed, _ = create_table_text(text, sql)
        if parsed != text:
            shapes.append(tree_shape(parsed))
    if len(tokens) > 3 and tokens[0].text.upper() == "ALTER" and object_kind(tokens[1:])[0] == "TABLE":
        i = next(n for n, t in enumerate(tokens) if t.text.upper() == "TABLE") + 1
        i += 3 if i + 1 < len(tokens) and tokens[i + 1].token_type == TokenType.DOT else 1
        for action in split_commas(tokens[i:]):
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

