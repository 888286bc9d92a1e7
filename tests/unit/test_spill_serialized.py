"""The transaction buffer holds events as messages or as serialized bytes (the compiled builder's pieces),
in memory or spilled to its temporary file, and gives them back in order in the form asked for."""

from __future__ import annotations

import pytest

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.resolve.spill import TransactionBuffer


def _events(n: int) -> list[pb.BinlogEvent]:
    out = []
    for i in range(n):
        e = pb.BinlogEvent(db="d", table=f"t{i}", row_index=i * 300)
        e.rows.add(row_index=i * 300).after.add(name="x" * i).value.int_value = -i
        out.append(e)
    return out


@pytest.mark.parametrize("spill_bytes", [1 << 30, 1, 40])
@pytest.mark.parametrize("serialized", [False, True])
def test_mixed_items_drain_in_order_in_the_asked_form(spill_bytes: int, serialized: bool) -> None:
    events = _events(7)
    buffer = TransactionBuffer(spill_bytes, serialized=serialized)
    for i, e in enumerate(events):
        buffer.append(e.SerializeToString() if i % 2 else e)
    assert len(buffer) == 7
    out = list(buffer.drain())
    if serialized:
        assert out == [e.SerializeToString() for e in events]
    else:
        assert out == events
    assert len(buffer) == 0


@pytest.mark.parametrize("serialized", [False, True])
def test_truncate_inside_the_spilled_part_keeps_the_first(serialized: bool) -> None:
    events = _events(6)
    buffer = TransactionBuffer(1, serialized=serialized)   # every append spills
    for i, e in enumerate(events):
        buffer.append(e.SerializeToString() if i % 2 else e)
    buffer.truncate(3)
    out = list(buffer.drain())
    assert out == [e.SerializeToString() if serialized else e for e in events[:3]]
