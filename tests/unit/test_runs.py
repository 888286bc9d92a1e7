"""The runner and its file source on real binlogs: the boundary markers say what the file holds, a byte
range reads as the tail of the whole file, and a run resumed at any checkpoint writes exactly the rest of
the output a single run writes, with every GTID recorded once; a live source (no file end, heartbeats)
commits at a flush point and stops where asked.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from binlog_model.gtid import GtidSet
from binlog_model.io.file_source import FileSource
from binlog_model.io.snapshots import load_snapshot
from binlog_model.resolve.assembler import StatementAssembler
from binlog_model.resolve.options import ResolveOptions
from binlog_model.runs.runner import Checkpoint, CommitPolicy, Runner
from binlog_model.runs.source import (
    BOUNDARY_TYPES,
    FileBegin,
    FileEnd,
    FlushPoint,
    FormatDescription,
    Resume,
    TransactionEnd,
    TransactionStart,
)
from binlog_model.runs.transactions import GtidRecorder
from binlog_model.sinks import JsonlSink
from binlog_model.wire import events as ev
from schema_tracker.history import SchemaHistory
from tests._paths import CORPUS, REPO, require

FIXTURE = REPO / "fixtures" / "golden" / "mysql" / "transactions"
BINLOG = FIXTURE / "binlogs" / "binlog.000001"


def _markers(items: list[Any]) -> list[Any]:
    return [i for i in items if type(i) in BOUNDARY_TYPES]


def test_markers_say_what_the_file_holds() -> None:
    items = list(FileSource([BINLOG]).read())
    markers = _markers(items)
    data = BINLOG.read_bytes()
    assert markers[0] == FileBegin(str(BINLOG), 0)
    assert markers[-1] == FileEnd(str(BINLOG), len(data), 0)
    fde = next(m for m in markers if type(m) is FormatDescription)
    assert fde.raw is not None and data[4:4 + len(fde.raw)] == fde.raw
    events = [i for i in items if type(i) not in BOUNDARY_TYPES]
    gtids = [e.header.offset for e in events if isinstance(e, ev.GtidEvent)]
    starts = [m.offset for m in markers if type(m) is TransactionStart]
    ends = [m.offset for m in markers if type(m) is TransactionEnd]
    assert len(gtids) > 3 and starts == gtids          # every transaction of this file has a GTID
    # Each unit ends before the next starts, where the next top-level event begins (or the file ends).
    tops = [e.header.offset for e in events if e.header.inner_index is None] + [len(data)]
    assert len(ends) == len(starts)
    for start, end, nxt in zip(starts, ends, [*starts[1:], len(data) + 1], strict=True):
        assert start < end <= nxt and end in tops
    # A marker sits right before the event it names.
    for n, item in enumerate(items):
        if type(item) is TransactionStart:
            assert items[n + 1].header.offset == item.offset


def test_a_compressed_transaction_ends_where_its_payload_ends() -> None:
    path = require(CORPUS / "mysql-binlog-connector-java/src/test/resources/mysql-bin.compressed")
    items = list(FileSource([path]).read())
    payloads = [i for i in items if isinstance(i, ev.TransactionPayloadEvent)]
    ends = {m.offset for m in _markers(items) if type(m) is TransactionEnd}
    assert payloads
    for payload in payloads:
        assert payload.header.offset + payload.header.event_size in ends


def test_a_byte_range_reads_as_the_tail_of_the_whole_file() -> None:
    whole = list(FileSource([BINLOG]).read())
    fde = next(m.raw for m in whole if type(m) is FormatDescription)
    starts = [m.offset for m in whole if type(m) is TransactionStart]
    cut = starts[len(starts) // 2]
    tail = list(FileSource.byte_range(BINLOG, cut, None, fde).read())

    def key(items: list[Any]) -> list[tuple[str, int, int | None]]:
        return [(type(e).__name__, e.header.offset, e.header.inner_index) for e in items
                if type(e) not in BOUNDARY_TYPES and e.header.offset >= cut]

    assert key(tail) == key(whole) and len(key(tail)) > 3
    assert [type(m).__name__ for m in _markers(tail)][:2] == ["FileBegin", "FormatDescription"]
    assert _markers(tail)[-1] == FileEnd(str(BINLOG), BINLOG.stat().st_size, 0)


def _run(history: SchemaHistory, resume: Resume | None) -> tuple[bytes, list[tuple[Checkpoint, str, Any]]]:
    options = ResolveOptions.parse(source="fixture:transactions")
    out = io.BytesIO()
    sink = JsonlSink(out)
    seen: list[tuple[Checkpoint, str, Any]] = []   # a checkpoint's set and history change after the call
    runner = Runner(FileSource([BINLOG]), StatementAssembler(history, options),
                    resume if resume is not None else Resume(), CommitPolicy(commit_bytes=1),
                    lambda: sink.bytes_written,
                    lambda cp: seen.append((cp, str(cp.gtids), cp.history.to_json())))
    for event in runner.events():
        sink.write(event)
    return out.getvalue(), seen


@pytest.mark.parametrize("snapshot", [FIXTURE / "snapshot.json"])
def test_a_run_resumed_at_any_checkpoint_writes_the_rest(snapshot: Path) -> None:
    first = load_snapshot(snapshot)
    full, checkpoints = _run(first, None)
    assert len(checkpoints) > 3 and full
    everything = checkpoints[-1][1]
    assert everything and checkpoints[-1][0].position.offset == BINLOG.stat().st_size
    for cp, gtids, history in checkpoints[:-1]:
        resume = Resume(cp.position, GtidSet.parse(gtids), {})
        rest, later = _run(SchemaHistory.from_json(history), resume)
        assert full[:cp.output_bytes] + rest == full, f"resumed at {cp.position}"
        assert later[-1][1] == everything        # each GTID once, none lost


class _Live:
    """The file's stream as a live source gives it: no ``FileEnd`` (it waits for more), a ``FlushPoint``
    (a heartbeat) after the transaction ending at ``flush_after``; whether the runner closed it."""

    total_bytes = None
    bytes_read = 0

    def __init__(self, flush_after: int) -> None:
        self.flush_after = flush_after
        self.closed = False

    def read(self, resume: Resume | None = None) -> Any:
        try:
            for item in FileSource([BINLOG]).read(resume):
                if type(item) is FileEnd:
                    return
                yield item
                if type(item) is TransactionEnd and item.offset == self.flush_after:
                    yield FlushPoint(item.file, item.offset)
        finally:
            self.closed = True


def _live_run(source: _Live, policy: CommitPolicy,
              stop: Any = None) -> tuple[bytes, list[Checkpoint], Runner]:
    out = io.BytesIO()
    sink = JsonlSink(out)
    seen: list[Checkpoint] = []
    runner = Runner(source, StatementAssembler(load_snapshot(FIXTURE / "snapshot.json"),
                                               ResolveOptions.parse(source="fixture:transactions")),
                    Resume(), policy, lambda: sink.bytes_written, seen.append, stop=stop)
    for event in runner.events():
        sink.write(event)
    return out.getvalue(), seen, runner


def test_a_live_source_commits_at_a_flush_point_stops_on_request_and_counts_transactions() -> None:
    full, _ = _run(load_snapshot(FIXTURE / "snapshot.json"), None)
    ends = [m.offset for m in FileSource([BINLOG]).read() if type(m) is TransactionEnd]
    assert len(ends) > 4
    never = CommitPolicy(commit_bytes=1 << 40)
    # a heartbeat after the second transaction: committed there at once, and nowhere else (no file end)
    out, commits, _ = _live_run(_Live(ends[1]), never)
    assert [cp.position.offset for cp in commits] == [ends[1]]
    assert out == full and full[:commits[0].output_bytes] != full
    assert commits[0].gtids_based, "the file's PREVIOUS_GTIDS went into the set"
    # a stop asked for past the third transaction: committed there, nothing read on, the source closed
    source = _Live(0)
    out, commits, runner = _live_run(source, never, stop=lambda at: at is not None and at.offset >= ends[2])
    assert runner.stopped and source.closed
    assert [cp.position.offset for cp in commits] == [ends[2]]
    assert out == full[:commits[0].output_bytes] and len(out) < len(full)
    # every two transactions
    _, commits, _ = _live_run(_Live(0), CommitPolicy(commit_bytes=1 << 40, commit_transactions=2))
    assert [cp.position.offset for cp in commits] == ends[1::2]


def test_a_recorder_without_previous_gtids_records_the_transactions_read() -> None:
    """The full recorder (a run's state) adds a file's PREVIOUS_GTIDS; ``previous=False`` (a Spark stream's
    offsets: the GTIDs read since its origin) records exactly the transactions' own GTIDs."""
    path = require(CORPUS / "binlog-parser" / "data" / "gtid-fixtures" / "mysql-bin.01")
    events = [e for e in FileSource([path]).read() if isinstance(e, ev.GtidEvent | ev.PreviousGtidsEvent)]
    own = GtidSet()
    for e in events:
        if isinstance(e, ev.GtidEvent):
            own.add_event(e)
    recorders = {previous: GtidRecorder(GtidSet(), previous=previous) for previous in (True, False)}
    for recorder in recorders.values():
        recorder.see_all(events)
        recorder.record()
    assert str(recorders[False].gtids) == str(own) and not recorders[False].based
    assert recorders[True].based and str(recorders[True].gtids) != str(own)    # the file's history counts
    assert str(own).count(":") == 1, "the transactions of one server"


class _Skipping:
    """A GTID dump on a server that has every transaction of the file already (a failover's replica, or
    the way back): the file's head (FORMAT_DESCRIPTION, PREVIOUS_GTIDS), then, the transactions skipped
    without a word, only heartbeats naming ``said`` in turn."""

    total_bytes = None
    bytes_read = 0

    def __init__(self, said: list[int]) -> None:
        self.said = said

    def read(self, resume: Resume | None = None) -> Any:
        for item in FileSource([BINLOG]).read(resume):
            if type(item) in (TransactionStart, FileEnd):
                break
            yield item
        for offset in self.said:
            yield FlushPoint(str(BINLOG), offset)


def test_a_gtid_dump_that_skipped_commits_where_the_server_waits_not_at_the_last_event_sent() -> None:
    """The end of the last event sent lies before the transactions skipped: a commit there would have a
    later resume by position read them again (and ``--stop-at-end`` would never reach the end). The
    server's word is taken once it repeats it (it waits there, at its binlog's end); one heartbeat alone
    may come from inside a skipped transaction."""
    size = BINLOG.stat().st_size
    ends = [m.offset for m in FileSource([BINLOG]).read() if type(m) is TransactionEnd]
    never = CommitPolicy(commit_bytes=1 << 40)
    for said in ([size], [ends[0], size], [size, ends[1], size]):
        out, commits, _ = _live_run(_Skipping(said), never)      # type: ignore[arg-type]
        assert commits == [] and out == b"", said
    for said, at in (([size, size], size), ([ends[0], ends[2], ends[2], size], ends[2])):
        out, commits, _ = _live_run(_Skipping(said), never)      # type: ignore[arg-type]
        assert [cp.position.offset for cp in commits] == [at] and out == b"", said
        assert commits[0].position.format_description is not None
    _, commits, runner = _live_run(_Skipping([size, size, size]), never,          # type: ignore[arg-type]
                                   stop=lambda at: at is not None and at.offset >= size)
    assert runner.stopped and [cp.position.offset for cp in commits] == [size]


class _StartedAtTheEnd:
    """A live source started at a transaction boundary the run was given (the initial data's position)
    with nothing after it: the server's framing (the file begins there, its FORMAT_DESCRIPTION), then
    flush points naming ``said`` (that offset unless given), ``flushes`` of them."""

    total_bytes = None
    bytes_read = 0

    def __init__(self, offset: int, flushes: int, said: int | None = None) -> None:
        self.offset, self.flushes = offset, flushes
        self.said = offset if said is None else said

    def read(self, resume: Resume | None = None) -> Any:
        for item in FileSource([BINLOG]).read(resume):
            if type(item) is FileBegin:
                yield FileBegin(item.file, self.offset)
            elif type(item) is FormatDescription:
                yield item
                break
        for _ in range(self.flushes):
            yield FlushPoint(str(BINLOG), self.said)


def test_a_run_started_where_the_server_ends_commits_at_its_start_without_a_second_heartbeat() -> None:
    """Where reading began (a position the run was given) is a place to commit as soon as the server says
    it has nothing more: ``apply --initial live --stop-at-end`` on a quiet server stops at once, rather
    than at the second heartbeat. A flush point elsewhere in the file is still not taken on one word."""
    ends = [m.offset for m in FileSource([BINLOG]).read() if type(m) is TransactionEnd]
    never = CommitPolicy(commit_bytes=1 << 40)
    out, commits, runner = _live_run(_StartedAtTheEnd(ends[2], 1), never,     # type: ignore[arg-type]
                                     stop=lambda at: at is not None and at.offset >= ends[2])
    assert runner.stopped and out == b""
    assert [cp.position.offset for cp in commits] == [ends[2]]
    assert commits[0].position.format_description is not None
    out, commits, _ = _live_run(_StartedAtTheEnd(ends[2], 1, said=ends[3]), never)     # type: ignore[arg-type]
    assert commits == [] and out == b""


def test_a_commit_by_time_waits_while_the_last_one_is_being_made() -> None:
    ends = [m.offset for m in FileSource([BINLOG]).read() if type(m) is TransactionEnd]
    assert len(ends) > 4
    # every transaction end is due (0 s); the last commit is still being made at the 2nd and 3rd ends
    answers = iter([False, True, True])
    policy = CommitPolicy(commit_bytes=1 << 40, commit_seconds=0, busy=lambda: next(answers, False))
    _, commits, _ = _live_run(_Live(0), policy)
    assert [cp.position.offset for cp in commits] == [ends[0], *ends[3:]]
    # a stop is no commit by time: it is made while busy
    _, commits, runner = _live_run(_Live(0), CommitPolicy(commit_bytes=1 << 40, commit_seconds=0,
                                                          busy=lambda: True),
                                   stop=lambda at: at is not None and at.offset >= ends[2])
    assert runner.stopped and [cp.position.offset for cp in commits] == [ends[2]]
