"""Transactions → statements → ``BinlogEvent``s: names, types, primary keys, before/after.

Strategy: a push-style state machine (``StatementAssembler.feed(event)``) over decoded wire events, after
seed 001's routing:

    GTID | ANONYMOUS_GTID | MariaDB GTID  →  BEGIN (QUERY)  →  [ROWS_QUERY | ANNOTATE_ROWS]  →  TABLE_MAP…
    →  ROWS… up to STMT_END_F  →  …  →  XID | COMMIT (QUERY)              (ROLLBACK discards)

A DDL QUERY becomes SCHEMA BinlogEvents (one per table it touches) and is applied to the schema history at
its position. Rows are resolved with the catalog in force at the rows event's position
(``SchemaHistory.at``), so yesterday's rows never meet today's schema. A statement's rows are grouped per
(table, operation) — a multi-table UPDATE gives one BinlogEvent per table — and split into pieces of at
most ``max_rows``/``max_bytes`` so a million-row statement streams through.

Output of a transaction is held back until its commit (ROLLBACK and ROLLBACK TO SAVEPOINT must be able to
discard it); a transaction larger than ``spill_bytes`` spills to a temporary file, so memory stays flat.

Identity. MySQL: ``server_uuid`` = GTID source UUID, ``transaction_id`` = GTID gno. MariaDB:
``server_uuid`` is empty, ``gtid_domain_id`` = domain and ``transaction_id`` = sequence number.
Without a GTID (``ANONYMOUS_GTID``, or servers without GTIDs) the documented fallback is
``server_uuid`` = "" and ``transaction_id`` = ``(file sequence << 40) | offset`` of the transaction's first
event: unique, deterministic and increasing in binlog order.
"""

from __future__ import annotations

import builtins
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.charsets import charset_for_collation_id
from binlog_model.errors import (
    ConfigError,
    IncompleteTransactionError,
    JsonDiffError,
    SchemaMismatchError,
    UncertainSchemaError,
    UnknownTableError,
    UnsupportedDDLError,
)
from binlog_model.json_diff import resolve_partial_row
from binlog_model.position import BinlogPosition, file_sequence
from binlog_model.resolve.compiled_rows import compile_rows
from binlog_model.resolve.from_table_map import table_from_table_map
from binlog_model.resolve.options import ResolveOptions
from binlog_model.resolve.plan import RowPlan, build_plan
from binlog_model.resolve.rows import RowBuilders, python_row_builders
from binlog_model.resolve.schema_changes import schema_change_to_proto
from binlog_model.resolve.spill import TransactionBuffer
from binlog_model.resolve.statement_text import printable, put_statement, query_text
from binlog_model.wire import events as ev
from binlog_model.wire.rows import RowsEvent
from binlog_model.wire.table_map import TableMapEvent
from schema_tracker.changes import SkippedStatement, visible_changes
from schema_tracker.history import SchemaHistory
from schema_tracker.model import TableSchema, collation_name

__all__ = ["AssemblerStats", "StatementAssembler"]

_OPERATION = {"insert": pb.BinlogEvent.INSERT, "update": pb.BinlogEvent.UPDATE,
              "partial_update": pb.BinlogEvent.UPDATE, "delete": pb.BinlogEvent.DELETE}


@dataclass
class AssemblerStats:
    """Counters of what the assembler saw, including what it did not turn into BinlogEvents."""

    transactions: int = 0
    rolled_back_transactions: int = 0
    incomplete_transactions: int = 0
    statements: int = 0
    row_changes: int = 0
    binlog_events: int = 0
    schema_events: int = 0
    statement_format_queries: int = 0     # QUERY events inside transactions that are not BEGIN/COMMIT/DDL
    tables_from_metadata: int = 0
    unknown_events: int = 0               # UnknownEvent (types this decoder does not know), passed over
    partial_tail_bytes: int = 0           # a half-written last event left unread (allow_incomplete_tail)
    # --always-include tables no TABLE_MAP named (a typo, or no rows in this input): warned about at the end
    always_include_unseen: list[str] = field(default_factory=list)


# --- checks ---------------------------------------------------------------------------------------------


def _check_always_include(schema: TableSchema, wanted: Iterable[str]) -> None:
    """At start, against the snapshot: a name the table lacks is a ConfigError before any event (at a
    TABLE_MAP the same mistake is a SchemaMismatchError with the position: ``_resolve``)."""
    names = {c.name.lower() for c in schema.columns}
    missing = [c for c in wanted if c not in names]
    if missing:
        raise ConfigError(f"--always-include names column(s) {', '.join(missing)} that table "
                          f"{schema.qualified_name} does not have in the snapshot (its columns: "
                          f"{', '.join(c.name for c in schema.columns)})")


# --- statement state -----------------------------------------------------------------------------------


@dataclass
class _Piece:
    """Rows of one table of the current statement not yet emitted, all of one operation (a change of
    operation emits them first, keeping log order)."""

    view: RowBuilders
    operation: int
    timestamp: int
    server_id: int
    position: pb.BinlogPosition
    # The outgoing event: rows are built straight into it (no copy at emit); its other fields are set then.
    event: pb.BinlogEvent = field(default_factory=pb.BinlogEvent)
    bytes: int = 0
    next_row_index: int = 0     # statement-wide index of the next row of this table
    event_index: int = 0
    # Rows the compiled builder made, after those in ``event.rows``: framed entries of BinlogEvent.rows.
    frames: list[builtins.bytes] = field(default_factory=list)
    frames_first: int = 0       # row_index of the first of ``frames``


@dataclass
class _Identity:
    server_uuid: str = ""
    transaction_id: int = 0
    gtid: str = ""
    domain_id: int = 0


class StatementAssembler:
    """Feed decoded wire events in binlog order; get committed ``BinlogEvent``s back.

    ``history`` is the schema history used for resolution and extended by the DDL seen. A history built
    beforehand (as the Spark driver does) may already hold the DDL at a position: it is then reused, not
    applied twice. Errors: ``SchemaMismatchError``, ``UnknownTableError``, ``UncertainSchemaError``,
    ``UnsupportedDDLError`` (strict DDL), ``DecoderStateError`` for an impossible event order.
    """

    def __init__(self, history: SchemaHistory | None = None, options: ResolveOptions | None = None, *,
                 serialized: bool = False) -> None:
        # serialized: yield each BinlogEvent as its serialized bytes (what a proto sink writes); the rows
        # the compiled builder made are then never parsed into messages.
        self._serialized = serialized
        self.history = history if history is not None else SchemaHistory()
        self.options = options or ResolveOptions()
        self.stats = AssemblerStats()
        self._always = {(db.lower(), t.lower()): tuple(c.lower() for c in cols)
                        for (db, t), cols in self.options.always_include.items()}
        self._always_unseen = set(self._always)
        self._always_checked = not self._always
        self._recorded = {e.position: e for e in self.history.entries if e.position is not None}
        # A history built beforehand from this very input (the Spark driver's pre-pass) already ran every
        # QUERY up to its last entry: one at or before it that is not recorded changed nothing then (e.g.
        # DROP TABLE IF EXISTS of a table created later) and must not be re-applied to the latest catalog.
        positioned = [e.position for e in self.history.entries if e.position is not None]
        self._covered_until = max(p.sort_key() for p in positioned) if positioned else None
        self._views: dict[tuple[int, int], tuple[TableMapEvent, Any, RowBuilders]] = {}
        self._layouts: dict[tuple[Any, ...], tuple[Any, RowBuilders]] = {}
        # Tables named by a DDL statement skipped in lenient mode that the tracker did not know: uncertain
        # too, so their rows fail loudly instead of resolving from TABLE_MAP metadata.
        self._skipped_tables: set[tuple[str, str]] = set()
        self._buffer = TransactionBuffer(self.options.spill_bytes, serialized=self._serialized)
        self._prepared: dict[tuple[bytes, bytes, int], TransactionBuffer] = {}   # XA xid → held events
        self._savepoints: dict[str, tuple[int, int]] = {}   # name → (events held, query_index) at it
        self._identity: _Identity | None = None    # from the last GTID event, until the transaction ends
        self._in_transaction = False
        self._tx_first: BinlogPosition | None = None
        self._query_index = 0
        self._statement_text: str | None = None
        self._statement_open = False
        self._pieces: dict[tuple[str, str], _Piece] = {}   # (db, table) → rows not yet emitted
        self._last_position: BinlogPosition | None = None
        self._charset_pinned = False
        self._handlers: dict[type, Callable[[Any], Iterator[pb.BinlogEvent]]] = {
            ev.FormatDescriptionEvent: self._on_format_description,
            ev.GtidEvent: self._on_gtid,
            ev.MariadbGtidEvent: self._on_mariadb_gtid,
            ev.QueryEvent: self._on_query,
            ev.RowsQueryEvent: self._on_rows_query,
            ev.AnnotateRowsEvent: self._on_rows_query,
            RowsEvent: self._on_rows,
            ev.XidEvent: self._on_commit,
            ev.XaPrepareEvent: self._on_xa_prepare,
        }

    # -- public --------------------------------------------------------------------------------------------

    def feed(self, event: Any) -> Iterator[pb.BinlogEvent]:
        """Consume one decoded event; yield the BinlogEvents it completes (on commit)."""
        if not self._always_checked and hasattr(event, "header"):
            self._check_always_at_start(event)
        handler = self._handlers.get(type(event))
        if handler is None:
            if type(event) is ev.UnknownEvent:
                self.stats.unknown_events += 1
            return iter(())
        return handler(event)

    def close(self) -> Iterator[pb.BinlogEvent]:
        """End of input. An open transaction is an error unless ``allow_incomplete_tail``."""
        where = self._last_position
        if self._in_transaction or self._statement_open or len(self._buffer):
            self.stats.incomplete_transactions += 1
            self._end_transaction()
            if not self.options.allow_incomplete_tail:
                raise IncompleteTransactionError(
                    "the binlog ends inside a transaction: no XID or COMMIT event ends it (a binlog still "
                    "being written?); pass --allow-incomplete-tail (allow_incomplete_tail=True) to stop "
                    "before it", file=where.file if where else None, offset=where.offset if where else None)
        self.stats.always_include_unseen = sorted(f"{db}.{t}" for db, t in self._always_unseen)
        if self._prepared:
            pending = len(self._prepared)
            for held in self._prepared.values():
                held.discard()
            self._prepared.clear()
            self.stats.incomplete_transactions += pending
            if not self.options.allow_incomplete_tail:
                raise IncompleteTransactionError(
                    f"{pending} prepared XA transaction(s) neither committed nor rolled back in the input; "
                    "pass --allow-incomplete-tail (allow_incomplete_tail=True) to drop them",
                    file=where.file if where else None, offset=where.offset if where else None,
                    expected="XA COMMIT or XA ROLLBACK")
        return iter(())

    def _check_always_at_start(self, event: Any) -> None:
        """--always-include columns of tables the schema already knows where the input starts (a snapshot,
        or a history continued from an earlier run) are checked before any row, not at the first one."""
        self._always_checked = True
        h = event.header
        catalog = self.history.at(BinlogPosition(_base_name(h.file), h.offset))
        for (db, t), cols in self._always.items():
            known = catalog.table(db, t)
            if known is not None:
                _check_always_include(known, cols)

    @property
    def idle(self) -> bool:
        """Nothing pending: no open transaction or statement, no held events, no prepared XA, no GTID
        waiting for its transaction. Only then can a run stop and a later one resume at the next event
        without losing or repeating anything."""
        return not (self._in_transaction or self._statement_open or len(self._buffer) or self._prepared
                    or self._identity is not None or self._tx_first is not None)

    def assemble(self, events: Iterable[Any]) -> Iterator[pb.BinlogEvent]:
        """Feed every event, then close: the whole stream as BinlogEvents."""
        for event in events:
            yield from self.feed(event)
        yield from self.close()

    # -- identity ------------------------------------------------------------------------------------------

    def _on_format_description(self, event: ev.FormatDescriptionEvent) -> Iterator[pb.BinlogEvent]:
        # Where MySQL and MariaDB read DDL differently, the tracker follows the server that wrote the binlog.
        self.history.server_version = event.server_version
        return iter(())

    def _on_gtid(self, event: ev.GtidEvent) -> Iterator[pb.BinlogEvent]:
        if event.anonymous:
            self._new_identity(None, event)
            return iter(())
        # A tagged GTID (MySQL 8.4+) numbers its transactions per (uuid, tag): the tag is part of the source,
        # else uuid:5 and uuid:batch:5 would share one identity.
        source = f"{event.sid}:{event.tag}" if event.tag else str(event.sid)
        self._new_identity(_Identity(source, event.gno, f"{source}:{event.gno}"), event)
        return iter(())

    def _on_mariadb_gtid(self, event: ev.MariadbGtidEvent) -> Iterator[pb.BinlogEvent]:
        server_id = event.header.server_id
        self._new_identity(_Identity("", event.seq_no, f"{event.domain_id}-{server_id}-{event.seq_no}",
                                     event.domain_id), event)
        # MariaDB writes no BEGIN after its GTID event: a non-standalone GTID opens the transaction.
        if not event.standalone:
            self._begin()
        return iter(())

    def _new_identity(self, identity: _Identity | None, event: Any) -> None:
        if self._in_transaction or self._statement_open:
            # A new GTID while a transaction is open: the previous one never committed (crash/truncation).
            self.stats.incomplete_transactions += 1
            self._end_transaction()
        self._identity = identity
        self._tx_first = self._position(event)

    def _fallback_identity(self) -> _Identity:
        first = self._tx_first or self._last_position
        if first is None:
            return _Identity()
        seq = max(file_sequence(first.file), 0)
        # 40 offset bits: a file past 4 GiB (one huge transaction) must not run into the next sequence.
        return _Identity("", (seq << 40) | first.offset, "")

    # -- transactions --------------------------------------------------------------------------------------

    def _begin(self) -> None:
        self._in_transaction = True
        self._query_index = 0
        self._savepoints.clear()

    def _on_query(self, event: ev.QueryEvent) -> Iterator[pb.BinlogEvent]:
        position = self._position(event)
        word = _first_words(event.query)
        if word == "BEGIN" or word == "START TRANSACTION" or word.startswith("XA START"):
            if self._tx_first is None:
                self._tx_first = position
            self._begin()
            return iter(())
        if word.startswith(("XA COMMIT", "XA ROLLBACK")):
            return self._on_xa_end(event.query)
        if word == "COMMIT":
            return self._commit()
        if word == "ROLLBACK":
            self._close_statement()
            self.stats.rolled_back_transactions += 1
            self._end_transaction()
            return iter(())
        if word.startswith("ROLLBACK TO"):
            self._close_statement()
            name = _savepoint_name(event.query, after="TO")
            if name is not None and name in self._savepoints:
                # Drop the events after the savepoint and reuse their statement numbers.
                self._buffer.truncate(self._savepoints[name][0])
                self._query_index = self._savepoints[name][1]
            return iter(())
        if word.startswith("SAVEPOINT"):
            self._close_statement()
            name = _savepoint_name(event.query, after="SAVEPOINT")
            if name is not None:
                self._savepoints[name] = (len(self._buffer), self._query_index)
            return iter(())
        if word.startswith("XA "):
            return iter(())
        return self._on_ddl(event, position)

    def _on_ddl(self, event: ev.QueryEvent, position: BinlogPosition) -> Iterator[pb.BinlogEvent]:
        text, charset = query_text(event)
        recorded = self._recorded.get(position)
        gtid = self._identity.gtid if self._identity else None
        if recorded is not None:
            changes = recorded.changes
        elif self._covered_until is not None and position.sort_key() <= self._covered_until:
            changes = ()
        else:
            self._adopt_server_charset(event)
            # The tracker reads the statement in its client charset, strictly (a typed error when the
            # bytes are not valid there); ``text`` is what the event shows, raw bytes kept.
            changes = self.history.apply_event(event, position, gtid or None)
        changes = visible_changes(changes)  # no internal bookkeeping, no hidden columns
        if not changes:
            if self._in_transaction:
                self.stats.statement_format_queries += 1
            return iter(())
        for change in changes:
            if isinstance(change, SkippedStatement) and change.table:
                self._skipped_tables.add((change.db.lower(), change.table.lower()))
        self._views.clear()
        if self._tx_first is None:
            self._tx_first = position
        identity = self._identity or self._fallback_identity()
        groups = _group_by_table(changes)
        for index, (db, table, group) in enumerate(groups):
            try:
                out = pb.BinlogEvent(
                    source=self.options.source, server_uuid=identity.server_uuid,
                    transaction_id=identity.transaction_id, query_index=self._query_index,
                    db=db, table=table, operation=pb.BinlogEvent.SCHEMA, gtid=identity.gtid,
                    event_index=index, last_in_statement=index == len(groups) - 1,
                    server_id=event.header.server_id, gtid_domain_id=identity.domain_id,
                )
                out.schema_changes.extend(schema_change_to_proto(c) for c in group)
            except UnicodeEncodeError as err:
                # Identifiers are UTF-8 in the server (and in every TABLE_MAP): one that is not valid text
                # could never match a rows event, so it is an error, not a name to guess at.
                raise UnsupportedDDLError(
                    "the statement names a database, table or column whose bytes are not valid text in the "
                    "statement's charset", table=f"{printable(db)}.{printable(table)}", position=position,
                    statement=printable(text)) from err
            put_statement(out, text, charset, self.options.statement_text == "all"
                           or (self.options.statement_text == "first" and index == 0))
            out.utc_timestamp.CopyFrom(Timestamp(seconds=event.header.timestamp))
            out.position.CopyFrom(_pb_position(event))
            self._buffer.append(out)
            self.stats.schema_events += 1
        if self._in_transaction:
            self._query_index += 1
            return iter(())
        # DDL outside BEGIN is its own (implicitly committed) transaction.
        return self._commit()

    def pin_server_charset(self) -> None:
        """Keep the history's server charset (given by the caller) instead of adopting the binlog's."""
        self._charset_pinned = True

    def _adopt_server_charset(self, event: ev.QueryEvent) -> None:
        """Without a snapshot, the server's default charset comes from the QUERY event's
        ``collation_server`` status variable, so CREATE DATABASE/TABLE without a charset inherit the right
        one (MariaDB 10.11 and MySQL 5.7 default to different charsets than MySQL 8)."""
        initial = self.history.initial
        if (self._charset_pinned or self.history.entries or initial.tables or initial.databases
                or event.collation_server is None):
            return
        charset = charset_for_collation_id(event.collation_server)
        if charset and charset != initial.server_charset:
            self.history.initial = replace(initial, server_charset=charset,
                                           server_collation=collation_name(event.collation_server))

    def _on_xa_prepare(self, event: ev.XaPrepareEvent) -> Iterator[pb.BinlogEvent]:
        """XA PREPARE: a one-phase XA commits now; a prepared one is held, keyed by its xid, until the
        XA COMMIT (emitted then) or XA ROLLBACK (discarded) that a later event logs."""
        if event.one_phase:
            return self._commit()
        self._close_statement()
        self._prepared[(bytes(event.gtrid), bytes(event.bqual), event.format_id)] = self._buffer
        self._buffer = TransactionBuffer(self.options.spill_bytes, serialized=self._serialized)
        self._end_transaction()
        return iter(())

    def _on_xa_end(self, query: str) -> Iterator[pb.BinlogEvent]:
        commit, xid = _parse_xa_end(query)
        held = self._prepared.pop(xid, None) if xid is not None else None
        if held is None:
            # No prepare seen for it (it lies before this input, or the XA ran in one piece here): the
            # open transaction, if any, ends as the statement says.
            if commit:
                return self._commit()
            self._close_statement()
            self.stats.rolled_back_transactions += 1
            self._end_transaction()
            return iter(())
        if not commit:
            held.discard()
            self.stats.rolled_back_transactions += 1
            return iter(())
        self.stats.transactions += 1
        return self._count(held.drain())

    def _on_commit(self, event: Any) -> Iterator[pb.BinlogEvent]:
        return self._commit()

    def _commit(self) -> Iterator[pb.BinlogEvent]:
        self._close_statement()
        self.stats.transactions += 1
        # Hand the committed events over in a buffer of their own, streamed (from the spill file when the
        # transaction was large), so memory stays bounded whatever the transaction's size.
        buffer = self._buffer
        self._buffer = TransactionBuffer(self.options.spill_bytes, serialized=self._serialized)
        self._end_transaction()
        return self._count(buffer.drain())

    def _count(self, events: Iterator[pb.BinlogEvent]) -> Iterator[pb.BinlogEvent]:
        for e in events:
            self.stats.binlog_events += 1
            yield e

    def _end_transaction(self) -> None:
        self._buffer.discard()
        self._pieces.clear()
        self._statement_open = False
        self._statement_text = None
        self._in_transaction = False
        self._identity = None
        self._tx_first = None
        self._query_index = 0
        self._savepoints.clear()

    # -- statements ----------------------------------------------------------------------------------------

    def _on_rows_query(self, event: Any) -> Iterator[pb.BinlogEvent]:
        self._close_statement()
        self._statement_text = event.query
        self._statement_open = True
        return iter(())

    def _close_statement(self) -> None:
        if not self._statement_open:
            return
        had_rows = bool(self._pieces)
        for piece in self._pieces.values():
            self._emit(piece, last=True)
        self._pieces.clear()
        self._statement_open = False
        self._statement_text = None
        if had_rows:
            self._query_index += 1
            self.stats.statements += 1

    def _on_rows(self, event: RowsEvent) -> Iterator[pb.BinlogEvent]:
        position = self._position(event)
        if self._tx_first is None:
            self._tx_first = position
        self._statement_open = True
        view = self._view(event.table_map, position)
        operation = _OPERATION[event.kind]
        plan = view.plan
        key = (plan.db, plan.table)
        piece = self._pieces.get(key)
        if piece is None:
            piece = _Piece(view, operation, event.header.timestamp, event.header.server_id,
                           _pb_position(event))
            self._pieces[key] = piece
        elif piece.operation != operation:
            # REPLACE / INSERT … ON DUPLICATE KEY UPDATE mix operations on one table: keep their log order
            # (row 8 must be inserted before it is updated), so a change of operation starts a new piece.
            self._emit(piece, last=False)
            piece.operation = operation
            piece.timestamp = event.header.timestamp
            piece.position = _pb_position(event)
        # The compiled builder reads the event's row images itself; None: the Python builder does it.
        frames = view.compiled.build(event, piece.next_row_index) if view.compiled is not None else None
        images: Sequence[Any] = ()
        if frames is not None:
            count = len(frames)
        else:
            images = event.rows
            if event.kind == "partial_update":
                images = self._resolve_partial_json(event, plan, position)
            count = len(images)
            if piece.frames:
                _merge_frames(piece)    # keep the rows in log order
        per_row = max(1, event.header.event_size // max(1, count))
        max_rows, max_bytes = self.options.max_rows, self.options.max_bytes
        build = view.for_kind(event.kind)
        start = 0
        while start < count:
            # As many rows as the piece holds before max_rows or max_bytes splits it (at least one).
            held = len(piece.event.rows) + len(piece.frames)
            if held and (held >= max_rows or piece.bytes + per_row > max_bytes):
                self._emit(piece, last=False)
                piece.timestamp = event.header.timestamp
                piece.position = _pb_position(event)
                held = 0
            fits = min(max_rows - held, (max_bytes - piece.bytes) // per_row, count - start)
            stop = start + max(fits, 1)
            if frames is not None:
                if not piece.frames:
                    piece.frames_first = piece.next_row_index
                piece.frames.extend(frames[start:stop] if start or stop < count else frames)
                piece.next_row_index += stop - start
                piece.bytes += per_row * (stop - start)
                start = stop
                continue
            try:
                build(piece.event.rows, images[start:stop] if start or stop < count else images,
                      piece.next_row_index)
            except SchemaMismatchError as err:
                # A converter names the column; the table and the rows event's position are known here.
                raise SchemaMismatchError(err.reason, table=f"{plan.db}.{plan.table}", position=position,
                                          tracked=err.tracked, binlog=err.binlog) from err
            piece.next_row_index += stop - start
            piece.bytes += per_row * (stop - start)
            start = stop
        self.stats.row_changes += count
        if event.is_statement_end:
            self._close_statement()
        return iter(())

    @staticmethod
    def _resolve_partial_json(event: RowsEvent, plan: RowPlan,
                              position: BinlogPosition) -> list[tuple[Any, Any]]:
        """binlog_row_value_options=PARTIAL_JSON logs JSON changes as diffs: apply them to the before image's
        document where it holds one (the update then carries the new document like any other), else keep
        them for the ``json_diff`` value (see json_diff.py)."""
        out = []
        for before, after in event.rows:
            try:
                out.append((before, resolve_partial_row(before, after)))
            except JsonDiffError as err:
                err.reason += f" (row {len(out)} of `{plan.db}`.`{plan.table}`)"
                raise err.located(file=position.file, offset=position.offset,
                                  event_type="PARTIAL_UPDATE_ROWS_EVENT") from None
        return out

    def _emit(self, piece: _Piece, *, last: bool) -> None:
        out = piece.event
        # Only compiled rows, and bytes wanted: the event's fields go around them without parsing them.
        as_bytes = self._serialized and bool(piece.frames) and not out.rows
        if piece.frames and not as_bytes:
            _merge_frames(piece)
        if not out.rows and not as_bytes:
            return
        identity = self._identity or self._fallback_identity()
        out.source = self.options.source
        out.server_uuid = identity.server_uuid
        out.transaction_id = identity.transaction_id
        out.query_index = self._query_index
        out.row_index = piece.frames_first if as_bytes else out.rows[0].row_index
        out.db = piece.view.plan.db
        out.table = piece.view.plan.table
        out.operation = piece.operation  # type: ignore[assignment]
        out.gtid = identity.gtid
        out.event_index = piece.event_index
        out.last_in_statement = last
        out.server_id = piece.server_id
        out.gtid_domain_id = identity.domain_id
        out.utc_timestamp.seconds = piece.timestamp
        out.position.CopyFrom(piece.position)
        if self._statement_text is not None:
            mode = self.options.statement_text
            put_statement(out, self._statement_text, "",
                           mode == "all" or (mode == "first" and piece.event_index == 0))
        if as_bytes:
            self._buffer.append(_with_rows(out.SerializeToString(), piece.frames), piece.bytes)
            piece.frames = []
        else:
            self._buffer.append(out, piece.bytes)
        piece.event = pb.BinlogEvent()
        piece.bytes = 0
        piece.event_index += 1

    # -- rows ----------------------------------------------------------------------------------------------

    def _view(self, table_map: TableMapEvent, position: BinlogPosition) -> RowBuilders:
        catalog = self.history.at(position)
        cached = self._views.get((table_map.table_id, id(catalog)))
        if cached is not None and cached[0] is table_map and cached[1] is catalog:
            return cached[2]
        # Every transaction logs its own TABLE_MAP: reuse the view built for an identical one under the
        # same catalog (same names, types, metadata) instead of rebuilding names, setters and checks.
        layout = (id(catalog), table_map.schema, table_map.table, table_map.column_types,
                  table_map.column_metas, table_map.signedness, table_map.charsets, table_map.column_names,
                  table_map.enum_values, table_map.set_values, table_map.primary_key)
        shared = self._layouts.get(layout)
        if shared is not None and shared[0] is catalog:
            self._views[(table_map.table_id, id(catalog))] = (table_map, catalog, shared[1])
            return shared[1]
        view = self._build_view(table_map, catalog, position)
        if len(self._layouts) >= 4096:
            self._layouts.clear()
        self._layouts[layout] = (catalog, view)
        self._views[(table_map.table_id, id(catalog))] = (table_map, catalog, view)
        return view

    def _build_view(self, table_map: TableMapEvent, catalog: Any, position: BinlogPosition) -> RowBuilders:
        schema = catalog.table(table_map.schema, table_map.table)
        if schema is None and (table_map.schema.lower(), table_map.table.lower()) in self._skipped_tables:
            raise UncertainSchemaError(
                "the table was named by a DDL statement skipped in lenient mode; its rows do not fall back "
                "to the TABLE_MAP's metadata", table=f"{table_map.schema}.{table_map.table}",
                position=position)
        if schema is None:
            schema = table_from_table_map(table_map)
            if schema is None:
                raise UnknownTableError(
                    "rows for a table the schema history does not know, and the TABLE_MAP carries no column "
                    "names (the server did not run with binlog_row_metadata=FULL); give a --snapshot that "
                    "defines the table",
                    table=f"{table_map.schema}.{table_map.table}", position=position)
            self.stats.tables_from_metadata += 1
        elif schema.uncertain:
            raise UncertainSchemaError(
                "the table's schema is uncertain after a DDL statement skipped in lenient mode",
                table=schema.qualified_name, position=position)
        wanted = self._always.get((schema.db.lower(), schema.name.lower()), ())
        if wanted:
            self._always_unseen.discard((schema.db.lower(), schema.name.lower()))
        plan = build_plan(table_map, schema, wanted, position)
        builders = python_row_builders(plan, self.options.image)
        compiled = compile_rows(plan, table_map, self.options.image)
        return builders if compiled is None else replace(builders, compiled=compiled)

    # -- helpers -------------------------------------------------------------------------------------------

    def _position(self, event: Any) -> BinlogPosition:
        h = event.header
        pos = BinlogPosition(_base_name(h.file), h.offset)
        self._last_position = pos
        return pos


def _base_name(path: str | None) -> str:
    """Positions name the binlog file as the server does (``mysql-bin.000042``), not the path it was read
    from, so output does not depend on where the files sit."""
    return os.path.basename(path) if path else ""


def _pb_position(event: Any) -> pb.BinlogPosition:
    h = event.header
    p = pb.BinlogPosition(file=_base_name(h.file), offset=h.offset, next_offset=h.log_pos)
    if h.inner_index is not None:
        p.inner_index = h.inner_index
    return p


_WORDS = re.compile(r"(?:\s|/\*.*?\*/|#[^\n]*\n|--\s[^\n]*\n)*([A-Za-z]+(?:\s+[A-Za-z]+)?)", re.S)


def _first_words(query: str) -> str:
    """The first one or two keywords of a statement, upper-cased, comments skipped."""
    m = _WORDS.match(query)
    if not m:
        return ""
    return " ".join(m.group(1).upper().split())


_XID_PART = r"(?:X'([0-9A-Fa-f]*)'|'((?:[^'\\]|\\.|'')*)')"
_XA_END = re.compile(r"XA\s+(COMMIT|ROLLBACK)\s+" + _XID_PART + r"(?:\s*,\s*" + _XID_PART
                     + r")?(?:\s*,\s*(\d+))?", re.I | re.S)


def _xid_bytes(hex_text: str | None, quoted: str | None) -> bytes:
    if hex_text is not None:
        return bytes.fromhex(hex_text)
    text = (quoted or "").replace("''", "'")
    return re.sub(r"\\(.)", r"\1", text).encode("utf-8")


def _parse_xa_end(query: str) -> tuple[bool, tuple[bytes, bytes, int] | None]:
    """``XA COMMIT|ROLLBACK gtrid[, bqual[, formatID]]`` (quoted or ``X'hex'``) → (commit?, xid key)."""
    m = _XA_END.search(query)
    if m is None:
        return query.upper().find("ROLLBACK") < 0, None
    gtrid = _xid_bytes(m.group(2), m.group(3))
    bqual = _xid_bytes(m.group(4), m.group(5)) if (m.group(4) is not None or m.group(5) is not None) else b""
    return m.group(1).upper() == "COMMIT", (gtrid, bqual, int(m.group(6)) if m.group(6) else 1)


def _savepoint_name(query: str, after: str) -> str | None:
    m = re.search(after + r"\s+(?:SAVEPOINT\s+)?`?([^`\s;]+)`?", query, re.I)
    return m.group(1).lower() if m else None


def _group_by_table(changes: Sequence[Any]) -> list[tuple[str, str, list[Any]]]:
    """Consecutive changes of the same table form one SCHEMA BinlogEvent."""
    groups: list[tuple[str, str, list[Any]]] = []
    for change in changes:
        db, table = change.db, change.table
        if groups and groups[-1][0] == db and groups[-1][1] == table:
            groups[-1][2].append(change)
        else:
            groups.append((db, table, [change]))
    return groups


def _merge_frames(piece: _Piece) -> None:
    """Move the compiled builder's rows into the piece's event (parsed by upb, in C)."""
    piece.event.MergeFromString(b"".join(piece.frames))
    piece.frames.clear()


def _with_rows(head: bytes, frames: list[bytes]) -> bytes:
    """A serialized BinlogEvent without rows, with the rows' framed entries put in field order (after field
    10, before 12): the same bytes protobuf writes for the whole message."""
    pos, end = 0, len(head)
    while pos < end:
        tag, at = _varint(head, pos)
        if tag >> 3 > 11:
            break
        wire = tag & 7
        if wire == 0:
            _, at = _varint(head, at)
        elif wire == 2:
            size, at = _varint(head, at)
            at += size
        elif wire == 1:
            at += 8
        elif wire == 5:
            at += 4
        else:   # pragma: no cover - BinlogEvent has no group fields
            raise AssertionError(f"unexpected wire type {wire} in a serialized BinlogEvent")
        pos = at
    return b"".join((head[:pos], *frames, head[pos:]))


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos
