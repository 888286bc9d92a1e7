"""Units of work in a binlog stream: the one transaction-boundary detector, the one boundary tracker and the
one GTID recorder, which every reader of binlog events uses.

Strategy: a source (``io.file_source.FileSource``, ``io.replication``) wraps each file's decoded events in a
``BoundaryTracker``, which asks ``TransactionStarts`` where units of work start and end and yields the
``runs.source`` markers in place: ``TransactionStart`` / ``TransactionEnd``, ``Rotate`` and
``FormatDescription`` (the raw bytes a resume inside the file needs, from the decoder that read them).
Consumers read the markers, never the decoder: the runner (``runs.runner``) commits at them, the Spark
pre-pass (``spark.partitions``) cuts slices at them and leaves out the units that hold rows only, and the
stream driver (``spark.streaming``) admits whole units into a batch. ``GtidRecorder`` adds the GTIDs of
what a consumer has committed to one ``GtidSet``, never those of a unit it has not.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from binlog_model.gtid import GtidSet
from binlog_model.resolve.lane import TransactionRun
from binlog_model.resolve.transactions import QueryKind, classify_query
from binlog_model.runs.source import (
    Boundary,
    FormatDescription,
    Rotate,
    TransactionEnd,
    TransactionStart,
)
from binlog_model.wire import events as ev
from binlog_model.wire.decoder import BinlogDecoder

__all__ = ["BoundaryTracker", "GtidRecorder", "TransactionStarts"]

_TRANSACTION_GTIDS = (ev.GtidEvent, ev.MariadbGtidEvent)
_GTIDS = (*_TRANSACTION_GTIDS, ev.PreviousGtidsEvent, ev.GtidListEvent)


class TransactionStarts:
    """Where units of work start in one file's top-level events, told one event at a time (``starts_at``):
    at every GTID event (MySQL, ANONYMOUS_GTID, MariaDB), else at a QUERY outside a transaction that no GTID
    started (BEGIN or XA START without GTIDs, or a DDL statement as its own unit). Keywords route as the
    assembler routes them (``classify_query``). Only GTID, QUERY, XID and XA_PREPARE events count: rows and
    table maps, which a DDL scan skips unparsed, change nothing; a ``SkippedTransaction`` (a whole one the
    decoder passed over) starts and ends a unit, as its GTID and its commit would. A transaction never
    spans files: use a new detector per file. After each event, ``ended`` says whether that event ended a
    unit (a commit, rollback, XA PREPARE, or a statement that is its own unit)."""

    def __init__(self) -> None:
        self._open = False          # inside a transaction (its GTID or BEGIN seen, its end not yet)
        self._after_gtid = False    # the last counted event was a GTID: its QUERY does not start another
        self.ended = False          # the last event told ended a unit (its commit, rollback or DDL)

    @property
    def in_transaction(self) -> bool:
        """A transaction started and has not ended yet (the stream source cuts batches only outside one)."""
        return self._open

    def starts_at(self, event: object) -> bool:
        self.ended = False
        if isinstance(event, ev.GtidEvent | ev.MariadbGtidEvent):
            self._open = self._after_gtid = True
            return True
        if isinstance(event, ev.XidEvent | ev.XaPrepareEvent):
            self.ended = self._open
            self._open = self._after_gtid = False
            return False
        if type(event) is ev.SkippedTransaction:
            self._open = self._after_gtid = False
            self.ended = True
            return True
        if not isinstance(event, ev.QueryEvent):
            return False
        after_gtid, self._after_gtid = self._after_gtid, False
        kind = classify_query(event.query)
        if kind in (QueryKind.COMMIT, QueryKind.ROLLBACK):
            self.ended = self._open
            self._open = False
            return False
        if not self._open and not after_gtid:
            self._open = kind is QueryKind.BEGIN
            self.ended = not self._open      # a statement as its own unit ends with itself
            return True
        if after_gtid and kind is not QueryKind.BEGIN:
            self._open = False      # GTID + DDL: the DDL commits implicitly
            self.ended = True
        return False


# The event types the transaction detector looks at.
_COUNTED: frozenset[type] = frozenset({ev.GtidEvent, ev.MariadbGtidEvent, ev.XidEvent, ev.XaPrepareEvent,
                                       ev.QueryEvent, ev.SkippedTransaction})


class BoundaryTracker:
    """Boundary markers around one file's (or byte range's, or replication file's) decoded events:
    ``wrap(events, decoder)`` yields the events with ``FormatDescription``, ``TransactionStart``,
    ``TransactionEnd`` and ``Rotate`` markers in place (``FileBegin`` / ``FileEnd`` are the source's). It
    tracks transactions with ``TransactionStarts`` (a transaction never spans files: one tracker per file).
    Events of other types pass through with one type test: the hot path of every source."""

    __slots__ = ("_payload_end", "_starts", "file", "rotated_to")

    # Every type the tracker acts on; anything else passes straight through.
    INTERESTING: frozenset[type] = _COUNTED | {ev.RotateEvent, ev.FormatDescriptionEvent,
                                               ev.TransactionPayloadEvent}

    def __init__(self, file: str) -> None:
        self.file = file
        self._starts = TransactionStarts()
        self._payload_end = 0           # end of the last TRANSACTION_PAYLOAD (its inner events' unit end)
        self.rotated_to: str | None = None

    def wrap(self, events: Iterable[ev.Event], decoder: BinlogDecoder) -> Iterator[ev.Event | Boundary]:
        """``events`` (decoded by ``decoder``, whose ``format_description_bytes`` gives the raw FDE) with
        the markers in place."""
        interesting = self.INTERESTING
        for event in events:
            if type(event) not in interesting:
                yield event
                continue
            header = event.header
            kind = type(event)
            if kind in _COUNTED:
                starts = self._starts
                if starts.starts_at(event) and header.inner_index is None:
                    yield TransactionStart(self.file, header.offset)
                yield event
                if starts.ended:
                    # A compressed transaction ends inside its payload (its XID is the payload's last
                    # event): the unit ends where the payload ends. A skipped one ends after its length.
                    if header.inner_index is not None:
                        end = self._payload_end
                    elif isinstance(event, ev.SkippedTransaction):
                        end = header.offset + event.length
                    else:
                        end = header.offset + header.event_size
                    yield TransactionEnd(self.file, end)
                continue
            yield event
            if header.inner_index is not None:
                continue
            if kind is ev.TransactionPayloadEvent:
                self._payload_end = header.offset + header.event_size
            elif isinstance(event, ev.RotateEvent):
                self.rotated_to = event.next_file
                yield Rotate(self.file, header.offset + header.event_size, event.next_file, event.position)
            else:       # FORMAT_DESCRIPTION: its raw bytes, as the decoder keeps them for a resume
                yield FormatDescription(self.file, header.offset, decoder.format_description_bytes)


class GtidRecorder:
    """The one GTID recorder: GTID events are seen as the run reads them and go into the run's ``GtidSet``
    only up to a commit point (``record(upto)``), so the set never names a transaction a crash would make
    the next run read again. A file's PREVIOUS_GTIDS (MySQL) / GTID_LIST (MariaDB) adds the GTIDs before
    the file: from there on the set is complete (``based``), which a resume by GTID set needs.
    ``previous=False``: only the transactions' own GTIDs, what a Spark stream's offsets name (the GTIDs read
    since the stream's origin)."""

    __slots__ = ("_kinds", "_seen", "based", "gtids")

    def __init__(self, gtids: GtidSet, *, previous: bool = True) -> None:
        self.gtids = gtids
        self._kinds = _GTIDS if previous else _TRANSACTION_GTIDS
        self._seen: list[Any] = []
        self.based = False

    def see(self, event: Any) -> None:
        """Note ``event`` if it names GTIDs (a ``TransactionRun`` the lane read counts as one: its list of
        GTIDs is kept, not its events)."""
        if isinstance(event, self._kinds):
            self._seen.append(event)
        elif type(event) is TransactionRun:
            self._seen.append(event.gtids)

    def see_all(self, events: Iterable[Any]) -> None:
        for event in events:
            self.see(event)

    @property
    def seen(self) -> int:
        """How many GTID events were seen and not recorded yet (a commit point's count)."""
        return len(self._seen)

    def record(self, upto: int | None = None) -> GtidSet:
        """Add the first ``upto`` GTIDs seen (all by default) to the set, and forget them."""
        upto = len(self._seen) if upto is None else upto
        gtids = self.gtids
        for event in self._seen[:upto]:
            if isinstance(event, ev.PreviousGtidsEvent):
                gtids.add_previous_gtids(event)
                self.based = True
            elif isinstance(event, ev.GtidListEvent):
                gtids.add_gtid_list(event)
                self.based = True
            elif type(event) is list:       # a TransactionRun's GTIDs (``see``)
                gtids.add_lane(event)
            else:
                gtids.add_event(event)
        del self._seen[:upto]
        return self.gtids
