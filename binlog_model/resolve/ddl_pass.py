"""The one DDL pass (``assembler.replay_ddl``): decoded binlog events -> ``SchemaHistory``, as the ``schema``
CLI, the library and the Spark driver all build it; what it skips, and how a QUERY becomes a statement.

Strategy: the history a pass builds must be the one ``events`` builds while it assembles, else a Spark job
and a local run resolve the same rows against different schemas (the old ``SchemaHistory.apply_events``
had drifted: it dropped MySQL's GTID tag and never adopted the server charset from ``collation_server``).
So the pass (``replay_ddl``, beside the assembler it runs, so neither module imports the other lazily)
does not re-implement the assembler's bookkeeping (GTID identity and its tag, transactions,
BEGIN/COMMIT/XA/SAVEPOINT routing, the charset adoption, the server version from FORMAT_DESCRIPTION): it
runs the ``StatementAssembler`` itself on a DDL-only stream, where rows and table maps arrive as
``SkippedEvent``s (bodies skipped by their header length, ``DDL_SKIP_TYPES``) and are passed over.

This module is also where a decoded QUERY event becomes a plain ``schema_tracker.Statement``
(``statement_of``, ``apply_query``): ``schema_tracker`` never reads wire events.
"""

from __future__ import annotations

from binlog_model.charsets import charset_for_collation_id, make_text_decoder
from binlog_model.errors import UnsupportedDDLError
from binlog_model.position import EventPosition
from binlog_model.wire.events import QueryEvent
from binlog_model.wire.header import ROWS_EVENT_TYPES, EventType
from schema_tracker.changes import SchemaChange
from schema_tracker.history import SchemaHistory
from schema_tracker.model import collation_name
from schema_tracker.statement import Statement

__all__ = ["DDL_SKIP_TYPES", "apply_query", "statement_of",
           "statement_text"]

# Event types the DDL pass never needs parsed: row events and their table maps (and ROWS_QUERY and
# ANNOTATE_ROWS, which only label rows). Give it to the file reader as ``skip_types``.
DDL_SKIP_TYPES: frozenset[int] = frozenset(ROWS_EVENT_TYPES) | frozenset(
    int(t) for t in EventType if "ROWS" in t.name or t.name == "TABLE_MAP_EVENT")


def statement_of(event: QueryEvent, position: EventPosition | None = None,
                 gtid: str | None = None, server_version: str = "") -> Statement:
    """A QUERY event as the tracker reads it: its text in its client charset (``statement_text``), its
    default database, sql_mode, MySQL ``default_collation_for_utf8mb4``, the session's ``collation_server``
    and MariaDB's ``character_set_collations``. Collation ids are named as the server of
    ``server_version`` names them (MySQL and MariaDB give some ids different collations)."""
    mariadb = "mariadb" in server_version.lower()
    server_charset = server_collation = None
    if event.collation_server is not None:
        # An id this tracker cannot name leaves the defaults to the catalog (a charset it knows is still
        # exact: only the collation's name would be missing, and values decode by charset).
        server_charset = charset_for_collation_id(event.collation_server)
        server_collation = collation_name(event.collation_server, mariadb=mariadb)
    pairs = []
    for charset_id, collation_id in event.character_set_collations or ():
        charset, collation = charset_for_collation_id(charset_id), collation_name(collation_id, mariadb=True)
        if charset is not None and collation is not None:
            pairs.append((charset, collation))
    return Statement(statement_text(event), event.schema or None, position, gtid, event.sql_mode or 0,
                     collation_name(event.default_collation_for_utf8mb4), server_charset, server_collation,
                     tuple(pairs))


def apply_query(history: SchemaHistory, event: QueryEvent, position: EventPosition,
                gtid: str | None = None) -> tuple[SchemaChange, ...]:
    """Apply one decoded QUERY event to ``history`` at ``position`` (the assembler's call)."""
    return history.apply_statement(statement_of(event, position, gtid, history.server_version))


def statement_text(event: QueryEvent) -> str:
    """A QUERY event's statement decoded with its ``charset_client`` (UTF-8 when not logged): after ``SET
    NAMES latin1`` an ENUM label 'é' is the byte 0xE9. Bytes that are invalid in that charset raise
    ``UnsupportedDDLError``: the server read them some way the tracker cannot know."""
    charset = charset_for_collation_id(event.charset_client) if event.charset_client is not None else None
    if charset == "utf8mb3" and any(ord(ch) > 0xFFFF for ch in event.query):
        # the server replaces what utf8mb3 cannot hold (a name becomes '?'): not followed
        raise UnsupportedDDLError("the statement holds 4-byte characters its client charset utf8mb3 "
                                  "cannot carry", statement=event.query)
    if charset is None or charset in ("utf8mb4", "utf8mb3", "binary", "ascii"):
        return event.query
    decode = make_text_decoder(charset)
    if decode is None:
        raise UnsupportedDDLError(f"the statement's client charset {charset} has no decoder",
                                  statement=event.query)
    try:
        return decode(event.query_bytes)
    except (UnicodeDecodeError, ValueError) as err:
        raise UnsupportedDDLError(f"the statement is not valid {charset} (its client charset): {err}",
                                  statement=event.query) from err
