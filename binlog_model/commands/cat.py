"""``binlog-model cat FILE|DIR...``: our own output files printed as JSON lines.

Reads what ``events`` and ``tail`` write (``io.outputs``: length-delimited protobuf or JSON lines, plain or
zstd; a folder as its committed part files in commit order) and prints each event through the JSONL sink, so
the lines are byte for byte what ``events --format jsonl`` printed for the same events. ``--table`` and
``--op`` keep only the events that match.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from binlog_model.commands import options
from binlog_model.io.outputs import iter_output_files
from binlog_model.messages import BinlogEvent
from binlog_model.resolve.table_filter import TableFilter
from binlog_model.sinks import open_sink

#: ``--op`` choices: the model's operation names, lower case
OPERATIONS = tuple(name.lower() for name in BinlogEvent.Operation.keys()  # noqa: SIM118  # an enum wrapper
                   if name != "OPERATION_UNSPECIFIED")


def table_matcher(tables: TableFilter) -> Callable[[str, str], bool]:
    """Whether an event passes ``--tables/--exclude-tables`` (the shared ``TableFilter``): a table's event
    by its table, an event without a table (a database-level DDL) by its database, as `events` filters."""
    if not tables.active:
        return lambda db, table: True
    return lambda db, table: tables(db, table) if table else tables.database(db)


@click.command("cat")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@options.table_filter
@click.option("--op", "ops", multiple=True, type=click.Choice(OPERATIONS),
              help="Only events of this operation (repeatable).")
@click.option("--json-defaults", is_flag=True,
              help="Also write fields at their default (0, false, empty), as `events --json-defaults`.")
@options.json_values
def command(paths: tuple[Path, ...], tables: TableFilter, ops: tuple[str, ...], json_defaults: bool,
            json_values: str) -> None:
    """Print our output files (proto or JSON lines, plain or .zst; an --out folder's part files in commit
    order) as JSON lines, as `events --format jsonl` prints them."""
    matches = table_matcher(tables)
    wanted = {BinlogEvent.Operation.Value(op.upper()) for op in ops}
    sys.stdout.flush()
    # The JSONL sink is the one encoding of an event as a line, with the options `events` gives it
    with open_sink("jsonl", sys.stdout.buffer, json_defaults=json_defaults, json_values=json_values) as sink:
        for event in iter_output_files(paths):
            if (not wanted or event.operation in wanted) and matches(event.db, event.table):
                sink.write(event)

