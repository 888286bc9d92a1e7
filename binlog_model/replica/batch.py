"""One table's changes between two commits, collapsed to the last change per key.

Strategy: changes are taken in binlog order and kept per key, so whatever happened to a key inside the batch
(several updates, a delete then an insert, a key changed and changed back) ends as one row to write or one
key to delete: the last change wins, and a MERGE never sees two source rows for one key. An UPDATE that
changes the key deletes the old key and writes the new one. Values an image does not carry (a MINIMAL
image, a JSON partial update) come from the row as it was before the batch: from an earlier change in the
batch, else from the replica (``needs_base``/``fill``), where a missing row is an error, never a guess.

A table without a key is a multiset: per row digest, how many rows the batch added or removed; ``rows``
turns that into the copies to write or delete once the replica's counts are known.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pyarrow as pa

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.compiled import speedups
from binlog_model.errors import BinlogError
from binlog_model.replica.defaults import default_value
from binlog_model.replica.layout import TableLayout
from binlog_model.resolve.json_diff import apply_json_diff_text
from binlog_model.spark.typed_values import InvalidValue, message_converters, message_value

__all__ = ["MISSING", "ReplicaError", "TableBatch"]

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()
_INSERT, _UPDATE, _DELETE = pb.BinlogEvent.INSERT, pb.BinlogEvent.UPDATE, pb.BinlogEvent.DELETE


class ReplicaError(BinlogError):
    """A change the replica cannot apply exactly (names the table, the key and the position)."""


@dataclass(slots=True)
class Meta:
    order: int
    gtid: str
    file: str
    offset: int


@dataclass(slots=True)
class Change:
    """The last change of one key: write ``values`` (``op == "u"``) or delete the key (``"d"``). Values
    still ``MISSING``, and JSON ``diffs`` on them, are taken from the replica's row at ``base_key``."""

    op: str
    values: list[Any]
    meta: Meta
    invalid: set[str] = field(default_factory=set)
    diffs: dict[int, list[Any]] = field(default_factory=dict)
    base_key: tuple[Any, ...] | None = None


class TableBatch:
    """The changes of one table (under one layout) since the last flush."""

    def __init__(self, layout: TableLayout) -> None:
        self.layout = layout
        self._index = layout.index()
        # a column's index by its name as logged (the exact name first; case differs only after a rename)
        self._by_name = {**self._index, **{c.name: i for i, c in enumerate(layout.columns)}}
        self._key_at = [self._index[k.lower()] for k in layout.key]
        self._single_key = self._key_at[0] if len(self._key_at) == 1 else None
        self._keyless = layout.keyless
        self._exact = [_exact_kinds(t) for t in layout.types]
        self._shortcuts = [message_converters(t) for t in layout.types]
        self._generated = layout.generated()
        # what a before image is read for: its key alone, unless a keyless table's digest or a generated
        # column's inputs need every column
        self._before_reads = (None if layout.keyless or self._generated
                              else frozenset(self._key_at))
        self._plan = _compiled_plan(self)
        self.changes: dict[tuple[Any, ...], Change] = {}
        self.counts: dict[bytes, list[Any]] = {}    # keyless: digest -> [delta, values, invalid, meta]
        self.events = 0

    def __bool__(self) -> bool:
        return bool(self.changes or self.counts)

    def clear(self) -> None:
        """Drop the changes taken (once they are in a MERGE source)."""
        self.changes, self.counts = {}, {}

    # --- taking changes -------------------------------------------------------------------------------

    def add(self, event: Any, meta: Meta, data: bytes | None = None) -> None:
        """Take the rows of ``event`` (a ``BinlogEvent``, or any object with its ``operation`` where ``data``
        is given); ``data``, its serialized bytes where the caller has them, lets the compiled core read the
        images (``_speedups.replica_images``: ``_image``'s values, or None where it must run)."""
        self.events += 1
        operation = event.operation
        images = (_REPLICA_IMAGES(data, operation, self._plan)
                  if data is not None and self._plan is not None else None)
        if images is not None:
            take = self._take
            if operation == _INSERT:
                for _before, after, invalid in images:
                    take(None, after, invalid, _NO_DIFFS, meta, True)
            elif operation == _UPDATE:
                for before, after, invalid in images:
                    take(before, after, invalid, _NO_DIFFS, meta, False)
            elif operation == _DELETE:
                for before, _after, _invalid in images:
                    self._take_delete(before, meta)
            return
        if not isinstance(event, pb.BinlogEvent):
            event = pb.BinlogEvent.FromString(data)
        for row in event.rows:
            if operation == _INSERT:
                self._write(None, row.after, meta, inserted=True)
            elif operation == _UPDATE:
                self._write(row.before, row.after, meta, inserted=False)
            elif operation == _DELETE:
                self._delete(row.before, meta)

    def _image(self, columns: Sequence[pb.Column], meta: Meta, reads: frozenset[int] | None = None
               ) -> tuple[list[Any], set[str], dict[int, Any]]:
        """The image's values by column position (``MISSING`` where it has none; with ``reads``, only those
        positions are read), the columns whose value the type cannot hold, and JSON diffs."""
        values: list[Any] = [MISSING] * len(self._index)
        invalid: set[str] = set()
        diffs: dict[int, Any] = {}
        types, exact, shortcuts = self.layout.types, self._exact, self._shortcuts
        by_name, index = self._by_name, self._index
        # with ``reads`` (a before image read for its key), the walk ends once each of them was read: an
        # image names a column once
        wanted, found = (-1 if reads is None else len(reads)), 0
        for column in columns:
            if found == wanted:
                break
            name = column.name
            i = by_name.get(name)
            if i is None:
                i = index.get(name.lower())
                if i is None:
                    continue        # an invisible or hidden column: not in SELECT *
            if reads is not None:
                if i not in reads:
                    continue
                found += 1
            value = column.value
            kind = value.WhichOneof("kind")
            if kind in exact[i]:
                values[i] = getattr(value, kind)       # the type holds every value of this kind as it is
                continue
            if kind == "json_diff":
                diffs[i] = list(value.json_diff.operations)
                continue
            shortcut = shortcuts[i].get(kind)
            try:
                values[i] = (shortcut(getattr(value, kind)) if shortcut is not None
                             else message_value(value, types[i]))
            except InvalidValue:
                values[i] = None
                invalid.add(self.layout.columns[i].name)
        return values, invalid, diffs

    def _key(self, values: list[Any], meta: Meta, image: str) -> tuple[Any, ...]:
        if self._single_key is not None:
            value = values[self._single_key]
            if value is not MISSING and value is not None:
                return (value,)
            key: tuple[Any, ...] = (value,)
        else:
            key = tuple(values[i] for i in self._key_at)
        if any(v is MISSING or v is None for v in key):
            raise ReplicaError(f"{self._where(meta)}: the {image} image lacks the key {self.layout.key} "
                               "(a row image that does not carry the key cannot be applied)")
        return key

    def _where(self, meta: Meta) -> str:
        return f"{self.layout.db}.{self.layout.table} at {meta.file}:{meta.offset}"

    def _write(self, before: Sequence[pb.Column] | None, after: Sequence[pb.Column], meta: Meta, *,
               inserted: bool) -> None:
        values, invalid, diffs = self._image(after, meta)
        previous = self._image(before, meta, self._before_reads)[0] if before is not None else None
        self._take(previous, values, invalid, diffs, meta, inserted)

    def _take(self, previous: list[Any] | None, values: list[Any], invalid: set[str], diffs: dict[int, Any],
              meta: Meta, inserted: bool) -> None:
        """A write of the after image's ``values`` (``_image``'s three), ``previous`` the before image's;
        ``diffs`` is only read."""
        if previous is not None and self._generated:
            self._unknown_generated(values, previous, diffs, invalid)
        if self._keyless:
            if previous is not None:
                # a MINIMAL after image holds the changed columns; a keyless before image holds them all
                merged = [p if v is MISSING else v for v, p in zip(values, previous, strict=True)]
                self._count(previous, -1, meta, set())
                values = merged
            self._count(self._with_defaults(values, invalid) if inserted else values, +1, meta, invalid)
            return
        if inserted:
            if MISSING in values:
                self._with_defaults(values, invalid)
            key = self._key(values, meta, "after")
            changes = self.changes
            changes.pop(key, None)     # re-inserted after a delete: the newest change goes last
            changes[key] = Change("u", values, meta, invalid)
            return
        assert previous is not None
        old = self._key(previous, meta, "before")
        single = self._single_key
        if single is not None:
            new = old if values[single] is MISSING else (values[single],)
        else:
            new = tuple(values[i] if values[i] is not MISSING else old[n] for n, i in enumerate(self._key_at))
        prior = self.changes.get(old)
        whole = not diffs and MISSING not in values
        if prior is not None and prior.op == "u" and whole:
            # a whole after image: the prior change's values, diffs and invalid names are all replaced
            base = Change("u", values, meta, invalid, {}, prior.base_key)
        elif prior is not None and prior.op == "u":
            base = Change("u", list(prior.values), meta, set(prior.invalid), dict(prior.diffs),
                          prior.base_key)
            for i, value in enumerate(values):
                if value is not MISSING:
                    base.values[i] = value
                    base.diffs.pop(i, None)
                    name = self.layout.columns[i].name
                    base.invalid.discard(name)
                    if name in invalid:
                        base.invalid.add(name)
        else:
            # the key's first change in the batch: the image is the change (its values are the image's own
            # list, its invalid names are all of columns the image holds)
            base = Change("u", values, meta, invalid, base_key=old)
        for i, ops in diffs.items():
            self._diff(base, i, ops)
        if new != old:
            self.changes.pop(old, None)
            self.changes[old] = Change("d", [], meta)
        self.changes.pop(new, None)
        self.changes[new] = base

    def _unknown_generated(self, values: list[Any], previous: list[Any], diffs: dict[int, Any],
                           invalid: set[str]) -> None:
        """An update's generated column that the after image leaves out keeps its value only while the
        columns it reads keep theirs; otherwise it is unknown: null, listed in ``binlog_invalid``."""
        for i, inputs in self._generated.items():
            if values[i] is not MISSING:
                continue
            if inputs is None or any(j in diffs or (values[j] is not MISSING and values[j] != previous[j])
                                     for j in inputs):
                values[i] = None
                invalid.add(self.layout.columns[i].name)

    def _diff(self, change: Change, i: int, ops: list[Any]) -> None:
        current = change.values[i]
        if current is MISSING:
            change.diffs.setdefault(i, []).extend(ops)
        elif current is None:
            raise ReplicaError(f"{self._where(change.meta)}: a JSON partial update of "
                               f"{self.layout.columns[i].name}, which is NULL")
        else:
            change.values[i] = apply_json_diff_text(current, ops)

    def _delete(self, before: Sequence[pb.Column], meta: Meta) -> None:
        self._take_delete(self._image(before, meta, self._before_reads)[0], meta)

    def _take_delete(self, values: list[Any], meta: Meta) -> None:
        if self._keyless:
            self._count(values, -1, meta, set())
            return
        key = self._key(values, meta, "before")
        self.changes.pop(key, None)
        self.changes[key] = Change("d", [], meta)

    def _with_defaults(self, values: list[Any], invalid: set[str]) -> list[Any]:
        """An INSERT's columns the image lacks (MINIMAL: the statement did not name them) hold their
        defaults; a default that is not a constant is unknown: null, listed in ``binlog_invalid``."""
        for i, value in enumerate(values):
            if value is MISSING:
                column = self.layout.columns[i]
                known, values[i] = default_value(column, self.layout.types[i])
                if not known:
                    invalid.add(column.name)
        return values

    def _count(self, values: list[Any], delta: int, meta: Meta, invalid: set[str]) -> None:
        for i in self._generated:       # left out of the image (MariaDB 11): not known, and not hashed
            if values[i] is MISSING:
                values[i] = None
                invalid.add(self.layout.columns[i].name)
        if any(v is MISSING for v in values):
            raise ReplicaError(f"{self._where(meta)}: a table without a key needs full row images "
                               "(binlog_row_image=FULL)")
        digest = self.layout.row_hash(values)
        entry = self.counts.get(digest)
        if entry is None:
            self.counts[digest] = [delta, values, invalid, meta]
        else:
            entry[0] += delta
            entry[3] = meta
            if delta > 0:
                entry[1], entry[2] = values, invalid

    # --- what to write ----------------------------------------------------------------------------------

    def needs_base(self) -> set[tuple[Any, ...]]:
        """The replica rows (by key) whose values the batch's changes need."""
        return {c.base_key for c in self.changes.values()
                if c.op == "u" and c.base_key is not None and (c.diffs or MISSING in c.values)}

    def fill(self, rows: dict[tuple[Any, ...], tuple[list[Any], set[str]]]) -> None:
        """Complete the changes from the replica's rows (key → values, invalid columns)."""
        for change in self.changes.values():
            if change.op != "u" or change.base_key is None or not (change.diffs or MISSING in change.values):
                continue
            found = rows.get(change.base_key)
            if found is None:
                raise ReplicaError(f"{self._where(change.meta)}: an update of key {change.base_key} that the "
                                   "replica does not hold (it does not start from the source's data: give "
                                   "--initial, or start from the binlog where the table was created)")
            base, base_invalid = found
            for i, value in enumerate(change.values):
                if value is MISSING:
                    change.values[i] = base[i]
                    name = self.layout.columns[i].name
                    if name in base_invalid:
                        change.invalid.add(name)
            for i, ops in change.diffs.items():
                if change.values[i] is None:
                    raise ReplicaError(f"{self._where(change.meta)}: a JSON partial update of "
                                       f"{self.layout.columns[i].name}, which is NULL in the replica")
                change.values[i] = apply_json_diff_text(change.values[i], ops)
            change.diffs = {}

    def keyed_rows(self) -> pa.Table:
        """The MERGE source of a keyed table: one row per key, ``binlog_op`` 'u' (write) or 'd' (delete)."""
        width, key_at = len(self._index), self._key_at
        rows: list[list[Any]] = []
        for key, change in self.changes.items():
            if change.op == "u":
                rows.append(change.values)
            else:
                values = [None] * width
                for n, i in enumerate(key_at):
                    values[i] = key[n]
                rows.append(values)
        changes = self.changes.values()
        return _table(self.layout, rows, [c.meta for c in changes], [c.invalid for c in changes],
                      [[c.op for c in changes]])

    def keyless_rows(self, counts: Callable[[list[bytes]], dict[bytes, int]]) -> pa.Table:
        """The MERGE source of a keyless table, given the replica's row count per digest."""
        have = counts(list(self.counts))
        rows: list[list[Any]] = []
        metas: list[Meta] = []
        invalids: list[set[str]] = []
        digests: list[bytes] = []
        copies: list[int] = []
        ops: list[str] = []
        nulls = [None] * len(self._index)
        for digest, (delta, values, invalid, meta) in self.counts.items():
            before = have.get(digest, 0)
            after = before + delta
            if after < 0:
                raise ReplicaError(f"{self._where(meta)}: a delete of a row the replica does not hold (it "
                                   "does not start from the source's data: give --initial, or start from "
                                   "the binlog where the table was created)")
            for copy in range(before + 1, after + 1):
                rows.append(values)
                invalids.append(invalid)
                ops.append("u")
                copies.append(copy)
            for copy in range(after + 1, before + 1):
                rows.append(nulls)
                invalids.append(_NONE_INVALID)
                ops.append("d")
                copies.append(copy)
            metas += [meta] * abs(delta)
            digests += [digest] * abs(delta)
        return _table(self.layout, rows, metas, invalids, [digests, copies, ops])


_REPLICA_IMAGES: Any = getattr(speedups, "replica_images", None)
_NO_DIFFS: dict[int, Any] = {}      # the compiled images' diffs: never any (it hands a JSON diff back)
_NONE_INVALID: set[str] = set()     # a deleted copy's invalid names: none (only read)
_KIND = {field.name: field.number for field in pb.Value.DESCRIPTOR.fields}
_BY_NUMBER = [next((k for k, n in _KIND.items() if n == number), None)
              for number in range(max(_KIND.values()) + 1)]
_SPECIAL = {"datetime_value": 1, "date_value": 2, "decimal_value": 3}     # converted by the C code itself


def _compiled_plan(batch: TableBatch) -> Any:
    """The plan of ``_speedups.replica_images`` for ``batch``'s layout (None without the compiled core): its
    lookups, each column's exact kinds and shortcuts by kind number, the before image's reads."""
    if speedups is None or not hasattr(speedups, "replica_plan"):
        return None
    layout = batch.layout
    columns = []
    for types, exact, shortcuts in zip(layout.types, batch._exact, batch._shortcuts, strict=True):
        mask = sum(1 << _KIND[kind] for kind in exact)
        special = next((code for kind, code in _SPECIAL.items() if kind in shortcuts), 0)
        by_kind = tuple(None if kind is None else shortcuts.get(kind) for kind in _BY_NUMBER)
        precision, scale = (types.precision, types.scale) if pa.types.is_decimal(types) else (0, 0)
        columns.append((mask, special, precision, scale, by_kind))
    reads = (None if batch._before_reads is None
             else bytes(i in batch._before_reads for i in range(len(layout.columns))))
    try:
        names = tuple(c.name.encode() for c in layout.columns)
    except UnicodeEncodeError:      # a name no serialized event can hold (a lone surrogate): the reference
        return None
    return speedups.replica_plan((
        {name.encode(): i for name, i in batch._by_name.items()},
        {name.encode(): i for name, i in batch._index.items()},
        names, tuple(c.name for c in layout.columns),
        MISSING, InvalidValue, Decimal, reads, tuple(columns)))


def _exact_kinds(arrow: pa.DataType) -> frozenset[str]:
    """The value kinds whose Python value an Arrow column of type ``arrow`` takes unchanged (no range or
    form to check): the rest go through ``message_value``."""
    if pa.types.is_int32(arrow):
        return frozenset({"int_value"})
    if pa.types.is_int64(arrow):
        return frozenset({"int_value", "long_value", "time_micros"})
    if pa.types.is_string(arrow):
        return frozenset({"string_value", "json_value"})
    if pa.types.is_binary(arrow):
        return frozenset({"bytes_value"})
    if pa.types.is_float64(arrow):
        return frozenset({"double_value"})
    return frozenset()


def _table(layout: TableLayout, rows: list[list[Any]], metas: list[Meta], invalids: list[set[str]],
           tail: list[list[Any]]) -> pa.Table:
    """The MERGE source: ``rows`` (the source's columns, each row a list), then the metadata columns of
    ``metas`` and ``invalids``, then the ``tail`` columns (a keyless table's digest and copy; the op)."""
    schema = layout.arrow_schema().append(pa.field("binlog_op", pa.string()))
    # a column at a time: an Arrow array from a list of one column's values is the cheap conversion
    columns: list[list[Any]] = [[row[i] for row in rows] for i in range(len(layout.columns))]
    columns += [[m.order for m in metas], [m.gtid or None for m in metas], [m.file for m in metas],
                [m.offset for m in metas], [sorted(names) if names else [] for names in invalids], *tail]
    return pa.table([pa.array(col, type=f.type) for col, f in zip(columns, schema, strict=True)],
                    schema=schema)
