"""``apply --initial live``: the replica's first rows, read from the server at a recorded binlog position.

Strategy: on MySQL, one connection takes ``FLUSH TABLES WITH READ LOCK`` only while it starts a consistent
snapshot (``START TRANSACTION WITH CONSISTENT SNAPSHOT``), reads the binlog's end, the GTIDs and the schema,
then unlocks: no transaction or DDL commits in between, so the rows the transaction sees, the position and
the schema all describe one moment. MariaDB gives the snapshot's own binlog position
(``binlog_snapshot_file``/``_position``), so it takes no lock (and needs no RELOAD privilege); the schema is
read before and after the snapshot starts and must not differ. The chosen tables are then read in that
transaction, about ``--initial-chunk`` rows at a time, off the wire into Arrow columns of the server's text
(``io.result_set``, on a thread of its own that reads two chunks ahead), converted to the replica's types
(by Arrow's casts where they parse a column, ``_arrow_column``, else as pymysql reads each value and by
``server_value``, the rules ``--initial DUMP.sql`` uses too), and streamed into each table's first Delta
commit, at the position's order. The run then follows the binlog from that position with the schema read
here. A run killed during the snapshot leaves a fresh state, and the next one takes the snapshot again
(each table is replaced whole).
"""

from __future__ import annotations

import datetime
import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa

from binlog_model.errors import ConfigError
from binlog_model.io.result_set import ResultColumns, read_ahead, read_result_columns
from binlog_model.replica.layout import META, TableLayout, position_order
from binlog_model.sinks.delta import DeltaReplica
from binlog_model.spark.typed_values import InvalidValue, coerce_value
from schema_tracker.history import SchemaHistory
from schema_tracker.model import Catalog, ColumnSchema

__all__ = ["NOT_GIVEN", "InitialSnapshot", "InitialTable", "server_value", "take_initial_snapshot"]

_UTC = datetime.UTC
_SYSTEM = {"mysql", "information_schema", "performance_schema", "sys"}


@dataclass
class InitialSnapshot:
    """Where the initial data was taken: the binlog continues at ``file:offset`` with ``catalog``, written
    by a server of ``server_version``."""

    file: str
    offset: int
    gtids: str
    catalog: Catalog
    tables: int = 0
    rows: int = 0
    server_version: str = ""

    def history(self, lenient: bool) -> SchemaHistory:
        """The schema history the binlog continues with."""
        return SchemaHistory(self.catalog, lenient=lenient, server_version=self.server_version)


class _NotGiven:
    """A column value the initial data does not give (a generated column a dump leaves out)."""


NOT_GIVEN = _NotGiven()


def take_initial_snapshot(connect: Callable[..., Any], replica: DeltaReplica,
                          select: Callable[[str, str], bool] | None, *, chunk: int = 50_000
                          ) -> InitialSnapshot:
    """Read the chosen tables at one binlog position into the replica (see the module docstring)."""
    import pymysql

    from schema_tracker.snapshot import catalog_from_server

    conn = connect(charset="utf8mb4", autocommit=True, read_timeout=3600, write_timeout=3600)
    try:
        cur = conn.cursor()
        cur.execute("SET SESSION time_zone = '+00:00'")
        cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        version = str(conn.get_server_info())
        if "mariadb" in version.lower():
            file, offset, catalog = _mariadb_snapshot(conn, catalog_from_server)
            gtids = ""      # not read without a lock: the position is exact, @@gtid_binlog_pos would not be
        else:
            try:
                cur.execute("FLUSH TABLES WITH READ LOCK")
            except pymysql.err.OperationalError as err:
                raise ConfigError(f"--initial live needs the RELOAD privilege (FLUSH TABLES WITH READ LOCK, "
                                  f"held while the snapshot starts): {err.args[-1]}") from None
            try:
                cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
                file, offset = _binlog_end(cur)
                cur.execute("SELECT @@gtid_executed")
                gtids = str(cur.fetchone()[0] or "").replace("\n", "")
                catalog = catalog_from_server(conn)
            finally:
                cur.execute("UNLOCK TABLES")
        snapshot = InitialSnapshot(file, offset, gtids, catalog, server_version=version)
        at = f"{file}:{offset}"
        position_order(file, offset)        # a binlog without numbered files fails before any write
        for schema in sorted(catalog.tables.values(), key=lambda t: (t.db, t.name)):
            db, name = schema.db, schema.name
            if db.lower() in _SYSTEM or (select is not None and not select(db, name)):
                continue
            table = InitialTable(replica, TableLayout.of(schema), at, gtids)
            sql = (f"SELECT {', '.join(_selected(c) for c in table.layout.columns)} "
                   f"FROM {_quote(db)}.{_quote(name)}")
            snapshot.rows += table.load(read_ahead(read_result_columns(conn, sql, chunk,
                                                                       f"--initial live: {db}.{name}")))
            snapshot.tables += 1
        conn.rollback()
        return snapshot
    finally:
        conn.close()


def _mariadb_snapshot(conn: Any, read_catalog: Callable[[Any], Catalog]) -> tuple[str, int, Catalog]:
    """MariaDB's lock-free snapshot: ``binlog_snapshot_file``/``_position`` are the binlog position of the
    consistent snapshot. The schema is not transactional, so it is read before and after the snapshot
    starts, and a DDL in between (the two differ) starts it over."""
    cur = conn.cursor()
    for _ in range(10):
        before = read_catalog(conn)
        cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        cur.execute("SHOW STATUS LIKE 'binlog_snapshot_%'")
        status = {str(k).lower(): str(v) for k, v in cur.fetchall()}
        catalog = read_catalog(conn)
        if catalog == before:
            if not status.get("binlog_snapshot_file"):
                raise ConfigError("binary logging is off on the server (log_bin): there is no position to "
                                  "start the replica from")
            return status["binlog_snapshot_file"], int(status["binlog_snapshot_position"]), catalog
        conn.rollback()
    raise ConfigError("--initial live: the schema changed during each of 10 attempts to start the snapshot "
                      "(DDL running all the time); try again when it is quieter")


class InitialTable:
    """One table's initial rows, written chunk by chunk at the snapshot's position: the first chunk creates
    the table (replacing one a killed run left), the next ones append; a keyless table's copy numbers run
    on across chunks."""

    def __init__(self, replica: DeltaReplica, layout: TableLayout, at: str, gtids: str) -> None:
        self.replica, self.layout, self.at, self.gtids = replica, layout, at, gtids
        self.created = False
        self._seen: dict[bytes, int] = {}

    def write(self, rows: list[tuple[Any, ...]]) -> None:
        """Rows as pymysql reads them from a ``SELECT`` (``server_value``'s input)."""
        raw: list[pa.Array | list[Any]] = ([list(c) for c in zip(*rows, strict=True)] if rows
                                          else [[] for _ in self.layout.columns])
        self._write(_typed_batch(self.layout, raw, len(rows), self.at, self._seen))

    def load(self, chunks: Iterable[ResultColumns]) -> int:
        """The whole table in one commit, from ``read_result_columns``' chunks (each column converted by
        Arrow from the server's text where it can, ``_arrow_column``, else as pymysql would read it, value
        by value), streamed to the writer a chunk at a time: memory holds a chunk, and the table gets data
        files of the writer's size rather than one per chunk. Returns the rows written."""
        rows = 0
        failed: list[BaseException] = []

        def batches() -> Iterator[pa.RecordBatch]:
            nonlocal rows
            try:
                for result in chunks:
                    rows += len(result)
                    yield from _typed_batch(self.layout, result_columns(self.layout, result), len(result),
                                            self.at, self._seen).to_batches()
            except BaseException as err:
                failed.append(err)
                raise
        try:
            self._write(pa.RecordBatchReader.from_batches(self.layout.arrow_schema(), batches()))
        except Exception:
            if failed:      # the writer reports it as its own error: the reading's typed one is the cause
                raise failed[0] from None
            raise
        return rows

    def _write(self, data: pa.Table | pa.RecordBatchReader) -> None:
        if self.created:
            self.replica.append(self.layout, data, self.at, self.gtids)
        else:
            self.replica.create(self.layout, self.at, self.gtids, data)
            self.created = True

    def finish(self) -> None:
        """An empty table still exists in the replica."""
        if not self.created:
            self.write([])


def _binlog_end(cur: Any) -> tuple[str, int]:
    import pymysql

    for sql in ("SHOW BINARY LOG STATUS", "SHOW MASTER STATUS"):
        try:
            cur.execute(sql)
        except pymysql.err.ProgrammingError:
            continue
        row = cur.fetchone()
        if row is None:
            raise ConfigError("binary logging is off on the server (log_bin): there is no position to start "
                              "the replica from")
        return str(row[0]), int(row[1])
    raise ConfigError("the server answers neither SHOW BINARY LOG STATUS nor SHOW MASTER STATUS")


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _selected(column: ColumnSchema) -> str:
    # pymysql knows no VECTOR type and would decode its bytes as text: hex is exact
    if column.data_type == "vector":
        return f"HEX({_quote(column.name)})"
    return _quote(column.name)


# The Python types pymysql gives for a column of each Arrow type that ``server_value`` hands to Arrow as they
# are (no column-kind rule of its own applies): such a column is converted whole, by Arrow, which refuses what
# the type cannot hold (out of range, too many digits) exactly where ``coerce_value`` would; then, and for
# every other column, each value goes through ``server_value``.
_AS_IS = {"bit", "time", "set", "geometry", "point", "linestring", "polygon", "multipoint", "multilinestring",
          "multipolygon", "geometrycollection", "geomcollection", "vector", "json"}


def _plain_types(arrow: pa.DataType) -> tuple[type, ...]:
    if pa.types.is_integer(arrow):
        return (int,)
    if pa.types.is_floating(arrow):
        return (float,)
    if pa.types.is_decimal(arrow):
        return (Decimal, int)
    if pa.types.is_string(arrow):
        return (str,)
    if pa.types.is_binary(arrow):
        return (bytes,)
    if pa.types.is_timestamp(arrow):
        return (datetime.datetime,)
    if pa.types.is_date32(arrow):
        return (datetime.date,)
    return ()


def _whole_column(values: list[Any], column: ColumnSchema, arrow: pa.DataType) -> pa.Array | None:
    """The column converted by Arrow in one call; None where its values need ``server_value`` one by one."""
    kind = column.data_type
    if kind in _AS_IS or (kind == "decimal" and pa.types.is_string(arrow)):
        return None
    allowed = _plain_types(arrow)
    if not allowed or (pa.types.is_timestamp(arrow) and kind not in ("datetime", "timestamp")):
        return None
    if pa.types.is_timestamp(arrow) and (arrow.tz is None) != (kind == "datetime"):
        return None
    found = {type(v) for v in values}
    found.discard(type(None))
    if not found <= set(allowed):
        return None     # bool, a zero date's text, bytes in a text column: the per-value rules decide
    try:
        return pa.array(values, type=arrow)
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        return None


def result_columns(layout: TableLayout, result: ResultColumns) -> list[pa.Array | list[Any]]:
    """``_typed_batch``'s input from a chunk of ``read_result_columns``: each column typed by Arrow
    (``_arrow_column``), or pymysql's values where it hands the column back."""
    raw: list[pa.Array | list[Any]] = []
    for i, (column, kind) in enumerate(zip(layout.columns, layout.types, strict=True)):
        whole = _arrow_column(result.arrays[i], column, kind, result.decoders[i][0])
        raw.append(result.values(i) if whole is None else whole)
    return raw


def _arrow_column(raw: pa.Array, column: ColumnSchema, arrow: pa.DataType, encoding: str | None
                  ) -> pa.Array | None:
    """A column of the server's text (``binary``, from ``read_result_columns``) converted by Arrow's casts
    to the replica's type: exactly what pymysql's value and ``_whole_column`` give, where Arrow parses the
    text (a decimal of the column's scale, an ISO date or date-time, an integer in range, UTF-8). None where
    the per-value rules decide: the kinds of ``_AS_IS``, a zero or invalid date, a value out of the type's
    range, text that is not UTF-8, a text column's bytes where the replica keeps bytes or the other way."""
    kind = column.data_type
    if kind in _AS_IS or (kind == "decimal" and pa.types.is_string(arrow)):
        return None
    text_field = encoding not in (None, "ascii")        # pymysql decodes its values to str
    try:
        if pa.types.is_binary(arrow):
            return raw if encoding is None else None
        if pa.types.is_string(arrow):
            return raw.cast(pa.string()) if text_field else None
        if text_field:
            return None
        text = raw.view(pa.string())        # no UTF-8 check: a byte that is not ASCII fails the parse
        if pa.types.is_integer(arrow) or pa.types.is_decimal(arrow):
            return text.cast(arrow)
        if pa.types.is_floating(arrow):         # as pymysql's float(text), then Arrow's narrowing
            return text.cast(pa.float64()).cast(arrow)
        if pa.types.is_date32(arrow) and kind == "date":
            return text.cast(arrow)
        if pa.types.is_timestamp(arrow) and (arrow.tz is None, kind) in ((True, "datetime"),
                                                                          (False, "timestamp")):
            return text.cast(pa.timestamp(arrow.unit)).cast(arrow)      # the session's zone is UTC
    except (pa.ArrowException, OverflowError, ValueError):
        return None
    return None


def _typed_batch(layout: TableLayout, raw: list[pa.Array | list[Any]], n: int, at: str,
                 seen: dict[bytes, int]) -> pa.Table:
    """One chunk of ``n`` rows in the replica's layout, from its columns: each already typed (an Arrow
    array of the column's type) or pymysql's values; ``seen``: a keyless table's copies so far (by digest),
    across the table's chunks."""
    file, _, offset = at.rpartition(":")
    order = position_order(file, int(offset))
    arrays: list[pa.Array] = []
    invalid: dict[int, list[str]] = {}      # row -> its columns the type cannot hold (most chunks: none)
    for values, column, kind in zip(raw, layout.columns, layout.types, strict=True):
        if isinstance(values, pa.Array):
            arrays.append(values)
            continue
        whole = _whole_column(values, column, kind)
        if whole is None:
            typed_values = []
            for row, value in enumerate(values):
                try:
                    typed = server_value(value, column, kind)
                except InvalidValue:
                    typed = None
                    invalid.setdefault(row, []).append(column.name)
                typed_values.append(typed)
            whole = pa.array(typed_values, type=kind)
        arrays.append(whole)
    meta = {"binlog_order": pa.repeat(pa.scalar(order, pa.int64()), n),
            "binlog_gtid": pa.nulls(n, pa.string()),
            "binlog_file": pa.repeat(pa.scalar(file, pa.string()), n),
            "binlog_offset": pa.repeat(pa.scalar(int(offset), pa.int64()), n),
            "binlog_invalid": _invalid_lists(invalid, n)}
    if layout.keyless:
        digests: list[bytes] = []
        copies: list[int] = []
        columns = [a.to_pylist() for a in arrays]
        for i in range(n):
            digest = layout.row_hash([c[i] for c in columns])
            seen[digest] = seen.get(digest, 0) + 1
            digests.append(digest)
            copies.append(seen[digest])
    arrays += [meta[name] for name, _ in META]
    if layout.keyless:
        arrays += [pa.array(digests, type=pa.binary()), pa.array(copies, type=pa.int32())]
    return pa.Table.from_arrays(arrays, schema=layout.arrow_schema())


def _invalid_lists(invalid: dict[int, list[str]], n: int) -> pa.Array:
    """``binlog_invalid`` of ``n`` rows (an empty list where a row is not in ``invalid``)."""
    if invalid:
        return pa.array([invalid.get(row, []) for row in range(n)], pa.list_(pa.string()))
    return pa.ListArray.from_arrays(pa.repeat(pa.scalar(0, pa.int32()), n + 1), pa.array([], pa.string()))


def server_value(value: Any, column: ColumnSchema, arrow: pa.DataType) -> Any:
    """A value as pymysql reads it from ``SELECT`` (session time zone UTC) → the replica's typed value, by
    the one mapping ``resolve``'s Parquet uses. ``InvalidValue`` where the type cannot hold it (a zero
    date, which pymysql hands over as text)."""
    if value is None:
        return None
    if value is NOT_GIVEN:
        raise InvalidValue
    kind = column.data_type
    if kind == "bit":
        value = int.from_bytes(value, "big") if isinstance(value, bytes) else int(value)
    elif kind == "time":
        if isinstance(value, datetime.timedelta):
            return value // datetime.timedelta(microseconds=1)
        raise InvalidValue
    elif kind in ("date", "datetime", "timestamp") and isinstance(value, str | bytes):
        raise InvalidValue      # a zero or invalid date: pymysql gives its text
    elif kind == "timestamp" and isinstance(value, datetime.datetime):
        return value.replace(tzinfo=_UTC)
    elif kind == "set":
        labels = value if isinstance(value, set | frozenset) else {v for v in str(value).split(",") if v}
        return ",".join(label for label in column.enum_values if label in labels)
    elif kind in ("geometry", "point", "linestring", "polygon", "multipoint", "multilinestring",
                  "multipolygon", "geometrycollection", "geomcollection"):
        return bytes(value)[4:]     # the server's form is the SRID, then the WKB
    elif kind == "vector":
        raw = bytes.fromhex(value) if isinstance(value, str) else bytes(value)
        return list(struct.unpack(f"<{len(raw) // 4}f", raw))
    elif kind == "json" and isinstance(value, bytes):
        value = value.decode("utf-8")
    elif kind == "decimal" and pa.types.is_string(arrow):
        return format(value, "f")       # the plain text the binlog's decimal has, never an exponent
    if pa.types.is_string(arrow) and isinstance(value, bytes) and column.charset not in (None, "binary"):
        value = value.decode("utf-8")
    return coerce_value(value, arrow)
