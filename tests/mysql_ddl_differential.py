"""The schema tracker against a real MySQL 9.7, statement by statement, on DDL from MySQL's own test suite.

For every statement of each ``.test`` file (``tests/mysql_testsuite.py`` extracts them):

1. run it on the server (rejected statements are counted and passed over: they log nothing);
2. read the bytes the server appended to its binlog with our decoder (``BinlogDecoder``), and replay every
   QUERY event with the tracker, as the server logged it (FORMAT_DESCRIPTION version, sql_mode,
   ``default_collation_for_utf8mb4``: ``ddl_pass.statement_of``);
3. compare the tracker's catalog with information_schema: databases (charset, collation) and, per base
   table, every column (order, name, DATA_TYPE, COLUMN_TYPE with unsigned/zerofill and ENUM/SET labels,
   lengths, precision and scale, nullability, charset, collation, INVISIBLE) and the primary key, or the
   UNIQUE NOT NULL key MySQL treats as the primary key when there is none.

A replay that raises a typed error (``BinlogError``) is a *stopped* statement: it is recorded with its
reason and the catalog is re-read from the server so the file can go on. A difference without an error is
a *silent difference*: the worst outcome, which must never happen.

Full set (documented in docs/testing.md)::

    PYTHONPATH=$PWD .venv/bin/python -m tests.mysql_ddl_differential --files 300 --report /tmp/ddl-report.json

The CI sample (``tests/differential/test_schema_mysql_differential.py``) runs a seeded handful of those files.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from binlog_model.errors import BinlogError
from binlog_model.position import EventPosition
from binlog_model.resolve.ddl_pass import DDL_SKIP_TYPES, statement_of
from binlog_model.wire.decoder import NEED_DATA, BinlogDecoder
from binlog_model.wire.events import FormatDescriptionEvent, QueryEvent
from schema_tracker.ddl import apply
from schema_tracker.history import SchemaHistory
from schema_tracker.model import Catalog, ServerSession
from schema_tracker.snapshot import catalog_from_server
from tests.mysql_testsuite import ddl_heavy_files, extract_statements, mysql_testsuite_root

__all__ = ["Report", "run_files", "sample_files"]

SYSTEM_DBS = ("mysql", "information_schema", "performance_schema", "sys")
# Scheduled events would change the server between a statement and its comparison, from another thread.
SERVER_ARGS = ("--event-scheduler=OFF",)
_TRANSACTION_WORDS = ("BEGIN", "COMMIT", "ROLLBACK", "XA ", "SAVEPOINT", "RELEASE")

Snapshot = dict[str, Any]


@dataclass
class Report:
    """The figures of a run. ``stopped`` and ``silent`` hold (file, statement, reason) triples."""

    files: int = 0
    executed: int = 0
    rejected: int = 0
    logged: int = 0
    query_events: int = 0
    replayed: int = 0
    stopped: list[tuple[str, str, str]] = field(default_factory=list)
    silent: list[tuple[str, str, str]] = field(default_factory=list)
    aborted: list[tuple[str, str, str]] = field(default_factory=list)  # files cut short (re-read failed)
    rejections: list[tuple[str, str, str]] = field(default_factory=list)  # the server's errors
    server_version: str = ""
    seconds: float = 0.0

    @property
    def strict_ratio(self) -> float:
        return self.replayed / self.logged if self.logged else 1.0

    def reasons(self) -> Counter[str]:
        """Stopped statements by reason (the error text up to its first colon-separated detail)."""
        return Counter(_reason_key(r) for _, _, r in self.stopped)

    def to_json(self) -> dict[str, Any]:
        return {
            "server_version": self.server_version, "files": self.files, "executed": self.executed,
            "rejected": self.rejected, "logged": self.logged, "query_events": self.query_events,
            "replayed_strictly": self.replayed, "strict_ratio": round(self.strict_ratio, 5),
            "silent_differences": len(self.silent), "seconds": round(self.seconds, 1),
            "stopped_by_reason": dict(self.reasons().most_common()),
            "stopped": [list(x) for x in self.stopped], "silent": [list(x) for x in self.silent],
            "aborted_files": [list(x) for x in self.aborted],
        }

    def summary(self) -> str:
        lines = [f"MySQL {self.server_version}: {self.files} files, {self.executed} statements executed, "
                 f"{self.rejected} rejected by the server, {self.logged} logged ({self.query_events} QUERY "
                 f"events), {self.replayed} replayed strictly ({self.strict_ratio:.2%}), "
                 f"{len(self.silent)} silent differences, {self.seconds:.0f} s"]
        lines += [f"  {n:5d}  {reason}" for reason, n in self.reasons().most_common()]
        lines += [f"  SILENT {f}: {s[:200]!r}: {r[:400]}" for f, s, r in self.silent]
        lines += [f"  ABORTED {f} after {s[:200]!r}: {r[:300]}" for f, s, r in self.aborted]
        return "\n".join(lines)


def _reason_key(reason: str) -> str:
    return reason.split(" (statement", 1)[0].split(": ", 2)[:2][-1][:90]


# --- server side -----------------------------------------------------------------------------------------


def server_snapshot(cur: Any) -> Snapshot:
    """Databases and base tables of every user database, as information_schema reports them."""
    cur.execute("SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME "
                "FROM information_schema.SCHEMATA")
    dbs = {name: (cs, coll) for name, cs, coll in cur.fetchall() if name not in SYSTEM_DBS}
    if not dbs:
        return {"databases": {}, "tables": {}}
    marks = ",".join(["%s"] * len(dbs))
    names = list(dbs)
    cur.execute("SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
                f"WHERE TABLE_SCHEMA IN ({marks}) AND TABLE_TYPE='BASE TABLE'", names)
    tables: dict[tuple[str, str], Any] = {(db, t): [] for db, t in cur.fetchall()}
    cur.execute("SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, "
                "CHARACTER_SET_NAME, COLLATION_NAME, EXTRA, COLUMN_KEY FROM information_schema.COLUMNS "
                f"WHERE TABLE_SCHEMA IN ({marks}) ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION", names)
    pri: dict[tuple[str, str], set[str]] = {}
    for db, t, name, dtype, ctype, nullable, cs, coll, extra, key in cur.fetchall():
        if (db, t) not in tables:
            continue  # a view
        invisible = "INVISIBLE" in (extra or "").upper()
        tables[(db, t)].append((name, dtype, ctype, nullable == "YES", cs, coll, invisible))
        if key == "PRI":
            pri.setdefault((db, t), set()).add(name.lower())
    cur.execute("SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, COLUMN_NAME, NON_UNIQUE "
                "FROM information_schema.STATISTICS "
                f"WHERE TABLE_SCHEMA IN ({marks}) "
                "ORDER BY TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX", names)
    indexes: dict[tuple[str, str], dict[str, list[str]]] = {}
    for db, t, index, column, non_unique in cur.fetchall():
        if not int(non_unique) and column is not None:
            indexes.setdefault((db, t), {}).setdefault(index, []).append(column)
    out: dict[tuple[str, str], Any] = {}
    for key, cols in tables.items():
        keys = indexes.get(key, {})
        pk: tuple[str, ...] = tuple(keys.get("PRIMARY", ()))
        if not pk and key in pri:  # the UNIQUE NOT NULL key MySQL treats as the primary key
            pk = next((tuple(c) for c in keys.values() if {x.lower() for x in c} == pri[key]), ())
        out[key] = (tuple(cols), pk)
    return {"databases": dbs, "tables": out}


def tracker_snapshot(catalog: Catalog) -> Snapshot:
    dbs = {d.name: (d.charset, d.collation) for d in catalog.databases.values() if d.name not in SYSTEM_DBS}
    tables: dict[tuple[str, str], Any] = {}
    for t in catalog.iter_tables():
        if t.db in SYSTEM_DBS:
            continue
        cols = tuple((c.name, c.data_type, _shown_type(c), c.nullable, c.charset, c.collation,
                      c.invisible) for c in t.columns if not c.hidden)  # hidden columns: never shown
        tables[(t.db, t.name)] = (cols, tuple(t.primary_key))
    return {"databases": dbs, "tables": tables}


def _shown_type(c: Any) -> str:
    """COLUMN_TYPE as information_schema shows it: labels of a binary ENUM/SET that are not printable text
    as hex literals, and 4-byte characters as '?' (see ``_shown``)."""
    if c.data_type in ("enum", "set") and c.charset is None and any(not v.isprintable()
                                                                     for v in c.enum_values):
        labels = ("'" + v + "'" if v.isprintable() else "x'" + v.encode("latin1").hex() + "'"
                  for v in c.enum_values)
        return f"{c.data_type}({','.join(labels)})"
    return _shown(c.column_type)


def _shown(column_type: str) -> str:
    """COLUMN_TYPE as information_schema shows it: its data dictionary keeps ENUM/SET labels in utf8mb3, so a
    4-byte character shows as '?' there (SELECT still returns the real label, which the tracker keeps)."""
    return "".join("?" if ord(ch) > 0xFFFF else ch for ch in column_type)


def differences(server: Snapshot, tracker: Snapshot) -> list[str]:
    out = []
    for db in sorted(set(server["databases"]) | set(tracker["databases"])):
        s, t = server["databases"].get(db), tracker["databases"].get(db)
        if s != t:
            out.append(f"database {db!r}: server {s} != tracker {t}")
    for key in sorted(set(server["tables"]) | set(tracker["tables"])):
        s, t = server["tables"].get(key), tracker["tables"].get(key)
        if s == t:
            continue
        if s is None or t is None:
            out.append(f"table {key}: {'in the tracker only' if s is None else 'on the server only'}")
            continue
        for i in range(max(len(s[0]), len(t[0]))):
            sc = s[0][i] if i < len(s[0]) else None
            tc = t[0][i] if i < len(t[0]) else None
            if sc != tc:
                out.append(f"{key} column #{i + 1}: server {sc} != tracker {tc}")
        if tuple(x.lower() for x in s[1]) != tuple(x.lower() for x in t[1]):
            out.append(f"{key} primary key: server {s[1]} != tracker {t[1]}")
    return out


# --- one file --------------------------------------------------------------------------------------------


class _BinlogTail:
    """Follows the server's active binlog file: ``new_events`` decodes what was appended since last call."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fh = open(path, "rb")  # noqa: SIM115 - closed by close()
        self.decoder = BinlogDecoder(file=path.name, skip_types=DDL_SKIP_TYPES)

    def new_events(self) -> list[Any]:
        data = self.fh.read()
        if data:  # b"" would tell the decoder the input has ended
            self.decoder.receive_data(data)
        out = []
        while (event := self.decoder.next_event()) is not NEED_DATA:
            out.append(event)
        return out

    def close(self) -> None:
        self.fh.close()


def _connect(server: Any) -> Any:
    conn = server.connect(read_timeout=120, write_timeout=120)
    cur = conn.cursor()
    cur.execute("SET SESSION lock_wait_timeout = 10")
    return conn


def _user_databases(cur: Any) -> list[str]:
    cur.execute("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA")
    return [r[0] for r in cur.fetchall() if r[0] not in SYSTEM_DBS]


def run_file(server: Any, path: Path, statements: list[str], report: Report, label: str) -> None:
    """Run one file's statements on ``server`` and replay them (see the module docstring)."""
    import pymysql

    conn = _connect(server)
    cur = conn.cursor()
    for db in _user_databases(cur):
        cur.execute(f"DROP DATABASE IF EXISTS `{db}`")
    cur.execute(server.reset_binlogs_statement)
    cur.execute("CREATE DATABASE test")
    conn.select_db("test")
    cur.execute("SHOW BINARY LOG STATUS")
    active = server.binlog_dir / cur.fetchone()[0]
    tail = _BinlogTail(active)
    history = SchemaHistory()
    # information_schema is read on a connection of its own, untouched by the file's SET NAMES / sql_mode
    observer = _connect(server)
    catalog = catalog_from_server(observer)
    try:
        # The events of the setup above: the FORMAT_DESCRIPTION (server version) and CREATE DATABASE test.
        for event in tail.new_events():
            if isinstance(event, FormatDescriptionEvent):
                history.server_version = event.server_version
        report.server_version = history.server_version
        for sql in statements:
            report.executed += 1
            try:
                cur.execute(sql)
                while cur.nextset():
                    pass
            except pymysql.Error as err:
                if isinstance(err, pymysql.err.InternalError | pymysql.err.InterfaceError) or (
                        isinstance(err, pymysql.err.OperationalError) and err.args
                        and err.args[0] in (2006, 2013, 2014)):
                    conn.close()  # the connection is dead or out of step: go on with a new one
                    conn = _connect(server)
                    cur = conn.cursor()
                    cur.execute("SELECT DATABASE()")
                report.rejected += 1
                report.rejections.append((label, sql, str(err)))
            events = [e for e in tail.new_events() if isinstance(e, QueryEvent)
                      and not e.query.lstrip().upper().startswith(_TRANSACTION_WORDS)]
            if not events:
                continue
            report.logged += 1
            report.query_events += len(events)
            stopped = None
            for event in events:
                position = EventPosition(active.name, event.header.offset)
                try:
                    statement = statement_of(event, position)
                    catalog, _ = apply(catalog, statement.sql, statement.default_db, position,
                                       session=ServerSession(history.server_version, statement.sql_mode,
                                                             statement.utf8mb4_collation))
                except BinlogError as err:
                    stopped = f"{type(err).__name__}: {err}"
                    break
            if stopped is not None:
                report.stopped.append((label, sql, stopped))
            else:
                report.replayed += 1
                problems = differences(server_snapshot(observer.cursor()), tracker_snapshot(catalog))
                if not problems:
                    continue
                report.silent.append((label, sql, "; ".join(problems)))
            try:
                catalog = _resync(observer, catalog)
            except BinlogError as err:  # the server's own catalog cannot be read back: end this file
                report.aborted.append((label, sql, f"{type(err).__name__}: {err}"))
                break
    finally:
        tail.close()
        conn.close()
        observer.close()
        cleanup = _connect(server)  # a new connection: the file's own may be out of step
        try:
            cur = cleanup.cursor()
            for db in _user_databases(cur):
                cur.execute(f"DROP DATABASE IF EXISTS `{db}`")
        finally:
            cleanup.close()
    report.files += 1


def _resync(conn: Any, catalog: Catalog) -> Catalog:
    """The server's catalog, to go on after a stopped replay or a difference."""
    return catalog_from_server(conn, catalog=Catalog(server_charset=catalog.server_charset,
                                                     server_collation=catalog.server_collation))


def sample_files(root: Path, count: int, seed: int, pool: int = 300) -> list[Path]:
    """``count`` files drawn with ``seed`` from the ``pool`` most DDL-heavy ones."""
    files = ddl_heavy_files(root, limit=pool)
    return sorted(random.Random(seed).sample(files, min(count, len(files))))


def run_files(server: Any, files: list[Path], root: Path, *, max_statements: int | None = None,
              progress: bool = False) -> Report:
    report = Report()
    began = time.monotonic()
    for n, path in enumerate(files, start=1):
        statements = extract_statements(path)
        if max_statements is not None:
            statements = statements[:max_statements]
        label = str(path.relative_to(root))
        stops, silents = len(report.stopped), len(report.silent)
        run_file(server, path, statements, report, label)
        if progress:
            for f, stmt, why in report.stopped[stops:]:
                print(f"  STOP {f}: {' '.join(stmt.split())[:200]!r}: {why[:200]}", file=sys.stderr)
            for f, stmt, why in report.silent[silents:]:
                print(f"  SILENT {f}: {' '.join(stmt.split())[:200]!r}: {why[:300]}", file=sys.stderr)
            print(f"[{n}/{len(files)}] {label}: {len(statements)} statements; so far {report.logged} logged, "
                  f"{report.replayed} replayed, {len(report.stopped)} stopped, {len(report.silent)} silent "
                  f"({time.monotonic() - began:.0f} s)", file=sys.stderr, flush=True)
    report.seconds = time.monotonic() - began
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--files", type=int, default=300, help="the N most DDL-heavy files (default 300)")
    parser.add_argument("--sample", type=int, default=None, help="only K of them, drawn with --seed")
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--report", type=Path, default=None, help="write the figures and cases as JSON")
    args = parser.parse_args(argv)
    from binlog_model.testing.mysql import MySQLServer, mysql_available

    root = mysql_testsuite_root()
    ok, why = mysql_available()
    if root is None or not ok:
        print(f"cannot run: {why if not ok else 'mysql-testsuite is not unpacked'}", file=sys.stderr)
        return 2
    files = ddl_heavy_files(root, limit=args.files)
    if args.sample is not None:
        files = sample_files(root, args.sample, args.seed, pool=args.files)
    with MySQLServer(extra_args=SERVER_ARGS) as server:
        report = run_files(server, files, root, progress=True)
    print(report.summary())
    if args.report is not None:
        args.report.write_text(json.dumps(report.to_json(), indent=1) + "\n", encoding="utf-8")
    return 0 if not report.silent else 1


if __name__ == "__main__":
    sys.exit(main())
