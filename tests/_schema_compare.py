"""Compare the tracker's catalog with a real server's information_schema (shared by the differential tests).

Strategy: both sides are reduced to the same plain tuples per table: one row per column (ordinal position,
name, DATA_TYPE, COLUMN_TYPE, nullability, charset, collation) and the primary key column names in order.
JSON is the one documented difference: MariaDB stores it as LONGTEXT utf8mb4_bin, the tracker says ``json``.
"""

from __future__ import annotations

from typing import Any

from schema_tracker.model import Catalog

Snapshot = dict[tuple[str, str], tuple[tuple[Any, ...], tuple[str, ...]]]


def server_snapshot(cur: Any, databases: list[str]) -> Snapshot:
    marks = ",".join(["%s"] * len(databases))
    cur.execute("SELECT TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, "
                "IS_NULLABLE, CHARACTER_SET_NAME, COLLATION_NAME FROM information_schema.COLUMNS "
                f"WHERE TABLE_SCHEMA IN ({marks}) ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION",
                databases)
    cols: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
    for db, table, pos, name, dtype, ctype, nullable, cs, coll in cur.fetchall():
        cols.setdefault((db, table), []).append((pos, name, dtype, ctype, nullable == "YES", cs, coll))
    cur.execute("SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME FROM information_schema.STATISTICS "
                f"WHERE TABLE_SCHEMA IN ({marks}) AND INDEX_NAME='PRIMARY' "
                "ORDER BY TABLE_SCHEMA, TABLE_NAME, SEQ_IN_INDEX", databases)
    pks: dict[tuple[str, str], list[str]] = {}
    for db, table, name in cur.fetchall():
        pks.setdefault((db, table), []).append(name)
    cur.execute(f"SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA IN ({marks}) "
                "AND TABLE_TYPE='BASE TABLE'", databases)
    tables = [(db, t) for db, t in cur.fetchall()]
    return {k: (tuple(cols.get(k, [])), tuple(pks.get(k, []))) for k in tables}


def tracker_snapshot(catalog: Catalog, databases: list[str]) -> Snapshot:
    out: Snapshot = {}
    for t in catalog.iter_tables():
        if t.db not in databases:
            continue
        rows = []
        for pos, c in enumerate(t.columns, start=1):
            dtype, ctype, cs, coll = c.data_type, c.column_type, c.charset, c.collation
            if dtype == "json":
                dtype, ctype, cs, coll = "longtext", "longtext", "utf8mb4", "utf8mb4_bin"
            rows.append((pos, c.name, dtype, ctype, c.nullable, cs, coll))
        out[(t.db, t.name)] = (tuple(rows), t.primary_key)
    return out


def diff(server: Snapshot, tracker: Snapshot) -> list[str]:
    """Human-readable differences, empty when equal."""
    problems = []
    for key in sorted(set(server) | set(tracker)):
        if key not in tracker:
            problems.append(f"{key}: on the server only")
        elif key not in server:
            problems.append(f"{key}: in the tracker only")
        elif server[key] != tracker[key]:
            s_cols, s_pk = server[key]
            t_cols, t_pk = tracker[key]
            for i in range(max(len(s_cols), len(t_cols))):
                s = s_cols[i] if i < len(s_cols) else None
                t = t_cols[i] if i < len(t_cols) else None
                if s != t:
                    problems.append(f"{key} column #{i + 1}: server {s} != tracker {t}")
            if s_pk != t_pk:
                problems.append(f"{key} primary key: server {s_pk} != tracker {t_pk}")
    return problems
