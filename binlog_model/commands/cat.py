"""``binlog-model cat FILE|DIR...``: our own output files printed as JSON lines.

Reads what ``events`` and ``tail`` write (``io.outputs``: length-delimited protobuf or JSON lines, plain or
zstd; a folder as its committed part files in commit order) and prints each event through the JSONL sink, so
the lines are byte for byte what ``events --format jsonl`` printed for the same events. ``--table`` and
``--op`` keep only the events that match.
"""

from __future__ import annotations

import fnmatch
import sys
from collections.abc import Iterable
from pathlib import Path

import click

from binlog_model.errors import ConfigError
from binlog_model.io.outputs import iter_output_files
from binlog_model.messages import BinlogEvent
from binlog_model.sinks import open_sink

#: ``--op`` choices: the model's operation names, lower case
OPERATIONS = tuple(name.lower() for name in BinlogEvent.Operation.keys()  # noqa: SIM118  # an enum wrapper
                   if name != "OPERATION_UNSPECIFIED")


class TableMatcher:
    """``--table DB.TABLE`` patterns (``*``, ``?`` and ``[...]`` globs in either part), matched without
    regard to case, as the schema tracker compares names. No pattern matches every event; with patterns,
    an event without a table (a database-level DDL) matches none.

    (A stand-in: the shared ``TableFilter`` of ``--tables/--exclude-tables`` replaces it at the merge.)"""

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns: list[tuple[str, str]] = []
        for pattern in patterns:
            db, dot, table = pattern.partition(".")
            if not dot or not db or not table or "." in table:
                raise ConfigError(f"--table {pattern!r}: give DB.TABLE, e.g. shop.orders or 'shop.order_*' "
                                  "(globs allowed)")
            self.patterns.append((db.casefold(), table.casefold()))

    def matches(self, db: str, table: str) -> bool:
        if not self.patterns:
            return True
        if not table:
            return False
        db, table = db.casefold(), table.casefold()
        return any(fnmatch.fnmatchcase(db, d) and fnmatch.fnmatchcase(table, t) for d, t in self.patterns)


@click.command("cat")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--table", "tables", multiple=True, metavar="DB.TABLE",
              help="Only events of this table (repeatable; globs such as 'shop.order_*' allowed).")
@click.option("--op", "ops", multiple=True, type=click.Choice(OPERATIONS),
              help="Only events of this operation (repeatable).")
@click.option("--json-defaults", is_flag=True,
              help="Also write fields at their default (0, false, empty), as `events --json-defaults`.")
def command(paths: tuple[Path, ...], tables: tuple[str, ...], ops: tuple[str, ...], json_defaults: bool
            ) -> None:
    """Print our output files (proto or JSON lines, plain or .zst; an --out folder's part files in commit
    order) as JSON lines, as `events --format jsonl` prints them."""
    matcher = TableMatcher(tables)
    wanted = {BinlogEvent.Operation.Value(op.upper()) for op in ops}
    sys.stdout.flush()
    # The JSONL sink is the one encoding of an event as a line: options of the JSONL writer (such as the
    # coming --json-values) are passed to open_sink here, as `events` passes them.
    with open_sink("jsonl", sys.stdout.buffer, json_defaults=json_defaults) as sink:
        for event in iter_output_files(paths):
            if (not wanted or event.operation in wanted) and matcher.matches(event.db, event.table):
                sink.write(event)

