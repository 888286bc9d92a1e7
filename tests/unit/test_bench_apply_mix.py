"""The change mix of ``python -m benchmarks.apply`` (its lag mode's ``--statement-rows``): grouping a
transaction's changes into multi-row statements keeps the same row changes, and the writer counts the rows
the server changed."""

from __future__ import annotations

import hashlib
import re
from collections import Counter

import pytest

from benchmarks.apply import Changes, _groups, _run

_KEYS = {"UPDATE": re.compile(r"WHERE id (?:= (\d+)|IN \(([\d, ]+)\))"),
         "DELETE": re.compile(r"WHERE id (?:= (\d+)|IN \(([\d, ]+)\))"),
         "INSERT": re.compile(r"\((\d+), 1, 1\.50")}


def _changes(sql: str) -> tuple[Counter[tuple[str, int]], list[list[int]]]:
    """Each (kind, key) the statements change, and each statement's keys."""
    found: Counter[tuple[str, int]] = Counter()
    statements = []
    for statement in sql.split(";"):
        kind = statement.split()[0]
        if kind == "INSERT":
            keys = [int(k) for k in _KEYS[kind].findall(statement)]
        else:
            one, many = _KEYS[kind].search(statement).groups()
            keys = [int(one)] if one else [int(k) for k in many.split(", ")]
        statements.append(keys)
        found.update((kind, key) for key in keys)
    return found, statements


@pytest.mark.parametrize("rows", [5_000, 40])       # 40: keys drawn twice in one transaction
def test_grouped_statements_change_the_same_rows(rows: int) -> None:
    single, grouped = Changes(rows, 7), Changes(rows, 7)
    twice = 0
    for _ in range(30):
        one, one_statements = _changes(single.transaction(100))
        many, many_statements = _changes(grouped.transaction(100, statement_rows=25))
        assert one == many
        assert all(len(keys) == 1 for keys in one_statements)
        assert all(1 <= len(keys) <= 25 and len(set(keys)) == len(keys) for keys in many_statements)
        assert len(many_statements) < len(one_statements)
        twice += sum(n > 1 for n in one.values())
    if rows == 40:
        assert twice, "the small table should draw some key twice in a transaction"


def test_single_row_statements_are_unchanged() -> None:
    """The archive benchmark's binlogs do not change with the option's default: the digest of 50
    transactions as the code before ``--statement-rows`` wrote them."""
    mix = Changes(1000, 1)
    sql = "".join(mix.transaction(100) for _ in range(50))
    assert hashlib.md5(sql.encode()).hexdigest() == "244874ec092ad87f6cfd839fc03bdfe5"


def test_groups_split_repeated_keys() -> None:
    assert list(_groups([1, 2, 1, 3, 1], 2)) == [[1, 2], [1, 3], [1]]


def test_the_writer_counts_the_rows_the_server_changed(mariadb, mariadb_db) -> None:
    from pymysql.constants import CLIENT

    mariadb.execute([f"CREATE TABLE `{mariadb_db}`.t (id INT PRIMARY KEY, qty INT, price DECIMAL(12,2), "
                     "name VARCHAR(40), updated DATETIME(6), big BIGINT UNSIGNED)"])
    conn = mariadb.connect(mariadb_db, client_flag=CLIENT.MULTI_STATEMENTS, autocommit=False)
    try:
        assert _run(conn, "INSERT INTO t VALUES (1, 1, 1.50, 'new', NOW(6), 1), "
                          "(2, 1, 1.50, 'new', NOW(6), 1), (3, 1, 1.50, 'new', NOW(6), 1);"
                          "UPDATE t SET qty = qty + 1 WHERE id IN (1, 2, 99);"
                          "DELETE FROM t WHERE id IN (3, 98)") == 3 + 2 + 1
        cur = conn.cursor()
        cur.execute("SELECT id, qty FROM t ORDER BY id")
        assert cur.fetchall() == ((1, 2), (2, 2))
    finally:
        conn.close()
