"""Waiting for a condition in tests: poll it with a generous deadline instead of sleeping a fixed time and
hoping the other thread or process got there (a loaded CI machine makes any fixed sleep too short)."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(condition: Callable[[], object], what: str, timeout: float = 60.0,
               interval: float = 0.01) -> None:
    """Return once ``condition()`` is true; ``AssertionError`` naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:g} s")
        time.sleep(interval)
