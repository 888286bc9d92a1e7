"""WRITE/UPDATE/DELETE/PARTIAL_UPDATE rows events (v0, v1, v2 and MariaDB compressed) and their images.

Strategy: the post-header (table id, flags) and the v2 extra data are parsed with a ``Cursor``; the row
images then run as a tight loop over the TABLE_MAP's precomputed ``row_plan`` (one ``(codec, meta)`` per
column), reading straight from the body buffer. A row image is a NULL bitmap over the *present* columns
only, then the non-NULL values in column order; columns outside the present bitmap are ``NOT_PRESENT``.
Any codec error is re-raised with the table, column, row index, file and offset added.
MariaDB compressed rows events (166-171) zlib-compress the row images (everything after the bitmaps),
behind a header byte ``0x80 | n`` and an ``n``-byte big-endian uncompressed length.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from binlog_model.compiled import maker
from binlog_model.errors import (
    BinlogError,
    DecodeError,
    DecoderStateError,
    TruncatedEventError,
    UnsupportedEventError,
)
from binlog_model.wire.codecs.dispatch import Codec
from binlog_model.wire.codecs.json import decode_json_diffs
from binlog_model.wire.column_types import ColumnType
from binlog_model.wire.compression import inflate_mariadb
from binlog_model.wire.cursor import Cursor
from binlog_model.wire.header import EventHeader
from binlog_model.wire.table_map import TableMapEvent
from binlog_model.wire.values import NOT_PRESENT

__all__ = [
    "COMPLETE_ROWS_F",
    "NO_FOREIGN_KEY_CHECKS_F",
    "RELAXED_UNIQUE_CHECKS_F",
    "ROWS_EVENT_KINDS",
    "STMT_END_F",
    "RowImages",
    "RowsEvent",
    "RowsExtraData",
    "parse_rows_event",
]

STMT_END_F = 0x0001
NO_FOREIGN_KEY_CHECKS_F = 0x0002
RELAXED_UNIQUE_CHECKS_F = 0x0004
COMPLETE_ROWS_F = 0x0008

# event type code -> (kind, version, upstream name, compressed)
ROWS_EVENT_KINDS: dict[int, tuple[str, int, str, bool]] = {
    20: ("insert", 0, "WRITE_ROWS_EVENT_V0", False),
    21: ("update", 0, "UPDATE_ROWS_EVENT_V0", False),
    22: ("delete", 0, "DELETE_ROWS_EVENT_V0", False),
    23: ("insert", 1, "WRITE_ROWS_EVENT_V1", False),
    24: ("update", 1, "UPDATE_ROWS_EVENT_V1", False),
    25: ("delete", 1, "DELETE_ROWS_EVENT_V1", False),
    30: ("insert", 2, "WRITE_ROWS_EVENT", False),
    31: ("update", 2, "UPDATE_ROWS_EVENT", False),
    32: ("delete", 2, "DELETE_ROWS_EVENT", False),
    39: ("partial_update", 2, "PARTIAL_UPDATE_ROWS_EVENT", False),
    166: ("insert", 1, "WRITE_ROWS_COMPRESSED_EVENT_V1", True),
    167: ("update", 1, "UPDATE_ROWS_COMPRESSED_EVENT_V1", True),
    168: ("delete", 1, "DELETE_ROWS_COMPRESSED_EVENT_V1", True),
    169: ("insert", 2, "WRITE_ROWS_COMPRESSED_EVENT", True),
    170: ("update", 2, "UPDATE_ROWS_COMPRESSED_EVENT", True),
    171: ("delete", 2, "DELETE_ROWS_COMPRESSED_EVENT", True),
}

_EXTRA_NDB = 0
_EXTRA_PARTITION = 1
_PARTIAL_JSON_UPDATES = 1

Row = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class RowsExtraData:
    """The v2 rows event extra data: NDB info and partition ids, plus the raw bytes."""

    raw: bytes
    ndb_format: int | None = None
    ndb_data: bytes | None = None
    partition_id: int | None = None
    source_partition_id: int | None = None
    unknown_tag: int | None = None


@dataclass(frozen=True, slots=True)
class RowsEvent:
    """A decoded rows event.

    ``rows``: for insert/delete a tuple of row tuples (one value per table column; ``NOT_PRESENT`` where
    the image omits a column, ``None`` for NULL); for update/partial_update a tuple of (before, after)
    pairs. In a partial update, a JSON column updated in place holds a tuple of ``JsonDiff``.

    The row images are decoded lazily, on the first access to ``rows`` (the compiled row builder reads
    ``images`` directly and never needs them as Python values). Everything before the images (post-header,
    extra data, column count, bitmaps, MariaDB inflation) is checked when the event is decoded; an error in
    the images themselves is raised by the first access to ``rows``, with the same message and location.
    """

    header: EventHeader
    kind: str
    version: int
    table_id: int
    flags: int
    extra_data: RowsExtraData | None
    table_map: TableMapEvent
    column_count: int
    columns_present: tuple[bool, ...]
    columns_present_after: tuple[bool, ...] | None
    images: RowImages
    compressed: bool = False
    _rows: list[tuple[Any, ...]] = field(default_factory=list, init=False, repr=False, compare=False)

    @property
    def rows(self) -> tuple[Any, ...]:
        cache = self._rows
        if not cache:
            cache.append(_decode_images(self))
        return cache[0]

    @property
    def is_statement_end(self) -> bool:
        return bool(self.flags & STMT_END_F)


@dataclass(frozen=True, slots=True)
class RowImages:
    """The undecoded row images of a rows event: ``buf[pos:end]`` (the body, or the inflated MariaDB
    images), and the raw columns-present bitmaps they are read with."""

    buf: bytes | memoryview
    pos: int
    end: int
    present: bytes
    present_after: bytes | None
    name: str      # the upstream event type name, for error locations

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RowImages):
            return NotImplemented
        return (bytes(self.buf[self.pos:self.end]) == bytes(other.buf[other.pos:other.end])
                and self.present == other.present and self.present_after == other.present_after)

    def __hash__(self) -> int:
        return hash(bytes(self.buf[self.pos:self.end]))

    def __reduce__(self) -> tuple[Any, ...]:
        # A memoryview does not pickle: ship just the image bytes.
        data = bytes(self.buf[self.pos:self.end])
        return RowImages, (data, 0, len(data), self.present, self.present_after, self.name)


def parse_rows_event(header: EventHeader, body: memoryview, post_header_len: int,
                     table_maps: Mapping[int, TableMapEvent]) -> RowsEvent:
    """Parse a rows event body (after the common header, before the checksum).

    ``header.event_type`` selects kind and version; ``table_maps`` maps table_id to the TABLE_MAP in
    force. Raises ``DecoderStateError`` for an unknown table_id, ``TruncatedEventError`` when the
    images run past the body, ``UnsupportedEventError`` for a column type with no codec, and
    ``DecodeError`` for other corruption; decode errors name file, offset, event type and table.
    """
    event_type = int(header.event_type)
    spec = ROWS_EVENT_KINDS.get(event_type)
    if spec is None:
        raise UnsupportedEventError(f"event type {event_type} is not a rows event",
                                    file=getattr(header, "file", None),
                                    offset=getattr(header, "offset", None), expected="a rows event type")
    kind, version, name, compressed = spec
    try:
        event = _parse_plain(header, body, post_header_len, table_maps, kind, version, compressed, name)
        if event is not None:
            return event
        return _parse(header, body, post_header_len, table_maps, kind, version, compressed, name)
    except DecodeError as exc:
        raise exc.located(file=getattr(header, "file", None), offset=getattr(header, "offset", None),
                          event_type=name) from None


def _parse_extra(raw: bytes, is_update: bool) -> RowsExtraData:
    cur = Cursor(raw)
    fields: dict[str, Any] = {}
    while cur.remaining:
        tag = cur.u8("extra data tag")
        if tag == _EXTRA_NDB:
            length = cur.u8("NDB info length")
            fields["ndb_format"] = cur.u8("NDB info format")
            fields["ndb_data"] = cur.bytes(max(length - 2, 0), "NDB info")
        elif tag == _EXTRA_PARTITION:
            fields["partition_id"] = cur.u16("partition id")
            if is_update:
                fields["source_partition_id"] = cur.u16("source partition id")
        else:
            # Unknown extra data: keep the raw bytes (the row images do not depend on it).
            fields["unknown_tag"] = tag
            break
    return RowsExtraData(raw=raw, **fields)


# RowsEvent(...) and RowImages(...) with every field given in order, made in C where the core is on.
_new_rows_event = maker(RowsEvent)
_new_images = maker(RowImages)

# The extra data of a v2 rows event that carries none (its length field says 2: itself), shared: immutable.
_NO_EXTRA = RowsExtraData(raw=b"")


def _parse_plain(header: EventHeader, body: memoryview, post_header_len: int,
                 table_maps: Mapping[int, TableMapEvent], kind: str, version: int, compressed: bool,
                 name: str) -> RowsEvent | None:
    """``_parse`` for the rows events servers write by the million (not compressed, no v2 extra data, fewer
    than 251 columns, a known table of that column count, the bitmaps all there), in plain reads of
    ``body``; None for anything else, which ``_parse`` then reads with its checked cursor and typed errors.
    Both give the same event."""
    size = len(body)
    id_len = 4 if post_header_len == 6 else 6
    known = id_len + 2 + (2 if version == 2 else 0)
    at = known if post_header_len <= known else post_header_len      # the column count
    if compressed or size <= at or not isinstance(body, memoryview) or not isinstance(body.obj, bytes):
        return None
    if version == 2 and (body[id_len + 2] != 2 or body[id_len + 3] != 0):
        return None
    count = body[at]
    table_id = int.from_bytes(body[:id_len], "little")
    table_map = table_maps.get(table_id)
    if count >= 0xFB or table_map is None or count != table_map.column_count:
        return None
    is_update = kind in ("update", "partial_update")
    nbytes = (count + 7) >> 3
    pos = at + 1 + (nbytes << 1 if is_update else nbytes)
    if pos > size:
        return None
    present_raw = bytes(body[at + 1:at + 1 + nbytes])
    present_after_raw = bytes(body[at + 1 + nbytes:pos]) if is_update else None
    # (header, kind, version, table_id, flags, extra_data, table_map, column_count, columns_present,
    # columns_present_after, images, compressed): RowsEvent's fields, as _new_rows_event takes them
    return _new_rows_event(header, kind, version, table_id, body[id_len] | body[id_len + 1] << 8,
                           _NO_EXTRA if version == 2 else None, table_map, count, _bits(present_raw, count),
                           _bits(present_after_raw, count) if present_after_raw is not None else None,
                           _new_images(body, pos, size, present_raw, present_after_raw, name), False)


def _parse(header: EventHeader, body: memoryview, post_header_len: int,
           table_maps: Mapping[int, TableMapEvent], kind: str, version: int, compressed: bool,
           name: str) -> RowsEvent:
    cur = Cursor(body)
    id_len = 4 if post_header_len == 6 else 6
    table_id = cur.uint(id_len, "table_id")
    flags = cur.u16("flags")
    # v2 keeps the extra-data length (which counts itself) in the post-header (ROWS_HEADER_LEN_V2 = 10).
    extra_len = cur.u16("extra data length") if version == 2 else 0
    known = id_len + 2 + (2 if version == 2 else 0)
    if post_header_len > known:
        cur.skip(post_header_len - known, "post-header")
    if version == 2 and extra_len < 2:
        raise DecodeError(f"extra data length {extra_len} is below 2", expected="length >= 2")
    table_map = table_maps.get(table_id)
    if table_map is None:
        raise DecoderStateError(
            f"{name} for table_id {table_id} without a preceding TABLE_MAP_EVENT "
            f"[file {getattr(header, 'file', None)}, offset {getattr(header, 'offset', None)}]"
        )
    extra: RowsExtraData | None = None
    is_update = kind in ("update", "partial_update")
    if version == 2:
        extra = _parse_extra(cur.bytes(extra_len - 2, "extra data"), is_update)
    count = cur.lenenc_int("column count")
    if count != table_map.column_count:
        raise DecodeError(
            f"rows event has {count} columns but the TABLE_MAP of `{table_map.schema}`.`{table_map.table}` "
            f"(table_id {table_id}) has {table_map.column_count}",
            expected=f"{table_map.column_count} columns")
    nbytes = (count + 7) >> 3
    present_raw = bytes(cur.view(nbytes, "columns-present bitmap"))
    present = _bits(present_raw, count)
    present_after_raw: bytes | None = None
    present_after: tuple[bool, ...] | None = None
    if is_update:
        present_after_raw = bytes(cur.view(nbytes, "columns-present-after bitmap"))
        present_after = _bits(present_after_raw, count)
    if compressed:
        # MariaDB compresses only the row images; the column count and bitmaps before them are plain.
        buf: bytes | memoryview = memoryview(inflate_mariadb(cur.view(cur.remaining, "compressed rows"),
                                                              "compressed rows event"))
        pos, end = 0, len(buf)
    else:
        buf, pos, end = cur.buf, cur.pos, cur.end
        if not isinstance(buf.obj, bytes):
            # The images are read after this call returns: keep them in bytes nobody can change.
            buf, pos, end = bytes(buf[pos:end]), 0, end - pos
    images = RowImages(buf, pos, end, present_raw, present_after_raw, name)
    return RowsEvent(header=header, kind=kind, version=version, table_id=table_id, flags=flags,
                     extra_data=extra, table_map=table_map, column_count=count, columns_present=present,
                     columns_present_after=present_after, images=images, compressed=compressed)


_BITMAPS: dict[tuple[bytes, int], tuple[bool, ...]] = {}


def _bits(raw: bytes, nbits: int) -> tuple[bool, ...]:
    # Every event of a table logs the same few bitmaps: build each tuple once.
    key = (raw, nbits)
    bits = _BITMAPS.get(key)
    if bits is None:
        bits = tuple(bool(raw[i >> 3] & (1 << (i & 7))) for i in range(nbits))
        if len(_BITMAPS) >= 1024:
            _BITMAPS.clear()
        _BITMAPS[key] = bits
    return bits


def _decode_images(event: RowsEvent) -> tuple[Any, ...]:
    """The row images as Python values (``RowsEvent.rows``); errors as the eager decoder raised them."""
    header = event.header
    file, offset = getattr(header, "file", None), getattr(header, "offset", None)
    try:
        return _decode_rows(event)
    except DecodeError as exc:
        raise exc.located(file=file, offset=offset, event_type=event.images.name) from None
    except BinlogError:
        raise
    except Exception as err:  # a bug in a codec must still surface as our error, as the decoder's do
        raise DecodeError(f"internal decoder failure: {type(err).__name__}: {err}", file=file, offset=offset,
                          event_type=event.images.name) from err


def _decode_rows(event: RowsEvent) -> tuple[Any, ...]:
    table_map = event.table_map
    images = event.images
    count = event.column_count
    buf, pos, end = images.buf, images.pos, images.end
    if not isinstance(buf, memoryview):
        buf = memoryview(buf)
    if end != len(buf):
        buf = buf[:end]
    plan = table_map.row_plan
    idx_before = tuple(i for i, p in enumerate(event.columns_present) if p)
    rows: list[Any] = []
    try:
        if event.kind not in ("update", "partial_update"):
            while pos < end:
                start = pos
                row, pos = _image(buf, pos, plan, idx_before, count, None)
                if pos == start:
                    raise _no_progress(end - pos)
                rows.append(row)
        else:
            assert event.columns_present_after is not None
            idx_after = tuple(i for i, p in enumerate(event.columns_present_after) if p)
            json_cols = tuple(i for i, t in enumerate(table_map.column_types) if t == ColumnType.JSON)
            partial = event.kind == "partial_update"
            while pos < end:
                start = pos
                before, pos = _image(buf, pos, plan, idx_before, count, None)
                partial_cols: frozenset[int] | None = None
                if partial:
                    partial_cols, pos = _value_options(buf, pos, json_cols)
                after, pos = _image(buf, pos, plan, idx_after, count, partial_cols)
                if pos == start:
                    raise _no_progress(end - pos)
                rows.append((before, after))
    except DecodeError as exc:
        exc.reason += (f" (row {len(rows)} of `{table_map.schema}`.`{table_map.table}`, "
                       f"table_id {event.table_id})")
        raise
    return tuple(rows)


def _no_progress(remaining: int) -> DecodeError:
    # An image with no column present is zero bytes long: looping on it would never end.
    return DecodeError(f"row image is empty (no column present) but {remaining} bytes remain",
                       expected="a columns-present bitmap with at least one column, or no more bytes")


def _value_options(buf: memoryview, pos: int, json_cols: tuple[int, ...]) -> tuple[frozenset[int], int]:
    # PARTIAL_UPDATE_ROWS_EVENT after-image prefix: value_options (packed int), then, with
    # PARTIAL_JSON_UPDATES, one bit per JSON column of the table saying "this value is a diff".
    cur = Cursor(buf, pos)
    options = cur.lenenc_int("value_options")
    if options < 0 or not options & _PARTIAL_JSON_UPDATES:
        return frozenset(), cur.pos
    bits = cur.bitmap(len(json_cols), "partial JSON bitmap")
    return frozenset(c for c, b in zip(json_cols, bits, strict=True) if b), cur.pos


def _image(buf: memoryview, pos: int, plan: tuple[tuple[Codec, int], ...], present: tuple[int, ...],
           count: int, partial_cols: frozenset[int] | None) -> tuple[Row, int]:
    nbytes = (len(present) + 7) >> 3
    if pos + nbytes > len(buf):
        raise TruncatedEventError(
            f"NULL bitmap needs {nbytes} bytes at row offset {pos} but only {len(buf) - pos} remain",
            expected="NULL bitmap")
    nulls = buf[pos:pos + nbytes]
    pos += nbytes
    if partial_cols is None and len(present) == count:
        # Every column present (FULL image): no NOT_PRESENT slots, and the NULL bitmap as one int.
        null_bits = int.from_bytes(nulls, "little")
        out: list[Any] = []
        append = out.append
        try:
            if null_bits:
                for codec, meta in plan:
                    if null_bits & 1:
                        append(None)
                    else:
                        value, pos = codec(buf, pos, meta)
                        append(value)
                    null_bits >>= 1
            else:
                for codec, meta in plan:
                    value, pos = codec(buf, pos, meta)
                    append(value)
        except DecodeError as exc:
            exc.reason += f" in column {len(out)}"
            raise
        return tuple(out), pos
    row: list[Any] = [NOT_PRESENT] * count
    for k, i in enumerate(present):
        if nulls[k >> 3] & (1 << (k & 7)):
            row[i] = None
            continue
        codec, meta = plan[i]
        try:
            if partial_cols and i in partial_cols:
                row[i], pos = decode_json_diffs(buf, pos, meta)
            else:
                row[i], pos = codec(buf, pos, meta)
        except DecodeError as exc:
            exc.reason += f" in column {i}"
            raise
    return tuple(row), pos

