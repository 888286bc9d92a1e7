"""Binlog files → BinlogEvents: the library's one-call entry point.

Strategy: a thin loop — ``io.files.iter_events`` feeds ``StatementAssembler`` — plus the loading of a
starting schema (snapshot). A snapshot may be a ``mysqldump --no-data`` file (``.sql``), a saved schema
history (``.json``, as ``binlog-model schema --json`` or ``SchemaHistory.save`` write), a ``Catalog`` or a
``SchemaHistory``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, cast

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.errors import ConfigError
from binlog_model.io.files import sort_binlog_files
from binlog_model.io.tail import FileEnd, FileStart, iter_from
from binlog_model.resolve.assembler import StatementAssembler
from binlog_model.resolve.options import AssemblerOptions, parse_always_include
from schema_tracker.history import SchemaHistory
from schema_tracker.model import Catalog
from schema_tracker.snapshot import catalog_from_dump, read_sql_text

__all__ = ["iter_binlog_events", "iter_serialized_events", "load_snapshot"]

Snapshot = str | os.PathLike[str] | Catalog | SchemaHistory | None


def load_snapshot(snapshot: Snapshot, *, lenient: bool = False, database: str | None = None,
                  catalog: Catalog | None = None) -> SchemaHistory:
    """A schema history to start from: a ``mysqldump --no-data`` file, a saved history (``.json``), a live
    server (``mysql://user@host:port/db``, see ``binlog_model.live``), a ``Catalog`` or a history.

    ``database``: the database of a dump's statements before any ``USE`` (a dump of one database has none;
    its header comment is used when this is not given). ``catalog``: the server defaults to start a dump
    from. Raises ``ConfigError`` for an unreadable or unknown snapshot and the tracker's ``SchemaError``
    subclasses for DDL it cannot follow."""
    if snapshot is None:
        return SchemaHistory(catalog, lenient=lenient)
    if isinstance(snapshot, SchemaHistory):
        return snapshot
    if isinstance(snapshot, Catalog):
        return SchemaHistory(snapshot, lenient=lenient)
    text = os.fspath(snapshot)
    if "://" in text:
        from binlog_model.live import catalog_from_url
        return SchemaHistory(catalog_from_url(text, database=database), lenient=lenient)
    path = Path(snapshot)
    if not path.is_file():
        raise ConfigError(f"snapshot file not found: {path}")
    if path.suffix.lower() == ".json" or _looks_like_json(path):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise ConfigError(f"cannot read snapshot {path}: {err}") from err
        if isinstance(doc, dict) and "history" in doc:     # ``binlog-model schema --json`` output
            doc = doc["history"]
        return SchemaHistory.from_json(doc)
    dump = catalog_from_dump(read_sql_text(path), catalog, default_db=database, lenient=lenient)
    return SchemaHistory(dump, lenient=lenient)


def _looks_like_json(path: Path) -> bool:
    with open(path, "rb") as fh:
        head = fh.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"{")


def iter_binlog_events(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    source: str = "",
    snapshot: Snapshot = None,
    always_include: Mapping[tuple[str, str], Iterable[str]] | Iterable[str] | None = None,
    image: str = "changed",
    max_rows: int = 1000,
    max_bytes: int = 4 << 20,
    lenient_ddl: bool = False,
    verify_checksum: bool = True,
    allow_incomplete_tail: bool = False,
    statement_text: str = "all",
    database: str | None = None,
    assembler: StatementAssembler | None = None,
    _serialized: bool = False,
) -> Iterator[pb.BinlogEvent]:
    """Yield one ``BinlogEvent`` per statement (and table) of the given binlog files, in binlog order.

    ``always_include``: ``{("db", "table"): ["col", ...]}`` or ``["db.table.col", ...]``: columns always
    put in ``before`` for UPDATE and DELETE. ``image``: ``changed`` (default, the spec), ``changed_with_old``
    or ``full``. ``statement_text``: ``all`` (default), ``first`` or ``none`` (see ``AssemblerOptions``).
    ``lenient_ddl``: skip DDL the tracker cannot follow, marking its table uncertain. ``database``: the
    database of a snapshot dump's statements before any ``USE`` (``mysqldump --no-data DB`` writes none).
    ``allow_incomplete_tail``: a transaction, or an event, cut off at the end of the last file (the active
    binlog of a running server) is dropped and counted instead of raising.
    Pass your own ``assembler`` to read its ``stats`` and ``history`` afterwards.

    Raises ``BinlogError`` subclasses only: decode errors name the file and offset, schema errors the table,
    position and statement.
    """
    if assembler is None:
        if always_include is None:
            include: dict[tuple[str, str], tuple[str, ...]] = {}
        elif isinstance(always_include, Mapping):
            include = {k: tuple(v) for k, v in always_include.items()}
        else:
            include = parse_always_include(always_include)
        options = AssemblerOptions(source=source, always_include=include, image=image,  # type: ignore[arg-type]
                                   max_rows=max_rows, max_bytes=max_bytes,
                                   allow_incomplete_tail=allow_incomplete_tail,
                                   statement_text=statement_text)  # type: ignore[arg-type]
        history = load_snapshot(snapshot, lenient=lenient_ddl, database=database)
        assembler = StatementAssembler(history, options, serialized=_serialized)
    # io.tail reads a half-written last event as a stop (with allow_incomplete_tail) or an error naming
    # the flag; its FileEnd markers give the partial bytes for the stats.
    files = [Path(paths)] if isinstance(paths, str | os.PathLike) else sort_binlog_files(paths)
    starts = [FileStart(str(f)) for f in files]
    for item in iter_from(starts, partial_tail=assembler.options.allow_incomplete_tail,
                          verify_checksum=verify_checksum):
        if isinstance(item, FileEnd):
            assembler.stats.partial_tail_bytes += item.partial_bytes
        else:
            yield from assembler.feed(item)
    yield from assembler.close()


def iter_serialized_events(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                           **options: Any) -> Iterator[bytes]:
    """As ``iter_binlog_events`` (the same keyword options, except ``assembler``), yielding each
    BinlogEvent's serialized bytes: what ``--format proto`` writes (``DelimitedSink.write_serialized``).
    With the compiled core the rows are never parsed into messages, so this is the fast way to proto files.
    """
    if "assembler" in options:
        raise ConfigError("iter_serialized_events builds its own assembler")
    return cast(Iterator[bytes], iter_binlog_events(paths, _serialized=True, **options))
