"""Seeded random charset scenarios for the charset differential
(tests/differential/test_charset_differential.py).

A scenario is two lists of SQL statements: ``before`` runs before the dump snapshot (databases and tables
only, no rows), ``after`` runs after it and is what the binlog holds. They mix databases and tables with and
without charsets, ``SET SESSION character_set_server/collation_server``, ``ALTER DATABASE``, ``ALTER TABLE …
CONVERT TO CHARACTER SET`` and text in many scripts in CHAR/VARCHAR/TEXT/ENUM/SET columns. Statements the
server refuses (a value its column charset cannot hold, under strict mode) are simply not logged.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

# Column and table charsets (values a charset cannot hold are refused by the server, so not logged).
CHARSETS = ("latin1", "utf8mb4", "utf8mb3", "greek", "cp1251", "sjis", "koi8r")
SERVER_CHARSETS = ("latin1", "utf8mb4", "utf8mb3", "greek", "cp1251", "sjis")
TEXTS = ("plain text", "Grüße àéîõü ÿ", "Καλημέρα κόσμε", "Привет мир", "日本語テキスト", "emoji 🙂🚀",
         "mixed é Ω Ж 日", "ÆØÅ æøå", "½ £ ©", "ελληνικά και English", "Ёж ёлка", "ｶﾀｶﾅ")
LABELS = ("é", "α", "ж", "日", "ü", "Ω", "ß", "🙂")


@dataclass
class Scenario:
    seed: int
    databases: list[str] = field(default_factory=list)
    before: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    tables: list[tuple[str, str]] = field(default_factory=list)


def generate(seed: int, prefix: str, statements: int = 40) -> Scenario:
    rnd = random.Random(seed)
    sc = Scenario(seed)
    ids: dict[tuple[str, str], int] = {}
    labels_of: dict[tuple[str, str], list[str]] = {}
    split = rnd.randint(2, max(3, statements // 3))   # the dump is taken after this many statements
    out = sc.before

    def opt(kind: str) -> str:
        return f" {kind} {rnd.choice(CHARSETS)}" if rnd.random() < 0.5 else ""

    for n in range(statements):
        if n == split:
            out = sc.after
        roll = rnd.random()
        if not sc.databases or roll < 0.12:
            db = f"{prefix}_d{len(sc.databases)}"
            sc.databases.append(db)
            out.append(f"CREATE DATABASE `{db}`{opt('CHARACTER SET')}")
        elif roll < 0.18:
            if rnd.random() < 0.5:
                out.append(f"SET SESSION character_set_server = {rnd.choice(SERVER_CHARSETS)}")
            else:
                cs = rnd.choice(SERVER_CHARSETS)
                out.append(f"SET SESSION collation_server = '{cs}_bin'")
        elif roll < 0.24:
            out.append("SET SESSION collation_server = DEFAULT")
        elif roll < 0.30:
            out.append(f"ALTER DATABASE `{rnd.choice(sc.databases)}` CHARACTER SET {rnd.choice(CHARSETS)}")
        elif roll < 0.45 or not sc.tables:
            db = rnd.choice(sc.databases)
            table = f"t{len(sc.tables)}"
            # one non-ASCII label: two the column charset cannot hold would both be '?' (a refused CREATE)
            # (a dump prints a 4-byte label character as '?': FULL row metadata states the real label)
            chosen = [*rnd.sample(("a", "b", "c", "d", "e"), 3), rnd.choice(LABELS)]
            labels = ", ".join(f"'{label}'" for label in chosen)
            cols = [f"c CHAR({rnd.randint(8, 30)}){opt('CHARACTER SET')}",
                    f"v VARCHAR({rnd.randint(20, 200)}){opt('CHARACTER SET')}",
                    f"tx TEXT{opt('CHARACTER SET')}", f"e ENUM({labels}){opt('CHARACTER SET')}",
                    f"s SET({labels}){opt('CHARACTER SET')}"]
            columns = ", ".join(cols)
            out.append(f"CREATE TABLE `{db}`.`{table}` (id INT PRIMARY KEY, {columns}){opt('CHARSET')}")
            sc.tables.append((db, table))
            labels_of[(db, table)] = chosen
        elif roll < 0.50:
            db, table = rnd.choice(sc.tables)
            cs = rnd.choice(CHARSETS)
            out.append(f"ALTER TABLE `{db}`.`{table}` CONVERT TO CHARACTER SET {cs}")
        elif out is sc.after:
            db, table = rnd.choice(sc.tables)
            key = (db, table)
            if rnd.random() < 0.75 or not ids.get(key):
                ids[key] = ids.get(key, 0) + 1
                # one script per row, so that most rows fit every column's charset; ASCII always does
                text = rnd.choice(TEXTS) if rnd.random() < 0.7 else "plain text"
                labels = rnd.sample(labels_of[key], 2)
                out.append(f"INSERT INTO `{db}`.`{table}` VALUES ({ids[key]}, '{text[:8]}', '{text}', "
                           f"'{text} {text}', '{labels[0]}', '{','.join(labels)}')")
            else:
                text = rnd.choice(TEXTS)
                out.append(f"UPDATE `{db}`.`{table}` SET v = '{text}', tx = CONCAT(tx, ' ', '{text}') "
                           f"WHERE id = {rnd.randint(1, ids[key])}")
    return sc
