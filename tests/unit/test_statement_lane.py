"""The statement lane (``resolve.lane``, ``_speedups/statements.c``) against the Python path it stands in
for: the same serialized BinlogEvents, byte for byte, or the same error, on every golden fixture (every
server family, every option that changes a statement's event) and every binlog of the shared corpus, read
in whole files and in small chunks (runs cut at every buffer end). Damaged copies of real binlogs (hand-made
corruption, named as such) give the same error both ways. Each comparison also asserts the lane read
statements, so a lane that never runs fails here."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.errors import BinlogError
from binlog_model.gtid import GtidSet
from binlog_model.io.file_source import FileSource
from binlog_model.io.snapshots import load_snapshot
from binlog_model.position import EventPosition
from binlog_model.resolve import assembler as assembler_module
from binlog_model.resolve.assembler import StatementAssembler
from binlog_model.resolve.compiled_rows import RawImages, RawImagesRefused
from binlog_model.resolve.event_range import EventRange
from binlog_model.resolve.lane import AVAILABLE
from binlog_model.resolve.options import ResolveOptions
from binlog_model.runs.runner import CommitPolicy, Runner
from binlog_model.runs.source import Resume
from binlog_model.spark.partitions import build_history, scan_files
from binlog_model.testing.golden import (
    SNAPSHOT_NAME,
    binlog_files,
    fixture_options,
    iter_fixture_dirs,
    read_meta,
)
from schema_tracker.history import SchemaHistory
from tests._paths import CORPUS, REPO

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="the compiled core is not built")

GOLDEN = REPO / "binlog_model" / "fixtures" / "golden"


def _decode(files: list[Path], options: ResolveOptions, snapshot: Path | None, *, lane: bool,
            chunk_size: int = 1 << 20, monkeypatch: pytest.MonkeyPatch,
            window: dict[str, int] | None = None, serialized: bool = True,
            raw: RawImages | None = None, history: SchemaHistory | None = None) -> tuple[list[Any], int]:
    """The serialized events (or the messages, not ``serialized``; or the error, as type and message),
    the counts, and the statements the lane read; ``window``: ``EventRange.parse``'s positions; ``raw``:
    the typed job's raw row images of its tables."""
    with monkeypatch.context() as m:
        m.setattr(assembler_module, "LANE_AVAILABLE", lane)
        if history is None:
            history = load_snapshot(snapshot) if snapshot is not None else None
        else:
            history = history.copy()
        ranged = EventRange.parse([str(f) for f in files], **window) if window else None
        asm = StatementAssembler(history, options, serialized=serialized, window=ranged, raw=raw)
        assert (asm.lane is not None) is lane
        source = FileSource(files, chunk_size=chunk_size, partial_tail=options.allow_incomplete_tail)
        out: list[Any]
        try:
            out = list(Runner(source, asm).events())
        except (BinlogError, RawImagesRefused) as err:
            out = [f"{type(err).__name__}: {err}"]
        out.append(asdict(asm.stats))      # the counts too (the partial tail's bytes among them)
        return out, asm.lane.statements if asm.lane is not None else 0


def _fixtures() -> Iterator[Path]:
    yield from iter_fixture_dirs(GOLDEN)


def _variants(recorded: Any) -> list[ResolveOptions]:
    base = {"source": recorded.source, "always_include": list(recorded.always_include),
            "max_rows": recorded.max_rows, "max_bytes": recorded.max_bytes}
    out = [ResolveOptions.parse(image=recorded.image, **base)]
    for image in ("full", "changed_with_old", "after"):
        out.append(ResolveOptions.parse(image=image, **base))
    out.append(ResolveOptions.parse(image=recorded.image, **{**base, "source": "s:1"}, statement_text="none"))
    out.append(ResolveOptions.parse(image=recorded.image, **{**base, "max_rows": 2}))
    out.append(ResolveOptions.parse(image=recorded.image, **{**base, "max_bytes": 300}))
    # table filters: tables left out go the Python path, the others the lane (transactions mixing both too)
    out.append(ResolveOptions.parse(image=recorded.image, **base, exclude_tables=["*.*a*"]))
    out.append(ResolveOptions.parse(image=recorded.image, **base, tables=["*.t*", "*.*o*"]))
    return out


@pytest.mark.parametrize("fixture", list(_fixtures()), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_lane_writes_what_the_python_path_writes_on_every_fixture(
        fixture: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    meta = read_meta(fixture)
    files = binlog_files(fixture, meta)
    snapshot = fixture / SNAPSHOT_NAME
    snap = snapshot if snapshot.is_file() else None
    for options in _variants(fixture_options(fixture, meta)):
        want, none = _decode(files, options, snap, lane=False, monkeypatch=monkeypatch)
        assert none == 0
        for chunk in (1 << 20, 700):
            got, _ = _decode(files, options, snap, lane=True, chunk_size=chunk, monkeypatch=monkeypatch)
            assert got == want, (fixture, options, chunk)
    # messages (the library's iter_binlog_events): the lane's bytes parsed, equal to the Python path's
    options = _variants(fixture_options(fixture, meta))[0]
    want, _ = _decode(files, options, snap, lane=False, monkeypatch=monkeypatch, serialized=False)
    got, _ = _decode(files, options, snap, lane=True, monkeypatch=monkeypatch, serialized=False)
    assert got == want
    assert [e.SerializeToString() for e in got[:-1]] == _decode(files, options, snap, lane=False,
                                                               monkeypatch=monkeypatch)[0][:-1]


def test_the_lane_makes_the_raw_row_images_the_python_path_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The typed job's raw row images (``compiled_rows.RawImages``, the "after" image of every table): the
    same bytes both ways (raw frames hold their context's number, so the contexts are numbered alike too),
    whole and in small chunks, and the lane reads statements of them."""
    read = 0
    for fixture in _fixtures():
        meta = read_meta(fixture)
        files = binlog_files(fixture, meta)
        snapshot = fixture / SNAPSHOT_NAME
        snap = snapshot if snapshot.is_file() else None
        recorded = fixture_options(fixture, meta)
        options = ResolveOptions.parse(image="after", source=recorded.source,
                                       always_include=list(recorded.always_include))
        built, _ = _decode(files, options, snap, lane=False, monkeypatch=monkeypatch)
        tables = frozenset((m.db, m.table) for m in (pb.BinlogEvent.FromString(b) for b in built[:-1]
                                                     if isinstance(b, bytes)) if m.table)
        without = RawImages(tables)
        want, none = _decode(files, options, snap, lane=False, monkeypatch=monkeypatch, raw=without)
        assert none == 0
        for chunk in (1 << 20, 700):
            with_lane = RawImages(tables)
            got, statements = _decode(files, options, snap, lane=True, chunk_size=chunk,
                                      monkeypatch=monkeypatch, raw=with_lane)
            assert got == want, (fixture, chunk)
            assert [present for _, present in with_lane.contexts] == [p for _, p in without.contexts]
            read += statements
    assert read > 100, read


def test_a_run_stops_at_a_change_of_a_history_given_beforehand(monkeypatch: pytest.MonkeyPatch) -> None:
    """A history given whole (the Spark tasks' shipped one) may change where the binlog holds no DDL: a run
    never crosses the change, and the tables it resolved before are resolved again after it. Here a column
    renamed at a position inside the DML (a history edited by hand, named as such), which the next TABLE_MAP
    contradicts: both ways stop there with the same error (a lane reading on would write the old name)."""
    fixture = GOLDEN / "mariadb" / "transactions"     # its TABLE_MAPs carry no column names to check
    files = binlog_files(fixture, read_meta(fixture))
    history = build_history(scan_files([str(f) for f in files]))
    at = 2400       # after three statements of `accounts` (the lane knows the table), before the next (2518)
    history.apply("ALTER TABLE accounts RENAME COLUMN owner TO holder", "txn",
                  EventPosition(files[0].name, at))
    options = ResolveOptions.parse(image="full")
    want, _ = _decode(files, options, None, lane=False, monkeypatch=monkeypatch, history=history)
    got, statements = _decode(files, options, None, lane=True, monkeypatch=monkeypatch, history=history)
    assert got == want
    assert statements > 0
    assert got[0].startswith("SchemaMismatchError: TABLE_MAP column names differ") and "holder" in got[0], got
    assert got[0].endswith("table txn.accounts; at mysql-bin.000001:2518"), got[0]


@pytest.mark.parametrize("fixture", [GOLDEN / family / "transactions" for family in ("mysql", "mariadb")],
                         ids=lambda p: p.parent.name)
def test_the_lane_keeps_to_start_and_stop_positions(fixture: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--start-position``/``--stop-position`` at event starts and inside events, all over the file."""
    meta = read_meta(fixture)
    files = binlog_files(fixture, meta)[:1]
    snapshot = fixture / SNAPSHOT_NAME
    snap = snapshot if snapshot.is_file() else None
    options = ResolveOptions.parse(image=fixture_options(fixture, meta).image)
    size = files[0].stat().st_size
    read = 0
    for at in range(200, size, max(1, size // 23)):
        for window in ({"start_position": at}, {"stop_position": at},
                       {"start_position": at // 2, "stop_position": at + 1}):
            want, _ = _decode(files, options, snap, lane=False, monkeypatch=monkeypatch, window=window)
            got, statements = _decode(files, options, snap, lane=True, monkeypatch=monkeypatch, window=window)
            assert got == want, window
            read += statements
    assert read > 0


def test_the_lane_reads_most_statements_of_the_fixtures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a speed test: the comparison above means something only if the lane takes part."""
    read = total = transactions = 0
    for fixture in _fixtures():
        meta = read_meta(fixture)
        snapshot = fixture / SNAPSHOT_NAME
        options = ResolveOptions.parse(image=fixture_options(fixture, meta).image)
        for serialized in (True, False):      # proto and JSON lines; the library's messages
            asm = StatementAssembler(load_snapshot(snapshot) if snapshot.is_file() else None, options,
                                     serialized=serialized)
            for _ in Runner(FileSource(binlog_files(fixture, meta)), asm).events():
                pass
            assert asm.lane is not None
            read += asm.lane.statements
            total += asm.stats.statements
            transactions += asm.lane.transactions
    assert total > 100
    assert read > total // 4, (read, total)
    assert transactions > 40, transactions     # whole transactions too (a run without a state)


def _stateful_run(files: list[Path], resume: Resume, history: SchemaHistory | None, policy: CommitPolicy
                  ) -> tuple[list[Any], list[tuple[Any, ...]], StatementAssembler]:
    """A run with commits: its events and, per commit, (position, GTIDs, events written, files, history)."""
    asm = StatementAssembler(history, ResolveOptions.parse(), serialized=True)
    events: list[Any] = []
    commits: list[tuple[Any, ...]] = []

    def commit(c: Any) -> None:
        commits.append((c.position, str(c.gtids), c.output_bytes, dict(c.files), c.history.to_json()))

    runner = Runner(FileSource(files), asm, resume, policy, lambda: len(events), commit)
    for event in runner.events():
        events.append(event)
    return events, commits, asm


@pytest.mark.parametrize("family", ["mysql", "mariadb"])
def test_a_file_run_with_a_state_reads_whole_transactions_and_commits_between_them(
        family: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file run that commits by bytes only (``events --state``, ``apply`` on files) takes whole transactions
    from the lane: its events, its stats and its last checkpoint (position and GTID set) are the Python
    path's, and with a commit after every run of transactions (``commit_bytes=1``) a resume from each commit
    writes the rest of the uninterrupted output, no more and no less."""
    fixture = GOLDEN / family / "transactions"
    files = binlog_files(fixture, read_meta(fixture))
    every = CommitPolicy(commit_bytes=1)
    outcome = []
    for lane in (True, False):
        with monkeypatch.context() as m:
            m.setattr(assembler_module, "LANE_AVAILABLE", lane)
            events, commits, asm = _stateful_run(files, Resume(), None, every)
            outcome.append((events, commits[-1][:3], asdict(asm.stats)))
            if lane:
                assert asm.lane is not None and asm.lane.transactions > 0
                lane_events, lane_commits = events, commits
    assert outcome[0] == outcome[1]
    assert outcome[0][1][1], "the fixture's transactions have GTIDs"
    inside = [c for c in lane_commits if c[2] < len(lane_events)]
    assert len(inside) >= 3, lane_commits
    for position, gtids, written, done, history in inside:
        rest, commits, _ = _stateful_run(files, Resume(position, GtidSet.parse(gtids), done),
                                         SchemaHistory.from_json(history), every)
        assert rest == lane_events[written:], f"resumed at {position}"
        assert commits[-1][1] == lane_commits[-1][1]


def test_a_run_that_may_stop_at_any_transaction_reads_statements_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A run with a stop request or a commit by time or count (the tail, the live replica) needs every
    transaction's boundary: the lane reads statements, not whole transactions."""
    fixture = GOLDEN / "mysql" / "transactions"
    files = binlog_files(fixture, read_meta(fixture))
    asm = StatementAssembler(None, ResolveOptions.parse(), serialized=True)
    runner = Runner(FileSource(files), asm, Resume(), CommitPolicy(commit_transactions=1000),
                    on_commit=lambda c: None)
    list(runner.events())
    assert asm.lane is not None and asm.lane.statements > 0 and asm.lane.transactions == 0


def _corpus() -> list[Path]:
    if not CORPUS.exists():
        return []
    return [p for p in sorted(CORPUS.rglob("*")) if p.is_file() and p.read_bytes()[:4] == b"\xfebin"]


@pytest.mark.parametrize("path", _corpus() or [None],
                         ids=lambda p: str(p.relative_to(CORPUS)) if p else "absent")
def test_the_lane_writes_what_the_python_path_writes_on_the_corpus(
        path: Path | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if path is None:
        pytest.skip(f"the shared corpus is absent ({CORPUS})")
    for options in (ResolveOptions.parse(allow_incomplete_tail=True),
                    ResolveOptions.parse(allow_incomplete_tail=True, exclude_tables=["*.*a*"])):
        want, _ = _decode([path], options, None, lane=False, monkeypatch=monkeypatch)
        for chunk in (1 << 20, 512):
            got, _ = _decode([path], options, None, lane=True, chunk_size=chunk, monkeypatch=monkeypatch)
            assert got == want


def _lane_heavy_fixture() -> Path:
    """The fixture whose statements the lane reads most of (a MariaDB one: ANNOTATE_ROWS everywhere)."""
    return GOLDEN / "mariadb" / "transactions"


@pytest.mark.parametrize("seed", range(6))
def test_damaged_binlogs_fail_alike_with_and_without_the_lane(seed: int, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Hand-made corruption of a real binlog: flipped bytes (CRC mismatches, or bytes that a disabled
    check lets through to the row images), and the file cut short."""
    fixture = _lane_heavy_fixture()
    meta = read_meta(fixture)
    (source,) = binlog_files(fixture, meta)[:1]
    data = bytearray(source.read_bytes())
    rnd = random.Random(seed)
    damaged = tmp_path / source.name
    outcomes = set()
    for trial in range(12):
        copy = bytearray(data)
        if trial % 3 == 2:
            copy = copy[:rnd.randrange(200, len(copy))]
        else:
            for _ in range(1 + trial % 3):
                at = rnd.randrange(200, len(copy))
                copy[at] ^= 1 << rnd.randrange(8)
        damaged.write_bytes(bytes(copy))
        for verify in (True, False):
            options = ResolveOptions.parse(allow_incomplete_tail=trial % 2 == 0)
            want = _decode_verify([damaged], options, verify, lane=False, monkeypatch=monkeypatch)
            got = _decode_verify([damaged], options, verify, lane=True, monkeypatch=monkeypatch)
            assert got == want, (seed, trial, verify)
            outcomes.add(isinstance(want[0], str))
    assert outcomes == {True, False} or seed % 2, outcomes     # errors and clean decodes both occur


def _decode_verify(files: list[Path], options: ResolveOptions, verify: bool, *, lane: bool,
                   monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    with monkeypatch.context() as m:
        m.setattr(assembler_module, "LANE_AVAILABLE", lane)
        asm = StatementAssembler(None, options, serialized=True)
        source = FileSource(files, verify_checksum=verify, partial_tail=options.allow_incomplete_tail,
                            chunk_size=4096)
        out: list[Any]
        try:
            out = list(Runner(source, asm).events())
        except (BinlogError, RawImagesRefused) as err:
            out = [f"{type(err).__name__}: {err}"]
        return [*out, asdict(asm.stats)]


def test_with_a_table_filter_the_lane_reads_the_tables_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparisons with filters above mean something only if both paths took part: statements of the
    tables kept read by the lane, rows events of the tables left out dropped by the Python path."""
    read = dropped = 0
    for fixture in _fixtures():
        meta = read_meta(fixture)
        snapshot = fixture / SNAPSHOT_NAME
        options = ResolveOptions.parse(image=fixture_options(fixture, meta).image, exclude_tables=["*.*a*"])
        asm = StatementAssembler(load_snapshot(snapshot) if snapshot.is_file() else None, options)
        for _ in Runner(FileSource(binlog_files(fixture, meta)), asm).events():
            pass
        assert asm.lane is not None
        read += asm.lane.statements
        dropped += asm.stats.rows_events_filtered
    assert read > 50 and dropped > 50, (read, dropped)
