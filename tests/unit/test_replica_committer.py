"""``apply``'s merges on the committer thread, while the next events are decoded (``runs.committer``).

On the committed MariaDB golden binlog of schema changes between row changes, archive-mode ``apply``
commits at every transaction (``commit_bytes=1``) or every few, with each MERGE slowed down (a sleep
before the real delta-rs merge), so the decoding runs on while a merge is in flight and DDLs arrive during
one. The tables must equal the scenario's final tables after the whole binlog (worked out by hand from
the scenario's SQL), which they would not if a DDL read or reshaped a table before its merge landed.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from binlog_model.replica.writer import ReplicaWriter
from binlog_model.resolve.options import ResolveOptions
from binlog_model.sinks.delta import DeltaReplica, user_columns
from schema_tracker.history import SchemaHistory
from tests._paths import REPO

pytest.importorskip("deltalake")

BINLOGS = REPO / "fixtures" / "golden" / "mariadb" / "ddl_between_dml" / "binlogs"


# The tables after the whole scenario, worked out by hand from fixtures/scenarios/ddl_between_dml.sql
# (not from our output): `humans` in its final column order (name, id, age_years, contact, rowver)
EXPECTED = {
    ("ddl", "humans"): Counter([
        ("ann2", 1, 31, "ann@example.com", 1), ("cid", 3, 41, "cid@example.com", 1), ("dee", 4, 22, None, 2),
        ("eve", 5, 50, "eve@example.com", 0),
        ("fay", 6, 9000000000, "a much longer contact text than before!", 0),
        ("gus", 7, 7, "g!", 9), ("hal", 8, 80, None, 0), ("ivy", 9, None, "café", 0)]),
    ("ddl", "moved"): Counter(),
}


def _delta(target: Path, app_id: str) -> dict[tuple[str, str], Counter[tuple[Any, ...]]]:
    replica = DeltaReplica(target, app_id)
    found = {}
    for db, table in replica.tables():
        rows = user_columns(replica.read(db, table)).to_pylist()
        found[(db, table)] = Counter(tuple(row.values()) for row in rows)
    return found


@pytest.mark.parametrize("commit_bytes", [1, 700, 2000])
def test_merges_run_on_the_committer_thread_while_events_are_taken(tmp_path: Path, commit_bytes: int,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    merges: list[tuple[str, float, float]] = []
    writes: list[float] = []
    merge, write = DeltaReplica.merge, ReplicaWriter.write

    def slow_merge(self: DeltaReplica, *args: Any, **kwargs: Any) -> None:
        start = time.monotonic()
        time.sleep(0.05)            # hand-made delay: a merge still running when the next events come
        merge(self, *args, **kwargs)
        merges.append((threading.current_thread().name, start, time.monotonic()))

    def timed_write(self: ReplicaWriter, event: Any) -> None:
        writes.append(time.monotonic())
        write(self, event)
    monkeypatch.setattr(DeltaReplica, "merge", slow_merge)
    monkeypatch.setattr(ReplicaWriter, "write", timed_write)

    target = tmp_path / "replica"
    result = _run(tmp_path, target, commit_bytes)
    assert result.commits > 3 and result.stats.row_changes > 20
    # the commits' merges on the committer thread (a batch merged before a DDL of its table, on the main
    # thread, after the merge in flight ended)
    assert "binlog-model-commit" in {name for name, _, _ in merges} <= {"binlog-model-commit", "MainThread"}
    # the decoding went on during the merges: events were taken while one was in flight (at every
    # transaction's commit the next one's events come during its 50 ms; with fewer commits, a DDL waits)
    assert commit_bytes > 1 or any(start < at < end for _, start, end in merges for at in writes)

    app_id = next(iter(_app_ids(tmp_path / "state")))
    assert _delta(target, app_id) == EXPECTED
    # the Delta schema has the source's order after MODIFY … FIRST / AFTER (delta-rs keeps an old order)
    assert DeltaReplica(target, app_id).schema("ddl", "humans").names[:5] == [
        "name", "id", "age_years", "contact", "rowver"]

    # the state names the last commit, and a second run over the same input applies nothing again
    again = _run(tmp_path, target, commit_bytes)
    assert again.resumed_at == result.position and again.stats.row_changes == 0
    assert _delta(target, app_id) == EXPECTED


def test_a_batch_is_released_before_its_merge_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch's changes are in its MERGE source once that is built: the MERGE, which may run while the
    next batch fills, does not hold them as well (the peak memory of a large table's commits)."""
    from binlog_model.replica.batch import TableBatch

    built: list[TableBatch] = []
    held: list[int] = []
    keyed_rows, merge = TableBatch.keyed_rows, DeltaReplica.merge

    def recording_keyed_rows(self: TableBatch) -> Any:
        built.append(self)
        return keyed_rows(self)

    def checking_merge(self: DeltaReplica, layout: Any, source: Any, at: str, gtids: str) -> None:
        held.append(sum(len(batch.changes) for batch in built))
        merge(self, layout, source, at, gtids)
    monkeypatch.setattr(TableBatch, "keyed_rows", recording_keyed_rows)
    monkeypatch.setattr(DeltaReplica, "merge", checking_merge)

    _run(tmp_path, tmp_path / "replica", 700)
    assert len(held) > 3 and held == [0] * len(held)
    app_id = next(iter(_app_ids(tmp_path / "state")))
    assert _delta(tmp_path / "replica", app_id) == EXPECTED


def test_a_failed_merge_is_raised_and_the_state_does_not_pass_it(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from binlog_model.io.state import RunState
    failed: list[str] = []
    merge = DeltaReplica.merge

    def failing_merge(self: DeltaReplica, layout: Any, source: Any, at: str, gtids: str) -> None:
        if len(failed) == 2:
            failed.append(at)
            raise OSError(28, "No space left on device")      # hand-made: the store refuses the third
        failed.append("")
        merge(self, layout, source, at, gtids)
    monkeypatch.setattr(DeltaReplica, "merge", failing_merge)

    with pytest.raises(OSError, match="No space left"):
        _run(tmp_path, tmp_path / "replica")
    state = RunState.load(tmp_path / "state")
    assert state.position is not None and len(failed) == 3
    # the state names a commit before the merge that failed, never one past it
    file, _, offset = failed[2].rpartition(":")
    assert state.position["file"] == file and state.position["offset"] < int(offset)

    monkeypatch.setattr(DeltaReplica, "merge", merge)
    _run(tmp_path, tmp_path / "replica")
    app_id = next(iter(_app_ids(tmp_path / "state")))
    assert _delta(tmp_path / "replica", app_id) == EXPECTED


def _run(tmp_path: Path, target: Path, commit_bytes: int = 1) -> Any:
    """Archive-mode ``apply`` of the binlog, committing after ``commit_bytes`` (1: every transaction)."""
    from binlog_model.replica.run import apply_shaping, run_apply_files

    return run_apply_files(sorted(BINLOGS.iterdir()), tmp_path / "state", target,
                           options=ResolveOptions(image="full"), load_history=lambda: SchemaHistory(None),
                           shaping_options=apply_shaping(str(BINLOGS), str(target), lenient_ddl=False,
                                                         database=None), commit_bytes=commit_bytes)


def _app_ids(state_dir: Path) -> set[str]:
    from binlog_model.io.state import RunState
    from binlog_model.replica.run import app_id_of
    return {app_id_of(RunState.load(state_dir))}
