"""Which tables' rows a run outputs: ``--tables DB.TABLE`` and ``--exclude-tables DB.TABLE``, with globs.

Strategy: each pattern is ``DB.TABLE`` split at its one dot, each side a shell glob (``*``, ``?``,
``[abc]``, as ``fnmatch``), compiled once to a regular expression. A table passes when no include pattern
is given or one matches it, and no exclude pattern matches it: exclude wins. Names are compared
case-insensitively, as a server with ``lower_case_table_names`` 1 or 2 compares them and as the schema
tracker's catalog does; on a ``lower_case_table_names=0`` server (Linux's default) two tables whose names
differ only in case both match a pattern naming either. The filter only decides what is written: every
caller still replays the DDL of every table, so the schema stays right when a table is included later.
Answers are cached per (db, table): a run asks once per rows event.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from binlog_model.errors import ConfigError

if TYPE_CHECKING:
    from schema_tracker.history import SchemaHistory

__all__ = ["TableFilter", "TablePattern", "history_tables"]


@dataclass(frozen=True, slots=True)
class TablePattern:
    """One ``DB.TABLE`` glob as given (``text``), with each side compiled."""

    text: str
    db: re.Pattern[str]
    table: re.Pattern[str]

    @classmethod
    def parse(cls, text: str, *, option: str = "--tables") -> TablePattern:
        """``shop.orders``, ``shop.*``, ``*.audit_*`` ...; ``ConfigError`` for anything without exactly one
        dot between two non-empty sides (a column name, a bare table name)."""
        db, dot, table = text.strip().partition(".")
        if not dot or not db or not table or "." in table:
            raise ConfigError(f"{option} takes DB.TABLE (globs allowed: shop.*, *.audit_*), got {text!r}")
        return cls(text.strip(), _compile(db), _compile(table))

    def matches(self, db: str, table: str) -> bool:
        return self.db.match(db) is not None and self.table.match(table) is not None

    def matches_database(self, db: str) -> bool:
        return self.db.match(db) is not None

    def __reduce__(self) -> tuple[object, tuple[str]]:
        # pickled (shipped to Spark executors) as its text
        return (_pattern_from_text, (self.text,))


def _pattern_from_text(text: str) -> TablePattern:
    return TablePattern.parse(text)


def _compile(glob: str) -> re.Pattern[str]:
    return re.compile(fnmatch.translate(glob), re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class TableFilter:
    """``include`` and ``exclude`` patterns; ``filter(db, table)`` says whether the table's rows are output.
    The empty filter (``TableFilter()``) passes every table."""

    include: tuple[TablePattern, ...] = ()
    exclude: tuple[TablePattern, ...] = ()
    _cache: dict[tuple[str, str], bool] = field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def from_patterns(cls, include: Iterable[str] = (), exclude: Iterable[str] = ()) -> TableFilter:
        """The filter of ``--tables`` (``include``) and ``--exclude-tables`` (``exclude``) values, each
        ``DB.TABLE`` with globs; a value may also hold several patterns separated by commas (the Spark
        options' form). Raises ``ConfigError`` naming a malformed pattern."""
        return cls(tuple(TablePattern.parse(p, option="--tables") for p in _split(include)),
                   tuple(TablePattern.parse(p, option="--exclude-tables") for p in _split(exclude)))

    @property
    def active(self) -> bool:
        """False for the filter that passes everything (no pattern given)."""
        return bool(self.include or self.exclude)

    def __call__(self, db: str, table: str) -> bool:
        key = (db, table)
        known = self._cache.get(key)
        if known is None:
            known = ((not self.include or any(p.matches(db, table) for p in self.include))
                     and not any(p.matches(db, table) for p in self.exclude))
            self._cache[key] = known
        return known

    def database(self, db: str) -> bool:
        """Whether an event about database ``db`` as a whole (CREATE/ALTER/DROP DATABASE) is output: some
        include pattern's database side matches it (or none is given), and no exclude pattern leaves out
        all its tables (``db.*``)."""
        if self.include and not any(p.matches_database(db) for p in self.include):
            return False
        return not any(p.matches_database(db) and p.table.pattern == _EVERY_TABLE for p in self.exclude)

    def unmatched(self, seen_tables: Iterable[tuple[str, str]]) -> list[str]:
        """The patterns (include and exclude, as given) that match none of ``seen_tables`` ((db, table)
        pairs): most likely a typo, warned about at the end of a run."""
        seen = set(seen_tables)
        return [p.text for p in (*self.include, *self.exclude)
                if not any(p.matches(db, table) for db, table in seen)]

    def options(self) -> dict[str, list[str]]:
        """The patterns as a state document records them (empty when the filter is inactive)."""
        if not self.active:
            return {}
        return {"tables": [p.text for p in self.include], "exclude_tables": [p.text for p in self.exclude]}

    def __reduce__(self) -> tuple[object, tuple[list[str], list[str]]]:
        return (TableFilter.from_patterns, ([p.text for p in self.include], [p.text for p in self.exclude]))


_EVERY_TABLE = fnmatch.translate("*")


def history_tables(history: SchemaHistory) -> set[tuple[str, str]]:
    """Every (db, table) ``history`` ever held: at its start, named by a statement's changes, at its end."""
    seen = set(history.initial.tables) | set(history.catalog.tables)
    for entry in history.entries:
        seen.update((c.db, c.table) for c in entry.changes if getattr(c, "table", None))
    return seen


def _split(values: Iterable[str]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]
