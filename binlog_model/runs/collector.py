"""The cyclic garbage collector's pace for a run whose memory holds many live objects (``apply``).

Why: ``apply`` keeps each table's changes since the last commit as Python objects (``replica.batch``: a
change per key, each with its list of values), hundreds of thousands of them between two commits. With
CPython's default thresholds (700, 10, 10) the collector walked them again and again while they grew: on
the 200k + 200k benchmark binlog, 15 full collections took 3.9 s and the young and middle ones 2.6 s of a
14 s run, and found almost nothing to free (these objects hold no reference cycles; reference counting
frees them at the commit). ``fewer_collections`` runs a young collection every 50,000 allocations rather
than 700, a middle one every 20 of those, and considers a full one after 20 middle ones (CPython still
runs it only once the objects that survived since the last one are a quarter of the old ones). Cycles
are still found, later; what waits for the next young collection is at most 50,000 objects.

The thresholds are the process's: a run sets them while it runs and puts the caller's back after it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["RUN_THRESHOLDS", "fewer_collections"]

#: (allocations between young collections, young collections between middle ones, middle between full)
RUN_THRESHOLDS = (50_000, 20, 20)


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the block with ``RUN_THRESHOLDS`` (never below the caller's own), then put the caller's back."""
    before = gc.get_threshold()
    gc.set_threshold(*(max(ours, theirs) for ours, theirs in zip(RUN_THRESHOLDS, before, strict=True)))
    try:
        yield
    finally:
        gc.set_threshold(*before)
