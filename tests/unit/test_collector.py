"""``runs.collector.fewer_collections``: a run's collector pace, and the caller's put back after it."""

from __future__ import annotations

import gc

import pytest

from binlog_model.runs.collector import RUN_THRESHOLDS, fewer_collections


@pytest.fixture
def thresholds():
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_a_run_collects_less_often_and_puts_the_callers_pace_back(thresholds):
    gc.set_threshold(700, 10, 10)
    with fewer_collections():
        assert gc.get_threshold() == RUN_THRESHOLDS
    assert gc.get_threshold() == (700, 10, 10)


def test_a_callers_slower_pace_is_kept_and_a_failed_run_restores_it(thresholds):
    gc.set_threshold(100_000, 5, 50)
    with pytest.raises(RuntimeError), fewer_collections():
        assert gc.get_threshold() == (100_000, RUN_THRESHOLDS[1], 50)
        raise RuntimeError("the run failed")
    assert gc.get_threshold() == (100_000, 5, 50)


def test_cycles_are_still_collected_during_a_run(thresholds):
    class Node:
        pass

    with fewer_collections():
        gc.collect()
        for _ in range(RUN_THRESHOLDS[0] * 3):
            a, b = Node(), Node()
            a.other, b.other = b, a     # a cycle: only the collector frees it
        del a, b
        # three thresholds' worth of young objects: collections ran during the loop, so at most one
        # threshold's worth of the cycles is still waiting
        assert sum(isinstance(o, Node) for o in gc.get_objects()) <= 2 * RUN_THRESHOLDS[0]
