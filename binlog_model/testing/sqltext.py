"""Split SQL scripts into statements, and read the ``-- @key: value`` directives of scenario files.

Strategy: a single left-to-right scan with a tiny state machine (outside / in a quoted string / in a
comment). A statement ends at a ``;`` seen outside quotes and comments. Quotes are ``'``, ``"`` and
backquotes, with both doubled-quote and backslash escapes (MariaDB's default ``sql_mode`` has no
``NO_BACKSLASH_ESCAPES``). Comments (``-- `` / ``#`` to end of line, ``/* ... */``) are removed, as the
``mariadb`` client does by default, so the statement text the server logs in QUERY and ANNOTATE_ROWS events
is exactly the SQL; ``/*! ... */`` executable comments are kept. Lines inside a statement keep their
layout. ``DELIMITER`` is deliberately not supported: scenarios contain no stored programs.
"""

from __future__ import annotations

import re

from binlog_model.errors import ConfigError

__all__ = ["parse_directives", "split_statements"]

# `-- @name: value` in the leading comment block of a scenario file (the `@` keeps prose lines such as
# "-- Covers: ..." from being read as directives).
_DIRECTIVE = re.compile(r"^--\s*@([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*?)\s*$")


def split_statements(text: str) -> list[str]:
    """Split ``text`` into statements (without the terminating ``;``), skipping empty and comment-only ones.

    Raises ``ConfigError`` naming the line when a quoted string or ``/*`` comment is never closed.
    """
    out: list[str] = []
    buf: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "'\"`":
            end = _end_of_quoted(text, i)
            buf.append(text[i:end])
            i = end
        elif ch == "#" or (text.startswith("--", i) and (i + 2 >= n or text[i + 2] in " \t\r\n")):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif ch == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise ConfigError(f"unterminated /* comment starting on line {_line_of(text, i)}")
            buf.append(text[i:end + 2] if text.startswith("/*!", i) else " ")
            i = end + 2
        elif ch == ";":
            _flush(buf, out)
            i += 1
        else:
            buf.append(ch)
            i += 1
    _flush(buf, out)
    return out


def parse_directives(text: str) -> dict[str, str]:
    """Return the ``-- @key: value`` directives from the comment block at the top of a scenario file.

    Only the leading run of ``--`` comment lines (blank lines allowed) is read; keys are lower-cased.
    """
    found: dict[str, str] = {}
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("--"):
            break
        match = _DIRECTIVE.match(stripped)
        if match:
            found[match.group(1).lower()] = match.group(2)
    return found


def _end_of_quoted(text: str, start: int) -> int:
    quote = text[start]
    i, n = start + 1, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and quote != "`":
            i += 2
            continue
        if ch == quote:
            # A doubled quote is an escaped quote, not the end.
            if i + 1 < n and text[i + 1] == quote:
                i += 2
                continue
            return i + 1
        i += 1
    raise ConfigError(f"unterminated {quote} quoted text starting on line {_line_of(text, start)}")


def _flush(buf: list[str], out: list[str]) -> None:
    lines = [line.rstrip() for line in "".join(buf).splitlines()]
    buf.clear()
    stmt = "\n".join(line for line in lines if line.strip()).strip()
    if stmt:
        out.append(stmt)


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1
