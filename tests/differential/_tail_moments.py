"""Seeded moments of a running tail, in the data rather than in time (tests/differential/test_tail.py): a
moment is "the tail has committed a seeded number of bytes of binlog past where it stood", so the same seed
kills the tail at the same place of the workload however loaded the machine is. A fixed or random sleep
would land anywhere, or after the workload was over."""

from __future__ import annotations

import json
import random
import subprocess
import threading
from pathlib import Path

from tests._waiting import wait_until


def committed_position(work: Path) -> tuple[str, int] | None:
    """``(file, offset)`` of the tail's last commit in ``work/state``, None before the first."""
    try:
        position = json.loads((work / "state" / "state.json").read_text())["position"]
    except (OSError, ValueError, KeyError):
        return None
    return None if position is None else (str(position["file"]), int(position["offset"]))


def seeded_moment(work: Path, rng: random.Random, tail: subprocess.Popen[bytes], writer: threading.Thread,
                  most_bytes: int = 20_000) -> None:
    """Wait until the tail has committed ``rng``'s number of bytes (0..``most_bytes``) past its current
    commit (a later file counts as past), or the workload is over, or the tail exited."""
    start = committed_position(work) or ("", 0)
    target = (start[0], start[1] + rng.randint(0, most_bytes))

    def reached() -> bool:
        now = committed_position(work)
        return (now is not None and now >= target) or not writer.is_alive() or tail.poll() is not None

    wait_until(reached, f"the tail committing {target[1] - start[1]} bytes past {start}", timeout=300)
