"""``replica.batch.TableBatch``: the collapse of one table's changes per key, on hand-built events (edge
cases named here; the real-server oracle is tests/differential/test_apply.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.replica.batch import Meta, ReplicaError, TableBatch
from binlog_model.replica.layout import TableLayout
from schema_tracker.history import SchemaHistory


def _layout(ddl: str) -> TableLayout:
    history = SchemaHistory()
    history.apply(ddl, "d")
    name = ddl.split()[2]
    table = history.catalog.table("d", name)
    assert table is not None
    return TableLayout.of(table)


def _cols(**values: Any) -> list[pb.Column]:
    out = []
    for name, value in values.items():
        if value is None:
            out.append(pb.Column(name=name, value=pb.Value(null_value=0)))
        elif isinstance(value, int):
            out.append(pb.Column(name=name, value=pb.Value(int_value=value)))
        else:
            out.append(pb.Column(name=name, value=pb.Value(string_value=value)))
    return out


def _event(op: int, *rows: tuple[dict[str, Any] | None, dict[str, Any] | None]) -> pb.BinlogEvent:
    event = pb.BinlogEvent(db="d", table="t", operation=op)
    for before, after in rows:
        row = event.rows.add()
        if before is not None:
            row.before.extend(_cols(**before))
        if after is not None:
            row.after.extend(_cols(**after))
    return event


INS, UPD, DEL = pb.BinlogEvent.INSERT, pb.BinlogEvent.UPDATE, pb.BinlogEvent.DELETE


def _meta(n: int) -> Meta:
    return Meta(n, "", "binlog.000001", n)


def _rows(batch: TableBatch) -> list[tuple[Any, ...]]:
    table = batch.keyed_rows()
    return sorted((r["id"], r["v"], r["binlog_op"]) for r in table.to_pylist())


def test_the_last_change_of_a_key_wins() -> None:
    batch = TableBatch(_layout("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(5))"))
    batch.add(_event(INS, (None, {"id": 1, "v": "a"})), _meta(1))
    batch.add(_event(UPD, ({"id": 1, "v": "a"}, {"id": 1, "v": "b"})), _meta(2))
    batch.add(_event(UPD, ({"id": 1, "v": "b"}, {"id": 1, "v": "c"})), _meta(3))
    assert _rows(batch) == [(1, "c", "u")]


def test_delete_then_insert_of_a_key_leaves_the_row() -> None:
    batch = TableBatch(_layout("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(5))"))
    batch.add(_event(DEL, ({"id": 1, "v": "a"}, None)), _meta(1))
    batch.add(_event(INS, (None, {"id": 1, "v": "z"})), _meta(2))
    assert _rows(batch) == [(1, "z", "u")]


def test_a_key_change_deletes_the_old_key_and_a_change_back_restores_it() -> None:
    batch = TableBatch(_layout("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(5))"))
    batch.add(_event(UPD, ({"id": 1, "v": "a"}, {"id": 2, "v": "a"})), _meta(1))
    assert _rows(batch) == [(1, None, "d"), (2, "a", "u")]
    batch.add(_event(UPD, ({"id": 2, "v": "a"}, {"id": 1, "v": "b"})), _meta(2))
    assert _rows(batch) == [(1, "b", "u"), (2, None, "d")]


def test_a_partial_after_image_is_completed_from_the_replica_row() -> None:
    batch = TableBatch(_layout("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(5), w INT)"))
    batch.add(_event(UPD, ({"id": 1}, {"w": 5})), _meta(1))        # MINIMAL: the key, the changed column
    assert batch.needs_base() == {(1,)}
    batch.fill({(1,): ([1, "old", 4], set())})
    assert [(r["id"], r["v"], r["w"]) for r in batch.keyed_rows().to_pylist()] == [(1, "old", 5)]


def test_a_partial_update_of_a_row_the_replica_lacks_is_an_error() -> None:
    batch = TableBatch(_layout("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(5), w INT)"))
    batch.add(_event(UPD, ({"id": 7}, {"w": 5})), _meta(1))
    with pytest.raises(ReplicaError, match=r"d\.t at binlog\.000001:1: an update of key \(7,\)"):
        batch.fill({})


def test_a_json_diff_is_applied_to_the_replica_document() -> None:
    batch = TableBatch(_layout("CREATE TABLE t (id INT PRIMARY KEY, j JSON)"))
    event = _event(UPD, ({"id": 1}, {"id": 1}))
    diff = event.rows[0].after.add(name="j").value.json_diff
    diff.operations.add(op=pb.JsonDiffOperation.REPLACE, path="$.a", value="2")
    batch.add(event, _meta(1))
    batch.fill({(1,): ([1, '{"a": 1, "b": [1]}'], set())})
    assert batch.keyed_rows().to_pylist()[0]["j"] == '{"a": 2, "b": [1]}'


def test_a_keyless_table_keeps_duplicates_and_a_delete_removes_one_copy() -> None:
    layout = _layout("CREATE TABLE t (a INT, b VARCHAR(5))")
    assert layout.keyless
    batch = TableBatch(layout)
    batch.add(_event(INS, (None, {"a": 1, "b": "x"}), (None, {"a": 1, "b": "x"})), _meta(1))
    rows = batch.keyless_rows(lambda digests: {})
    copies = sorted((r["a"], r["binlog_copy"], r["binlog_op"]) for r in rows.to_pylist())
    assert copies == [(1, 1, "u"), (1, 2, "u")]
    later = TableBatch(layout)
    later.add(_event(DEL, ({"a": 1, "b": "x"}, None)), _meta(2))
    digest = rows.to_pylist()[0]["binlog_row_hash"]
    gone = later.keyless_rows(lambda digests: {digest: 2}).to_pylist()
    assert [(r["binlog_copy"], r["binlog_op"]) for r in gone] == [(2, "d")]


def test_a_not_null_unique_key_is_the_key_without_a_primary_key() -> None:
    assert _layout("CREATE TABLE t (a INT NOT NULL, b INT, UNIQUE KEY (a))").key == ("a",)
    assert _layout("CREATE TABLE t (a INT, b INT, UNIQUE KEY (a))").keyless


def test_a_generated_column_left_out_of_an_update_is_unknown_once_its_inputs_change() -> None:
    """Hand-built: MariaDB 11 leaves generated columns out of UPDATE images even under FULL. An update that
    changes ``a`` makes ``g = a * 2`` unknown (null, listed invalid); one that leaves ``a`` alone keeps ``g``
    for the replica's row to complete; a generated column reading a column the replica lacks is unknown."""
    layout = _layout("CREATE TABLE t (id INT PRIMARY KEY, a INT, v INT, g INT AS (`a` * 2) STORED)")
    assert layout.generated() == {3: frozenset({1})}
    batch = TableBatch(layout)
    batch.add(_event(UPD, ({"id": 1, "a": 1, "v": 0}, {"id": 1, "a": 5, "v": 0})), _meta(1))
    batch.add(_event(UPD, ({"id": 2, "a": 1, "v": 0}, {"id": 2, "a": 1, "v": 9})), _meta(2))
    assert batch.needs_base() == {(2,)}       # only the update that left ``a`` alone needs the replica's row
    batch.fill({(2,): ([2, 1, 0, 2], set())})
    rows = {r["id"]: r for r in batch.keyed_rows().to_pylist()}
    assert (rows[1]["g"], rows[1]["binlog_invalid"]) == (None, ["g"])
    assert (rows[2]["g"], rows[2]["binlog_invalid"]) == (2, [])
    hidden = _layout("CREATE TABLE t (id INT PRIMARY KEY, a INT, g INT AS (`gone` + 1) VIRTUAL)")
    assert hidden.generated() == {2: None}


def test_a_keyless_row_is_found_without_its_generated_columns() -> None:
    """Hand-built: the INSERT image has ``g``, the DELETE image (MariaDB 11) does not; the digest leaves
    generated columns out, so the delete finds the row."""
    layout = _layout("CREATE TABLE t (a INT, g INT AS (a + 1) STORED)")
    assert layout.row_hash([1, 2]) == layout.row_hash([1, None])
    batch = TableBatch(layout)
    batch.add(_event(INS, (None, {"a": 1, "g": 2})), _meta(1))
    batch.add(_event(DEL, ({"a": 1}, None)), _meta(2))
    assert [entry[0] for entry in batch.counts.values()] == [0]


def test_replica_files_have_bounded_row_groups(tmp_path: Any) -> None:
    """Every file the replica writes (a MERGE's too) has row groups of at most ``ROW_GROUP_ROWS`` rows, so a
    MERGE's writer holds that much, not a whole large file's worth (delta-rs writes 1M-row groups)."""
    pytest.importorskip("deltalake")
    import pyarrow.parquet as pq

    from binlog_model.sinks.delta import ROW_GROUP_ROWS, DeltaReplica

    layout = _layout("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
    replica = DeltaReplica(tmp_path, "app")
    replica.create(layout, "binlog.000001:4", "")
    rows = 2 * ROW_GROUP_ROWS + 100
    batch = TableBatch(layout)
    batch.add(_event(INS, *((None, {"id": i, "v": f"v{i}"}) for i in range(rows))), _meta(10))
    replica.merge(layout, batch.keyed_rows(), "binlog.000001:20", "")
    again = TableBatch(layout)
    again.add(_event(UPD, ({"id": 5, "v": "v5"}, {"id": 5, "v": "changed"})), _meta(30))
    replica.merge(layout, again.keyed_rows(), "binlog.000001:40", "")

    files = [Path(f) for f in replica._table("d", "t").file_uris()]
    groups = [pq.ParquetFile(f).metadata.row_group(i).num_rows
              for f in files for i in range(pq.ParquetFile(f).metadata.num_row_groups)]
    assert sum(groups) == rows and len(groups) >= 3 and max(groups) <= ROW_GROUP_ROWS
    assert replica.rows_by_key(layout, [(5,)])[(5,)][0][:2] == [5, "changed"]
