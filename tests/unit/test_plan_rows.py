"""resolve.plan + resolve.rows on real binlogs: the RowPlan a TABLE_MAP gives, and the Python row builder
reading it reproduces the assembler's rows (the seam the compiled builder plugs into)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.io.files import iter_events
from binlog_model.position import EventPosition
from binlog_model.resolve.assembler import StatementAssembler
from binlog_model.resolve.options import ImageMode, ResolveOptions
from binlog_model.resolve.plan import ColumnMark, PlanKind, build_plan
from binlog_model.resolve.rows import python_row_builders
from binlog_model.wire.rows import RowsEvent
from tests._paths import REPO

GOLDEN = REPO / "fixtures" / "golden" / "mariadb"
ALL_TYPES = GOLDEN / "all_types" / "binlogs" / "mysql-bin.000001"


def _rows_events(path: Any, history: Any) -> Iterator[tuple[RowsEvent, Any, EventPosition]]:
    for event in iter_events(path):
        if isinstance(event, RowsEvent):
            h = event.header
            position = EventPosition(os.path.basename(h.file), h.offset)
            table_map = event.table_map
            yield event, history.at(position).table(table_map.schema, table_map.table), position


@pytest.mark.parametrize("image", list(ImageMode))
def test_python_builder_on_a_plan_gives_the_assembler_rows(image: ImageMode) -> None:
    for scenario in ("all_types", "pk_updates", "no_primary_key"):
        path = GOLDEN / scenario / "binlogs" / "mysql-bin.000001"
        assembler = StatementAssembler(None, ResolveOptions(image=image))
        expected = [row for e in assembler.assemble(iter_events(path)) for row in e.rows]
        out = pb.BinlogEvent()
        for event, schema, position in _rows_events(path, assembler.history):
            plan = build_plan(event.table_map, schema, (), position)
            python_row_builders(plan, image).for_kind(event.kind)(out.rows, event.rows, 0)
        for row in (*expected, *out.rows):
            row.ClearField("row_index")       # statement-wide in the assembler, from 0 per call here
        assert len(expected) > 10 and list(out.rows) == expected, scenario


def test_plan_describes_each_column_as_plain_data() -> None:
    replay = StatementAssembler(None)
    list(replay.assemble(iter_events(ALL_TYPES)))
    kinds = set()
    for event, schema, position in _rows_events(ALL_TYPES, replay.history):
        plan = build_plan(event.table_map, schema, (), position)
        assert (plan.db, plan.table) == (schema.db, schema.name)
        assert [c.name for c in plan.columns] == [c.name for c in schema.columns]
        assert [c.index for c in plan.columns] == list(range(len(schema.columns)))
        keys = [k.lower() for k in schema.primary_key]
        assert plan.primary_key == tuple(i for k in keys for i, c in enumerate(schema.columns)
                                         if c.name.lower() == k)
        for column, tracked in zip(plan.columns, schema.columns, strict=True):
            kinds.add(column.kind)
            assert column.mark == ColumnMark.USER and column.unsigned == tracked.unsigned
            assert column.pk_position == (plan.primary_key.index(column.index)
                                          if column.index in plan.primary_key else -1)
            assert column.always == (column.index in plan.always)
            if column.kind == PlanKind.TEXT:
                assert column.charset                     # a text column always names its charset
            if tracked.data_type in ("enum", "set"):
                assert column.kind == (PlanKind.ENUM if tracked.data_type == "enum" else PlanKind.SET)
                assert column.labels == tracked.enum_values
            if tracked.data_type == "bigint" and tracked.unsigned:
                assert (column.kind, column.int_bits) == (PlanKind.UINT64, 64)
            if tracked.data_type == "binary":
                assert column.kind == PlanKind.BYTES and column.pad_to == tracked.length
    assert kinds >= {PlanKind.INT, PlanKind.LONG, PlanKind.UINT64, PlanKind.TEXT, PlanKind.DECIMAL,
                     PlanKind.DATETIME, PlanKind.ENUM, PlanKind.SET, PlanKind.BYTES}
