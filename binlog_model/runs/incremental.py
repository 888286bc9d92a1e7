"""Incremental, restartable ``events`` runs over a growing binlog archive (``--state DIR``).

Strategy: a run loads the saved ``RunState`` (``binlog_model.io.state``), refuses options that differ from
it, and reads only what is new: ``io.file_source.FileSource`` plans the files after the saved position and
the tail of the file it stopped in (resuming the decoder there), and ``runs.runner.Runner`` feeds them to
the same ``StatementAssembler`` as a single run, starting from the saved schema history, so the
concatenated output of all runs equals one run over everything.

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

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from binlog_model.errors import BinlogError
from binlog_model.faults import kill_point
from binlog_model.io.file_source import FileSource
from binlog_model.io.state import PARTIAL, RunState, finish_output, lock_state, recover_outputs
from binlog_model.resolve.assembler import AssemblerStats, StatementAssembler
from binlog_model.resolve.options import ResolveOptions
from binlog_model.runs.continuity import begin_run, shaping
from binlog_model.runs.output import OutputWriter, part_name
from binlog_model.runs.progress import ProgressDisplay, source_counters
from binlog_model.runs.runner import Checkpoint, CommitPolicy, Runner
from binlog_model.runs.source import Position, Resume
from binlog_model.sinks import sink_class
from schema_tracker.history import SchemaHistory

__all__ = ["IncrementalResult", "run_incremental"]


@dataclass
class IncrementalResult:
    """What one run did. ``output``: the file it committed (None when it produced no events)."""

    files: list[str] = field(default_factory=list)
    events: int = 0
    output: Path | None = None
    resumed_at: str | None = None
    last_commit_at: str | None = None
    commits: int = 0
    partial_tail_bytes: int = 0
    stats: AssemblerStats = field(default_factory=AssemblerStats)


def run_incremental(
    paths: Iterable[str | os.PathLike[str]],
    state_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    options: ResolveOptions,
    load_history: Callable[[], SchemaHistory],
    lenient_ddl: bool = False,
    database: str | None = None,
    fmt: str = "jsonl",
    snapshot_id: str | None = None,
    verify_checksum: bool = True,
    json_defaults: bool = False,
    json_values: str = "typed",
    zstd_level: int | None = None,
    commit_bytes: int = 64 << 20,
    on_commit: Callable[[RunState], None] | None = None,
    progress: str = "off",
) -> IncrementalResult:
    """One incremental run: new input of ``paths`` → a new output file in ``out_dir``, state in
    ``state_dir``. The options that shape the output (``options``, ``lenient_ddl``, ``database``,
    ``fmt``, ``json_defaults``, ``json_values``, whether ``zstd_level`` compresses) are compared with the
    state's (``runs.continuity.shaping``);
    ``load_history``: the starting schema of the first run (later runs use the state's). Raises
    ``StateMismatchError`` for a run that does not continue the state, ``StateLockedError`` while another
    run holds ``state_dir``, and the pipeline's errors. ``zstd_level``: the part is zstd frames at that level,
    one frame ending at each commit. ``progress``: the ``runs.progress`` mode (bar, log,
    off)."""
    sink = sink_class(fmt)
    out = Path(out_dir)
    # Held from before the state is read to the last commit: a concurrent run would recover away our output.
    with lock_state(state_dir):
        state = RunState.load(state_dir)
        include = [f"{db}.{t}.{c}" for (db, t), cols in options.always_include.items() for c in cols]
        given = shaping(source=options.source, always_include=include, lenient_ddl=lenient_ddl,
                        database=database, out=str(out.resolve()), events=options,
                        json_defaults=json_defaults, fmt=fmt, json_values=json_values,
                        compress=zstd_level is not None)
        begin_run(state, given, snapshot_id, lambda done: recover_outputs(state, Path(done)))
        history = SchemaHistory.from_json(state.history) if state.history is not None else load_history()
        # A sink that takes serialized events gets the compiled row builder's bytes, never parsed back.
        assembler = StatementAssembler(history, options, serialized=sink.takes_serialized)
        result = IncrementalResult(stats=assembler.stats)
        source = FileSource(paths, verify_checksum=verify_checksum,
                            partial_tail=options.allow_incomplete_tail)
        resume = Resume(Position.from_json(state.position), state.gtids, state.files)
        result.files = [s.path for s in source.plan(resume)]    # checked against the state before any output
        if state.position is not None:
            result.resumed_at = f"{state.position['file']}:{state.position['offset']}"
        name = part_name(state, fmt, zstd_level)
        partial = out / (name + PARTIAL)
        writer = OutputWriter(partial, fmt, json_defaults, json_values, zstd_level)
        run = _Commits(state, writer, name, result, on_commit)
        runner = Runner(source, assembler, resume, CommitPolicy(commit_bytes), writer.mark,
                        run.commit, files=state.files)
        display = ProgressDisplay("events", source_counters(source, lambda: assembler.stats.row_changes),
                                  mode=progress)
        try:
            with display:
                for event in runner.events():
                    writer.write(event)
                    result.events += 1
            result.partial_tail_bytes = assembler.stats.partial_tail_bytes
        except BinlogError:
            writer.close()
            recover_outputs(state, out)       # the committed steps stay, as a finished output file
            raise
        finally:
            writer.close()
        run.finish(out)
        return result


class _Commits:
    """The run's side of a commit: the output synced to the checkpoint's length, then the state replaced
    atomically; at the end the output file becomes a finished one."""

    def __init__(self, state: RunState, writer: OutputWriter, name: str, result: IncrementalResult,
                 on_commit: Callable[[RunState], None] | None) -> None:
        self.state = state
        self.writer = writer
        self.name = name
        self.result = result
        self.on_commit = on_commit

    def commit(self, checkpoint: Checkpoint) -> None:
        size = self.writer.commit_length(checkpoint.output_bytes)     # a frame ends here when compressed
        self.writer.sync()
        kill_point("output-synced")
        state = self.state
        state.position = checkpoint.position.to_json()
        state.history = checkpoint.history.to_json()
        state.open_output = {"file": self.name, "bytes": size} if size else None
        state.save()
        kill_point("state-saved")
        self.result.commits += 1
        self.result.last_commit_at = str(checkpoint.position)
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
        self.result.output = finish_output(out, partial, self.name, committed)
