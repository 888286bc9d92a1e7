"""Incremental, restartable ``events`` runs over a growing binlog archive (``--state DIR``).

Strategy: a run loads the saved ``RunState`` (``binlog_model.io.state``), refuses options that differ from
it, and reads only what is new: files after the saved position, and the tail of the file it stopped in
(``io.tail.iter_from`` resumes the decoder there). Events go through the same ``StatementAssembler`` as a
single run, starting from the saved schema history, so the concatenated output of all runs equals one run
over everything.

A run commits in steps. A step ends where nothing is pending (``StatementAssembler.idle``): at the end of
a file, or before a transaction starts once ``commit_bytes`` of input were read since the last step.
Committing flushes and fsyncs the output file, then atomically replaces the state (position, files done,
GTIDs, schema history, the output's committed length). A run killed at any moment therefore leaves the
state of its last committed step (or the one before the run), and the next run's ``recover_outputs`` cuts
the output back to what that state committed. A transaction still open at the end of the input, or a
half-written last event, is not committed: with ``allow_incomplete_tail`` the run stops before it and the
next run resumes there; without, it is an ``IncompleteTransactionError`` after the committed steps.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from binlog_model.errors import BinlogError, ConfigError
from binlog_model.io.documents import fsync_dir, sha256_of, truncate_durably
from binlog_model.io.files import open_binlog, sort_binlog_files
from binlog_model.io.state import PARTIAL, RunState, StateMismatchError, lock_state, recover_outputs
from binlog_model.io.tail import FileEnd, FileStart, format_description_of, iter_from
from binlog_model.position import BinlogPosition
from binlog_model.resolve.assembler import AssemblerStats, StatementAssembler
from binlog_model.resolve.options import ResolveOptions
from binlog_model.resolve.transactions import TransactionStarts
from binlog_model.sinks import EventSink, open_sink
from binlog_model.wire import events as ev
from schema_tracker.history import SchemaHistory

__all__ = ["IncrementalResult", "plan_starts", "run_incremental", "snapshot_digest"]


@dataclass
class IncrementalResult:
    """What one run did. ``output``: the file it committed (None when it produced no events)."""

    files: list[str] = field(default_factory=list)
    events: int = 0
    output: Path | None = None
    resumed_at: str | None = None
    stopped_at: str | None = None
    commits: int = 0
    partial_tail_bytes: int = 0
    stats: AssemblerStats = field(default_factory=AssemblerStats)


def snapshot_digest(snapshot: str | os.PathLike[str] | None) -> str | None:
    """A fingerprint of a snapshot argument: the SHA-256 of a file's bytes, or the text of a URL."""
    if snapshot is None:
        return None
    text = os.fspath(snapshot)
    if "://" in text:
        return text.split("?", 1)[0]
    try:
        return sha256_of(text)
    except OSError as err:
        raise ConfigError(f"cannot read snapshot {text}: {err}") from err


def run_incremental(
    paths: Iterable[str | os.PathLike[str]],
    state_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    options: ResolveOptions,
    load_history: Callable[[], SchemaHistory],
    shaping: dict[str, Any],
    fmt: str = "jsonl",
    snapshot_id: str | None = None,
    verify_checksum: bool = True,
    json_defaults: bool = False,
    commit_bytes: int = 64 << 20,
    on_commit: Callable[[RunState], None] | None = None,
) -> IncrementalResult:
    """One incremental run: new input of ``paths`` → a new output file in ``out_dir``, state in
    ``state_dir``. ``shaping``: the options that shape the output (compared with the state's);
    ``load_history``: the starting schema of the first run (later runs use the state's). Raises
    ``StateMismatchError`` for a run that does not continue the state, ``StateLockedError`` while another
    run holds ``state_dir``, and the pipeline's errors."""
    if fmt not in ("jsonl", "proto"):
        raise ConfigError(f"format must be jsonl or proto, not {fmt!r}")
    out = Path(out_dir)
    # Held from before the state is read to the last commit: a concurrent run would recover away our output.
    with lock_state(state_dir):
        state = RunState.load(state_dir)
        shaping = {**shaping, "format": fmt, "out": str(out.resolve())}
        state.check_options(shaping)
        started_with = state.options.get("snapshot")
        if not state.fresh and snapshot_id is not None and started_with not in (None, snapshot_id):
            raise StateMismatchError(f"--snapshot differs from the one the state in {state.directory} "
                                     "started with; later runs need no --snapshot (the state holds the "
                                     "schema)")
        recover_outputs(state, out)
        state.options = {**shaping, "snapshot": state.options.get("snapshot", snapshot_id)}
        history = SchemaHistory.from_json(state.history) if state.history is not None else load_history()
        assembler = StatementAssembler(history, options)
        result = IncrementalResult(stats=assembler.stats)
        starts = plan_starts(state, [Path(p) for p in paths])
        result.files = [s.path for s in starts]
        if state.position is not None:
            result.resumed_at = f"{state.position['file']}:{state.position['offset']}"
        name = f"part-{len(state.outputs) + 1:06d}.{'jsonl' if fmt == 'jsonl' else 'pb'}"
        partial = out / (name + PARTIAL)
        writer = _Writer(partial, fmt, json_defaults)
        run = _Run(state, assembler, writer, name, result, on_commit)
        try:
            run.loop(starts, verify_checksum, options.allow_incomplete_tail, commit_bytes)
        except BinlogError:
            writer.close()
            recover_outputs(state, out)       # the committed steps stay, as a finished output file
            raise
        finally:
            writer.close()
        run.finish(out)
        return result


def plan_starts(state: RunState, files: Sequence[Path]) -> list[FileStart]:
    """The files (and the offset in each) a run reads, checked against the state: none missing, none
    changed under the saved position."""
    ordered = sort_binlog_files(dict.fromkeys(files))
    names = [p.name for p in ordered]
    if len(set(names)) != len(names):
        raise ConfigError(f"two binlog files share a name: {sorted(n for n in names if names.count(n) > 1)}")
    pos = state.position
    if pos is None:
        return [FileStart(str(p)) for p in ordered]
    here = BinlogPosition(pos["file"], 0).sort_key()[:2]
    starts: list[FileStart] = []
    for path in ordered:
        key = BinlogPosition(path.name, 0).sort_key()[:2]
        if key < here:
            if path.name not in state.files:
                raise StateMismatchError(f"{path} comes before the state's position {pos['file']}:"
                                         f"{pos['offset']} but was never processed: this state started "
                                         "later in the sequence")
            continue
        if key == here:
            fde = bytes.fromhex(pos["format_description"]) if pos.get("format_description") else None
            _check_same_file(path, pos["offset"], fde)
            # Stopped before the file's FORMAT_DESCRIPTION was whole: read it from the start again.
            starts.append(FileStart(str(path), pos["offset"] if pos["offset"] > 4 else 0, fde))
        else:
            if not starts and pos.get("rotated_to") not in (None, path.name):
                raise StateMismatchError(f"the state stopped at {pos['file']}:{pos['offset']}, which rotates "
                                         f"to {pos['rotated_to']}, but the next file given is {path.name}")
            if not starts and pos.get("rotated_to") is None:
                raise StateMismatchError(f"the state resumes inside {pos['file']} at offset {pos['offset']}: "
                                         "give that file too (its tail may hold more events)")
            starts.append(FileStart(str(path)))
    return starts


def _check_same_file(path: Path, offset: int, fde: bytes | None) -> None:
    with open_binlog(path) as fh:            # gunzips a compressed archive file transparently
        head = fh.read(4 + len(fde)) if fde is not None else b""
        gzipped = not isinstance(fh, io.BufferedReader)
    size = path.stat().st_size
    if not gzipped and size < offset:
        raise StateMismatchError(f"{path} has {size} bytes but the state has processed {offset} of it: the "
                                 "file was replaced or truncated (start a new --state directory)")
    if fde is not None and head[4:] != fde:
        raise StateMismatchError(f"{path} is not the file the state processed: its FORMAT_DESCRIPTION "
                                 "event differs (was the server reset?)")


@dataclass(frozen=True, slots=True)
class _Mark:
    """A point a run can stop at: where the next run resumes, and the output length and GTIDs up to it."""

    file: str
    offset: int
    fde: bytes | None
    rotated_to: str | None
    size: int
    gtids: int


class _Writer:
    """The run's output file: the sink of ``fmt`` (JSON lines or length-delimited protobuf), opened on the
    first event; its byte count is the exact length a step commits."""

    def __init__(self, path: Path, fmt: str, json_defaults: bool) -> None:
        self.path = path
        self.fmt = fmt
        self.json_defaults = json_defaults
        self._sink: EventSink | None = None

    @property
    def size(self) -> int:
        return self._sink.bytes_written if self._sink is not None else 0

    def write(self, event: Any) -> None:
        if self._sink is None:
            self._sink = open_sink(self.fmt, self.path, json_defaults=self.json_defaults)
        self._sink.write(event)

    def sync(self) -> None:
        if self._sink is not None:
            self._sink.sync()

    def close(self) -> None:
        if self._sink is not None:
            self._sink.close()
            self._sink = None


class _Run:
    def __init__(self, state: RunState, assembler: StatementAssembler, writer: _Writer, name: str,
                 result: IncrementalResult, on_commit: Callable[[RunState], None] | None) -> None:
        self.state = state
        self.assembler = assembler
        self.writer = writer
        self.name = name
        self.result = result
        self.on_commit = on_commit
        self.gtids_seen: list[ev.GtidEvent | ev.MariadbGtidEvent] = []

    def loop(self, starts: Sequence[FileStart], verify_checksum: bool, partial_tail: bool,
             commit_bytes: int) -> None:
        fde: bytes | None = None
        since_commit = 0
        tx_starts = TransactionStarts()
        current = ""
        mark: _Mark | None = None      # the last point where a transaction started with nothing pending
        for item in iter_from(starts, verify_checksum=verify_checksum, partial_tail=partial_tail):
            if isinstance(item, FileEnd):
                base = os.path.basename(item.path)
                self.state.files[base] = item.offset
                self.result.partial_tail_bytes = item.partial_bytes
                rotated = item.rotated_to
                pos = self.state.position
                if rotated is None and pos is not None and (pos["file"], pos["offset"]) == (base,
                                                                                           item.offset):
                    rotated = pos.get("rotated_to")     # resumed at the very end: its ROTATE lies before
                if self.assembler.idle:
                    self.commit(_Mark(base, item.offset, item.format_description, rotated,
                                      self.writer.size, len(self.gtids_seen)))
                    since_commit = 0
                    mark = None
                current = ""
                tx_starts = TransactionStarts()      # a transaction never spans files
                continue
            header = item.header
            if header.inner_index is None:
                if header.file != current:
                    current = header.file
                    fde = format_description_of(current)
                # The assembler has the last word: a start it has not finished the transaction before
                # (an incomplete one) is no place to stop.
                if tx_starts.starts_at(item) and self.assembler.idle and header.offset > 4:
                    mark = _Mark(os.path.basename(header.file), header.offset, fde, None, self.writer.size,
                                 len(self.gtids_seen))
                    if since_commit >= commit_bytes:
                        self.commit(mark)
                        since_commit = 0
                since_commit += header.event_size
                if isinstance(item, ev.GtidEvent | ev.MariadbGtidEvent):
                    self.gtids_seen.append(item)
            for event in self.assembler.feed(item):
                self.writer.write(event)
                self.result.events += 1
        if self.assembler.idle:
            return
        if not self.assembler.options.allow_incomplete_tail:
            for _ in self.assembler.close():      # raises IncompleteTransactionError, naming the flag
                pass
        elif mark is not None:
            # Stop before the transaction still open at the end: the next run resumes at its start.
            self.commit(mark)
        self.result.stats.incomplete_transactions += 1

    def commit(self, mark: _Mark) -> None:
        self.writer.sync()
        state = self.state
        for gtid in self.gtids_seen[:mark.gtids]:
            state.gtids.add_event(gtid)
        del self.gtids_seen[:mark.gtids]
        state.position = {"file": mark.file, "offset": mark.offset, "rotated_to": mark.rotated_to,
                          "format_description": mark.fde.hex() if mark.fde else None}
        state.history = self.assembler.history.to_json()
        state.open_output = {"file": self.name, "bytes": mark.size} if mark.size else None
        state.save()
        self.result.commits += 1
        self.result.stopped_at = f"{mark.file}:{mark.offset}"
        if self.on_commit is not None:
            self.on_commit(state)

    def finish(self, out: Path) -> None:
        """The final commit: the output file becomes a finished one, listed in the state."""
        state = self.state
        partial = self.writer.path
        committed = int(state.open_output["bytes"]) if state.open_output else 0
        state.open_output = None
        state.runs += 1
        if committed:
            state.outputs.append({"file": self.name, "bytes": committed})
        state.save()
        if committed:
            truncate_durably(partial, committed)   # bytes after the last step (an open transaction) go
            os.replace(partial, out / self.name)
            self.result.output = out / self.name
        elif partial.exists():
            partial.unlink()
        fsync_dir(out)
