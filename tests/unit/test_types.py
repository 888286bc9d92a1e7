"""binlog_model.resolve.types: the MySQL type → model mapping and the TABLE_MAP compatibility check.

The spec case uses the spec's own bytes and SQL: its CREATE TABLE is replayed by the schema tracker and its
BINLOG '...' TABLE_MAP event (real MySQL 5.7 bytes, extracted from the spec at test time) is parsed by the
wire decoder; every column must match. The mismatch cases change one fact of a real column at a time.
Schemas built inline below are hand-written ColumnSchema values, named as such.
"""

from __future__ import annotations

import dataclasses

import pytest

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.errors import SchemaError
from binlog_model.resolve.types import (
    ValueKind,
    binlog_type_matches,
    binlog_type_mismatch,
    canonical_data_type,
    column_type_name,
    integer_bits,
    map_column,
    type_mapping_markdown,
)
from binlog_model.wire.table_map import TableMapEvent
from schema_tracker.ddl import apply
from schema_tracker.model import Catalog, ColumnSchema
from tests._spec import decode_block, spec_blocks, spec_create_table

C = ColumnSchema

# (hand-written column, model ColumnType, Value kind): every data type the table knows, both signs.
MAPPING_CASES = [
    (C("a", "tinyint"), pb.INTEGER, ValueKind.INT),
    (C("a", "tinyint", unsigned=True), pb.INTEGER, ValueKind.INT),
    (C("a", "smallint"), pb.INTEGER, ValueKind.INT),
    (C("a", "smallint", unsigned=True), pb.INTEGER, ValueKind.INT),
    (C("a", "mediumint"), pb.INTEGER, ValueKind.INT),
    (C("a", "mediumint", unsigned=True), pb.INTEGER, ValueKind.INT),
    (C("a", "int"), pb.INTEGER, ValueKind.INT),
    (C("a", "int", unsigned=True), pb.LONG, ValueKind.LONG),
    (C("a", "bigint"), pb.LONG, ValueKind.LONG),
    (C("a", "bigint", unsigned=True), pb.UINT64, ValueKind.UINT64),
    (C("a", "decimal", precision=65, scale=30), pb.DECIMAL, ValueKind.DECIMAL),
    (C("a", "decimal", precision=10, scale=0, unsigned=True), pb.DECIMAL, ValueKind.DECIMAL),
    (C("a", "float"), pb.FLOAT, ValueKind.FLOAT),
    (C("a", "double", unsigned=True), pb.DOUBLE, ValueKind.DOUBLE),
    (C("a", "bit", length=64), pb.BIT, ValueKind.BIT),
    (C("a", "year"), pb.INTEGER, ValueKind.INT),
    (C("a", "date"), pb.DATE, ValueKind.DATE),
    (C("a", "datetime", fsp=6), pb.DATETIME, ValueKind.DATETIME),
    (C("a", "timestamp"), pb.TIMESTAMP, ValueKind.TIMESTAMP),
    (C("a", "time", fsp=3), pb.TIME, ValueKind.TIME),
    (C("a", "char", length=3, charset="utf8mb4"), pb.STRING, ValueKind.STRING),
    (C("a", "varchar", length=3, charset="latin1"), pb.STRING, ValueKind.STRING),
    (C("a", "tinytext", charset="utf8mb3"), pb.STRING, ValueKind.STRING),
    (C("a", "text", charset="utf8mb4"), pb.STRING, ValueKind.STRING),
    (C("a", "mediumtext", charset="cp1251"), pb.STRING, ValueKind.STRING),
    (C("a", "longtext", charset="utf8mb4"), pb.STRING, ValueKind.STRING),
    (C("a", "varchar", length=3, charset="binary"), pb.BYTES, ValueKind.BYTES),
    (C("a", "text", charset="binary"), pb.BYTES, ValueKind.BYTES),
    (C("a", "binary", length=4), pb.BYTES, ValueKind.BYTES),
    (C("a", "varbinary", length=4), pb.BYTES, ValueKind.BYTES),
    (C("a", "tinyblob"), pb.BYTES, ValueKind.BYTES),
    (C("a", "blob"), pb.BYTES, ValueKind.BYTES),
    (C("a", "mediumblob"), pb.BYTES, ValueKind.BYTES),
    (C("a", "longblob"), pb.BYTES, ValueKind.BYTES),
    (C("a", "enum", enum_values=("x", "y"), charset="utf8mb4"), pb.STRING, ValueKind.STRING),
    (C("a", "set", enum_values=("x", "y"), charset="utf8mb4"), pb.SET, ValueKind.SET),
    (C("a", "json"), pb.JSON, ValueKind.JSON),
    (C("a", "geometry"), pb.GEOMETRY, ValueKind.GEOMETRY),
    (C("a", "point"), pb.GEOMETRY, ValueKind.GEOMETRY),
    (C("a", "linestring"), pb.GEOMETRY, ValueKind.GEOMETRY),
    (C("a", "polygon"), pb.GEOMETRY, ValueKind.GEOMETRY),
    (C("a", "multipoint"), pb.GEOMETRY, ValueKind.GEOMETRY),
    (C("a", "multilinestring"), pb.GEOMETRY, ValueKind.GEOMETRY),
    (C("a", "multipolygon"), pb.GEOMETRY, ValueKind.GEOMETRY),
    (C("a", "geometrycollection"), pb.GEOMETRY, ValueKind.GEOMETRY),
    (C("a", "vector", length=3), pb.VECTOR, ValueKind.VECTOR),
    (C("a", "uuid"), pb.BYTES, ValueKind.BYTES),
    (C("a", "INTEGER", unsigned=True), pb.LONG, ValueKind.LONG),
    (C("a", "Numeric"), pb.DECIMAL, ValueKind.DECIMAL),
    (C("a", "double precision"), pb.DOUBLE, ValueKind.DOUBLE),
    (C("a", "bool"), pb.INTEGER, ValueKind.INT),
]


@pytest.mark.parametrize(("column", "column_type", "kind"), MAPPING_CASES,
                         ids=[f"{c.column_type}-{c.charset}" for c, _, _ in MAPPING_CASES])
def test_map_column(column: ColumnSchema, column_type: int, kind: ValueKind) -> None:
    mapped = map_column(column)
    assert (column_type_name(mapped.column_type), mapped.value_kind) == (column_type_name(column_type), kind)


def test_every_value_kind_is_a_oneof_field() -> None:
    fields = {f.name for f in pb.Value.DESCRIPTOR.oneofs_by_name["kind"].fields}
    assert {k.value for k in ValueKind} == fields


def test_unknown_data_type_is_a_schema_error_naming_the_column() -> None:
    with pytest.raises(SchemaError, match=r"'weird'.*'hologram'"):
        map_column(C("weird", "hologram"))


# The mapping as the spec and the model's .proto define it, written out by hand (not derived from _RULES):
# MySQL type (text charset for the textual ones) -> (ColumnType name, the Value oneof field).
EXPECTED_TABLE = {
    "tinyint": ("INTEGER", "int_value"), "tinyint unsigned": ("INTEGER", "int_value"),
    "smallint": ("INTEGER", "int_value"), "smallint unsigned": ("INTEGER", "int_value"),
    "mediumint": ("INTEGER", "int_value"), "mediumint unsigned": ("INTEGER", "int_value"),
    "int": ("INTEGER", "int_value"), "int unsigned": ("LONG", "long_value"),
    "bigint": ("LONG", "long_value"), "bigint unsigned": ("UINT64", "uint64_value"),
    "decimal": ("DECIMAL", "decimal_value"), "float": ("FLOAT", "float_value"),
    "double": ("DOUBLE", "double_value"), "bit": ("BIT", "bit_value"), "year": ("INTEGER", "int_value"),
    "date": ("DATE", "date_value"), "datetime": ("DATETIME", "datetime_value"),
    "timestamp": ("TIMESTAMP", "timestamp_micros"), "time": ("TIME", "time_micros"),
    "char": ("STRING", "string_value"), "varchar": ("STRING", "string_value"),
    "tinytext": ("STRING", "string_value"), "text": ("STRING", "string_value"),
    "mediumtext": ("STRING", "string_value"), "longtext": ("STRING", "string_value"),
    "binary": ("BYTES", "bytes_value"), "varbinary": ("BYTES", "bytes_value"),
    "tinyblob": ("BYTES", "bytes_value"), "blob": ("BYTES", "bytes_value"),
    "mediumblob": ("BYTES", "bytes_value"), "longblob": ("BYTES", "bytes_value"),
    "enum": ("STRING", "string_value"), "set": ("SET", "set_value"), "json": ("JSON", "json_value"),
    "geometry": ("GEOMETRY", "geometry_value"), "point": ("GEOMETRY", "geometry_value"),
    "linestring": ("GEOMETRY", "geometry_value"), "polygon": ("GEOMETRY", "geometry_value"),
    "multipoint": ("GEOMETRY", "geometry_value"), "multilinestring": ("GEOMETRY", "geometry_value"),
    "multipolygon": ("GEOMETRY", "geometry_value"), "geometrycollection": ("GEOMETRY", "geometry_value"),
    "vector": ("VECTOR", "vector_value"),
    "uuid": ("BYTES", "bytes_value"), "inet6": ("BYTES", "bytes_value"), "inet4": ("BYTES", "bytes_value"),
}


def test_readme_table_is_the_expected_mapping() -> None:
    """The generated table (README) and map_column both say what the hand-written table expects."""
    rows = [[cell.strip() for cell in line.split("|")[1:4]]
            for line in type_mapping_markdown().splitlines()[2:]]
    table = {label: (column_type, kind.strip("`")) for label, column_type, kind in rows}
    assert len(table) == len(rows), "a type appears twice in the table"
    assert table == EXPECTED_TABLE
    for label, expected in EXPECTED_TABLE.items():
        mapped = map_column(C("a", label.removesuffix(" unsigned"), unsigned=label.endswith(" unsigned"),
                              charset="utf8mb4"))
        assert (column_type_name(mapped.column_type), mapped.value_kind.value) == expected, label


def test_aliases_and_integer_bits() -> None:
    assert canonical_data_type(" Double   Precision ") == "double"
    assert canonical_data_type("INT4") == "int"
    assert [integer_bits(t) for t in ("tinyint", "smallint", "mediumint", "int", "bigint", "year")] == [
        8, 16, 24, 32, 64, None]


# --- the spec's campaigns table --------------------------------------------------------------------------


def _spec_campaigns_columns() -> tuple[ColumnSchema, ...]:
    catalog, _ = apply(Catalog(), "CREATE DATABASE `ppc`", None)
    catalog, _ = apply(catalog, spec_create_table(), "ppc")
    table = catalog.table("ppc", "campaigns")
    assert table is not None
    return table.columns


def _spec_table_map() -> TableMapEvent:
    """The first Table_map event of the spec's first BINLOG block (real MySQL 5.7 bytes)."""
    return next(e for e in decode_block(spec_blocks()[0]) if isinstance(e, TableMapEvent))


def test_spec_table_map_matches_thespec_create_table() -> None:
    columns = _spec_campaigns_columns()
    tm = _spec_table_map()
    # What mysqlbinlog printed for these bytes in the spec: INT, BLOB/TEXT meta=2, ENUM(1 byte) meta=63233...
    assert tm.column_types == (3, 252, 254, 252, 3, 3)
    assert tm.column_metas == (0, 2, 63233, 2, 0, 0)
    assert [c.name for c in columns] == ["cid", "name", "currency", "geo", "shows", "clicks"]
    for column, code, meta in zip(columns, tm.column_types, tm.column_metas, strict=True):
        assert binlog_type_mismatch(code, meta, column) is None, column.name
    # And the spec's own type listing: cid (Long), name (String), currency (String), shows (Integer).
    kinds = [map_column(c).value_kind for c in columns]
    assert kinds == [ValueKind.LONG, ValueKind.STRING, ValueKind.STRING, ValueKind.STRING, ValueKind.INT,
                     ValueKind.INT]


def test_spec_table_map_literal_types() -> None:
    # The same check from the numbers mysqlbinlog printed, for a reader without the spec file.
    columns = (C("cid", "int", unsigned=True, length=10), C("name", "text", charset="latin1"),
               C("currency", "enum", enum_values=("RUB", "UAH", "KZT", "USD", "EUR", "YND_FIXED", "CHF",
                                                  "TRY", "BYN"), charset="latin1"),
               C("geo", "text", charset="latin1"), C("shows", "int", length=10),
               C("clicks", "int", length=10))
    types, metas = (3, 252, 254, 252, 3, 3), (0, 2, 63233, 2, 0, 0)
    assert all(binlog_type_matches(t, m, c) for t, m, c in zip(types, metas, columns, strict=True))


@pytest.mark.parametrize(("index", "change", "message"), [
    (4, {"data_type": "bigint"}, "LONG cannot carry bigint"),           # shows became BIGINT
    (1, {"data_type": "mediumtext"}, "length-prefix size is 2 in the binlog but 3"),
    (2, {"enum_values": tuple(f"v{i}" for i in range(300))}, "ENUM storage size is 1 in the binlog but 2"),
    (2, {"data_type": "set"}, "ENUM cannot carry set"),
    (0, {"data_type": "varchar", "length": 10, "charset": "utf8mb4"}, "LONG cannot carry varchar"),
])
def test_spec_table_map_mismatches(index: int, change: dict[str, object], message: str) -> None:
    columns = _spec_campaigns_columns()
    tm = _spec_table_map()
    column = dataclasses.replace(columns[index], **change)  # type: ignore[arg-type]
    problem = binlog_type_mismatch(tm.column_types[index], tm.column_metas[index], column)
    assert problem is not None and message in problem and repr(column.name) in problem
    assert not binlog_type_matches(tm.column_types[index], tm.column_metas[index], column)


# Hand-written TABLE_MAP numbers in mysqlbinlog's meta convention, for facts the spec table lacks.
@pytest.mark.parametrize(("code", "meta", "column", "ok"), [
    (246, (10 << 8) | 2, C("d", "decimal", precision=10, scale=2), True),
    (246, (10 << 8) | 3, C("d", "decimal", precision=10, scale=2), False),
    (246, (65 << 8) | 30, C("d", "decimal", precision=65, scale=30), True),
    (18, 6, C("t", "datetime", fsp=6), True),
    (18, 0, C("t", "datetime", fsp=6), False),
    (17, 0, C("t", "timestamp"), True),
    (19, 3, C("t", "time", fsp=3), True),
    (11, 0, C("t", "time"), True),                        # pre-5.6 TIME
    (14, 0, C("t", "date"), True),
    (13, 0, C("t", "date"), False),
    (15, 40, C("v", "varchar", length=10, charset="utf8mb4"), True),
    (15, 30, C("v", "varchar", length=10, charset="utf8mb4"), False),   # the tracker lost a charset change
    (15, 30, C("v", "varchar", length=10, charset="utf8"), True),
    (15, 10, C("v", "varbinary", length=10), True),
    (254, (254 << 8) | 12, C("c", "char", length=3, charset="utf8mb4"), True),
    (254, (254 << 8) | 4, C("c", "binary", length=4), True),
    (254, (254 << 8) | 4, C("c", "char", length=4, charset="binary"), True),
    (254, (248 << 8) | 1, C("s", "set", enum_values=("a", "b")), True),
    (254, (248 << 8) | 8, C("s", "set", enum_values=tuple("abcdefghijklmnopqrstuvwxyz0123456789")), True),
    (254, (248 << 8) | 2, C("s", "set", enum_values=("a", "b")), False),
    (16, (8 << 8) | 0, C("b", "bit", length=64), True),
    (16, (1 << 8) | 1, C("b", "bit", length=9), True),
    (16, 1, C("b", "bit"), True),                          # BIT defaults to BIT(1)
    (16, (1 << 8) | 0, C("b", "bit", length=9), False),
    (245, 4, C("j", "json"), True),
    (252, 4, C("j", "json"), True),                        # MariaDB: JSON is LONGTEXT
    (252, 2, C("j", "json"), False),
    (255, 4, C("g", "point"), True),
    (4, 4, C("f", "float"), True),
    (5, 8, C("f", "float"), False),
    (242, 12, C("v", "vector", length=3), True),
    (1, 0, C("i", "year"), False),
    (3, 0, C("i", "hologram"), False),
])
def test_binlog_type_matches_metadata(code: int, meta: int, column: ColumnSchema, ok: bool) -> None:
    assert binlog_type_matches(code, meta, column) is ok
