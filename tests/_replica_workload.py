"""A seeded random workload for the replica tests, and the oracle: the source's ``SELECT *`` in the replica's
typed values.

The workload runs on a real server, one statement or transaction at a time, over tables of every key kind
(a primary key of many column types, a composite key, a NOT NULL unique key instead of a primary key, no
key at all with duplicate rows) and every statement kind the replica must follow: several changes per row
in one transaction, delete then re-insert, key changes, REPLACE, INSERT ... ON DUPLICATE KEY UPDATE,
TRUNCATE, ALTER TABLE (add with a default, drop, rename, widen a type), RENAME TABLE, rotations.
"""

from __future__ import annotations

import datetime
import json
import random
from decimal import Decimal
from typing import Any

TABLES = {
    "t_pk": "CREATE TABLE t_pk (id INT PRIMARY KEY, a VARCHAR(40) CHARACTER SET utf8mb4, "
            "d DECIMAL(65,30), u BIGINT UNSIGNED, dt DATETIME(6), j JSON, e ENUM('x','y','z'), "
            "s SET('p','q','r'), bits BIT(10), b VARBINARY(16), f DOUBLE, tm TIME(6), ts TIMESTAMP(6) NULL)",
    "t_comp": "CREATE TABLE t_comp (k1 INT, k2 VARCHAR(10), v INT, PRIMARY KEY (k1, k2))",
    "t_uk": "CREATE TABLE t_uk (a INT NOT NULL, b INT, c VARCHAR(10), UNIQUE KEY (a))",
    "t_nokey": "CREATE TABLE t_nokey (a INT, b VARCHAR(5))",
    # VECTOR only where the server has it (MySQL 9): Workload(vector=True) adds it
    "t_geo": "CREATE TABLE t_geo (id INT PRIMARY KEY, g GEOMETRY, p POINT, f FLOAT, y YEAR, d DATE, "
             "c CHAR(3) CHARACTER SET latin1, tiny TINYINT UNSIGNED)",
}
_WORDS = ["", "a", "ä", "日本", "🙂", "x'y", "long " * 6, "Z"]


def start_workload(server: Any, db: str, seed: int) -> tuple[str, Workload]:
    """A new binlog file on ``server`` (a ``LocalServer``), then the workload's tables created in ``db``:
    (the file's name, the workload on an autocommit connection). VECTOR where the server has it."""
    server.execute("FLUSH BINARY LOGS")
    first = str(server.query("SHOW BINARY LOGS")[-1][0])
    conn = server.connect(db)
    conn.autocommit(True)
    work = Workload(conn, db, seed=seed, vector="mariadb" not in server.version.lower())
    work.create()
    return first, work


class Workload:
    """Statements of a seeded workload, run on ``conn`` (autocommit) in database ``db``."""

    def __init__(self, conn: Any, db: str, seed: int, *, vector: bool = False) -> None:
        self.conn = conn
        self.vector = vector
        self.db = db
        self.seed = seed
        self.rng = random.Random(seed)
        self.statements = 0
        self.pk_extra = False       # t_pk has the column added by an ALTER
        self.renamed = False        # t_comp's value column is called w
        self.cur = conn.cursor()

    def run(self, sql: str, args: Any = None) -> None:
        self.cur.execute(sql, args)
        self.statements += 1

    def create(self) -> None:
        for name, ddl in TABLES.items():
            if name == "t_geo" and self.vector:
                ddl = ddl[:-1] + ", v VECTOR(3))"
            self.run(ddl)

    # --- values -------------------------------------------------------------------------------------------

    def _pk_values(self, key: int) -> tuple[Any, ...]:
        r = self.rng
        return (key, r.choice(_WORDS) if r.random() > 0.1 else None,
                Decimal(r.randint(-10**20, 10**20)) / Decimal(10**r.randint(0, 30)),
                r.choice([0, 1, 2**63, 2**64 - 1, r.randint(0, 2**64 - 1)]),
                datetime.datetime(r.randint(1000, 9999), r.randint(1, 12), r.randint(1, 28), r.randint(0, 23),
                                  r.randint(0, 59), r.randint(0, 59), r.randint(0, 999999)),
                json.dumps({"k": r.randint(0, 9), "l": [r.random(), "s"], "n": None})
                if r.random() > 0.1 else None,
                r.choice(["x", "y", "z"]), r.choice(["", "p", "p,r", "q,r"]), r.randint(0, 1023),
                bytes(r.randint(0, 255) for _ in range(r.randint(0, 16))),
                r.choice([0.0, -1.5, 1e300, r.random()]),
                f"{r.randint(-838, 838)}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"
                f".{r.randint(0, 999999):06d}",
                datetime.datetime(2001, 1, 1) + datetime.timedelta(seconds=r.randint(0, 10**9))
                if r.random() > 0.2 else None)

    # --- steps --------------------------------------------------------------------------------------------

    def step(self) -> None:
        r = self.rng
        kind = r.choices(["pk", "comp", "uk", "nokey", "geo", "txn", "ddl", "truncate"],
                         [30, 15, 15, 15, 10, 15, 6, 1])[0]
        getattr(self, f"_{kind}")()

    def _pk(self) -> None:
        r = self.rng
        key = r.randint(1, 40)
        op = r.choice(["insert", "update", "update_json", "delete", "replace", "odku", "key"])
        cols = "id, a, d, u, dt, j, e, s, bits, b, f, tm, ts"
        marks = ", ".join(["%s"] * 13)
        if op == "insert":
            self.run(f"INSERT IGNORE INTO t_pk ({cols}) VALUES ({marks})", self._pk_values(key))
        elif op == "replace":
            self.run(f"REPLACE INTO t_pk ({cols}) VALUES ({marks})", self._pk_values(key))
        elif op == "odku":
            self.run(f"INSERT INTO t_pk ({cols}) VALUES ({marks}) ON DUPLICATE KEY UPDATE a = VALUES(a), "
                     "u = u DIV 2, f = f + 1", self._pk_values(key))
        elif op == "update":
            values = self._pk_values(key)
            self.run("UPDATE t_pk SET a = %s, d = %s, e = %s WHERE id BETWEEN %s AND %s",
                     (values[1], values[2], values[6], key, key + r.randint(0, 3)))
        elif op == "update_json":
            # in place on the column: a partial JSON update where the server logs diffs (PARTIAL_JSON)
            form = r.choice(["JSON_SET(j, '$.k', %s)", "JSON_REPLACE(j, '$.l[0]', %s)",
                             "JSON_REMOVE(JSON_SET(j, '$.m', %s), '$.n')"])
            self.run(f"UPDATE t_pk SET j = {form} WHERE id = %s AND j IS NOT NULL", (r.randint(0, 99), key))
        elif op == "delete":
            self.run("DELETE FROM t_pk WHERE id = %s", (key,))
        else:
            self.run("UPDATE IGNORE t_pk SET id = %s WHERE id = %s", (r.randint(1, 60), key))

    def _comp(self) -> None:
        r = self.rng
        k1, k2 = r.randint(1, 5), r.choice(["a", "b", "c", "dd"])
        v = "w" if self.renamed else "v"
        op = r.choice(["insert", "update", "delete", "key"])
        if op == "insert":
            self.run(f"INSERT IGNORE INTO t_comp (k1, k2, {v}) VALUES (%s, %s, %s)",
                     (k1, k2, r.randint(0, 9)))
        elif op == "update":
            self.run(f"UPDATE t_comp SET {v} = {v} + 1 WHERE k1 = %s", (k1,))
        elif op == "delete":
            self.run("DELETE FROM t_comp WHERE k1 = %s AND k2 = %s", (k1, k2))
        else:
            self.run("UPDATE IGNORE t_comp SET k2 = %s WHERE k1 = %s AND k2 = %s",
                     (r.choice(["a", "e"]), k1, k2))

    def _uk(self) -> None:
        r = self.rng
        a = r.randint(1, 15)
        op = r.choice(["insert", "update", "delete", "key"])
        if op == "insert":
            self.run("INSERT IGNORE INTO t_uk VALUES (%s, %s, %s)",
                     (a, r.randint(0, 5), r.choice(_WORDS[:5])))
        elif op == "update":
            self.run("UPDATE t_uk SET b = %s, c = NULL WHERE a = %s", (r.randint(0, 5), a))
        elif op == "delete":
            self.run("DELETE FROM t_uk WHERE a = %s", (a,))
        else:
            self.run("UPDATE IGNORE t_uk SET a = a + 20 WHERE a = %s", (a,))

    def _nokey(self) -> None:
        r = self.rng
        a, b = r.randint(1, 4), r.choice(["u", "v", None])
        op = r.choice(["insert", "insert", "update", "delete_one", "delete_all"])
        if op == "insert":
            self.run("INSERT INTO t_nokey VALUES (%s, %s), (%s, %s)", (a, b, a, b))
        elif op == "update":
            self.run("UPDATE t_nokey SET b = %s WHERE a = %s LIMIT 1", (r.choice(["w", None]), a))
        elif op == "delete_one":
            self.run("DELETE FROM t_nokey WHERE a = %s LIMIT 1", (a,))
        else:
            self.run("DELETE FROM t_nokey WHERE a = %s", (a,))

    def _geo(self) -> None:
        r = self.rng
        key = r.randint(1, 20)
        op = r.choice(["insert", "insert", "update", "delete"])
        point = f"POINT({r.randint(-90, 90)} {r.randint(-90, 90)})"
        if op == "insert":
            vector = ", STRING_TO_VECTOR(%s)" if self.vector else ""
            day = f"20{r.randint(10, 30)}-0{r.randint(1, 9)}-1{r.randint(0, 9)}"
            args: tuple[Any, ...] = (key, f"LINESTRING(0 0, {r.randint(1, 9)} 1)", point,
                                     r.randint(-8, 8) / 2, r.choice([1901, 2000, 2155]), day,
                                     r.choice(["abc", "é", ""]), r.randint(0, 255))
            if self.vector:
                args += (f"[{r.randint(-5, 5) / 4}, {r.random()}, 3]",)
            self.run("INSERT IGNORE INTO t_geo VALUES (%s, ST_GeomFromText(%s), ST_GeomFromText(%s), %s, %s, "
                     f"%s, %s, %s{vector})", args)
        elif op == "update":
            self.run("UPDATE t_geo SET p = ST_GeomFromText(%s), f = f + 0.5 WHERE id = %s", (point, key))
        else:
            self.run("DELETE FROM t_geo WHERE id = %s", (key,))

    def _txn(self) -> None:
        """Several changes to the same rows in one transaction, a delete then a re-insert among them."""
        r = self.rng
        self.run("BEGIN")
        key = r.randint(1, 40)
        self.run(f"REPLACE INTO t_pk (id, a, d, u, dt, j, e, s, bits, b, f, tm, ts) VALUES "
                 f"({', '.join(['%s'] * 13)})", self._pk_values(key))
        self.run("UPDATE t_pk SET a = CONCAT(COALESCE(a, ''), '+') WHERE id = %s", (key,))
        self.run("DELETE FROM t_pk WHERE id = %s", (key,))
        if r.random() < 0.7:
            self.run(f"INSERT INTO t_pk (id, a, d, u, dt, j, e, s, bits, b, f, tm, ts) VALUES "
                     f"({', '.join(['%s'] * 13)})", self._pk_values(key))
        for _ in range(r.randint(1, 4)):
            self._nokey()
            self._uk()
        self.run("COMMIT")

    def _ddl(self) -> None:
        r = self.rng
        choice = r.choice(["add", "drop", "rename_col", "widen", "rename_table", "flush"])
        if choice == "add" and not self.pk_extra:
            self.run("ALTER TABLE t_pk ADD COLUMN extra INT NOT NULL DEFAULT 7 AFTER a")
            self.pk_extra = True
        elif choice == "drop" and self.pk_extra:
            self.run("ALTER TABLE t_pk DROP COLUMN extra")
            self.pk_extra = False
        elif choice == "rename_col":
            old, new = ("w", "v") if self.renamed else ("v", "w")
            self.run(f"ALTER TABLE t_comp CHANGE COLUMN {old} {new} BIGINT")
            self.renamed = not self.renamed
        elif choice == "widen":
            self.run(f"ALTER TABLE t_uk MODIFY COLUMN c VARCHAR({r.randint(10, 30)})")
        elif choice == "rename_table":
            self.run("RENAME TABLE t_nokey TO t_nokey_tmp")
            self.run("INSERT INTO t_nokey_tmp VALUES (99, 'r')")
            self.run("RENAME TABLE t_nokey_tmp TO t_nokey")
        else:
            self.run("FLUSH BINARY LOGS")

    def _truncate(self) -> None:
        self.run(f"TRUNCATE TABLE {self.rng.choice(['t_comp', 't_nokey'])}")


def source_rows(conn: Any, table: str) -> tuple[list[str], list[int], list[tuple[Any, ...]]]:
    """``SELECT *`` of ``table``: the column names, their pymysql field types, and the rows, canonical
    (``canonical``)."""
    cur = conn.cursor()
    cur.execute("SET time_zone = '+00:00'")
    cur.execute("SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS "
                "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s", (table,))
    vectors = {name for name, kind in cur.fetchall() if str(kind).lower() == "vector"}
    cur.execute(f"SELECT * FROM `{table}` LIMIT 0")
    names = [d[0] for d in cur.description]
    # pymysql knows no VECTOR type (it would decode the bytes as text): read as hex
    cur.execute("SELECT " + ", ".join(f"HEX(`{n}`) AS `{n}`" if n in vectors else f"`{n}`" for n in names)
                + f" FROM `{table}`")
    kinds = [242 if n in vectors else d[1] for n, d in zip(names, cur.description, strict=True)]
    rows = [tuple(_as_replica(v, k) for v, k in zip(row, kinds, strict=True)) for row in cur.fetchall()]
    rows = [tuple(canonical(v, k) for v, k in zip(row, kinds, strict=True)) for row in rows]
    return names, kinds, sorted(rows, key=repr)


def _as_replica(value: Any, field_type: int) -> Any:
    """What the server gives in another form than the model: GEOMETRY as SRID + WKB (the model: WKB),
    VECTOR as packed floats (the model: a list)."""
    import struct

    if isinstance(value, bytes) and field_type == 255:          # GEOMETRY
        return value[4:]
    if field_type == 242 and value is not None:                 # VECTOR (MySQL 9), read as hex
        raw = bytes.fromhex(value)
        return list(struct.unpack(f"<{len(raw) // 4}f", raw))
    return value


def replica_rows(table: Any, names: list[str], kinds: list[int]) -> list[tuple[Any, ...]]:
    """A replica table's rows (its source columns ``names``), canonical as the source's."""
    rows = table.select(names).to_pylist()
    out = [tuple(canonical(row[n], k) for n, k in zip(names, kinds, strict=True)) for row in rows]
    return sorted(out, key=repr)


def canonical(value: Any, field_type: int) -> Any:
    """One value, from the server (pymysql) or the replica (Arrow), in one comparable form."""
    from pymysql.constants import FIELD_TYPE

    if value is None:
        return None
    if field_type == FIELD_TYPE.BIT and isinstance(value, bytes):
        return int.from_bytes(value, "big")
    if isinstance(value, datetime.timedelta):
        return value // datetime.timedelta(microseconds=1)
    if field_type == FIELD_TYPE.JSON:
        return json.dumps(json.loads(value), sort_keys=True)
    if isinstance(value, set | frozenset):
        return ",".join(sorted(value))
    if field_type == FIELD_TYPE.SET and isinstance(value, str):
        return ",".join(sorted(v for v in value.split(",") if v))
    if field_type in (FIELD_TYPE.NEWDECIMAL, FIELD_TYPE.DECIMAL, FIELD_TYPE.LONGLONG) and not isinstance(
            value, float):
        return format(Decimal(str(value)).normalize(), "f")
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value.replace(tzinfo=None)
    return value
