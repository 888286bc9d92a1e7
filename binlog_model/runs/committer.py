"""A run's commits made durable on a thread of their own, one at a time, in order.

Strategy: what a commit waits on (fsyncs of the output and the spool, the replica's Delta MERGEs, the
state's atomic replacement) runs on the committer thread while the main thread decodes on. ``submit``
waits for the previous commit first, so a state names only what was made durable before it, and the
states follow one another in order. delta-rs and the fsyncs release the GIL, so on two cores the decoding
and the commit overlap. ``tail`` and ``apply`` (files and live) commit through it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["Committer"]


class Committer:
    """Commits run on a thread of their own, one at a time (see the module docstring). ``wait`` re-raises
    a commit's error on the calling thread (at the next commit, or when the run ends)."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def submit(self, job: Callable[[], None]) -> None:
        self.wait()

        def run() -> None:
            try:
                job()
            except BaseException as err:    # handed to the main thread by wait()
                self._error = err
        self._thread = threading.Thread(target=run, name="binlog-model-commit", daemon=True)
        self._thread.start()

    def busy(self) -> bool:
        """A commit is still being made."""
        return self._thread is not None and self._thread.is_alive()

    def run(self, job: Callable[[], None]) -> None:
        """A commit made here, on the calling thread, after the previous one."""
        self.wait()
        job()

    def wait(self) -> None:
        """The last commit submitted is durable (or its error raised)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def abandon(self) -> None:
        """The run failed on the main thread: the commit in flight ends (its own error is dropped, the main
        thread's is the one to report) before the caller lets go of the state."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._error = None
