"""One logged SQL statement in the plain form the tracker replays: no binlog event types here.

Strategy: the tracker never reads wire events (``schema_tracker`` sits below the decoder's consumers, see
ARCHITECTURE.md). Whoever reads a binlog turns each QUERY event into a ``Statement`` (the text already
decoded in its client charset, with its position, GTID, default database and the session variables that
change how DDL reads) and hands it to ``SchemaHistory.apply_statement``. ``binlog_model.resolve.ddl_pass``
does that conversion for decoded events.
"""

from __future__ import annotations

from dataclasses import dataclass

from binlog_model.position import EventPosition

__all__ = ["Statement"]


@dataclass(frozen=True, slots=True)
class Statement:
    """A statement as the server logged it.

    ``sql``: the text, decoded in the charset its client sent it in. ``default_db``: the session's current
    database (None when none). ``position``/``gtid``: where it was logged (None for a script or a
    statement without GTID). ``sql_mode``: the session's sql_mode bits (ANSI_QUOTES makes ``"x"`` a name).
    ``utf8mb4_collation``: MySQL's ``default_collation_for_utf8mb4`` of the session, by name (None when
    not logged or unknown). ``server_charset``/``server_collation``: the session's ``collation_server``
    (what CREATE DATABASE without a charset takes; None when not logged). ``charset_collations``: MariaDB
    11's ``character_set_collations`` of the session, as (charset, collation) pairs."""

    sql: str
    default_db: str | None = None
    position: EventPosition | None = None
    gtid: str | None = None
    sql_mode: int = 0
    utf8mb4_collation: str | None = None
    server_charset: str | None = None
    server_collation: str | None = None
    charset_collations: tuple[tuple[str, str], ...] = ()
