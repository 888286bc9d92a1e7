"""A replica table's layout: its columns (the source table's current ones, typed as ``resolve``'s Parquet),
the ``binlog_*`` metadata columns after them, and the key a change is applied by.

The key is the table's PRIMARY KEY, else the first UNIQUE key whose columns are all NOT NULL (the server
treats it as the primary key), else none: a table without a key keeps one replica row per source row,
duplicates included, keyed by ``binlog_row_hash`` (a digest of the row's values) and ``binlog_copy`` (1..n
for n equal rows), so that deleting one of two equal rows leaves one.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from binlog_model.spark.typed import spark_type
from schema_tracker.model import ColumnSchema, TableSchema

__all__ = ["META", "ORDER_SHIFT", "TableLayout", "order_of", "position_order", "row_hash"]

#: a position's order number: the file's sequence number above, the offset below (offsets < 1 TiB)
ORDER_SHIFT = 40

# the metadata columns every replica table has after the source's columns
META: list[tuple[str, pa.DataType]] = [
    ("binlog_order", pa.int64()),        # position_order of the row's last change
    ("binlog_gtid", pa.string()),
    ("binlog_file", pa.string()),
    ("binlog_offset", pa.int64()),
    ("binlog_invalid", pa.list_(pa.string())),   # columns whose value the type cannot hold (then null)
]
# the key of a table without one
KEYLESS: list[tuple[str, pa.DataType]] = [("binlog_row_hash", pa.binary()), ("binlog_copy", pa.int32())]


def position_order(file: str, offset: int) -> int:
    """The total order number of a binlog position: ``seq << 40 | offset`` for ``name.seq`` files."""
    return _file_order(file) | offset


@functools.lru_cache(maxsize=256)
def _file_order(file: str) -> int:
    """``seq << 40`` of a file (asked for every event: a run reads a few files)."""
    from binlog_model.errors import ConfigError
    from binlog_model.position import file_sequence

    seq = file_sequence(file)
    if seq < 0:
        raise ConfigError(f"binlog file {file!r} has no sequence number: a replica needs numbered files")
    return seq << ORDER_SHIFT


def order_of(position: str) -> int:
    """``position_order`` of a ``FILE:OFFSET`` text."""
    file, _, offset = position.rpartition(":")
    return position_order(file, int(offset))


@dataclass(frozen=True)
class TableLayout:
    """One replica table as it is now: ``columns`` (the source columns ``SELECT *`` shows, in order, and an
    invisible key column), their Arrow types, the key columns (``()``: keyless)."""

    db: str
    table: str
    columns: tuple[ColumnSchema, ...]
    types: tuple[pa.DataType, ...]
    key: tuple[str, ...]

    @classmethod
    def of(cls, schema: TableSchema) -> TableLayout:
        key = schema.primary_key or schema.implied_primary_key()
        keyset = {k.lower() for k in key}
        columns = tuple(c for c in schema.columns
                        if not c.hidden and (not c.invisible or c.name.lower() in keyset))
        return cls(schema.db, schema.name, columns, tuple(spark_type(c)[1] for c in columns),
                   tuple(schema.column(k).name for k in key if schema.column(k) is not None))  # type: ignore[union-attr]

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def keyless(self) -> bool:
        return not self.key

    @property
    def key_names(self) -> list[str]:
        """The columns a change is matched by: the key, or the keyless pair."""
        return list(self.key) if self.key else [name for name, _ in KEYLESS]

    def arrow_schema(self) -> pa.Schema:
        fields = [pa.field(c.name, t, nullable=True) for c, t in zip(self.columns, self.types, strict=True)]
        fields += [pa.field(name, t) for name, t in META]
        if self.keyless:
            fields += [pa.field(name, t) for name, t in KEYLESS]
        return pa.schema(fields)

    def index(self) -> dict[str, int]:
        """Column name (lower case) → its position."""
        return {c.name.lower(): i for i, c in enumerate(self.columns)}

    def generated(self) -> dict[int, frozenset[int] | None]:
        """Generated column position → the positions of the columns its expression may read (None: it reads
        one the replica does not have). A server may leave generated columns out of a row image (MariaDB 11
        does, even with FULL images), and a dump leaves them out: their value is known only while these
        inputs do not change. Words of the expression are matched against the column names, so a function
        or a string literal named like a column only counts as one more input."""
        index = self.index()
        out: dict[int, frozenset[int] | None] = {}
        for i, column in enumerate(self.columns):
            if column.generated is None:
                continue
            words = {(quoted or bare).replace("``", "`").lower()
                     for quoted, bare in _WORDS.findall(column.generated)}
            inputs = {index[w] for w in words if w in index}
            quoted = {q.replace("``", "`").lower() for q, _ in _WORDS.findall(column.generated) if q}
            out[i] = None if quoted - index.keys() else frozenset(inputs)
        return out

    def row_hash(self, values: list[Any]) -> bytes:
        """The digest a keyless row is stored under (``row_hash``), over its columns that are not generated:
        they follow from the others, and row images may leave them out."""
        generated = {i for i, c in enumerate(self.columns) if c.generated is not None}
        return row_hash([v for i, v in enumerate(values) if i not in generated] if generated else values)


# a backquoted name, or a bare word
_WORDS = re.compile(r"`((?:[^`]|``)+)`|\b([A-Za-z_][A-Za-z0-9_$]*)\b")


def row_hash(values: list[Any]) -> bytes:
    """The digest a keyless row is stored under: equal rows (as the typed values compare) share it."""
    digest = hashlib.blake2b(digest_size=16)
    for value in values:
        digest.update(repr(value).encode("utf-8", "surrogatepass"))
        digest.update(b"\x1f")
    return digest.digest()
