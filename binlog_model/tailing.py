"""``binlog-model tail``: follow a live server's binlog as a replica, with durable checkpoints and reconnects.

Strategy: the incremental machinery of ``events --state`` (``RunState``, ``lock_state``, ``recover_outputs``,
the output writer) over a replication stream (``io.replication``) instead of files. A tail holds the state
directory for its whole life and runs *sessions*: a session loads the committed state, builds the
assembler from its schema history, opens a new output part, connects, and streams. Whatever ends a session
early (a lost or silent connection, a killed dump thread, a server restart) is handled exactly as a
``kill -9`` followed by a restart: the uncommitted output is cut back (``recover_outputs``), and the next
session resumes from the last commit after a backoff. There is one recovery path, and the kill tests cover
it.

Commits happen where the assembler is idle after an event (``StatementAssembler.idle``: nothing pending,
so the next event starts a transaction or is framing): every ``commit_transactions`` transactions or
``commit_seconds``, whichever comes first, on each heartbeat (the server has nothing more, so the last
event ended a transaction), at ``--stop-at-end`` and on SIGTERM/SIGINT. A commit fsyncs the output (and the
spool), then atomically replaces the state: position, GTIDs, schema history, the output's committed length.
The restart point is therefore always the start of the first uncommitted transaction.

Resuming: by file:position on the server the state was built on (exact, and what every server supports);
by GTID set (MySQL ``COM_BINLOG_DUMP_GTID``, MariaDB ``@slave_connect_state``) when the state knows the
complete set at its position and the server has GTIDs, which also lets the state move to another server
of the same replication topology. A GTID dump may send the head of a file again (MariaDB) or skip
transactions (MySQL): on the same server, events before the committed position are not fed again.
The complete set is known from a file's start (PREVIOUS_GTIDS / GTID_LIST) or from ``--from now``.

The replica ``server_id`` defaults to a random id in ``SERVER_ID_RANGE``, chosen once and kept in the state,
so a restarted tail replaces its own old dump thread on the server instead of colliding with it; the
tail registers under a name that carries the state's token, so a *different* replica with the same id is
told apart and named (``ServerIdCollisionError``).
"""

from __future__ import annotations

import os
import random
import secrets
import sys
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from binlog_model.errors import BinlogError, ConfigError, ConnectionLostError, ReplicationError
from binlog_model.gtid import GtidSet
from binlog_model.incremental import _Writer
from binlog_model.io.documents import fsync_dir, truncate_durably
from binlog_model.io.live import ServerURL, server_password
from binlog_model.io.replication import Heartbeat, iter_replication_events
from binlog_model.io.state import PARTIAL, RunState, StateMismatchError, lock_state, recover_outputs
from binlog_model.position import BinlogPosition
from binlog_model.resolve.assembler import AssemblerStats, StatementAssembler
from binlog_model.resolve.options import ResolveOptions
from binlog_model.wire import events as ev
from schema_tracker.history import SchemaHistory

__all__ = ["SERVER_ID_RANGE", "PurgedPositionError", "ServerIdCollisionError", "TailResult", "TailSettings",
           "parse_start", "run_tail"]

#: where a default replica server_id is drawn from: high enough to stay clear of hand-numbered servers
SERVER_ID_RANGE: Final = (3_000_000_000, 3_999_999_999)
_BACKOFF_FIRST, _BACKOFF_MAX = 0.2, 30.0


class PurgedPositionError(ReplicationError):
    """The server no longer has the binlog the tail must continue from (purged): exit code 3."""


class ServerIdCollisionError(ConfigError):
    """Another replica of the server uses this tail's server_id (or it is the server's own id)."""


@dataclass
class TailSettings:
    """What ``run_tail`` needs; the CLI fills it from its options."""

    server: ServerURL
    state_dir: Path
    out_dir: Path
    options: ResolveOptions
    shaping: dict[str, Any]
    load_history: Callable[[], SchemaHistory]
    password: str | None = None
    fmt: str = "jsonl"
    json_defaults: bool = False
    verify_checksum: bool = True
    server_id: int | None = None
    start: str = "earliest"
    stop_at_end: bool = False
    heartbeat: float = 5.0
    commit_transactions: int = 1000
    commit_seconds: float = 1.0
    resume_by: str = "auto"                 # auto | position | gtid
    reconnect_for: float | None = None      # give up after this many seconds without a working session
    part_bytes: int = 1 << 30               # start a new output part past this size (at a commit)
    connect: Callable[..., Any] | None = None
    on_progress: Callable[[dict[str, Any]], None] | None = None
    on_reconnect: Callable[[BaseException, float], None] | None = None
    stop: threading.Event = field(default_factory=threading.Event)


@dataclass
class TailResult:
    events: int = 0
    commits: int = 0
    sessions: int = 0
    reconnects: int = 0
    position: str | None = None
    stats: AssemblerStats = field(default_factory=AssemblerStats)


def parse_start(text: str) -> tuple[str, Any]:
    """``--from``: ``("earliest", None)``, ``("now", None)``, ``("position", (file, pos))`` or
    ``("gtid", GtidSet)``; ``ConfigError`` for anything else."""
    if text in ("earliest", "now"):
        return text, None
    file, sep, pos = text.rpartition(":")
    if sep and pos.isdigit() and file and "-" not in file.split(".")[-1] and not _looks_like_uuid(file):
        if int(pos) < 4:
            raise ConfigError(f"--from {text}: a binlog position starts at 4")
        return "position", (file, int(pos))
    try:
        return "gtid", GtidSet.parse(text)
    except ConfigError as err:
        raise ConfigError(f"--from {text!r} is neither earliest, now, FILE:POS nor a GTID set: {err}") from None


def _looks_like_uuid(text: str) -> bool:
    head = text.split(":")[0]
    return len(head) == 36 and head.count("-") == 4


def run_tail(settings: TailSettings) -> TailResult:
    """Follow the server until ``--stop-at-end`` is reached or ``settings.stop`` is set (then the current
    transaction is finished and committed). Raises ``PurgedPositionError``, ``ServerIdCollisionError``,
    ``StateMismatchError``, ``StateLockedError`` and the pipeline's errors; connection losses are retried."""
    if settings.fmt not in ("jsonl", "proto"):
        raise ConfigError(f"format must be jsonl or proto, not {settings.fmt!r}")
    out = Path(settings.out_dir)
    result = TailResult()
    with lock_state(settings.state_dir):
        state = RunState.load(settings.state_dir)
        shaping = {**settings.shaping, "format": settings.fmt, "out": str(out.resolve())}
        state.check_options(shaping)
        recover_outputs(state, out)
        state.options = {**shaping, "snapshot": state.options.get("snapshot", shaping.get("snapshot"))}
        source = dict(state.source or {})
        if state.fresh and state.source is None:
            source["token"] = secrets.token_hex(4)
        if settings.server_id is not None:
            source["server_id"] = settings.server_id
        source.setdefault("server_id", random.randint(*SERVER_ID_RANGE))
        state.source = source
        password = settings.password if settings.password is not None else server_password(settings.server)
        target: tuple[str, int] | None = None
        failing_since: float | None = None
        delay = _BACKOFF_FIRST
        while True:
            session = _Session(settings, state, out, password, result)
            result.sessions += 1
            try:
                if settings.stop_at_end and target is None:
                    target = session.server_end()
                done = session.run(target)
                failing_since, delay = None, _BACKOFF_FIRST
            except ConnectionLostError as err:
                session.abandon()
                now = time.monotonic()
                if session.progressed:
                    failing_since, delay = None, _BACKOFF_FIRST
                failing_since = failing_since or now
                if settings.reconnect_for is not None and now - failing_since > settings.reconnect_for:
                    raise
                result.reconnects += 1
                if settings.on_reconnect is not None:
                    settings.on_reconnect(err, delay)
                if settings.stop.wait(delay):
                    return result
                delay = min(delay * 2, _BACKOFF_MAX)
                continue
            except BaseException:
                session.abandon()
                raise
            session.finish()
            if done:
                state.runs += 1
                state.save()
                return result


class _Session:
    """One connection's worth of streaming (see the module docstring)."""

    def __init__(self, settings: TailSettings, state: RunState, out: Path, password: str,
                 result: TailResult) -> None:
        self.settings = settings
        self.state = state
        self.out = out
        self.password = password
        self.result = result
        history = (SchemaHistory.from_json(state.history) if state.history is not None
                   else settings.load_history())
        self.assembler = StatementAssembler(history, settings.options)
        self.result.stats = self.assembler.stats
        self.name = ""
        self.writer: _Writer | None = None
        self._new_part()
        self.progressed = False
        # GTID-bearing events since the last commit: a file's PREVIOUS_GTIDS / GTID_LIST (all before it)
        # and each transaction's GTID
        self.gtid_events: list[Any] = []
        pos = state.position or {}
        self.gtids_complete = bool(pos.get("gtids_complete"))
        self.committed: tuple[str, int] | None = (pos["file"], pos["offset"]) if pos else None
        self.is_mariadb = False

    # --- connections ----------------------------------------------------------------------------------

    def connect(self, **kw: Any) -> Any:
        server = self.settings.server
        params: dict[str, Any] = {"user": server.user, "password": self.password, "charset": "utf8mb4",
                                  "connect_timeout": 10, "autocommit": True}
        if server.socket:
            params["unix_socket"] = server.socket
        else:
            params.update(host=server.host, port=server.port)
        params.update(kw)
        import pymysql
        connect = self.settings.connect or pymysql.connect
        where = server.socket or f"{server.host}:{server.port}"
        try:
            return connect(**params)
        except pymysql.err.OperationalError as err:
            code = err.args[0] if err.args else None
            if code in (1044, 1045, 1698):
                raise ConfigError(f"cannot log in to {server.user}@{where}: {err.args[-1]} (set the password "
                                  "in $BINLOG_MODEL_PASSWORD)") from None
            raise ConnectionLostError(f"cannot connect to {where}: {err.args[-1] if err.args else err}",
                                      errno=code) from err
        except (pymysql.Error, OSError) as err:
            raise ConnectionLostError(f"cannot connect to {where}: {err}") from err

    def _query(self, conn: Any, sql: str) -> list[dict[str, Any]]:
        import pymysql
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
                names = [d[0].lower() for d in cur.description or ()]
                return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
        except pymysql.err.OperationalError as err:
            raise ConnectionLostError(f"the server stopped answering ({err.args[-1]})",
                                      errno=err.args[0]) from err

    def _status(self, conn: Any) -> tuple[str, int]:
        import pymysql
        for sql in ("SHOW BINARY LOG STATUS", "SHOW MASTER STATUS"):
            try:
                rows = self._query(conn, sql)
            except pymysql.err.ProgrammingError:
                continue
            if not rows:
                raise ConfigError(f"{self.where}: binary logging is off (log_bin): nothing to tail")
            return str(rows[0]["file"]), int(rows[0]["position"])
        raise ConfigError(f"{self.where}: cannot read the binlog position (SHOW BINARY LOG STATUS)")

    @property
    def where(self) -> str:
        server = self.settings.server
        return server.socket or f"{server.host}:{server.port}"

    def server_end(self) -> tuple[str, int]:
        """Where the server's binlog ends now (``--stop-at-end``)."""
        conn = self.connect()
        try:
            return self._status(conn)
        finally:
            conn.close()

    # --- the stream -----------------------------------------------------------------------------------

    def run(self, target: tuple[str, int] | None) -> bool:
        """Stream until the target or a stop request (True), or raise ``ConnectionLostError``."""
        settings = self.settings
        control = self.connect()
        try:
            start = self._plan(control)
            if target is not None and self.committed is not None and _key(self.committed) >= _key(target):
                return True
        finally:
            control.close()
        kind, where = start
        timeout = max(settings.heartbeat * 3, settings.heartbeat + 5)
        stream_conn = self.connect(read_timeout=timeout, write_timeout=timeout)
        kw: dict[str, Any] = {"server_id": self.state.source["server_id"], "blocking": True,  # type: ignore[index]
                              "heartbeat": settings.heartbeat, "markers": True,
                              "verify_checksum": settings.verify_checksum,
                              "register_as": f"binlog-model-tail:{self.state.source['token']}"}  # type: ignore[index]
        if kind == "mysql_gtid":
            kw["mysql_gtids"] = where
        elif kind == "mariadb_gtid":
            kw["mariadb_gtid"] = where
        else:
            kw["log_file"], kw["log_pos"] = where
        skip_before = _key(self.committed) if self.committed is not None and kind != "position" else None
        stream = iter_replication_events(stream_conn, **kw)
        try:
            return self._consume(stream, target, skip_before)
        except ReplicationError as err:
            if err.errno == 1236 and not isinstance(err, ConnectionLostError):
                self._explain_1236(err)
            raise
        finally:
            stream.close()

    def _plan(self, conn: Any) -> tuple[str, Any]:
        """Where this session's dump starts; checks the server (identity, purged files, server_id)."""
        settings, state = self.settings, self.state
        info = self._query(conn, "SELECT VERSION() AS version, @@server_id AS server_id")[0]
        self.is_mariadb = "mariadb" in str(info["version"]).lower()
        source = state.source
        assert source is not None
        if int(info["server_id"]) == source["server_id"]:
            raise ServerIdCollisionError(f"--server-id {source['server_id']} is the server's own server_id; "
                                         "pick another")
        self._check_collision(conn, source)
        uuid = "" if self.is_mariadb else str(self._query(conn, "SELECT @@server_uuid AS u")[0]["u"])
        gtid_mode = self.is_mariadb or str(self._query(conn, "SELECT @@gtid_mode AS m")[0]["m"]).upper() == "ON"
        same_server = source.get("server_uuid") in (None, uuid) and source.get("server") in (None, self.where)
        source.setdefault("server_uuid", uuid)
        source.setdefault("server", self.where)
        files = [str(r["log_name"]) for r in self._query(conn, "SHOW BINARY LOGS")]
        if not files:
            raise ConfigError(f"{self.where}: binary logging is off (log_bin): nothing to tail")
        if state.position is None and state.gtids.__bool__() is False:
            return self._first_start(conn, files)
        by_gtid = settings.resume_by == "gtid" or (settings.resume_by == "auto" and self.gtids_complete
                                                   and gtid_mode and not (same_server and self.committed
                                                                          and self.committed[0] in files))
        if settings.resume_by == "gtid" and not self.gtids_complete and state.position is not None:
            by_gtid = False      # the set at the position is not known yet (started mid-file)
        if by_gtid and self.is_mariadb and state.gtids.has_mariadb:
            return "mariadb_gtid", state.gtids.mariadb_text()
        if by_gtid and not self.is_mariadb and state.gtids.has_mysql:
            return "mysql_gtid", state.gtids
        if self.committed is None:
            raise ConfigError("the state holds a GTID set but the server cannot start from it (no GTIDs)")
        file, offset = self.committed
        if file not in files:
            self._missing(file, files)
        return "position", (file, offset)

    def _first_start(self, conn: Any, files: list[str]) -> tuple[str, Any]:
        kind, value = parse_start(self.settings.start)
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
            self.state.gtids = value
            self.gtids_complete = True
            return ("mariadb_gtid", value.mariadb_text()) if self.is_mariadb else ("mysql_gtid", value)
        # now: the current end of the binlog and the GTIDs executed up to it, read under a global read lock
        # so no transaction commits between the two reads
        self._query(conn, "FLUSH TABLES WITH READ LOCK")
        try:
            file, offset = self._status(conn)
            sql = "SELECT @@gtid_binlog_pos AS g" if self.is_mariadb else "SELECT @@gtid_executed AS g"
            text = str(self._query(conn, sql)[0]["g"] or "")
        finally:
            self._query(conn, "UNLOCK TABLES")
        self.state.gtids = GtidSet.parse(text.replace("\n", ""))
        self.gtids_complete = True
        return "position", (file, offset)

    def _check_collision(self, conn: Any, source: dict[str, Any]) -> None:
        import pymysql
        rows: list[dict[str, Any]] = []
        for sql in ("SHOW REPLICAS", "SHOW SLAVE HOSTS"):
            try:
                rows = self._query(conn, sql)
                break
            except pymysql.err.ProgrammingError:
                continue
        ours = f"binlog-model-tail:{source['token']}"
        for row in rows:
            if int(row.get("server_id", 0)) == source["server_id"] and str(row.get("host")) != ours:
                raise ServerIdCollisionError(
                    f"server_id {source['server_id']} is already used by the replica {row.get('host')}:"
                    f"{row.get('port')} of {self.where}: two replicas with one server_id cut each other off; "
                    "give this tail another --server-id (a new --state directory keeps it)")

    def _missing(self, file: str, files: list[str]) -> None:
        if BinlogPosition(file, 0).sort_key() < BinlogPosition(files[0], 0).sort_key():
            raise PurgedPositionError(f"the server no longer has {file} (purged); the oldest it has is "
                                      f"{files[0]} — start again with --from earliest (or a GTID set) and a "
                                      "new --state directory", errno=1236)
        raise StateMismatchError(f"the server at {self.where} has no binlog {file} (its binlogs are "
                                 f"{files[0]}…{files[-1]}): was it reset, or is this another server? Use a new "
                                 "--state directory")

    def _explain_1236(self, err: ReplicationError) -> None:
        text = str(err).lower()
        if "purged" in text:
            raise PurgedPositionError(f"the server no longer has the binlogs holding the transactions after "
                                      f"the state's GTID set (purged) — start again with --from earliest and "
                                      f"a new --state directory ({err})", errno=1236) from err
        if "same server_uuid/server_id" in text or "same server id" in text:
            raise ServerIdCollisionError(f"another replica connected with this tail's server_id "
                                         f"{self.state.source['server_id']}: {err}") from err  # type: ignore[index]

    def _consume(self, stream: Generator[Any, None, None], target: tuple[str, int] | None,
                 skip_before: tuple[Any, ...] | None) -> bool:
        settings = self.settings
        assembler = self.assembler
        writer = self.writer
        assert writer is not None
        candidate: tuple[str, int] | None = None
        outer_end = ("", 0)
        pending_tx = 0
        last_commit = time.monotonic()
        busy = False
        for item in stream:
            if isinstance(item, Heartbeat):
                if candidate is not None and candidate != self.committed:
                    self.commit(candidate)
                    pending_tx, last_commit = 0, time.monotonic()
                if settings.stop.is_set() or (target is not None and self.committed is not None
                                               and _key(self.committed) >= _key(target)):
                    return True
                continue
            header = item.header
            outer = header.inner_index is None
            if outer and skip_before is not None:
                if _key((header.file, header.offset)) < skip_before:
                    continue
                skip_before = None
            if outer and isinstance(item, ev.PreviousGtidsEvent | ev.GtidListEvent | ev.GtidEvent
                                    | ev.MariadbGtidEvent):
                self.gtid_events.append(item)
            if outer:
                outer_end = (os.path.basename(header.file), header.offset + header.event_size)
            for event in assembler.feed(item):
                writer.write(event)
                self.result.events += 1
            if not assembler.idle or isinstance(item, ev.TransactionPayloadEvent):
                busy = True              # (a payload's inner events follow it)
                continue
            if busy:
                pending_tx += 1
                busy = False
            # after a compressed transaction's last inner event: the end of its TRANSACTION_PAYLOAD
            candidate = outer_end
            reached = target is not None and _key(candidate) >= _key(target)
            if (reached or settings.stop.is_set() or pending_tx >= settings.commit_transactions
                    or time.monotonic() - last_commit >= settings.commit_seconds):
                self.commit(candidate)
                pending_tx, last_commit = 0, time.monotonic()
                if reached or settings.stop.is_set():
                    return True
        raise ConnectionLostError("the server ended the binlog dump")

    # --- commits --------------------------------------------------------------------------------------

    def commit(self, position: tuple[str, int]) -> None:
        writer = self.writer
        assert writer is not None
        writer.sync()
        state = self.state
        for event in self.gtid_events:          # in binlog order: a file's base, then its transactions
            if isinstance(event, ev.PreviousGtidsEvent):
                state.gtids.add_previous_gtids(event)
                self.gtids_complete = True
            elif isinstance(event, ev.GtidListEvent):
                state.gtids.add_gtid_list(event)
                self.gtids_complete = True
            else:
                state.gtids.add_event(event)
        self.gtid_events.clear()
        state.position = {"file": position[0], "offset": position[1], "gtids_complete": self.gtids_complete}
        state.history = self.assembler.history.to_json()
        state.open_output = {"file": self.name, "bytes": writer.size} if writer.size else None
        state.save()
        self.committed = position
        self.progressed = True
        self.result.commits += 1
        self.result.position = f"{position[0]}:{position[1]}"
        if settings_progress := self.settings.on_progress:
            settings_progress({"position": self.result.position, "events": self.result.events,
                               "commits": self.result.commits, "gtids": str(state.gtids)})
        if writer.size >= self.settings.part_bytes:
            self.finish()
            self._new_part()

    def _new_part(self) -> None:
        fmt = self.settings.fmt
        self.name = f"part-{len(self.state.outputs) + 1:06d}.{'jsonl' if fmt == 'jsonl' else 'pb'}"
        self.writer = _Writer(self.out / (self.name + PARTIAL), fmt, self.settings.json_defaults)

    def finish(self) -> None:
        """The session's output part becomes a finished file, listed in the state."""
        writer = self.writer
        if writer is None:
            return
        writer.close()
        self.writer = None
        state = self.state
        committed = int(state.open_output["bytes"]) if state.open_output else 0
        state.open_output = None
        if committed:
            state.outputs.append({"file": self.name, "bytes": committed})
        state.save()
        partial = self.out / (self.name + PARTIAL)
        if committed:
            truncate_durably(partial, committed)
            os.replace(partial, self.out / self.name)
        elif partial.exists():
            partial.unlink()
        fsync_dir(self.out)

    def abandon(self) -> None:
        """A session that failed: close its output; what it committed stays (``recover_outputs``)."""
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        recover_outputs(self.state, self.out)


def _key(position: tuple[str, int]) -> tuple[Any, ...]:
    return BinlogPosition(position[0], position[1]).sort_key()


def stderr_line(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
