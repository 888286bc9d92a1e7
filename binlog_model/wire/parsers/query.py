"""Parsers of QUERY_EVENT, MariaDB QUERY_COMPRESSED_EVENT and EXECUTE_LOAD_QUERY_EVENT (a QUERY plus a
file reference), with the status variables they carry.

Status variables are a list of (code, value) pairs whose value layout depends on the code; a code we do
not know ends the parse (its width is unknown) and the rest is kept raw in ``unknown_status_vars``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from binlog_model.wire.compression import inflate_mariadb
from binlog_model.wire.cursor import Cursor
from binlog_model.wire.events import ExecuteLoadQueryEvent, QueryEvent
from binlog_model.wire.header import EventHeader, FormatContext
from binlog_model.wire.parsers._common import text

__all__ = ["parse_execute_load_query_event", "parse_query_compressed_event", "parse_query_event",
           "query_text_start"]


# Status variable codes of QUERY_EVENT: code -> (field name, reader). MySQL `Query_event_status_vars`
# and MariaDB's additions (128+). Q_COMMIT_TS/Q_COMMIT_TS2 (14/15) were never written by a GA server and
# have no parse rule upstream either: they stop the parse like any unknown code.
def _sv_fixed(n: int) -> Callable[[Cursor], int]:
    return lambda c: c.uint(n, "status variable")


def _sv_str8(c: Cursor) -> str:
    return text(c.u8_prefixed("status variable string"))


def _sv_catalog_old(c: Cursor) -> str:
    v = text(c.u8_prefixed("Q_CATALOG_CODE"))
    c.skip(1, "Q_CATALOG_CODE terminator")
    return v


def _sv_invoker(c: Cursor) -> tuple[str, str]:
    return _sv_str8(c), _sv_str8(c)


def _sv_updated_dbs(c: Cursor) -> tuple[str, ...]:
    n = c.u8("Q_UPDATED_DB_NAMES count")
    if n == 254:  # OVER_MAX_DBS_IN_EVENT_MTS: too many to list
        return ()
    return tuple(text(c.cstring("Q_UPDATED_DB_NAMES name")) for _ in range(n))


def _sv_charset(c: Cursor) -> tuple[int, int, int]:
    return c.u16("charset_client"), c.u16("collation_connection"), c.u16("collation_server")


def _sv_auto_inc(c: Cursor) -> tuple[int, int]:
    return c.u16("auto_increment_increment"), c.u16("auto_increment_offset")


def _sv_charset_collations(c: Cursor) -> tuple[tuple[int, int], ...]:
    n = c.u8("Q_CHARACTER_SET_COLLATIONS count")
    return tuple((c.u16("charset id"), c.u16("collation id")) for _ in range(n))


_STATUS_VARS: dict[int, tuple[str, Callable[[Cursor], Any]]] = {
    0: ("flags2", _sv_fixed(4)),
    1: ("sql_mode", _sv_fixed(8)),
    2: ("catalog", _sv_catalog_old),
    3: ("auto_increment", _sv_auto_inc),
    4: ("charset", _sv_charset),
    5: ("time_zone", _sv_str8),
    6: ("catalog", _sv_str8),
    7: ("lc_time_names", _sv_fixed(2)),
    8: ("charset_database", _sv_fixed(2)),
    9: ("table_map_for_update", _sv_fixed(8)),
    10: ("master_data_written", _sv_fixed(4)),
    11: ("invoker", _sv_invoker),
    12: ("updated_db_names", _sv_updated_dbs),
    13: ("microseconds", _sv_fixed(3)),
    16: ("explicit_defaults_ts", _sv_fixed(1)),
    17: ("ddl_xid", _sv_fixed(8)),
    18: ("default_collation_for_utf8mb4", _sv_fixed(2)),
    19: ("sql_require_primary_key", _sv_fixed(1)),
    20: ("default_table_encryption", _sv_fixed(1)),
    128: ("hrnow", _sv_fixed(3)),
    129: ("xid", _sv_fixed(8)),
    130: ("gtid_flags3", _sv_fixed(1)),
    131: ("character_set_collations", _sv_charset_collations),
}


def _parse_status_vars(raw: memoryview) -> tuple[dict[str, Any], bytes]:
    c = Cursor(raw)
    out: dict[str, Any] = {}
    while c.remaining:
        start = c.pos
        code = c.u8("status variable code")
        rule = _STATUS_VARS.get(code)
        if rule is None:
            return out, bytes(raw[start:])
        name, read = rule
        value = read(c)
        if name == "auto_increment":
            out["auto_increment_increment"], out["auto_increment_offset"] = value
        elif name == "charset":
            out["charset_client"], out["collation_connection"], out["collation_server"] = value
        elif name == "invoker":
            out["invoker_user"], out["invoker_host"] = value
        else:
            out[name] = value
    return out, b""


def _parse_query_parts(header: EventHeader, body: memoryview, post_len: int,
                       compressed: bool = False) -> QueryEvent:
    c = Cursor(body)
    post = c.sub(post_len, "QUERY post-header")
    thread_id = post.u32("thread_id")
    exec_time = post.u32("exec_time")
    schema_len = post.u8("schema length")
    error_code = post.u16("error_code")
    status_len = post.u16("status_vars_len") if post.remaining >= 2 else 0
    status_raw = c.view(status_len, "status variables")
    fields, unknown = _parse_status_vars(status_raw)
    schema = text(c.bytes(schema_len, "schema name"))
    c.skip(1, "schema NUL terminator")
    query_raw = c.rest()
    if compressed:
        query_raw = inflate_mariadb(query_raw, "QUERY_COMPRESSED query")
    return QueryEvent(header, thread_id, exec_time, error_code, schema, text(query_raw), query_raw,
                      bytes(status_raw), unknown_status_vars=unknown, compressed=compressed, **fields)


def query_text_start(buf: bytes | bytearray | memoryview, body: int, body_end: int, post_len: int) -> int:
    """Where a QUERY event's statement text starts in ``buf`` (its body is ``buf[body:body_end]``), from the
    post-header's schema and status-variable lengths, without parsing the rest: what the decoder's
    transaction skip reads a ``BEGIN`` or ``COMMIT`` by. -1 when the post-header is short or the lengths
    overrun the body (``_parse_query_parts``, the reference, then raises). A differential test holds the
    two to the same text."""
    if post_len < 13 or body_end - body < post_len:
        return -1
    start = body + post_len + (buf[body + 11] | buf[body + 12] << 8) + buf[body + 8] + 1
    return start if start <= body_end else -1


def parse_query_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> QueryEvent:
    return _parse_query_parts(header, body, ctx.post_header_len(header.event_type))


def parse_query_compressed_event(header: EventHeader, body: memoryview, ctx: FormatContext) -> QueryEvent:
    return _parse_query_parts(header, body, ctx.post_header_len(header.event_type), compressed=True)


def parse_execute_load_query_event(header: EventHeader, body: memoryview,
                                   ctx: FormatContext) -> ExecuteLoadQueryEvent:
    # The post-header is QUERY's 13 bytes plus file_id(4) start_pos(4) end_pos(4) dup_handling(1).
    post_len = ctx.post_header_len(header.event_type)
    c = Cursor(body, 13, post_len)
    file_id = c.u32("file_id")
    start = c.u32("fn_pos_start")
    end = c.u32("fn_pos_end")
    dup = c.u8("dup_handling")
    query = _parse_query_parts(header, body, post_len)
    return ExecuteLoadQueryEvent(header, query, file_id, start, end, dup)

