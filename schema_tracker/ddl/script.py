"""Scripts: version comments, statement splitting and ``USE``, all on sqlglot's tokens (never regexes)."""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

from schema_tracker.ddl.dialect import tokenize


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
    tokens = tokenize(text, None)
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
    tokens = tokenize(unwrap_version_comments(sql), sql)
    if len(tokens) >= 2 and tokens[0].text.upper() == "USE":
        return tokens[1].text
    return None


def split_commas(tokens: list[Token]) -> list[list[Token]]:
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



_INDEX_TYPES = frozenset({"BTREE", "HASH", "RTREE"})


def without_index_types(text: str, tokens: list[Token]) -> str:
    """``text`` without what changes no column and sqlglot rejects: ``USING BTREE|HASH|RTREE`` (as in
    ``PRIMARY KEY USING HASH (a)``), ASC/DESC in key part lists (``PRIMARY KEY (a DESC)``) and MySQL
    HeatWave's ``NOT SECONDARY`` column attribute."""
    cuts = [(tokens[i].start, tokens[i + 1].end + 1) for i in range(len(tokens) - 1)
            if (tokens[i].text.upper() == "USING" and tokens[i + 1].text.upper() in _INDEX_TYPES)
            or (tokens[i].text.upper() == "NOT" and tokens[i + 1].text.upper() == "SECONDARY")]
    cuts += [(tokens[i].start, tokens[i].end + 1) for i in range(1, len(tokens) - 1)
             if tokens[i].text.upper() in ("ASC", "DESC")
             and tokens[i + 1].token_type in (TokenType.COMMA, TokenType.R_PAREN)
             and tokens[i - 1].token_type in (TokenType.VAR, TokenType.IDENTIFIER, TokenType.R_PAREN)]
    cuts.sort()
    for start, end in reversed(cuts):
        text = text[:start] + " " + text[end:]
    return text


def matching_paren(tokens: list[Token], i: int) -> int:
    """Index of the R_PAREN closing the L_PAREN at ``i`` (-1 when unbalanced)."""
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j].token_type == TokenType.L_PAREN:
            depth += 1
        elif tokens[j].token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return j
    return -1


def without_column_qualifiers(text: str, tokens: list[Token]) -> str:
    """CREATE TABLE t (t.a int, db.t.b int): the server accepts a column name qualified by its own table
    (and database); the definition is the same without the qualifier."""
    start = next((i for i, t in enumerate(tokens) if t.token_type == TokenType.L_PAREN), -1)
    end = matching_paren(tokens, start) if start >= 0 else -1
    if end < 0:
        return text
    cuts = []
    for part in split_commas(tokens[start + 1:end]):
        n = 0
        while n + 2 < len(part) and part[n + 1].token_type == TokenType.DOT \
                and part[n].token_type in (TokenType.VAR, TokenType.IDENTIFIER):
            n += 2
        if n:
            cuts.append((part[0].start, part[n].start))
    for a, b in reversed(cuts):
        text = text[:a] + text[b:]
    return text


def without_checks(text: str, tokens: list[Token]) -> str:
    """``text`` without CHECK constraints (``[CONSTRAINT [c]] CHECK (expr) [[NOT] ENFORCED]``): they never
    change a column, and their expressions hold forms sqlglot cannot read (``DEFAULT(f1)``)."""
    cuts = []
    i = 0
    while i < len(tokens):
        if tokens[i].text.upper() == "CHECK" and i + 1 < len(tokens) \
                and tokens[i + 1].token_type == TokenType.L_PAREN:
            start = i
            if i >= 2 and tokens[i - 2].text.upper() == "CONSTRAINT":
                start = i - 2
            elif i >= 1 and tokens[i - 1].text.upper() == "CONSTRAINT":
                start = i - 1
            end = matching_paren(tokens, i + 1)
            if end < 0:
                return text
            if end + 2 < len(tokens) and tokens[end + 1].text.upper() == "NOT" \
                    and tokens[end + 2].text.upper() == "ENFORCED":
                end += 2
            elif end + 1 < len(tokens) and tokens[end + 1].text.upper() == "ENFORCED":
                end += 1
            cuts.append((start, end))
            i = end + 1
            continue
        i += 1
    for start, end in reversed(cuts):
        # a table-level CHECK leaves a comma behind: take the one before it
        a = start - 1 if start > 0 and tokens[start - 1].token_type == TokenType.COMMA else start
        text = text[:tokens[a].start] + " " + text[tokens[end].end + 1:]
    return text


def quote_keyword_columns(text: str, tokens: list[Token]) -> str:
    """CREATE TABLE text with columns named by words sqlglot reserves but MySQL does not (``any``)
    quoted, where they start a column definition or stand alone in a key's column list. Used only when
    sqlglot cannot parse the text as it is."""
    start = next((i for i, t in enumerate(tokens) if t.token_type == TokenType.L_PAREN), -1)
    end = matching_paren(tokens, start) if start >= 0 else -1
    if end < 0:
        return text
    names: list[Token] = []
    for part in split_commas(tokens[start + 1:end]):
        head = part[0]
        if head.token_type not in (TokenType.VAR, TokenType.IDENTIFIER) and head.text.isidentifier() \
                and head.text.upper() not in _DEFINITION_WORDS and len(part) > 1:
            names.append(head)
        elif head.text.upper() in _DEFINITION_WORDS:
            open_at = next((i for i, t in enumerate(part) if t.token_type == TokenType.L_PAREN), -1)
            close_at = matching_paren(part, open_at) if open_at >= 0 else -1
            for key_part in split_commas(part[open_at + 1:close_at]) if close_at > 0 else []:
                word = key_part[0]
                if word.token_type not in (TokenType.VAR, TokenType.IDENTIFIER) and word.text.isidentifier():
                    names.append(word)
    for tok in sorted(names, key=lambda t: t.start, reverse=True):
        text = text[:tok.start] + "`" + tok.text + "`" + text[tok.end + 1:]
    return text


_DEFINITION_WORDS = frozenset({
    "PRIMARY", "PRIMARY KEY", "KEY", "INDEX", "UNIQUE", "CONSTRAINT", "FOREIGN", "FOREIGN KEY", "CHECK",
    "FULLTEXT", "SPATIAL", "LIKE", "PERIOD", "SYSTEM",
})
