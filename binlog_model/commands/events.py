"""``binlog-model events FILE...``: binlog files → BinlogEvents as JSON lines or a length-delimited
protobuf stream."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO

import click

from binlog_model.assemble import AssemblerOptions, StatementAssembler, parse_always_include
from binlog_model.model import to_json, write_delimited
from binlog_model.pipeline import iter_binlog_events, load_snapshot


@click.command("events")
@click.argument("files", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--source", default="", help="Source label put in every event, e.g. ppc:1.")
@click.option("--snapshot", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Starting schema: a mysqldump --no-data .sql file or a schema history .json.")
@click.option("--always-include", "always_include", multiple=True, metavar="DB.TABLE.COLUMN",
              help="Column always put in `before` for UPDATE/DELETE (repeatable).")
@click.option("--image", type=click.Choice(["changed", "changed_with_old", "full"]), default="changed",
              show_default=True, help="What before/after hold for UPDATE (and DELETE with full).")
@click.option("--max-rows", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Split a statement into BinlogEvents of at most this many rows.")
@click.option("--max-bytes", type=click.IntRange(min=1), default=4 << 20, show_default=True,
              help="... and of at most about this many bytes of row data.")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "proto"]), default="jsonl", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write here instead of stdout.")
@click.option("--lenient-ddl", is_flag=True, help="Skip DDL the tracker cannot follow: the table it names "
              "becomes uncertain, and its rows then fail loudly (UncertainSchemaError), never resolved from "
              "TABLE_MAP metadata.")
@click.option("--allow-incomplete-tail", is_flag=True,
              help="Drop a transaction still open at the end of the input instead of failing.")
@click.option("--no-verify-checksum", is_flag=True, help="Do not verify CRC32 event checksums.")
@click.option("--statement-text", type=click.Choice(["all", "first", "none"]), default="all",
              show_default=True, help="Put the statement's SQL on all its events, only the first piece of a "
              "split statement, or nowhere.")
@click.option("--stats", is_flag=True, help="Print counters to stderr at the end.")
def command(files: tuple[Path, ...], source: str, snapshot: Path | None, always_include: tuple[str, ...],
            image: str, max_rows: int, max_bytes: int, fmt: str, out: Path | None, lenient_ddl: bool,
            allow_incomplete_tail: bool, no_verify_checksum: bool, statement_text: str, stats: bool) -> None:
    """Decode binlog FILES into one BinlogEvent per statement (and table)."""
    options = AssemblerOptions(source=source, always_include=parse_always_include(always_include),
                               image=image, max_rows=max_rows, max_bytes=max_bytes,  # type: ignore[arg-type]
                               allow_incomplete_tail=allow_incomplete_tail,
                               statement_text=statement_text)  # type: ignore[arg-type]
    assembler = StatementAssembler(load_snapshot(snapshot, lenient=lenient_ddl), options)
    events = iter_binlog_events(files, assembler=assembler, verify_checksum=not no_verify_checksum)
    stream: IO[bytes] | IO[str]
    if fmt == "proto":
        if out is None and sys.stdout.isatty():
            raise click.UsageError("--format proto writes binary: give --out FILE or redirect stdout")
        stream = out.open("wb") if out else sys.stdout.buffer
        try:
            write_delimited(stream, events)
        finally:
            if out:
                stream.close()
    else:
        stream = out.open("w", encoding="utf-8") if out else sys.stdout
        try:
            for event in events:
                stream.write(to_json(event) + "\n")
        finally:
            if out:
                stream.close()
    if stats:
        click.echo(f"stats: {assembler.stats}", err=True)
