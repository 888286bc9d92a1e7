"""Fuzz the compiled core's entry points (``binlog_model._speedups``), meant to run under ASan + UBSan.

    python -m benchmarks.fuzz.sanitized build                              # once: the sanitized module
    python -m benchmarks.fuzz.sanitized run -- python -m benchmarks.fuzz.native all --inputs 1000000
    python -m benchmarks.fuzz.sanitized run -- python -m benchmarks.fuzz.native rows --engine atheris \\
        -- -runs=1000000 -max_len=8192 -rss_limit_mb=4096       # coverage-guided (clang build + atheris)
    python -m benchmarks.fuzz.native json --replay 123 --seed 16  # input 123 again (the loop engine)

Targets:
- ``rows``: ``build_rows`` over the row images of real rows events, with the plans the assembler compiled
  for them (captured by running the pipeline over the seed binlogs with the compiled core on). An input is
  ``[seed u16][mode u8][n u8][n x (column u8, meta u16)][images]``: which captured event, the image mode,
  TABLE_MAP metadata overrides (untrusted bytes too, so ``compile_plan`` is fuzzed with them) and the image
  bytes, mutated. The answer must be None or rows that each parse as a ``Row``, ending inside the input.
- ``raw``: ``row_images`` and ``typed_columns`` over the resolve job's raw row images, on the ``rows``
  inputs, differential against ``build_rows`` and ``typed_columns`` over the built rows: the same columns
  where both answer, and never columns where the built path refuses.
- ``columns``: ``arrow_columns`` (the Spark source's columns) on serialized events of the seed binlogs,
  mutated; differential against ``value_json.event_rows`` on every input C builds: the same map keys and
  texts and the same values in every column, valid UTF-8 and offsets, and never a batch from an event
  protobuf refuses.
- ``typed``: ``typed_columns`` (the typed ``resolve`` job's per-table columns) on serialized events of the
  seed binlogs that carry rows, mutated, with every target kind (integers, floats, DECIMAL(10,2), dates,
  timestamps, text, bytes, the Python-typed rest) and column names spread over them: the answer must be
  None or buffers whose lengths agree with the row count it reports (the values against the reference
  are ``tests/spark/test_typed_columns.py``'s job), with a row-count hint right or wrong; and
  ``event_header`` on the same bytes, differential against protobuf's parser (a header only for bytes it
  reads, with the fields it reads).
- ``frames``: ``dump_events`` (a live tail's packet framing) on the seed binlogs' events framed as a
  replication dump sends them, mutated; differential against ``io.replication.take_events`` at two places
  of each input; and ``crc32`` against ``zlib.crc32`` on the same bytes.
- ``textrows``: ``text_rows`` (``apply --initial live``'s result-set reader) on hand-built result sets,
  mutated; differential against ``io.result_set.text_rows``: the same columns, or the same error's text.
- ``splice``: ``splice_rows`` (the assembler's join of a statement's serialized head, its rows and its text)
  on generated heads, mutated; differential against ``compiled_rows._with_rows``: the same bytes, or None
  where a field of the head cannot be read.
- ``statements``: ``statement_run`` and ``transaction_run`` (the statement lane: row statements and whole
  transactions from a binlog's bytes to serialized BinlogEvents) on the buffers and contexts the lane met
  running over the seed binlogs (as ``events`` reads them, and as a resolve task does: raw row images of
  every table, the statement-text events skipped), mutated, with the
  split limits and the statement text switched by the input's second byte: the answer must be None or
  whole statements inside the buffer, each a BinlogEvent protobuf parses; and every 64th input, a seed
  binlog mutated the same way, decoded with the lane and without (either way of reading): the same events
  or the same error.
- ``jsonl``: ``jsonl_event`` (the JSON lines sink's encoder) on the seed binlogs' serialized events,
  mutated; differential against ``json_format``: every line C writes is the reference line of protobuf's
  parse of the same bytes, and C never writes one for bytes protobuf refuses.
- ``replica``: ``replica_images`` (``apply``'s row images) on serialized events for three tables (every
  kind of value, in range or not, names in another case or no column's) and the seed binlogs' events,
  mutated; differential against ``TableBatch._image``: the same values and invalid names wherever C
  answers, and no answer where the reference finds a JSON diff or raises.
- ``json``: ``json_text`` on binary JSON documents (every JSON value of the seed binlogs, generated
  documents, damaged ones); differential against the Python reference on every input: C may hand a
  document back (None) but never renders one the reference refuses, and never renders it differently.

Engines: ``loop`` (default; no coverage, so it works with the gcc build): input ``i`` is a pure function of
``(seed, i)``, a mutant of a seed input (byte edits, splices, edge values, truncation); ``atheris``:
libFuzzer over the same input format, coverage-guided when the module was built with clang
(``sanitized build`` picks clang when it can). Checks in both: a sanitizer report ends the process (exit
status != 0, the report on stderr); every ``--mem-every``-th input's C call runs again under tracemalloc:
its peak must stay under ``64 x input + 1 MiB``, and once its result is dropped nothing it allocated may
remain (the leak check: the C code allocates only through the Python allocators, which tracemalloc sees).
LeakSanitizer (``--lsan``, every ``--leak-every`` inputs) is opt-in: on CPython 3.11 it reports objects
that only frames reference, because frames live in mmap'd chunks it does not scan. The summary (last stdout
line, ``OUT/summary.json``) has inputs, inputs/s, peak RSS and the traced peaks by input size. Exit status
1 on any finding.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import itertools
import json
import os
import random
import resource
import struct
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from benchmarks.fuzz import mutate

MEM_FACTOR = 64
MEM_CONSTANT = 1 << 20
# Bytes a call may leave traced after its result is dropped (the harness's own bookkeeping objects).
LEAK_SLACK = 512
_HEAD = struct.Struct("<HBB")
_OVERRIDE = struct.Struct("<BH")


class Finding(AssertionError):
    """The compiled core broke its contract on this input (not a sanitizer report: those abort)."""


def load_speedups() -> ModuleType:
    """The compiled module: the sanitized build named by ``BINLOG_MODEL_FUZZ_SPEEDUPS`` when set (and then
    only that one), else whatever the loader picks; exits when the core is off."""
    where = os.environ.get("BINLOG_MODEL_FUZZ_SPEEDUPS")
    import binlog_model

    if where:
        binlog_model.__path__.insert(0, where)  # the sanitized module shadows an in-place build
    from binlog_model.compiled import compiled_core, speedups

    if speedups is None:
        raise SystemExit(f"compiled core: {compiled_core()}; nothing to fuzz")
    if where and Path(str(speedups.__file__)).resolve().parent != Path(where).resolve():
        raise SystemExit(f"loaded {speedups.__file__}, not the sanitized build in {where}")
    return speedups


def _lsan() -> Callable[[], int] | None:
    """LeakSanitizer's mid-run check, when the process has an ASan runtime."""
    try:
        check = ctypes.CDLL(None).__lsan_do_recoverable_leak_check
    except AttributeError:
        return None
    check.restype = ctypes.c_int
    return check  # type: ignore[no-any-return]


def rss_mb() -> float:
    """The process's resident set now (peak RSS alone cannot show growth during the run)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0
    return round(pages * os.sysconf("SC_PAGE_SIZE") / (1 << 20), 1)


def sanitizer_loaded() -> bool:
    try:
        ctypes.CDLL(None).__asan_init  # noqa: B018 - the symbol's presence is the answer
    except AttributeError:
        return False
    return True


# --- seeds -----------------------------------------------------------------------------------------


def seed_binlogs() -> list[Path]:
    from benchmarks.fuzz.seeds import _binlog_files, binlog_roots

    return [p for root in binlog_roots() if root.is_dir() for p in _binlog_files(root)]


def json_documents(paths: list[Path]) -> list[bytes]:
    """Every binary JSON document the real decoder meets in ``paths`` (collected as it parses them)."""
    import binlog_model.wire.codecs.json as json_codec
    from binlog_model.errors import BinlogError
    from binlog_model.io.files import iter_events

    docs: list[bytes] = []
    real = json_codec.parse_json_binary

    def collect(data: Any) -> Any:
        docs.append(bytes(data))
        return real(data)

    json_codec.parse_json_binary = collect
    try:
        for path in paths:
            try:
                for event in iter_events(path, verify_checksum=False):
                    rows = getattr(event, "rows", None)
                    if rows is not None:
                        list(rows)
            except BinlogError:
                pass  # a test-suite file that is corrupt on purpose: what came before still counts
    finally:
        json_codec.parse_json_binary = real
    return docs


@dataclass
class Capture:
    """One rows event the assembler gave the compiled builder: its plan's columns and the images."""

    columns: tuple[Any, ...]
    primary_key: tuple[int, ...]
    always: tuple[int, ...]
    images: bytes
    present: bytes
    present_after: bytes | None
    operation: int


def capture_rows(paths: list[Path], per_file: int = 100) -> list[Capture]:
    """Run the pipeline over ``paths`` with the compiled core on and keep what ``CompiledRows.build`` is
    given (plan columns through ``compile_plan``, images as bytes): the distinct events, at most
    ``per_file`` of each file so every file's tables and types are represented."""
    from binlog_model.errors import BinlogError
    from binlog_model.resolve import compiled_rows
    from binlog_model.runs.pipeline import iter_binlog_events

    captured: list[Capture] = []
    seen: set[bytes] = set()
    plans: dict[int, tuple[Any, Any, Any]] = {}
    taken = [0]
    real_compile = compiled_rows.speedups.compile_plan
    real_build = compiled_rows.CompiledRows.build

    def compile_plan(columns: Any, primary_key: Any, always: Any) -> Any:
        plan = real_compile(columns, primary_key, always)
        plans[id(plan)] = (columns, primary_key, always)
        return plan

    def build(self: Any, event: Any, first_row_index: int) -> Any:
        operation = compiled_rows._OPERATION.get(event.kind)
        spec = plans.get(id(self._plan))
        if operation is not None and spec is not None and taken[0] < per_file:
            images = event.images
            body = bytes(images.buf[images.pos:images.end])
            key = body + images.present + (images.present_after or b"")
            if key not in seen:
                seen.add(key)
                taken[0] += 1
                captured.append(Capture(*spec, body, images.present, images.present_after, operation))
        return real_build(self, event, first_row_index)

    compiled_rows.speedups.compile_plan = compile_plan
    compiled_rows.CompiledRows.build = build  # type: ignore[method-assign]
    try:
        for path in paths:
            taken[0] = 0
            try:
                for _ in iter_binlog_events(path, verify_checksum=False, lenient_ddl=True,
                                            allow_incomplete_tail=True, image="full"):
                    pass
            except BinlogError:
                pass
    finally:
        compiled_rows.speedups.compile_plan = real_compile
        compiled_rows.CompiledRows.build = real_build  # type: ignore[method-assign]
    return captured


# --- targets ---------------------------------------------------------------------------------------


@dataclass
class Target:
    name: str
    seeds: list[bytes]
    run: Callable[[bytes], Any]
    c_call: Callable[[bytes], Any]          # the C part alone (what the memory bound is held against)
    generate: Callable[[random.Random], bytes] | None = None
    stats: dict[str, int] = field(default_factory=dict)
    mem_factor: int = MEM_FACTOR            # the traced peak's bound per input byte


def json_target(speedups: ModuleType, paths: list[Path]) -> Target:
    from binlog_model.errors import BinlogError
    from binlog_model.wire.json_binary import parse_json_binary
    from binlog_model.wire.values import JsonDocument

    seeds = sorted(set(json_documents(paths)))
    rng = random.Random(14)
    for _ in range(300):
        t, body = mutate.json_encode(mutate._json_random(rng), large=rng.random() < 0.3)
        seeds.append(bytes([t]) + body)
    stats = {"rendered": 0, "handed_back": 0}

    def run(data: bytes) -> None:
        got = speedups.json_text(data)
        try:
            want: str | None = JsonDocument(parse_json_binary(data)).to_json()
        except BinlogError:
            want = None
        if got is None:
            stats["handed_back"] += 1
            return
        stats["rendered"] += 1
        if want is None:
            raise Finding(f"C renders a document the reference refuses: {got[:200]!r}")
        if got != want:
            raise Finding(f"C {got[:200]!r} != reference {want[:200]!r}")

    return Target("json", seeds, run, speedups.json_text, mutate.json_document, stats)


def encode_rows_input(seed: int, mode: int, overrides: list[tuple[int, int]], images: bytes) -> bytes:
    return (_HEAD.pack(seed, mode, len(overrides)) + b"".join(_OVERRIDE.pack(c, m) for c, m in overrides)
            + images)


class _RowsInputs:
    """The ``rows`` input format over captured rows events: which capture, the mode byte, the TABLE_MAP
    metadata overrides (compiled into a plan, cached) and the image bytes."""

    def __init__(self, speedups: ModuleType, paths: list[Path], name: str) -> None:
        self.speedups = speedups
        self.captures = capture_rows(paths)
        if not self.captures:
            raise SystemExit(f"{name}: no rows event reached the compiled builder (is it wired into the "
                             "assembler?)")
        self.seeds = [encode_rows_input(i, i % 3, [], c.images) for i, c in enumerate(self.captures)]
        self._compiled: dict[tuple[int, bytes], Any] = {}

    def parse(self, data: bytes, stats: dict[str, int]) -> tuple[int, int, Capture, Any, bytes] | None:
        """(index, mode, capture, plan, images), or None for a header that does not parse or a plan
        ``compile_plan`` refuses (counted in ``stats["plan_refused"]``)."""
        if len(data) < _HEAD.size:
            return None
        index, mode, n = _HEAD.unpack_from(data)
        capture = self.captures[index % len(self.captures)]
        at = _HEAD.size + n * _OVERRIDE.size
        if len(data) < at:
            return None
        overrides = data[_HEAD.size:at]
        key = (index % len(self.captures), overrides)
        plan = self._compiled.get(key)
        if plan is None:
            columns = [list(c) for c in capture.columns]
            for k in range(n):
                col, meta = _OVERRIDE.unpack_from(overrides, k * _OVERRIDE.size)
                if columns:
                    columns[col % len(columns)][2] = meta  # the TABLE_MAP metadata of that column
            try:
                plan = self.speedups.compile_plan(tuple(map(tuple, columns)), capture.primary_key,
                                                  capture.always)
            except (NotImplementedError, ValueError, OverflowError, TypeError, UnicodeError):
                plan = False
            if len(self._compiled) > 4096:
                self._compiled.clear()
            self._compiled[key] = plan
        if plan is False:
            stats["plan_refused"] = stats.get("plan_refused", 0) + 1
            return None
        return index, mode, capture, plan, data[at:]

    def generate(self, rng: random.Random) -> bytes:
        # A seed with its metadata overridden: edge values, or a neighbour of the real one.
        index = rng.randrange(len(self.captures))
        capture = self.captures[index]
        overrides = []
        for _ in range(rng.randint(1, 3)):
            col = rng.randrange(max(1, len(capture.columns)))
            real = capture.columns[col][2] if capture.columns else 0
            overrides.append((col, rng.choice((0, 1, 0xFF, 0x100, 0xFFFF, 0x3F3F, 0x4141, 0x0A0A,
                                               max(0, real + rng.randint(-3, 3)) & 0xFFFF))))
        return encode_rows_input(index, rng.randrange(3), overrides, capture.images)


def rows_target(speedups: ModuleType, paths: list[Path]) -> Target:
    from binlog_model._pb import binlog_event_pb2 as pb

    inputs = _RowsInputs(speedups, paths, "rows")
    stats = {"rows_built": 0, "handed_back": 0, "plan_refused": 0, "parsed": 0}

    def call(data: bytes) -> Any:
        parsed = inputs.parse(data, stats)
        if parsed is None:
            return None
        index, mode, capture, plan, images = parsed
        return speedups.build_rows(plan, images, 0, len(images), capture.present, capture.present_after,
                                   capture.operation, mode % 3, index)

    def run(data: bytes) -> None:
        out = call(data)
        if out is None:
            stats["handed_back"] += 1
            return
        rows, end = out
        if not isinstance(rows, list) or not 0 <= end <= len(data):
            raise Finding(f"build_rows answered {type(rows).__name__}, end {end} for {len(data)} bytes")
        stats["rows_built"] += len(rows)
        if stats["rows_built"] % 7 == 0:  # a sample of the rows must be valid Row messages
            for raw in rows:
                pb.Row.FromString(raw)
                stats["parsed"] += 1

    return Target("rows", inputs.seeds, run, call, inputs.generate, stats)


def raw_target(speedups: ModuleType, paths: list[Path]) -> Target:
    """``row_images`` and ``typed_columns`` over raw row images, differential against ``build_rows`` (the
    "after" image mode, the resolve job's) and ``typed_columns`` over the rows it builds, on the ``rows``
    inputs: where both give columns they are the same bytes (values, nulls, labels, handed-back values);
    raw images may be refused where built rows are not (the job then runs the slice with built rows), never
    the other way round (that would type a value the reference path refuses)."""
    inputs = _RowsInputs(speedups, paths, "raw")
    stats = {"same": 0, "both_refused": 0, "raw_refused": 0, "plan_refused": 0}
    after_mode = 3

    def resolve(version: int, name: bytes) -> int:
        return sum(name) % (len(_TYPED_TARGETS) + 1) - 1          # -1: a name no output column takes

    def typed(payload: bytes, image: int, rows: int, contexts: list[Any]) -> Any:
        return speedups.typed_columns([payload], image, [0], _TYPED_TARGETS, resolve, rows, contexts)

    def call(data: bytes) -> Any:
        parsed = inputs.parse(data, stats)
        if parsed is None:
            return None
        index, _mode, capture, plan, images = parsed
        update = capture.operation == 2
        present = capture.present_after if update else capture.present
        if present is None:
            return None
        out = speedups.row_images(plan, images, 0, len(images), capture.present, capture.present_after,
                                  capture.operation, 0, index)
        if out is None or out[1] != len(images):
            return None
        return typed(b"".join(out[0]), 3 if capture.operation == 3 else 4, len(out[0]), [(plan, present)])

    def built(data: bytes) -> Any:
        parsed = inputs.parse(data, {})
        if parsed is None:
            return None
        index, _mode, capture, plan, images = parsed
        out = speedups.build_rows(plan, images, 0, len(images), capture.present, capture.present_after,
                                  capture.operation, after_mode, index)
        if out is None or out[1] != len(images):
            return None
        return typed(b"".join(out[0]), 3 if capture.operation == 3 else 4, len(out[0]), [])

    def flat(out: Any) -> Any:
        rows, row_event, row_index, columns, labels = out
        return (rows, bytes(row_event), bytes(row_index),
                [(*(None if b is None else bytes(b) for b in c[:3]), c[3]) for c in columns], labels)

    def run(data: bytes) -> None:
        got, want = call(data), built(data)
        if got is None:
            stats["both_refused" if want is None else "raw_refused"] += 1
            return
        if want is None:
            raise Finding("raw images typed where build_rows and typed_columns refuse the event")
        if flat(got) != flat(want):
            raise Finding(f"raw images typed differently: {flat(got)[3][:3]} != {flat(want)[3][:3]}")
        stats["same"] += 1

    return Target("raw", inputs.seeds, run, call, inputs.generate, stats)


def _top_fields(data: bytes) -> list[tuple[int, bytes]] | None:
    """The top-level (field number, whole field bytes) of a protobuf message; None when it does not walk."""
    out, at = [], 0

    def varint() -> int | None:
        nonlocal at
        value = shift = 0
        while at < len(data) and shift < 70:
            b = data[at]
            at += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
        return None

    while at < len(data):
        start = at
        tag = varint()
        if tag is None or tag >> 3 == 0:
            return None
        wire = tag & 7
        if wire == 0:
            if varint() is None:
                return None
        elif wire in (1, 5):
            at += 8 if wire == 1 else 4
        elif wire == 2:
            n = varint()
            if n is None:
                return None
            at += n
        else:
            return None
        if at > len(data):
            return None
        out.append((tag >> 3, data[start:at]))
    return out


# The BinlogEvent fields arrow_columns does not read (schema_changes, statement_raw) are dropped from the
# fuzzed events: the data source parses every field (as EventView) before the C code sees an event, so C
# need not check what it skips; for the rest, C must never build a batch from an event protobuf refuses.
_SKIPPED_FIELDS = {12, 20}
_INT32_COLUMNS = {"queryIndex", "eventIndex", "innerIndex", "gtidDomainId", "orderInner"}


def _column_values(spec: tuple[Any, ...], name: str, rows: int) -> list[Any]:
    """The values of one of arrow_columns' plain columns, decoded from its buffers (no pyarrow here)."""
    valid = spec[0]
    present = [valid is None or bool(valid[i // 8] >> (i % 8) & 1) for i in range(rows)]
    if len(spec) == 3:
        ends = struct.unpack(f"<{rows + 1}i", spec[1])
        if ends[0] != 0 or ends[-1] != len(spec[2]) or any(a > b for a, b in itertools.pairwise(ends)):
            raise Finding(f"{name}: bad offsets {ends[:8]}")
        raw = [spec[2][a:b] for a, b in itertools.pairwise(ends)]
        values: list[Any] = raw if name == "event" else [r.decode("utf-8") for r in raw]
    elif name == "lastInStatement":
        values = [bool(spec[1][i // 8] >> (i % 8) & 1) for i in range(rows)]
    else:
        values = list(struct.unpack(f"<{rows}{'i' if name in _INT32_COLUMNS else 'q'}", spec[1]))
    return [v if ok else None for v, ok in zip(values, present, strict=True)]


def columns_target(speedups: ModuleType, paths: list[Path]) -> Target:
    from binlog_model._pb import binlog_event_pb2 as pb
    from binlog_model.errors import BinlogError
    from binlog_model.position import file_sequence
    from binlog_model.runs.pipeline import iter_serialized_events
    from binlog_model.spark.value_json import event_rows, value_json

    seeds: set[bytes] = set()
    for path in paths:
        try:
            for payload in iter_serialized_events([path], lenient_ddl=True, verify_checksum=False):
                fields = _top_fields(payload) or []
                seeds.add(b"".join(raw for number, raw in fields if number not in _SKIPPED_FIELDS))
                if len(seeds) > 3000:
                    break
        except BinlogError:
            pass
    stats = {"built": 0, "handed_back": 0, "python_raised": 0, "compared": 0}

    def fallback(value: bytes) -> str:
        return value_json(pb.Value.FromString(value))

    def call(data: bytes) -> Any:
        return speedups.arrow_columns([data], False, fallback, file_sequence)

    def texts(count: int, offsets: bytes, blob: bytes) -> list[str]:
        ends = struct.unpack(f"<{count + 1}i", offsets)
        if ends[0] != 0 or ends[-1] != len(blob) or any(a > b for a, b in itertools.pairwise(ends)):
            raise Finding(f"bad string offsets {ends[:8]}... for {len(blob)} bytes")
        return [blob[a:b].decode("utf-8") for a, b in itertools.pairwise(ends)]

    def run(data: bytes) -> None:
        fields = _top_fields(data)
        if fields is None or any(n in _SKIPPED_FIELDS for n, _ in fields):
            data = b"".join(raw for n, raw in fields or [] if n not in _SKIPPED_FIELDS)
        try:
            out = call(data)
        except Exception as err:
            stats["python_raised"] += 1     # the fallback's parse refused a rare kind's bytes
            try:
                pb.BinlogEvent.FromString(data)
            except Exception:
                return
            raise Finding(f"arrow_columns raised {err!r} on an event protobuf accepts") from err
        if out is None:
            stats["handed_back"] += 1
            return
        stats["built"] += 1
        rows, blobs = out
        # The buffers are Blobs (buffer protocol): bytes copies to slice and compare.
        specs = {name: tuple(b if b is None or isinstance(b, int) else bytes(memoryview(b)) for b in spec)
                 for name, spec in blobs.items()}
        try:
            event = pb.BinlogEvent.FromString(data)
        except Exception as err:
            raise Finding(f"arrow_columns built {rows} rows from an event protobuf refuses: {err}") from err
        want = list(event_rows(event))
        if rows != len(want):
            raise Finding(f"arrow_columns: {rows} rows, the reference {len(want)}")
        for name in ("primaryKey", "before", "after"):
            valid, offsets, entries, key_offsets, keys, value_offsets, values = specs[name]
            pairs = list(zip(texts(entries, key_offsets, keys), texts(entries, value_offsets, values),
                             strict=True))
            ends = struct.unpack(f"<{rows + 1}i", offsets)
            if ends[0] != 0 or ends[-1] != entries or any(a > b for a, b in itertools.pairwise(ends)):
                raise Finding(f"arrow_columns {name}: bad row offsets {ends[:8]}")
            # A null map's entries are hidden by its validity bit (a null before of an INSERT).
            got = [pairs[ends[i]:ends[i + 1]] if valid is None or valid[i // 8] >> (i % 8) & 1 else None
                   for i in range(rows)]
            ref = [row[name] for row in want]
            if got != ref:
                raise Finding(f"arrow_columns {name}: {got[:2]} != {ref[:2]}")
        for name, spec in specs.items():
            if name in ("primaryKey", "before", "after", "fileSeq", "orderInner"):
                continue
            got = _column_values(spec, name, rows)
            ref = [row[name] for row in want]
            if name == "event":      # C keeps the bytes it was given; the reference re-serializes
                ref = [data if r is not None else None for r in ref]
            if got != ref:
                raise Finding(f"arrow_columns {name}: {got[:3]} != {ref[:3]}")
        keys = [row["orderKey"] for row in want]
        if (_column_values(specs["fileSeq"], "fileSeq", rows) != [k["fileSeq"] for k in keys] or
                _column_values(specs["orderInner"], "orderInner", rows) != [k["innerIndex"] for k in keys]):
            raise Finding("arrow_columns: orderKey differs")
        stats["compared"] += 1

    return Target("columns", sorted(seeds)[:3000], run, call, None, stats)


def jsonl_target(speedups: ModuleType, paths: list[Path]) -> Target:
    """``jsonl_event`` (the JSON lines sink's encoder) on the seed binlogs' serialized events, every field
    kept (C hands schema changes and ``statement_raw`` back itself), mutated: on every input C writes a
    line for, protobuf must parse the bytes and ``json_format``'s line of the parse must be the same bytes."""
    from google.protobuf.message import DecodeError

    from binlog_model._pb import binlog_event_pb2 as pb
    from binlog_model.errors import BinlogError
    from binlog_model.json_encoder import value_text
    from binlog_model.runs.pipeline import iter_serialized_events
    from binlog_model.sinks.jsonl import encode_jsonl

    seeds: set[bytes] = set()
    for path in paths:
        try:
            for payload in iter_serialized_events([path], lenient_ddl=True, verify_checksum=False):
                seeds.add(payload)
                if len(seeds) > 3000:
                    break
        except BinlogError:
            pass
    stats = {"written": 0, "handed_back": 0, "python_raised": 0}

    def call(data: bytes) -> Any:
        return speedups.jsonl_event(data, value_text)

    def run(data: bytes) -> None:
        try:
            line = call(data)
        except DecodeError as err:
            stats["python_raised"] += 1     # the fallback's parse refused a rare kind's bytes
            try:
                pb.BinlogEvent.FromString(data)
            except DecodeError:
                return
            raise Finding(f"jsonl_event raised {err!r} on an event protobuf accepts") from err
        if line is None:
            stats["handed_back"] += 1
            return
        try:
            event = pb.BinlogEvent.FromString(data)
        except Exception as err:
            raise Finding(f"jsonl_event wrote a line for an event protobuf refuses: {err}") from err
        want = encode_jsonl(event, reference=True)
        if line != want:
            raise Finding(f"jsonl_event: {line[:200]!r} != json_format's {want[:200]!r}")
        stats["written"] += 1

    return Target("jsonl", sorted(seeds)[:3000], run, call, None, stats)


# typed_columns' target kinds (typed_columns.c ``T_*``): 1..11, DECIMAL (5) with precision 10, scale 2.
_TYPED_TARGETS = [(code, 10 if code == 5 else 0, 2 if code == 5 else 0) for code in range(1, 12)] * 3


def _size(buffer: Any) -> int:
    """Bytes in a C-built buffer (bytes, or the core's read-only ``Blob``)."""
    return memoryview(buffer).nbytes


def typed_target(speedups: ModuleType, paths: list[Path]) -> Target:
    from binlog_model.errors import BinlogError
    from binlog_model.runs.pipeline import iter_serialized_events

    seeds: set[bytes] = set()
    for path in paths:
        try:
            for payload in iter_serialized_events([path], lenient_ddl=True, verify_checksum=False):
                if any(number == 11 for number, _ in _top_fields(payload) or []):   # 11: rows
                    seeds.add(payload)
                if len(seeds) > 3000:
                    break
        except BinlogError:
            pass
    from google.protobuf.message import DecodeError

    from binlog_model.spark.wire_views import EventView

    stats = {"built": 0, "handed_back": 0, "headers": 0}

    def resolve(version: int, name: bytes) -> int:
        return sum(name) % (len(_TYPED_TARGETS) + 1) - 1          # -1: a name no output column takes

    def call(data: bytes) -> Any:
        image = 3 + (len(data) & 1)                                 # the before (3) or after (4) image
        expected = len(data) % 7 * 100                              # a row-count hint, right or wrong
        speedups.event_header(data)
        return speedups.typed_columns([data], image, [0], _TYPED_TARGETS, resolve, expected)

    def header(data: bytes) -> None:
        """event_header against protobuf's parser: a header only for bytes it reads, the same fields."""
        got = speedups.event_header(data)
        if got is None:
            return
        try:
            view = EventView.FromString(data)
        except DecodeError:
            raise Finding("event_header: a header of bytes protobuf refuses") from None
        position, stamp = view.position, view.utc_timestamp
        want = (view.db, view.table, view.operation, len(view.rows), position.file, position.offset,
                position.inner_index if position.HasField("inner_index") else -1, view.gtid, stamp.seconds,
                stamp.nanos, view.event_index, view.row_index)
        if got != want:
            raise Finding(f"event_header: {got} where protobuf reads {want}")
        stats["headers"] += 1

    def run(data: bytes) -> None:
        header(data)
        out = call(data)
        if out is None:
            stats["handed_back"] += 1
            return
        stats["built"] += 1
        rows, row_event, row_index, columns, _labels = out
        if _size(row_event) != 4 * rows or _size(row_index) != 8 * rows:
            raise Finding(f"typed_columns: {rows} rows, {_size(row_event)} / {_size(row_index)} index bytes")
        if len(columns) != len(_TYPED_TARGETS):
            raise Finding(f"typed_columns: {len(columns)} columns for {len(_TYPED_TARGETS)} targets")
        for n, (validity, _data, offsets, _values) in enumerate(columns):
            if validity is not None and _size(validity) * 8 < rows:
                raise Finding(f"typed_columns column {n}: {_size(validity)} validity bytes for {rows} rows")
            if offsets is not None and _size(offsets) not in (4 * (rows + 1), 8 * (rows + 1)):
                raise Finding(f"typed_columns column {n}: {_size(offsets)} offset bytes for {rows} rows")

    return Target("typed", sorted(seeds)[:3000], run, call, None, stats)


def dump_packets(paths: list[Path], per_stream: int = 24) -> list[bytes]:
    """The seed binlogs' events as a replication dump sends them: each in a packet (3-byte length,
    sequence number, 0x00, the event), ``per_stream`` packets a stream (hand-built framing around real
    events)."""
    streams: list[bytes] = []
    for path in paths:
        data = path.read_bytes()
        if data[:4] != b"\xfebin":
            continue
        pos, packets = 4, []
        while pos + 19 <= len(data):
            size = struct.unpack_from("<I", data, pos + 9)[0]
            if size < 19 or pos + size > len(data) or size + 1 >= 0xFFFFFF:
                break
            body = b"\x00" + data[pos:pos + size]
            packets.append(struct.pack("<I", len(body))[:3] + bytes([(len(packets) + 1) & 0xFF]) + body)
            pos += size
            if len(packets) == per_stream:
                streams.append(b"".join(packets))
                packets = []
        if packets:
            streams.append(b"".join(packets))
    return streams


def frames_target(speedups: ModuleType, paths: list[Path]) -> Target:
    """``dump_events`` on dump packet streams, differential against ``io.replication.take_events`` at two
    places of each input (its start, and a third of the way in), and ``crc32`` against ``zlib.crc32``."""
    import zlib

    from binlog_model.io.replication import take_events

    seeds = dump_packets(paths)[:3000]
    stats = {"batches": 0, "none": 0}

    def call(data: bytes) -> Any:
        return speedups.dump_events(data, 0, len(data), data[3] if len(data) > 3 else 0, 4)

    def run(data: bytes) -> None:
        for pos in (0, len(data) // 3):
            seq = data[pos + 3] if len(data) > pos + 3 else 0
            got = speedups.dump_events(data, pos, len(data), seq, 4 + pos)
            want = take_events(data, pos, len(data), seq, 4 + pos)
            stats["none" if got is None else "batches"] += 1
            if got != want:
                raise Finding(f"dump_events at {pos}: C {str(got)[:200]} != reference {str(want)[:200]}")
        if speedups.crc32(data) != zlib.crc32(data):
            raise Finding("crc32 differs from zlib.crc32")

    return Target("frames", seeds, run, call, None, stats)


def _utf8_text(rng: random.Random) -> bytes:
    """Text that is mostly valid UTF-8 (ASCII runs, characters of every length, the edges of each range),
    with now and then a byte that breaks it: the checks near the first and last valid byte values."""
    pieces = []
    for _ in range(rng.randrange(1, 40)):
        pick = rng.random()
        if pick < 0.4:
            pieces.append(b"a" * rng.randrange(1, 20))
        elif pick < 0.9:
            code = rng.choice([rng.randrange(0x80, 0x800), rng.randrange(0x800, 0xD800),
                               rng.randrange(0xE000, 0x10000), rng.randrange(0x10000, 0x110000),
                               0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF])
            pieces.append(chr(code).encode("utf-8"))
        else:
            pieces.append(bytes([rng.choice([0x80, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0,
                                             0xF4, 0xF5, 0xFF, rng.randrange(256)])]))
    return b"".join(pieces)


def utf8_target(speedups: ModuleType, paths: list[Path]) -> Target:
    """``utf8_valid`` against Python's strict decoder (statement texts are spliced into the output only
    when it says they are UTF-8)."""
    rng = random.Random(15)
    seeds = [_utf8_text(rng) for _ in range(500)]
    stats = {"valid": 0, "invalid": 0}

    def run(data: bytes) -> None:
        try:
            data.decode("utf-8")
            want = True
        except UnicodeDecodeError:
            want = False
        got = speedups.utf8_valid(data)
        stats["valid" if want else "invalid"] += 1
        if got is not want:
            raise Finding(f"utf8_valid says {got} for {data[:80]!r}, the decoder {want}")

    return Target("utf8", seeds, run, speedups.utf8_valid, _utf8_text, stats)


def _lenenc(value: bytes | None) -> bytes:
    if value is None:
        return b"\xfb"
    n = len(value)
    if n < 0xFB:
        return bytes([n]) + value
    if n < 1 << 16:
        return b"\xfc" + n.to_bytes(2, "little") + value
    return b"\xfd" + n.to_bytes(3, "little") + value


def result_set(rng: random.Random) -> bytes:
    """A text result set's row packets as a server sends them (hand-built): one byte giving the column
    count, then rows of length-encoded fields (NULLs, empty values, values of 251+ bytes), then the EOF
    packet."""
    ncols = rng.randrange(1, 9)
    packets, seq = [], rng.randrange(256)
    for _ in range(rng.randrange(0, 30)):
        fields = []
        for _ in range(ncols):
            pick = rng.random()
            fields.append(None if pick < 0.15 else b"" if pick < 0.2
                          else bytes(rng.randrange(256) for _ in range(rng.choice((1, 5, 20, 251, 300)))))
        payload = b"".join(_lenenc(f) for f in fields)
        packets.append(len(payload).to_bytes(3, "little") + bytes([seq]) + payload)
        seq = (seq + 1) & 0xFF
    packets.append(b"\x05\x00\x00" + bytes([seq]) + b"\xfe\x00\x00\x02\x00")
    return bytes([ncols]) + b"".join(packets)


def textrows_target(speedups: ModuleType, paths: list[Path]) -> Target:
    """``text_rows`` (``apply --initial live``'s result-set reader) on hand-built result sets, mutated,
    differential against ``io.result_set.text_rows`` at the input's start: the same columns, or the same
    error message."""
    from binlog_model.io.result_set import text_rows

    rng = random.Random(18)
    seeds = [result_set(rng) for _ in range(500)]
    stats = {"rows": 0, "none": 0, "errors": 0}

    def both(data: bytes) -> tuple[Any, Any]:
        answers = []
        for fn in (speedups.text_rows, text_rows):
            try:
                answers.append(fn(data, 1, len(data), data[4] if len(data) > 4 else 0, max(1, data[0])))
            except ValueError as err:
                answers.append(("error", str(err)))
        return answers[0], answers[1]

    def call(data: bytes) -> Any:
        if not data:
            return None
        try:
            return speedups.text_rows(data, 1, len(data), data[4] if len(data) > 4 else 0, max(1, data[0]))
        except ValueError:
            return None

    def run(data: bytes) -> None:
        if not data:
            return
        got, want = both(data)
        stats["none" if want is None else "errors" if want[0] == "error" else "rows"] += 1
        if got != want:
            raise Finding(f"text_rows: C {str(got)[:200]} != reference {str(want)[:200]}")

    return Target("textrows", seeds, run, call, result_set, stats)


def _splice_parts(data: bytes) -> tuple[bytes, list[bytes], bytes]:
    """A fuzz input as ``splice_rows``'s arguments: its first byte picks the statement field (none when
    even), the rest is the head; the rows are two fixed frames."""
    statement = b"" if not data or data[0] % 2 == 0 else b"\x7a\x03abc"
    return data[1:], [b"\x5a\x02\x08\x01", b"\x5a\x00"], statement


def _splice_head(rng: random.Random) -> bytes:
    """A serialized BinlogEvent head (no rows) with random fields, behind the statement byte."""
    from binlog_model._pb import binlog_event_pb2 as pb

    event = pb.BinlogEvent()
    for name, value in (("source", "s"), ("transaction_id", rng.randrange(1 << 40)), ("db", "d"),
                        ("table", "t" * rng.randrange(200)), ("operation", rng.randrange(4)),
                        ("gtid", "u:1"), ("event_index", rng.randrange(3)), ("last_in_statement", True),
                        ("server_id", rng.randrange(1 << 32)), ("gtid_domain_id", rng.randrange(9))):
        if rng.random() < 0.7:
            setattr(event, name, value)
    if rng.random() < 0.7:
        event.position.file = "binlog.000001"
        event.position.offset = rng.randrange(1 << 33)
    if rng.random() < 0.3:
        event.schema_changes.add().truncate_table.SetInParent()
    return bytes([rng.randrange(256)]) + event.SerializeToString()


def splice_target(speedups: ModuleType, paths: list[Path]) -> Target:
    """``splice_rows`` (the assembler's join of a statement's head, rows and text) against
    ``compiled_rows._with_rows``: the same bytes, or None from C where a head's field cannot be read."""
    from binlog_model.resolve.compiled_rows import _with_rows

    rng = random.Random(19)
    seeds = [_splice_head(rng) for _ in range(500)]
    stats = {"joined": 0, "handed_back": 0}

    def call(data: bytes) -> Any:
        return speedups.splice_rows(*_splice_parts(data))

    def run(data: bytes) -> None:
        head, frames, statement = _splice_parts(data)
        got = speedups.splice_rows(head, frames, statement)
        try:
            want = _with_rows(head, frames, statement)
        except (AssertionError, IndexError):
            want = None
        if got is None:
            stats["handed_back"] += 1
            return
        stats["joined"] += 1
        if got != want:
            raise Finding(f"splice_rows: C {got[:120]!r} != reference {str(want)[:120]}")

    return Target("splice", seeds, run, call, _splice_head, stats)


_RUN = struct.Struct("<HB")
_RAW_FRAME = b"\xa2\x06"     # the tag of field 100 (a raw row image's frame), length-delimited


def _lane_calls(speedups: ModuleType, paths: list[Path], per_file: int = 40) -> list[tuple[Any, ...]]:
    """``statement_run``'s and ``transaction_run``'s arguments where they read something, running the
    pipeline over ``paths``: (name, buffer cut to the bytes it was given (``buf[pos:end]``, re-based),
    base, the other arguments)."""
    from binlog_model.errors import BinlogError
    from binlog_model.resolve import lane

    calls: list[tuple[Any, ...]] = []

    def recorder(name: str) -> Callable[..., Any]:
        def record(*args: Any) -> Any:
            got = getattr(speedups, name)(*args)
            if got and len(calls) < taken + per_file:
                buf, pos, end, base, *rest = args
                rest[4] = dict(rest[4])         # the tables as they were then
                calls.append((name, bytes(buf[pos:end]), base + pos, *rest))
            return got
        return record

    class Recorder:
        def __getattr__(self, name: str) -> Any:
            return getattr(speedups, name)

        statement_run = staticmethod(recorder("statement_run"))
        transaction_run = staticmethod(recorder("transaction_run"))

    real = lane.speedups
    lane.speedups = Recorder()
    try:
        for path in paths:
            for raw in (False, True):
                taken = len(calls)
                try:
                    for _ in _serialized(path, raw, verify=True):
                        pass
                except BinlogError:
                    pass
    finally:
        lane.speedups = real
    return calls


class _EveryTable(frozenset):  # type: ignore[type-arg]
    """Every table name: raw row images for all of them."""

    def __contains__(self, item: object) -> bool:
        return True


def _serialized(path: Path, raw: bool, verify: bool) -> Iterator[bytes]:
    """The serialized events of ``path``; ``raw``: as a resolve task reads them (raw row images of every
    table, "after" images, the statement-text events skipped)."""
    from binlog_model.io.file_source import FileSource
    from binlog_model.resolve.assembler import StatementAssembler
    from binlog_model.resolve.compiled_rows import RawImages
    from binlog_model.resolve.options import ResolveOptions
    from binlog_model.runs.pipeline import iter_serialized_events
    from binlog_model.runs.runner import Runner
    from binlog_model.spark.reading import STATEMENT_TEXT_TYPES

    if not raw:
        return iter_serialized_events([path], allow_incomplete_tail=True, verify_checksum=verify)
    options = ResolveOptions.parse(image="after", statement_text="none", allow_incomplete_tail=True)
    assembler = StatementAssembler(None, options, serialized=True, raw=RawImages(_EveryTable()))
    source = FileSource([path], verify_checksum=verify, skip_types=STATEMENT_TEXT_TYPES, drop_skipped=True,
                        partial_tail=True)
    return Runner(source, assembler).events()  # type: ignore[return-value]  # serialized


def _lane_both(path: Path, verify: bool, raw: bool = False) -> tuple[Any, Any]:
    """The serialized events of ``path`` (or the error) with the lane and without it; ``verify``: check
    the CRCs (off, damaged row images reach the decoders); ``raw``: as a resolve task reads them."""
    from binlog_model.errors import BinlogError
    from binlog_model.resolve import assembler
    from binlog_model.resolve.compiled_rows import RawImagesRefused

    out = []
    for on in (True, False):
        assembler.LANE_AVAILABLE = on
        try:
            out.append(list(_serialized(path, raw, verify)))
        except (BinlogError, RawImagesRefused) as err:
            out.append(f"{type(err).__name__}: {err}")
        finally:
            assembler.LANE_AVAILABLE = True
    return out[0], out[1]


def statements_target(speedups: ModuleType, paths: list[Path]) -> Target:
    """``statement_run`` on the buffers and contexts the lane met, mutated (see the module docstring)."""
    import tempfile

    from binlog_model._pb import binlog_event_pb2 as pb

    calls = _lane_calls(speedups, paths)
    if not calls:
        raise SystemExit("statements: the lane read nothing in the seed binlogs")
    files = [p.read_bytes() for p in paths if p.stat().st_size < (256 << 10)]
    seeds = [_RUN.pack(i, 0) + call[1] for i, call in enumerate(calls)]
    stats = {"runs": 0, "handed_back": 0, "cut_short": 0, "statements": 0, "transactions": 0, "pipelines": 0,
             "pipeline_errors": 0}
    scratch = Path(tempfile.mkdtemp(prefix="fuzz-statements-")) / "binlog.000001"
    count = itertools.count()

    def args(data: bytes) -> tuple[str, tuple[Any, ...]] | None:
        if len(data) < _RUN.size:
            return None
        index, variant = _RUN.unpack_from(data)
        name, _, base, *rest = calls[index % len(calls)]
        # the last three of both entry points: with_text, max_rows, max_bytes
        rest[-3] = bool(variant & 1) or rest[-3]
        if variant & 2:
            rest[-2] = 1 + variant % 5
        if variant & 4:
            rest[-1] = 64 + variant * 8
        body = data[_RUN.size:]
        return name, (body, 0, len(body), base, *rest)

    def call(data: bytes) -> Any:
        given = args(data)
        return None if given is None else getattr(speedups, given[0])(*given[1])

    def run(data: bytes) -> None:
        given = args(data)
        if given is None:
            return
        name, arguments = given
        got = getattr(speedups, name)(*arguments)
        if got is None or got is False:     # False: the input ends inside a statement for the lane so far
            stats["handed_back" if got is None else "cut_short"] += 1
        else:
            end, outputs, counted, statements, rows, first, last = got[:7]
            whole = name == "transaction_run"
            counts = (counted > 0 and statements == len(outputs)) if whole else (
                statements == len(outputs) == len(counted) > 0)
            if whole:       # at most one GTID a transaction, each a (uuid, gno) or (domain, server, seq)
                counts = counts and len(got[12]) <= counted and all(len(g) in (2, 3) for g in got[12])
            if not (0 < end <= len(arguments[0]) and counts and rows >= statements
                    and first == arguments[3] <= last < arguments[3] + end):
                raise Finding(f"{name}: a result outside its input: {got[:7]!r}"[:300])
            stats["transactions"] += counted if whole else 0
            for out in outputs:
                event = pb.BinlogEvent.FromString(out)
                if not (event.rows or _RAW_FRAME in out) or not event.last_in_statement:
                    raise Finding(f"statement_run: an event without rows or not its statement's last: "
                                  f"{event}")
            stats["runs"] += 1
            stats["statements"] += statements
        if files and next(count) % 64 == 0:
            rng = random.Random(data)
            whole = bytearray(rng.choice(files))
            for _ in range(rng.randrange(1, 4)):
                whole[rng.randrange(4, len(whole))] ^= 1 << rng.randrange(8)
            scratch.write_bytes(bytes(whole))
            with_lane, without = _lane_both(scratch, verify=rng.random() < 0.3, raw=rng.random() < 0.5)
            stats["pipelines"] += 1
            stats["pipeline_errors"] += isinstance(without, str)
            if with_lane != without:
                raise Finding(f"the lane and the Python path differ on a mutated seed binlog: "
                              f"{str(with_lane)[:150]} != {str(without)[:150]}")

    return Target("statements", seeds, run, call, None, stats)


_REPLICA_TABLES = [
    "CREATE TABLE t (id INT PRIMARY KEY, small SMALLINT, big BIGINT UNSIGNED, price DECIMAL(5,2), d DATE, "
    "dt DATETIME(6), ts TIMESTAMP(6) NULL, f FLOAT, x DOUBLE, s VARCHAR(10), b VARBINARY(10), tm TIME, "
    "j JSON, st SET('a','b'))",
    "CREATE TABLE t (a INT, B VARCHAR(5), c DECIMAL(30,0))",                    # keyless: every column read
    "CREATE TABLE t (k1 INT, K2 VARCHAR(3), v BIGINT, PRIMARY KEY (k1, K2))",   # a key of two columns
]


def _replica_value(rng: random.Random, pb: Any) -> Any:
    """A Value of a random kind: plain, out of range, odd texts, messages (some the C code hands back)."""
    kind = rng.choice(["int_value", "long_value", "uint64_value", "string_value", "bytes_value",
                       "decimal_value", "double_value", "float_value", "timestamp_micros", "time_micros",
                       "json_value", "bit_value", "date_value", "datetime_value", "null_value", "set_value",
                       "none"])
    edge = rng.choice([0, 1, -1, 2**31 - 1, -2**31, 2**63 - 1, -2**63, 2**64 - 1,
                       rng.randrange(-10**6, 10**6)])
    if kind == "none":
        return pb.Value()
    if kind in ("int_value",):
        return pb.Value(int_value=max(-2**31, min(2**31 - 1, edge)))
    if kind in ("long_value", "timestamp_micros", "time_micros"):
        return pb.Value(**{kind: max(-2**63, min(2**63 - 1, edge))})
    if kind in ("uint64_value", "bit_value"):
        return pb.Value(**{kind: abs(edge) % 2**64})
    if kind in ("string_value", "json_value"):
        return pb.Value(**{kind: rng.choice(["", "a", "é€😀", "x" * 20, '{"a":1}'])})
    if kind == "bytes_value":
        return pb.Value(bytes_value=rng.randbytes(rng.randrange(12)))
    if kind == "decimal_value":
        return pb.Value(decimal_value=rng.choice(["0", "-0.50", "999.99", "1000.00", "1.255", "0001.5", "1e2",
                                                  "-", ".5", "12345678901234567890123456789", str(edge)]))
    if kind in ("double_value", "float_value"):
        return pb.Value(**{kind: rng.choice([0.0, -0.0, 1.5, 1e300, float("inf"), float("nan")])})
    if kind == "date_value":
        return pb.Value(date_value=pb.Date(year=rng.choice([0, 1, 2024, 9999, 10000]),
                                           month=rng.randrange(14), day=rng.randrange(33)))
    if kind == "datetime_value":
        return pb.Value(datetime_value=pb.DateTime(year=rng.choice([0, 1, 2024, 2**31]),
                                                   month=rng.randrange(14), day=rng.randrange(1, 32),
                                                   hour=rng.randrange(25),
                                                   minute=rng.randrange(61), second=rng.randrange(61),
                                                   micros=rng.choice([0, 999999, 1000000])))
    if kind == "set_value":
        return pb.Value(set_value=pb.SetValue(labels=["a"]))
    return pb.Value(null_value=0)


def replica_target(speedups: ModuleType, paths: list[Path]) -> Target:
    """``replica_images`` (``apply``'s row images, ``replica/batch.py``): an input is ``[table u8]
    [operation u8][event]``, a serialized BinlogEvent for one of three tables (every kind of value, in range
    or not, names in another case or no column's), or a seed binlog's, mutated; differential against
    ``TableBatch._image`` on every input C answers for: the same values (type and text) and invalid names,
    and never an answer where the reference finds a JSON diff or raises. Bytes protobuf refuses only need no
    crash (the writer hands the C code its own serializer's bytes)."""
    from google.protobuf.message import DecodeError

    from binlog_model._pb import binlog_event_pb2 as pb
    from binlog_model.errors import BinlogError
    from binlog_model.replica.batch import Meta, TableBatch
    from binlog_model.replica.layout import TableLayout
    from binlog_model.runs.pipeline import iter_serialized_events
    from schema_tracker.history import SchemaHistory

    batches = []
    for ddl in _REPLICA_TABLES:
        history = SchemaHistory()
        history.apply(ddl, "d")
        table = history.catalog.table("d", "t")
        assert table is not None
        batches.append(TableBatch(TableLayout.of(table)))
    meta = Meta(1, "", "binlog.000001", 4)
    stats = {"compared": 0, "handed_back": 0, "refused": 0}

    def generate(rng: random.Random) -> bytes:
        n = rng.randrange(len(batches))
        names = [c.name for c in batches[n].layout.columns]
        event = pb.BinlogEvent(db="d", table="t", operation=rng.randrange(1, 4))
        for _ in range(rng.randrange(1, 4)):
            row = event.rows.add()
            for image in (row.before, row.after):
                for name in rng.sample(names, rng.randrange(len(names) + 1)):
                    shown = rng.choice([name, name.upper(), name.lower(), name + "_", ""])
                    image.add(name=shown, value=_replica_value(rng, pb), invisible=rng.random() < 0.05)
        return bytes([n, event.operation]) + event.SerializeToString()

    seeds = [generate(random.Random(i)) for i in range(400)]
    for path in paths:
        try:
            events = iter_serialized_events([path], lenient_ddl=True, verify_checksum=False)
            for k, payload in enumerate(events):
                seeds.append(bytes([k % len(batches), k % 3 + 1]) + payload)
                if k > 300:
                    break
        except BinlogError:
            pass

    def call(data: bytes) -> Any:
        return speedups.replica_images(data[2:], data[1] % 3 + 1, batches[data[0] % len(batches)]._plan)

    def shown(values: Any) -> Any:
        return None if values is None else [(type(v).__name__, repr(v)) for v in values]

    def run(data: bytes) -> None:
        if len(data) < 2:
            return
        got = call(data)
        try:
            event = pb.BinlogEvent.FromString(data[2:])
        except DecodeError:
            stats["refused"] += 1
            return
        if got is None:
            stats["handed_back"] += 1
            return
        batch, op = batches[data[0] % len(batches)], data[1] % 3 + 1
        want = []
        try:
            for row in event.rows:
                before = batch._image(row.before, meta, batch._before_reads)[0] if op in (2, 3) else None
                after = invalid = None
                if op in (1, 2):
                    after, invalid, diffs = batch._image(row.after, meta)
                    if diffs:
                        raise Finding("replica_images answered for an image with a JSON diff")
                want.append((shown(before), shown(after), invalid))
        except Finding:
            raise
        except Exception as err:
            raise Finding(f"replica_images answered where the reference raised {err!r}") from err
        mine = [(shown(b), shown(a), i) for b, a, i in got]
        if mine != want:
            raise Finding(f"replica_images {str(mine)[:300]} != reference {str(want)[:300]}")
        stats["compared"] += 1

    # a row of two bytes gives a list per image (8 bytes a column) and a set: ~200 bytes of output per byte
    return Target("replica", seeds, run, call, generate, stats, mem_factor=512)


TARGETS = {"json": json_target, "rows": rows_target, "raw": raw_target, "columns": columns_target,
           "typed": typed_target, "frames": frames_target, "utf8": utf8_target, "jsonl": jsonl_target,
           "textrows": textrows_target, "splice": splice_target, "statements": statements_target,
           "replica": replica_target}


# --- engines ---------------------------------------------------------------------------------------


def make_input(target: Target, seed: int, index: int) -> bytes:
    rng = random.Random(f"{seed}:{target.name}:{index}")
    if target.generate is not None and rng.random() < 0.25:
        data = target.generate(rng)
    else:
        data = rng.choice(target.seeds)
    if target.name in ("rows", "raw"):
        # Keep the header (which seed, mode, overrides) mostly intact: damage the images behind it.
        head = _HEAD.size + _HEAD.unpack_from(data)[2] * _OVERRIDE.size if len(data) >= _HEAD.size else 0
        if rng.random() < 0.1:
            head = 0
        prefix, body = data[:head], data[head:]
    else:
        prefix, body = b"", data
    for _ in range(rng.choice((0, 1, 1, 1, 2, 2, 3, 4, 8))):
        body = mutate.mutate_bytes(rng, body, target.seeds)
    if rng.random() < 0.15 and body:
        body = body[:rng.randrange(len(body))]  # truncated
    return prefix + body


@dataclass
class Totals:
    inputs: int = 0
    bytes_in: int = 0
    max_input: int = 0
    findings: int = 0
    leak_checks: int = 0
    leaks: int = 0
    traced: int = 0
    max_left: int = 0
    peak_by_size: dict[str, int] = field(default_factory=dict)
    by_target: dict[str, int] = field(default_factory=dict)


def _bucket(size: int) -> str:
    for limit, name in ((256, "<256B"), (1 << 10, "<1KiB"), (4 << 10, "<4KiB"), (16 << 10, "<16KiB"),
                        (64 << 10, "<64KiB")):
        if size < limit:
            return name
    return ">=64KiB"


class Runner:
    def __init__(self, targets: list[Target], out: Path, leak_every: int, mem_every: int,
                 lsan: bool) -> None:
        self.targets = targets
        self.out = out
        self.leak_every = leak_every
        self.mem_every = mem_every
        self.totals = Totals()
        self.lsan = _lsan() if lsan else None
        self.started = time.monotonic()

    def one(self, target: Target, data: bytes, label: str) -> None:
        t = self.totals
        t.inputs += 1
        t.bytes_in += len(data)
        t.max_input = max(t.max_input, len(data))
        t.by_target[target.name] = t.by_target.get(target.name, 0) + 1
        if self.mem_every and t.inputs % self.mem_every == 0:
            self.trace(target, data, label)
        try:
            target.run(data)
        except Finding as err:
            self.finding(target, data, label, str(err))
        if self.leak_every and t.inputs % self.leak_every == 0:
            self.leak_check(target, data, label)

    def trace(self, target: Target, data: bytes, label: str) -> None:
        """The C call under tracemalloc: its peak against the input's size, and what a second call leaves
        allocated once its result is dropped (a leak: every allocation of the C code goes through the Python
        allocators, which tracemalloc sees; the first call's count would hold what free lists keep). A first
        untraced call warms the harness's plan cache."""
        t = self.totals
        try:
            target.c_call(data)
        except Exception:       # an exception the target allows (its run judges it): nothing to trace
            return
        # What the interpreter's free lists keep of the first call's objects stays traced: a leak is what a
        # second call adds to it. Where that is more than the slack, the count is taken again around a third
        # call with every generation collected before and after (garbage in reference cycles, such as a
        # Python fallback's exception and its frames, can hold what the call made until then; a full
        # collection each time would cost tens of milliseconds an input).
        tracemalloc.start()
        try:
            result = target.c_call(data)
            peak = tracemalloc.get_traced_memory()[1]
            del result
            settled = tracemalloc.get_traced_memory()[0]
            result = target.c_call(data)
            del result
            left = tracemalloc.get_traced_memory()[0] - settled
            if left > LEAK_SLACK:
                gc.collect()
                settled = tracemalloc.get_traced_memory()[0]
                result = target.c_call(data)
                del result
                gc.collect()
                left = tracemalloc.get_traced_memory()[0] - settled
        finally:
            tracemalloc.stop()
        t.traced += 1
        bucket = _bucket(len(data))
        t.peak_by_size[bucket] = max(t.peak_by_size.get(bucket, 0), peak)
        t.max_left = max(t.max_left, left)
        if peak > target.mem_factor * len(data) + MEM_CONSTANT:
            self.finding(target, data, label, f"memory: traced peak {peak} bytes for {len(data)} bytes")
        if left > LEAK_SLACK:
            t.leaks += 1
            self.finding(target, data, label, f"leak: {left} bytes still allocated after the call")

    def leak_check(self, target: Target | None = None, data: bytes = b"", label: str = "end") -> None:
        if self.lsan is None:
            return
        gc.collect()
        self.totals.leak_checks += 1
        sys.stderr.flush()
        if self.lsan():
            self.totals.leaks += 1
            self.finding(target, data, label, "LeakSanitizer found unreachable blocks (report on stderr)")

    def finding(self, target: Target | None, data: bytes, label: str, what: str) -> None:
        self.totals.findings += 1
        folder = self.out / "findings"
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{target.name if target else 'all'}-{label}"
        (folder / f"{name}.bin").write_bytes(data)
        (folder / f"{name}.txt").write_text(what + "\n")
        print(json.dumps({"finding": name, "what": what[:500]}), flush=True)

    def summary(self, **extra: Any) -> dict[str, Any]:
        t = self.totals
        elapsed = time.monotonic() - self.started
        return {"inputs": t.inputs, "by_target": t.by_target, "seconds": round(elapsed, 1),
                "inputs_per_second": round(t.inputs / max(elapsed, 1e-9), 1), "bytes_in": t.bytes_in,
                "max_input": t.max_input, "findings": t.findings, "leak_checks": t.leak_checks,
                "leaks": t.leaks, "traced_inputs": t.traced, "max_bytes_left_after_call": t.max_left,
                "traced_peak_by_input_size": t.peak_by_size,
                "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                "target_stats": {x.name: x.stats for x in self.targets}, **extra}


def _loop(runner: Runner, args: argparse.Namespace, index_file: Path) -> None:
    stop = args.start + args.inputs if args.inputs else 1 << 62
    deadline = time.monotonic() + args.seconds if args.seconds else float("inf")
    last = time.monotonic()
    index = args.start
    with index_file.open("r+b") as fh:
        while index < stop and time.monotonic() < deadline:
            target = runner.targets[index % len(runner.targets)]
            data = make_input(target, args.seed, index)
            fh.seek(0)
            fh.write(struct.pack("<q", index))  # a sanitizer abort leaves the index of its input here
            runner.one(target, data, f"seed{args.seed}-input{index}")
            index += 1
            if time.monotonic() - last >= 30:
                last = time.monotonic()
                print(json.dumps({"progress": runner.summary()}), flush=True)


def _atheris(runner: Runner, args: argparse.Namespace, fuzzer_args: list[str]) -> None:
    import atheris

    target = runner.targets[0]
    corpus = args.out / f"corpus-{target.name}"
    if not corpus.is_dir() or not any(corpus.iterdir()):
        corpus.mkdir(parents=True, exist_ok=True)
        for i, data in enumerate(target.seeds):
            (corpus / f"seed-{i:05d}").write_bytes(data)

    def one(data: bytes) -> None:
        runner.one(target, data, "atheris")
        if runner.totals.findings:
            raise RuntimeError("finding (see the line above and OUT/findings)")

    # libFuzzer's own leak check is LeakSanitizer's, with the same CPython 3.11 false reports (see --lsan);
    # the tracemalloc check covers the C code's allocations.
    if not any(a.startswith("-detect_leaks=") for a in fuzzer_args):
        fuzzer_args = ["-detect_leaks=0", *fuzzer_args]
    atheris.Setup([sys.argv[0], *fuzzer_args, str(corpus)], one)
    atheris.Fuzz()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    fuzzer_args = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    p = argparse.ArgumentParser(prog="python -m benchmarks.fuzz.native", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("target", choices=(*TARGETS, "all"))
    p.add_argument("--engine", choices=("loop", "atheris"), default="loop")
    p.add_argument("--seed", type=int, default=16)
    p.add_argument("--inputs", type=int, default=0, help="stop after this many inputs (loop)")
    p.add_argument("--seconds", type=float, default=0, help="stop after this long (loop)")
    p.add_argument("--start", type=int, default=0, help="first input index (loop)")
    p.add_argument("--replay", type=int, help="run input REPLAY of --seed only, then stop")
    p.add_argument("--lsan", action="store_true",
                   help="also run LeakSanitizer every --leak-every inputs (see docs/fuzzing.md: CPython 3.11 "
                        "gives false reports)")
    p.add_argument("--leak-every", type=int, default=20000)
    p.add_argument("--mem-every", type=int, default=100)
    p.add_argument("--out", type=Path, default=Path("/tmp/binlog-model-native-fuzz"))
    args = p.parse_args(argv)
    speedups = load_speedups()
    args.out.mkdir(parents=True, exist_ok=True)
    paths = seed_binlogs()
    names = list(TARGETS) if args.target == "all" else [args.target]
    targets = [TARGETS[n](speedups, paths) for n in names]
    runner = Runner(targets, args.out, args.leak_every, args.mem_every, args.lsan)
    info = {"module": str(speedups.__file__), "sanitized": sanitizer_loaded(),
            "toolchain": os.environ.get("BINLOG_MODEL_FUZZ_TOOLCHAIN", "none"),
            "seeds": {t.name: len(t.seeds) for t in targets}, "seed": args.seed, "engine": args.engine,
            "command": " ".join(["python -m benchmarks.fuzz.native", *sys.argv[1:]])}
    info["rss_after_setup_mb"] = rss_mb()
    print(json.dumps({"start": info}), flush=True)
    runner.leak_check(label="after-setup")  # a clean baseline: later reports are the fuzzed calls'
    if args.replay is not None:
        args.start, args.inputs = args.replay, 1
    index_file = args.out / "current.index"
    index_file.write_bytes(struct.pack("<q", -1))
    if args.engine == "atheris":
        if len(targets) != 1:
            raise SystemExit("the atheris engine fuzzes one target at a time")
        _atheris(runner, args, fuzzer_args)
    else:
        _loop(runner, args, index_file)
    runner.leak_check(label="end")
    summary = runner.summary(**info, rss_end_mb=rss_mb())
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True))
    print(json.dumps({"summary": summary}, sort_keys=True), flush=True)
    sys.stdout.flush()
    sys.stderr.flush()
    # No interpreter shutdown: LeakSanitizer's exit-time report would list the interpreter's own unfreed
    # start-up blocks; the leak checks above already covered the fuzzed calls.
    os._exit(1 if runner.totals.findings else 0)


if __name__ == "__main__":
    sys.exit(main())
