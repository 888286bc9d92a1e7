"""A live server as an ``EventSource`` (``binlog_model.runs.source``): where to start a dump, and the stream.

Strategy: ``plan(resume)`` talks to the server on a control connection and decides where the dump starts,
checking what would otherwise fail late or silently: the server's own ``server_id`` or another replica's
(``SHOW REPLICAS``) equal to ours, a position whose file the server has purged (``PurgedPositionError``,
never a silent jump to the oldest file), a file the server never had (a reset server, another server).
Then ``read(resume)`` runs the dump (``io.replication.iter_replication_events`` with markers) and yields
decoded events and boundary markers, plus a ``FlushPoint`` for each heartbeat: a live source's way to say
that every event the server has written so far has arrived (the runner commits then). A live stream has no
end: the server ending the dump is a lost connection. ``event_time`` (the last event's timestamp) and
``caught_up`` (a heartbeat came after it) tell how far behind the server the stream is.

Where the dump starts:

- a new state: ``--from earliest`` (the oldest binlog, from its first event, so its PREVIOUS_GTIDS /
  GTID_LIST gives the complete GTID set), ``FILE:POS``, a GTID set, or ``now``: the current end of the
  binlog, the GTIDs executed up to it, and optionally a schema snapshot, all read under ``FLUSH TABLES WITH
  READ LOCK`` so that no transaction or DDL commits in between (``snapshot_catalog``);
- a saved position on the server the state was built on: ``COM_BINLOG_DUMP`` at file:position (exact);
- otherwise, when the state knows the complete GTID set at its position (``gtids_complete``): the GTID
  set (MySQL ``COM_BINLOG_DUMP_GTID``, MariaDB ``@slave_connect_state``). ``resume_by`` forces either.

A GTID dump on the same server may send events before the saved position again (the head of a file, or a
whole file when MySQL starts from an older one): they are dropped, so the stream begins at the saved
position as the protocol requires, and the spool (``on_packet``) does not see them either; what it skips
past the saved position (the rest of the saved file when it starts at the next one, a MariaDB
BINLOG_CHECKPOINT before the next transaction) the spool gets from a short dump by position. On another
server (a failover to a replica) the saved file:offset names nothing: nothing is dropped, a resume by
position is refused, and ``followed`` names the new server, which the state records at its next commit.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterator
from typing import Any, Final

from binlog_model.errors import ConfigError, ConnectionLostError, PrivilegeError, ReplicationError
from binlog_model.gtid import GtidSet
from binlog_model.io.replication import (
    ReplicationPacket,
    iter_replication_events,
    iter_replication_packets,
)
from binlog_model.io.server_errors import REPLICATION_GRANT, account_name, classify
from binlog_model.io.state import StateMismatchError
from binlog_model.position import position_key
from binlog_model.runs.source import (
    BOUNDARY_TYPES,
    Boundary,
    FileBegin,
    FlushPoint,
    FormatDescription,
    Resume,
)
from binlog_model.wire import events as ev
from binlog_model.wire.decoder import Lane

__all__ = ["PurgedPositionError", "ReplicationSource", "ServerIdCollisionError", "parse_start"]

REGISTER_PREFIX: Final = "binlog-model-tail:"
#: where a default replica server_id is drawn from: high enough to stay clear of hand-numbered servers
SERVER_ID_RANGE: Final = (3_000_000_000, 3_999_999_999)
#: the dump's ``idle``: a ``FlushPoint`` (where the run commits) once the server has sent nothing for 10 ms
#: after an event, at most every 100 ms. A tail that keeps up with its server waits for input then anyway,
#: so the commit costs it nothing, and the last transactions of a burst are committed at once instead of
#: at the next heartbeat or commit interval; one that falls behind never sees the socket quiet.
IDLE_FLUSH: Final = (0.01, 0.1)
#: seconds the ``--from now`` reads under the global read lock may take (pymysql's per-read timeout)
SNAPSHOT_READ_TIMEOUT: Final = 600


class PurgedPositionError(ReplicationError):
    """The server no longer has the binlog a run must continue from (purged)."""


class ServerIdCollisionError(ConfigError):
    """Another replica of the server uses this reader's server_id (or it is the server's own id)."""


def parse_start(text: str) -> tuple[str, Any]:
    """``--from``: ``("earliest", None)``, ``("now", None)``, ``("position", (file, pos))`` or
    ``("gtid", GtidSet)``; ``ConfigError`` for anything else."""
    if text in ("earliest", "now"):
        return text, None
    file, sep, pos = text.rpartition(":")
    if sep and pos.isdigit() and file and ":" not in file and not _looks_like_uuid(file):
        if int(pos) < 4:
            raise ConfigError(f"--from {text}: a binlog position starts at 4")
        return "position", (file, int(pos))
    try:
        return "gtid", GtidSet.parse(text)
    except ConfigError as err:
        raise ConfigError(f"--from {text!r} is neither earliest, now, FILE:POS nor a GTID set "
                          f"({err})") from None


def _looks_like_uuid(text: str) -> bool:
    head = text.split(":")[0]
    return len(head) == 36 and head.count("-") == 4


def _key(file: str, offset: int) -> tuple[Any, ...]:
    return position_key(file, offset)


class ReplicationSource:
    """One dump from a live server (see the module docstring). ``connect(**kw)`` opens a pymysql
    connection (raising ``ConnectionLostError`` when the server cannot be reached); ``identity`` is the
    state's record of this replica (``server_id``, ``token``, and the server followed, filled in here)."""

    total_bytes: int | None = None

    def __init__(self, connect: Callable[..., Any], where: str, identity: dict[str, Any], *,
                 start: str = "earliest", heartbeat: float = 5.0, resume_by: str = "auto",
                 gtids_complete: bool = False, verify_checksum: bool = True, snapshot_now: bool = False,
                 take_snapshot: Callable[[Any], Any] | None = None,
                 on_packet: Callable[[ReplicationPacket], None] | None = None) -> None:
        self.connect = connect
        self.where = where
        self.identity = identity
        self.lane: Lane | None = None     # the assembler's statement lane, set by the runner (resolve.lane)
        self.start = start
        self.heartbeat = heartbeat
        self.resume_by = resume_by
        self.gtids_complete = gtids_complete
        self.verify_checksum = verify_checksum
        self.take_snapshot = take_snapshot if snapshot_now else None
        self.on_packet = on_packet
        self.is_mariadb = False
        self.bytes_read = 0           # file content received (for progress)
        self.event_time = 0           # the last event's timestamp (seconds)
        self.caught_up = False        # a heartbeat came after it: the server has nothing more
        #: set by ``plan`` when the start defines the GTID set done so far (``--from now`` / a GTID set)
        self.start_gtids: GtidSet | None = None
        #: set by ``plan`` for ``--from now`` with ``take_snapshot``: the schema at the start position
        self.snapshot_catalog: Any = None
        #: set by ``plan``: the server streamed from (``server_uuid``, ``server``), which the state records
        #: at its commits, and whether it is the one the state's position belongs to
        self.followed: dict[str, str] = {}
        self.same_server = True
        self._plan: tuple[str, Any] | None = None
        self._spool_from: tuple[Any, ...] | None = None   # packets before it are not handed to on_packet
        self._spool_at: tuple[str, int] = ("", 0)         # the same place as file and offset
        self._spool_whole = False                         # the saved position is past its file's ROTATE
        #: the account the server logged us in as (``'user'@'host'``), for the GRANT a refusal needs
        self.account: str | None = None

    # --- the control connection -----------------------------------------------------------------------

    @property
    def grant(self) -> str:
        """The privileges this tail needs (``--from now`` also locks and reads the schema)."""
        if self.start != "now":
            return REPLICATION_GRANT
        return f"RELOAD, {'SELECT, ' if self.take_snapshot else ''}{REPLICATION_GRANT}"

    def query(self, conn: Any, sql: str) -> list[dict[str, Any]]:
        """Rows as dicts (lower-case column names); a failure is what ``io.server_errors.classify`` makes
        of it (a broken connection: ``ConnectionLostError``), except pymysql's ``ProgrammingError`` (a
        statement this server does not know), which the caller may answer with another one."""
        import pymysql
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
                names = [d[0].lower() for d in cur.description or ()]
                return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
        except pymysql.err.ProgrammingError:
            raise
        except (pymysql.Error, OSError) as err:
            error = classify(err, where=self.where, account=self.account or "the tail's user",
                             grant=self.grant)
            raise error from (err if isinstance(error, ConnectionLostError) else None)

    def _identify(self, conn: Any) -> None:
        """Learn the account the server took us for (``CURRENT_USER()``), once: a refusal names it."""
        if self.account is None:
            self.account = account_name(str(self.query(conn, "SELECT CURRENT_USER() AS a")[0]["a"]))

    def binlog_end(self, conn: Any | None = None) -> tuple[str, int]:
        """Where the server's binlog ends now (the active file and its size)."""
        import pymysql
        own = conn is None
        conn = conn or self.connect()
        try:
            self._identify(conn)
            for sql in ("SHOW BINARY LOG STATUS", "SHOW MASTER STATUS"):
                try:
                    rows = self.query(conn, sql)
                except pymysql.err.ProgrammingError:
                    continue
                if not rows:
                    raise ConfigError(f"{self.where}: binary logging is off (log_bin): nothing to tail")
                return str(rows[0]["file"]), int(rows[0]["position"])
        finally:
            if own:
                conn.close()
        raise ConfigError(f"{self.where}: cannot read the binlog position (SHOW BINARY LOG STATUS)")

    # --- where to start -------------------------------------------------------------------------------

    def plan(self, resume: Resume) -> tuple[str, Any]:
        """``("position", (file, offset))``, ``("mysql_gtid", GtidSet)`` or ``("mariadb_gtid", text)``."""
        if self._plan is not None:
            return self._plan
        conn = self.connect()
        try:
            self._plan = self._decide(conn, resume)
        finally:
            conn.close()
        return self._plan

    def _decide(self, conn: Any, resume: Resume) -> tuple[str, Any]:
        self._identify(conn)
        info = self.query(conn, "SELECT VERSION() AS version, @@server_id AS server_id")[0]
        self.is_mariadb = "mariadb" in str(info["version"]).lower()
        me = self.identity
        if int(info["server_id"]) == me["server_id"]:
            raise ServerIdCollisionError(f"--server-id {me['server_id']} is the server's own server_id "
                                         f"({self.where}); pick another")
        self._check_collision(conn)
        uuid = "" if self.is_mariadb else str(self.query(conn, "SELECT @@server_uuid AS u")[0]["u"])
        gtid_mode = (self.is_mariadb
                     or str(self.query(conn, "SELECT @@gtid_mode AS m")[0]["m"]).upper() == "ON")
        same_server = me.get("server_uuid") in (None, uuid) and me.get("server") in (None, self.where)
        self.same_server = same_server
        self.followed = {"server_uuid": uuid, "server": self.where}
        me.setdefault("server_uuid", uuid)
        me.setdefault("server", self.where)
        files = [str(r["log_name"]) for r in self.query(conn, "SHOW BINARY LOGS")]
        if not files:
            raise ConfigError(f"{self.where}: binary logging is off (log_bin): nothing to tail")
        position = resume.position
        if position is None and not resume.gtids:
            return self._first(conn, files)
        have_file = position is not None and position.file in files
        if self.resume_by == "gtid":
            by_gtid = self.gtids_complete or position is None
        elif self.resume_by == "position":
            by_gtid = position is None
        else:
            by_gtid = self.gtids_complete and gtid_mode and not (same_server and have_file)
        if by_gtid and self.is_mariadb and resume.gtids.has_mariadb:
            return "mariadb_gtid", resume.gtids.mariadb_text()
        if by_gtid and not self.is_mariadb and resume.gtids.has_mysql:
            return "mysql_gtid", resume.gtids
        if position is None:
            raise ConfigError(f"the state holds a GTID set but {self.where} cannot start from it (no GTIDs)")
        if not same_server:
            # a file:offset of another server names other bytes here, even where a file has the same name
            raise StateMismatchError(
                f"the state's position {position.file}:{position.offset} is on {me.get('server')} "
                f"{me.get('server_uuid') or ''}".rstrip() + f", not on {self.where}: another server is "
                "followed by GTID set only, and " + (
                    f"{self.where} has no GTIDs (gtid_mode)" if not gtid_mode
                    else "the state does not know the complete GTID set at its position yet (a run that "
                    "started inside a file knows it from the next file on)" if not self.gtids_complete
                    else "--resume-by position forbids it") + "; go back to that server or start a new "
                "--state directory")
        if not have_file:
            self._missing(position.file, files)
        return "position", (position.file, position.offset)

    def _first(self, conn: Any, files: list[str]) -> tuple[str, Any]:
        kind, value = parse_start(self.start)
        if kind == "earliest":
            self.gtids_complete = True      # the first file's PREVIOUS_GTIDS / GTID_LIST comes first
            return "position", (files[0], 4)
        if kind == "position":
            file, offset = value
            if file not in files:
                self._missing(file, files)
            self.gtids_complete = offset == 4
            return "position", (file, offset)
        if kind == "gtid":
            self.start_gtids = value
            self.gtids_complete = True
            return ("mariadb_gtid", value.mariadb_text()) if self.is_mariadb else ("mysql_gtid", value)
        # now: under a global read lock no transaction (DML or DDL) commits, so the binlog end, the GTIDs
        # executed and the schema read here all describe one moment
        conn._read_timeout = SNAPSHOT_READ_TIMEOUT    # a schema read of many tables takes a while
        self.query(conn, "FLUSH TABLES WITH READ LOCK")
        try:
            file, offset = self.binlog_end(conn)
            sql = "SELECT @@gtid_binlog_pos AS g" if self.is_mariadb else "SELECT @@gtid_executed AS g"
            text = str(self.query(conn, sql)[0]["g"] or "")
            if self.take_snapshot is not None:
                self.snapshot_catalog = self.take_snapshot(conn)
        finally:
            self.query(conn, "UNLOCK TABLES")
        self.start_gtids = GtidSet.parse(text.replace("\n", ""))
        self.gtids_complete = True
        return "position", (file, offset)

    def _check_collision(self, conn: Any) -> None:
        import pymysql
        rows: list[dict[str, Any]] = []
        for sql in ("SHOW REPLICAS", "SHOW SLAVE HOSTS"):
            try:
                rows = self.query(conn, sql)
                break
            except pymysql.err.ProgrammingError:
                continue
            except PrivilegeError:
                if not self.is_mariadb:
                    raise
                # MariaDB lists replicas to REPLICATION MASTER ADMIN only, which a tail needs for nothing
                # else: the check is skipped (a clash still ends the dump, named by _explain_1236)
                return
        me = self.identity
        ours = REGISTER_PREFIX + me["token"]
        for row in rows:
            if int(row.get("server_id", 0)) == me["server_id"] and str(row.get("host")) != ours:
                raise ServerIdCollisionError(
                    f"server_id {me['server_id']} is already used by the replica {row.get('host')}:"
                    f"{row.get('port')} of {self.where}: two replicas with one server_id cut each other off; "
                    "give this tail another --server-id")

    def _missing(self, file: str, files: list[str]) -> None:
        if _key(file, 0) < _key(files[0], 0):
            raise PurgedPositionError(f"the server no longer has {file} (purged); the oldest it has is "
                                      f"{files[0]} — start again with --from earliest (or a GTID set) and a "
                                      "new --state directory", errno=1236)
        raise StateMismatchError(f"the server at {self.where} has no binlog {file} (its binlogs are "
                                 f"{files[0]}…{files[-1]}): was it reset, or is this another server? Start "
                                 "a new --state directory")

    # --- the stream -----------------------------------------------------------------------------------

    def read(self, resume: Resume | None = None) -> Iterator[ev.Event | Boundary]:
        """Decoded events, boundary markers and ``FlushPoint``s from the planned start, until the caller
        stops iterating or the connection is lost (``ConnectionLostError``)."""
        resume = resume if resume is not None else Resume()
        kind, where = self.plan(resume)
        timeout = max(self.heartbeat * 3, self.heartbeat + 5)
        conn = self.connect(read_timeout=timeout, write_timeout=timeout)
        kw: dict[str, Any] = {"server_id": self.identity["server_id"], "blocking": True,
                              "heartbeat": self.heartbeat, "markers": True, "on_packet": self._packet,
                              "idle": IDLE_FLUSH, "account": self.account,
                              "verify_checksum": self.verify_checksum,
                              "register_as": REGISTER_PREFIX + self.identity["token"]}
        if kind == "mysql_gtid":
            kw["mysql_gtids"] = where
        elif kind == "mariadb_gtid":
            kw["mariadb_gtid"] = where
        else:
            kw["log_file"], kw["log_pos"] = where
        position = resume.position
        # a GTID dump on the server of the saved position re-sends what lies before it (a file's head, or
        # files MySQL starts earlier at): dropped, for the decoding as for the spool. On another server
        # (a failover) its file names and offsets say nothing about the saved position: nothing is dropped.
        skip = (_key(position.file, position.offset)
                if position is not None and kind != "position" and self.same_server else None)
        self._spool_from = skip
        if position is not None:
            self._spool_at = (position.file, position.offset)
            self._spool_whole = position.rotated_to is not None
        fde: FormatDescription | None = None      # the last one dropped while skipping
        held: list[Any] = []
        stream: Any = iter_replication_events(conn, on_flush=self._flushed, lane=self.lane, **kw)
        try:
            if skip is not None:
                for item in stream:
                    if type(item) is not FlushPoint:
                        header = getattr(item, "header", None)
                        if header is None:
                            if isinstance(item, FormatDescription):
                                fde = item
                            if type(item) in BOUNDARY_TYPES:
                                if _key(item.file, item.offset) == skip:
                                    held.append(item)     # (a TransactionStart there): after the FileBegin
                                continue
                        elif header.inner_index is not None or _key(header.file, header.offset) < skip:
                            continue
                        else:
                            # the stream now begins where the protocol wants it: at the saved position
                            skip = None
                            yield FileBegin(header.file, header.offset)
                            if fde is not None and fde.file == header.file:
                                yield FormatDescription(header.file, header.offset, fde.raw)
                            yield from (m for m in held if not isinstance(m, FileBegin | FormatDescription))
                    yield item
                    if skip is None:
                        break
            yield from stream       # (delegated: no Python step per event here)
            raise ConnectionLostError("the server ended the binlog dump")
        except ReplicationError as err:
            if err.errno == 1236 and not isinstance(err, ConnectionLostError):
                self._explain_1236(err)
            raise
        finally:
            stream.close()

    def _flushed(self) -> None:
        """A ``FlushPoint`` comes: every event the server has written so far has arrived."""
        self.caught_up = True

    def _packet(self, packet: ReplicationPacket) -> None:
        """Every packet of file content (an event, before it is decoded): its time, then the spool's copy."""
        self.bytes_read += len(packet.raw)
        self.event_time = packet.timestamp      # of the last event (packets come in batches)
        self.caught_up = False
        if self.on_packet is not None:
            if self._spool_from is not None:
                if _key(packet.file, packet.offset + len(packet.raw)) <= self._spool_from:
                    return          # the spool holds it already (a GTID dump re-sending it)
                if _key(packet.file, packet.offset) < self._spool_from:
                    # a batch of packets that reaches past the saved position (an event boundary in the
                    # same file): the spool takes the part from there on
                    offset = self._spool_at[1]
                    cut = offset - packet.offset
                    packet = dataclasses.replace(packet, offset=offset, raw=packet.raw[cut:],
                                                 last=max(0, packet.last - cut))
                elif not self._spool_whole and (packet.file, packet.offset) != self._spool_at:
                    # the dump resumes past the saved position: a GTID dump skips what lies between the
                    # set's last transaction and the next one (MariaDB: a BINLOG_CHECKPOINT), or starts at
                    # the next file (the saved file's ROTATE never sent). Those bytes are asked for by
                    # position, so the spool's copy of the file stays whole instead of being left out.
                    file, start = self._spool_at
                    # (an empty packet first opens the spool's copy there, so that the next file's first
                    # packet marks it whole even when nothing was missing)
                    self.on_packet(dataclasses.replace(packet, file=file, offset=start, raw=b"", last=0))
                    for filler in self._between(file, start, packet.offset if packet.file == file else None):
                        self.on_packet(filler)
                self._spool_from = None
            self.on_packet(packet)

    def _between(self, file: str, start: int, end: int | None) -> Iterator[ReplicationPacket]:
        """The content packets of ``file`` from ``start`` to ``end`` (event boundaries; None: the file's
        end), read by a short non-blocking dump by position under a server_id of its own from
        ``SERVER_ID_RANGE`` (MariaDB ends a dump whose server_id a new one uses: not the running one's,
        nor one next to a hand-numbered ``--server-id``, where real replicas are)."""
        server_id = self.identity["server_id"]
        while server_id == self.identity["server_id"]:
            server_id = random.randint(*SERVER_ID_RANGE)
        stream: Any = iter_replication_packets(self.connect(), file, start, batch=True, server_id=server_id)
        try:
            for packet in stream:
                if packet.file != file:
                    if end is None:
                        return          # the server moved on to the next file: this one is complete
                    break
                if packet.artificial:
                    continue
                if end is not None and packet.offset + len(packet.raw) > end:
                    if packet.offset < end:
                        yield dataclasses.replace(packet, raw=packet.raw[:end - packet.offset], last=0)
                    return
                yield packet
                if end is not None and packet.offset + len(packet.raw) == end:
                    return
        finally:
            stream.close()
        raise ReplicationError(f"{self.where}: {file} ends before {end}, where the GTID dump resumed")

    def _explain_1236(self, err: ReplicationError) -> None:
        text = str(err).lower()
        if "purged" in text:
            raise PurgedPositionError("the server no longer has the binlogs holding the transactions after "
                                      "the state's GTID set (purged) — start again with --from earliest and "
                                      f"a new --state directory ({err})", errno=1236) from err
        if "same server_uuid/server_id" in text or "same server id" in text:
            raise ServerIdCollisionError(f"another replica connected with this tail's server_id "
                                         f"{self.identity['server_id']}: {err}") from err
