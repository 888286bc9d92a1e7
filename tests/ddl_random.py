"""A seeded random DDL generator for the differential test.

Strategy: keep a tiny model of what exists (tables, column names in order, primary key) so every generated
statement is valid on the server, and pick among the forms the tracker supports: CREATE (plain, LIKE),
ADD (FIRST/AFTER/several/parenthesised), MODIFY, CHANGE (rename or same name), RENAME COLUMN, DROP
COLUMN, ALTER COLUMN DEFAULT, ADD/DROP PRIMARY KEY, RENAME TABLE (incl. cycles), RENAME TO, CONVERT TO
CHARACTER SET, DEFAULT CHARSET, indexes, TRUNCATE and DROP TABLE. The same seed gives the same stream.

``mysql=True`` adds MySQL 8/9-only forms: INVISIBLE columns and ALTER COLUMN SET [IN]VISIBLE, ADD COLUMN
at any position with ALGORITHM=INSTANT, utf8mb4_0900 collations, VECTOR columns and functional indexes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

_TYPES = (
    "int", "int unsigned", "bigint", "tinyint(1)", "smallint unsigned zerofill", "mediumint", "decimal(10,2)",
    "decimal(5)", "float", "double", "float(7,3)", "bit(3)", "date", "datetime(3)", "time",
    "timestamp(6) NULL",
    "year", "char(4)", "varchar(20)", "varchar(255) CHARACTER SET latin1", "varchar(8) COLLATE utf8mb4_bin",
    "binary(2)", "varbinary(9)", "tinytext", "text", "mediumtext", "blob", "longblob",
    "enum('a','b,c','it''s')", "set('x','y')", "varchar(5) CHARACTER SET utf8mb3", "char(3) binary",
)
_CHARSETS = ("latin1", "utf8mb4", "utf8mb3")
_MYSQL_TYPES = (
    "varchar(10) COLLATE utf8mb4_0900_as_cs", "char(3) CHARACTER SET utf8mb4",
    "text COLLATE utf8mb4_0900_bin",
    "vector(4)", "json", "int INVISIBLE", "varchar(6) INVISIBLE", "int AS (1) VIRTUAL",
)


@dataclass
class _Table:
    name: str
    columns: list[str]
    pk: list[str] = field(default_factory=list)
    frozen: set[str] = field(default_factory=set)  # columns a functional index depends on


class _Gen:
    def __init__(self, seed: int, mysql: bool = False) -> None:
        self.rng = random.Random(seed)
        self.mysql = mysql
        self.tables: dict[str, _Table] = {}
        self.counter = 0

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def col_def(self, nullable_ok: bool = True) -> str:
        t = self.rng.choice(_TYPES + _MYSQL_TYPES if self.mysql else _TYPES)
        if nullable_ok and "NULL" not in t and " AS " not in t and self.rng.random() < 0.3:
            t += " NOT NULL"
        return t

    def position(self, t: _Table, exclude: str | None = None) -> str:
        r = self.rng.random()
        others = [c for c in t.columns if c != exclude]
        if r < 0.2:
            return " FIRST"
        if r < 0.5 and others:
            return f" AFTER `{self.rng.choice(others)}`"
        return ""

    def case(self, name: str) -> str:  # column names are case-insensitive: vary the spelling
        return name.upper() if self.rng.random() < 0.15 else name

    def step(self) -> str:
        if len(self.tables) < 3 or self.rng.random() < 0.05:
            return self.create()
        t = self.tables[self.rng.choice(sorted(self.tables))]
        choices = [self.add, self.add_many, self.modify, self.change, self.rename_col, self.drop_col,
                   self.default, self.pk, self.rename_table, self.charset, self.index, self.truncate,
                   self.drop_table, self.like]
        weights = [6, 2, 5, 5, 3, 4, 1, 3, 2, 1, 1, 1, 1, 1]
        if self.mysql:
            choices += [self.instant_add, self.visibility, self.functional_index]
            weights += [3, 2, 1]
        return self.rng.choices(choices, weights)[0](t)

    def instant_add(self, t: _Table) -> str:  # MySQL 8.0.29+: INSTANT ADD COLUMN at any position
        c = self.fresh("c")
        pos = self.position(t)
        self._place(t, c, pos)
        return f"ALTER TABLE {t.name} ADD COLUMN `{c}` {self.col_def()}{pos}, ALGORITHM=INSTANT"

    def visibility(self, t: _Table) -> str:
        c = self.rng.choice(t.columns)
        how = self.rng.choice(("VISIBLE", "INVISIBLE"))
        if how == "INVISIBLE" and len(t.columns) < 2:
            how = "VISIBLE"  # a table needs a visible column
        return f"ALTER TABLE {t.name} ALTER COLUMN `{c}` SET {how}"

    def functional_index(self, t: _Table) -> str:  # a hidden generated column the row image leaves out
        c = self.rng.choice(t.columns)
        t.frozen.add(c)
        return f"ALTER TABLE {t.name} ADD INDEX {self.fresh('fx')} ((length(`{c}`)))"

    def create(self) -> str:
        name = self.fresh("r")
        n = self.rng.randint(1, 4)
        cols = [self.fresh("c") for _ in range(n)]
        defs = [f"`{c}` {self.col_def()}" for c in cols]
        t = _Table(name, cols)
        if self.rng.random() < 0.6:
            t.pk = [cols[0]]
            defs[0] = f"`{cols[0]}` int NOT NULL"
            defs.append(f"PRIMARY KEY (`{cols[0]}`)")
        self.tables[name] = t
        cs = f" DEFAULT CHARSET={self.rng.choice(_CHARSETS)}" if self.rng.random() < 0.5 else ""
        return f"CREATE TABLE `{name}` ({', '.join(defs)}){cs}"

    def like(self, t: _Table) -> str:
        name = self.fresh("r")
        self.tables[name] = _Table(name, list(t.columns), list(t.pk), set(t.frozen))
        return f"CREATE TABLE {name} LIKE {t.name}"

    def add(self, t: _Table) -> str:
        c = self.fresh("c")
        pos = self.position(t)
        self._place(t, c, pos)
        kw = self.rng.choice(("ADD COLUMN", "ADD"))
        return f"ALTER TABLE {t.name} {kw} `{c}` {self.col_def()}{pos}"

    def add_many(self, t: _Table) -> str:
        new = [self.fresh("c") for _ in range(self.rng.randint(2, 3))]
        if self.rng.random() < 0.5:
            t.columns.extend(new)
            return f"ALTER TABLE {t.name} ADD (" + ", ".join(f"{c} {self.col_def()}" for c in new) + ")"
        parts = []
        for c in new:
            pos = self.position(t)
            self._place(t, c, pos)
            parts.append(f"ADD COLUMN {c} {self.col_def()}{pos}")
        return f"ALTER TABLE {t.name} " + ", ".join(parts)

    def _place(self, t: _Table, c: str, pos: str) -> None:
        if pos == " FIRST":
            t.columns.insert(0, c)
        elif pos.startswith(" AFTER"):
            after = pos.split("`")[1]
            t.columns.insert(t.columns.index(after) + 1, c)
        else:
            t.columns.append(c)

    def modify(self, t: _Table) -> str:
        c = self.rng.choice(t.columns)
        if c in t.frozen:
            return self.add(t)
        pos = self.position(t, exclude=c)
        t.columns.remove(c)
        self._place(t, c, pos)
        d = "int NOT NULL" if c in t.pk else self.col_def()
        return f"ALTER TABLE {t.name} MODIFY {self.case(c)} {d}{pos}"

    def change(self, t: _Table) -> str:
        c = self.rng.choice(t.columns)
        if c in t.frozen:
            return self.add(t)
        new = c if self.rng.random() < 0.3 else self.fresh("c")
        pos = self.position(t, exclude=c)
        t.columns.remove(c)
        self._place(t, new, pos)
        t.pk = [new if k == c else k for k in t.pk]
        d = "int NOT NULL" if new in t.pk else self.col_def()
        return f"ALTER TABLE {t.name} CHANGE COLUMN `{self.case(c)}` `{new}` {d}{pos}"

    def rename_col(self, t: _Table) -> str:
        c = self.rng.choice(t.columns)
        if c in t.frozen:
            return self.add(t)
        new = self.fresh("c")
        t.columns[t.columns.index(c)] = new
        t.pk = [new if k == c else k for k in t.pk]
        return f"ALTER TABLE {t.name} RENAME COLUMN {self.case(c)} TO {new}"

    def drop_col(self, t: _Table) -> str:
        # MariaDB refuses to drop a key column, MySQL one a functional index depends on
        candidates = [c for c in t.columns if c not in t.pk and c not in t.frozen]
        if len(t.columns) < 2 or not candidates:
            return self.add(t)
        c = self.rng.choice(candidates)
        t.columns.remove(c)
        t.pk = [k for k in t.pk if k != c]
        kw = self.rng.choice(("DROP COLUMN", "DROP"))
        return f"ALTER TABLE {t.name} {kw} {self.case(c)}"

    def default(self, t: _Table) -> str:
        c = self.rng.choice(t.columns)
        return f"ALTER TABLE {t.name} ALTER COLUMN {c} DROP DEFAULT"

    def pk(self, t: _Table) -> str:
        if t.pk:
            t.pk = []
            return f"ALTER TABLE {t.name} DROP PRIMARY KEY"
        c = self.fresh("k")
        t.columns.insert(0, c)
        t.pk = [c]
        return f"ALTER TABLE {t.name} ADD COLUMN {c} int NOT NULL FIRST, ADD PRIMARY KEY ({c})"

    def rename_table(self, t: _Table) -> str:
        new = self.fresh("r")
        del self.tables[t.name]
        old, t.name = t.name, new
        self.tables[new] = t
        if self.rng.random() < 0.5:
            return f"ALTER TABLE {old} RENAME TO {new}"
        tmp = self.fresh("tmp")
        return f"RENAME TABLE {old} TO {tmp}, {tmp} TO {new}"

    def charset(self, t: _Table) -> str:
        cs = self.rng.choice(_CHARSETS)
        if self.rng.random() < 0.5:
            return f"ALTER TABLE {t.name} DEFAULT CHARACTER SET {cs}"
        return f"ALTER TABLE {t.name} CONVERT TO CHARACTER SET {cs}"

    def index(self, t: _Table) -> str:  # options and a unique key on a fresh column: no column change
        c = self.fresh("u")
        t.columns.append(c)
        return f"ALTER TABLE {t.name} ADD COLUMN {c} int, ADD UNIQUE KEY {c}_k ({c}), ENGINE=InnoDB"

    def truncate(self, t: _Table) -> str:
        return f"TRUNCATE TABLE {t.name}"

    def drop_table(self, t: _Table) -> str:
        del self.tables[t.name]
        return f"DROP TABLE IF EXISTS {t.name}"


def generate(seed: int, count: int, *, mysql: bool = False) -> list[str]:
    """``count`` valid DDL statements for an empty default database, reproducible from ``seed``
    (``mysql``: with MySQL 8/9-only forms)."""
    gen = _Gen(seed, mysql)
    return [gen.step() for _ in range(count)]
