"""A TABLE_MAP whose bytes the decoder has parsed before is reused, with its own header (real binlogs)."""

from __future__ import annotations

import dataclasses
from collections import Counter

from binlog_model.io.files import iter_events
from binlog_model.wire.table_map import TableMapEvent, parse_table_map_event
from tests._paths import REPO

GOLDEN = REPO / "fixtures" / "golden" / "mariadb"


def test_repeated_table_maps_keep_their_own_position_and_parse_alike() -> None:
    maps = [e for path in sorted((GOLDEN / "large_statement" / "binlogs").iterdir())
            for e in iter_events(path) if isinstance(e, TableMapEvent)]
    offsets = [m.header.offset for m in maps]
    assert len(set(offsets)) == len(offsets)          # every one where it is, not where it was first seen
    repeats = Counter((m.table_id, m.schema, m.table) for m in maps)
    assert max(repeats.values()) > 1                  # the fixture logs the same TABLE_MAP more than once
    by_table: dict[tuple[int, str, str], TableMapEvent] = {}
    for m in maps:
        first = by_table.setdefault((m.table_id, m.schema, m.table), m)
        if first is not m:
            # Everything but the header equals the first parse; the parsed tuples are shared, not re-made.
            assert dataclasses.replace(m, header=first.header) == first
            assert m.column_types is first.column_types


def test_a_reused_table_map_equals_a_fresh_parse() -> None:
    path = sorted((GOLDEN / "large_statement" / "binlogs").iterdir())[0]
    raw = path.read_bytes()
    for m in (e for e in iter_events(path) if isinstance(e, TableMapEvent)):
        h = m.header
        body = memoryview(raw)[h.offset + 19:h.offset + h.event_size - 4]     # header, CRC32 footer
        fresh = parse_table_map_event(h, body, 8, mariadb=True)
        assert fresh == m
