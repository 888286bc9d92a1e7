"""The commit protocol of the runs that publish staged files (``resolve --state``, ``resolve --stream``), on
a local disk or an object store.

Strategy: a run writes its files into ``OUT/_staging/<run>/``, where no reader of ours looks. Committing is:

1. the state (``io.state.RunState``, replaced atomically) records what the run did together with its commit
   marker ``publishing = <run>``: from here on the run is committed;
2. ``sinks.publish.publish`` moves the staged files into the table folders and writes the manifest, the
   commit point for readers;
3. the state drops the marker;
4. the staging area is deleted.

A run killed before step 1 leaves a staging folder that the next run deletes. Killed after it, its publish
is finished by the next run's ``recover``, which ``runs.continuity.begin_run`` calls before it compares any
option (finishing a commit is never refused), so the output equals one uninterrupted run's. The state
directory is local and locked (``io.state.lock_state``) for the whole run; ``OUT`` may be any
``pyarrow.fs`` URI. ``faults.kill_point`` names each step for the kill tests.
"""

from __future__ import annotations

import os

from binlog_model.faults import kill_point
from binlog_model.io.files import is_uri, name_like, output_filesystem
from binlog_model.io.state import RunState
from binlog_model.sinks.publish import drop_attempts, drop_tree, publish

__all__ = ["STAGING", "StagedOutput"]

STAGING = "_staging"


class StagedOutput:
    """An output folder that runs add staged files to. ``out``: a local folder or a URI."""

    def __init__(self, out: str | os.PathLike[str]) -> None:
        self.fs, self.root = output_filesystem(out)
        if not is_uri(out):
            self.root = os.path.realpath(self.root)     # as ``events --state`` records its --out
        #: ``out`` as the user named it (a URI stays a URI), for messages and Spark tasks
        self.name = name_like(out, self.root)

    def staging(self, run: str) -> str:
        """Where run ``run`` stages its files, as a name Spark tasks can write to."""
        return name_like(self.name, self.staging_path(run))

    def staging_path(self, run: str) -> str:
        """``staging(run)`` as a path inside ``fs``."""
        return f"{self.root}/{STAGING}/{run}"

    def recover(self, state: RunState) -> None:
        """Finish the publish a killed run committed, and delete staging folders no state commits."""
        if state.publishing is not None:
            publish(self.fs, self.staging_path(state.publishing), self.root, state.publishing)
            state.publishing = None
            state.save()
        drop_tree(self.fs, f"{self.root}/{STAGING}")

    def commit(self, state: RunState, run: str) -> None:
        """Steps 1-4 of the module's docstring for the staged run ``run``; ``state`` already holds what the
        run did."""
        drop_attempts(self.staging_path(run), self.fs)
        state.publishing = run
        state.save()
        kill_point("state-committed")
        publish(self.fs, self.staging_path(run), self.root, run)
        state.publishing = None
        state.save()
        kill_point("published")
        drop_tree(self.fs, f"{self.root}/{STAGING}", ignore_errors=True)
