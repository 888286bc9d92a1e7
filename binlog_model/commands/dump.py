"""``binlog-model dump FILE...``: print every event, as ``mysqlbinlog -vv`` does, or as JSON lines.

Strategy: the event stream comes from ``io.file_source.FileSource`` (markers dropped); a table maps each event
class to a text renderer (its one-line summary after the common ``#... server id ... end_log_pos ...`` line,
plus body lines), and rows events render their images as ``### INSERT INTO ...`` pseudo-SQL with the column
type comment mysqlbinlog prints. ``--json`` writes one JSON object per event with every dataclass field;
``bytes`` become ``{"hex": "..."}``, Decimal/UUID/dates become strings, ``NOT_PRESENT`` becomes ``{"$":
"NOT_PRESENT"}``; a rows event names its TABLE_MAP as ``{"table_id", "schema", "table"}`` instead of repeating
it (the TABLE_MAP event itself is printed in full just before). An event whose body does not decode (an
UndecodableEvent) is printed raw with a note saying why, and the dump goes on; after the last event a warning
line counts them and the exit status is 1, as ``mysqlbinlog``'s (scripts test it). Framing and checksum errors
still stop it: they are ``BinlogError``s, turned by ``binlog_model.cli`` into one line and exit status 2.

About 550 lines: one text renderer per event type, in the order ``mysqlbinlog`` prints them, so that a
reader compares our output with theirs in one place.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import json
import math
import os
import re
import struct
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import click

from binlog_model.commands import options
from binlog_model.errors import BinlogError
from binlog_model.io.file_source import FileSource
from binlog_model.io.snapshots import load_snapshot
from binlog_model.position import EventPosition
from binlog_model.resolve.ddl_pass import apply_query
from binlog_model.resolve.event_range import EventRange
from binlog_model.resolve.table_filter import TableFilter
from binlog_model.resolve.transactions import QueryKind, classify_query
from binlog_model.runs.progress import ProgressDisplay, progress_mode, source_counters
from binlog_model.runs.source import decoded
from binlog_model.wire import events as ev
from binlog_model.wire.column_types import ColumnType
from binlog_model.wire.header import EventType
from binlog_model.wire.table_map import TableMapEvent

__all__ = ["command", "event_to_json", "render_event"]

_CT = ColumnType

# mysqlbinlog's names for the event types it prints
_TEXT_NAMES: dict[int, str] = {
    EventType.START_EVENT_V3: "Start",
    EventType.FORMAT_DESCRIPTION_EVENT: "Start",
    EventType.QUERY_EVENT: "Query",
    EventType.QUERY_COMPRESSED_EVENT: "Query_compressed",
    EventType.STOP_EVENT: "Stop",
    EventType.ROTATE_EVENT: "Rotate",
    EventType.INTVAR_EVENT: "Intvar",
    EventType.RAND_EVENT: "Rand",
    EventType.USER_VAR_EVENT: "User_var",
    EventType.XID_EVENT: "Xid",
    EventType.TABLE_MAP_EVENT: "Table_map",
    EventType.WRITE_ROWS_EVENT_V1: "Write_rows_v1",
    EventType.UPDATE_ROWS_EVENT_V1: "Update_rows_v1",
    EventType.DELETE_ROWS_EVENT_V1: "Delete_rows_v1",
    EventType.WRITE_ROWS_EVENT: "Write_rows",
    EventType.UPDATE_ROWS_EVENT: "Update_rows",
    EventType.DELETE_ROWS_EVENT: "Delete_rows",
    EventType.PARTIAL_UPDATE_ROWS_EVENT: "Update_rows_partial",
    EventType.ROWS_QUERY_LOG_EVENT: "Rows_query",
    EventType.GTID_LOG_EVENT: "GTID",
    EventType.ANONYMOUS_GTID_LOG_EVENT: "Anonymous_GTID",
    EventType.GTID_TAGGED_LOG_EVENT: "GTID_TAGGED",
    EventType.PREVIOUS_GTIDS_LOG_EVENT: "Previous-GTIDs",
    EventType.TRANSACTION_PAYLOAD_EVENT: "Transaction_Payload",
    EventType.XA_PREPARE_LOG_EVENT: "XA PREPARE",
    EventType.ANNOTATE_ROWS_EVENT: "Annotate_rows",
    EventType.BINLOG_CHECKPOINT_EVENT: "Binlog checkpoint",
    EventType.GTID_EVENT: "GTID",
    EventType.GTID_LIST_EVENT: "Gtid list",
    EventType.WRITE_ROWS_COMPRESSED_EVENT_V1: "Write_compressed_rows_v1",
    EventType.UPDATE_ROWS_COMPRESSED_EVENT_V1: "Update_compressed_rows_v1",
    EventType.DELETE_ROWS_COMPRESSED_EVENT_V1: "Delete_compressed_rows_v1",
    EventType.WRITE_ROWS_COMPRESSED_EVENT: "Write_compressed_rows",
    EventType.UPDATE_ROWS_COMPRESSED_EVENT: "Update_compressed_rows",
    EventType.DELETE_ROWS_COMPRESSED_EVENT: "Delete_compressed_rows",
}

# integer column types -> bit width, for the "-1 (4294967295)" unsigned rendering
_INT_BITS: dict[int, int] = {_CT.TINY: 8, _CT.SHORT: 16, _CT.INT24: 24, _CT.LONG: 32, _CT.LONGLONG: 64}


# --- text rendering ---------------------------------------------------------------------------------------

# How mysqlbinlog writes a string byte: these escapes, \xNN for the other control bytes, the rest as is.
_BYTE_ESCAPES = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x27: "\\'",
                 0x5C: "\\\\"}


def _quote(raw: bytes) -> str:
    """A quoted string value as mysqlbinlog writes it, except that bytes which are not UTF-8 text come out
    as ``\\xNN`` (mysqlbinlog writes them raw, which would make our output undecodable as text)."""
    out = []
    for ch in raw.decode("utf-8", errors="surrogateescape"):
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # a byte that is not part of a UTF-8 sequence
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code in _BYTE_ESCAPES:
            out.append(_BYTE_ESCAPES[code])
        elif code < 0x20:
            out.append(f"\\x{code:02x}")
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


def _real_type(ctype: int, meta: int) -> tuple[int, int]:
    """The column's real type and length: TABLE_MAP sends ENUM, SET and CHAR as STRING with the real type
    in the metadata's high byte."""
    if ctype == _CT.STRING and meta >= 256:
        byte0, byte1 = meta >> 8, meta & 0xFF
        if byte0 in (_CT.ENUM, _CT.SET):
            return byte0, byte1
        return _CT.STRING, byte1 | (((byte0 & 0x30) ^ 0x30) << 4)
    return ctype, meta


_BLOB_NAMES = {1: "TINYBLOB/TINYTEXT", 2: "BLOB/TEXT", 3: "MEDIUMBLOB/MEDIUMTEXT", 4: "LONGBLOB/LONGTEXT"}


def _type_comment(ctype: int, meta: int) -> str:
    """mysqlbinlog's column type comment (``INT``, ``VARSTRING(40)``, ``ENUM(1 byte)`` ...)."""
    real, length = _real_type(ctype, meta)
    names: dict[int, Callable[[], str]] = {
        _CT.TINY: lambda: "TINYINT", _CT.SHORT: lambda: "SHORTINT", _CT.INT24: lambda: "MEDIUMINT",
        _CT.LONG: lambda: "INT", _CT.LONGLONG: lambda: "LONGINT", _CT.FLOAT: lambda: "FLOAT",
        _CT.DOUBLE: lambda: "DOUBLE", _CT.NEWDECIMAL: lambda: f"DECIMAL({meta >> 8},{meta & 0xFF})",
        _CT.VARCHAR: lambda: f"VARSTRING({meta})", _CT.STRING: lambda: f"STRING({length})",
        _CT.ENUM: lambda: f"ENUM({length} bytes)" if length > 1 else "ENUM(1 byte)",
        _CT.SET: lambda: f"SET({length} bytes)", _CT.BLOB: lambda: _BLOB_NAMES.get(meta, "BLOB/TEXT"),
        _CT.JSON: lambda: "JSON",
        _CT.GEOMETRY: lambda: "GEOMETRY", _CT.DATE: lambda: "DATE", _CT.NEWDATE: lambda: "DATE",
        _CT.DATETIME: lambda: "DATETIME", _CT.DATETIME2: lambda: f"DATETIME({meta})",
        _CT.TIMESTAMP: lambda: "TIMESTAMP", _CT.TIMESTAMP2: lambda: f"TIMESTAMP({meta})",
        _CT.TIME: lambda: "TIME", _CT.TIME2: lambda: f"TIME({meta})", _CT.YEAR: lambda: "YEAR",
        _CT.BIT: lambda: f"BIT({(meta >> 8) * 8 + (meta & 0xFF)})", _CT.VECTOR: lambda: "VECTOR",
    }
    make = names.get(real)
    return make() if make else f"TYPE_{real}"


def _float32_text(value: float) -> str:
    """FLOAT as mysqlbinlog's ``%-20g`` (6 significant digits) when that reads back as the same float32;
    otherwise the fewest digits that do (mysqlbinlog would lose the value there)."""
    for digits in range(6, 10):
        text = format(value, f".{digits}g")
        if struct.unpack("<f", struct.pack("<f", float(text)))[0] == value:
            return f"{text:<20}"
    return f"{value!r:<20}"


def _fraction(microsecond: int, digits: int) -> str:
    """``.NNN`` with the column's fractional digits (TIME(3) -> 3), as mysqlbinlog prints them."""
    return f".{microsecond:06d}"[:digits + 1] if digits > 0 else ""


def _value_text(value: Any, ctype: int, meta: int | None = None) -> str:
    """One column value as mysqlbinlog ``-vv`` prints it in a ``###   @n=`` line. ``ctype``/``meta`` are
    the TABLE_MAP column type and metadata (``-1``/``None`` for a value without a column)."""
    real, length = _real_type(ctype, meta or 0)
    fsp = meta or 0
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        bits = _INT_BITS.get(ctype)
        if bits:  # as mysqlbinlog: the signed reading, and the unsigned one after it when they differ
            as_unsigned = value % (1 << bits)
            as_signed = as_unsigned - (1 << bits) if as_unsigned >> (bits - 1) else as_unsigned
            return f"{as_signed} ({as_unsigned})" if as_signed < 0 else str(as_signed)
        if real == _CT.BIT:  # every bit of the column, most significant first
            width = ((fsp >> 8) * 8 + (fsp & 0xFF)) or 1
            return f"b'{value:0{width}b}'"
        if real == _CT.SET:  # mysqlbinlog shows the stored bytes (little-endian), each byte's bits
            raw = value.to_bytes(max(length, 1), "little")
            return "b'" + "".join(f"{b:08b}" for b in raw) + "'"
        return str(value)
    if isinstance(value, bytes | bytearray):
        return _quote(bytes(value))
    if isinstance(value, float):
        if ctype == _CT.FLOAT:
            return _float32_text(value)
        return format(value, ".20g") if ctype == _CT.DOUBLE else repr(value)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")  # every digit of the scale: 0.000 and never 0E-3
    if ctype in (_CT.TIMESTAMP, _CT.TIMESTAMP2):  # mysqlbinlog prints the epoch seconds
        seconds = int(value.timestamp()) if isinstance(value, dt.datetime) else 0   # zero: InvalidDateTime
        micro = value.microsecond if isinstance(value, dt.datetime) else 0
        return f"{seconds}{_fraction(micro, fsp if ctype == _CT.TIMESTAMP2 else 0)}"
    if ctype in (_CT.DATETIME, _CT.DATETIME2) and hasattr(value, "microsecond"):
        digits = fsp if ctype == _CT.DATETIME2 else 0
        return (f"'{value.year:04d}-{value.month:02d}-{value.day:02d} {value.hour:02d}:{value.minute:02d}:"
                f"{value.second:02d}{_fraction(value.microsecond, digits)}'")
    if ctype in (_CT.DATE, _CT.NEWDATE) and hasattr(value, "day"):  # mysqlbinlog's DATE uses colons
        return f"'{value.year:04d}:{value.month:02d}:{value.day:02d}'"
    if isinstance(value, dt.timedelta):
        return "'" + _time_text(value, fsp if ctype == _CT.TIME2 else 0) + "'"
    if isinstance(value, dt.datetime):
        return "'" + value.isoformat(sep=" ") + "'"
    if isinstance(value, dt.date):
        return "'" + value.isoformat() + "'"
    if type(value).__name__ == "JsonDocument":
        return _quote(str(value.to_json()).encode())
    if hasattr(value, "wkb"):
        return "x'" + bytes(value.wkb).hex() + "'"
    if isinstance(value, tuple):
        if ctype == _CT.VECTOR:  # mysqlbinlog: [1.00000e+00,...], each float32 with %.5e
            return "[" + ",".join(format(v, ".5e") for v in value) + "]"
        return "(" + ", ".join(_value_text(v, -1) for v in value) + ")"
    return "'" + str(value) + "'"


def _vector_dimensions(table_map: Any) -> dict[int, int]:
    """Column index -> dimensions of each VECTOR column (TABLE_MAP's VECTOR_DIMENSIONALITY; {} if absent)."""
    dims = getattr(table_map, "vector_dimensions", None) or ()
    return {i: d for i, d in enumerate(dims) if d is not None}


def _time_text(v: dt.timedelta, digits: int) -> str:
    """TIME as ``[-]HH:MM:SS`` plus the column's fractional digits."""
    sign = "-" if v < dt.timedelta(0) else ""
    total = abs(v)
    secs = total.days * 86400 + total.seconds
    text = f"{sign}{secs // 3600:02d}:{secs % 3600 // 60:02d}:{secs % 60:02d}"
    return text + _fraction(total.microseconds, digits)


def _timedelta_text(v: dt.timedelta) -> str:
    sign = "-" if v < dt.timedelta(0) else ""
    total = abs(v)
    secs = total.days * 86400 + total.seconds
    text = f"{sign}{secs // 3600:02d}:{secs % 3600 // 60:02d}:{secs % 60:02d}"
    return f"{text}.{total.microseconds:06d}" if total.microseconds else text


def _label(names: Sequence[str] | None, i: int) -> str:
    """A column's name where it is known (quoted when it is no plain identifier), else mysqlbinlog's @N."""
    if names is None:
        return f"@{i + 1}"
    name = names[i]
    return name if _PLAIN_NAME.fullmatch(name) else "`" + name.replace("`", "``") + "`"


_PLAIN_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def _image_lines(row: Any, table_map: Any, names: Sequence[str] | None = None) -> Iterator[str]:
    dimensions = _vector_dimensions(table_map) if _CT.VECTOR in table_map.column_types else {}
    for i, value in enumerate(row):
        if value is not None and not value and type(value).__name__ == "NotPresent":
            continue
        ctype, meta = table_map.column_types[i], table_map.column_metas[i]
        comment = _type_comment(ctype, meta)
        if ctype == _CT.VECTOR and (i in dimensions or isinstance(value, tuple)):
            comment = f"VECTOR({dimensions.get(i, len(value) if isinstance(value, tuple) else 0)})"
        yield (f"###   {_label(names, i)}={_value_text(value, ctype, meta)} /* {comment} "
               f"meta={meta} nullable={int(table_map.nullable[i])} is_null={int(value is None)} */")


def _rows_lines(event: Any, names: Sequence[str] | None = None) -> Iterator[str]:
    tm = event.table_map
    name = f"`{tm.schema}`.`{tm.table}`"
    verb = {"insert": "INSERT INTO", "update": "UPDATE", "partial_update": "UPDATE", "delete": "DELETE FROM"}
    for row in event.rows:
        yield f"### {verb.get(event.kind, event.kind.upper())} {name}"
        if event.kind in ("update", "partial_update"):
            before, after = row
            yield "### WHERE"
            yield from _image_lines(before, tm, names)
            yield "### SET"
            yield from _image_lines(after, tm, names)
        elif event.kind == "delete":
            yield "### WHERE"
            yield from _image_lines(row, tm, names)
        else:
            yield "### SET"
            yield from _image_lines(row, tm, names)


def _summary(event: Any, names: Sequence[str] | None = None) -> tuple[str, list[str]]:
    """The text after the event name on the header line, and the body lines."""
    for cls, render in _RENDERERS:
        if isinstance(event, cls):
            return render(event)
    if hasattr(event, "rows") and hasattr(event, "table_map"):
        flags = " flags: STMT_END_F" if event.flags & 1 else ""
        return f": table id {event.table_id}{flags}", list(_rows_lines(event, names))
    if hasattr(event, "column_types") and hasattr(event, "schema"):
        return f": `{event.schema}`.`{event.table}` mapped to number {event.table_id}", []
    return "", []


def _query_summary(e: ev.QueryEvent) -> tuple[str, list[str]]:
    lines = [f"use `{e.schema}`/*!*/;"] if e.schema else []
    lines += [f"SET TIMESTAMP={e.header.timestamp}/*!*/;", e.query, "/*!*/;"]
    return f"\tthread_id={e.thread_id}\texec_time={e.exec_time}\terror_code={e.error_code}", lines


def _gtid_summary(e: ev.GtidEvent) -> tuple[str, list[str]]:
    clock = ""
    if e.last_committed is not None:
        clock = f"\tlast_committed={e.last_committed}\tsequence_number={e.sequence_number}"
    target = "'ANONYMOUS'" if e.anonymous else f"'{e.gtid}'"
    return clock, [f"SET @@SESSION.GTID_NEXT= {target}/*!*/;"]


_RENDERERS: list[tuple[type, Callable[[Any], tuple[str, list[str]]]]] = [
    (ev.FormatDescriptionEvent, lambda e: (f": binlog v {e.binlog_version}, server v {e.server_version} "
                                           f"created {_when(e.create_timestamp)}", [])),
    (ev.StartEventV3, lambda e: (f": binlog v {e.binlog_version}, server v {e.server_version}", [])),
    (ev.QueryEvent, _query_summary),
    (ev.RotateEvent, lambda e: (f" to {e.next_file}  pos: {e.position}", [])),
    (ev.XidEvent, lambda e: (f" = {e.xid}", ["COMMIT/*!*/;"])),
    (ev.IntvarEvent, lambda e: ("", [f"SET {'LAST_INSERT_ID' if e.kind == 1 else 'INSERT_ID'}"
                                     f"={e.value}/*!*/;"])),
    (ev.RandEvent, lambda e: ("", [f"SET @@RAND_SEED1={e.seed1}, @@RAND_SEED2={e.seed2}/*!*/;"])),
    (ev.UserVarEvent, lambda e: ("", [f"SET @`{e.name}`:="
                                      f"{'NULL' if e.is_null else _value_text(e.value, -1)}/*!*/;"])),
    (ev.RowsQueryEvent, lambda e: ("", ["# " + line for line in e.query.splitlines()])),
    (ev.AnnotateRowsEvent, lambda e: ("", ["#Q> " + line for line in e.query.splitlines()])),
    (ev.GtidEvent, _gtid_summary),
    (ev.MariadbGtidEvent, lambda e: (f" {e.gtid}{' ddl' if e.flags2 & e.FL_DDL else ''}"
                                     f"{f' cid={e.commit_id}' if e.commit_id is not None else ''}", [])),
    (ev.PreviousGtidsEvent, lambda e: ("", [f"# {e.gtid_set_text()}"] if e.gtid_sets else [])),
    (ev.GtidListEvent, lambda e: (" [" + ",".join(f"{d}-{s}-{n}" for d, s, n in e.gtids) + "]", [])),
    (ev.BinlogCheckpointEvent, lambda e: (f" {e.binlog_file}", [])),
    (ev.TransactionPayloadEvent, lambda e: (f"\tcompression='{'ZSTD' if e.compression_type == 0 else 'NONE'}'"
                                            f"\tpayload_size={e.payload_size}"
                                            f"\tuncompressed_size={e.uncompressed_size}", [])),
    (ev.UnknownEvent, lambda e: (f": {len(e.raw)} bytes", [])),
    (ev.UndecodableEvent, lambda e: (f": {len(e.raw)} bytes, not decoded", _undecodable_lines(e))),
    (ev.SkippedEvent, lambda e: (": skipped", [])),
]


_RAW_SHOWN = 4096


def _undecodable_lines(event: Any) -> list[str]:
    """A note saying why, then the body as hex (16 bytes a line, the first 4 KiB)."""
    err = event.error
    reason = getattr(err, "reason", None) or str(err)
    lines = [f"# NOTE: this event cannot be decoded ({type(err).__name__}: {reason}); shown raw"]
    raw = event.raw[:_RAW_SHOWN]
    for i in range(0, len(raw), 16):
        chunk = raw[i:i + 16]
        lines.append(f"# {i:08x}  {chunk.hex(' ')}")
    if len(event.raw) > _RAW_SHOWN:
        lines.append(f"# ... {len(event.raw) - _RAW_SHOWN} more bytes")
    return lines


def _when(ts: int) -> str:
    t = dt.datetime.fromtimestamp(ts, dt.UTC)
    return f"{t:%y%m%d} {t.hour:2d}:{t:%M:%S}"


def render_event(event: Any, names: Sequence[str] | None = None) -> list[str]:
    """The ``mysqlbinlog -vv``-like lines of one event (timestamps in UTC). ``names``: a rows event's column
    names (one per TABLE_MAP column), printed instead of ``@1``, ``@2`` ..."""
    h = event.header
    name = _TEXT_NAMES.get(int(h.event_type), h.type_name)
    summary, body = _summary(event, names)
    at = f"# at {h.offset}" if h.inner_index is None else f"# at {h.offset} (inner event {h.inner_index})"
    head = f"#{_when(h.timestamp)} server id {h.server_id}  end_log_pos {h.log_pos} \t{name}{summary}"
    return [at, head, *body]


# --- JSON rendering -----------------------------------------------------------------------------------------

def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return {"hex": bytes(value).hex()}
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return _timedelta_text(value)
    if type(value).__name__ == "NotPresent":
        return {"$": "NOT_PRESENT"}
    if type(value).__name__ == "JsonDocument":
        return {"json": value.to_json()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(value):
            if not f.repr:
                continue
            v = getattr(value, f.name)
            if f.name == "table_map" and v is not None and hasattr(v, "table_id"):
                out[f.name] = {"table_id": v.table_id, "schema": v.schema, "table": v.table}
            else:
                out[f.name] = _jsonable(v)
        return out
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, tuple | list | frozenset | set):
        return [_jsonable(v) for v in value]
    return str(value)


def event_to_json(event: Any) -> dict[str, Any]:
    """Every field of an event as JSON-ready data, plus ``event`` (class) and ``type`` (upstream name)."""
    body = _jsonable(event)
    assert isinstance(body, dict)
    return {"event": type(event).__name__, "type": event.header.type_name, **body}


def _kept(event: Any, tables: TableFilter, mapped: set[tuple[str, str]]) -> bool:
    """False for a TABLE_MAP or rows event of a table the filter leaves out (a dump has no schema history:
    the tables it knows are the ones TABLE_MAPs name)."""
    table_map = event if isinstance(event, TableMapEvent) else getattr(event, "table_map", None)
    if not isinstance(table_map, TableMapEvent):
        return True
    mapped.add((table_map.schema, table_map.table))
    return tables(table_map.schema, table_map.table)


class _ColumnNames:
    """The column names of each rows event where they are known: its TABLE_MAP's (binlog_row_metadata=FULL),
    else the tracked table's in a ``--snapshot`` history that follows the binlog's DDL as ``events`` does
    (when its columns are as many as the TABLE_MAP's), else None (``@N``). A statement the tracker cannot
    follow ends the naming from the snapshot, with a warning: a dump is a diagnostic and goes on."""

    def __init__(self, snapshot: str | None) -> None:
        self.history = load_snapshot(snapshot, lenient=True) if snapshot else None
        self.failure: str | None = None

    def see(self, event: Any) -> None:
        if self.history is None:
            return
        if isinstance(event, ev.FormatDescriptionEvent):
            self.history.server_version = event.server_version
        elif isinstance(event, ev.QueryEvent) and classify_query(event.query) is QueryKind.SCHEMA:
            h = event.header
            try:
                apply_query(self.history, event, EventPosition(os.path.basename(h.file or ""), h.offset))
            except BinlogError as err:
                self.failure = f"{err} (at {h.file}:{h.offset})"
                self.history = None

    def of(self, event: Any) -> Sequence[str] | None:
        table_map = getattr(event, "table_map", None)
        if not isinstance(table_map, TableMapEvent):
            return None
        if table_map.column_names and len(table_map.column_names) == len(table_map.column_types):
            return table_map.column_names
        table = (self.history.catalog.table(table_map.schema, table_map.table) if self.history is not None
                 else None)
        if table is None or table.uncertain:
            return None
        logged = [c.name for c in table.columns if not c.hidden]   # MySQL logs no functional-index column
        return logged if len(logged) == len(table_map.column_types) else None


def _in_database(event: Any, database: str) -> bool:
    """mysqlbinlog's --database: a QUERY event other than BEGIN/COMMIT/ROLLBACK/SAVEPOINT/XA needs DB as
    its default database; a TABLE_MAP or rows event, a table of DB. Names compare exactly, as there."""
    if isinstance(event, ev.QueryEvent):
        return classify_query(event.query) not in _STATEMENT_SCHEMA or event.schema == database
    table_map = event if isinstance(event, TableMapEvent) else getattr(event, "table_map", None)
    return not isinstance(table_map, TableMapEvent) or table_map.schema == database


_STATEMENT_SCHEMA = frozenset({QueryKind.SCHEMA})   # the kinds --database tests against the default database


@click.command(name="dump")
@options.binlog_files()
@click.option("--json", "as_json", is_flag=True, help="One JSON object per event (bytes as {\"hex\": ...}).")
@options.no_verify_checksum
@options.table_filter
@options.event_range
@click.option("--database", "-d", default=None, metavar="DB",
              help="As mysqlbinlog's: only the TABLE_MAP and rows events of DB's tables, and only the QUERY "
              "events whose default database (USE) is DB; BEGIN, COMMIT and every other event are printed.")
@click.option("--snapshot", metavar="FILE|URL",
              help="Starting schema (as for events), with the binlog's DDL replayed onto it: names the "
              "columns of rows whose TABLE_MAP carries none (binlog_row_metadata=MINIMAL).")
@click.option("--progress/--no-progress", default=None,
              help="Progress on stderr: a bar on a terminal the dump is not printed to, log lines elsewhere "
              "(default: none off a terminal).")
def command(files: tuple[str, ...], as_json: bool, no_verify_checksum: bool, tables: TableFilter,
            window: EventRange | None, database: str | None, snapshot: str | None,
            progress: bool | None) -> None:
    """Print the events of binlog FILES (files, folders or globs, local or URIs; in rotation order), like
    mysqlbinlog -vv, or as JSON lines.

    With --tables/--exclude-tables the TABLE_MAP and rows events of the tables left out are not printed
    (their rows never decoded); every other event is. --start-position, --stop-position, --start-datetime,
    --stop-datetime and --database mean what they mean to mysqlbinlog. Row values are labelled with their
    column names where known (FULL row metadata, or --snapshot), else @1, @2 ... as mysqlbinlog's. Exit
    status 1 when some event could not be decoded (shown raw), as mysqlbinlog's."""
    out = sys.stdout
    shown_raw = 0
    mapped: set[tuple[str, str]] = set()        # tables TABLE_MAPs named, for patterns that match none
    # A diagnostic tool: an event that does not decode is shown raw with a note, and the dump goes on as
    # far as the framing allows (the typed error stays for every path that needs values).
    names = _ColumnNames(snapshot)
    source = FileSource(files, verify_checksum=not no_verify_checksum, raw_undecodable=True)
    with ProgressDisplay("dump", source_counters(source),
                         mode=progress_mode(progress, output_on_terminal=out.isatty())):
        for event in decoded(source.read()):
            names.see(event)        # DDL is followed whatever is printed
            h = event.header
            if window is not None and not window.admits(
                    h.file, h.offset, h.timestamp, always=isinstance(event, ev.FormatDescriptionEvent)):
                if window.stopped:
                    break
                continue
            if tables.active and not _kept(event, tables, mapped):
                continue
            if database is not None and not _in_database(event, database):
                continue
            if isinstance(event, ev.UndecodableEvent):
                shown_raw += 1
            if as_json:
                out.write(json.dumps(event_to_json(event), ensure_ascii=False) + "\n")
            else:
                out.write("\n".join(render_event(event, names.of(event))) + "\n")
    out.flush()
    options.warn_unmatched_tables(tables.unmatched(mapped))
    if names.failure is not None:
        click.echo(f"warning: the snapshot's columns named rows until a statement the schema tracker cannot "
                   f"follow: {names.failure}; @N from there on", err=True)
    if shown_raw:         # every event first, then the warning as the last line on stderr
        many = shown_raw != 1
        click.echo(f"warning: {shown_raw} event{'s' if many else ''} could not be decoded and "
                   f"{'were' if many else 'was'} shown raw", err=True)
        click.get_current_context().exit(1)
