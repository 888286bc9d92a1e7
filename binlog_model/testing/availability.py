"""Whether a missing test server is a skip or a failure, and which server kinds were missing in this run.

Strategy: every ``*_available()`` of the harnesses goes through ``server_availability``. Locally a server
kind that cannot be had (no ``mariadbd``, Debian sid unreachable, a pinned build gone) makes its tests
skip, and the kind and the reason are kept for the one summary line pytest prints at the end
(tests/conftest.py). Where servers are required (``BINLOG_MODEL_REQUIRE_SERVERS=1``, which .ci/run sets, or
the ``CI`` variable of a CI service) the same miss raises ``ServerRequiredError`` naming the kind: the run
fails and never turns green by skipping. A miss is remembered for the process, so the many callers of one
kind do not retry a fetch that already failed.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from binlog_model.testing.sqlserver import HarnessError

__all__ = ["REQUIRE_ENV", "ServerRequiredError", "missing_servers", "server_availability", "servers_required"]

REQUIRE_ENV = "BINLOG_MODEL_REQUIRE_SERVERS"

_missing: dict[str, str] = {}


class ServerRequiredError(HarnessError):
    """A server kind the run requires (CI) cannot be had; the message names it and why."""


def servers_required() -> bool:
    """True in CI: ``BINLOG_MODEL_REQUIRE_SERVERS`` or ``CI`` set to anything but empty, 0, false or no."""
    return any(os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")
               for name in (REQUIRE_ENV, "CI"))


def server_availability(kind: str, probe: Callable[[], tuple[bool, str]]) -> tuple[bool, str]:
    """``probe()`` (``(True, path)`` or ``(False, reason)``) for the server kind ``kind``, remembered when it
    fails. Raises ``ServerRequiredError`` instead of returning False when servers are required."""
    reason = _missing.get(kind)
    if reason is None:
        ok, found = probe()
        if ok:
            return True, found
        reason = _missing[kind] = " ".join(found.split())       # one line, for the summary
    if servers_required():
        raise ServerRequiredError(f"{kind} is required in this run ({REQUIRE_ENV} or CI is set) but "
                                  f"cannot be had: {reason}")
    return False, reason


def missing_servers() -> dict[str, str]:
    """The server kinds found missing in this process so far, with the reason of each."""
    return dict(_missing)
