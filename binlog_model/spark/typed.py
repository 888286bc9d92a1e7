"""Per-table typed change tables: MySQL column types → Spark types, column identity across the history.

Strategy: two pure steps and one Spark step.

1. ``table_lineages(history)`` walks the schema history in binlog order and builds one *lineage* per table,
   under its final name. A lineage follows ``RenameTable`` (rows logged under the old name land in the new
   name's table: its *segments* say which logged name belongs to it when), and gives every column an
   *identity* that survives ``RenameColumn``. Each lineage gets its output columns (one per identity; a
   dropped column stays for older rows, an added one is null for older rows) and, per segment, its
   *versions*: from a position on, which logged name means which output column. When a name is reused by
   a new identity (drop ``a`` then add ``a``), the newest keeps the name and older ones become ``a__v1``...
   A table dropped and created again (or replaced by a rename onto its name) is a new *generation* of the
   same lineage: its columns join the same-named columns of earlier generations (no ``__v`` duplicates),
   and every row carries ``binlog_generation`` (0, then 1, 2 ... per re-creation) to keep them apart.
   A column whose type changed is typed to hold every definition (``widen``: the wider integer or decimal,
   double, timestamp_ntz for date, else string), so no older value is cut to the latest type.
2. ``spark_type(column)`` maps one MySQL column to a ``(spark type, arrow type)`` pair: the table in
   docs/spark.md (``MAPPING_ROWS`` renders it).
3. ``typed_arrow.typed_batch`` (what the job's tasks run, ``typed_write``; ``typed_arrow.typed_frame`` runs
   it as a ``mapInArrow`` over the source's ``event`` column, for DataFrame users):
   it picks the version in force at each event's position, reads the row images (``after``, or ``before``
   for DELETE), converts every value to the column's Arrow type, and adds the ``binlog_*`` metadata
   columns (``typed_rows`` does the same per row from the change rows' value JSON: the reference). Values
   the Spark type cannot hold (zero or invalid dates, the zero TIMESTAMP, text not valid in its charset)
   become null and their column names are listed in ``binlog_invalid``, so nothing is dropped silently.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa

from binlog_model.position import position_key
from binlog_model.resolve.types import ValueKind, map_column
from binlog_model.spark.typed_values import _Invalid, convert_value
from schema_tracker import changes as ch
from schema_tracker.history import SchemaHistory
from schema_tracker.model import ColumnSchema, TableSchema

__all__ = ["MAPPING_ROWS", "META_FIELDS", "ColumnOut", "TableLineage", "arrow_type_for", "convert_value",
           "spark_type", "table_lineages", "untyped_lineage"]

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
    ("binlog_generation", "int", pa.int32()),
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
    """One output column: its name, Spark type DDL text, and the MySQL definition it was typed from (the
    latest; ``spark`` holds every definition's values, see ``widen``)."""

    name: str
    spark: str
    mysql: ColumnSchema


@dataclass
class Segment:
    """A period in which a lineage's rows are logged under one name: from ``start`` (a position key) to
    ``end`` (exclusive; None = still), with the column versions in force (``keys[i]`` on: ``versions[i]``
    maps logged column names, lower case, to output names; ``generations[i]`` the table generation)."""

    db: str
    table: str
    start: tuple[int, str, int]
    end: tuple[int, str, int] | None = None
    keys: list[tuple[int, str, int]] = field(default_factory=list)
    versions: list[dict[str, Any]] = field(default_factory=list)   # output names (identities while built)
    generations: list[int] = field(default_factory=list)

    def covers(self, key: tuple[int, str, int]) -> bool:
        return self.start <= key and (self.end is None or key < self.end)


@dataclass
class TableLineage:
    """The typed layout of one table across the history, under its final name: its output columns and the
    segments (names it was logged under, and when) that map logged rows onto them."""

    db: str
    table: str
    columns: list[ColumnOut] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)

    @property
    def versions(self) -> list[dict[str, str]]:
        """Every column version of every segment, in order (one per DDL that touched the table)."""
        return [v for s in self.segments for v in s.versions]

    @property
    def logged_names(self) -> list[tuple[str, str]]:
        """The (db, table) names this lineage's rows are logged under."""
        return list(dict.fromkeys((s.db, s.table) for s in self.segments))

    def lookup(self, db: str, table: str, key: tuple[int, str, int]) -> tuple[dict[str, str], int] | None:
        """(logged-name → output-name map, generation) for a row logged as ``db.table`` at position ``key``
        (DDL strictly before it applies, as ``SchemaHistory.at``); None when this lineage did not own that
        name there."""
        for seg in self.segments:
            if seg.db == db and seg.table == table and seg.covers(key):
                i = bisect.bisect_left(seg.keys, key) - 1
                if i < 0:
                    return {}, seg.generations[0] if seg.generations else 0
                return seg.versions[i], seg.generations[i]
        return None

    def names_at(self, key: tuple[int, str, int]) -> dict[str, str]:
        """The logged-name → output-name map in force for a row logged under the final name at ``key``."""
        found = self.lookup(self.db, self.table, key)
        return found[0] if found is not None else {}


class _Building:
    """One lineage while the history is walked: column identities (an identity survives RenameColumn;
    a re-created table's columns join the same-named identities of earlier generations)."""

    def __init__(self, db: str, table: str, key: tuple[int, str, int]) -> None:
        self.final = (db, table)
        self.defs: list[ColumnSchema] = []           # identity → latest definition
        self.types: list[str] = []                   # identity → Spark type holding every definition
        self.current: dict[str, int] = {}            # logged column name (lower) → identity
        self.generation = 0
        self.alive = False
        self.segments: list[Segment] = [Segment(db, table, key)]
        self.order: list[int] = []                   # live identities in the table's column order

    def follow_order(self, table: TableSchema | None) -> None:
        """Take the column order of ``table`` (this lineage's table after a DDL; ADD ... AFTER and FIRST
        place a column), kept once the table is dropped."""
        if self.alive and table is not None:
            names = (c.name.lower() for c in table.columns)
            self.order = [self.current[n] for n in names if n in self.current]

    def _identity_for(self, col: ColumnSchema, reuse: bool) -> int:
        if reuse:
            same = [i for i, d in enumerate(self.defs) if d.name.lower() == col.name.lower()]
            if same:
                ident = same[-1]
                self.defs[ident] = col
                self.types[ident] = widen(self.types[ident], spark_type(col)[0])
                return ident
        self.defs.append(col)
        self.types.append(spark_type(col)[0])
        return len(self.defs) - 1

    def create(self, columns: Iterable[ColumnSchema]) -> None:
        """CREATE TABLE: the first definition, or a new generation of a dropped/replaced table."""
        again = bool(self.defs)
        if again:
            self.generation += 1
        self.current = {col.name.lower(): self._identity_for(col, again) for col in columns}
        self.alive = True

    def modify(self, col: ColumnSchema) -> None:
        name = col.name.lower()
        if name in self.current:
            ident = self.current[name]
            self.defs[ident] = col
            self.types[ident] = widen(self.types[ident], spark_type(col)[0])
        else:
            self.current[name] = self._identity_for(col, False)

    def move_to(self, db: str, table: str, key: tuple[int, str, int]) -> None:
        self.segments[-1].end = key
        self.segments.append(Segment(db, table, key))

    def snapshot(self, key: tuple[int, str, int]) -> None:
        seg = self.segments[-1]
        names = {logged: ident for logged, ident in self.current.items()}
        seg.keys.append(key)
        seg.versions.append(names)      # identities now, output names in _lineage
        seg.generations.append(self.generation)

    def absorb(self, other: _Building, key: tuple[int, str, int]) -> None:
        """A table renamed onto this (dropped) one's name: a new generation of this lineage; its columns join
        the same-named identities, and its earlier segments come along."""
        self.generation += 1
        remap = {ident: self._identity_for(col, True) for ident, col in enumerate(other.defs)}
        for seg in other.segments:
            seg.versions = [{n: remap[i] for n, i in v.items()} for v in seg.versions]
            seg.generations = [self.generation] * len(seg.generations)
        other.segments[-1].end = key
        self.segments[-1].end = key
        self.segments = [*self.segments, *other.segments, Segment(self.final[0], self.final[1], key)]
        self.current = {n: remap[i] for n, i in other.current.items()}
        self.alive = True


def widen(a: str, b: str) -> str:
    """The Spark type that holds every value of types ``a`` and ``b`` (a column whose type changed): the
    wider integer or decimal, double for float, timestamp_ntz for date, binary for text and bytes, and
    string (the value's text) when nothing narrower holds both exactly."""
    if a == b:
        return a
    ints = {"int": (10, 0), "bigint": (19, 0)}
    def dec(t: str) -> tuple[int, int] | None:
        if t in ints:
            return ints[t]
        if t.startswith("decimal("):
            p, s = t[len("decimal("):-1].split(",")
            return int(p), int(s)
        return None
    if {a, b} == {"int", "bigint"}:
        return "bigint"
    da, db_ = dec(a), dec(b)
    if da is not None and db_ is not None:
        scale = max(da[1], db_[1])
        digits = max(da[0] - da[1], db_[0] - db_[1]) + scale
        return f"decimal({digits},{scale})" if digits <= 38 else "string"
    if {a, b} in ({"float", "double"}, {"int", "float"}, {"int", "double"}):
        return "double"
    if {a, b} == {"date", "timestamp_ntz"}:
        return "timestamp_ntz"
    if {a, b} == {"string", "binary"}:
        return "binary"
    return "string"


def table_lineages(history: SchemaHistory) -> dict[tuple[str, str], TableLineage]:
    """Every table of ``history`` (initial catalog and DDL) under its final name, with its typed columns
    and the segments mapping logged rows onto them."""
    live: dict[tuple[str, str], _Building] = {}       # name now → lineage
    final: dict[tuple[str, str], _Building] = {}      # final name → lineage (dead ones keep their name)
    for (db, name), table in history.initial.tables.items():
        b = final[(db, name)] = live[(db, name)] = _Building(db, name, _FIRST)
        b.create(table.columns)
        b.snapshot(_FIRST)
        b.follow_order(table)
    for entry in history.entries:
        key = entry.position.sort_key() if entry.position is not None else _FIRST
        touched: list[_Building] = []
        for change in entry.changes:
            _walk(change, key, live, final, touched)
        for b in dict.fromkeys(touched):
            b.snapshot(key)
            b.follow_order(entry.catalog.table(*b.final))
    return {k: _lineage(b) for k, b in final.items() if b.defs}


def _walk(change: Any, key: tuple[int, str, int], live: dict[tuple[str, str], _Building],
          final: dict[tuple[str, str], _Building], touched: list[_Building]) -> None:
    if isinstance(change, ch.DropDatabase):
        for name in [k for k in live if k[0] == change.db]:
            gone = live.pop(name)
            gone.alive, gone.current = False, {}
            touched.append(gone)
        return
    table_key = (getattr(change, "db", ""), getattr(change, "table", ""))
    if not table_key[1]:
        return
    if isinstance(change, ch.CreateTable):
        made = live.get(table_key) or final.get(table_key)
        if made is None:
            made = final[table_key] = _Building(*table_key, key)
        elif (made.segments[-1].end is not None
              or (made.segments[-1].db, made.segments[-1].table) != table_key):
            made.move_to(*table_key, key)
        live[table_key] = made
        made.create(change.columns)
        touched.append(made)
        return
    found = live.get(table_key)
    if found is None:
        return
    b = found
    touched.append(b)
    if isinstance(change, ch.CreateOrModifyColumn):
        b.modify(change.column)
    elif isinstance(change, ch.RenameColumn):
        ident = b.current.pop(change.old_name.lower(), None)
        if ident is not None:
            b.current[change.new_name.lower()] = ident
            b.defs[ident] = replace(b.defs[ident], name=change.new_name)
    elif isinstance(change, ch.DropColumn):
        b.current.pop(change.column_name.lower(), None)
    elif isinstance(change, ch.DropTable):
        live.pop(table_key, None)
        b.alive, b.current = False, {}
    elif isinstance(change, ch.RenameTable):
        # The lineage follows its table: rows logged under the old name land in the new name's table.
        new_key = (change.new_db, change.new_table)
        live.pop(table_key, None)
        if final.get(table_key) is b:
            del final[table_key]
        target = final.get(new_key)
        if target is not None and target is not b:
            target.absorb(b, key)
            live[new_key] = target
            touched.append(target)
            return
        b.final = new_key
        final[new_key] = b
        live[new_key] = b
        b.move_to(*new_key, key)


def _lineage(b: _Building) -> TableLineage:
    # Output names: the newest identity with a name keeps it; older ones get __v1, __v2 ...
    names: dict[int, str] = {}
    by_name: dict[str, list[int]] = {}
    for ident, col in enumerate(b.defs):
        by_name.setdefault(col.name.lower(), []).append(ident)
    for idents in by_name.values():
        for n, ident in enumerate(idents):
            base = b.defs[ident].name
            names[ident] = base if n == len(idents) - 1 else f"{base}__v{n + 1}"
    # the table's current column order, then the columns it no longer has (dropped, older __v ones)
    placed = list(dict.fromkeys(b.order))
    ordered = placed + [i for i in range(len(b.defs)) if i not in set(placed)]
    columns = [ColumnOut(names[i], b.types[i], b.defs[i]) for i in ordered]
    segments = [Segment(s.db, s.table, s.start, s.end, list(s.keys),
                        [{logged: names[int(ident)] for logged, ident in v.items()} for v in s.versions],
                        list(s.generations))
                for s in b.segments if s.keys or s.end is None]
    return TableLineage(b.final[0], b.final[1], columns, segments)


def untyped_lineage(db: str, table: str, names: list[str]) -> TableLineage:
    """A lineage for a table the history does not define (lenient DDL, rows resolved from TABLE_MAP
    metadata): every logged column as a string holding its plain value."""
    columns = [ColumnOut(n, "string", ColumnSchema(n, "text")) for n in names]
    segment = Segment(db, table, _FIRST, None, [_FIRST], [{n.lower(): n for n in names}], [0])
    return TableLineage(db, table, columns, [segment])


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
        found = lineage.lookup(row["db"], row["table"], position_key(row["file"], row["offset"]))
        if found is None:
            continue        # logged under this name when it belonged to another table's lineage
        names, generation = found
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
                       tuple(order) if order is not None else None, invalid, generation])
        yield tuple(values)
