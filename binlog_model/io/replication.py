"""Pull binlog events from a live server over the replication protocol, as a replica would.

Strategy: a pymysql connection is switched into a binlog dump with ``COM_BINLOG_DUMP`` (command 0x12:
position u32, flags u16, replica server_id u32, file name). The server then answers with one packet per
event: ``0x00`` followed by the event bytes exactly as in the file (header, body, CRC32 footer), ``0xFE``
(EOF) when a non-blocking dump reaches the end, or an error packet. Before the dump the session announces
what this replica understands, so the server sends events unaltered:

* ``@master_binlog_checksum = @@global.binlog_checksum``: we verify CRC32 ourselves (servers refuse a
  checksum-unaware replica when checksums are on);
* MariaDB: ``@mariadb_slave_capability = 4`` (GTID-aware, so GTID/ANNOTATE_ROWS/BINLOG_CHECKPOINT events
  are not rewritten into dummies) and dump flag ``BINLOG_SEND_ANNOTATE_ROWS_EVENT``; a start at a MariaDB
  GTID uses ``@slave_connect_state`` with an empty file name.

The server frames the stream with *artificial* events (``LOG_EVENT_ARTIFICIAL_F``, log_pos 0) that are not
in any file: a fake ROTATE naming the file being sent (and where), and, when starting mid-file, a copy of
that file's FORMAT_DESCRIPTION. ``iter_replication_packets`` yields every packet tagged with its file and
offset; ``iter_replication_events`` drives one sans-IO ``BinlogDecoder`` per file from them, so events
pulled over the wire carry the same file, offset and content as the same events read from the file.
HEARTBEAT events and other artificial events are dropped there (they are framing, not binlog content); a
MariaDB GTID start sends the file's first events, then jumps (announced by a fake GTID_LIST whose log_pos
is the resume point) to the GTID's transaction, and the decoder follows that jump.

A log_pos of 0 alone does not make an event framing: MariaDB 11.x writes log_pos 0 on the events inside a
transaction (ANNOTATE_ROWS, TABLE_MAP, rows events: only the GTID and the commit carry their end), and sends
them as they are. Only the framing kinds (ROTATE, FORMAT_DESCRIPTION, GTID_LIST, heartbeats) with log_pos 0
are taken as framing without the flag; any other event with log_pos 0 starts where the previous one ended.

For a tail (``binlog_model.runs.tailing``) the dump can also: ask the server for heartbeats
(``@master_heartbeat_period``, in nanoseconds) so a silent connection is told from an idle server, and
report them (``markers=True`` yields a ``FlushPoint`` for each: every event written so far has arrived);
start MySQL at a GTID set with ``COM_BINLOG_DUMP_GTID`` (0x1e; the server skips the transactions in the
set, so the stream jumps forward inside a file, which ``iter_replication_events`` follows at transaction
starts); and register itself (``COM_REGISTER_SLAVE``), so ``SHOW REPLICAS`` lists it and a second reader
with the same ``server_id`` can be named. A broken or silent connection raises ``ConnectionLostError``.

Uses pymysql's packet-level methods (``_execute_command``, ``_read_packet``): pymysql has no public API for
replication commands; the dump itself is read from the socket (``io.packets``), and the plain event
packets that have arrived are cut into one batch by ``take_events`` (the compiled core's
``dump_events`` where it is built: the same result). The connection is consumed by the dump and closed
when the generator ends.

About 630 lines: the replication protocol (the handshake's settings, the dump request of each server
family, the packet loop and its restarts of the decoder) is one conversation with the server; the
connection, TLS and the failures' classification live in their own modules.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

from binlog_model.compiled import speedups
from binlog_model.errors import ConfigError, ConnectionLostError, DecodeError, ReplicationError
from binlog_model.gtid import GtidSet
from binlog_model.io.packets import MAX_PACKET, PacketReader
from binlog_model.io.server_errors import classify
from binlog_model.runs.source import (
    FileBegin,
    FileEnd,
    FlushPoint,
    FormatDescription,
    TransactionEnd,
    TransactionStart,
)
from binlog_model.runs.transactions import BoundaryTracker
from binlog_model.wire.decoder import NEED_DATA, BinlogDecoder, Lane
from binlog_model.wire.header import EventType
from binlog_model.wire.structs import HEADER_V4, U32, U64

__all__ = [
    "ReplicationError",
    "ReplicationPacket",
    "iter_replication_events",
    "iter_replication_packets",
    "take_events",
]

COM_BINLOG_DUMP: Final = 0x12
COM_REGISTER_SLAVE: Final = 0x15
COM_BINLOG_DUMP_GTID: Final = 0x1E
BINLOG_THROUGH_GTID: Final = 0x04
BINLOG_DUMP_NON_BLOCK: Final = 0x01
BINLOG_SEND_ANNOTATE_ROWS_EVENT: Final = 0x02  # MariaDB only
LOG_EVENT_ARTIFICIAL_F: Final = 0x20
_MARIA_SLAVE_CAPABILITY_GTID: Final = 4
_DUMP = struct.Struct("<IHI")  # position, flags, server_id
_DUMP_GTID = struct.Struct("<HII")  # flags, server_id, file name length
_HEARTBEATS: Final = frozenset({EventType.HEARTBEAT_LOG_EVENT, EventType.HEARTBEAT_LOG_EVENT_V2})
_UNIT_MARKERS: Final = (TransactionStart, TransactionEnd)
_TRANSACTION_STARTS: Final = frozenset({EventType.GTID_LOG_EVENT, EventType.ANONYMOUS_GTID_LOG_EVENT,
                                        EventType.GTID_TAGGED_LOG_EVENT, EventType.GTID_EVENT})
_DEFAULT_REPLICA_ID: Final = 4_000_000_001
# Event kinds a server sends with log_pos 0 as framing (not from the file), with or without the flag.
_FRAMING_AT_ZERO: Final = frozenset({EventType.ROTATE_EVENT, EventType.FORMAT_DESCRIPTION_EVENT,
                                     EventType.GTID_LIST_EVENT, EventType.HEARTBEAT_LOG_EVENT,
                                     EventType.HEARTBEAT_LOG_EVENT_V2})

@dataclass(frozen=True, slots=True)
class ReplicationPacket:
    """One event as the server sent it: ``raw`` is header + body + footer, exactly the file's bytes.

    ``file`` is the binlog file it belongs to (from the last fake ROTATE), ``offset`` where it starts in that
    file (``log_pos - event_size``; for artificial events, the position the fake ROTATE announced), and
    ``artificial`` marks framing events that are in no file.
    """

    file: str
    offset: int
    raw: bytes
    event_type: int
    log_pos: int
    flags: int
    artificial: bool
    #: where the last event starts in ``raw``: 0, except in a batch (``iter_replication_packets(batch=True)``)
    last: int = 0

    @property
    def timestamp(self) -> int:
        """The (last) event's timestamp, in seconds."""
        return int.from_bytes(self.raw[self.last:self.last + 4], "little")


#: what ``iter_replication_packets(idle=...)`` yields when the server has gone quiet (in no file)
IDLE: Final = ReplicationPacket("", 0, b"", -1, 0, 0, True)


def iter_replication_packets(conn: Any, log_file: str = "", log_pos: int = 4, *,
                             server_id: int = _DEFAULT_REPLICA_ID, blocking: bool = False,
                             mariadb_gtid: str | None = None, mysql_gtids: GtidSet | None = None,
                             heartbeat: float | None = None, register_as: str | None = None,
                             batch: bool = False, idle: tuple[float, float] | None = None,
                             account: str | None = None) -> Iterator[ReplicationPacket]:
    """Start a binlog dump on ``conn`` (an open pymysql connection, consumed) and yield its packets.

    Args:
        log_file, log_pos: where to start (a file name from ``SHOW BINARY LOGS`` and an event boundary).
        server_id: this replica's id; must differ from the server's and from other replicas'.
        blocking: wait for new events at the end (until the connection drops) instead of stopping.
        mariadb_gtid: start at a MariaDB GTID position (e.g. ``"0-1-5"``) instead of file/position.
        mysql_gtids: start a MySQL dump after this GTID set (``COM_BINLOG_DUMP_GTID``): the server sends
            every transaction not in it, from the oldest file that holds one.
        heartbeat: seconds between the server's heartbeats when it has nothing to send (blocking dumps).
        register_as: announce this replica (``COM_REGISTER_SLAVE``) with this host name first.
        batch: hand over consecutive file-content packets that have already arrived as one packet whose
            ``raw`` holds their events back to back (``event_type``, ``offset``: the first one's;
            ``log_pos``, ``flags``, ``last``: of the last one). Framing, heartbeats and FORMAT_DESCRIPTION
            events always come alone, and nothing waits for more input to fill a batch.
        idle: ``(silence, every)``: yield ``IDLE`` once the server has sent nothing for ``silence`` seconds
            after a packet (and ``every`` seconds after the last ``IDLE``): the stream is caught up for now.

        account: ``'user'@'host'`` of the connection (``CURRENT_USER()``), named when a privilege is
            missing (default: the connection's user name).

    Raises ``ConfigError`` for bad arguments, ``ConnectionLostError`` when the connection breaks or is
    killed, ``PrivilegeError`` naming the ``GRANT`` a refusal for want of a privilege needs, and
    ``ReplicationError`` (with the server's message and ``errno``) when the server refuses otherwise
    (``io.server_errors.classify`` decides which).
    """
    import pymysql

    reached: ReplicationPacket | None = None      # the last packet received (for messages)
    try:
        if not 0 < server_id < 2**32:
            raise ConfigError(f"server_id must be in 1..2**32-1, got {server_id}")
        if not 0 <= log_pos < 2**32:
            raise ConfigError(f"log_pos must fit 32 bits, got {log_pos}")
        if mariadb_gtid is None and mysql_gtids is None and not log_file:
            raise ConfigError("give log_file (and log_pos), mariadb_gtid or mysql_gtids")
        is_mariadb = "mariadb" in str(conn.get_server_info()).lower()
        if mariadb_gtid is not None and not is_mariadb:
            raise ConfigError("mariadb_gtid needs a MariaDB server")
        if mysql_gtids is not None and is_mariadb:
            raise ConfigError("mysql_gtids needs a MySQL server (MariaDB starts at a GTID with mariadb_gtid)")
        checksum = _prepare_session(conn, is_mariadb, mariadb_gtid, heartbeat)
        if register_as is not None:
            _register(conn, server_id, register_as)
        flags = 0 if blocking else BINLOG_DUMP_NON_BLOCK
        if is_mariadb:
            flags |= BINLOG_SEND_ANNOTATE_ROWS_EVENT
        if mysql_gtids is not None:
            data = mysql_gtids.encode_mysql()
            head = _DUMP_GTID.pack(flags | BINLOG_THROUGH_GTID, server_id, 0)    # no file name
            body = head + U64.pack(4) + U32.pack(len(data)) + data
            conn._execute_command(COM_BINLOG_DUMP_GTID, body)
            log_file, log_pos = "", 4
        else:
            name = b"" if mariadb_gtid is not None else log_file.encode()
            conn._execute_command(COM_BINLOG_DUMP, _DUMP.pack(log_pos if mariadb_gtid is None else 4, flags,
                                                              server_id) + name)
        for packet in _read_stream(conn, log_file, log_pos, checksum, batch, idle):
            if not packet.artificial and packet.event_type not in _HEARTBEATS:
                reached = packet
            yield packet
    except (pymysql.Error, OSError) as err:
        where = (f"GTID {mariadb_gtid}" if mariadb_gtid is not None
                 else f"GTID set {_shortened(str(mysql_gtids))}" if mysql_gtids is not None
                 else f"{log_file}:{log_pos}")
        user = getattr(conn, "user", b"") or b""
        user = user.decode(errors="replace") if isinstance(user, bytes) else str(user)
        error = classify(err, where=_peer(conn), account=account or f"'{user}'")
        errno, message = error.errno if isinstance(error, ReplicationError) else None, _server_message(err)
        if isinstance(error, ConnectionLostError):
            if reached is not None:
                where += f", after {reached.file}:{reached.offset + len(reached.raw)}"
            raise ConnectionLostError(f"binlog dump from {where}: connection lost ({message})",
                                      errno=errno) from err
        if type(error) is ReplicationError:
            raise ReplicationError(f"binlog dump from {where} failed: ({errno}) {message}",
                                   errno=errno) from err
        raise error from None
    finally:
        conn.close()


def iter_replication_events(conn: Any, log_file: str = "", log_pos: int = 4, *,
                            server_id: int = _DEFAULT_REPLICA_ID, blocking: bool = False,
                            mariadb_gtid: str | None = None, verify_checksum: bool = True,
                            skip_types: frozenset[int] = frozenset(), mysql_gtids: GtidSet | None = None,
                            heartbeat: float | None = None, register_as: str | None = None,
                            markers: bool = False,
                            on_packet: Callable[[ReplicationPacket], None] | None = None,
                            idle: tuple[float, float] | None = None,
                            on_flush: Callable[[], None] | None = None,
                            account: str | None = None, lane: Lane | None = None) -> Iterator[Any]:
    """Decoded events of a binlog dump (see ``iter_replication_packets``), as ``iter_events`` gives them
    for the same files: ``header.file`` is the binlog file name, ``header.offset`` the event's position.

    Artificial framing events are consumed, not yielded. With ``markers`` the stream is an ``EventSource``
    stream (``binlog_model.runs.source``): ``FileBegin`` / ``FileEnd`` where the server switches files
    (its fake ROTATE), ``FormatDescription`` after each file's FORMAT_DESCRIPTION (or the copy re-sent when
    starting mid-file), the ``BoundaryTracker``'s transaction markers, and a ``FlushPoint`` for each
    heartbeat, and (with ``idle``, see ``iter_replication_packets``) once the server has gone quiet after
    sending something: a run commits there without waiting for the heartbeat. ``on_packet`` sees every
    packet that is file content (not framing), before its events are yielded (the spool), and ``on_flush``
    each ``FlushPoint`` before it is yielded. Content packets come in batches
    (``iter_replication_packets(batch=True)``: what has arrived, fed to the decoder at once, as a file
    source feeds it chunks). Raises ``ReplicationError`` and the decoder's ``DecodeError`` subclasses (with
    the file and offset of the bad event).
    """
    decoder: BinlogDecoder | None = None
    tracker: BoundaryTracker | None = None
    gtid_dump = mysql_gtids is not None or mariadb_gtid is not None

    def laned(new: BinlogDecoder) -> BinlogDecoder:
        """``new`` reading for ``lane`` (a statement lane: ``resolve.lane``) when one is given. A batch is
        whole events, but a statement may go on in the next one: the decoder holds its bytes until then
        (a server writes a transaction whole, so the rest is on its way), and ``release`` has the Python
        path read them before anything but the next batch."""
        if lane is not None:
            new.use_lane(lane)
            new.lane_may_wait = True
        return new

    def events_of_batch(dec: BinlogDecoder) -> Iterator[Any]:
        if not markers:
            while (event := dec.next_event()) is not NEED_DATA:
                yield event
            return
        assert tracker is not None
        # the tracker keeps its state between calls: one call per batch of whole events; the decoder is
        # iterated, not listed (a TRANSACTION_PAYLOAD's inner events are decoded as they are asked for:
        # one compressed transaction of millions of rows is one event)
        if settled:
            yield from tracker.wrap(dec, dec)
        else:
            # not a place to stop yet: the end of what was sent may lie before transactions skipped
            yield from (item for item in tracker.wrap(dec, dec) if type(item) not in _UNIT_MARKERS)

    def release() -> Iterator[Any]:
        """The events of a statement the decoder held for the lane, read by the Python path."""
        if decoder is None or decoder.offset == decoder.received_end:
            return
        held = decoder
        held.lane_may_wait = False
        try:
            yield from events_of_batch(held)
        finally:
            held.lane_may_wait = True

    # A GTID dump skips the transactions in the set without a word (MariaDB: up to its jump), so its
    # silence does not say the stream is at the server's end until the server says where it is: the quiet
    # counts once a heartbeat names the place the decoder is at, or a transaction is sent.
    settled = not gtid_dump
    for packet in iter_replication_packets(conn, log_file, log_pos, server_id=server_id, blocking=blocking,
                                           mariadb_gtid=mariadb_gtid, mysql_gtids=mysql_gtids,
                                           heartbeat=heartbeat, register_as=register_as, batch=True,
                                           idle=idle if markers else None, account=account):
        if packet is IDLE or packet.artificial or packet.event_type in _NOT_CONTENT:
            yield from release()    # (a FORMAT_DESCRIPTION that is content starts a file: nothing is held)
        if packet is IDLE:
            if settled:     # where the stream is: past a MariaDB jump, not at the last event's end
                if on_flush is not None:
                    on_flush()
                yield FlushPoint(tracker.file if tracker is not None else "",
                                 decoder.offset if decoder is not None else 0)
            continue
        if packet.event_type in _HEARTBEATS:
            if gtid_dump and (not settled or (decoder is not None and packet.log_pos > decoder.offset)):
                settled = (decoder is not None and packet.log_pos == decoder.offset
                           and tracker is not None and tracker.file == packet.file)
            if markers:
                if on_flush is not None:
                    on_flush()
                yield FlushPoint(packet.file, packet.log_pos)
            continue
        if packet.event_type == EventType.ROTATE_EVENT and packet.artificial:
            if markers and (tracker is None or tracker.file != packet.file):
                if tracker is not None and decoder is not None:
                    yield FileEnd(tracker.file, decoder.offset)
                tracker = BoundaryTracker(packet.file)
                yield FileBegin(packet.file, packet.offset)
            decoder = None  # a new file follows; its FORMAT_DESCRIPTION comes next
            continue
        if (packet.event_type == EventType.FORMAT_DESCRIPTION_EVENT
                and (packet.artificial or packet.log_pos == 0)):
            # Starting mid-file: the server re-sends the file's FORMAT_DESCRIPTION, out of place.
            decoder = laned(BinlogDecoder.resume(packet.raw, packet.offset, file=packet.file,
                                                 verify_checksum=verify_checksum, skip_types=skip_types))
            if markers:
                yield FormatDescription(packet.file, packet.offset, decoder.format_description_bytes)
            continue
        if packet.artificial:
            # MariaDB starting at a GTID sends the file's first events, then a fake GTID_LIST whose log_pos
            # is where it resumes (the start of the GTID's transaction): continue the file there.
            if packet.log_pos and decoder is not None and decoder.format_description_bytes is not None:
                decoder = laned(BinlogDecoder.resume(decoder.format_description_bytes, packet.log_pos,
                                                     file=packet.file, verify_checksum=verify_checksum,
                                                     skip_types=skip_types))
            continue
        if decoder is None:
            if packet.event_type != EventType.FORMAT_DESCRIPTION_EVENT:
                raise DecodeError("replication stream sent an event before any FORMAT_DESCRIPTION",
                                  file=packet.file, offset=packet.offset, expected="FORMAT_DESCRIPTION_EVENT")
            decoder = laned(BinlogDecoder(file=packet.file, verify_checksum=verify_checksum,
                                          expect_magic=False, start_offset=packet.offset,
                                          skip_types=skip_types))
        if (gtid_dump and packet.offset > decoder.received_end
                and decoder.format_description_bytes is not None):
            # A GTID dump skips the transactions in the set (MySQL) or jumps past the GTID's (MariaDB,
            # without a fake GTID_LIST when it is further into the file; the first event sent may be a
            # BINLOG_CHECKPOINT between transactions): continue at the event sent, an event boundary.
            yield from release()
            decoder = laned(BinlogDecoder.resume(decoder.format_description_bytes, packet.offset,
                                                 file=packet.file, verify_checksum=verify_checksum,
                                                 skip_types=skip_types))
        if decoder.received_end != packet.offset:
            raise DecodeError(f"replication stream skipped from offset {decoder.received_end} to "
                              f"{packet.offset}", file=packet.file, offset=packet.offset)
        if on_packet is not None:
            on_packet(packet)
        if not settled and packet.event_type in _TRANSACTION_STARTS:
            settled = True
        decoder.receive_data(packet.raw)
        if markers and tracker is None:     # a stream without a fake ROTATE first (never seen): begin here
            tracker = BoundaryTracker(packet.file)
            yield FileBegin(packet.file, packet.offset)
        yield from events_of_batch(decoder)
    yield from release()        # the dump ended (a non-blocking one at the server's end)


def _prepare_session(conn: Any, is_mariadb: bool, mariadb_gtid: str | None, heartbeat: float | None) -> bool:
    with conn.cursor() as cur:
        cur.execute("SELECT @@global.binlog_checksum")
        row = cur.fetchone()
        algorithm = str(row[0]).upper() if row else "NONE"
        cur.execute("SET @master_binlog_checksum = @@global.binlog_checksum")
        if heartbeat is not None:
            cur.execute(f"SET @master_heartbeat_period = {max(1, int(heartbeat * 1e9))}")
        if is_mariadb:
            cur.execute(f"SET @mariadb_slave_capability = {_MARIA_SLAVE_CAPABILITY_GTID}")
            if mariadb_gtid is not None:
                cur.execute("SET @slave_connect_state = %s", (mariadb_gtid,))
                cur.execute("SET @slave_gtid_strict_mode = 1")
    return algorithm != "NONE"


def _peer(conn: Any) -> str:
    """host:port (or the socket) of a pymysql connection, for messages."""
    socket_path = getattr(conn, "unix_socket", None)
    return str(socket_path) if socket_path else f"{getattr(conn, 'host', '?')}:{getattr(conn, 'port', '?')}"


def _server_message(err: BaseException) -> str:
    args: tuple[Any, ...] = err.args
    return str(args[1]) if len(args) > 1 and not isinstance(err, OSError) else str(err)


def _shortened(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _register(conn: Any, server_id: int, host: str) -> None:
    """``COM_REGISTER_SLAVE``: server_id, then report host, user and password as length-prefixed strings,
    port, rank and master id. The server answers OK (or an error, raised by pymysql)."""
    def short(text: str) -> bytes:
        raw = text.encode()[:255]
        return bytes([len(raw)]) + raw

    conn._execute_command(COM_REGISTER_SLAVE, struct.pack("<I", server_id) + short(host) + short("")
                          + short("") + struct.pack("<HII", 0, 0, 0))
    conn._read_packet()


_NOT_CONTENT: Final = frozenset({EventType.FORMAT_DESCRIPTION_EVENT, *_HEARTBEATS})
_Taken = tuple[bytes, int, int, int, int, int, int, int, int]


def take_events(buf: bytes | bytearray, pos: int, end: int, seq: int, next_offset: int) -> _Taken | None:
    """The file-content events of the whole packets at ``buf[pos:end]``, consumed, as one batch: ``(data,
    pos, seq, first_offset, first_type, last, log_pos, flags, next_offset)`` (the events back to back; the
    position, sequence number and next event's offset after them; the first event's offset and type; where
    the last one starts in ``data``, its log_pos and flags), or None when the first packet is not one.

    Takes plain packets only: it stops at a packet that is incomplete, a 16 MiB continuation, out of
    sequence, not an OK (0x00) packet, too short for an event header, whose event_size is not its length,
    that is framing (artificial, FORMAT_DESCRIPTION, a heartbeat, ROTATE / GTID_LIST at log_pos 0), that
    would start before 0, or that does not follow the previous one: the packet reader (``_read_stream``)
    takes those one by one, and raises for the bad ones. This is the reference of the compiled
    ``_speedups.dump_events``, which returns the same."""
    unpack_header = HEADER_V4.unpack_from
    p = pos
    parts: list[Any] = []
    total = last = 0
    first_offset = first_type = run_end = log_pos = flags = 0
    while end - p >= 4:
        length = buf[p] | buf[p + 1] << 8 | buf[p + 2] << 16
        if length >= MAX_PACKET or end - p - 4 < length or buf[p + 3] != seq:
            break
        if length < 1 + HEADER_V4.size or buf[p + 4] != 0:
            break
        size = length - 1
        _, event_type, _, event_size, event_log_pos, event_flags = unpack_header(buf, p + 5)
        if (event_size != size or event_flags & LOG_EVENT_ARTIFICIAL_F or event_type in _NOT_CONTENT
                or (event_log_pos == 0 and event_type in _FRAMING_AT_ZERO)):
            break
        offset = event_log_pos - size if event_log_pos else next_offset
        if offset < 0 or (parts and offset != run_end):
            break
        if not parts:
            first_offset, first_type = offset, event_type
        parts.append(memoryview(buf)[p + 5:p + 4 + length])
        last = total
        total += size
        run_end = offset + size
        log_pos, flags = event_log_pos, event_flags
        next_offset = event_log_pos or run_end
        seq = (seq + 1) & 0xFF
        p += 4 + length
    if not parts:
        return None
    data = b"".join(parts)
    for part in parts:
        part.release()
    return data, p, seq, first_offset, first_type, last, log_pos, flags, next_offset


#: the batches of ``_read_stream``: compiled where built (the same as ``take_events``, faster)
_TAKE_EVENTS: Callable[[bytes | bytearray, int, int, int, int], _Taken | None] = (
    getattr(speedups, "dump_events", None) or take_events)


class _DumpPackets(PacketReader):
    """The dump's packets: a ``PacketReader`` that also cuts the plain event packets into one batch."""

    def take(self, next_offset: int) -> _Taken | None:
        """``take_events`` on the buffer: the plain event packets already buffered, consumed."""
        taken = _TAKE_EVENTS(self.buf, self.pos, self.end, self.seq, next_offset)
        if taken is not None:
            self.pos = taken[1]
            self.seq = self.conn._next_seq_id = taken[2]
        return taken


def _read_stream(conn: Any, log_file: str, log_pos: int, checksum: bool, batch: bool = False,
                 idle: tuple[float, float] | None = None) -> Iterator[ReplicationPacket]:
    """The dump's events as ``ReplicationPacket`` s. With ``batch``, the file-content packets already
    buffered go as one (``take_events``); every other packet (framing, a 16 MB event, anything wrong) is
    read alone (``_DumpPackets.next``) and checked here."""
    current_file, next_offset = log_file, log_pos
    packets = _DumpPackets(conn)
    last_idle, quiet_told = 0.0, True     # nothing to tell before the first packet
    unpack_header = HEADER_V4.unpack_from
    while True:
        if batch:
            taken = packets.take(next_offset)
            if taken is not None:
                data, _, _, offset, event_type, last, event_log_pos, flags, next_offset = taken
                quiet_told = False
                yield ReplicationPacket(current_file, offset, data, event_type, event_log_pos, flags, False,
                                        last)
                continue
        if not packets.ready():
            if idle is not None and not quiet_told:
                silence, every = idle
                if packets.quiet(max(silence, last_idle + every - time.monotonic())):
                    last_idle, quiet_told = time.monotonic(), True
                    yield IDLE
            if batch and not packets.whole():
                packets.more()          # then take what came
                continue
        first, raw = packets.next()
        if first == 0xFE and len(raw) < 8:      # EOF (a non-blocking dump reached the end)
            break
        if first != 0:
            shown = bytes([first]).hex() if first >= 0 else "none"
            raise ReplicationError(f"unexpected replication packet (first byte {shown})"
                                   f" in {current_file} near offset {next_offset}")
        quiet_told = False
        if len(raw) < HEADER_V4.size:
            raise ReplicationError(f"replication packet of {len(raw)} bytes is shorter than an event "
                                   f"header in {current_file} near offset {next_offset}")
        _, event_type, _, event_size, event_log_pos, flags = unpack_header(raw)
        if event_size != len(raw):
            raise ReplicationError(f"event_size {event_size} but the packet holds {len(raw)} bytes"
                                   f" in {current_file} near offset {next_offset}")
        artificial = bool(flags & LOG_EVENT_ARTIFICIAL_F) or (event_log_pos == 0
                                                               and event_type in _FRAMING_AT_ZERO)
        if event_type == EventType.ROTATE_EVENT and artificial:
            end = len(raw) - 4 if checksum else len(raw)
            position = U64.unpack_from(raw, HEADER_V4.size)[0]
            current_file = raw[HEADER_V4.size + 8:end].decode("utf-8", "replace")
            next_offset = position
            yield ReplicationPacket(current_file, position, raw, event_type, event_log_pos, flags, True)
            continue
        # MariaDB 11.x: log_pos 0 inside a transaction; the event follows the previous one
        offset = event_log_pos - event_size if not artificial and event_log_pos else next_offset
        if event_log_pos:
            next_offset = event_log_pos
        elif not artificial:
            next_offset = offset + event_size
        yield ReplicationPacket(current_file, offset, raw, event_type, event_log_pos, flags, artificial)
