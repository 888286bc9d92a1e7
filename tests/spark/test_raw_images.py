"""The resolve job's raw row images give exactly the typed tables of built rows (``compiled_rows.RawImages``).

A ``resolve`` task keeps each row of the tables the C code types as the bytes of the image its table reads,
and types the values straight from them (``_speedups.row_images``, ``typed_columns`` with contexts); the
reference is the same task with built ``Row`` messages (``write_slice(raw_images=False)``). Differential on
every golden fixture (MySQL 8, MariaDB 10.11 and 11) and every binlog of the shared corpus that resolves on
its own, cut into small slices: the same files' rows (in ``binlog_order``), the same summaries. Where the raw
images meet what only built rows handle, the task runs its slice again with built rows: checked by forcing
a refusal in the assembler and in the typing. The C entry points' contracts on hand-damaged frames (named as
such) close the file; ``benchmarks.fuzz.native raw`` fuzzes them differentially.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from binlog_model.compiled import speedups
from binlog_model.errors import BinlogError
from binlog_model.io.snapshots import load_snapshot
from tests._paths import CORPUS, REPO, binlogs_under

pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

import pyarrow as pa
import pyarrow.parquet as pq

from binlog_model.resolve import assembler as assembler_module
from binlog_model.resolve import compiled_rows
from binlog_model.resolve.compiled_rows import _varint
from binlog_model.spark import typed_arrow, typed_write
from binlog_model.spark.job import _reader_options
from binlog_model.spark.partitions import build_history, plan_slices, scan_files
from binlog_model.spark.reading import ReadOptions, pack_history
from binlog_model.spark.typed_write import SliceResult, SliceTask, write_slice

pytestmark = pytest.mark.skipif(getattr(speedups, "row_images", None) is None,
                                reason="the compiled core is not built")

GOLDEN = REPO / "fixtures" / "golden"
SCENARIOS = sorted(f"{kind.name}/{d.name}" for kind in GOLDEN.iterdir() if kind.is_dir()
                   for d in kind.iterdir() if (d / "binlogs").is_dir())
LENIENT = {"all_types"}
SLICE = 16 << 10        # small slices: pieces, transactions and statements cut at many places


def _tasks(files: list[Path], lenient: bool, staging: Path, snapshot: Path | None = None) -> list[SliceTask]:
    scans = scan_files([str(f) for f in files])
    first = load_snapshot(snapshot, lenient=lenient) if snapshot is not None else None
    history = build_history(scans, history=first)
    history.lenient = lenient
    options = ReadOptions.parse(_reader_options([str(f) for f in files], "test", lenient, [], SLICE))
    packed = pack_history(history.to_json())
    return [SliceTask(n, piece, packed, options, str(staging), "job")
            for n, piece in enumerate(plan_slices(scans, slice_bytes=SLICE))]


def _in_order(table: pa.Table) -> pa.Table:
    """The rows sorted by ``binlog_order`` and operation: a task's row groups follow its buffers, which
    differ in size between the two ways (the rows are the same)."""
    orders = table.column("binlog_order").to_pylist()
    operations = table.column("binlog_operation").to_pylist()
    keys = [(tuple(o.values()), op) for o, op in zip(orders, operations, strict=True)]
    return table.take(sorted(range(len(keys)), key=keys.__getitem__))


_Tables = dict[tuple[str, str], pa.Table]


def _outcome(task: SliceTask, staging: Path, raw: bool) -> tuple[SliceResult, _Tables]:
    result = write_slice(task, raw_images=raw)
    tables = {(db, table): _in_order(pq.read_table(staging / path)) for db, table, path, _ in result.files}
    return result, tables


def _assert_same(files: list[Path], lenient: bool, tmp: Path, snapshot: Path | None = None) -> int:
    """Every slice of ``files`` both ways: the same tables and summaries. Returns the rows compared."""
    rows = 0
    raw_tasks = _tasks(files, lenient, tmp / "raw", snapshot)
    built_tasks = _tasks(files, lenient, tmp / "built", snapshot)
    for raw_task, built_task in zip(raw_tasks, built_tasks, strict=True):
        raw, raw_tables = _outcome(raw_task, tmp / "raw", True)
        built, built_tables = _outcome(built_task, tmp / "built", False)
        assert (raw.logged, raw.typed, raw.untyped) == (built.logged, built.typed, built.untyped)
        assert raw_tables.keys() == built_tables.keys()
        for name, table in raw_tables.items():
            assert table.schema == built_tables[name].schema, name
            for column in table.column_names:
                got, want = table.column(column), built_tables[name].column(column)
                assert got.equals(want), (raw_task.piece, name, column, got.to_pylist()[:3],
                                          want.to_pylist()[:3])
            rows += table.num_rows
    return rows


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """[raw frames made, events the raw images refused]: so a test sees that the raw way really ran."""
    seen = [0, 0]
    real = compiled_rows.CompiledRows.images

    def images(self: Any, event: Any, first_row_index: int, raw: Any) -> Any:
        frames = real(self, event, first_row_index, raw)
        if frames is None:
            seen[1] += 1
        else:
            seen[0] += len(frames)
        return frames

    monkeypatch.setattr(compiled_rows.CompiledRows, "images", images)
    return seen


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_raw_images_type_the_built_rows_tables_on_golden_fixtures(scenario: str, tmp_path: Path,
                                                                   counted: list[int]) -> None:
    files = sorted((GOLDEN / scenario / "binlogs").iterdir())
    snapshot = GOLDEN / scenario / "snapshot.json"
    rows = _assert_same(files, scenario.split("/")[1] in LENIENT, tmp_path,
                        snapshot if snapshot.is_file() else None)
    assert rows > 0
    assert counted[0] > 0, "no row reached the typed tables as a raw image"


def test_raw_images_type_the_built_rows_tables_on_the_shared_corpus(tmp_path: Path,
                                                                    counted: list[int]) -> None:
    rows = 0
    for n, relative in enumerate(binlogs_under(CORPUS)):
        try:
            rows += _assert_same([CORPUS / relative], True, tmp_path / str(n))
        except BinlogError:
            continue        # a file that does not resolve on its own (see tests/golden/test_corpus_events.py)
    if not rows:
        pytest.skip(f"no shared corpus under {CORPUS}")
    assert counted[0] > 0, "no corpus row reached the typed tables as a raw image"


def _golden_task(tmp_path: Path, scenario: str = "mysql/multi_table") -> SliceTask:
    files = sorted((GOLDEN / scenario / "binlogs").iterdir())
    snapshot = GOLDEN / scenario / "snapshot.json"
    tasks = _tasks(files, False, tmp_path, snapshot if snapshot.is_file() else None)
    return max(tasks, key=lambda t: (t.piece.end or 1 << 40) - t.piece.start)


def test_a_refusal_in_the_assembler_runs_the_slice_again_with_built_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task = _golden_task(tmp_path, "mysql/large_statement")
    want, want_tables = _outcome(task, tmp_path, False)
    real = compiled_rows.CompiledRows.images
    refusals: list[str] = []
    real_write = typed_write._write

    def images(self: Any, event: Any, first_row_index: int, raw: Any) -> Any:
        # A statement's later rows events: what a PARTIAL_UPDATE or bytes C refuses do inside a piece of raw
        # rows.
        return None if first_row_index else real(self, event, first_row_index, raw)

    def spy(*args: Any) -> Any:
        try:
            return real_write(*args)
        except compiled_rows.RawImagesRefused as err:
            refusals.append(str(err))
            raise

    monkeypatch.setattr(compiled_rows.CompiledRows, "images", images)
    monkeypatch.setattr(typed_write, "_write", spy)
    got, got_tables = _outcome(task, tmp_path, True)
    assert refusals, "the forced refusal did not happen"
    assert (got.logged, got.typed) == (want.logged, want.typed)
    assert got_tables.keys() == want_tables.keys()
    assert all(got_tables[k].equals(want_tables[k]) for k in want_tables)


def test_a_piece_begun_with_built_rows_keeps_building_them(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A statement's first rows event of a table that the raw images refuse: its later rows events join the
    piece as built rows too (never a mix in one event), with no run again."""
    task = _golden_task(tmp_path, "mysql/large_statement")
    want, want_tables = _outcome(task, tmp_path, False)
    real = compiled_rows.CompiledRows.images
    asked: list[int] = []

    def images(self: Any, event: Any, first_row_index: int, raw: Any) -> Any:
        asked.append(first_row_index)
        return None if first_row_index == 0 else real(self, event, first_row_index, raw)

    runs: list[int] = []
    real_write = typed_write._write

    def counted_write(*args: Any) -> Any:
        runs.append(1)
        return real_write(*args)

    monkeypatch.setattr(compiled_rows.CompiledRows, "images", images)
    monkeypatch.setattr(typed_write, "_write", counted_write)
    got, got_tables = _outcome(task, tmp_path, True)
    assert 0 in asked
    assert len(runs) == 1, "the slice ran again: a piece mixed raw images and built rows"
    assert (got.logged, got.typed) == (want.logged, want.typed)
    assert all(got_tables[k].equals(want_tables[k]) for k in want_tables)


def test_a_refusal_in_the_typing_runs_the_slice_again_with_built_rows(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    task = _golden_task(tmp_path)
    want, want_tables = _outcome(task, tmp_path, False)
    real = typed_arrow._TYPED_COLUMNS
    refused = [0]

    def typed_columns(*args: Any) -> Any:
        if len(args) > 6 and args[6]:
            refused[0] += 1
            return None          # what C answers for bytes it refuses
        return real(*args)

    monkeypatch.setattr(typed_arrow, "_TYPED_COLUMNS", typed_columns)
    got, got_tables = _outcome(task, tmp_path, True)
    assert refused[0] > 0
    assert (got.logged, got.typed) == (want.logged, want.typed)
    assert all(got_tables[k].equals(want_tables[k]) for k in want_tables)


# -- the C entry points ------------------------------------------------------------------------------------

_Captured = tuple[Any, Any, str, int, list[bytes]]


def _captured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[_Captured]:
    """(plan, images, kind, first row_index, frames) of the rows events one golden task turned into raw
    frames."""
    seen: list[_Captured] = []
    real = compiled_rows.CompiledRows.images

    def images(self: Any, event: Any, first_row_index: int, raw: Any) -> Any:
        frames = real(self, event, first_row_index, raw)
        if frames is not None:
            seen.append((self._plan, event.images, event.kind, first_row_index, frames))
        return frames

    monkeypatch.setattr(compiled_rows.CompiledRows, "images", images)
    # every rows event through ``images`` (the statement lane would read most of them in C)
    monkeypatch.setattr(assembler_module, "LANE_AVAILABLE", False)
    write_slice(_golden_task(tmp_path, "mysql/pk_updates"), raw_images=True)
    assert {kind for _, _, kind, _, _ in seen} == {"insert", "update", "delete"}
    return seen


def test_row_images_frames_hold_each_rows_typed_image(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    for plan, images, kind, first, frames in _captured(tmp_path, monkeypatch):
        body = bytes(images.buf[images.pos:images.end])
        for k, frame in enumerate(frames):
            tag, at = _varint(frame, 0)
            size, at = _varint(frame, at)
            assert tag == (100 << 3 | 2) and size == len(frame) - at
            _context, at = _varint(frame, at)
            row_index, at = _varint(frame, at)
            assert row_index == first + k
            assert frame[at:] and frame[at:] in body     # the image's own bytes
        if kind != "update":        # one image per row: the frames' images are the event's, in order
            assert b"".join(f[_varint(f, _varint(f, _varint(f, _varint(f, 0)[1])[1])[1])[1]:]
                            for f in frames) == body
        operation = {"insert": 1, "update": 2, "delete": 3}[kind]
        cut = speedups.row_images(plan, images.buf, images.pos, images.end - 1, images.present,
                                  images.present_after, operation, 0, first)
        assert cut is None or cut[1] < images.end - 1       # a truncated image is refused, never read past
        assert speedups.row_images(plan, images.buf, images.pos, images.end, images.present[:0],
                                   images.present_after, operation, 0, first) is None


def test_typed_columns_refuses_damaged_raw_frames(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hand-damaged frames (edge cases, not real bytes): C answers None or raises TypeError, never columns."""
    inserts = [c for c in _captured(tmp_path, monkeypatch) if c[2] == "insert"]
    plan, images, _kind, _first, frames = inserts[0]
    contexts = [(plan, images.present)]
    targets = [(9, 0, 0)] * 64
    names: dict[bytes, int] = {}

    def typed(payload: bytes, contexts: Any = contexts) -> Any:
        return speedups.typed_columns([payload], 4, [0], targets,
                                      lambda v, n: names.setdefault(n, len(names)), 1, contexts)

    good = typed(frames[0])
    assert good is not None and good[0] == 1
    tag_and_size = frames[0][:3]
    unknown_context = frames[0].replace(frames[0][:4], frames[0][:3] + b"\x05", 1)
    assert typed(unknown_context) is None
    assert typed(frames[0][:-1]) is None                                 # the frame's length is wrong
    assert typed(tag_and_size + b"\x00\x00") is None                  # a frame shorter than it says
    assert typed(frames[0], []) is None                                  # no context registered
    with pytest.raises(TypeError):
        typed(frames[0], [(b"not a plan", images.present)])
    header = speedups.event_header(b"".join(frames[:3]))
    assert header is not None and header[3] == 3                         # raw frames count as rows
