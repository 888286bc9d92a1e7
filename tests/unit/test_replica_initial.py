"""``replica.initial._typed_batch``: a column converted whole by Arrow equals the same values converted one by
one by ``server_value``, edge values included (out of range, too many digits, a zero date's text, bytes)."""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any

import pyarrow as pa

from binlog_model.replica.initial import _typed_batch, server_value
from binlog_model.replica.layout import TableLayout
from binlog_model.spark.typed_values import InvalidValue
from schema_tracker.history import SchemaHistory

DDL = ("CREATE TABLE t (id INT PRIMARY KEY, ti TINYINT, ub BIGINT UNSIGNED, d DECIMAL(6,2), f DOUBLE, "
       "s VARCHAR(10), b VARBINARY(4), dt DATETIME(6), ts TIMESTAMP(3) NULL, da DATE, e ENUM('a','b'))")


def _layout() -> TableLayout:
    history = SchemaHistory()
    history.apply(DDL, "d")
    table = history.catalog.table("d", "t")
    assert table is not None
    return TableLayout.of(table)


def _one_by_one(layout: TableLayout, rows: list[tuple[Any, ...]]) -> tuple[list[list[Any]], list[list[str]]]:
    columns: list[list[Any]] = [[] for _ in layout.columns]
    invalid: list[list[str]] = []
    for row in rows:
        bad = []
        for i, (value, column, kind) in enumerate(zip(row, layout.columns, layout.types, strict=True)):
            try:
                typed = server_value(value, column, kind)
            except InvalidValue:
                typed = None
                bad.append(column.name)
            columns[i].append(pa.array([typed], type=kind)[0].as_py())
        invalid.append(bad)
    return columns, invalid


def _check(rows: list[tuple[Any, ...]]) -> None:
    layout = _layout()
    table = _typed_batch(layout, rows, "mysql-bin.000001:4", {})
    columns, invalid = _one_by_one(layout, rows)
    for i, column in enumerate(layout.columns):
        assert table.column(column.name).to_pylist() == columns[i], column.name
    assert table.column("binlog_invalid").to_pylist() == invalid


def test_plain_values_are_converted_whole_as_one_by_one() -> None:
    at = datetime.datetime(2024, 1, 2, 3, 4, 5, 123456)
    _check([(1, -128, 18446744073709551615, Decimal("1234.50"), 1.5, "é", b"\x00\xff", at, at,
             datetime.date(2024, 1, 2), "b"),
            (2, None, 0, Decimal("-0.01"), None, "", None, None, None, None, None)])


def test_values_a_type_cannot_hold_fall_back_to_one_by_one() -> None:
    _check([(1, 300, 5, Decimal("1.234"), 1.0, "x", b"", "0000-00-00 00:00:00", "0000-00-00 00:00:00",
             "0000-00-00", "a"),
            (2, 2, 6, Decimal("99999.99"), 2.0, b"bytes", b"x", None, None, None, "a")])


def test_an_empty_chunk() -> None:
    _check([])
