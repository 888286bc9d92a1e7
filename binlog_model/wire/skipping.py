"""How ``BinlogDecoder`` passes over what a pass does not parse (``skip_types`` with ``drop_skipped``): the
walks, a mixin of the decoder working on its one buffer.

Strategy: most of a binlog is rows and table maps, which the DDL pre-pass never parses. ``_skip_run``
walks a run of them by header and length (and checksum, unless ``verify_skipped`` is off) in one tight
loop. ``_skip_transaction`` (``skip_transactions``) passes over a whole transaction of rows only (its GTID,
a QUERY ``BEGIN``, those events, an XID or QUERY ``COMMIT``) as one ``SkippedTransaction``: the QUERYs'
text is read by ``parsers.query.query_text_start``, nothing else is parsed, and the events it reads keep
their checksums checked. Both stop before anything they do not simply pass over (another event, an
incomplete or damaged one), which the decoder's ``_next_one`` then decodes or reports with its usual error
and position: the walks change how fast events are found, never what is found. A transaction not all
here yet waits for the rest of itself, up to ``_SKIP_TRANSACTION_MAX`` bytes, so what comes out does not
depend on how the input is fed.
"""

from __future__ import annotations

from typing import Final

from binlog_model.wire.checksum import CRC32
from binlog_model.wire.events import SkippedTransaction
from binlog_model.wire.header import EVENT_TYPES, EventHeader, EventType, FormatContext
from binlog_model.wire.parsers.query import query_text_start
from binlog_model.wire.structs import HEADER_V4 as _HEADER_V4
from binlog_model.wire.structs import U32 as _U32

__all__ = ["COMPACT_MIN", "NEVER_RUN_SKIPPED", "SkipWalks"]

# The decoder compacts its buffer once the consumed prefix is at least this and larger than what remains.
COMPACT_MIN: Final = 1 << 16
# Types ``_skip_run`` always leaves to ``_next_one``: they change the decoder's state even when skipped.
NEVER_RUN_SKIPPED: Final = frozenset({int(EventType.FORMAT_DESCRIPTION_EVENT), int(EventType.START_EVENT_V3)})
# What ``_skip_transaction`` reads: the events that open a transaction (MySQL's GTID, ANONYMOUS_GTID and
# GTID_TAGGED, MariaDB's GTID), a QUERY (its BEGIN or COMMIT), an XID.
_GTID_TYPES: Final = frozenset({int(EventType.GTID_LOG_EVENT), int(EventType.ANONYMOUS_GTID_LOG_EVENT),
                                int(EventType.GTID_TAGGED_LOG_EVENT), int(EventType.GTID_EVENT)})
_QUERY: Final = int(EventType.QUERY_EVENT)
_XID: Final = int(EventType.XID_EVENT)
# A transaction longer than this always comes back event by event: it bounds what the decoder buffers
# while it waits for the rest of one it could pass over whole.
_SKIP_TRANSACTION_MAX: Final = 8 << 20


class SkipWalks:
    """The walks of ``BinlogDecoder`` (its state, declared here for them; ``BinlogDecoder`` sets it)."""

    file: str | None
    verify_checksum: bool
    verify_skipped: bool
    skip_types: frozenset[int]
    max_event_size: int
    skipped: int
    _run_skipped: frozenset[int]
    _buf: bytearray
    _pos: int
    _base: int
    _eof: bool
    _ctx: FormatContext | None
    _checksum: bool
    _first_event: bool
    # A transaction waiting for the rest of itself: (its start, where its walk stopped, as stream offsets;
    # events walked), so each event of it is walked once however the input is fed.
    _waiting: tuple[int, int, int] | None = None

    def _skip_run(self) -> None:
        """Pass over the run of whole ``skip_types`` events at the read position: the hot loop of the DDL
        pre-pass (most of a binlog is rows and table maps). It stops before anything it does not simply
        skip (another type, a FORMAT_DESCRIPTION, an incomplete event, a bad length or checksum), which
        ``_next_one`` then decodes, or reports with its usual error and position."""
        if self._ctx is None or self._ctx.header_length < 19:
            return
        with memoryview(self._buf) as view:
            pos, count = self._pass_skipped(view, self._pos)
        if count:
            self.skipped += count
            self._advance(pos)

    def _pass_skipped(self, view: memoryview, pos: int) -> tuple[int, int]:
        """Where the run of whole, sound ``skip_types`` events at ``pos`` ends, and how many it holds."""
        assert self._ctx is not None
        header_len = self._ctx.header_length
        crc_len = 4 if self._checksum else 0
        verify = crc_len and self.verify_checksum and self.verify_skipped
        skip = self._run_skipped
        buf, end, limit = self._buf, len(self._buf), self.max_event_size
        unpack, crc32 = _U32.unpack_from, CRC32
        count = 0
        while end - pos >= header_len and buf[pos + 4] in skip:
            size = unpack(buf, pos + 9)[0]
            if size < header_len + crc_len or size > limit or end - pos < size:
                break
            if verify and crc32(view[pos:pos + size - 4]) != unpack(buf, pos + size - 4)[0]:
                break
            pos += size
            count += 1
        return pos, count

    def _advance(self, pos: int) -> None:
        """Consume the buffer up to ``pos``: the compaction of the decoder's module docstring."""
        self._pos = pos
        if pos >= COMPACT_MIN and pos * 2 >= len(self._buf):
            del self._buf[:pos]
            self._base += pos
            self._pos = 0
        self._first_event = False

    def _skip_transaction(self) -> SkippedTransaction | bool:
        """At a GTID event: the whole transaction as a ``SkippedTransaction`` when it is made of only its
        GTID, a QUERY ``BEGIN`` (MySQL; none in MariaDB), ``skip_types`` events and an XID or QUERY
        ``COMMIT``, each whole, of a sane length and with a sound checksum (as ``_skip_run`` checks them;
        the QUERYs' text read by ``query_text_start``, nothing else parsed). True: it may be one and the
        rest of it is not here yet. False: not one (another event, too long, damaged, or cut by the
        input's end): ``_next_one`` decodes its events, or raises their errors, one by one."""
        ctx = self._ctx
        assert ctx is not None
        header_len = ctx.header_length
        buf, start = self._buf, self._pos
        waiting, self._waiting = self._waiting, None
        if header_len < 19 or len(buf) - start < header_len or buf[start + 4] not in _GTID_TYPES:
            return False
        cap = start + _SKIP_TRANSACTION_MAX
        with memoryview(buf) as view:
            if waiting is not None and waiting[0] == self._base + start:
                pos, count = waiting[1] - self._base, waiting[2]    # GTID, BEGIN, events to pos: sound
            else:
                pos = self._sound_event(view, start, cap)
                if pos <= 0:
                    return pos == 0
                if len(buf) - pos < header_len:     # BEGIN or not: not known yet
                    return self._sound_event(view, pos, cap) == 0
                if buf[pos + 4] == _QUERY:
                    after = self._sound_event(view, pos, cap)
                    if after == 0:
                        return True
                    if after > 0 and self._query_text(pos, after) == b"BEGIN":
                        pos = after
                count = 0
            pos, walked = self._pass_skipped(view, pos)
            count += walked
            end = self._sound_event(view, pos, cap)
        if end <= 0:
            # the run stopped at an event not here yet, or at one that does not simply skip (damaged)
            if end == 0:
                self._waiting = (self._base + start, self._base + pos, count)
            return end == 0
        kind = buf[pos + 4]
        if kind != _XID and not (kind == _QUERY and self._query_text(pos, end) == b"COMMIT"):
            return False
        ts, etype, server_id, size, log_pos, flags = _HEADER_V4.unpack_from(buf, start)
        header = EventHeader(ts, EVENT_TYPES.get(etype, etype), server_id, size, log_pos, flags,
                             self._base + start, self.file, None)
        self.skipped += count
        self._advance(end)
        return SkippedTransaction(header, end - start)

    def _sound_event(self, view: memoryview, pos: int, cap: int) -> int:
        """The end of the event at ``pos`` when it is whole in the buffer, of a sane length, ends by
        ``cap`` and (checksums verified) its checksum matches; 0 when it is not all here yet and may
        still be; -1 otherwise (a skipped event that stopped ``_pass_skipped`` for its checksum too)."""
        assert self._ctx is not None
        header_len = self._ctx.header_length
        crc_len = 4 if self._checksum else 0
        buf = self._buf
        if len(buf) - pos < header_len:
            return 0 if not self._eof and pos + header_len <= cap else -1
        size: int = _U32.unpack_from(buf, pos + 9)[0]
        if size < header_len + crc_len or size > self.max_event_size or pos + size > cap:
            return -1
        if len(buf) - pos < size:
            return -1 if self._eof else 0
        verify = crc_len and self.verify_checksum and (self.verify_skipped
                                                       or buf[pos + 4] not in self.skip_types)
        if verify and CRC32(view[pos:pos + size - 4]) != _U32.unpack_from(buf, pos + size - 4)[0]:
            return -1
        return pos + size

    def _query_text(self, pos: int, end: int) -> bytes | None:
        """The statement text of the whole QUERY event at ``buf[pos:end]`` (None if its lengths lie)."""
        assert self._ctx is not None
        body = pos + self._ctx.header_length
        body_end = end - (4 if self._checksum else 0)
        start = query_text_start(self._buf, body, body_end, self._ctx.post_header_len(_QUERY))
        return None if start < 0 else bytes(self._buf[start:body_end])
