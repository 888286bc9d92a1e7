"""Per-table typed change tables: MySQL column types → Spark types, column identity across the history.

Strategy: two pure steps and one Spark step.

1. ``table_lineages(history)`` walks the schema history in binlog order and gives every column an
   *identity* that survives ``RenameColumn`` (a value logged under the old name lands in the column's
   final name). Each table gets its output columns (one per identity, typed from the identity's latest
   definition; a dropped column stays for older rows; an added column is null for older rows) and its
   *versions*: from a position on, which logged name means which output column. When a name is reused by
   a new identity (drop ``a`` then add ``a``), the newest keeps the name and older ones become ``a__v1``...
2. ``spark_type(column)`` maps one MySQL column to a ``(spark type, arrow type)`` pair: the table in
   docs/spark.md (``MAPPING_ROWS`` renders it).
3. ``typed_frame`` runs ``mapInArrow`` over the change rows of one table: it picks the version in force at
   each row's position, reads the row image (``after``, or ``before`` for DELETE), converts every canonical
   value JSON to the column's Arrow type, and adds the ``binlog_*`` metadata columns. Values the Spark type
   cannot hold (zero or invalid dates, the zero TIMESTAMP, text not valid in its charset) become null and
   their column names are listed in ``binlog_invalid``, so nothing is dropped silently.
"""

from __future__ import annotations

import base64
import bisect
import datetime
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pyarrow as pa

from binlog_model.position import BinlogPosition
from binlog_model.types import ValueKind, map_column
from schema_tracker import changes as ch
from schema_tracker.history import SchemaHistory
from schema_tracker.model import ColumnSchema

__all__ = ["MAPPING_ROWS", "META_FIELDS", "ColumnOut", "TableLineage", "arrow_type_for", "convert_value",
           "spark_type", "table_lineages", "typed_frame", "untyped_lineage"]

_UTC = datetime.UTC
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=_UTC)
_FIRST = (-1, "", -1)     # sorts before every real position key

# The metadata columns every typed table carries (names prefixed so they never collide with MySQL columns).
META_FIELDS: list[tuple[str, str, pa.DataType]] = [
    ("binlog_operation", "string", pa.string()),
    ("binlog_file", "string", pa.string()),
    ("binlog_offset", "bigint", pa.int64()),
    ("binlog_gtid", "string", pa.string()),
    ("binlog_timestamp", "timestamp", pa.timestamp("us", tz="UTC")),
    ("binlog_order", "struct<fileSeq:bigint,offset:bigint,innerIndex:int,eventIndex:int,rowIndex:bigint>",
     pa.struct([("fileSeq", pa.int64()), ("offset", pa.int64()), ("innerIndex", pa.int32()),
                ("eventIndex", pa.int32()), ("rowIndex", pa.int64())])),
    ("binlog_invalid", "array<string>", pa.list_(pa.string())),
]

# (MySQL type, Spark type, note): the documented mapping, in docs/spark.md.
MAPPING_ROWS: list[tuple[str, str, str]] = [
    ("TINYINT, SMALLINT, MEDIUMINT (signed or unsigned), INT, YEAR", "IntegerType", ""),
    ("INT UNSIGNED, BIGINT", "LongType", ""),
    ("BIGINT UNSIGNED", "DecimalType(20,0)", "exact up to 2^64-1"),
    ("DECIMAL(p,s), p <= 38", "DecimalType(p,s)", ""),
    ("DECIMAL(p,s), p > 38", "StringType", "exact plain decimal text"),
    ("FLOAT", "FloatType", ""),
    ("DOUBLE", "DoubleType", ""),
    ("BIT(M), M < 64", "LongType", "the bits as an unsigned integer"),
    ("BIT(64)", "DecimalType(20,0)", "the bits as an unsigned integer"),
    ("DATE", "DateType", "zero/invalid dates → null, listed in binlog_invalid"),
    ("DATETIME(fsp)", "TimestampNTZType", "wall clock, microseconds; zero/invalid → null + binlog_invalid"),
    ("TIMESTAMP(fsp)", "TimestampType", "UTC instant, microseconds; zero timestamp → null + binlog_invalid"),
    ("TIME(fsp)", "LongType", "signed microseconds (-838:59:59 .. 838:59:59), as the model's time_micros"),
    ("CHAR, VARCHAR, *TEXT (real charset)", "StringType", "invalid bytes → null + binlog_invalid"),
    ("ENUM", "StringType", "the label"),
    ("SET", "StringType", "labels joined with ',' in definition order"),
    ("JSON", "StringType", "the document as JSON text; a partial update logged without the old document "
     "(MINIMAL image, `json_diff`) → null + binlog_invalid (the raw rows keep the diff)"),
    ("BINARY, VARBINARY, *BLOB, charset binary", "BinaryType", ""),
    ("GEOMETRY family", "BinaryType", "OGC WKB without the SRID"),
    ("VECTOR", "ArrayType(FloatType)", ""),
]


def spark_type(column: ColumnSchema) -> tuple[str, pa.DataType]:
    """The Spark type (DDL text) and Arrow type of one MySQL column (``SchemaError`` for unknown types)."""
    kind = map_column(column).value_kind
    if kind == ValueKind.INT:
        return "int", pa.int32()
    if kind == ValueKind.LONG or kind == ValueKind.TIME:
        return "bigint", pa.int64()
    if kind == ValueKind.UINT64:
        return "decimal(20,0)", pa.decimal128(20, 0)
    if kind == ValueKind.BIT:
        if (column.length or 1) >= 64:
            return "decimal(20,0)", pa.decimal128(20, 0)
        return "bigint", pa.int64()
    if kind == ValueKind.DECIMAL:
        precision = column.precision or 10
        scale = column.scale or 0
        if precision > 38:
            return "string", pa.string()
        return f"decimal({precision},{scale})", pa.decimal128(precision, scale)
    if kind == ValueKind.FLOAT:
        return "float", pa.float32()
    if kind == ValueKind.DOUBLE:
        return "double", pa.float64()
    if kind == ValueKind.DATE:
        return "date", pa.date32()
    if kind == ValueKind.DATETIME:
        return "timestamp_ntz", pa.timestamp("us")
    if kind == ValueKind.TIMESTAMP:
        return "timestamp", pa.timestamp("us", tz="UTC")
    if kind in (ValueKind.BYTES, ValueKind.GEOMETRY):
        return "binary", pa.binary()
    if kind == ValueKind.VECTOR:
        return "array<float>", pa.list_(pa.float32())
    return "string", pa.string()     # STRING, JSON, SET, ENUM


def arrow_type_for(spark_ddl: str) -> pa.DataType:
    """The Arrow type matching one of ``spark_type``'s Spark type texts."""
    simple = {"int": pa.int32(), "bigint": pa.int64(), "float": pa.float32(), "double": pa.float64(),
              "date": pa.date32(), "timestamp_ntz": pa.timestamp("us"), "string": pa.string(),
              "timestamp": pa.timestamp("us", tz="UTC"), "binary": pa.binary(),
              "array<float>": pa.list_(pa.float32())}
    if spark_ddl in simple:
        return simple[spark_ddl]
    p, s = spark_ddl[len("decimal("):-1].split(",")
    return pa.decimal128(int(p), int(s))


@dataclass(frozen=True, slots=True)
class ColumnOut:
    """One output column: its name, Spark type DDL text, and the MySQL definition it was typed from."""

    name: str
    spark: str
    mysql: ColumnSchema


@dataclass
class TableLineage:
    """The typed layout of one table across the history. ``versions[i]`` maps the logged column names
    (lower case) in force from ``keys[i]`` on to output column names."""

    db: str
    table: str
    columns: list[ColumnOut] = field(default_factory=list)
    keys: list[tuple[int, str, int]] = field(default_factory=list)
    versions: list[dict[str, str]] = field(default_factory=list)

    def names_at(self, key: tuple[int, str, int]) -> dict[str, str]:
        """The logged-name → output-name map in force for a row at position ``key`` (DDL strictly before
        it applies, as ``SchemaHistory.at``)."""
        i = bisect.bisect_left(self.keys, key) - 1
        return self.versions[i] if i >= 0 else {}


class _Tracker:
    """Column identities of one table while the history is walked."""

    def __init__(self) -> None:
        self.defs: list[ColumnSchema] = []           # identity → latest definition
        self.current: dict[str, int] = {}            # logged name (lower) → identity
        self.snapshots: list[tuple[tuple[int, str, int], dict[str, int]]] = []

    def create(self, columns: tuple[ColumnSchema, ...]) -> None:
        self.current = {}
        for col in columns:
            self.current[col.name.lower()] = len(self.defs)
            self.defs.append(col)

    def snapshot(self, key: tuple[int, str, int]) -> None:
        self.snapshots.append((key, dict(self.current)))


def table_lineages(history: SchemaHistory) -> dict[tuple[str, str], TableLineage]:
    """Every table of ``history`` (initial catalog and DDL) with its typed columns and name versions."""
    trackers: dict[tuple[str, str], _Tracker] = {}
    for (db, name), table in history.initial.tables.items():
        tracker = trackers.setdefault((db, name), _Tracker())
        tracker.create(table.columns)
        tracker.snapshot(_FIRST)
    for entry in history.entries:
        key = entry.position.sort_key() if entry.position is not None else _FIRST
        touched: set[tuple[str, str]] = set()
        for change in entry.changes:
            table_key = (getattr(change, "db", ""), getattr(change, "table", ""))
            if not table_key[1]:
                continue
            tracker = trackers.setdefault(table_key, _Tracker())
            touched.add(table_key)
            _apply(tracker, change, trackers, touched)
        for table_key in touched:
            trackers[table_key].snapshot(key)
    return {k: _lineage(k, t) for k, t in trackers.items() if t.defs}


def _apply(tracker: _Tracker, change: Any, trackers: dict[tuple[str, str], _Tracker],
           touched: set[tuple[str, str]]) -> None:
    if isinstance(change, ch.CreateTable):
        tracker.create(change.columns)
    elif isinstance(change, ch.CreateOrModifyColumn):
        name = change.column.name.lower()
        if name in tracker.current:
            tracker.defs[tracker.current[name]] = change.column
        else:
            tracker.current[name] = len(tracker.defs)
            tracker.defs.append(change.column)
    elif isinstance(change, ch.RenameColumn):
        ident = tracker.current.pop(change.old_name.lower(), None)
        if ident is not None:
            tracker.current[change.new_name.lower()] = ident
            tracker.defs[ident] = _renamed(tracker.defs[ident], change.new_name)
    elif isinstance(change, ch.DropColumn):
        tracker.current.pop(change.column_name.lower(), None)
    elif isinstance(change, ch.DropTable):
        tracker.current = {}
    elif isinstance(change, ch.RenameTable):
        # Rows keep the table name they were logged under: the new name starts with the same columns.
        target = trackers.setdefault((change.new_db, change.new_table), _Tracker())
        target.create(tuple(tracker.defs[i] for i in tracker.current.values()))
        touched.add((change.new_db, change.new_table))
        tracker.current = {}


def _renamed(column: ColumnSchema, name: str) -> ColumnSchema:
    from dataclasses import replace
    return replace(column, name=name)


def _lineage(key: tuple[str, str], tracker: _Tracker) -> TableLineage:
    # Output names: the newest identity with a name keeps it; older ones get __v1, __v2 ...
    names: dict[int, str] = {}
    by_name: dict[str, list[int]] = {}
    for ident, col in enumerate(tracker.defs):
        by_name.setdefault(col.name.lower(), []).append(ident)
    for idents in by_name.values():
        for n, ident in enumerate(idents):
            base = tracker.defs[ident].name
            names[ident] = base if n == len(idents) - 1 else f"{base}__v{n + 1}"
    columns = [ColumnOut(names[i], spark_type(col)[0], col) for i, col in enumerate(tracker.defs)]
    lineage = TableLineage(key[0], key[1], columns)
    for snap_key, current in tracker.snapshots:
        lineage.keys.append(snap_key)
        lineage.versions.append({logged: names[ident] for logged, ident in current.items()})
    return lineage


def untyped_lineage(db: str, table: str, names: list[str]) -> TableLineage:
    """A lineage for a table the history does not define (lenient DDL, rows resolved from TABLE_MAP
    metadata): every logged column as a string holding its plain value."""
    columns = [ColumnOut(n, "string", ColumnSchema(n, "text")) for n in names]
    return TableLineage(db, table, columns, [_FIRST], [{n.lower(): n for n in names}])


# -- value conversion -------------------------------------------------------------------------------------

class _Invalid(Exception):
    """A value the Spark type cannot hold."""


def convert_value(text: str, arrow: pa.DataType) -> Any:
    """One canonical value JSON (``{"intValue":5}``) → a Python value for ``arrow``. Raises ``_Invalid``
    for a value the type cannot hold."""
    doc = json.loads(text)
    if not doc:
        return None
    (kind, raw), = doc.items()
    value = _plain(kind, raw)
    if value is None:
        return None
    return _coerce(value, arrow)


def _plain(kind: str, raw: Any) -> Any:
    if kind == "nullValue":
        return None
    if kind in ("intValue", "longValue", "uint64Value", "bitValue", "timeMicros"):
        return int(raw)
    if kind == "decimalValue":
        return Decimal(raw)
    if kind in ("floatValue", "doubleValue"):
        return float(raw)
    if kind in ("stringValue", "jsonValue"):
        return raw
    if kind == "bytesValue":
        return base64.b64decode(raw)
    if kind == "setValue":
        return ",".join(raw.get("labels", []))
    if kind == "dateValue":
        try:
            return datetime.date(raw.get("year", 0), raw.get("month", 0), raw.get("day", 0))
        except ValueError as err:
            raise _Invalid from err
    if kind == "datetimeValue":
        try:
            return datetime.datetime(raw.get("year", 0), raw.get("month", 0), raw.get("day", 0),
                                     raw.get("hour", 0), raw.get("minute", 0), raw.get("second", 0),
                                     raw.get("micros", 0))
        except ValueError as err:
            raise _Invalid from err
    if kind == "timestampMicros":
        micros = int(raw)
        if micros == 0:
            raise _Invalid
        return _EPOCH + datetime.timedelta(microseconds=micros)
    if kind == "geometryValue":
        return base64.b64decode(raw.get("wkb", ""))
    if kind == "vectorValue":
        return [float(v) for v in raw.get("values", [])]
    if kind == "jsonDiff":
        raise _Invalid   # operations, not a document: a typed JSON column cannot hold them
    raise _Invalid      # rawTextValue: bytes not valid in the column charset


def _coerce(value: Any, arrow: pa.DataType) -> Any:
    # A column whose type changed (MODIFY) is typed from its latest definition: convert older values.
    try:
        if pa.types.is_decimal(arrow):
            return Decimal(value).quantize(Decimal(1).scaleb(-arrow.scale))
        if pa.types.is_integer(arrow):
            return int(value)
        if pa.types.is_floating(arrow):
            return float(value)
        if pa.types.is_string(arrow):
            return value if isinstance(value, str) else value.decode("utf-8", "replace") \
                if isinstance(value, bytes) else str(value)
        if pa.types.is_binary(arrow):
            return value.encode("utf-8") if isinstance(value, str) else value
    except (ValueError, TypeError, ArithmeticError) as err:
        raise _Invalid from err
    return value


# -- Spark --------------------------------------------------------------------------------------------------

def typed_schema(lineage: TableLineage) -> tuple[str, pa.Schema]:
    """The Spark DDL and Arrow schema of one typed table: its columns, then ``META_FIELDS``."""
    ddl = ", ".join([f"`{c.name}` {c.spark}" for c in lineage.columns] +
                    [f"`{name}` {spark}" for name, spark, _ in META_FIELDS])
    fields = [(c.name, arrow_type_for(c.spark)) for c in lineage.columns] + \
             [(name, arrow) for name, _, arrow in META_FIELDS]
    return ddl, pa.schema(fields)


def typed_rows(rows: Iterable[Any], lineage: TableLineage) -> Iterator[tuple[Any, ...]]:
    """Change rows (the data source's layout, as Spark ``Row``s or dicts) of one table → typed tuples in
    ``typed_schema`` order."""
    arrow_of = {c.name: arrow_type_for(c.spark) for c in lineage.columns}
    order_of = {c.name: i for i, c in enumerate(lineage.columns)}
    width = len(lineage.columns)
    for row in rows:
        names = lineage.names_at(BinlogPosition(row["file"], row["offset"]).sort_key())
        image = row["before"] if row["operation"] == "DELETE" else row["after"]
        values: list[Any] = [None] * width
        invalid: list[str] = []
        for logged, text in (image or {}).items():
            target = names.get(logged.lower())
            if target is None:
                invalid.append(logged)      # logged under a name the history does not know here
                continue
            try:
                values[order_of[target]] = convert_value(text, arrow_of[target])
            except _Invalid:
                invalid.append(target)
        order = row["orderKey"]
        values.extend([row["operation"], row["file"], row["offset"], row["gtid"], row["utcTimestamp"],
                       tuple(order) if order is not None else None, invalid])
        yield tuple(values)


def typed_frame(changes: Any, lineage: TableLineage) -> Any:
    """The typed DataFrame of one table from the data source's change rows (any ``operation`` other than
    SCHEMA; call with the rows of this table only)."""
    from pyspark.sql import functions as F

    ddl, _ = typed_schema(lineage)
    rows = changes.where((F.col("db") == lineage.db) & (F.col("table") == lineage.table)
                         & (F.col("operation") != "SCHEMA"))
    typed = rows.rdd.mapPartitions(lambda part: typed_rows(part, lineage))
    return changes.sparkSession.createDataFrame(typed, ddl)
