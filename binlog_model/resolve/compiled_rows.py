"""The compiled row builder's Python side: compile a ``RowPlan`` for C, and run it over a rows event.

``compile_rows(plan, table_map, image)`` returns ``None`` when the compiled core is off
(``binlog_model.compiled``) or any column needs what only Python does (charsets other than
utf8mb3/utf8mb4/latin1/ascii/binary, unusual type/kind pairs, HIDDEN columns C cannot size): the whole
plan then uses the Python builder, never a mix per value. ``CompiledRows.build(event, first_row_index)``
returns the serialized ``Row`` of every row of the event (framed as a ``BinlogEvent.rows`` entry),
byte-identical to what the Python builder makes, or ``None`` when C met anything it does not handle exactly
(bad or truncated bytes, a value Python rejects): the caller then runs the Python builder on the same
event, which produces the same rows or raises the typed ``BinlogError`` with its exact message and
position. So the two paths never differ in their errors. See docs/speedups.md.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.compiled import speedups
from binlog_model.resolve.plan import ColumnMark, PlanColumn, PlanKind, RowPlan
from binlog_model.wire.column_types import ColumnType as T
from binlog_model.wire.rows import RowsEvent
from binlog_model.wire.table_map import TableMapEvent

__all__ = ["CompiledColumn", "CompiledRows", "RawImages", "RawImagesRefused", "compile_rows", "merge_frames",
           "with_rows"]

_OPERATION = {"insert": 1, "update": 2, "delete": 3}
_IMAGE_MODE = {"full": 0, "changed": 1, "changed_with_old": 2, "after": 3}   # rows.c's IMG_*
# A HIDDEN column is never emitted (its plan kind is NONE): C only needs its wire size, so any kind whose
# codec matches will do; INT covers the integers, TEXT the strings. Others stay on the Python path.
_HIDDEN_KIND_BY_TYPE: dict[int, PlanKind] = {
    **dict.fromkeys((T.TINY, T.SHORT, T.LONG, T.LONGLONG, T.INT24, T.YEAR), PlanKind.INT),
    **dict.fromkeys((T.VARCHAR, T.VAR_STRING, T.STRING, T.BLOB, T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB),
                    PlanKind.TEXT),
}


class CompiledColumn(NamedTuple):
    """One plan column as ``_speedups.compile_plan`` reads it: a tuple, unpacked in C in this order
    (``compile_column`` in _speedups/module.c; tests/unit/test_plan_kind_numbers.py ties the two)."""

    name: str
    type_code: int          # the plan's type (ENUM/SET unpacked); C picks the wire codec from it and meta
    meta: int               # the TABLE_MAP metadata
    wire_unsigned: bool     # the TABLE_MAP's signedness bit: how the wire codec reads an integer
    kind: int               # PlanKind
    unsigned: bool          # the tracked UNSIGNED: add 1 << int_bits to a negative value
    int_bits: int
    charset: str
    labels: tuple[str, ...]
    pad_to: int
    mark: int               # ColumnMark


def compiled_column(c: PlanColumn, wire_unsigned: bool) -> CompiledColumn | None:
    """``c`` for C, or None when C cannot size a HIDDEN column of its type."""
    kind, charset = int(c.kind), c.charset or ""
    if c.mark == ColumnMark.HIDDEN:
        hidden_kind = _HIDDEN_KIND_BY_TYPE.get(c.type_code)
        if hidden_kind is None:
            return None
        kind, charset = int(hidden_kind), "binary"
    return CompiledColumn(c.name, c.type_code, c.meta, wire_unsigned, kind, bool(c.unsigned), int(c.int_bits),
                          charset, tuple(c.labels), int(c.pad_to), int(c.mark))


class RawImagesRefused(Exception):
    """Raw row images met what only the built rows handle (a rows event the C code refuses, a PARTIAL_UPDATE
    in a piece of raw rows, a table the compiled typing cannot write): the caller runs again without them."""


class RawImages:
    """The resolve job's raw row images, inside one task (``typed_write``): for the tables in ``tables``,
    the assembler keeps each row as the bytes of the image its typed table reads (``_speedups.row_images``:
    INSERT and UPDATE the after image, DELETE the before image; field 100 of the serialized event, never
    written out), and the task types them straight from those bytes (``_speedups.typed_columns`` with
    ``contexts``): no protobuf ``Row`` is built and parsed again. Each frame names its context, a (compiled
    plan, present-columns bitmap) pair numbered here. Only the "after" image mode (the job's)."""

    def __init__(self, tables: frozenset[tuple[str, str]]) -> None:
        self.tables = tables
        self.contexts: list[tuple[Any, bytes]] = []
        self._ids: dict[int, dict[bytes, int]] = {}     # id(plan) -> bitmap -> context number

    def context(self, plan: Any, present: bytes) -> int:
        numbers = self.numbers(plan)
        found = numbers.get(present)
        if found is None:
            found = numbers[present] = len(self.contexts)
            self.contexts.append((plan, present))       # holds the plan: its id stays its own
        return found

    def numbers(self, plan: Any) -> dict[bytes, int]:
        """The context numbers of ``plan``'s bitmaps so far (the statement lane reads them in C: a bitmap
        not numbered yet sends its statement the Python path, which numbers it)."""
        numbers = self._ids.get(id(plan))
        if numbers is None:
            numbers = self._ids[id(plan)] = {}
        return numbers


class CompiledRows:
    """A plan compiled for the C builder under one image mode."""

    __slots__ = ("_mode", "_plan", "plan")

    def __init__(self, plan: RowPlan, compiled: Any, image_mode: int) -> None:
        self.plan = plan
        self._plan = compiled
        self._mode = image_mode

    @property
    def raw_capable(self) -> bool:
        """Whether ``images`` can give raw row images (the "after" image mode alone)."""
        return self._mode == _IMAGE_MODE["after"]

    def build(self, event: RowsEvent, first_row_index: int) -> list[bytes] | None:
        """Each row as one framed entry of ``BinlogEvent.rows`` (tag, length, the serialized ``Row``), with
        row_index from ``first_row_index`` on; or None: then run the Python builder on ``event``."""
        operation = _OPERATION.get(event.kind)
        if operation is None or speedups is None:   # PARTIAL_UPDATE: the JSON diffs are Python's
            return None
        images = event.images
        out = speedups.build_rows(self._plan, images.buf, images.pos, images.end, images.present,
                                  images.present_after, operation, self._mode, first_row_index)
        return _whole(out, images)

    def images(self, event: RowsEvent, first_row_index: int, raw: RawImages) -> list[bytes] | None:
        """Each row as a raw frame of its typed image (see ``RawImages``), or None: build the rows."""
        operation = _OPERATION.get(event.kind)
        if operation is None or speedups is None or not self.raw_capable:
            return None
        images = event.images
        typed = images.present_after if operation == _OPERATION["update"] else images.present
        if typed is None:
            return None
        out = speedups.row_images(self._plan, images.buf, images.pos, images.end, images.present,
                                  images.present_after, operation, raw.context(self._plan, typed),
                                  first_row_index)
        return _whole(out, images)


def _whole(out: tuple[list[bytes], int] | None, images: Any) -> list[bytes] | None:
    """The rows C made of an event's images, when it read them to their end (else None)."""
    if out is None:
        return None
    rows, end = out
    return rows if end == images.end else None


def compile_rows(plan: RowPlan, table_map: TableMapEvent, image: str) -> CompiledRows | None:
    """``plan`` compiled for C (``image``: an ``ImageMode`` value), or None when the
    compiled core is off or a column of the plan needs the Python builder."""
    if speedups is None or len(plan.columns) != table_map.column_count:
        return None
    mode = _IMAGE_MODE.get(str(getattr(image, "value", image)))
    if mode is None:
        return None
    signedness = table_map.signedness
    columns = []
    for i, c in enumerate(plan.columns):
        column = compiled_column(c, bool(signedness and signedness[i]))
        if column is None:
            return None
        columns.append(column)
    try:
        compiled = speedups.compile_plan(tuple(columns), tuple(plan.primary_key), tuple(plan.always))
    except (NotImplementedError, UnicodeError, ValueError, TypeError, OverflowError):
        return None
    return CompiledRows(plan, compiled, mode)


def merge_frames(event: pb.BinlogEvent, frames: list[bytes]) -> None:
    """Move the compiled builder's rows (framed ``BinlogEvent.rows`` entries) into ``event``, parsed by
    upb in C; ``frames`` is emptied."""
    event.MergeFromString(b"".join(frames))
    frames.clear()


def with_rows(head: bytes, frames: list[bytes], statement: bytes = b"") -> bytes:
    """A serialized BinlogEvent without rows, with the rows' framed entries put in field order (after field
    10, before 12), and ``statement`` (the serialized ``statement`` field, field 15, or b"") after field
    14: the same bytes protobuf writes for the whole message. The compiled ``splice_rows`` joins them
    alike (tests/unit/test_statement_splice.py); this is its reference."""
    if speedups is not None:
        joined = speedups.splice_rows(head, frames, statement)
        if joined is not None:
            return joined
    return _with_rows(head, frames, statement)


def _with_rows(head: bytes, frames: list[bytes], statement: bytes) -> bytes:
    pos, end = 0, len(head)
    rows_at = statement_at = -1
    while pos < end:
        tag, at = _varint(head, pos)
        number = tag >> 3
        if number > 11 and rows_at < 0:
            rows_at = pos
            if not statement:
                break
        if number > 15:
            statement_at = pos
            break
        wire = tag & 7
        if wire == 0:
            _, at = _varint(head, at)
        elif wire == 2:
            size, at = _varint(head, at)
            at += size
        elif wire == 1:
            at += 8
        elif wire == 5:
            at += 4
        else:   # pragma: no cover - BinlogEvent has no group fields
            raise AssertionError(f"unexpected wire type {wire} in a serialized BinlogEvent")
        pos = at
    if rows_at < 0:
        rows_at = pos
    if not statement:
        return b"".join((head[:rows_at], *frames, head[rows_at:]))
    if statement_at < 0:
        statement_at = pos
    return b"".join((head[:rows_at], *frames, head[rows_at:statement_at], statement, head[statement_at:]))


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos
