"""The pure-Python row builder: decoded row images + a ``RowPlan`` → ``Row`` messages (the reference).

``python_row_builders(plan, image)`` reads a plan once and returns a ``RowBuilders``: one function per
operation (the image mode's UPDATE and DELETE forms chosen there, once per plan, never per row). Each takes
the outgoing event's ``rows`` field, a sequence of images (a tuple of decoded values per row; a
``(before, after)`` pair for UPDATE) and the statement-wide index of the first, and appends one filled
``Row`` per image. The compiled builder (``binlog_model._speedups``) reads the same plan and must produce the
same messages byte for byte.

What a row holds (the spec): INSERT: the primary key and every logged column in ``after``. DELETE: the key
and the always-included columns in ``before`` (every column in ``full`` mode). UPDATE: the key (from the
first image that has all of it), in ``after`` the columns whose value changed, in ``before`` the
always-included ones (``changed_with_old``: also the old values of the changed ones; ``full``: both images
whole; ``after``: only the after image, whole, and a DELETE's whole before image: the row after the
change). Columns absent from an image (``NOT_PRESENT``, MINIMAL/NOBLOB images) are left out; HIDDEN columns
are never emitted and INVISIBLE ones are marked.

SQL NULL is handled here, in the column loops, before any value setter runs: the setters
(``convert.value_setter``) only ever see non-NULL values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from google.protobuf.struct_pb2 import NULL_VALUE

from binlog_model.resolve.convert import value_setter
from binlog_model.resolve.options import ImageMode
from binlog_model.resolve.plan import ColumnMark, RowPlan
from binlog_model.wire.values import NOT_PRESENT

if TYPE_CHECKING:
    from google.protobuf.internal.containers import RepeatedCompositeFieldContainer

    from binlog_model._pb import binlog_event_pb2 as pb
    from binlog_model.resolve.compiled_rows import CompiledRows

    Rows: TypeAlias = RepeatedCompositeFieldContainer[pb.Row]          # the outgoing event's rows
    Columns: TypeAlias = RepeatedCompositeFieldContainer[pb.Column]    # a row's key, before or after

__all__ = ["BuildRows", "RowBuilders", "python_row_builders"]

# (the outgoing event's repeated ``rows`` field, the images, the row_index of the first) -> None
BuildRows = Callable[["Rows", Sequence[Any], int], None]

_NULL = NULL_VALUE
_HIDDEN = ColumnMark.HIDDEN
_INVISIBLE = ColumnMark.INVISIBLE


@dataclass(frozen=True, slots=True)
class RowBuilders:
    """The row builders of one plan under one image mode."""

    plan: RowPlan
    insert: BuildRows
    update: BuildRows
    delete: BuildRows
    compiled: CompiledRows | None = None    # the plan compiled for C, when it compiles

    def for_kind(self, kind: str) -> BuildRows:
        """The builder of a rows event's ``kind`` (``insert``, ``update``, ``partial_update``, ``delete``)."""
        if kind == "insert":
            return self.insert
        if kind == "delete":
            return self.delete
        return self.update


def python_row_builders(plan: RowPlan, image: ImageMode) -> RowBuilders:
    """The pure-Python builders of ``plan`` for the image mode ``image``."""
    names = tuple(c.name for c in plan.columns)
    setters = tuple(value_setter(c) for c in plan.columns)
    key = plan.primary_key
    always = plan.always
    some, every = _fillers(plan, names, setters)

    def primary_key(row: Any, *images: Sequence[Any]) -> None:
        # The primary key from the first image that has every key column.
        for image in images:
            if all(image[i] is not NOT_PRESENT for i in key):
                some(row.primary_key, image, key)
                return

    def numbered(rows: Rows, images: Sequence[Any], index: int) -> Iterator[tuple[Any, Any]]:
        # One new Row per image, numbered from ``index`` on: every builder's loop.
        for image in images:
            row = rows.add()
            row.row_index = index
            index += 1
            yield row, image

    def insert(rows: Rows, images: Sequence[Any], index: int) -> None:
        for row, image in numbered(rows, images, index):
            primary_key(row, image)
            every(row.after, image)

    def delete(rows: Rows, images: Sequence[Any], index: int) -> None:
        for row, image in numbered(rows, images, index):
            primary_key(row, image)
            some(row.before, image, always)

    def delete_full(rows: Rows, images: Sequence[Any], index: int) -> None:
        for row, image in numbered(rows, images, index):
            primary_key(row, image)
            every(row.before, image)

    def update_whole(with_before: bool) -> BuildRows:
        # ``full``: both images whole; ``after``: the after image only (the row after the change).
        def update(rows: Rows, images: Sequence[Any], index: int) -> None:
            for row, (before, after) in numbered(rows, images, index):
                primary_key(row, before, after)
                if with_before:
                    every(row.before, before)
                every(row.after, after)
        return update

    with_old = image == ImageMode.CHANGED_WITH_OLD
    always_set = set(always)

    def update_changed(rows: Rows, images: Sequence[Any], index: int) -> None:
        for row, (before, after) in numbered(rows, images, index):
            primary_key(row, before, after)
            changed = [i for i, a in enumerate(after) if a is not NOT_PRESENT and _differs(before[i], a)]
            shown: Iterable[int] = sorted(always_set.union(changed)) if with_old else always
            # An always-included column missing from the before image (MINIMAL) is taken from the after image.
            some(row.before, [before[i] if before[i] is not NOT_PRESENT else after[i]
                              for i in range(len(before))], shown)
            some(row.after, after, changed)

    if image == ImageMode.AFTER:
        return RowBuilders(plan, insert, update_whole(False), delete_full)
    if image == ImageMode.FULL:
        return RowBuilders(plan, insert, update_whole(True), delete_full)
    return RowBuilders(plan, insert, update_changed, delete)


Fill = Callable[["Columns", Sequence[Any], Iterable[int]], None]
FillAll = Callable[["Columns", Sequence[Any]], None]


def _fillers(plan: RowPlan, names: tuple[str, ...], setters: tuple[Any, ...]) -> tuple[Fill, FillAll]:
    """``some(target, image, indexes)`` and ``every(target, image)``: append a ``Column`` to ``target``
    per present value and fill its ``Value`` in place (no Value built and copied in: the hot loop)."""
    if plan.has_marks:
        marks = tuple(c.mark for c in plan.columns)

        def marked(target: Columns, image: Sequence[Any], indexes: Iterable[int]) -> None:
            # A table with invisible or hidden columns: mark the invisible ones, leave the hidden ones out.
            add = target.add
            for i in indexes:
                value = image[i]
                mark = marks[i]
                if value is NOT_PRESENT or mark == _HIDDEN:
                    continue
                column = add()
                column.name = names[i]
                if value is None:
                    column.value.null_value = _NULL
                else:
                    setters[i](column.value, value)
                if mark == _INVISIBLE:
                    column.invisible = True

        def marked_all(target: Columns, image: Sequence[Any]) -> None:
            marked(target, image, range(len(image)))
        return marked, marked_all

    def some(target: Columns, image: Sequence[Any], indexes: Iterable[int]) -> None:
        add = target.add
        for i in indexes:
            value = image[i]
            if value is NOT_PRESENT:
                continue
            column = add()      # add() then set: faster in upb than add(name=...)
            column.name = names[i]
            if value is None:
                column.value.null_value = _NULL
            else:
                setters[i](column.value, value)

    def every(target: Columns, image: Sequence[Any]) -> None:
        # ``some`` over every column, walking names, setters and values together (no index lookups).
        add = target.add
        for name, set_value, value in zip(names, setters, image, strict=True):
            if value is NOT_PRESENT:
                continue
            column = add()
            column.name = name
            if value is None:
                column.value.null_value = _NULL
            else:
                set_value(column.value, value)
    return some, every


def _differs(old: Any, new: Any) -> bool:
    """Whether an UPDATE changed a column: absent before, another type, another value, or the sign of a
    zero (``0.0 == -0.0`` in Python, not in the row)."""
    if old is NOT_PRESENT or type(old) is not type(new) or old != new:
        return True
    return type(new) is float and math.copysign(1.0, old) != math.copysign(1.0, new)
