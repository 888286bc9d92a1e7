"""Differential test: the tracker against a real MariaDB, one DDL statement at a time.

After EVERY statement of the hand-written corpus (tests/ddl_corpus/differential.sql) and of a seeded random
DDL stream (tests/ddl_random.py), the tracker's catalog must equal information_schema: column order, names,
DATA_TYPE, COLUMN_TYPE (unsigned, zerofill, ENUM values), nullability, charset, collation, and the primary
key columns in order. A failure prints the statement (and the seed) and every difference.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

import pytest

from schema_tracker.ddl import apply, split_statements
from schema_tracker.model import Catalog
from tests._schema_compare import diff, server_snapshot, tracker_snapshot
from tests.ddl_random import generate

pytestmark = pytest.mark.server

CORPUS = Path(__file__).parent / "ddl_corpus" / "differential.sql"


def _server_catalog(cur: Any) -> Catalog:
    cur.execute("SELECT @@character_set_server, @@collation_server")
    cs, coll = cur.fetchone()
    return Catalog(server_charset=cs, server_collation=coll)


def _replay(mariadb: Any, statements: list[str], databases: list[str], label: str) -> int:
    conn = mariadb.connect()
    cur = conn.cursor()
    catalog = _server_catalog(cur)
    current = None
    checked = 0
    try:
        for n, sql in enumerate(statements, start=1):
            try:
                cur.execute(sql)
            except Exception as err:  # a bad corpus/generator statement: say which one
                raise AssertionError(f"{label}: server rejected statement #{n}: {sql}: {err}") from err
            if current is None and databases[0] in {d for d in _dbs(cur)}:
                current = databases[0]
                conn.select_db(current)
            catalog, _ = apply(catalog, sql, current)
            problems = diff(server_snapshot(cur, databases), tracker_snapshot(catalog, databases))
            checked += 1
            assert not problems, f"{label}: statement #{n} diverged: {sql}\n  " + "\n  ".join(problems)
    finally:
        for db in databases:
            cur.execute(f"DROP DATABASE IF EXISTS `{db}`")
        conn.close()
    return checked


def _dbs(cur: Any) -> list[str]:
    cur.execute("SHOW DATABASES")
    return [r[0] for r in cur.fetchall()]


def test_corpus_matches_server_after_every_statement(mariadb: Any) -> None:
    db, db2 = f"dc_{secrets.token_hex(3)}", f"dc2_{secrets.token_hex(3)}"
    text = CORPUS.read_text(encoding="utf-8").replace("{db2}", db2).replace("{db}", db)
    statements = split_statements(text)
    created = {s.split("(")[0].split()[-1].strip("`").split(".")[-1].strip("`") for s in statements
               if s.upper().startswith(("CREATE TABLE", "CREATE OR REPLACE TABLE"))}
    assert _replay(mariadb, statements, [db, db2], "corpus") == len(statements)
    assert len(statements) >= 300 and len(created) >= 20, (len(statements), len(created))


def test_random_ddl_matches_server(mariadb: Any) -> None:
    seed = int(os.environ.get("DDL_RANDOM_SEED", secrets.randbelow(2**32)))
    count = int(os.environ.get("DDL_RANDOM_COUNT", "500"))
    db = f"dr_{secrets.token_hex(3)}"
    statements = [f"CREATE DATABASE {db}", *generate(seed, count)]
    print(f"random DDL seed {seed} (rerun with DDL_RANDOM_SEED={seed})")
    _replay(mariadb, statements, [db], f"random DDL seed {seed}")
