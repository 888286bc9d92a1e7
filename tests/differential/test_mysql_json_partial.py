"""JSON partial updates (``binlog_row_value_options=PARTIAL_JSON``) on a real MySQL 9.7, against ``SELECT``.

MySQL logs JSON_SET / JSON_REPLACE / JSON_REMOVE (and the array functions when they fit) as diffs in
PARTIAL_UPDATE_ROWS events, under every row image. With the before image holding the column (FULL, NOBLOB)
the assembler applies the diffs and the update carries the new document as ``json_value``; with MINIMAL it
carries the ``json_diff`` operations, which the consumer here applies to the document it holds
(``apply_json_diff_text``), as the README tells consumers to. Either way, rebuilding every row from the
events must give exactly the documents ``SELECT`` returns, as text.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.errors import JsonDiffError
from binlog_model.io.files import iter_events
from binlog_model.messages import python_value
from binlog_model.resolve.assembler import StatementAssembler
from binlog_model.resolve.json_diff import apply_json_diff_text, apply_json_diffs, resolve_partial_row
from binlog_model.resolve.options import AssemblerOptions
from binlog_model.testing.mysql import MySQLServer
from binlog_model.wire.rows import RowsEvent
from binlog_model.wire.values import JsonDiff, JsonDiffs
from schema_tracker.history import SchemaHistory
from schema_tracker.snapshot import catalog_from_server

IMAGES = ("FULL", "NOBLOB", "MINIMAL")

DOCS = [
    """'{"a": 1, "arr": [1, 2, 3], "obj": {"k": "v", "deep": {"x": [true, null]}}, "sp ace": 0}'""",
    """JSON_OBJECT('ключ', 'значение', '😀', JSON_ARRAY(1, 'ж'), 'dec', CAST('1.50' AS DECIMAL(5,2)),
                   'when', CAST('2020-01-02 03:04:05.500000' AS DATETIME(6)),
                   'day', CAST('2020-01-02' AS DATE),
                   'clock', CAST('12:34:56' AS TIME), 'arr', JSON_ARRAY(), 'obj', JSON_OBJECT(), 'a', 0.5)""",
    """'[1, {"a": [2, 3]}, "x", [], {}]'""",
]

# (SET clause, applies to every row); a chain on nested objects and arrays, unicode keys, opaque scalars.
CHAIN = [
    "doc = JSON_SET(doc, '$.a', 2)",
    "doc = JSON_SET(doc, '$.new', 'x', '$.arr[1]', 10)",
    "doc = JSON_REPLACE(doc, '$.obj.k', JSON_OBJECT('z', 1), '$[1].a[0]', 'r')",
    "doc = JSON_REMOVE(doc, '$.arr[0]')",
    "doc = JSON_REMOVE(doc, '$.\"sp ace\"')",
    "doc = JSON_ARRAY_APPEND(doc, '$.arr', 5)",
    "doc = JSON_ARRAY_INSERT(doc, '$.arr[0]', 'first')",
    "doc = JSON_SET(doc, '$.\"ключ\"', 'знач', '$.dec', CAST('3.25' AS DECIMAL(4,2)))",
    "doc = JSON_SET(doc, '$.when', CAST('2021-02-03 04:05:06.789' AS DATETIME(3)))",
    "n = n + 1, doc = JSON_REPLACE(doc, '$.a', 'str')",
    "doc = JSON_SET(doc, '$.arr[last]', 'L'), doc2 = JSON_REMOVE(doc2, '$.b')",
    "doc = JSON_REMOVE(doc, '$.arr[last]'), doc2 = JSON_SET(doc2, '$.c', JSON_ARRAY(1, 2))",
    "doc = JSON_SET(doc, '$.obj.deep.x[1]', 'n', '$[2]', 'y', '$.\"😀\"[5]', 'app')",
    "doc = JSON_REPLACE(doc, '$.day', CAST('2022-12-31' AS DATE), '$[0]', 1.25e100)",
    "doc = JSON_SET(doc, '$.none', NULL), doc2 = JSON_REPLACE(doc2, '$.a', 'ü')",
    "doc = JSON_SET(doc, '$.arr[7]', 'past the end', '$.obj.k[0]', 'auto-wrap path')",
    "doc = JSON_SET(doc, '$.arr', JSON_ARRAY()), doc2 = JSON_SET(doc2, '$.c[9]', 3)",
    "doc = JSON_SET(doc, '$.arr[0]', 'into empty'), doc2 = JSON_REMOVE(doc2, '$.c[last]')",
]


def _decode(server: MySQLServer, assembler: StatementAssembler) -> tuple[list[pb.BinlogEvent], Counter[str]]:
    """The BinlogEvents of the binlog files closed since the last call, and how their JSON columns came."""
    events: list[pb.BinlogEvent] = []
    seen: Counter[str] = Counter()
    for event in iter_events(server.flush_and_collect()):
        if isinstance(event, RowsEvent) and event.kind == "partial_update":
            for _, after in event.rows:
                for diffs in (v for v in after if type(v) is JsonDiffs):
                    seen["diff columns"] += 1
                    seen.update(f"{d.operation} {'cell' if d.path.endswith(']') else 'member'}"
                                for d in diffs)
        events.extend(assembler.feed(event))
    events.extend(assembler.close())
    for e in events:
        for row in e.rows:
            for c in row.after:
                seen[c.value.WhichOneof("kind") or "none"] += 1
    return events, seen


class Consumer:
    """What an ETL consumer keeps: rows by primary key, JSON as text; json_diff applied to the old text."""

    def __init__(self, db: str) -> None:
        self.db = db
        self.rows: dict[tuple[str, int], dict[str, Any]] = {}

    def apply(self, event: pb.BinlogEvent) -> None:
        if event.db != self.db or event.operation == pb.BinlogEvent.SCHEMA:
            return
        for row in event.rows:
            key = (event.table, python_value(row.primary_key[0].value))
            if event.operation == pb.BinlogEvent.DELETE:
                del self.rows[key]
                continue
            current = self.rows.setdefault(key, {})
            for column in row.after:
                if column.value.WhichOneof("kind") == "json_diff":
                    current[column.name] = apply_json_diff_text(current[column.name],
                                                                column.value.json_diff.operations)
                else:
                    current[column.name] = python_value(column.value)


def _select(server: MySQLServer, db: str, table: str) -> dict[tuple[str, int], dict[str, Any]]:
    conn = server.connect(database=db)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT * FROM `{table}`")
            names = [d[0] for d in cur.description]
            return {(table, row[0]): dict(zip(names, row, strict=True)) for row in cur.fetchall()}
    finally:
        conn.close()


def _setup(server: MySQLServer, db: str) -> tuple[StatementAssembler, Any]:
    server.flush_and_collect()   # older files belong to earlier tests
    conn = server.connect(database=db)
    history = SchemaHistory(catalog_from_server(conn, databases=[db]))
    assembler = StatementAssembler(history, AssemblerOptions(source="partial-json", image="changed"))
    with conn.cursor() as cur:
        cur.execute("SET SESSION binlog_row_value_options = 'PARTIAL_JSON'")
    return assembler, conn


@pytest.mark.parametrize("image", IMAGES)
def test_partial_json_chain_equals_select(mysql: MySQLServer, mysql_db: str, image: str) -> None:
    assembler, conn = _setup(mysql, mysql_db)
    consumer = Consumer(mysql_db)
    try:
        with conn.cursor() as cur:
            cur.execute("CREATE TABLE j (id INT PRIMARY KEY, doc JSON, doc2 JSON, n INT)")
            for i, doc in enumerate(DOCS, 1):
                cur.execute(f"INSERT INTO j VALUES ({i}, {doc}, '{{\"a\": 1, \"b\": 2}}', 0)")
            cur.execute("INSERT INTO j VALUES (9, NULL, NULL, 0)")   # a diff never applies to NULL
            cur.execute(f"SET SESSION binlog_row_image = '{image}'")
            for clause in CHAIN:
                cur.execute(f"UPDATE j SET {clause}")
    finally:
        conn.close()
    events, seen = _decode(mysql, assembler)
    for event in events:
        consumer.apply(event)
    server_rows = _select(mysql, mysql_db, "j")
    assert consumer.rows == server_rows
    assert seen["diff columns"] >= 2 * len(CHAIN)   # MySQL really logged diffs, under this image too
    if image == "MINIMAL":
        assert seen["json_diff"] >= 2 * len(CHAIN)
    else:
        assert seen["json_diff"] == 0   # resolved: the after image carries the new document


def _random_clause(rng: random.Random) -> str:
    paths = ["$.a", "$.b", "$.arr[0]", "$.arr[1]", "$.arr[last]", "$.o.k", "$.o.\"ключ\"", "$.o.l[0]",
             "$.\"😀\"", "$.z", "$.o", "$.arr[6]", "$.o.l[2]", "$.arr[last-1]"]
    values = ["1", "'s'", "NULL", "TRUE", "2.5", "CAST('7.125' AS DECIMAL(6,3))", "JSON_ARRAY(1, 'ж')",
              "JSON_OBJECT('k', 'v')", "CAST('2001-02-03' AS DATE)", "-3", "'ü'"]
    col = rng.choice(("doc", "doc2"))
    kind = rng.random()
    pairs = ", ".join(f"'{rng.choice(paths)}', {rng.choice(values)}" for _ in range(rng.randint(1, 3)))
    if kind < 0.35:
        clause = f"{col} = JSON_SET({col}, {pairs})"
    elif kind < 0.6:
        clause = f"{col} = JSON_REPLACE({col}, {pairs})"
    elif kind < 0.8:
        clause = f"{col} = JSON_REMOVE({col}, '{rng.choice(paths[1:])}')"
    elif kind < 0.9:
        clause = f"{col} = JSON_ARRAY_APPEND({col}, '$.arr', {rng.choice(values)})"
    else:
        clause = f"{col} = JSON_ARRAY_INSERT({col}, '$.arr[{rng.randint(0, 3)}]', {rng.choice(values)})"
    if rng.random() < 0.2:
        clause += f", n = {rng.randint(0, 99)}"
    return clause


def test_partial_json_random_chains_in_every_image_equal_select(mysql: MySQLServer, mysql_db: str) -> None:
    """A seeded random workload: 240 partial JSON updates, each under a randomly chosen row image, on rows
    inserted with nested documents; rebuilt from the events (diffs applied by the consumer where MINIMAL
    left the old document out of the log) they equal SELECT."""
    rng = random.Random(20261123)
    assembler, conn = _setup(mysql, mysql_db)
    consumer = Consumer(mysql_db)
    start = '{"a": 0, "arr": [1, [2], "x"], "o": {"k": 1, "l": [{"m": 2}]}, "😀": "smile"}'
    try:
        with conn.cursor() as cur:
            cur.execute("CREATE TABLE r (id INT PRIMARY KEY, doc JSON, doc2 JSON, n INT)")
            for i in range(1, 7):
                cur.execute(f"INSERT INTO r VALUES ({i}, '{start}', '{start}', {i})")
            for _ in range(240):
                cur.execute(f"SET SESSION binlog_row_image = '{rng.choice(IMAGES)}'")
                cur.execute(f"UPDATE r SET {_random_clause(rng)} WHERE id IN ({rng.randint(1, 6)}, "
                            f"{rng.randint(1, 6)})")
    finally:
        conn.close()
    events, seen = _decode(mysql, assembler)
    for event in events:
        consumer.apply(event)
    assert consumer.rows == _select(mysql, mysql_db, "r")
    assert seen["diff columns"] > 100 and seen["json_diff"] > 20 and seen["json_value"] > 20, seen
    for op in ("REPLACE member", "REPLACE cell", "INSERT member", "INSERT cell", "REMOVE member",
               "REMOVE cell"):
        assert seen[op] >= 5, (op, seen)   # every kind of diff MySQL writes was exercised


# --- where MySQL rejects a diff, the library raises (no server needed) ----------------------------------

@pytest.mark.parametrize(("document", "diff", "reason"), [
    ({"a": 1}, JsonDiff("REMOVE", "$.b"), "nothing to remove"),
    ({"a": 1}, JsonDiff("INSERT", "$.a", 2), "already exists"),
    ({"a": 1}, JsonDiff("REPLACE", "$.b", 2), "no value at the path"),
    ({"a": [1]}, JsonDiff("REPLACE", "$.a[1]", 2), "no value at the path"),
    ({"a": 1}, JsonDiff("REPLACE", "$.a[0]", 2), "no value at the path"),   # no auto-wrapping in a diff
    ({"a": 1}, JsonDiff("INSERT", "$.x.y", 2), "parent of the path"),
    ({"a": 1}, JsonDiff("REPLACE", "$", 2), "document root"),
    ({"a": 1}, JsonDiff("REPLACE", "$.*", 2), "wildcard"),
    ({"a": [1]}, JsonDiff("REPLACE", "$.a[0 to 1]", 2), "unsupported array leg"),
])
def test_a_diff_mysql_would_reject_is_a_typed_error(document: Any, diff: JsonDiff, reason: str) -> None:
    with pytest.raises(JsonDiffError, match=reason):
        apply_json_diffs(document, [diff])
    assert document == {"a": 1} or document == {"a": [1]}   # the before value is never modified


def test_diff_against_a_null_before_value_is_a_typed_error() -> None:
    with pytest.raises(JsonDiffError, match="NULL before value"):
        resolve_partial_row((1, None), (1, JsonDiffs([JsonDiff("REPLACE", "$.a", 1)])))


def test_last_and_clamped_positions_follow_mysql() -> None:
    doc = {"arr": [1, 2, 3], "b c": {"ü": 0}}
    out = apply_json_diffs(doc, [JsonDiff("REPLACE", "$.arr[last]", 9), JsonDiff("REMOVE", "$.arr[last-2]"),
                                 JsonDiff("INSERT", "$.arr[99]", 7), JsonDiff("REPLACE", '$."b c"."ü"', 1),
                                 JsonDiff("INSERT", "$.aa", 0)])
    assert out == {"aa": 0, "arr": [2, 9, 7], "b c": {"ü": 1}}
    assert list(out) == ["aa", "arr", "b c"]   # MySQL's key order: shorter keys first
