"""Binlog files → BinlogEvents: the library's one-call entry point.

Strategy: the runner (``runs.runner.Runner``, without state) over the files (``io.file_source.FileSource``)
feeds ``StatementAssembler``, starting from the schema ``io.snapshots.load_snapshot`` reads (a dump, a saved
history, a live server, a ``Catalog`` or a history).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, cast

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.errors import ConfigError
from binlog_model.io.file_source import FileSource
from binlog_model.io.snapshots import Snapshot, load_snapshot
from binlog_model.resolve.assembler import AssemblerStats, StatementAssembler, replay_ddl
from binlog_model.resolve.ddl_pass import DDL_SKIP_TYPES
from binlog_model.resolve.options import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS, ResolveOptions
from binlog_model.runs.runner import Runner
from binlog_model.runs.source import EventSource, decoded
from schema_tracker.history import SchemaHistory

__all__ = ["history_from_binlogs", "history_from_source", "iter_binlog_events", "iter_serialized_events"]


def iter_binlog_events(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    source: str = "",
    snapshot: Snapshot = None,
    always_include: Mapping[tuple[str, str], Iterable[str]] | Iterable[str] | None = None,
    image: str = "changed",
    max_rows: int = DEFAULT_MAX_ROWS,
    max_bytes: int = DEFAULT_MAX_BYTES,
    lenient_ddl: bool = False,
    verify_checksum: bool = True,
    allow_incomplete_tail: bool = False,
    statement_text: str = "all",
    database: str | None = None,
    tables: Iterable[str] = (),
    exclude_tables: Iterable[str] = (),
    assembler: StatementAssembler | None = None,
    options: ResolveOptions | None = None,
    stats: AssemblerStats | None = None,
    _serialized: bool = False,
) -> Iterator[pb.BinlogEvent]:
    """Yield one ``BinlogEvent`` per statement (and table) of the given binlog files, in binlog order.

    ``always_include``: ``{("db", "table"): ["col", ...]}`` or ``["db.table.col", ...]``: columns always
    put in ``before`` for UPDATE and DELETE. ``image``: ``changed`` (default, the spec), ``changed_with_old``
    or ``full``. ``statement_text``: ``all`` (default), ``first`` or ``none`` (see ``ResolveOptions``).
    These shaping keywords go through ``ResolveOptions.parse``; ``options`` gives them already parsed
    instead (``source``, ``always_include``, ``image``, ``max_rows``, ``max_bytes``,
    ``allow_incomplete_tail``, ``statement_text``, ``tables`` and ``exclude_tables`` are then not read).
    ``tables``/``exclude_tables``: ``DB.TABLE`` globs (``shop.*``, ``*.audit_*``) of the tables whose rows
    and SCHEMA events are output (see ``resolve.table_filter``); the DDL of every table is still tracked.
    Patterns that matched no table are in ``stats.unmatched_table_patterns`` at the end.
    ``lenient_ddl``: skip DDL the tracker cannot follow, marking its table uncertain. ``database``: the
    database of a snapshot dump's statements before any ``USE`` (``mysqldump --no-data DB`` writes none).
    ``allow_incomplete_tail``: a transaction, or an event, cut off at the end of the last file (the active
    binlog of a running server) is dropped and counted instead of raising.
    ``stats``: an ``AssemblerStats`` the run counts into (read it after the iteration). Pass your own
    ``assembler`` to read its ``stats`` and ``history`` afterwards (the other keywords are then not read).

    Raises ``BinlogError`` subclasses only: decode errors name the file and offset, schema errors the table,
    position and statement.
    """
    if assembler is None:
        if options is None:
            options = ResolveOptions.parse(source=source, always_include=always_include, image=image,
                                           max_rows=max_rows, max_bytes=max_bytes,
                                           allow_incomplete_tail=allow_incomplete_tail,
                                           statement_text=statement_text, tables=tables,
                                           exclude_tables=exclude_tables)
        history = load_snapshot(snapshot, lenient=lenient_ddl, database=database)
        assembler = StatementAssembler(history, options, serialized=_serialized)
    if stats is not None:
        assembler.stats = stats
    # The file source reads a half-written last event as a stop (with allow_incomplete_tail) or an error
    # naming the flag; the runner counts the partial bytes into the stats.
    files = FileSource(paths, partial_tail=assembler.options.allow_incomplete_tail,
                       verify_checksum=verify_checksum)
    yield from Runner(files, assembler).events()


def iter_serialized_events(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                           **options: Any) -> Iterator[bytes]:
    """As ``iter_binlog_events`` (the same keyword options, except ``assembler``), yielding each
    BinlogEvent's serialized bytes: what ``--format proto`` writes (``DelimitedSink.write_serialized``).
    With the compiled core the rows are never parsed into messages, so this is the fast way to proto files.
    """
    if "assembler" in options:
        raise ConfigError("iter_serialized_events builds its own assembler")
    return cast(Iterator[bytes], iter_binlog_events(paths, _serialized=True, **options))


def history_from_binlogs(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                         history: SchemaHistory | None = None, *, verify_checksum: bool = True,
                         pin_server_charset: bool = False) -> SchemaHistory:
    """``replay_ddl`` over binlog files (in rotation order), read with rows and table maps skipped."""
    source = FileSource(paths, verify_checksum=verify_checksum, skip_types=DDL_SKIP_TYPES, drop_skipped=True)
    return history_from_source(source, history, pin_server_charset=pin_server_charset)


def history_from_source(source: EventSource, history: SchemaHistory | None = None, *,
                        pin_server_charset: bool = False) -> SchemaHistory:
    """``replay_ddl`` over the events of ``source`` (a ``FileSource`` with ``DDL_SKIP_TYPES`` skipped is
    what ``history_from_binlogs`` reads)."""
    return replay_ddl(decoded(source.read()), history, pin_server_charset=pin_server_charset)
