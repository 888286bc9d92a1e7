"""The statement lane: runs of plain row statements read straight from the binlog's bytes, in C.

Strategy: on binlogs of small statements most of ``events``' time is Python calls per event (decoder,
boundary tracker, assembler: ~170 a statement). Inside an open transaction, once a table's TABLE_MAP has
been resolved by the Python path under the current schema, its next statements are all alike: an
ANNOTATE_ROWS / ROWS_QUERY, the same TABLE_MAP bytes, rows events. ``_speedups.statement_run``
(statements.c) reads a run of such statements from the decoder's buffer and returns each as the serialized
BinlogEvent the assembler would emit; the decoder hands the run on as one ``StatementRun`` event, which the
assembler appends to the transaction. Anything else ends a run before it, and the Python path reads it.

Who does what:
- the assembler owns the lane: it arms it while a transaction is open between statements, registers each
  table the Python path resolved with the compiled builder, clears the tables at any DDL or
  FORMAT_DESCRIPTION, and serializes the transaction's own fields once;
- the decoder (``BinlogDecoder.lane``) offers its buffer to ``run`` before decoding the next event, and
  keeps each TABLE_MAP's body bytes (``map_bodies``) for the registration.

Between two transactions, whole transactions (a GTID event, MySQL's BEGIN, such statements, the XID) are
read alike (``transaction_run``) where the runner lets it (``whole``): a run without a state, and a file run
with one that commits by bytes only (the end of a run of transactions is a boundary it may commit at, and
the run's GTIDs go to its recorder). A run that commits by time or count, or may stop at any transaction
(the tail, the live replica), needs every transaction's boundary, so it reads statements only.

It is on with the compiled core (``BINLOG_MODEL_PURE=1`` turns it off with the rest), for file reads
(``FileSource``) and live dumps (``ReplicationSource``), with table filters too (a table left out is never
registered, so its statements go the Python path), and with the typed job's raw row images (a table the
Python path read as raw images is registered with its context numbers: ``statement_run`` makes raw frames
for it, and a bitmap not numbered yet ends the run before its statement); with a range,
runs stay inside the positions it admits (``EventRange.admitted_until``). An assembler that yields messages
parses the lane's bytes (upb, in C). ``tests/unit/test_statement_lane.py`` compares its output with the
Python path's on every fixture, the corpus and damaged copies, byte for byte.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.compiled import speedups
from binlog_model.position import file_key, file_sequence, position_key
from binlog_model.resolve.compiled_rows import RawImages
from binlog_model.resolve.event_range import EventRange
from binlog_model.wire.header import EventHeader, FormatContext

__all__ = ["AVAILABLE", "MORE", "HistoryChanges", "StatementLane", "StatementRun", "TransactionRun"]

AVAILABLE = speedups is not None and hasattr(speedups, "statement_run")
MORE: Literal["more"] = "more"
# A statement (or transaction) the lane waits for: its rows up to max_bytes, and its text, TABLE_MAP and
# the like; a larger one goes the Python path (which reads the statements of a large transaction in runs).
_WAIT_SLACK = 1 << 20


@dataclass(frozen=True, slots=True)
class StatementRun:
    """Whole row statements read by the lane: ``outputs`` (serialized BinlogEvents, one a statement) and
    their ``sizes`` (the assembler's byte estimate of each). ``header`` spans the run (its offset is the
    first event's, its size all of them) with the last event's other fields; ``last_offset`` is where the
    last rows event starts."""

    header: EventHeader
    outputs: list[bytes]
    sizes: list[int]
    statements: int
    rows: int
    last_offset: int


@dataclass(frozen=True, slots=True)
class TransactionRun:
    """Whole transactions read by the lane (``transactions`` of them): ``outputs``, their BinlogEvents in
    order, each transaction's committed. ``header`` and ``last_offset`` (the last XID's) as
    ``StatementRun``'s. ``gtids``: their GTIDs as a run's GtidSet records them (``GtidSet.add_lane``)."""

    header: EventHeader
    outputs: list[bytes]
    transactions: int
    statements: int
    rows: int
    last_offset: int
    gtids: list[tuple[Any, ...]]


class HistoryChanges:
    """The positions where a history given beforehand changes (the Spark tasks' shipped history): a catalog
    holds for the events after its change up to the next one, and the change need not be an event the
    assembler reads as DDL (which clears the lane's tables itself). So a run never crosses the next change,
    and once the reading is past it the lane's tables, resolved under the catalog before it, are cleared."""

    __slots__ = ("_keys", "_next")

    def __init__(self, positions: list[tuple[int, str, int]]) -> None:
        self._keys = sorted(positions)
        self._next = 0      # the first change not passed yet

    def admits(self, file: str, offset: int, lane: StatementLane) -> bool:
        """Whether the lane may read at ``offset`` of ``file``: clears its tables when the reading has
        passed changes since (then the Python path resolves the next statements under the new catalog)."""
        keys, i = self._keys, self._next
        if i < len(keys):
            here = position_key(os.path.basename(file), offset)
            if here > keys[i]:
                while i < len(keys) and here > keys[i]:
                    i += 1
                self._next = i
                lane.tables.clear()
                return False
        return True

    def until(self, file: str) -> int:
        """The offset in ``file`` (a base name's file) of the next change, -1 when it is in a later file."""
        keys, i = self._keys, self._next
        if i < len(keys):
            seq, name, offset = keys[i]
            if (seq, name) == file_key(os.path.basename(file)):
                return offset
        return -1


class StatementLane:
    """The lane's state shared by one assembler and the decoders that read for it. ``armed``: the decoder
    offers its buffer (``run``); ``between``: the assembler is between transactions (whole ones are read),
    else inside one (its statements are); ``whole``: whole transactions may be read at all (the runner
    sets it: see the module docstring)."""

    __slots__ = ("_changes", "_files", "_head", "_options", "_post_headers", "_query_index", "_source",
                 "_window", "armed", "between", "map_bodies", "statements", "tables", "transactions", "whole",
                 "writes_text")

    def __init__(self, options: Any, query_index: Callable[[], int],
                 head: Callable[[], tuple[bytes, bytes, bytes]],
                 window: EventRange | None = None, changes: HistoryChanges | None = None) -> None:
        self.armed = False
        self.between = False
        self.writes_text = options.statement_text != "none"
        self.whole = False
        self.statements = 0     # statements read here (the rest went the Python path)
        self.transactions = 0   # whole transactions read here
        self.map_bodies: dict[int, bytes] = {}     # table id -> its last TABLE_MAP's body (the decoder's)
        # table id -> (TABLE_MAP body, compiled plan, image mode, serialized db and table fields, columns,
        # the raw row images' context numbers by bitmap or None)
        self.tables: dict[int, tuple[bytes, Any, int, bytes, int, dict[bytes, int] | None]] = {}
        self._options = options
        self._window = window
        self._changes = changes
        self._query_index = query_index
        self._head = head
        self._post_headers: tuple[FormatContext, bytes] | None = None
        self._files: dict[str, tuple[bytes, int]] = {}
        self._source = pb.BinlogEvent(source=options.source).SerializeToString()

    def register(self, table_id: int, compiled: Any, db: str, table: str, columns: int,
                 raw: RawImages | None = None) -> None:
        """The Python path resolved a rows event of ``table_id`` with ``compiled`` (a ``CompiledRows``);
        ``raw``: its rows are the typed job's raw row images (``compiled_rows.RawImages``)."""
        body = self.map_bodies.get(table_id)
        known = self.tables.get(table_id)
        if body is None or (known is not None and known[0] == body):
            return
        fields = pb.BinlogEvent(db=db, table=table).SerializeToString()
        numbers = raw.numbers(compiled._plan) if raw is not None and compiled.raw_capable else None
        self.tables[table_id] = (body, compiled._plan, compiled._mode, fields, columns, numbers)

    def schema_changed(self) -> None:
        """A DDL or a new FORMAT_DESCRIPTION: table ids may name other tables, plans other columns."""
        self.tables.clear()

    def run(self, buf: bytearray, pos: int, base: int, ctx: FormatContext, crc_len: int, verify: bool,
            max_event_size: int, file: str, make_header: Callable[..., EventHeader]
            ) -> tuple[StatementRun | TransactionRun, int] | Literal["more"] | None:
        """The statements (``between`` transactions: the whole transactions) at ``buf[pos:]`` (``base``: the
        file offset of ``buf[0]``); None: the decoder reads the next event itself; ``MORE``: the buffer
        ends inside one that is for the lane so far (and smaller than a BinlogEvent that would be split):
        read on if more bytes may come."""
        if self._changes is not None and not self._changes.admits(file, base + pos, self):
            return None
        tables = self.tables
        if not tables:
            return None
        end = len(buf)
        # A run never crosses the next change of a history given beforehand, nor --start/--stop-position.
        for until in (self._changes.until(file) if self._changes is not None else -1,
                      self._window.admitted_until(file, base + pos) if self._window is not None else -1):
            if until is None:
                return None
            if until >= 0:
                end = min(end, until - base)
                if end <= pos:
                    return None
        options = self._options
        file_field, file_seq = self._file(file)
        post_headers = self._post_header_table(ctx)
        with_text = self.writes_text
        got: Any
        if self.between:
            got = speedups.transaction_run(    # type: ignore[union-attr]  # AVAILABLE
                buf, pos, end, base, crc_len, verify, max_event_size, post_headers, tables, self._source,
                file_field, file_seq, with_text, options.max_rows, options.max_bytes)
        else:
            head = self._head()
            got = speedups.statement_run(    # type: ignore[union-attr]  # AVAILABLE
                buf, pos, end, base, crc_len, verify, max_event_size, post_headers, tables, head[0], head[1],
                head[2], file_field, self._query_index(), with_text, options.max_rows, options.max_bytes)
        if got is False:    # the buffer ends inside a statement or transaction that is for the lane so far
            wait = end == len(buf) and end - pos <= options.max_bytes + _WAIT_SLACK
            return MORE if wait else None
        if got is None:
            return None
        stop: int = got[0]
        first_offset, last_offset, ts, etype, server_id, flags, log_pos = got[5:12]
        header = make_header(ts, etype, server_id, base + stop - first_offset, log_pos, flags, first_offset)
        if self.between:
            _, outputs, transactions, statements, rows = got[:5]
            self.transactions += transactions
            self.statements += statements
            return TransactionRun(header, outputs, transactions, statements, rows, last_offset, got[12]), stop
        _, outputs, sizes, statements, rows = got[:5]
        self.statements += statements
        return StatementRun(header, outputs, sizes, statements, rows, last_offset), stop

    def _post_header_table(self, ctx: FormatContext) -> bytes:
        known = self._post_headers
        if known is None or known[0] is not ctx:
            known = self._post_headers = (ctx, bytes(min(ctx.post_header_len(t), 255) if t else 0
                                                     for t in range(256)))
        return known[1]

    def _file(self, file: str) -> tuple[bytes, int]:
        """The position's file field, and the file's sequence number (for ``fallback_identity``)."""
        known = self._files.get(file)
        if known is None:
            if len(self._files) > 64:
                self._files.clear()
            # positions name the file as the server does, not the path it was read from (_base_name)
            name = os.path.basename(file)
            known = self._files[file] = (pb.BinlogPosition(file=name).SerializeToString(),
                                         max(file_sequence(name), 0))
        return known
