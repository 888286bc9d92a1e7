"""Named kill points for the kill-anywhere tests: ``kill_point("publish-move")`` kills this process with
SIGKILL when ``BINLOG_MODEL_KILL_AT`` names that point, so a test can stop a command at an exact step of its
commit (the state saved, the n-th file moved, the clean-up) as well as at random moments.

``BINLOG_MODEL_KILL_AT=NAME`` kills at the first pass through ``NAME``; ``NAME:N`` at the N-th. Without the
variable a kill point costs one dictionary lookup. The points are only on commit paths, never per event.
"""

from __future__ import annotations

import os
import signal

__all__ = ["KILL_AT", "kill_point"]

KILL_AT = "BINLOG_MODEL_KILL_AT"
_passes: dict[str, int] = {}


def kill_point(name: str) -> None:
    spec = os.environ.get(KILL_AT)
    if not spec:
        return
    wanted, _, nth = spec.partition(":")
    if wanted != name:
        return
    _passes[name] = _passes.get(name, 0) + 1
    if _passes[name] >= int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)
