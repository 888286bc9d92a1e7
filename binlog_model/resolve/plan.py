"""Row plans: for one TABLE_MAP under one schema version, every column described as plain data.

A ``RowPlan`` is built once per TABLE_MAP layout and read by both row builders: the pure-Python reference
(``resolve.rows``) and the compiled one (``binlog_model._speedups``), which cannot call Python closures. So
everything a builder needs to turn one logged value into a ``Value`` is a field here: the binlog codec (type
code and metadata), what the model makes of it (``PlanKind``), signedness, charset, ENUM/SET labels, padding,
and the column's name, key position and visibility. Nothing here holds behaviour.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

__all__ = ["ColumnMark", "PlanColumn", "PlanKind", "RowPlan"]


class PlanKind(IntEnum):
    """How a logged value becomes a ``Value``: one case per builder (the C switch uses these numbers)."""

    INT = 1          # int_value (TINYINT..INT signed, smaller unsigned, YEAR)
    LONG = 2         # long_value (INT UNSIGNED, BIGINT signed)
    UINT64 = 3       # uint64_value (BIGINT UNSIGNED)
    DECIMAL = 4      # decimal_value, exact plain text
    FLOAT = 5
    DOUBLE = 6
    TEXT = 7         # string_value in the column charset, else raw_text_value
    ENUM = 8         # string_value: the label (index 0 is "")
    SET = 9          # set_value: the member labels
    BYTES = 10       # bytes_value, right-padded to ``pad_to``
    BIT = 11
    DATE = 12
    DATETIME = 13
    TIMESTAMP = 14
    TIME = 15
    JSON = 16
    GEOMETRY = 17
    VECTOR = 18


class ColumnMark(IntEnum):
    USER = 0         # emitted as is
    INVISIBLE = 1    # emitted with ``Column.invisible``
    HIDDEN = 2       # a functional index's generated column: never emitted


@dataclass(frozen=True, slots=True)
class PlanColumn:
    index: int                      # position in the row image (TABLE_MAP order)
    name: str
    type_code: int                  # the binlog column type (TABLE_MAP; ENUM/SET unpacked from STRING)
    meta: int                       # the TABLE_MAP metadata of that type
    kind: PlanKind
    unsigned: bool
    int_bits: int                   # integer width for the unsigned offset: 8/16/24/32/64, 0 for non-integers
    charset: str                    # normalised charset of a text column ("" for other kinds)
    labels: tuple[str, ...]         # ENUM/SET members in definition order
    pad_to: int                     # fixed-length binary: right-pad with 0x00 to this length (0: never)
    mark: ColumnMark
    pk_position: int                # position in the primary key, -1 for other columns
    always: bool                    # in every UPDATE/DELETE before image (always-include; all without PK)


@dataclass(frozen=True, slots=True)
class RowPlan:
    db: str
    table: str
    columns: tuple[PlanColumn, ...]
    primary_key: tuple[int, ...]    # image indexes of the key columns, in key order
    always: tuple[int, ...]         # image indexes of the always-included columns, ascending
    has_marks: bool                 # any column INVISIBLE or HIDDEN
