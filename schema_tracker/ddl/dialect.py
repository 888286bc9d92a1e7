"""sqlglot's MySQL dialect as the tracker reads DDL, and the two entry points into sqlglot (tokens, trees).

sqlglot's MySQL dialect reads some type names differently from MySQL (REAL as FLOAT, INT8 as TINYINT, LONG
as BIGINT) and does not tokenize others (POINT, NATIONAL CHAR...): ``_BinlogMySQL`` extends its keyword
table with MySQL's meaning.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.dialects.mysql import MySQL
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, TokenType

from binlog_model.errors import UnsupportedDDLError
from schema_tracker.model import ServerSession


class SridColumnConstraint(exp.Expression, exp.ColumnConstraintKind):
    """MySQL 8's ``SRID n`` column attribute of spatial columns (it restricts values, not their type)."""

    arg_types = {"this": True}  # noqa: RUF012 - sqlglot's own convention


class SerialDefaultValueColumnConstraint(exp.Expression, exp.ColumnConstraintKind):
    """``SERIAL DEFAULT VALUE`` on an integer column: NOT NULL AUTO_INCREMENT UNIQUE."""

    arg_types = {"this": False}  # noqa: RUF012 - sqlglot's own convention


class IgnoredColumnAttribute(exp.Expression, exp.ColumnConstraintKind):
    """A column attribute that changes nothing the tracker records (``STORAGE DISK``, ``COLUMN_FORMAT``)."""

    arg_types = {"this": True}  # noqa: RUF012 - sqlglot's own convention


class UnsignedColumnAttribute(exp.Expression, exp.ColumnConstraintKind):
    """``UNSIGNED`` after another attribute (``int signed unsigned``)."""

    arg_types = {"this": False}  # noqa: RUF012 - sqlglot's own convention


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
            "NATIONAL CHARACTER VARYING": TokenType.NVARCHAR, "NATIONAL CHAR VARYING": TokenType.NVARCHAR,
            "NCHAR VARCHAR": TokenType.NVARCHAR, "NCHAR VARYING": TokenType.NVARCHAR,
            "NATIONAL VARCHARACTER": TokenType.NVARCHAR, "LONG BYTE": TokenType.MEDIUMBLOB,
            "NATIONAL CHARACTER": TokenType.NCHAR, "NATIONAL VARCHAR": TokenType.NVARCHAR,
            "POINT": TokenType.POINT, "LINESTRING": TokenType.LINESTRING, "POLYGON": TokenType.POLYGON,
            "MULTILINESTRING": TokenType.MULTILINESTRING, "MULTIPOLYGON": TokenType.MULTIPOLYGON,
            # Types sqlglot has no MySQL token for ride on unused type tokens, translated back by name in
            # _SIMPLE_TYPES: MariaDB's INET6/INET4, and the last two spatial collection types.
            "INET6": TokenType.IPADDRESS, "INET4": TokenType.INET,
            "MULTIPOINT": TokenType.INT4MULTIRANGE, "GEOMETRYCOLLECTION": TokenType.INT8MULTIRANGE,
            "GEOMCOLLECTION": TokenType.INT8MULTIRANGE,  # MySQL 8's synonym (MariaDB rejects it)
        }

    class Parser(MySQL.Parser):  # type: ignore[valid-type,misc]  # sqlglot declares it as a variable
        # MySQL lets a generated column's ``AS (expr)`` follow the type's CHARACTER SET / COLLATE; sqlglot
        # reads ``AS`` only right after the type, so it is also a column attribute here.
        CONSTRAINT_PARSERS = {  # noqa: RUF012 - sqlglot's own convention for parser tables
            **MySQL.Parser.CONSTRAINT_PARSERS,
            "AS": lambda self: self._parse_generated_after_attributes(),
            "SRID": lambda self: self.expression(SridColumnConstraint(this=self._parse_number())),
            "CHECK": lambda self: self._parse_check_enforced(),
            # Column attributes that change nothing the tracker records (NDB storage, row format).
            "STORAGE": lambda self: self._match_texts(("DISK", "MEMORY", "DEFAULT"))
            and self.expression(IgnoredColumnAttribute(this=exp.var(self._prev.text))),
            "COLUMN_FORMAT": lambda self: self._match_texts(("FIXED", "DYNAMIC", "DEFAULT", "COMPRESSED"))
            and self.expression(IgnoredColumnAttribute(this=exp.var(self._prev.text))),
            # ``int signed unsigned``: SIGNED is a no-op in MySQL's grammar, any UNSIGNED wins
            "SIGNED": lambda self: self.expression(IgnoredColumnAttribute(this=exp.var("SIGNED"))),
            # VISIBLE is the default (INVISIBLE is sqlglot's own InvisibleColumnConstraint)
            "VISIBLE": lambda self: self.expression(IgnoredColumnAttribute(this=exp.var("VISIBLE"))),
            # MySQL's charset shorthands after a string type: BYTE is binary, ASCII latin1, UNICODE ucs2
            "BYTE": lambda self: self.expression(exp.CharacterSetColumnConstraint(this=exp.var("binary"))),
            "ASCII": lambda self: self.expression(exp.CharacterSetColumnConstraint(this=exp.var("latin1"))),
            "UNICODE": lambda self: self.expression(exp.CharacterSetColumnConstraint(this=exp.var("ucs2"))),
            "UNSIGNED": lambda self: self.expression(UnsignedColumnAttribute()),
            # MySQL 9 data masking: a policy changes what a reader sees, never the column
            "MASKING": lambda self: self._match_text_seq("POLICY") and self._parse_id_var()
            and self.expression(IgnoredColumnAttribute(this=exp.var("MASKING POLICY"))),
            "SERIAL": lambda self: self._match_text_seq("DEFAULT", "VALUE")
            and self.expression(SerialDefaultValueColumnConstraint()),
        }

        # FLOAT UNSIGNED: sqlglot has no unsigned FLOAT type; it rides on UINT256, read back in ``types``.
        SIGNED_TO_UNSIGNED_TYPE_TOKEN = {  # noqa: RUF012
            **MySQL.Parser.SIGNED_TO_UNSIGNED_TYPE_TOKEN, TokenType.FLOAT: TokenType.UINT256,
            TokenType.YEAR: TokenType.YEAR,  # YEAR UNSIGNED (deprecated) is plain YEAR
        }

        def _parse_check_enforced(self) -> exp.Expression | None:
            # MySQL 8.0.16+: CHECK (expr) [NOT] ENFORCED (the server prints it as /*!80016 NOT ENFORCED */)
            node = MySQL.Parser.CONSTRAINT_PARSERS["CHECK"](self)
            if not self._match_text_seq("NOT", "ENFORCED"):
                self._match_text_seq("ENFORCED")
            return node

        def _parse_unique_key(self) -> exp.Expression | None:
            # ``ADD COLUMN c int UNIQUE FIRST``: FIRST/AFTER place the column, they do not name the key
            if self._curr and self._curr.text.upper() in ("FIRST", "AFTER"):
                return None
            return super()._parse_unique_key()

        def _parse_generated_after_attributes(self) -> exp.Expression | None:
            if not self._match(TokenType.L_PAREN, advance=False):
                return None
            expression = self._parse_disjunction()
            stored = self._match_texts(("STORED", "VIRTUAL", "PERSISTENT")) and \
                self._prev.text.upper() in ("STORED", "PERSISTENT")
            return self.expression(exp.ComputedColumnConstraint(this=expression, persisted=stored))


class _BinlogMySQLAnsiQuotes(_BinlogMySQL):
    """The same under sql_mode ANSI_QUOTES: ``"x"`` quotes a name, only ``'x'`` is a string."""

    class Tokenizer(_BinlogMySQL.Tokenizer):
        QUOTES = ["'"]  # noqa: RUF012 - sqlglot's own convention for tokenizer tables
        IDENTIFIERS = ["`", '"']  # noqa: RUF012


MYSQL: Dialect = _BinlogMySQL()
_MYSQL_ANSI_QUOTES: Dialect = _BinlogMySQLAnsiQuotes()
_SESSION: ContextVar[ServerSession] = ContextVar("ddl_session", default=ServerSession())  # noqa: B039 - frozen


def session() -> ServerSession:
    """The server session of the statement being applied (set by ``apply`` for its duration)."""
    return _SESSION.get()


@contextmanager
def in_session(value: ServerSession) -> Iterator[None]:
    token = _SESSION.set(value)
    try:
        yield
    finally:
        _SESSION.reset(token)


def _dialect() -> Dialect:
    return _MYSQL_ANSI_QUOTES if _SESSION.get().ansi_quotes else MYSQL


class _CommandFallbackFilter(logging.Filter):
    """Drop sqlglot's "Falling back to parsing as a 'Command'" warning: every such case is handled here on
    purpose (fallback or typed error), so the warning would only be noise in a long replay."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Falling back to parsing as a 'Command'" not in record.getMessage()


if not any(isinstance(f, _CommandFallbackFilter) for f in logging.getLogger("sqlglot").filters):
    logging.getLogger("sqlglot").addFilter(_CommandFallbackFilter())



def unsupported(message: str) -> UnsupportedDDLError:
    return UnsupportedDDLError(message)


def tokenize(text: str, statement: str | None) -> list[Token]:
    try:
        return list(_dialect().tokenize(text))
    except SqlglotError as err:
        raise UnsupportedDDLError(f"cannot tokenize SQL: {err}", statement=statement or text) from err


def parse(sql: str) -> Any:
    try:
        tree = sqlglot.parse_one(sql, read=_dialect())
    except SqlglotError as err:
        first = str(err).splitlines()[0]
        raise unsupported(f"sqlglot cannot parse the statement: {first}") from err
    return tree

