"""The one runner: an ``EventSource`` through a ``StatementAssembler``, with the commit policy and the state.

Strategy: ``Runner.events()`` reads the source once (``source.read(resume)``), feeds every decoded event to
the assembler and yields the ``BinlogEvent`` s (or serialized bytes) it completes; the caller writes each to
its sink before asking for the next, so whenever the runner is between two events, everything it yielded
before is in the output. The source's boundary markers (``runs.source``) drive the rest:

- a *mark* is a place a run can stop at: a ``TransactionStart`` (past the file's FORMAT_DESCRIPTION) where
  the assembler is idle (nothing pending), the end of whole transactions the statement lane read (a file
  run that commits by bytes only lets it: ``resolve.lane``), or the ``FileEnd`` of a file it is idle at. A
  mark records the position (file, offset, the file's FORMAT_DESCRIPTION bytes, the ROTATE target at a
  file's end), the caller's output length (``output_size()``) and how many GTIDs were seen up to it;
- a *commit* (``on_commit(Checkpoint)``) makes a mark durable: at the end of every file the assembler is
  idle at, before a transaction starts once ``CommitPolicy.commit_bytes`` of input were read since the last
  commit, at a ``TransactionEnd`` once ``CommitPolicy.commit_seconds`` passed (live sources), and, with
  ``allow_incomplete_tail``, at the last mark when the input ends inside a transaction. A live source adds
  two: after ``CommitPolicy.commit_transactions`` transactions, and at a ``FlushPoint`` (the server has
  nothing more: the run commits right after the last event read, so the last transaction of a burst is
  durable at once, not at the next one). The GTIDs up to the mark go into the run's one ``GtidSet`` (the
  one GTID recorder: each transaction's GTID, and a file's PREVIOUS_GTIDS / GTID_LIST, the GTIDs before
  it, which a resume by GTID set needs) before ``on_commit`` sees it;
- a *stop request* (``stop(position)`` true: a signal, a target position) is honoured where the run is
  idle (the end of a transaction or of a file, a ``FlushPoint``): the run commits there and ends without
  reading on;
- at the end of the input the assembler is closed: an open transaction is an ``IncompleteTransactionError``
  unless ``allow_incomplete_tail``.

Without ``on_commit`` (``iter_binlog_events``) there are no marks and no commits: the same loop, minus the
bookkeeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from binlog_model.gtid import GtidSet
from binlog_model.io.files import base_name
from binlog_model.resolve.assembler import StatementAssembler
from binlog_model.resolve.lane import TransactionRun
from binlog_model.runs.source import (
    BOUNDARY_TYPES,
    Boundary,
    EventSource,
    FileBegin,
    FileEnd,
    FlushPoint,
    FormatDescription,
    Position,
    Resume,
    Rotate,
    TransactionEnd,
    TransactionStart,
)
from binlog_model.runs.transactions import GtidRecorder
from binlog_model.wire import events as ev
from binlog_model.wire.header import EventHeader
from schema_tracker.history import SchemaHistory

if TYPE_CHECKING:
    from binlog_model.io.state import RunState

__all__ = ["Checkpoint", "CommitPolicy", "Runner", "resume_of"]


def resume_of(state: RunState) -> Resume:
    """Where a run continues the saved ``state``: its position, its GtidSet (updated in place by the
    commits) and its finished files."""
    return Resume(Position.from_json(state.position), state.gtids, state.files)


@dataclass(frozen=True, slots=True)
class CommitPolicy:
    """When a stateful run commits besides the end of each file: before a transaction starts once
    ``commit_bytes`` of input were read since the last commit; at a transaction's end once
    ``commit_seconds`` passed or ``commit_transactions`` transactions ended since the last commit (None:
    never by time or count; a live source sets them). ``busy``: true while the last commit is still being
    made on another thread; a commit by time then waits for a later transaction end, so the decoding goes
    on and the next commit covers more (the byte rule still bounds what a commit holds)."""

    commit_bytes: int = 64 << 20
    commit_seconds: float | None = None
    commit_transactions: int | None = None
    busy: Callable[[], bool] | None = None


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A commit: the position the next run resumes at, every GTID done up to it, the output's length up to
    it, the files finished (base name -> end offset), and the schema history. ``gtids``, ``files`` and
    ``history`` are the run's own objects, which it goes on changing: save them during ``on_commit``.
    ``gtids_based``: a file's PREVIOUS_GTIDS / GTID_LIST went into ``gtids`` during this run (the set is
    complete at ``position``, not only the GTIDs this run read)."""

    position: Position
    gtids: GtidSet
    output_bytes: int
    files: dict[str, int]
    history: SchemaHistory
    gtids_based: bool = False


@dataclass(frozen=True, slots=True)
class _Mark:
    position: Position
    size: int
    gtids: int


@dataclass
class Runner:
    """One run of ``source`` through ``assembler`` (see the module docstring). ``resume``: where the source
    continues (its ``gtids`` is the run's GtidSet, updated at each commit); ``output_size``: the caller's
    output length so far; ``on_commit``: makes a checkpoint durable (None: a run without state); ``stop``:
    asked at each idle point with the position a stop there leaves (None before any), true ends the run
    there (after a commit); ``stopped`` says it did."""

    source: EventSource
    assembler: StatementAssembler
    resume: Resume | None = None
    policy: CommitPolicy = field(default_factory=CommitPolicy)
    output_size: Callable[[], int] = lambda: 0
    on_commit: Callable[[Checkpoint], None] | None = None
    files: dict[str, int] = field(default_factory=dict)     # base name -> end offset, of files finished
    stop: Callable[[Position | None], bool] | None = None
    commits: int = 0
    files_read: int = 0
    last_commit_at: Position | None = None     # where the last commit was made (None before the first)
    stopped: bool = False

    def events(self) -> Iterator[Any]:
        if self.assembler.lane is not None and hasattr(self.source, "lane"):
            self.source.lane = self.assembler.lane     # its decoders offer their bytes to the lane (C)
        if self.on_commit is None:
            return self._plain()
        return self._stateful()

    def _plain(self) -> Iterator[Any]:
        assembler = self.assembler
        if assembler.lane is not None:
            assembler.lane.whole = True     # no state to commit: whole transactions may be read at once
        feed = assembler.feed
        ranged = assembler.window is not None
        for item in self.source.read(self.resume):
            if type(item) in BOUNDARY_TYPES:     # only the end of a file counts here
                if isinstance(item, FileEnd):
                    self._file_end(item)
                continue
            yield from feed(item)  # type: ignore[arg-type]  # an event: the boundaries are skipped above
            if ranged and assembler.past_range:
                break                            # past --stop-position/--stop-datetime: read no further
        yield from assembler.close()

    @staticmethod
    def _flush_position(item: FlushPoint, last: EventHeader | None, fde: bytes | None, rotated_to: str | None,
                        current: str, said: tuple[str, int] | None, begun: tuple[str, int] | None = None,
                        ) -> tuple[Position | None, tuple[str, int] | None]:
        """Where a ``FlushPoint`` lets the run commit (None: nowhere), and the position it stated (the
        next call's ``said``). The end of the last event read, unless the server says it is further on:
        a GTID dump skips the transactions in the set without a word (a failover's replica has every one
        the state read, under its own file names and offsets), so the end of the last event sent may lie
        before transactions done (a commit there would have a resume by position read them again). The
        server's word is a place to stop only once it repeats it with nothing in between: it waits there,
        at its binlog's end, a transaction boundary (MySQL also sends a heartbeat while it skips, from
        wherever the skipping is, inside a transaction as likely as not). ``begun``: where reading began in
        the current file, while no event of it has been read: a position the run was given (the state's,
        the initial data's), so the run may commit there at once (a run that starts at the server's end
        and has nothing to read stops without waiting for two heartbeats)."""
        stated = (base_name(item.file), item.offset) if item.offset else None
        end = (base_name(last.file or ""), last.offset + last.event_size) if last is not None else None
        if stated is not None and (end is None or stated[0] != end[0] or stated[1] > end[1]):
            if stated in (said, begun) and stated[0] == current and fde is not None:
                return Position(stated[0], stated[1], fde, rotated_to), stated
            return None, stated
        remembered = said if stated is None else stated     # (a FlushPoint without a word keeps it)
        if end is None:
            return None, remembered
        return Position(end[0], end[1], fde, rotated_to), remembered

    def _file_end(self, item: FileEnd) -> None:
        self.assembler.stats.partial_tail_bytes += item.partial_bytes
        self.files[base_name(item.file)] = item.offset
        self.files_read += 1

    def _stateful(self) -> Iterator[Any]:
        policy = self.policy
        if self.assembler.lane is not None:
            # A file run that commits by bytes only may take whole transactions from the lane: the end of
            # a run of them is a transaction boundary to commit at, and the run carries their GTIDs. One that
            # commits by time or count, or may stop at any transaction end, needs each boundary.
            self.assembler.lane.whole = (self.stop is None and policy.commit_seconds is None
                                         and policy.commit_transactions is None)
        resume = self.resume if self.resume is not None else Resume()
        stream = self.source.read(resume)
        try:
            yield from self._stateful_loop(stream, resume)
        finally:
            close = getattr(stream, "close", None)     # a live source's connection ends with its stream
            if close is not None:
                close()

    def _stateful_loop(self, stream: Iterator[ev.Event | Boundary], resume: Resume) -> Iterator[Any]:
        assembler, policy = self.assembler, self.policy
        saved = resume.position
        recorder = GtidRecorder(resume.gtids)
        stop = self.stop
        since_commit = 0
        ended_since_commit = 0
        seconds, max_transactions, busy = policy.commit_seconds, policy.commit_transactions, policy.busy
        # a file run (no stop, no time or count policy) passes transaction ends by
        watch_ends = stop is not None or seconds is not None or max_transactions is not None
        last_commit = time.monotonic()
        fde: bytes | None = None
        rotated_to: str | None = None
        mark: _Mark | None = None      # the last point where a unit started with nothing pending
        last: EventHeader | None = None     # the last top-level event read: a FlushPoint's mark is its end
        current = ""                        # the file being read (its FileBegin)
        said: tuple[str, int] | None = None     # the last FlushPoint's position, if no event came since
        begun: tuple[str, int] | None = None    # where reading began in this file, until an event is read
        gtid_kinds, see_gtid = recorder._kinds, recorder._seen.append     # recorder.see, inlined

        def commit(at: _Mark) -> None:
            nonlocal since_commit, ended_since_commit, last_commit, mark
            assert self.on_commit is not None
            self.on_commit(Checkpoint(at.position, recorder.record(at.gtids), at.size, self.files,
                                      assembler.history, recorder.based))
            self.commits += 1
            self.last_commit_at = at.position
            since_commit = ended_since_commit = 0
            last_commit = time.monotonic()
            mark = None

        for item in stream:
            if type(item) not in BOUNDARY_TYPES:
                header = item.header      # type: ignore[union-attr]  # an event: every event has one
                if header.inner_index is None:
                    since_commit += header.event_size
                    last = header
                    said = begun = None
                    if isinstance(item, gtid_kinds):
                        see_gtid(item)
                    elif type(item) is TransactionRun:
                        recorder.see(item)      # its GTIDs, recorded at the next commit
                yield from assembler.feed(item)  # type: ignore[arg-type]  # an event, as above
                if type(item) is TransactionRun:
                    # whole transactions (the lane): where they end, the next unit starts with nothing
                    # pending, as at a TransactionStart
                    mark = _Mark(Position(base_name(header.file), header.offset + header.event_size, fde),
                                 self.output_size(), recorder.seen)
                    if since_commit >= policy.commit_bytes:
                        commit(mark)
            elif isinstance(item, TransactionStart):
                # The assembler has the last word: a start it has not finished the transaction before (an
                # incomplete one) is no place to stop.
                if assembler.idle and item.offset > 4:
                    mark = _Mark(Position(base_name(item.file), item.offset, fde), self.output_size(),
                                 recorder.seen)
                    if since_commit >= policy.commit_bytes:
                        commit(mark)
            elif isinstance(item, TransactionEnd):
                if not watch_ends or not assembler.idle:
                    continue
                ended_since_commit += 1
                here = Position(base_name(item.file), item.offset, fde)
                stopping = stop is not None and stop(here)
                if (stopping or (seconds is not None and time.monotonic() - last_commit >= seconds
                                 and (busy is None or not busy()))
                        or (max_transactions is not None and ended_since_commit >= max_transactions)):
                    commit(_Mark(here, self.output_size(), recorder.seen))
                if stopping:
                    self.stopped = True
                    return
            elif isinstance(item, FormatDescription):
                fde = item.raw
            elif isinstance(item, Rotate):
                rotated_to = item.next_file
            elif isinstance(item, FileBegin):
                fde, rotated_to, current = None, None, base_name(item.file)
                begun = (current, item.offset) if item.offset > 4 else None
            elif isinstance(item, FileEnd):
                base = base_name(item.file)
                self._file_end(item)
                if (rotated_to is None and saved is not None
                        and (saved.file, saved.offset) == (base, item.offset)):
                    rotated_to = saved.rotated_to     # resumed at the very end: its ROTATE lies before
                if assembler.idle:
                    commit(_Mark(Position(base, item.offset, fde, rotated_to), self.output_size(),
                                 recorder.seen))
                    if stop is not None and stop(self.last_commit_at):
                        self.stopped = True
                        return
            elif isinstance(item, FlushPoint):
                if not assembler.idle:
                    continue
                flushed, said = self._flush_position(item, last, fde, rotated_to, current, said, begun)
                done = self.last_commit_at
                if flushed is not None and (done is None
                                            or (done.file, done.offset) != (flushed.file, flushed.offset)):
                    commit(_Mark(flushed, self.output_size(), recorder.seen))
                if stop is not None and stop(self.last_commit_at):
                    self.stopped = True
                    return
        if not assembler.idle and assembler.options.allow_incomplete_tail and mark is not None:
            commit(mark)    # stop before the transaction still open at the end: the next run resumes there
        yield from assembler.close()     # an open transaction: IncompleteTransactionError, or counted
