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
    raw: list[Any] = [list(c) for c in zip(*rows, strict=True)] if rows else [[] for _ in layout.columns]
    table = _typed_batch(layout, raw, len(rows), "mysql-bin.000001:4", {})
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


def _chunks(n: int, fail: bool = False) -> Any:
    """``read_result_columns``' chunks for the table of DDL (hand-built server text)."""
    from binlog_model.io.result_set import ResultColumns

    layout = _layout()
    for start in range(0, n, 3):
        rows = range(start, min(n, start + 3))
        texts = {"id": [str(i).encode() for i in rows], "ti": [b"1" for _ in rows],
                 "ub": [b"18446744073709551615" for _ in rows], "d": [b"12.50" for _ in rows],
                 "f": [b"1.5" for _ in rows], "s": ["é".encode() for _ in rows], "b": [b"\x00" for _ in rows],
                 "dt": [b"2024-01-02 03:04:05.000001" for _ in rows], "ts": [None for _ in rows],
                 "da": [b"0000-00-00" for _ in rows], "e": [b"a" for _ in rows]}
        decoders: list[Any] = [("utf8" if c.name in ("s", "e") else None if c.name == "b" else "ascii", None)
                               for c in layout.columns]
        yield ResultColumns([pa.array(texts[c.name], pa.binary()) for c in layout.columns], decoders)
        if fail:
            from binlog_model.errors import ReplicationError
            raise ReplicationError("--initial live: d.t: a malformed row packet from the server")


def test_a_table_is_loaded_in_one_commit_and_a_reading_error_is_raised_as_itself(tmp_path: Any) -> None:
    import pytest

    from binlog_model.errors import ReplicationError
    from binlog_model.replica.initial import InitialTable
    from binlog_model.sinks.delta import DeltaReplica

    pytest.importorskip("deltalake")
    from deltalake import DeltaTable

    replica = DeltaReplica(tmp_path / "r", "app")
    table = InitialTable(replica, _layout(), "mysql-bin.000001:4", "")
    assert table.load(_chunks(10)) == 10
    delta = DeltaTable(str(tmp_path / "r" / "d" / "t"))
    assert delta.version() == 0 and len(delta.history()) == 1
    got = delta.to_pyarrow_table().sort_by("id")
    assert got.column("id").to_pylist() == list(range(10))
    assert got.column("s").to_pylist() == ["é"] * 10
    assert got.column("binlog_invalid").to_pylist() == [["da"]] * 10      # the zero date, never guessed
    again = InitialTable(DeltaReplica(tmp_path / "r2", "app"), _layout(), "mysql-bin.000001:4", "")
    with pytest.raises(ReplicationError, match="malformed row packet"):
        again.load(_chunks(10, fail=True))
