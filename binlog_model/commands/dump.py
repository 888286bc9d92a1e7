"""``binlog-model dump FILE...``: print every event, as ``mysqlbinlog -vv`` does, or as JSON lines.

Strategy: the event stream comes from ``io.files.iter_events``; a table maps each event class to a text
renderer (its one-line summary after the common ``#... server id ... end_log_pos ...`` line, plus body
lines), and rows events render their images as ``### INSERT INTO ...`` pseudo-SQL with the column type
comment mysqlbinlog prints. ``--json`` writes one JSON object per event with every dataclass field;
``bytes`` become ``{"hex": "..."}``, Decimal/UUID/dates become strings, ``NOT_PRESENT`` becomes
``{"$": "NOT_PRESENT"}``; a rows event names its TABLE_MAP as ``{"table_id", "schema", "table"}``
instead of repeating it (the TABLE_MAP event itself is printed in full just before). An event whose body
does not decode (an UndecodableEvent) is printed raw with a note saying why, and the dump goes on; framing
and checksum errors still stop it: they are ``BinlogError``s, turned by ``binlog_model.cli`` into one line
and exit status 2.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import json
import math
import sys
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import click

from binlog_model.io.files import iter_events
from binlog_model.wire import events as ev
from binlog_model.wire.column_types import ColumnType

__all__ = ["command", "event_to_json", "render_event"]

_CT = ColumnType

# mysqlbinlog's names for the event types it prints
_TEXT_NAMES: dict[int, str] = {
    ev.EventType.START_EVENT_V3: "Start",
    ev.EventType.FORMAT_DESCRIPTION_EVENT: "Start",
    ev.EventType.QUERY_EVENT: "Query",
    ev.EventType.QUERY_COMPRESSED_EVENT: "Query_compressed",
    ev.EventType.STOP_EVENT: "Stop",
    ev.EventType.ROTATE_EVENT: "Rotate",
    ev.EventType.INTVAR_EVENT: "Intvar",
    ev.EventType.RAND_EVENT: "Rand",
    ev.EventType.USER_VAR_EVENT: "User_var",
    ev.EventType.XID_EVENT: "Xid",
    ev.EventType.TABLE_MAP_EVENT: "Table_map",
    ev.EventType.WRITE_ROWS_EVENT_V1: "Write_rows_v1",
    ev.EventType.UPDATE_ROWS_EVENT_V1: "Update_rows_v1",
    ev.EventType.DELETE_ROWS_EVENT_V1: "Delete_rows_v1",
    ev.EventType.WRITE_ROWS_EVENT: "Write_rows",
    ev.EventType.UPDATE_ROWS_EVENT: "Update_rows",
    ev.EventType.DELETE_ROWS_EVENT: "Delete_rows",
    ev.EventType.PARTIAL_UPDATE_ROWS_EVENT: "Update_rows_partial",
    ev.EventType.ROWS_QUERY_LOG_EVENT: "Rows_query",
    ev.EventType.GTID_LOG_EVENT: "GTID",
    ev.EventType.ANONYMOUS_GTID_LOG_EVENT: "Anonymous_GTID",
    ev.EventType.GTID_TAGGED_LOG_EVENT: "GTID_TAGGED",
    ev.EventType.PREVIOUS_GTIDS_LOG_EVENT: "Previous-GTIDs",
    ev.EventType.TRANSACTION_PAYLOAD_EVENT: "Transaction_Payload",
    ev.EventType.XA_PREPARE_LOG_EVENT: "XA PREPARE",
    ev.EventType.ANNOTATE_ROWS_EVENT: "Annotate_rows",
    ev.EventType.BINLOG_CHECKPOINT_EVENT: "Binlog checkpoint",
    ev.EventType.GTID_EVENT: "GTID",
    ev.EventType.GTID_LIST_EVENT: "Gtid list",
    ev.EventType.WRITE_ROWS_COMPRESSED_EVENT_V1: "Write_compressed_rows_v1",
    ev.EventType.UPDATE_ROWS_COMPRESSED_EVENT_V1: "Update_compressed_rows_v1",
    ev.EventType.DELETE_ROWS_COMPRESSED_EVENT_V1: "Delete_compressed_rows_v1",
    ev.EventType.WRITE_ROWS_COMPRESSED_EVENT: "Write_compressed_rows",
    ev.EventType.UPDATE_ROWS_COMPRESSED_EVENT: "Update_compressed_rows",
    ev.EventType.DELETE_ROWS_COMPRESSED_EVENT: "Delete_compressed_rows",
}

# integer column types -> bit width, for the "-1 (4294967295)" unsigned rendering
_INT_BITS: dict[int, int] = {_CT.TINY: 8, _CT.SHORT: 16, _CT.INT24: 24, _CT.LONG: 32, _CT.LONGLONG: 64}


# --- text rendering ---------------------------------------------------------------------------------------

def _quote(raw: bytes) -> str:
    out = []
    for b in raw:
        if b == 0x27:
            out.append("\\'")
        elif b == 0x5C:
            out.append("\\\\")
        elif 0x20 <= b < 0x7F:
            out.append(chr(b))
        else:
            out.append(f"\\x{b:02x}")
    return "'" + "".join(out) + "'"


def _type_comment(ctype: int, meta: int) -> str:
    """mysqlbinlog's column type comment (``INT``, ``VARSTRING(40)``, ``ENUM(1 byte)`` ...)."""
    real = ctype
    length = meta
    if ctype == _CT.STRING and meta >= 256:
        byte0, byte1 = meta >> 8, meta & 0xFF
        if byte0 in (_CT.ENUM, _CT.SET):
            real, length = byte0, byte1
        else:
            real, length = _CT.STRING, byte1 | (((byte0 & 0x30) ^ 0x30) << 4)
    names: dict[int, Callable[[], str]] = {
        _CT.TINY: lambda: "TINYINT", _CT.SHORT: lambda: "SHORTINT", _CT.INT24: lambda: "MEDIUMINT",
        _CT.LONG: lambda: "INT", _CT.LONGLONG: lambda: "LONGINT", _CT.FLOAT: lambda: "FLOAT",
        _CT.DOUBLE: lambda: "DOUBLE", _CT.NEWDECIMAL: lambda: f"DECIMAL({meta >> 8},{meta & 0xFF})",
        _CT.VARCHAR: lambda: f"VARSTRING({meta})", _CT.STRING: lambda: f"STRING({length})",
        _CT.ENUM: lambda: f"ENUM({length} bytes)" if length > 1 else "ENUM(1 byte)",
        _CT.SET: lambda: f"SET({length} bytes)", _CT.BLOB: lambda: "BLOB/TEXT", _CT.JSON: lambda: "JSON",
        _CT.GEOMETRY: lambda: "GEOMETRY", _CT.DATE: lambda: "DATE", _CT.NEWDATE: lambda: "DATE",
        _CT.DATETIME: lambda: "DATETIME", _CT.DATETIME2: lambda: f"DATETIME({meta})",
        _CT.TIMESTAMP: lambda: "TIMESTAMP", _CT.TIMESTAMP2: lambda: f"TIMESTAMP({meta})",
        _CT.TIME: lambda: "TIME", _CT.TIME2: lambda: f"TIME({meta})", _CT.YEAR: lambda: "YEAR",
        _CT.BIT: lambda: f"BIT({(meta >> 8) * 8 + (meta & 0xFF)})", _CT.VECTOR: lambda: "VECTOR",
    }
    make = names.get(real)
    return make() if make else f"TYPE_{real}"


def _value_text(value: Any, ctype: int, unsigned: bool | None) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        bits = _INT_BITS.get(ctype)
        if bits and value < 0 and not unsigned:
            return f"{value} ({value + (1 << bits)})"
        if bits and value < 0:
            return str(value + (1 << bits))
        return str(value)
    if isinstance(value, bytes | bytearray):
        return _quote(bytes(value))
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:  # TIMESTAMP: mysqlbinlog prints the epoch seconds
            ts = value.timestamp()
            return f"{ts:.6f}".rstrip("0").rstrip(".") if value.microsecond else str(int(ts))
        return "'" + value.isoformat(sep=" ") + "'"
    if isinstance(value, dt.date):
        return "'" + value.isoformat() + "'"
    if isinstance(value, dt.timedelta):
        return "'" + _timedelta_text(value) + "'"
    if type(value).__name__ == "JsonDocument":
        return _quote(str(value.to_json()).encode())
    if hasattr(value, "wkb"):
        return "x'" + bytes(value.wkb).hex() + "'"
    if isinstance(value, tuple):
        return "(" + ", ".join(_value_text(v, -1, None) for v in value) + ")"
    text = str(value)
    return "'" + text + "'" if not isinstance(value, decimal.Decimal) else text


def _timedelta_text(v: dt.timedelta) -> str:
    sign = "-" if v < dt.timedelta(0) else ""
    total = abs(v)
    secs = total.days * 86400 + total.seconds
    text = f"{sign}{secs // 3600:02d}:{secs % 3600 // 60:02d}:{secs % 60:02d}"
    return f"{text}.{total.microseconds:06d}" if total.microseconds else text


def _image_lines(row: Any, table_map: Any) -> Iterator[str]:
    signed = getattr(table_map, "signedness", None)
    for i, value in enumerate(row):
        if value is not None and not value and type(value).__name__ == "NotPresent":
            continue
        ctype, meta = table_map.column_types[i], table_map.column_metas[i]
        unsigned = (signed[i] is False) if signed and i < len(signed) and signed[i] is not None else None
        yield (f"###   @{i + 1}={_value_text(value, ctype, unsigned)} /* {_type_comment(ctype, meta)} "
               f"meta={meta} nullable={int(table_map.nullable[i])} is_null={int(value is None)} */")


def _rows_lines(event: Any) -> Iterator[str]:
    tm = event.table_map
    name = f"`{tm.schema}`.`{tm.table}`"
    verb = {"insert": "INSERT INTO", "update": "UPDATE", "partial_update": "UPDATE", "delete": "DELETE FROM"}
    for row in event.rows:
        yield f"### {verb.get(event.kind, event.kind.upper())} {name}"
        if event.kind in ("update", "partial_update"):
            before, after = row
            yield "### WHERE"
            yield from _image_lines(before, tm)
            yield "### SET"
            yield from _image_lines(after, tm)
        elif event.kind == "delete":
            yield "### WHERE"
            yield from _image_lines(row, tm)
        else:
            yield "### SET"
            yield from _image_lines(row, tm)


def _summary(event: Any) -> tuple[str, list[str]]:
    """The text after the event name on the header line, and the body lines."""
    for cls, render in _RENDERERS:
        if isinstance(event, cls):
            return render(event)
    if hasattr(event, "rows") and hasattr(event, "table_map"):
        flags = " flags: STMT_END_F" if event.flags & 1 else ""
        return f": table id {event.table_id}{flags}", list(_rows_lines(event))
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
                                      f"{'NULL' if e.is_null else _value_text(e.value, -1, None)}/*!*/;"])),
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


def render_event(event: Any) -> list[str]:
    """The ``mysqlbinlog -vv``-like lines of one event (timestamps in UTC)."""
    h = event.header
    name = _TEXT_NAMES.get(int(h.event_type), h.type_name)
    summary, body = _summary(event)
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


@click.command(name="dump")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per event (bytes as {\"hex\": ...}).")
@click.option("--no-verify-checksum", is_flag=True, help="Do not check the events' CRC32 footers.")
def command(files: tuple[str, ...], as_json: bool, no_verify_checksum: bool) -> None:
    """Print the events of binlog FILES (in rotation order), like mysqlbinlog -vv, or as JSON lines."""
    out = sys.stdout
    # A diagnostic tool: an event that does not decode is shown raw with a note, and the dump goes on as
    # far as the framing allows (the typed error stays for every path that needs values).
    for event in iter_events(files, verify_checksum=not no_verify_checksum, raw_undecodable=True):
        if as_json:
            out.write(json.dumps(event_to_json(event), ensure_ascii=False) + "\n")
        else:
            out.write("\n".join(render_event(event)) + "\n")
