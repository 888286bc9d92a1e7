"""How statements become BinlogEvents: ``ResolveOptions``, parsed once from what a caller gives.

The command line, ``iter_binlog_events`` and the Spark reader all call ``ResolveOptions.parse`` with the
values as their users wrote them (strings, ``db.table.column`` lists or a mapping); it returns validated
options with enums for the image mode and the statement-text mode, or raises ``ConfigError`` saying which
value is wrong. ``StatementAssembler`` reads only the parsed form.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from binlog_model.errors import ConfigError
from binlog_model.resolve.table_filter import TableFilter

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_ROWS", "AssemblerOptions", "ImageMode", "ResolveOptions",
           "StatementText", "parse_always_include"]


class ImageMode(StrEnum):
    """What an UPDATE's before/after hold (and a DELETE's before)."""

    CHANGED = "changed"                    # the spec: ``after`` holds the changed columns
    CHANGED_WITH_OLD = "changed_with_old"  # also the old values of the changed columns in ``before``
    FULL = "full"                          # complete before and after images as logged
    AFTER = "after"                        # the row as it is after the change: INSERT and UPDATE the whole
                                           # after image (no before), DELETE the whole before image


class StatementText(StrEnum):
    """Where a statement's SQL goes (a multi-row INSERT's text can be most of an event's bytes)."""

    ALL = "all"        # every BinlogEvent of the statement
    FIRST = "first"    # only the first piece of each split statement
    NONE = "none"      # nowhere (``trace_info`` is kept either way)


AlwaysInclude = Mapping[tuple[str, str], tuple[str, ...]]


# The bounds of one BinlogEvent unless told otherwise: every entry point (library, CLI, Spark) uses these.
DEFAULT_MAX_ROWS = 1000
DEFAULT_MAX_BYTES = 4 << 20       # 4 MiB


@dataclass(frozen=True)
class ResolveOptions:
    """How statements become BinlogEvents.

    ``always_include``: per table (``(db, table)``, compared case-insensitively) the columns always put in
    ``before`` for UPDATE and DELETE (the spec's ``currency``). ``image``: an ``ImageMode`` (``"changed"``,
    ``"changed_with_old"``, ``"full"``, ``"after"``). ``max_rows``/``max_bytes`` bound one BinlogEvent;
    ``spill_bytes`` bounds the memory a pending transaction may hold. ``allow_incomplete_tail``: a
    transaction still open at the end of input is dropped and counted in ``stats.incomplete_transactions``
    instead of raising (for binlogs still being written). ``statement_text``: a ``StatementText``
    (``"all"``, ``"first"``, ``"none"``). Strings are accepted for both enums and become the enum
    (``ConfigError`` otherwise). ``tables``: a ``TableFilter``; rows (and SCHEMA events) of the tables it
    leaves out are not output, their row images never decoded, while their DDL is still tracked.
    """

    source: str = ""
    always_include: AlwaysInclude = field(default_factory=dict)
    image: ImageMode = ImageMode.CHANGED
    max_rows: int = DEFAULT_MAX_ROWS
    max_bytes: int = DEFAULT_MAX_BYTES
    spill_bytes: int = 64 << 20
    allow_incomplete_tail: bool = False
    statement_text: StatementText = StatementText.ALL
    tables: TableFilter = field(default_factory=TableFilter)

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "image", ImageMode(self.image))
        except ValueError:
            raise ConfigError(
                f"image must be changed, changed_with_old, full or after, not {self.image!r}") from None
        try:
            object.__setattr__(self, "statement_text", StatementText(self.statement_text))
        except ValueError:
            raise ConfigError(
                f"statement_text must be all, first or none, not {self.statement_text!r}") from None
        if self.max_rows < 1 or self.max_bytes < 1:
            raise ConfigError("max_rows and max_bytes must be positive")

    @classmethod
    def parse(cls, *, source: str = "",
              always_include: Mapping[tuple[str, str], Iterable[str]] | Iterable[str] | None = None,
              image: str = "changed", statement_text: str = "all", max_rows: int = DEFAULT_MAX_ROWS,
              max_bytes: int = DEFAULT_MAX_BYTES, spill_bytes: int = 64 << 20,
              allow_incomplete_tail: bool = False, tables: TableFilter | Iterable[str] = (),
              exclude_tables: Iterable[str] = ()) -> ResolveOptions:
        """Options from a caller's values: ``always_include`` as ``["db.table.column", ...]`` (the CLI's
        and Spark's form) or ``{("db", "table"): ["column", ...]}``; ``image``/``statement_text`` as their
        names; ``tables``/``exclude_tables`` as ``DB.TABLE`` globs (``TableFilter.from_patterns``), or
        ``tables`` as a ``TableFilter`` already parsed (the command line's). Raises
        ``ConfigError`` naming the first wrong value."""
        return cls(source=source, always_include=_always_include(always_include),
                   image=_enum(ImageMode, image), max_rows=max_rows, max_bytes=max_bytes,
                   spill_bytes=spill_bytes,
                   allow_incomplete_tail=allow_incomplete_tail,
                   statement_text=_enum(StatementText, statement_text),
                   tables=tables if isinstance(tables, TableFilter)
                   else TableFilter.from_patterns(tables, exclude_tables))


# The name the library has exported since before the middle stage had its own folder.
AssemblerOptions = ResolveOptions


def _enum(kind: type[Any], value: Any) -> Any:
    # A wrong name is reported by ``__post_init__`` with the list of right ones.
    try:
        return kind(value)
    except ValueError:
        return value


def _always_include(given: Mapping[tuple[str, str], Iterable[str]] | Iterable[str] | None) -> AlwaysInclude:
    if given is None:
        return {}
    if isinstance(given, Mapping):
        return {k: tuple(v) for k, v in given.items()}
    return parse_always_include(given)


def parse_always_include(specs: Iterable[str]) -> dict[tuple[str, str], tuple[str, ...]]:
    """``["ppc.campaigns.currency", ...]`` → ``{("ppc", "campaigns"): ("currency",)}``."""
    out: dict[tuple[str, str], list[str]] = {}
    for spec in specs:
        parts = spec.split(".")
        if len(parts) != 3 or not all(parts):
            raise ConfigError(f"--always-include expects db.table.column, got {spec!r}")
        out.setdefault((parts[0].lower(), parts[1].lower()), []).append(parts[2])
    return {k: tuple(v) for k, v in out.items()}
