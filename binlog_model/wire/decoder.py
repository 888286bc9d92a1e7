"""The sans-IO binlog decoder: bytes in with ``receive_data``, typed events out with ``next_event``.

Strategy: one ``bytearray`` holds unread input with a read index; it is compacted only when the consumed
prefix is larger than what remains, so decoding is O(n) however the input is chunked (one byte at a time
included). An event is cut out only once all ``event_size`` bytes are present; ``event_size`` is checked
against the header length and a cap (``MAX_EVENT_SIZE``, 1 GiB max_allowed_packet plus slack) before any
buffering, so a corrupt length can never make the decoder wait for, or allocate, gigabytes. Stream state
learned from the FORMAT_DESCRIPTION (header length, post-header lengths, checksum algorithm) lives here,
as does the table_id -> TableMapEvent map the ROWS parser needs (cleared at each FORMAT_DESCRIPTION,
i.e. at each new file). After the first error every call raises ``DecoderStateError``. Event bodies go to
``parsers/`` (one module per family), ``table_map.py`` and ``rows.py``; the inner events of a
TRANSACTION_PAYLOAD are decoded here, since they share the stream state. The walks past events a pass
does not parse (``skip_types`` with ``drop_skipped``) are ``skipping.SkipWalks``, a mixin on the same
buffer. A statement lane (``use_lane``; ``resolve.lane`` says what it is) is offered the same buffer
before each event while its assembler arms it. Over 500 lines for that reason: the framing, the
FORMAT_DESCRIPTION state, the payload's inner events and the lane all read one buffer and one state.

Resuming mid-file (Spark slices, replication from a position): keep the raw bytes of the file's
FORMAT_DESCRIPTION event (``decoder.format_description_bytes``), then build
``BinlogDecoder.resume(fde_bytes, offset, file=...)`` and feed it bytes starting at ``offset``, which must be
an event boundary (ideally a transaction start, so no TABLE_MAP is missing).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Mapping
from enum import Enum
from typing import Any, Final, Protocol, cast

from binlog_model.compiled import maker
from binlog_model.errors import (
    BadMagicError,
    BinlogError,
    ChecksumMismatchError,
    ConfigError,
    DecodeError,
    DecoderStateError,
    TruncatedEventError,
    UnsupportedEventError,
)
from binlog_model.wire.checksum import CRC32
from binlog_model.wire.events import (
    Event,
    FormatDescriptionEvent,
    SkippedEvent,
    SkippedTransaction,
    StartEventV3,
    TransactionPayloadEvent,
    UndecodableEvent,
)
from binlog_model.wire.header import (
    EVENT_TYPES,
    ROWS_EVENT_TYPES,
    EventHeader,
    EventType,
    FormatContext,
    default_context,
    event_type_name,
    legacy_context,
)
from binlog_model.wire.parsers import EVENT_PARSERS, parse_unknown_event
from binlog_model.wire.parsers.control import (
    BINLOG_IN_USE_F,
    parse_format_description_event,
    parse_start_event_v3,
)
from binlog_model.wire.parsers.payload import inner_events, unpack_transaction_payload
from binlog_model.wire.rows import RowsEvent, parse_rows_event
from binlog_model.wire.skipping import COMPACT_MIN, NEVER_RUN_SKIPPED, SkipWalks
from binlog_model.wire.structs import HEADER_V1 as _HEADER_V1
from binlog_model.wire.structs import HEADER_V4 as _HEADER_V4
from binlog_model.wire.structs import U32 as _U32
from binlog_model.wire.table_map import TableMapEvent, parse_table_map_event

__all__ = ["BINLOG_MAGIC", "MAX_EVENT_SIZE", "NEED_DATA", "BinlogDecoder", "NeedData", "use_crc32"]

BINLOG_MAGIC: Final = b"\xfebin"
# MySQL caps an event at max_allowed_packet (at most 1 GiB) plus the header and post-header; anything
# larger is a corrupt length field, refused before buffering.
MAX_EVENT_SIZE: Final = (1 << 30) + (1 << 16)

_crc32: Callable[..., int] = CRC32      # what events' checksums are checked with (``use_crc32`` swaps it)
_new_header = maker(EventHeader)

# The event types a statement lane reads (TABLE_MAP, plain rows events, ROWS_QUERY, ANNOTATE_ROWS): a decoder
# told to skip any of them takes no lane, but for the statement-text events (ROWS_QUERY, ANNOTATE_ROWS) when
# the lane writes no text (it reads them, and leaves their text out, as skipping them does).
LANE_TYPES: Final = frozenset({19, 23, 24, 25, 29, 30, 31, 32, 160})
_TEXT_TYPES: Final = frozenset({29, 160})


class Lane(Protocol):
    """What the decoder asks of a statement lane (``resolve.lane.StatementLane``, which says why)."""

    armed: bool
    map_bodies: dict[int, bytes]
    writes_text: bool       # its statements carry the statement text

    def run(self, buf: bytearray, pos: int, base: int, ctx: FormatContext, crc_len: int, verify: bool,
            max_event_size: int, file: str, make_header: Callable[..., EventHeader]
            ) -> tuple[Any, int] | str | None:
        ...


def use_crc32(crc32: Callable[..., int]) -> None:
    """Check decoded events' CRC32 with ``crc32`` (``zlib.crc32``'s signature and results) from now on; the
    skip walks keep ``wire.checksum.CRC32``."""
    global _crc32
    _crc32 = crc32


class NeedData(Enum):
    """The type of ``NEED_DATA``: feed more bytes (or ``b""`` at end of input) and call again.

    A one-member enum, so ``event is not NEED_DATA`` narrows ``Event | NeedData`` to ``Event`` for type
    checkers, and the sentinel stays one object across pickling."""

    NEED_DATA = "NEED_DATA"

    def __repr__(self) -> str:
        return "NEED_DATA"

    __str__ = __repr__


NEED_DATA: Final = NeedData.NEED_DATA


_PARSED_MAPS_MAX = 512


class BinlogDecoder(SkipWalks):
    """Decode a binlog byte stream into events, without doing any I/O.

    Args:
        file: name used in error messages and in every ``EventHeader.file``.
        verify_checksum: check each event's CRC32 footer when the FORMAT_DESCRIPTION says CRC32.
        expect_magic: the stream starts with ``\\xfebin`` (a file from offset 0).
        start_offset: the file offset of the first byte fed (for positions and error messages).
        skip_types: type codes returned as ``SkippedEvent`` without parsing the body (the checksum is still
            verified; FORMAT_DESCRIPTION and START_EVENT_V3 still update the decoder's state).
        drop_skipped: pass over the ``skip_types`` events without returning them at all (a pass that
            wants only the other events: the DDL pre-pass). Runs of them are walked in one tight loop
            (``_skip_run``: header, length and checksum only), with the same checks and errors.
        verify_skipped: False: do not check the checksums of ``skip_types`` events (for a pass that leaves
            them to a later full decode, which checks them: the Spark pre-pass, whose tasks decode every
            event). Their lengths are still checked; the events it parses keep their checksums checked.
        skip_transactions: with ``drop_skipped``, a whole transaction of only its GTID, a QUERY ``BEGIN``,
            ``skip_types`` events and its XID or QUERY ``COMMIT`` comes back as one ``SkippedTransaction``
            (those events unparsed: a pre-pass that needs every transaction's start but no rows). One
            longer than ``skipping._SKIP_TRANSACTION_MAX`` (8 MiB), damaged or cut by the input's end
            comes back event by event, with the usual errors; while one may still be whole, its events
            wait for the rest of it (see ``skipping``).
        max_event_size: refuse larger ``event_size`` fields (default ``MAX_EVENT_SIZE``).
        raw_undecodable: a diagnostic mode (``dump``): an event whose framing and checksum are sound but
            whose body does not decode comes out as ``UndecodableEvent`` (raw body and the error), and
            decoding goes on. Off by default: every path that needs values must get the typed error.

    Raises (from ``next_event``): ``BadMagicError``, ``TruncatedEventError``, ``ChecksumMismatchError``,
    ``UnsupportedEventError`` / ``EncryptedBinlogError``, other ``DecodeError``s from event bodies, and
    ``DecoderStateError`` for rows without a TABLE_MAP or any call after an error.
    """

    def __init__(self, file: str | None = None, verify_checksum: bool = True, expect_magic: bool = True,
                 start_offset: int = 0, skip_types: frozenset[int] | set[int] = frozenset(), *,
                 max_event_size: int = MAX_EVENT_SIZE, raw_undecodable: bool = False,
                 drop_skipped: bool = False, verify_skipped: bool = True,
                 skip_transactions: bool = False) -> None:
        if start_offset < 0:
            raise ConfigError(f"start_offset must be >= 0, got {start_offset}")
        if expect_magic and start_offset not in (0,):
            raise ConfigError("expect_magic=True needs start_offset=0: the magic only sits at a file's start")
        self.file = file
        self.verify_checksum = verify_checksum
        self.skip_types = frozenset(int(t) for t in skip_types)
        self._run_skipped = self.skip_types - NEVER_RUN_SKIPPED     # what _skip_run passes over
        self.max_event_size = max_event_size
        self.raw_undecodable = raw_undecodable
        self.drop_skipped = drop_skipped
        self.verify_skipped = verify_skipped
        self.skip_transactions = skip_transactions
        self.skipped = 0            # skip_types events passed over by drop_skipped (in transactions too)
        self._buf = bytearray()
        self._pos = 0
        self._base = start_offset  # stream offset of self._buf[0]
        self._need_magic = expect_magic
        self._eof = False
        self._failed = False
        # the inner events of the last TRANSACTION_PAYLOAD not handed out yet (decoded one at a time)
        self._inner: Iterator[tuple[int, bytes]] | None = None
        self._inner_offset = 0
        self._ctx: FormatContext | None = None
        self._checksum = False
        self._first_event = True
        self._table_maps: dict[int, TableMapEvent] = {}
        # Parsed TABLE_MAPs by their exact body: a server logs the same one before every statement on a
        # table, and parsing its optional metadata costs more than the statement's rows event.
        self._parsed_maps: dict[tuple[bytes, int, bool], TableMapEvent] = {}
        self.format_description: FormatDescriptionEvent | None = None
        self.format_description_bytes: bytes | None = None
        self.lane: Lane | None = None     # see use_lane
        self.lane_may_wait = False      # set by a reader while more input may follow (see _next_one)

    # -- construction helpers ------------------------------------------------------------------------
    @classmethod
    def for_events(cls, server_version: str = "5.7.30-log", checksum: bool = True, *, file: str | None = None,
                   start_offset: int = 0, verify_checksum: bool = True,
                   skip_types: frozenset[int] = frozenset()) -> BinlogDecoder:
        """A decoder for bare v4 events (no magic, no FORMAT_DESCRIPTION), e.g. the BINLOG '...' blocks of
        ``mysqlbinlog`` output: standard MySQL 5.7+/MariaDB post-header lengths, CRC32 footers when
        ``checksum``."""
        dec = cls(file=file, verify_checksum=verify_checksum, expect_magic=False, start_offset=start_offset,
                  skip_types=skip_types)
        dec._ctx = default_context(server_version)
        dec._checksum = checksum
        dec._first_event = False
        return dec

    @classmethod
    def resume(cls, format_description: bytes, offset: int, *, file: str | None = None,
               verify_checksum: bool = True, skip_types: frozenset[int] = frozenset()) -> BinlogDecoder:
        """A decoder that continues a file at ``offset`` (an event boundary), given the raw bytes of that
        file's FORMAT_DESCRIPTION event (``format_description_bytes`` of a decoder that read it)."""
        dec = cls(file=file, verify_checksum=verify_checksum, expect_magic=False, start_offset=offset,
                  skip_types=skip_types)
        dec.feed_format_description(format_description)
        return dec

    def feed_format_description(self, event_bytes: bytes | bytearray | memoryview) -> FormatDescriptionEvent:
        """Learn the stream layout from a whole FORMAT_DESCRIPTION event (header + body + footer).

        The event is not emitted by ``next_event``. Raises ``DecodeError`` subclasses like ``next_event``."""
        self._check_alive()
        if not isinstance(event_bytes, bytes | bytearray | memoryview):  # callers without type checking
            self._failed = True  # type: ignore[unreachable]
            raise ConfigError(f"a FORMAT_DESCRIPTION event must be bytes, not {type(event_bytes).__name__}")
        if len(event_bytes) < 19:
            self._failed = True
            raise TruncatedEventError(f"a FORMAT_DESCRIPTION event needs at least 19 bytes, got "
                                      f"{len(event_bytes)}", file=self.file,
                                      expected="FORMAT_DESCRIPTION_EVENT")
        try:
            event = self._decode(bytes(event_bytes), 4, None)
        except BinlogError:
            self._failed = True
            raise
        self._first_event = False  # the stream already has its layout: no binlog v1 sniffing
        if not isinstance(event, FormatDescriptionEvent):
            self._failed = True
            raise DecodeError("not a FORMAT_DESCRIPTION event", file=self.file,
                              event_type=event_type_name(event.header.event_type),
                              expected="FORMAT_DESCRIPTION_EVENT")
        return event

    # -- state ---------------------------------------------------------------------------------------
    @property
    def offset(self) -> int:
        """Stream offset of the next byte not yet consumed (the next event's start between events)."""
        return self._base + self._pos

    @property
    def received_end(self) -> int:
        """Stream offset just past the input received so far (``offset`` when nothing is held)."""
        return self._base + len(self._buf)

    @property
    def context(self) -> FormatContext | None:
        return self._ctx

    @property
    def checksum_enabled(self) -> bool:
        return self._checksum

    @property
    def table_maps(self) -> Mapping[int, TableMapEvent]:
        return self._table_maps

    @property
    def failed(self) -> bool:
        return self._failed

    def use_lane(self, lane: Lane) -> None:
        """Offer the buffer to ``lane`` (``resolve.lane``: runs of row statements read in C) before each
        event while it is armed; not in the modes that skip or keep undecodable events, which it would
        bypass (skipped statement-text events excepted, for a lane that writes no text)."""
        skipped = self.skip_types & LANE_TYPES
        if not self.raw_undecodable and (not skipped or (skipped <= _TEXT_TYPES and not lane.writes_text)):
            self.lane = lane

    def _lane_header(self, ts: int, etype: int, server_id: int, size: int, log_pos: int, flags: int,
                     offset: int) -> EventHeader:
        return _new_header(ts, EVENT_TYPES.get(etype, etype), server_id, size, log_pos, flags, offset,
                           self.file, None)

    # -- input / output ------------------------------------------------------------------------------
    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Append input; ``b""`` marks the end of input (a partial event then becomes an error)."""
        self._check_alive()
        if not data:
            self._eof = True
            return
        if self._eof:
            self._failed = True
            raise DecoderStateError("receive_data after end of input (b'' was already received)")
        self._buf += data

    def next_event(self) -> Event | NeedData:
        """The next event, or ``NEED_DATA`` when more input is needed (or the input is done)."""
        if self._failed:
            self._check_alive()
        try:
            return self._next_one() if not self.drop_skipped else self._next_event()
        except DecodeError as err:
            self._failed = True
            raise err.located(file=self.file) from err.__cause__
        except BinlogError:
            self._failed = True
            raise
        except Exception as err:  # a bug in a parser must still surface as our error, with its location
            self._failed = True
            raise DecodeError(f"internal decoder failure: {type(err).__name__}: {err}", file=self.file,
                              offset=self.offset) from err

    def __iter__(self) -> Iterator[Event]:
        """Yield the events decodable from the input received so far."""
        while (event := self.next_event()) is not NEED_DATA:
            yield event

    # -- internals -----------------------------------------------------------------------------------
    def _check_alive(self) -> None:
        if self._failed:
            raise DecoderStateError(f"the decoder already failed{f' on {self.file}' if self.file else ''}; "
                                    "start a new one")

    def _next_event(self) -> Event | NeedData:
        """``_next_one`` past the skipped events (``drop_skipped``), and the skipped transactions."""
        while True:
            if self._inner is None and self._ctx is not None and not self._need_magic:
                self._skip_run()
                if self.skip_transactions:
                    passed = self._skip_transaction()
                    if isinstance(passed, SkippedTransaction):
                        return passed
                    if passed:          # it may be one: wait for the rest of it
                        return NEED_DATA
            event = self._next_one()
            if type(event) is not SkippedEvent:
                return event
            self.skipped += 1

    def _next_one(self) -> Event | NeedData:
        if self._inner is not None:
            for index, raw in self._inner:
                return self._decode(raw, self._inner_offset, index)
            self._inner = None
        avail = len(self._buf) - self._pos
        if self._need_magic:
            if avail < 4:
                if self._eof:
                    raise BadMagicError(f"input of {avail} bytes is too short for the binlog magic",
                                        offset=self._base, expected="\\xfebin")
                return NEED_DATA
            magic = bytes(self._buf[self._pos:self._pos + 4])
            if magic != BINLOG_MAGIC:
                raise BadMagicError(f"not a binlog: starts with {magic!r}", offset=self._base,
                                    expected="\\xfebin")
            self._pos += 4
            avail -= 4
            self._need_magic = False
        header_len = self._ctx.header_length if self._ctx else 19
        # binlog v1 (MySQL 3.23): a 13-byte header, so its START_EVENT_V3 is only 13 + 56 bytes long
        if (self._first_event and avail >= 13 and self._buf[self._pos + 4] == EventType.START_EVENT_V3
                and _U32.unpack_from(self._buf, self._pos + 9)[0] < 19 + 56):
            header_len = 13
        lane = self.lane
        if lane is not None and lane.armed and header_len == 19 and not self._first_event and self._ctx:
            got = lane.run(self._buf, self._pos, self._base, self._ctx, 4 if self._checksum else 0,
                           self.verify_checksum, self.max_event_size, self.file or "", self._lane_header)
            if got == "more":
                # the buffer ends inside a statement the lane can read: wait for the next chunk when the
                # reader says one may come (SliceReader; at the input's end the Python path reads it)
                if self.lane_may_wait and not self._eof:
                    return NEED_DATA
            elif isinstance(got, tuple):
                run, pos = got
                self._pos = pos
                if pos >= COMPACT_MIN and pos * 2 >= len(self._buf):
                    del self._buf[:pos]
                    self._base += pos
                    self._pos = 0
                return cast(Event, run)     # a lane's own event: only its assembler reads it
        if avail < header_len:
            if self._eof and avail:
                raise TruncatedEventError(f"input ends {avail} bytes into an event header",
                                          offset=self.offset, expected=f"{header_len}-byte event header")
            return NEED_DATA
        buf = self._buf
        start = self._pos
        event_size = _U32.unpack_from(buf, start + 9)[0]
        if event_size < header_len:
            raise TruncatedEventError(f"event_size {event_size} is smaller than the {header_len}-byte header",
                                      expected=f"event_size >= {header_len}", offset=self.offset,
                                      event_type=event_type_name(self._buf[start + 4]))
        if event_size > self.max_event_size:
            raise DecodeError(f"event_size {event_size} exceeds the {self.max_event_size}-byte limit",
                              expected="a sane event_size (corrupt length field?)", offset=self.offset,
                              event_type=event_type_name(self._buf[start + 4]))
        if avail < event_size:
            if self._eof:
                raise TruncatedEventError(f"event_size {event_size} but the input ends after {avail} bytes",
                                          expected=f"{event_size} bytes", offset=self.offset,
                                          event_type=event_type_name(self._buf[start + 4]))
            return NEED_DATA
        # The event's one copy: a view slice goes straight to ``bytes`` (slicing the bytearray itself
        # would copy twice). The view is released before the compaction below resizes the buffer.
        with memoryview(buf) as view:
            raw = view[start:start + event_size].tobytes()
        offset = self._base + start
        pos = self._pos = start + event_size
        if pos >= COMPACT_MIN and pos * 2 >= len(buf):     # inline: the hot path of every decode
            del buf[:pos]
            self._base += pos
            self._pos = 0
        if self._first_event:
            if header_len == 13:
                self._ctx = legacy_context(1, "")
            self._first_event = False
        return self._decode(raw, offset, None)    # a TRANSACTION_PAYLOAD's inner events come next

    def _decode(self, raw: bytes, offset: int, inner_index: int | None) -> Event:
        ctx = self._ctx or default_context()
        header_len = ctx.header_length
        try:
            if header_len == 13:
                ts, etype, server_id, size = _HEADER_V1.unpack_from(raw, 0)
                log_pos, flags = 0, 0
            else:
                ts, etype, server_id, size, log_pos, flags = _HEADER_V4.unpack_from(raw, 0)
            code: int = EVENT_TYPES.get(etype, etype)
            header = _new_header(ts, code, server_id, size, log_pos, flags, offset, self.file, inner_index)
            if not self.raw_undecodable or etype == EventType.FORMAT_DESCRIPTION_EVENT:
                return self._decode_body(header, raw, ctx, inner_index)
            try:
                event = self._decode_body(header, raw, ctx, inner_index)
                if isinstance(event, RowsEvent):
                    event.rows  # noqa: B018 - row images decode lazily; here a bad one must show raw now
                return event
            except ChecksumMismatchError:
                raise   # the bytes themselves are damaged: not a body to show
            except (DecodeError, DecoderStateError) as err:
                if isinstance(err, DecodeError):
                    err.located(offset=offset, event_type=event_type_name(raw[4]), file=self.file)
                crc = 4 if self._checksum and inner_index is None else 0
                return UndecodableEvent(header, raw[header_len:len(raw) - crc], err)
        except DecodeError as err:
            raise err.located(offset=offset, event_type=event_type_name(raw[4]),
                              file=self.file) from err.__cause__
        except struct.error as err:
            raise TruncatedEventError(f"event too short for its header: {err}", offset=offset,
                                      event_type=event_type_name(raw[4]), file=self.file) from err

    def _decode_body(self, header: EventHeader, raw: bytes, ctx: FormatContext,
                     inner_index: int | None) -> Event:
        # The plain code for the tests below: hashing the EventType member (an Enum) runs Python code.
        etype = raw[4]
        mv = memoryview(raw)
        if etype == EventType.FORMAT_DESCRIPTION_EVENT and inner_index is None:
            fde = parse_format_description_event(header, mv[ctx.header_length:])
            if fde.checksum_alg == 1:
                self._verify(raw, header)
            elif fde.checksum_alg not in (0, None):
                raise UnsupportedEventError(f"unknown checksum algorithm {fde.checksum_alg}",
                                            expected="0 (OFF) or 1 (CRC32)")
            self._ctx = FormatContext(fde.binlog_version, fde.header_length, fde.post_header_lengths,
                                      fde.server_version)
            self._checksum = fde.checksum_alg == 1
            self._table_maps.clear()
            self.format_description = fde
            self.format_description_bytes = raw
            return SkippedEvent(header, len(raw)) if etype in self.skip_types else fde
        # Events inside a TRANSACTION_PAYLOAD carry no checksum footer: the payload event has one.
        crc_len = 4 if self._checksum and inner_index is None else 0
        if crc_len:
            if len(raw) < ctx.header_length + 4:
                raise TruncatedEventError(f"event_size {len(raw)} leaves no room for the CRC32 footer",
                                          expected=f">= {ctx.header_length + 4} bytes")
            # a matching CRC checked inline (an FDE, whose CRC may need its in-use flag cleared, is read
            # above); ``_verify`` computes it again to raise the error
            if (self.verify_checksum and (self.verify_skipped or etype not in self.skip_types)
                    and _crc32(mv[:-4]) != _U32.unpack_from(raw, len(raw) - 4)[0]):
                self._verify(raw, header)
        body = mv[ctx.header_length:len(raw) - crc_len]
        if etype in self.skip_types:
            return SkippedEvent(header, len(raw))
        if etype == EventType.START_EVENT_V3:
            start: StartEventV3 = parse_start_event_v3(header, body)
            if self._ctx is None or self._ctx.binlog_version < 4:
                self._ctx = legacy_context(1 if ctx.header_length == 13 else 3, start.server_version)
            return start
        if etype == EventType.TABLE_MAP_EVENT:
            return self._parse_table_map(header, body, ctx)
        if etype in ROWS_EVENT_TYPES:
            return self._parse_rows(header, body, ctx)
        if etype == EventType.TRANSACTION_PAYLOAD_EVENT:
            if inner_index is not None:
                raise DecodeError("TRANSACTION_PAYLOAD nested inside another", expected="no nesting")
            return self._parse_payload(header, body, ctx)
        return EVENT_PARSERS.get(etype, parse_unknown_event)(header, body, ctx)

    def _verify(self, raw: bytes, header: EventHeader) -> None:
        if not self.verify_checksum:
            return
        stored = _U32.unpack_from(raw, len(raw) - 4)[0]
        if header.event_type == EventType.FORMAT_DESCRIPTION_EVENT and header.flags & BINLOG_IN_USE_F:
            # The server sets LOG_EVENTBINLOG_IN_USE_F in the FDE of an open file after computing the CRC
            # (and clears it on close), so the CRC covers the header with that flag clear.
            patched = bytearray(raw[:-4])
            patched[17] &= ~BINLOG_IN_USE_F & 0xFF
            computed = _crc32(patched)
        else:
            computed = _crc32(memoryview(raw)[:-4])
        if stored != computed:
            raise ChecksumMismatchError(
                f"CRC32 mismatch: stored 0x{stored:08x}, computed 0x{computed:08x}", stored=stored,
                computed=computed, offset=header.offset, event_type=header.type_name, file=self.file)

    def _parse_table_map(self, header: EventHeader, body: memoryview, ctx: FormatContext) -> TableMapEvent:
        post_header_len = ctx.post_header_len(header.event_type)
        mariadb = "mariadb" in ctx.server_version.lower()
        key = (bytes(body), post_header_len, mariadb)
        seen = self._parsed_maps.get(key)
        if seen is None:
            tm = parse_table_map_event(header, body, post_header_len, mariadb=mariadb)
            if len(self._parsed_maps) >= _PARSED_MAPS_MAX:
                self._parsed_maps.clear()
            self._parsed_maps[key] = tm
        else:
            tm = seen.with_header(header)   # the same bytes parse alike; only "where" differs
        self._table_maps[tm.table_id] = tm
        if self.lane is not None:
            self.lane.map_bodies[tm.table_id] = key[0]
        return tm

    def _parse_rows(self, header: EventHeader, body: memoryview, ctx: FormatContext) -> RowsEvent:
        return parse_rows_event(header, body, ctx.post_header_len(header.event_type), self._table_maps)

    def _parse_payload(self, header: EventHeader, body: memoryview,
                       ctx: FormatContext) -> TransactionPayloadEvent:
        compression, size, uncompressed_size, payload = unpack_transaction_payload(body,
                                                                                   self.max_event_size * 4)
        # inflated and decoded one inner event at a time as they are asked for: memory stays flat
        count, events = inner_events(bytes(payload), compression, uncompressed_size, ctx.header_length)
        self._inner, self._inner_offset = enumerate(events), header.offset
        return TransactionPayloadEvent(header, compression, size, uncompressed_size, count)
