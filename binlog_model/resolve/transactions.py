"""Transaction and statement routing: where each event leaves the assembler, as tables, not flags.

Seed 001's order of events, per transaction:

    GTID | ANONYMOUS_GTID | MariaDB GTID  →  BEGIN (QUERY)  →  [ROWS_QUERY | ANNOTATE_ROWS]  →  TABLE_MAP…
    →  ROWS… up to STMT_END_F  →  …  →  XID | COMMIT (QUERY)              (ROLLBACK discards)

``TxState`` is where the assembler stands; ``NEXT`` gives the state after each ``Step`` from each state
(every pair is listed, so an event order the servers never write still has a defined outcome).
``classify_query`` routes a QUERY event by its first keywords (``QUERY_ROUTES``, first match wins): the
transaction-control statements each have a handler, everything else goes to the schema tracker (and
``runs.transactions.TransactionStarts``, which finds units of work without the assembler, routes keywords
with it too). The identity of a transaction (GTID or the
documented fallback) and the XA / savepoint parsing live here too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from binlog_model.position import EventPosition, file_sequence
from binlog_model.wire import events as ev

__all__ = ["IN_TRANSACTION", "NEXT", "QUERY_ROUTES", "STATEMENT_OPEN", "Identity", "QueryKind", "Step",
           "TxState", "classify_query", "fallback_identity", "gtid_identity",
           "mariadb_identity", "parse_xa_end", "savepoint_name"]


class TxState(Enum):
    IDLE = "idle"            # between transactions
    OPEN = "open"            # a transaction is open (BEGIN, XA START, a MariaDB GTID), between statements
    STATEMENT = "statement"  # a statement's events, inside an open transaction
    LOOSE = "loose"          # a statement's events with no transaction opened before them

    # Looked up per event (NEXT, the handler tables): the identity hash runs in C, Enum's in Python.
    __hash__ = object.__hash__


class Step(Enum):
    BEGIN = "begin"                  # BEGIN, START TRANSACTION, XA START, a MariaDB transaction's GTID
    STATEMENT = "statement"          # a ROWS_QUERY / ANNOTATE_ROWS or rows event: a statement is open
    STATEMENT_END = "statement_end"  # the open statement's rows were emitted (STMT_END_F, SAVEPOINT...)
    END = "end"                      # commit, rollback, XA PREPARE, a GTID over an open one, end of input

    __hash__ = object.__hash__     # as TxState's


_S = TxState
NEXT: Mapping[tuple[TxState, Step], TxState] = {
    (_S.IDLE, Step.BEGIN): _S.OPEN,
    (_S.OPEN, Step.BEGIN): _S.OPEN,
    (_S.STATEMENT, Step.BEGIN): _S.STATEMENT,
    (_S.LOOSE, Step.BEGIN): _S.STATEMENT,          # a BEGIN after loose rows: they join the transaction
    (_S.IDLE, Step.STATEMENT): _S.LOOSE,
    (_S.OPEN, Step.STATEMENT): _S.STATEMENT,
    (_S.STATEMENT, Step.STATEMENT): _S.STATEMENT,
    (_S.LOOSE, Step.STATEMENT): _S.LOOSE,
    (_S.IDLE, Step.STATEMENT_END): _S.IDLE,
    (_S.OPEN, Step.STATEMENT_END): _S.OPEN,
    (_S.STATEMENT, Step.STATEMENT_END): _S.OPEN,
    (_S.LOOSE, Step.STATEMENT_END): _S.IDLE,
    (_S.IDLE, Step.END): _S.IDLE,
    (_S.OPEN, Step.END): _S.IDLE,
    (_S.STATEMENT, Step.END): _S.IDLE,
    (_S.LOOSE, Step.END): _S.IDLE,
}
IN_TRANSACTION = frozenset({_S.OPEN, _S.STATEMENT})    # a DDL statement here does not commit
STATEMENT_OPEN = frozenset({_S.STATEMENT, _S.LOOSE})   # rows may be pending


class QueryKind(Enum):
    BEGIN = "begin"
    COMMIT = "commit"
    ROLLBACK = "rollback"
    ROLLBACK_TO = "rollback_to"      # ROLLBACK TO [SAVEPOINT] name
    SAVEPOINT = "savepoint"
    XA_END = "xa_end"                # XA COMMIT / XA ROLLBACK
    XA_OTHER = "xa_other"            # XA END, XA PREPARE (the XA_PREPARE event carries it), XA RECOVER
    SCHEMA = "schema"                # anything else: the schema tracker decides (DDL, or nothing)

    __hash__ = object.__hash__     # as TxState's


# (first one or two keywords, whole words (True) or a prefix (False), kind): the first match wins.
QUERY_ROUTES: tuple[tuple[str, bool, QueryKind], ...] = (
    ("BEGIN", True, QueryKind.BEGIN),
    ("START TRANSACTION", True, QueryKind.BEGIN),
    ("XA START", False, QueryKind.BEGIN),
    ("XA COMMIT", False, QueryKind.XA_END),
    ("XA ROLLBACK", False, QueryKind.XA_END),
    ("COMMIT", True, QueryKind.COMMIT),
    ("ROLLBACK", True, QueryKind.ROLLBACK),
    ("ROLLBACK TO", False, QueryKind.ROLLBACK_TO),
    ("SAVEPOINT", False, QueryKind.SAVEPOINT),
    ("XA ", False, QueryKind.XA_OTHER),
)

_WORDS = re.compile(r"(?:\s|/\*.*?\*/|#[^\n]*\n|--\s[^\n]*\n)*([A-Za-z]+(?:\s+[A-Za-z]+)?)", re.S)


def classify_query(query: str) -> QueryKind:
    """The route of a QUERY event's statement (``QUERY_ROUTES``; ``SCHEMA`` when none matches)."""
    word = _first_words(query)
    for words, whole, kind in QUERY_ROUTES:
        if word == words if whole else word.startswith(words):
            return kind
    return QueryKind.SCHEMA


def _first_words(query: str) -> str:
    """The first one or two keywords of a statement, upper-cased, comments skipped."""
    m = _WORDS.match(query)
    if not m:
        return ""
    return " ".join(m.group(1).upper().split())


# --- identity -------------------------------------------------------------------------------------------


@dataclass
class Identity:
    """Who wrote a transaction. MySQL: ``server_uuid`` = GTID source, ``transaction_id`` = gno. MariaDB:
    ``server_uuid`` is empty, ``domain_id`` the GTID domain, ``transaction_id`` the sequence number."""

    server_uuid: str = ""
    transaction_id: int = 0
    gtid: str = ""
    domain_id: int = 0


def gtid_identity(event: ev.GtidEvent) -> Identity | None:
    """A MySQL GTID event's identity; None for ANONYMOUS_GTID (the fallback applies)."""
    if event.anonymous:
        return None
    # A tagged GTID (MySQL 8.4+) numbers its transactions per (uuid, tag): the tag is part of the source,
    # else uuid:5 and uuid:batch:5 would share one identity.
    source = f"{event.sid}:{event.tag}" if event.tag else str(event.sid)
    return Identity(source, event.gno, f"{source}:{event.gno}")


def mariadb_identity(event: ev.MariadbGtidEvent) -> Identity:
    server_id = event.header.server_id
    return Identity("", event.seq_no, f"{event.domain_id}-{server_id}-{event.seq_no}", event.domain_id)


def fallback_identity(first: EventPosition | None) -> Identity:
    """Without a GTID: ``transaction_id`` = ``(file sequence << 40) | offset`` of the transaction's first
    event (unique, deterministic and increasing in binlog order), ``server_uuid`` empty."""
    if first is None:
        return Identity()
    seq = max(file_sequence(first.file), 0)
    # 40 offset bits: a file past 4 GiB (one huge transaction) must not run into the next sequence.
    return Identity("", (seq << 40) | first.offset, "")


# --- XA and savepoints ----------------------------------------------------------------------------------

_XID_PART = r"(?:X'([0-9A-Fa-f]*)'|'((?:[^'\\]|\\.|'')*)')"
_XA_END = re.compile(r"XA\s+(COMMIT|ROLLBACK)\s+" + _XID_PART + r"(?:\s*,\s*" + _XID_PART
                     + r")?(?:\s*,\s*(\d+))?", re.I | re.S)


def _xid_bytes(hex_text: str | None, quoted: str | None) -> bytes:
    if hex_text is not None:
        return bytes.fromhex(hex_text)
    text = (quoted or "").replace("''", "'")
    return re.sub(r"\\(.)", r"\1", text).encode("utf-8")


def parse_xa_end(query: str) -> tuple[bool, tuple[bytes, bytes, int] | None]:
    """``XA COMMIT|ROLLBACK gtrid[, bqual[, formatID]]`` (quoted or ``X'hex'``) → (commit?, xid key)."""
    m = _XA_END.search(query)
    if m is None:
        return query.upper().find("ROLLBACK") < 0, None
    gtrid = _xid_bytes(m.group(2), m.group(3))
    bqual = _xid_bytes(m.group(4), m.group(5)) if (m.group(4) is not None or m.group(5) is not None) else b""
    return m.group(1).upper() == "COMMIT", (gtrid, bqual, int(m.group(6)) if m.group(6) else 1)


def savepoint_name(query: str, after: str) -> str | None:
    """The savepoint a ``SAVEPOINT name`` / ``ROLLBACK TO [SAVEPOINT] name`` statement names (lowercase)."""
    m = re.search(after + r"\s+(?:SAVEPOINT\s+)?`?([^`\s;]+)`?", query, re.I)
    return m.group(1).lower() if m else None
