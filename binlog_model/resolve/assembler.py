"""Transactions → statements → ``BinlogEvent``s: names, types, primary keys, before/after.

Strategy: a push-style state machine (``StatementAssembler.feed(event)``) over decoded wire events. Which
handler an event reaches and what state follows are tables in ``transactions`` (seed 001's routing); this
module holds the handlers. A DDL QUERY becomes SCHEMA BinlogEvents (``schema_changes.schema_events``) and
is applied to the schema history at its position. Rows are resolved with the catalog in force at the rows
event's position (``SchemaHistory.at``; plans per TABLE_MAP layout from ``tables``), so yesterday's rows
never meet today's schema. A statement's rows are grouped per (table, operation) — a multi-table UPDATE
gives one BinlogEvent per table — and split into pieces of at most ``max_rows``/``max_bytes`` so a
million-row statement streams through; the row builder (``rows``) fills each piece's event in place.
Output of a transaction is held back until its commit (``spill``: ROLLBACK must be able to discard it).

Identity: see ``transactions.Identity``; without a GTID, ``transaction_id`` is the documented fallback
``(file sequence << 40) | offset`` of the transaction's first event.

About 700 lines: the handlers share one state (buffer, identity, statement pieces, savepoints, prepared
XA), so they stay in one class; everything that does not need that state lives in the modules above.
"""

from __future__ import annotations

import builtins
import functools
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.charsets import charset_for_collation_id
from binlog_model.compiled import maker
from binlog_model.errors import (
    IncompleteTransactionError,
    JsonDiffError,
    SchemaMismatchError,
)
from binlog_model.position import EventPosition
from binlog_model.resolve.compiled_rows import RawImages, RawImagesRefused, merge_frames, with_rows
from binlog_model.resolve.ddl_pass import apply_query
from binlog_model.resolve.event_range import EventRange
from binlog_model.resolve.json_diff import resolve_partial_row
from binlog_model.resolve.lane import AVAILABLE as LANE_AVAILABLE
from binlog_model.resolve.lane import HistoryChanges, StatementLane, StatementRun, TransactionRun
from binlog_model.resolve.options import ResolveOptions
from binlog_model.resolve.plan import RowPlan
from binlog_model.resolve.rows import RowBuilders
from binlog_model.resolve.schema_changes import schema_events
from binlog_model.resolve.spill import TransactionBuffer
from binlog_model.resolve.statement_text import RowStatement, query_text
from binlog_model.resolve.table_filter import history_tables
from binlog_model.resolve.tables import TableResolver
from binlog_model.resolve.transactions import (
    IN_TRANSACTION,
    NEXT,
    STATEMENT_OPEN,
    Identity,
    QueryKind,
    Step,
    TxState,
    classify_query,
    fallback_identity,
    gtid_identity,
    mariadb_identity,
    parse_xa_end,
    savepoint_name,
)
from binlog_model.wire import events as ev
from binlog_model.wire.events import Event
from binlog_model.wire.header import EventHeader
from binlog_model.wire.rows import Row, RowsEvent
from schema_tracker.changes import SkippedStatement, visible_changes
from schema_tracker.history import SchemaHistory
from schema_tracker.model import collation_name

__all__ = ["AssemblerStats", "StatementAssembler", "replay_ddl"]

_new_position = maker(EventPosition)     # EventPosition(file, offset), made in C where the core is on
_parse_event = pb.BinlogEvent.FromString     # the lane's events, as messages (upb parses them in C)

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
    rows_events_filtered: int = 0         # rows events left out (--tables/--exclude-tables, or the range)
    unknown_events: int = 0               # UnknownEvent (types this decoder does not know), passed over
    partial_tail_bytes: int = 0           # a half-written last event left unread (allow_incomplete_tail)
    # --always-include tables no TABLE_MAP named (a typo, or no rows in this input): warned about at the end
    always_include_unseen: list[str] = field(default_factory=list)
    # --tables/--exclude-tables patterns no table of the history or of a TABLE_MAP matched: warned about
    unmatched_table_patterns: list[str] = field(default_factory=list)


# --- statement state -----------------------------------------------------------------------------------


@dataclass
class _Piece:
    """Rows of one table of the current statement not yet emitted, all of one operation (a change of
    operation emits them first, keeping log order)."""

    view: RowBuilders
    operation: int
    timestamp: int
    server_id: int
    position: EventHeader          # the rows event the piece starts at: its ``position`` field
    # The outgoing event: rows are built straight into it (no copy at emit); its other fields are set then.
    event: pb.BinlogEvent = field(default_factory=pb.BinlogEvent)
    bytes: int = 0
    next_row_index: int = 0     # statement-wide index of the next row of this table
    event_index: int = 0
    # Rows the compiled builder made, after those in ``event.rows``: framed entries of BinlogEvent.rows.
    frames: list[builtins.bytes] = field(default_factory=list)
    frames_first: int = 0       # row_index of the first of ``frames``
    raw: bool = False           # ``frames`` are raw row images (``RawImages``), not built rows


class StatementAssembler:
    """Feed decoded wire events in binlog order; get committed ``BinlogEvent``s back.

    ``history`` is the schema history used for resolution and extended by the DDL seen. A history built
    beforehand (as the Spark driver does) may already hold the DDL at a position: it is then reused, not
    applied twice. Errors: ``SchemaMismatchError``, ``UnknownTableError``, ``UncertainSchemaError``,
    ``UnsupportedDDLError`` (strict DDL), ``DecoderStateError`` for an impossible event order.

    ``options.tables`` and ``window`` (an ``EventRange``: mysqlbinlog's positions and datetimes) leave
    events out of the output only: the rows events they leave out are passed over at their TABLE_MAP
    (never decoded, never checked against the schema, still counted as statements so ``query_index`` is
    the unfiltered one), and their DDL is applied to the history as any other.
    """

    def __init__(self, history: SchemaHistory | None = None, options: ResolveOptions | None = None, *,
                 serialized: bool = False, raw: RawImages | None = None,
                 window: EventRange | None = None) -> None:
        # serialized: yield each BinlogEvent as its serialized bytes (what a proto sink writes); the rows
        # the compiled builder made are then never parsed into messages. raw (serialized only): the rows of
        # these tables as raw row images, for the resolve job's typing (``compiled_rows.RawImages``).
        if raw is not None and not serialized:
            raise ValueError("raw row images are for serialized output only")
        self._serialized = serialized
        self._raw = raw
        self.history = history if history is not None else SchemaHistory()
        self.options = options or ResolveOptions()
        self.stats = AssemblerStats()
        self._tables = TableResolver(self.options.always_include, self.options.image,
                                     self._table_from_metadata, lenient=self.history.lenient)
        self._always_checked = not self._tables.always
        self._recorded = {e.position: e for e in self.history.entries if e.position is not None}
        # A history built beforehand from this very input (the Spark driver's pre-pass) already ran every
        # QUERY up to its last entry: one at or before it that is not recorded changed nothing then (e.g.
        # DROP TABLE IF EXISTS of a table created later) and must not be re-applied to the latest catalog.
        positioned = [e.position for e in self.history.entries if e.position is not None]
        self._covered_until = max(p.sort_key() for p in positioned) if positioned else None
        self._buffer = TransactionBuffer(self.options.spill_bytes, serialized=self._serialized)
        self._prepared: dict[tuple[bytes, bytes, int], TransactionBuffer] = {}   # XA xid → held events
        self._savepoints: dict[str, tuple[int, int]] = {}   # name → (events held, query_index) at it
        self._identity: Identity | None = None     # from the last GTID event, until the transaction ends
        self._state = TxState.IDLE
        self._tx_first: EventPosition | None = None
        self._query_index = 0
        self._statement: RowStatement | None = None
        self._pieces: dict[tuple[str, str], _Piece] = {}   # (db, table) → rows not yet emitted
        self._last_position: EventPosition | None = None
        self._charset_pinned = False
        # --tables/--exclude-tables: None when every table is output (no check per rows event then)
        self._filter = self.options.tables if self.options.tables.active else None
        # mysqlbinlog's --start-position and the like: asked about every event; _outside is its last answer
        self.window = window
        self._outside = False
        self._mapped: set[tuple[str, str]] = set()     # tables TABLE_MAPs named (for unmatched patterns)
        self._statement_filtered = False     # the open statement had rows, all of tables left out
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
            StatementRun: self._on_statement_run,
            TransactionRun: self._on_transaction_run,
        }
        # Runs of plain row statements read in C (``lane``; messages are parsed from its bytes). A history
        # given whole beforehand may change at positions the assembler reads as no DDL: its runs stop at
        # each of them, and its tables are resolved again past them (``HistoryChanges``). With
        # table filters too: a table left out is never registered with the lane (``_on_rows`` returns
        # before), so its statements, and any transaction holding one, go this path.
        self.lane: StatementLane | None = None
        if LANE_AVAILABLE:
            changes = HistoryChanges([p.sort_key() for p in positioned]) if positioned else None
            self.lane = StatementLane(self.options, self._lane_query_index, self._lane_head, window, changes)
        self._lane_identity: Identity | None = None
        self._lane_fields = (b"", b"", b"")
        self._query_handlers: dict[QueryKind, Callable[[ev.QueryEvent, EventPosition],
                                                       Iterator[pb.BinlogEvent]]] = {
            QueryKind.BEGIN: self._on_begin,
            QueryKind.COMMIT: lambda event, position: self._commit(),
            QueryKind.ROLLBACK: self._on_rollback,
            QueryKind.ROLLBACK_TO: self._on_rollback_to,
            QueryKind.SAVEPOINT: self._on_savepoint,
            QueryKind.XA_END: self._on_xa_end,
            QueryKind.XA_OTHER: lambda event, position: iter(()),
            QueryKind.SCHEMA: self._on_ddl,
        }

    # -- public --------------------------------------------------------------------------------------------

    def feed(self, event: Event) -> Iterator[pb.BinlogEvent]:
        """Consume one decoded event; yield the BinlogEvents it completes (on commit)."""
        if not self._always_checked:
            self._check_always_at_start(event)
        if self.window is not None:
            h = event.header
            self._outside = not self.window.admits(h.file, h.offset, h.timestamp,
                                                    always=type(event) is ev.FormatDescriptionEvent)
        handler = self._handlers.get(type(event))
        if handler is None:
            if type(event) is ev.UnknownEvent:
                self.stats.unknown_events += 1
            return iter(())
        out = handler(event)
        lane = self.lane
        if lane is not None:     # (a handler makes its state changes at once)
            state = self._state
            if state is TxState.OPEN:       # between two statements of an open transaction
                lane.armed = self._tx_first is not None
                lane.between = False
            else:                           # between two transactions, nothing pending
                lane.armed = lane.between = lane.whole and state is TxState.IDLE and self.idle
        return out

    def close(self) -> Iterator[pb.BinlogEvent]:
        """End of input. An open transaction is an error unless ``allow_incomplete_tail``."""
        where = self._last_position
        if self._state is not TxState.IDLE or len(self._buffer):
            self.stats.incomplete_transactions += 1
            self._end_transaction()
            if not self.options.allow_incomplete_tail:
                raise IncompleteTransactionError(
                    "the binlog ends inside a transaction: no XID or COMMIT event ends it (a binlog still "
                    "being written?); pass --allow-incomplete-tail (allow_incomplete_tail=True) to stop "
                    "before it", file=where.file if where else None, offset=where.offset if where else None)
        self.stats.always_include_unseen = sorted(f"{db}.{t}" for db, t in self._tables.unseen)
        if self._filter is not None:
            self.stats.unmatched_table_patterns = self._filter.unmatched(self.seen_tables())
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

    def _check_always_at_start(self, event: Event) -> None:
        """--always-include columns of tables the schema already knows where the input starts (a snapshot,
        or a history continued from an earlier run) are checked before any row, not at the first one."""
        self._always_checked = True
        h = event.header
        self._tables.check_at_start(self.history.at(EventPosition(_base_name(h.file), h.offset)))

    def seen_tables(self) -> set[tuple[str, str]]:
        """Every (db, table) the history ever held (its start, each statement's changes, its end) or a
        TABLE_MAP of the input named: what a ``--tables`` pattern that matches nothing is checked against."""
        return self._mapped | history_tables(self.history)

    @property
    def past_range(self) -> bool:
        """The range (``window``) has stopped and nothing is pending: no later event can be output, so a
        reader may stop there."""
        return self.window is not None and self.window.stopped and self.idle

    @property
    def idle(self) -> bool:
        """Nothing pending: no open transaction or statement, no held events, no prepared XA, no GTID
        waiting for its transaction. Only then can a run stop and a later one resume at the next event
        without losing or repeating anything."""
        return not (self._state is not TxState.IDLE or len(self._buffer) or self._prepared
                    or self._identity is not None or self._tx_first is not None)

    def assemble(self, events: Iterable[Event]) -> Iterator[pb.BinlogEvent]:
        """Feed every event, then close: the whole stream as BinlogEvents."""
        for event in events:
            yield from self.feed(event)
        yield from self.close()

    # -- identity ------------------------------------------------------------------------------------------

    def _on_format_description(self, event: ev.FormatDescriptionEvent) -> Iterator[pb.BinlogEvent]:
        # Where MySQL and MariaDB read DDL differently, the tracker follows the server that wrote the binlog.
        self.history.server_version = event.server_version
        if self.lane is not None:
            self.lane.schema_changed()
        return iter(())

    def _on_gtid(self, event: ev.GtidEvent) -> Iterator[pb.BinlogEvent]:
        self._new_identity(gtid_identity(event), event)
        return iter(())

    def _on_mariadb_gtid(self, event: ev.MariadbGtidEvent) -> Iterator[pb.BinlogEvent]:
        self._new_identity(mariadb_identity(event), event)
        # MariaDB writes no BEGIN after its GTID event: a non-standalone GTID opens the transaction.
        if not event.standalone:
            self._begin()
        return iter(())

    def _new_identity(self, identity: Identity | None, event: ev.GtidEvent | ev.MariadbGtidEvent) -> None:
        if self._state is not TxState.IDLE:
            # A new GTID while a transaction is open: the previous one never committed (crash/truncation).
            self.stats.incomplete_transactions += 1
            self._end_transaction()
        self._identity = identity
        self._tx_first = self._position(event)

    def _fallback_identity(self) -> Identity:
        return fallback_identity(self._tx_first or self._last_position)

    # -- transactions --------------------------------------------------------------------------------------

    def _step(self, step: Step) -> None:
        self._state = NEXT[(self._state, step)]

    def _begin(self) -> None:
        self._step(Step.BEGIN)
        self._query_index = 0
        self._savepoints.clear()

    def _on_query(self, event: ev.QueryEvent) -> Iterator[pb.BinlogEvent]:
        position = self._position(event)
        return self._query_handlers[classify_query(event.query)](event, position)

    def _on_begin(self, event: ev.QueryEvent, position: EventPosition) -> Iterator[pb.BinlogEvent]:
        if self._tx_first is None:
            self._tx_first = position
        self._begin()
        return iter(())

    def _on_rollback(self, event: ev.QueryEvent, position: EventPosition) -> Iterator[pb.BinlogEvent]:
        self._close_statement()
        self.stats.rolled_back_transactions += 1
        self._end_transaction()
        return iter(())

    def _on_rollback_to(self, event: ev.QueryEvent, position: EventPosition) -> Iterator[pb.BinlogEvent]:
        self._close_statement()
        name = savepoint_name(event.query, after="TO")
        if name is not None and name in self._savepoints:
            # Drop the events after the savepoint and reuse their statement numbers.
            self._buffer.truncate(self._savepoints[name][0])
            self._query_index = self._savepoints[name][1]
        return iter(())

    def _on_savepoint(self, event: ev.QueryEvent, position: EventPosition) -> Iterator[pb.BinlogEvent]:
        self._close_statement()
        name = savepoint_name(event.query, after="SAVEPOINT")
        if name is not None:
            self._savepoints[name] = (len(self._buffer), self._query_index)
        return iter(())

    def _on_ddl(self, event: ev.QueryEvent, position: EventPosition) -> Iterator[pb.BinlogEvent]:
        if self.lane is not None:
            self.lane.schema_changed()
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
            changes = apply_query(self.history, event, position, gtid or None)
        changes = visible_changes(changes)  # no internal bookkeeping, no hidden columns
        if not changes:
            if self._state in IN_TRANSACTION:
                self.stats.statement_format_queries += 1
            return iter(())
        for change in changes:
            if isinstance(change, SkippedStatement) and change.table:
                self._tables.skipped_tables.add((change.db.lower(), change.table.lower()))
        self._tables.schema_changed()
        if self._tx_first is None:
            self._tx_first = position
        identity = self._identity or self._fallback_identity()
        common = {"source": self.options.source, "server_uuid": identity.server_uuid,
                  "transaction_id": identity.transaction_id, "query_index": self._query_index,
                  "gtid": identity.gtid, "server_id": event.header.server_id,
                  "gtid_domain_id": identity.domain_id}
        for out in schema_events(changes, common, text=text, charset=charset,
                                 statement_text=self.options.statement_text, position=position):
            if self._outside or (self._filter is not None and not (
                    self._filter(out.db, out.table) if out.table else self._filter.database(out.db))):
                continue        # tracked above all the same: only the output is filtered
            out.utc_timestamp.CopyFrom(Timestamp(seconds=event.header.timestamp))
            _set_position(out.position, event.header)
            self._buffer.append(out)
            self.stats.schema_events += 1
        if self._state in IN_TRANSACTION:
            self._query_index += 1
            return iter(())
        # DDL outside BEGIN is its own (implicitly committed) transaction.
        return self._commit()

    def pin_server_charset(self) -> None:
        """Keep the history's server charset (given by the caller) instead of adopting the binlog's."""
        self._charset_pinned = True

    def _adopt_server_charset(self, event: ev.QueryEvent) -> None:
        """Without a snapshot, the history's starting server charset is the first DDL's ``collation_server``
        (what the history reports; each statement still applies its own logged ``collation_server``, see
        ``schema_tracker.ddl.context.Ctx.server_defaults``)."""
        initial = self.history.initial
        if (self._charset_pinned or self.history.entries or initial.tables or initial.databases
                or event.collation_server is None):
            return
        charset = charset_for_collation_id(event.collation_server)
        if charset and charset != initial.server_charset:
            mariadb = "mariadb" in self.history.server_version.lower()
            self.history.initial = replace(initial, server_charset=charset, server_collation=collation_name(
                event.collation_server, mariadb=mariadb))

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

    def _on_xa_end(self, event: ev.QueryEvent, position: EventPosition) -> Iterator[pb.BinlogEvent]:
        commit, xid = parse_xa_end(event.query)
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

    def _on_commit(self, event: ev.XidEvent) -> Iterator[pb.BinlogEvent]:
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
        self._statement_filtered = False
        self._step(Step.END)
        self._statement = None
        self._identity = None
        self._tx_first = None
        self._query_index = 0
        self._savepoints.clear()

    # -- statements ----------------------------------------------------------------------------------------

    def _on_rows_query(self, event: ev.RowsQueryEvent | ev.AnnotateRowsEvent) -> Iterator[pb.BinlogEvent]:
        self._close_statement()
        self._statement = RowStatement(event.query, event.query_bytes)
        self._step(Step.STATEMENT)
        return iter(())

    def _close_statement(self) -> None:
        if self._state not in STATEMENT_OPEN:
            return
        had_rows = bool(self._pieces) or self._statement_filtered
        self._statement_filtered = False
        for piece in self._pieces.values():
            self._emit(piece, last=True)
        self._pieces.clear()
        self._step(Step.STATEMENT_END)
        self._statement = None
        if had_rows:
            self._query_index += 1
            self.stats.statements += 1

    def _on_rows(self, event: RowsEvent) -> Iterator[pb.BinlogEvent]:
        position = self._position(event)
        if self._tx_first is None:
            self._tx_first = position
        self._step(Step.STATEMENT)
        if self._filter is not None or self._outside:
            tm = event.table_map
            self._mapped.add((tm.schema, tm.table))
            if self._outside or (self._filter is not None and not self._filter(tm.schema, tm.table)):
                # Left out at its TABLE_MAP (or outside the range): no plan, no schema check, the row images
                # never decoded (both row builders start below). The statement still counts, so query_index
                # stays the same.
                self._statement_filtered = True
                self.stats.rows_events_filtered += 1
                if event.is_statement_end:
                    self._close_statement()
                return iter(())
        view = self._tables.builders(event.table_map, self.history.at(position), position)
        operation = _OPERATION[event.kind]
        plan = view.plan
        key = (plan.db, plan.table)
        piece = self._pieces.get(key)
        if piece is None:
            piece = _Piece(view, operation, event.header.timestamp, event.header.server_id,
                           event.header)
            self._pieces[key] = piece
        elif piece.operation != operation:
            # REPLACE / INSERT … ON DUPLICATE KEY UPDATE mix operations on one table: keep their log order
            # (row 8 must be inserted before it is updated), so a change of operation starts a new piece.
            self._emit(piece, last=False)
            piece.operation = operation
            piece.timestamp = event.header.timestamp
            piece.position = event.header
        frames = self._compiled_rows(view, event, piece, key)
        images: Sequence[Any] = ()
        if frames is not None:
            count = len(frames)
            if self.lane is not None:
                raw = self._raw
                self.lane.register(event.table_id, view.compiled, plan.db, plan.table, event.column_count,
                                   raw if raw is not None and key in raw.tables else None)
        else:
            if piece.raw and piece.frames:
                raise RawImagesRefused(f"rows the compiled builder refuses in a piece of raw rows at "
                                       f"{position}")
            piece.raw = False
            images = event.rows
            if event.kind == "partial_update":
                images = self._resolve_partial_json(event, plan, position)
            count = len(images)
            if piece.frames:
                merge_frames(piece.event, piece.frames)    # keep the rows in log order
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
                piece.position = event.header
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

    def _on_statement_run(self, run: StatementRun) -> Iterator[pb.BinlogEvent]:
        """Whole statements the lane read (``resolve.lane``): what ``_on_rows_query``, ``_on_rows`` and
        ``_close_statement`` leave of each, its BinlogEvent held in the transaction."""
        append = self._buffer.append
        if self._serialized:
            for out, size in zip(run.outputs, run.sizes, strict=True):
                append(out, size)
        else:
            for out, size in zip(run.outputs, run.sizes, strict=True):
                append(_parse_event(out), size)
        self._query_index += run.statements
        self.stats.statements += run.statements
        self.stats.row_changes += run.rows
        self._last_position = _new_position(_base_name(run.header.file), run.last_offset)
        return iter(())

    def _on_transaction_run(self, run: TransactionRun) -> Iterator[pb.BinlogEvent]:
        """Whole transactions the lane read: their BinlogEvents, committed."""
        stats = self.stats
        stats.transactions += run.transactions
        stats.statements += run.statements
        stats.row_changes += run.rows
        stats.binlog_events += len(run.outputs)
        self._last_position = _new_position(_base_name(run.header.file), run.last_offset)
        if self._serialized:
            return iter(run.outputs)   # type: ignore[arg-type]  # serialized: the events are bytes
        return map(_parse_event, run.outputs)

    def _lane_query_index(self) -> int:
        return self._query_index

    def _lane_head(self) -> tuple[bytes, bytes, bytes]:
        """The transaction's own fields of its BinlogEvents, serialized in the three places of field order
        the lane puts them: source, server_uuid and transaction_id; gtid; gtid_domain_id."""
        identity = self._identity or self._fallback_identity()
        if identity != self._lane_identity:
            self._lane_identity = identity
            self._lane_fields = (
                pb.BinlogEvent(source=self.options.source, server_uuid=identity.server_uuid,
                               transaction_id=identity.transaction_id).SerializeToString(),
                pb.BinlogEvent(gtid=identity.gtid).SerializeToString(),
                pb.BinlogEvent(gtid_domain_id=identity.domain_id).SerializeToString())
        return self._lane_fields

    def _compiled_rows(self, view: RowBuilders, event: RowsEvent, piece: _Piece,
                       key: tuple[str, str]) -> list[builtins.bytes] | None:
        """The compiled builder's rows of ``event`` (raw row images where asked for and possible), or None:
        the Python builder builds them. A piece holds rows of one kind: it decides with its first event."""
        compiled = view.compiled
        if compiled is None:
            return None
        raw = self._raw
        if raw is None or key not in raw.tables:
            return compiled.build(event, piece.next_row_index)
        empty = not piece.frames and not piece.event.rows
        if empty or piece.raw:
            frames = compiled.images(event, piece.next_row_index, raw)
            if frames is not None:
                piece.raw = True
                return frames
            if not empty:
                raise RawImagesRefused(f"a rows event the raw images refuse in a piece of them, "
                                       f"`{key[0]}`.`{key[1]}`")
            piece.raw = False
        return compiled.build(event, piece.next_row_index)

    @staticmethod
    def _resolve_partial_json(event: RowsEvent, plan: RowPlan,
                              position: EventPosition) -> list[tuple[Row, Row]]:
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
            merge_frames(piece.event, piece.frames)
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
        _set_position(out.position, piece.position)
        statement = b""
        if self._statement is not None:
            mode = self.options.statement_text
            with_text = mode == "all" or (mode == "first" and piece.event_index == 0)
            statement = self._statement.put(out, with_text, as_bytes)
        if as_bytes:
            self._buffer.append(with_rows(out.SerializeToString(), piece.frames, statement), piece.bytes)
            piece.frames = []
        else:
            self._buffer.append(out, piece.bytes)
        piece.event = pb.BinlogEvent()
        piece.bytes = 0
        piece.event_index += 1

    def _table_from_metadata(self) -> None:
        self.stats.tables_from_metadata += 1

    # -- helpers -------------------------------------------------------------------------------------------

    def _position(self, event: Event) -> EventPosition:
        h = event.header
        pos = _new_position(_base_name(h.file), h.offset)
        self._last_position = pos
        return pos


@functools.lru_cache(maxsize=1024)     # asked per event, of a handful of paths
def _base_name(path: str | None) -> str:
    """Positions name the binlog file as the server does (``mysql-bin.000042``), not the path it was read
    from, so output does not depend on where the files sit."""
    return os.path.basename(path) if path else ""


def _set_position(p: pb.BinlogPosition, h: EventHeader) -> None:
    """An output event's ``position`` (a field of a new message): where the event headed by ``h`` is."""
    p.file = _base_name(h.file)
    p.offset = h.offset
    p.next_offset = h.log_pos
    if h.inner_index is not None:
        p.inner_index = h.inner_index


def replay_ddl(events: Iterable[Event], history: SchemaHistory | None = None, *,
               pin_server_charset: bool = False, source: str = "") -> SchemaHistory:
    """Replay the DDL of a decoded event stream (binlog order) onto ``history`` (extended in place; a new
    empty one by default) and return it. Every entry carries its real position and GTID exactly as the
    assembler records it (MySQL's tagged GTIDs keep their tag). Without a snapshot (an empty history), the
    server charset is taken from the first DDL's ``collation_server``, as ``events`` does;
    ``pin_server_charset`` keeps the history's own (a ``--server-charset`` given by the user).

    ``source``: the assembler's source label (unused by the history). A transaction left open at the
    end is tolerated here: the real decode reports it. Raises the tracker's ``SchemaError`` subclasses
    (strict DDL)."""
    replay = StatementAssembler(history if history is not None else SchemaHistory(),
                                ResolveOptions(source=source, allow_incomplete_tail=True))
    if pin_server_charset:
        replay.pin_server_charset()
    for _ in replay.assemble(events):
        pass
    return replay.history
