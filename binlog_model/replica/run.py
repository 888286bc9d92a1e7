"""``apply`` runs: binlog files, or a live server, into the replica's Delta tables, with a state.

Strategy: the same machinery as ``events --state`` and ``tail`` (``RunState`` locked for the run,
``begin_run``, the one runner and its commit points), with a ``ReplicaWriter`` where they have an output
file. At each of the runner's commits the writer applies the events before the commit point to the Delta
tables (each table's commit carries its transaction version), then the state is saved. Both run on the
run's committer thread (``runs.committer``) while the next events are decoded. A run killed between the
two resumes from the older state, and the tables' transaction versions make the changes they hold already
be skipped: every change is applied exactly once.

The state's ``source.token`` (made on its first run, as the tail's) names the replica's Delta app id,
``binlog-model-<token>``: tables written by another state are refused.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from binlog_model.errors import ConfigError
from binlog_model.faults import kill_point
from binlog_model.gtid import GtidSet
from binlog_model.io.file_source import FileSource, format_description_of
from binlog_model.io.files import base_name, binlog_size
from binlog_model.io.state import RunState, lock_state
from binlog_model.position import file_sequence
from binlog_model.replica.initial import InitialSnapshot
from binlog_model.replica.writer import ApplyStats, ReplicaWriter
from binlog_model.resolve.assembler import StatementAssembler
from binlog_model.resolve.options import ResolveOptions
from binlog_model.resolve.table_filter import TableFilter
from binlog_model.runs.collector import fewer_collections
from binlog_model.runs.committer import Committer
from binlog_model.runs.continuity import begin_run, shaping
from binlog_model.runs.progress import ProgressDisplay, source_counters
from binlog_model.runs.runner import Checkpoint, CommitPolicy, Runner
from binlog_model.runs.source import Position, Resume
from binlog_model.sinks.delta import DeltaReplica
from schema_tracker.history import SchemaHistory

__all__ = ["ApplyResult", "LiveReplicaOutput", "app_id_of", "apply_shaping", "run_apply_files"]


@dataclass
class ApplyResult:
    files: list[str] = field(default_factory=list)
    resumed_at: str | None = None
    position: str | None = None
    commits: int = 0
    stats: ApplyStats = field(default_factory=ApplyStats)
    unmatched_table_patterns: list[str] = field(default_factory=list)


def app_id_of(state: RunState) -> str:
    """The Delta app id of the state's replica (its token is made on the first run)."""
    source = dict(state.source or {})
    if "token" not in source:
        source["token"] = secrets.token_hex(4)
        state.source = source
    return f"binlog-model-{source['token']}"


def apply_shaping(source: str, target: str, *, lenient_ddl: bool, database: str | None,
                  tables: TableFilter | None = None) -> dict[str, Any]:
    """The options an ``apply`` state compares between runs."""
    return shaping(source=source, always_include=(), lenient_ddl=lenient_ddl, database=database,
                   out=f"delta:{target}", command="apply", tables=tables)


def run_apply_files(
    paths: Iterable[str | os.PathLike[str]],
    state_dir: str | os.PathLike[str],
    target: str | os.PathLike[str],
    *,
    options: ResolveOptions,
    load_history: Callable[[], SchemaHistory],
    shaping_options: dict[str, Any],
    snapshot_id: str | None = None,
    verify_checksum: bool = True,
    commit_bytes: int = 64 << 20,
    select: Callable[[str, str], bool] | None = None,
    checkpoint_every: int = 100,
    progress: str = "off",
    initial: Callable[[DeltaReplica], InitialSnapshot] | None = None,
    lenient_ddl: bool = False,
) -> ApplyResult:
    """One run over the new input of ``paths`` into the replica at ``target``; the state in ``state_dir``.
    ``initial``: on a new state, writes the tables' initial data (a dump's rows, ``dump.load_initial_dump``)
    and says where it was taken; the run starts there. Raises ``StateMismatchError``/``StateLockedError``
    as ``events --state``, ``ReplicaError`` for a change that cannot be applied exactly,
    ``ReplicaOwnerError`` for a target another state writes."""
    with lock_state(state_dir), fewer_collections():
        state = RunState.load(state_dir)
        begin_run(state, shaping_options, snapshot_id, lambda done: None)
        fresh = state.source is None
        app_id = app_id_of(state)
        if fresh:
            state.save()        # the token names the tables' app id: saved before any table is written
        replica = DeltaReplica(target, app_id, checkpoint_every=checkpoint_every)
        paths = list(paths)
        if initial is not None and state.fresh:
            _start_at(state, paths, initial(replica), lenient_ddl)
        history = SchemaHistory.from_json(state.history) if state.history is not None else load_history()
        # serialized: the writer reads the row images from the events' bytes in C (``TableBatch.add``)
        assembler = StatementAssembler(history, options, serialized=True)
        committer = Committer()
        writer = ReplicaWriter(replica, lambda: assembler.history, select, settle=committer.wait)
        result = ApplyResult(stats=writer.stats)
        source = FileSource(paths, verify_checksum=verify_checksum,
                            partial_tail=options.allow_incomplete_tail)
        resume = Resume(Position.from_json(state.position), state.gtids, state.files)
        result.files = [s.path for s in source.plan(resume)]
        if state.position is not None:
            result.resumed_at = result.position = f"{state.position['file']}:{state.position['offset']}"

        def commit(checkpoint: Checkpoint) -> None:
            committer.wait()        # one commit at a time: the previous one's state is saved from here on
            merge = writer.detach(checkpoint.output_bytes, str(checkpoint.position), str(checkpoint.gtids))
            # the state document as the run is at the commit point (its GTIDs, files and history are the
            # runner's objects, which move on with the decoding)
            update = {"position": checkpoint.position.to_json(), "history": checkpoint.history.to_json()}
            document = state.encoded(**update)

            def durable() -> None:
                merge()             # the tables first: the state then names what they hold
                state.save(document)
                kill_point("state-committed")
                for name, value in update.items():      # the state in memory says what is on disk
                    setattr(state, name, value)
                result.commits += 1
                result.position = str(checkpoint.position)
            committer.submit(durable)

        runner = Runner(source, assembler, resume, CommitPolicy(commit_bytes), lambda: writer.size, commit,
                        files=state.files)
        display = ProgressDisplay("apply", source_counters(source, lambda: assembler.stats.row_changes),
                                  mode=progress)
        try:
            with display:
                for event in runner.events():
                    writer.write(event)
        except BaseException:
            committer.abandon()
            raise
        committer.wait()
        writer.close()
        result.unmatched_table_patterns = assembler.stats.unmatched_table_patterns
        state.runs += 1
        state.save()
        return result


def _start_at(state: RunState, paths: list[str | os.PathLike[str]], taken: InitialSnapshot,
              lenient_ddl: bool) -> None:
    """A new state starts where the initial data was taken: the binlog files given before that position's
    file count as done, and the state is saved (the initial load's commit: a run killed before it loads
    the initial data again)."""
    names = {base_name(p): p for p in paths}
    if taken.file not in names:
        raise ConfigError(f"the initial data was taken at {taken.file}:{taken.offset}, but {taken.file} is "
                          f"not among the binlog files given: give the files from {taken.file} on")
    here = file_sequence(taken.file)
    state.files = {name: binlog_size(path) for name, path in names.items() if file_sequence(name) < here}
    state.position = Position(taken.file, taken.offset, format_description_of(names[taken.file])).to_json()
    state.history = taken.history(lenient_ddl).to_json()
    state.gtids = GtidSet.parse(taken.gtids)
    state.save()


class LiveReplicaOutput:
    """The tail's output part, for ``apply`` from a live server: events go to the ``ReplicaWriter``, and a
    commit (``checkpoint``, called by the tail) takes them into the batches and gives back their merges,
    which the tail runs on its committer thread before it saves the state. It records no bytes: the tail
    commits only where every event taken lies before the commit point."""

    def __init__(self, writer: ReplicaWriter) -> None:
        self.writer = writer

    size = stored_size = 0

    def mark(self) -> int:
        return 0

    def commit_length(self, mark: int) -> int:
        return 0

    def write(self, event: Any) -> None:
        self.writer.write(event)

    def checkpoint(self, checkpoint: Checkpoint) -> Callable[[], None]:
        return self.writer.detach(self.writer.size, str(checkpoint.position), str(checkpoint.gtids))

    def flushed_fd(self) -> int | None:
        return None

    def sync(self) -> None:
        pass

    def close(self) -> None:
        self.writer.close()
