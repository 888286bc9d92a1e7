"""A seeded random SQL workload for differential round-trip tests (MariaDB / MySQL dialect).

Strategy: ``Workload(seed)`` owns a ``random.Random(seed)`` and a model of the schema it created (tables,
columns and their types), never of the rows: DML picks keys from a small range so statements hit existing
rows often, and a statement the server rejects for a duplicate key is allowed (``Step.tolerate``), which keeps
the generator independent of server state and the same seed always yields the same SQL. DDL is generated
only from the tracked schema and must succeed.

Three tables per workload: ``t_pk`` (``id`` primary key), ``t_ck`` (composite key ``(id, k)``) and
``t_heap`` (no key, duplicates welcome). Non-key columns are nullable and drawn from ``COLUMN_TYPES``
(every family, edge values included: integer bounds, DECIMAL(65,30), 4-byte UTF-8, binary bytes, zero-ish
and extreme dates/times, BIT(64), JSON). Statements: multi-row INSERT (some IGNORE), REPLACE, UPDATE of
values and of keys, DELETE, multi-table UPDATE and DELETE, and ~2% DDL: ADD (FIRST/AFTER), DROP, RENAME,
MODIFY (widening: the server converts existing values losslessly) and reorder of columns, and now and then
RENAME TABLE or TRUNCATE. DML is grouped
into units: autocommit statements or BEGIN…COMMIT/ROLLBACK transactions.

FLOAT values have at most 6 significant digits and are dyadic (k/4): the server prints FLOAT with 6
digits while the binlog carries the exact single-precision value, so only such values compare exactly.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

__all__ = ["COLUMN_TYPES", "ColumnType", "Step", "Workload", "sql_literal"]

DUP_ENTRY = 1062   # ER_DUP_ENTRY: a random key collided; the statement changed nothing
ID_MAX = 120       # keys are drawn from 1..ID_MAX so statements keep finding rows


def sql_literal(value: object) -> str:
    """A SQL literal for ``value`` (default sql_mode: backslash escapes on)."""
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return f"X'{value.hex()}'"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, Decimal)):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    text = str(value).replace("\\", "\\\\").replace("'", "\\'").replace("\0", "\\0")
    return f"'{text}'"


_CHARS = ("a", "b", "Z", "0", " ", "'", '"', "\\", "%", "_", "\n", "\t", "é", "ж", "中", "😀", "🐬", "𝄞")


def _text(rng: random.Random, limit: int) -> str:
    if rng.random() < 0.1:
        return ""
    return "".join(rng.choice(_CHARS) for _ in range(rng.randint(1, limit)))


def _bytes(rng: random.Random, limit: int) -> bytes:
    edge = (b"", b"\x00", b"\xff" * 4, b"\x00\x01\x00", bytes(range(32))[:limit])
    if rng.random() < 0.2:
        return rng.choice(edge)
    return bytes(rng.randrange(256) for _ in range(rng.randint(1, limit)))


def _int(lo: int, hi: int) -> Callable[[random.Random], object]:
    def gen(rng: random.Random) -> object:
        edges = (lo, hi, lo + 1, hi - 1, *((0,) if lo <= 0 <= hi else ()))
        return rng.choice(edges) if rng.random() < 0.3 else rng.randint(lo, hi)
    return gen


def _decimal(digits: int, scale: int) -> Callable[[random.Random], object]:
    top = 10 ** (digits - scale) - 1

    def gen(rng: random.Random) -> object:
        if rng.random() < 0.2:
            return rng.choice((Decimal(0), Decimal(f"{top}.{'9' * scale}"), Decimal(f"-{top}.{'9' * scale}"),
                               Decimal(f"0.{'0' * (scale - 1)}1")))
        whole = rng.randint(-top, top)
        frac = rng.randrange(10 ** scale)
        sign = "-" if whole < 0 or (whole == 0 and rng.random() < 0.3) else ""
        return Decimal(f"{sign}{abs(whole)}.{frac:0{scale}d}")
    return gen


def _float(rng: random.Random) -> object:
    return rng.choice((0.0, -0.5, 1.0)) if rng.random() < 0.2 else rng.randint(-3999, 3999) / 4


def _double(rng: random.Random) -> object:
    edge = (0.0, 1.7976931348623157e308, -1.7976931348623157e308, 2.2250738585072014e-308, 5e-324, 0.1,
            -1e-10)
    return rng.choice(edge) if rng.random() < 0.3 else rng.uniform(-1e6, 1e6)


def _date(rng: random.Random) -> object:
    if rng.random() < 0.2:
        return rng.choice(("1000-01-01", "9999-12-31", "1970-01-01", "2000-02-29"))
    return f"{rng.randint(1000, 9999):04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _datetime(rng: random.Random) -> object:
    if rng.random() < 0.2:
        return rng.choice(("1000-01-01 00:00:00.000000", "9999-12-31 23:59:59.999999"))
    return (f"{_date(rng)} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
            f".{rng.randrange(1_000_000):06d}")


def _timestamp(rng: random.Random) -> object:
    if rng.random() < 0.2:
        return rng.choice(("1970-01-01 00:00:01.000000", "2038-01-19 03:14:07.999999"))
    return (f"{rng.randint(1971, 2037)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} "
            f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
            f".{rng.randrange(10**6):06d}")


def _time(rng: random.Random) -> object:
    if rng.random() < 0.2:
        return rng.choice(("-838:59:59.000000", "838:59:59.000000", "00:00:00.000000", "-00:00:00.000001"))
    hours = rng.randint(0, 837)
    sign = "-" if rng.random() < 0.3 else ""
    return f"{sign}{hours}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randrange(10**6):06d}"


def _json(rng: random.Random) -> object:
    return rng.choice(('{"a": 1, "b": [true, null, "😀"]}', "[]", '"text"', "1.5", "null",
                       '{"nested": {"x": [1, 2, {"y": "ж"}]}}', "-0", '{"k": "quote \\" inside"}'))


@dataclass(frozen=True, slots=True)
class ColumnType:
    """A column type the workload uses: its SQL, a value generator and the type MODIFY may widen it to."""

    name: str
    sql: str
    gen: Callable[[random.Random], object]
    widen: str | None = None


COLUMN_TYPES: dict[str, ColumnType] = {t.name: t for t in (
    ColumnType("tinyint", "TINYINT", _int(-128, 127), "smallint"),
    ColumnType("smallint", "SMALLINT", _int(-32768, 32767), "int"),
    ColumnType("mediumint_u", "MEDIUMINT UNSIGNED", _int(0, 16777215), "int_u"),
    ColumnType("int", "INT", _int(-(2**31), 2**31 - 1), "bigint"),
    ColumnType("int_u", "INT UNSIGNED", _int(0, 2**32 - 1), "bigint_u"),
    ColumnType("bigint", "BIGINT", _int(-(2**63), 2**63 - 1)),
    ColumnType("bigint_u", "BIGINT UNSIGNED", _int(0, 2**64 - 1)),
    ColumnType("decimal", "DECIMAL(20,6)", _decimal(20, 6), "decimal_wide"),
    ColumnType("decimal_wide", "DECIMAL(65,30)", _decimal(65, 30)),
    ColumnType("float", "FLOAT", _float, "double"),
    ColumnType("double", "DOUBLE", _double),
    ColumnType("varchar", "VARCHAR(40)", lambda rng: _text(rng, 40), "text"),
    ColumnType("text", "TEXT", lambda rng: _text(rng, 300)),
    ColumnType("varbinary", "VARBINARY(32)", lambda rng: _bytes(rng, 32), "blob"),
    ColumnType("blob", "BLOB", lambda rng: _bytes(rng, 300)),
    ColumnType("date", "DATE", _date),
    ColumnType("datetime", "DATETIME(6)", _datetime),
    ColumnType("timestamp", "TIMESTAMP(6) NULL", _timestamp),
    ColumnType("time", "TIME(6)", _time),
    ColumnType("year", "YEAR", _int(1901, 2155)),
    ColumnType("enum", "ENUM('a','b','c d','é')", lambda rng: rng.choice(("a", "b", "c d", "é"))),
    ColumnType("set", "SET('x','y','z')", lambda rng: rng.choice(("", "x", "y,z", "x,y,z", "z"))),
    ColumnType("bit1", "BIT(1)", _int(0, 1)),
    ColumnType("bit64", "BIT(64)", _int(0, 2**64 - 1)),
    ColumnType("json", "JSON", _json),
)}


@dataclass(frozen=True, slots=True)
class Step:
    """One SQL statement, with the server error codes that are an acceptable outcome of it."""

    sql: str
    tolerate: tuple[int, ...] = ()
    ddl: bool = False

    def run(self, cursor: Any) -> bool:
        """Execute on a DB-API cursor: True when it ran, False when the server refused it with a tolerated
        error code; any other error is raised."""
        try:
            cursor.execute(self.sql)
        except Exception as err:
            if getattr(err, "args", (None,))[0] not in self.tolerate:
                raise
            return False
        return True


@dataclass(slots=True)
class _Table:
    name: str
    key: tuple[str, ...]                                  # () for the heap table
    columns: list[tuple[str, str]] = field(default_factory=list)   # non-key (name, type), in table order


class Workload:
    """Deterministic random statements for one seed; ``setup()`` first, then ``units()``."""

    def __init__(self, seed: int, *, replace: bool = True, json_partial: bool = False) -> None:
        self.seed = seed
        self.replace = replace   # REPLACE mixes WRITE and UPDATE rows of one table in one statement
        # JSON_SET/JSON_REPLACE/JSON_REMOVE updates of the keyed tables' JSON columns, each under a FULL or
        # a MINIMAL row image (MySQL logs them as diffs with binlog_row_value_options=PARTIAL_JSON).
        self.json_partial = json_partial
        self.rng = random.Random(seed)
        self._serial = 0
        self.tables = [_Table("t_pk", ("id",)), _Table("t_ck", ("id", "k")), _Table("t_heap", ())]
        for table in self.tables:
            for _ in range(self.rng.randint(3, 6)):
                table.columns.append((self._new_name(), self.rng.choice(list(COLUMN_TYPES))))
            if json_partial and table.key:
                table.columns.append((self._new_name(), "json"))

    def _new_name(self) -> str:
        self._serial += 1
        return f"c{self._serial}"

    def setup(self) -> list[str]:
        """CREATE TABLE statements for the three tables (the replica starts from empty tables)."""
        out = []
        for t in self.tables:
            keys = "id INT NOT NULL" + (", k TINYINT NOT NULL" if "k" in t.key else "")
            cols = "".join(f", {n} {COLUMN_TYPES[ty].sql}" for n, ty in t.columns)
            pk = f", PRIMARY KEY ({', '.join(t.key)})" if t.key else ""
            out.append(f"CREATE TABLE {t.name} ({keys}{cols}{pk}) ENGINE=InnoDB")
        return out

    # -- DML ---------------------------------------------------------------------------------------------

    def _value(self, type_name: str) -> str:
        if self.rng.random() < 0.15:
            return "NULL"
        return sql_literal(COLUMN_TYPES[type_name].gen(self.rng))

    def _row(self, t: _Table) -> str:
        keys = [str(self.rng.randint(1, ID_MAX))] + ([str(self.rng.randint(0, 3))] if "k" in t.key else [])
        return "(" + ", ".join(keys + [self._value(ty) for _, ty in t.columns]) + ")"

    def _names(self, t: _Table) -> str:
        return ", ".join(["id", *(["k"] if "k" in t.key else []), *(n for n, _ in t.columns)])

    def _where(self, alias: str = "") -> str:
        lo = self.rng.randint(1, ID_MAX)
        if self.rng.random() < 0.5:
            ids = sorted({self.rng.randint(1, ID_MAX) for _ in range(self.rng.randint(1, 4))})
            return f"{alias}id IN ({', '.join(map(str, ids))})"
        return f"{alias}id BETWEEN {lo} AND {lo + self.rng.randint(0, 12)}"

    def _sets(self, t: _Table, alias: str = "") -> str:
        cols = self.rng.sample(t.columns, k=min(len(t.columns), self.rng.randint(1, 3)))
        return ", ".join(f"{alias}{n} = {self._value(ty)}" for n, ty in cols)

    def _dml(self) -> Step:
        t = self.rng.choice(self.tables)
        r = self.rng.random()
        if r < 0.34:
            rows = ", ".join(self._row(t) for _ in range(self.rng.randint(1, 5)))
            verb = "INSERT IGNORE" if t.key and self.rng.random() < 0.3 else "INSERT"
            if t.key and self.rng.random() < 0.1 and self.replace:
                verb = "REPLACE"
            return Step(f"{verb} INTO {t.name} ({self._names(t)}) VALUES {rows}", (DUP_ENTRY,))
        if r < 0.60:
            limit = f" LIMIT {self.rng.randint(1, 3)}" if not t.key and self.rng.random() < 0.5 else ""
            return Step(f"UPDATE {t.name} SET {self._sets(t)} WHERE {self._where()}{limit}")
        if r < 0.70 and t.key:   # primary-key change, ordered so a shift does not collide with itself
            if "k" in t.key:
                return Step(f"UPDATE {t.name} SET k = {self.rng.randint(0, 5)} WHERE {self._where()}",
                            (DUP_ENTRY,))
            delta = self.rng.choice((1, -1, 7, ID_MAX))
            order = "DESC" if delta > 0 else "ASC"
            return Step(f"UPDATE {t.name} SET id = id + {delta} WHERE {self._where()} ORDER BY id {order}",
                        (DUP_ENTRY,))
        if r < 0.84:
            limit = f" LIMIT {self.rng.randint(1, 2)}" if not t.key and self.rng.random() < 0.5 else ""
            return Step(f"DELETE FROM {t.name} WHERE {self._where()}{limit}")
        a, b = self.rng.sample(self.tables, 2)
        if r < 0.94:
            return Step(f"UPDATE {a.name} a JOIN {b.name} b ON a.id = b.id SET {self._sets(a, 'a.')}, "
                        f"{self._sets(b, 'b.')} WHERE {self._where('a.')}")
        return Step(f"DELETE a, b FROM {a.name} a JOIN {b.name} b ON a.id = b.id WHERE {self._where('a.')}")

    # -- DDL ---------------------------------------------------------------------------------------------

    def _place(self, t: _Table, name: str) -> str:
        r = self.rng.random()
        if r < 0.25:
            return " FIRST"
        others = [n for n, _ in t.columns if n != name] + ["id"]
        if r < 0.6:
            return f" AFTER {self.rng.choice(others)}"
        return ""

    def _move(self, t: _Table, name: str, ty: str, place: str) -> None:
        """Track a column's new position (key columns are not tracked; only relative order matters here)."""
        t.columns = [c for c in t.columns if c[0] != name]
        if place == " FIRST":
            t.columns.insert(0, (name, ty))
        elif place.startswith(" AFTER "):
            after = place[len(" AFTER "):]
            index = 0 if after in ("id", "k") else [n for n, _ in t.columns].index(after) + 1
            t.columns.insert(index, (name, ty))
        else:
            t.columns.append((name, ty))

    def _ddl(self) -> Step:
        t = self.rng.choice(self.tables)
        if self.rng.random() < 0.08:   # table-level: rename (the tracked name follows) or truncate
            if self.rng.random() < 0.7:
                old, t.name = t.name, f"{t.name.split('__')[0]}__{self._new_name()}"
                return Step(f"RENAME TABLE {old} TO {t.name}", ddl=True)
            return Step(f"TRUNCATE TABLE {t.name}", ddl=True)
        r = self.rng.random()
        if r < 0.3 or len(t.columns) < 2:
            name, ty = self._new_name(), self.rng.choice(list(COLUMN_TYPES))
            place = self._place(t, name)
            sql = f"ALTER TABLE {t.name} ADD COLUMN {name} {COLUMN_TYPES[ty].sql}{place}"
            if place:
                self._move(t, name, ty, place)
            else:
                t.columns.append((name, ty))
            return Step(sql, ddl=True)
        name, ty = self.rng.choice(t.columns)
        if r < 0.45:
            t.columns = [c for c in t.columns if c[0] != name]
            return Step(f"ALTER TABLE {t.name} DROP COLUMN {name}", ddl=True)
        if r < 0.65 and ty != "json":   # MariaDB cannot rename a JSON column: its json_valid CHECK names it
            new = self._new_name()
            t.columns = [(new if n == name else n, y) for n, y in t.columns]
            return Step(f"ALTER TABLE {t.name} RENAME COLUMN {name} TO {new}", ddl=True)
        widened = COLUMN_TYPES[ty].widen if r < 0.85 else None
        new_ty = widened or ty
        place = self._place(t, name)
        if not place and new_ty == ty:
            place = " FIRST"
        t.columns = [(n, new_ty if n == name else y) for n, y in t.columns]
        if place:
            self._move(t, name, new_ty, place)
        if r >= 0.75 and widened:   # CHANGE: rename and retype in one
            new = self._new_name()
            t.columns = [(new if n == name else n, y) for n, y in t.columns]
            return Step(f"ALTER TABLE {t.name} CHANGE COLUMN {name} {new} {COLUMN_TYPES[new_ty].sql}{place}",
                        ddl=True)
        return Step(f"ALTER TABLE {t.name} MODIFY COLUMN {name} {COLUMN_TYPES[new_ty].sql}{place}", ddl=True)

    # -- partial JSON updates -----------------------------------------------------------------------------

    _JSON_PATHS = ("$.a", "$.b[1]", "$.b[last]", "$.b[7]", "$.nested.x[2].y", "$.nested.x[0]", "$.k", "$.new",
                   "$[0]", "$[3]", '$."ü"')
    _JSON_VALUES = ("1", "'ü'", "NULL", "JSON_ARRAY(1, 'x')", "JSON_OBJECT('z', 'w')", "2.5", "TRUE", "-7")

    def _json_partial_unit(self) -> list[Step]:
        keyed = [(t, n) for t in self.tables if t.key for n, ty in t.columns if ty == "json"]
        if not keyed:
            return []
        t, col = self.rng.choice(keyed)
        func = self.rng.choice(("JSON_SET", "JSON_REPLACE", "JSON_REMOVE"))
        if func == "JSON_REMOVE":
            args = f"'{self.rng.choice(self._JSON_PATHS)}'"
        else:
            args = ", ".join(f"'{self.rng.choice(self._JSON_PATHS)}', {self.rng.choice(self._JSON_VALUES)}"
                             for _ in range(self.rng.randint(1, 3)))
        update = Step(f"UPDATE {t.name} SET {col} = {func}({col}, {args}) WHERE {self._where()}")
        if self.rng.random() < 0.5:
            return [update]
        return [Step("SET SESSION binlog_row_image = 'MINIMAL'"), update,
                Step("SET SESSION binlog_row_image = 'FULL'")]

    # -- units ------------------------------------------------------------------------------------------

    def units(self) -> Iterator[list[Step]]:
        """Endless units: one DDL, one autocommit DML, or a BEGIN…COMMIT/ROLLBACK transaction of DML."""
        while True:
            if self.json_partial and self.rng.random() < 0.1:
                unit = self._json_partial_unit()
                if unit:
                    yield unit
                    continue
            r = self.rng.random()
            if r < 0.02:
                yield [self._ddl()]
            elif r < 0.75:
                yield [self._dml()]
            else:
                body = [self._dml() for _ in range(self.rng.randint(2, 6))]
                end = "ROLLBACK" if self.rng.random() < 0.15 else "COMMIT"
                yield [Step("BEGIN"), *body, Step(end)]
