"""``apply --initial DUMP.sql``: the replica's first rows from a ``mysqldump``/``mariadb-dump`` file.

Strategy: the dump is read as a stream of statements, line by line. A dump escapes every newline inside a
value and ends each statement at the end of a line, so memory holds one statement (an INSERT is bounded by
the dump's ``--net-buffer-length``), never the dump. The position comment that ``--source-data`` /
``--master-data`` writes is where the binlog continues, and its GTID line (``GTID_PURGED`` on MySQL,
``gtid_slave_pos`` on MariaDB) is recorded with it. Every other statement but the INSERTs goes through the
schema tracker, as a binlog's DDL does, so the catalog at the end is the schema at that position. Each
INSERT's SQL literals are read into the values a server's ``SELECT`` gives (``dump_value``), then into the
replica's typed columns by ``initial.server_value``, chunk by chunk; a table's rows go to ``InitialTable``,
as ``--initial live``'s do.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal, InvalidOperation
from typing import Any

from binlog_model.errors import ConfigError, SchemaError
from binlog_model.replica.initial import NOT_GIVEN, InitialSnapshot, InitialTable
from binlog_model.replica.layout import TableLayout, position_order
from binlog_model.sinks.delta import DeltaReplica
from schema_tracker.model import Catalog, ColumnSchema, ServerSession

__all__ = ["DumpError", "dump_value", "load_initial_dump"]

_SYSTEM = {"mysql", "information_schema", "performance_schema", "sys"}


class DumpError(ConfigError):
    """A dump file that cannot be used as the replica's initial data; the message names the file and line."""


# --- the statements -----------------------------------------------------------------------------------

_POSITION = re.compile(r"(?:MASTER|SOURCE)_LOG_FILE\s*=\s*'([^']+)'\s*,\s*"
                       r"(?:MASTER|SOURCE)_LOG_POS\s*=\s*(\d+)", re.I)
_GTID_PURGED = re.compile(r"GTID_PURGED\s*=\s*(?:/\*!\d+\s*'\+'\s*\*/\s*)?'([^']*)'", re.I)
_GTID_SLAVE_POS = re.compile(r"gtid_slave_pos\s*=\s*'([^']*)'", re.I)
_SET_NAMES = re.compile(r"^\s*(?:/\*!\d+\s*)?SET\s+NAMES\s+'?(\w+)", re.I)
# statements a dump writes that change no schema (the tracker, which reads binlogs, does not know LOCK TABLES)
_NO_SCHEMA = re.compile(r"^\s*(?:/\*!\d+\s*)?(?:LOCK\s+TABLES|UNLOCK\s+TABLES|SET\s)", re.I)
_TIME_ZONE = re.compile(r"^\s*(?:/\*!\d+\s*)?SET\s+TIME_ZONE\s*=\s*'([^']*)'", re.I)
_INSERT = re.compile(rb"\s*(?:INSERT(?:\s+IGNORE)?|REPLACE)\s+INTO\s+`((?:[^`]|``)+)`\s*"
                     rb"(?:\(((?:\s*`(?:[^`]|``)+`\s*,?)+)\)\s*)?VALUES\s*", re.I)
# a dump of a replica's source position (--dump-replica / --dump-slave) is not a position in this server's
# binlogs
_OTHER_SERVER = re.compile(r"the (?:master of this slave|source of this replica)", re.I)


def _statements(lines: Iterable[bytes]) -> Iterator[tuple[int, bool, bytes]]:
    """``(line number, is a comment, text)``: comment lines between statements, and statements without their
    delimiter (``DELIMITER`` lines, which wrap triggers and routines, are followed)."""
    delimiter = b";"
    pending: list[bytes] = []
    start = 0
    for number, line in enumerate(lines, start=1):
        text = line.rstrip(b"\r\n")
        if not pending:
            head = text.lstrip()
            if not head:
                continue
            if head.startswith(b"--"):
                yield number, True, head
                continue
            if head.startswith(b"/*M!999999"):     # MariaDB's sandbox line: a client command, no statement
                continue
            if head[:10].upper() == b"DELIMITER ":
                delimiter = head[10:].strip()
                continue
            start = number
        pending.append(text)
        if text.rstrip().endswith(delimiter):
            statement = b"\n".join(pending).rstrip()
            pending = []
            yield start, False, statement[:-len(delimiter)]
    if pending:
        yield start, False, b"\n".join(pending)


# --- the values ---------------------------------------------------------------------------------------

# One SQL literal as a dump writes it, and the separator after it: a quoted string (with an introducer such
# as _binary), hex (--hex-blob), a bit literal, NULL or a number.
_VALUE = re.compile(rb"""\s*(?:
      (?:_\w+\s*)?'((?:[^'\\]+|\\.|'')*)'
    | 0x([0-9A-Fa-f]*) | [xX]'([0-9A-Fa-f]*)'
    | [bB]'([01]*)'
    | (NULL)
    | ([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)
    )\s*([,)])""", re.X | re.S)
_ROW_START = re.compile(rb"\s*\(")
_ROW_NEXT = re.compile(rb"\s*(,?)")
_ESCAPE = re.compile(rb"\\(.)|''", re.S)
# The server's string escapes; \% and \_ keep their backslash, any other escaped byte stands for itself.
_ESCAPES = {b"0": b"\0", b"b": b"\b", b"n": b"\n", b"r": b"\r", b"t": b"\t", b"Z": b"\x1a", b"%": b"\\%",
            b"_": b"\\_"}


def _unescape(raw: bytes) -> bytes:
    if b"\\" not in raw and b"''" not in raw:
        return raw
    return _ESCAPE.sub(lambda m: b"'" if m.group(1) is None else _ESCAPES.get(m.group(1), m.group(1)), raw)


def _literal(m: re.Match[bytes]) -> Any:
    """A literal: bytes for a string or hex, str for a number, int for a bit literal, None for NULL."""
    text, hex1, hex2, bits, _null, number, _sep = m.groups()
    if text is not None:
        return _unescape(text)
    if hex1 is not None or hex2 is not None:
        return bytes.fromhex((hex1 if hex1 is not None else hex2).decode("ascii"))
    if bits is not None:
        return int(bits, 2) if bits else 0
    if number is not None:
        return number.decode("ascii")
    return None


def _rows(statement: bytes, start: int) -> Iterator[list[Any]]:
    """The rows of an INSERT's VALUES list, from ``start``."""
    pos, end = start, len(statement)
    while pos < end:
        opened = _ROW_START.match(statement, pos)
        if opened is None:
            raise ValueError(f"a row should start at byte {pos}")
        pos = opened.end()
        row: list[Any] = []
        while True:
            m = _VALUE.match(statement, pos)
            if m is None:
                raise ValueError(f"cannot read the value at byte {pos}: {statement[pos:pos + 40]!r}")
            row.append(_literal(m))
            pos = m.end()
            if m.group(7) == b")":
                break
        yield row
        after = _ROW_NEXT.match(statement, pos)
        assert after is not None        # \s*,? always matches
        pos = after.end()
        if not after.group(1) and pos < end:
            raise ValueError(f"a ',' should follow the row that ends at byte {pos}")


_TIME = re.compile(r"(-?)(\d+):(\d\d):(\d\d)(?:\.(\d{1,6}))?$")
_INTEGERS = {"tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year"}


def dump_value(value: Any, column: ColumnSchema, codec: str) -> Any:
    """A literal read from a dump (``_literal``) → the value pymysql gives for a ``SELECT`` of that column
    (``initial.server_value``'s input). ``codec``: the Python codec of the dump's ``SET NAMES``. Text it
    cannot read as the column's type is left as text, which ``server_value`` turns into an invalid value
    (a zero date, as a server's ``SELECT`` gives it)."""
    if value is None:
        return None
    kind = column.data_type
    text = value.decode("ascii", "replace") if isinstance(value, bytes) else value
    if kind in _INTEGERS:
        return int(text) if isinstance(text, str) else text
    if kind == "decimal":
        try:
            return Decimal(text)
        except InvalidOperation:
            return text
    if kind in ("float", "double", "real"):
        return float(text)
    if kind == "bit":
        return value
    if kind == "date":
        try:
            return datetime.date.fromisoformat(text)
        except ValueError:
            return text
    if kind in ("datetime", "timestamp"):
        try:
            return datetime.datetime.fromisoformat(text)
        except ValueError:
            return text
    if kind == "time":
        m = _TIME.match(text)
        if m is None:
            return text
        sign, hours, minutes, seconds, fraction = m.groups()
        delta = datetime.timedelta(hours=int(hours), minutes=int(minutes), seconds=int(seconds),
                                   microseconds=int((fraction or "0").ljust(6, "0")))
        return -delta if sign else delta
    if isinstance(value, bytes) and (kind in ("enum", "set", "json")
                                     or column.charset not in (None, "binary")):
        return value.decode(codec)
    return value


# --- the load -----------------------------------------------------------------------------------------

# The dump's connection character set: every text value is written in it. A binary dump
# (--default-character-set=binary) writes each column in its own, which is not read: it is refused.
_CODECS = {"utf8mb4": "utf-8", "utf8mb3": "utf-8", "utf8": "utf-8", "latin1": "cp1252", "ascii": "ascii"}


class _Load:
    """One dump's statements, in order, into the catalog and the replica."""

    def __init__(self, name: str, replica: DeltaReplica, select: Callable[[str, str], bool] | None,
                 chunk: int, lenient: bool) -> None:
        self.name, self.replica, self.select, self.chunk, self.lenient = name, replica, select, chunk, lenient
        self.catalog = Catalog()
        self.session = ServerSession("")
        self.db: str | None = None
        self.file: str | None = None
        self.offset = 0
        self.gtids = ""
        self.codec = "utf-8"
        self.utc = False
        self.tables: dict[tuple[str, str], InitialTable] = {}
        self.pending: tuple[InitialTable, list[list[Any]], list[str] | None] | None = None
        self.rows = 0
        self.line = 0

    def fail(self, what: str) -> DumpError:
        return DumpError(f"{self.name} line {self.line}: {what}")

    def comment(self, text: str) -> None:
        if text.startswith("-- Server version"):
            self.session = ServerSession(text.split(None, 3)[-1].strip())
        elif _OTHER_SERVER.search(text):
            raise self.fail("the dump's position is its source server's (--dump-replica / --dump-slave), "
                            "not a position in this server's binlogs: dump with --source-data=2 "
                            "(--master-data=2) instead")
        else:
            self.settings(text)

    def settings(self, text: str) -> None:
        """The position, the GTIDs, the character set and the time zone, in comments or statements."""
        if (m := _POSITION.search(text)) and self.file is None:
            self.file, self.offset = m.group(1), int(m.group(2))
        elif m := _GTID_PURGED.search(text) or _GTID_SLAVE_POS.search(text):
            self.gtids = "".join(m.group(1).split())
        elif m := _SET_NAMES.match(text):
            charset = m.group(1).lower()
            if charset not in _CODECS:
                raise self.fail(f"SET NAMES {charset}: dumps in utf8mb4, utf8mb3, latin1 or ascii are read "
                                "(dump again with --default-character-set=utf8mb4, mysqldump's default)")
            self.codec = _CODECS[charset]
        elif m := _TIME_ZONE.match(text):
            self.utc = m.group(1) in ("+00:00", "UTC")

    def statement(self, raw: bytes) -> None:
        insert = _INSERT.match(raw)
        if insert is not None:
            self.insert(raw, insert)
            return
        from schema_tracker import ddl

        try:
            sql = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise self.fail(f"a statement that is not UTF-8 text ({err})") from None
        self.settings(sql)
        if _NO_SCHEMA.match(sql):
            return
        used = ddl.parse_use(sql)
        if used is not None:
            self.db = used
            return
        self.flush()
        try:
            self.catalog, _ = ddl.apply(self.catalog, sql, self.db, lenient=self.lenient,
                                        session=self.session)
        except SchemaError as err:
            raise self.fail(str(err)) from None

    def insert(self, raw: bytes, m: re.Match[bytes]) -> None:
        if self.file is None:
            raise self.fail("rows come before any binlog position: make the dump with --single-transaction "
                            "--source-data=2 (mariadb-dump: --master-data=2), so it says where the binlog "
                            "continues")
        name = m.group(1).decode("utf-8").replace("``", "`")
        if self.db is None:
            raise self.fail(f"rows of `{name}` before any USE statement: dump with --databases")
        if self.db.lower() in _SYSTEM:
            return      # never replicated (and MySQL dumps the rows of some without their CREATE TABLE)
        table = self.table(self.db, name)
        if table is None:
            return
        columns = None
        if m.group(2) is not None:
            listed = m.group(2).decode("utf-8")
            columns = [c.replace("``", "`") for c in re.findall(r"`((?:[^`]|``)+)`", listed)]
        if self.pending is not None and (self.pending[0] is not table or self.pending[2] != columns):
            self.flush()
        if self.pending is None:
            self.pending = (table, [], columns)
        try:
            for row in _rows(raw, m.end()):
                self.pending[1].append(row)
                if len(self.pending[1]) >= self.chunk:
                    self.flush()
                    self.pending = (table, [], columns)
        except ValueError as err:
            raise self.fail(f"INSERT INTO `{name}`: {err}") from None

    def table(self, db: str, name: str) -> InitialTable | None:
        """The replica table of ``db.name`` (None: not chosen)."""
        schema = self.catalog.table(db, name)
        if schema is None:
            raise self.fail(f"rows of `{db}`.`{name}`, a table the dump never created")
        key = (schema.db, schema.name)
        if key not in self.tables:
            if schema.db.lower() in _SYSTEM or (self.select is not None and not self.select(*key)):
                return None
            assert self.file is not None
            at = f"{self.file}:{self.offset}"
            self.tables[key] = InitialTable(self.replica, TableLayout.of(schema), at, self.gtids)
        return self.tables[key]

    def flush(self) -> None:
        if self.pending is None:
            return
        table, rows, names = self.pending
        self.pending = None
        if not rows:
            return
        layout = table.layout
        where = {c.name.lower(): i for i, c in enumerate(layout.columns)}
        if names is None:
            if len(rows[0]) != len(layout.columns):
                raise self.fail(f"INSERT INTO `{layout.table}` has {len(rows[0])} values a row, the table "
                                f"{len(layout.columns)} columns")
            slots = list(range(len(layout.columns)))
        else:
            unknown = [n for n in names if n.lower() not in where]
            if unknown:
                raise self.fail(f"INSERT INTO `{layout.table}` names columns the table lacks: {unknown}")
            slots = [where[n.lower()] for n in names]
        if not self.utc and any(c.data_type == "timestamp" for c in layout.columns):
            raise self.fail(f"`{layout.table}` has TIMESTAMP columns but the dump's values are not in UTC "
                            "(it was made with --skip-tz-utc): dump again without it")
        converted: list[tuple[Any, ...]] = []
        for row in rows:
            if len(row) != len(slots):
                raise self.fail(f"a row of `{layout.table}` has {len(row)} values, not {len(slots)}")
            values: list[Any] = [NOT_GIVEN] * len(layout.columns)
            for slot, value in zip(slots, row, strict=True):
                values[slot] = dump_value(value, layout.columns[slot], self.codec)
            converted.append(tuple(values))
        table.write(converted)
        self.rows += len(rows)


def load_initial_dump(lines: Iterable[bytes], name: str, replica: DeltaReplica,
                      select: Callable[[str, str], bool] | None, *, chunk: int = 50_000, lenient: bool = False
                      ) -> InitialSnapshot:
    """Read a ``mysqldump``/``mariadb-dump --single-transaction --source-data=2`` file (its lines, as bytes)
    into the replica: each chosen table's rows, at the dump's binlog position. Returns the position, GTIDs
    and catalog the binlog continues from. Raises ``DumpError`` naming the line for a dump without a
    position, rows it cannot read, or TIMESTAMP values not in UTC; the tracker's ``SchemaError`` for DDL
    it cannot follow (unless ``lenient``)."""
    load = _Load(name, replica, select, chunk, lenient)
    for number, comment, raw in _statements(lines):
        load.line = number
        if comment:
            load.comment(raw.decode("utf-8", "replace"))
        else:
            load.statement(raw)
    load.flush()
    if load.file is None:
        raise DumpError(f"{name} has no binlog position: make the dump with --single-transaction "
                        "--source-data=2 (mariadb-dump: --master-data=2)")
    position_order(load.file, load.offset)        # a position in numbered binlog files
    taken = InitialSnapshot(load.file, load.offset, load.gtids, load.catalog, rows=load.rows,
                            server_version=load.session.server_version)
    for schema in sorted(load.catalog.tables.values(), key=lambda t: (t.db, t.name)):
        table = load.table(schema.db, schema.name)
        if table is not None:
            table.finish()
            taken.tables += 1
    return taken
