"""``binlog-model tail``: follow a live server's binlog as a replica, with durable checkpoints and reconnects.

Strategy: the incremental machinery of ``events --state`` (``RunState``, ``lock_state``, ``begin_run``,
``recover_outputs``, the output writer) over a live server as an ``EventSource``
(``io.replication_source.ReplicationSource``) instead of files, driven by the one runner
(``runs.runner.Runner``), which owns the commit points and the GTID bookkeeping. A tail holds the state
directory for its whole life and runs *sessions*: a session loads the committed state, builds the
assembler from its schema history, opens a new output part, connects, and runs the source through a
``Runner``. Whatever ends a session
early (a lost or silent connection, a killed dump thread, a server restart) is handled exactly as a
``kill -9`` followed by a restart: the uncommitted output is cut back (``recover_outputs``), and the next
session resumes from the last commit after a backoff. There is one recovery path, and the kill tests cover
it.

The runner commits where the assembler is idle (``StatementAssembler.idle``: nothing pending): at a
transaction's end every ``commit_transactions`` transactions or ``commit_seconds``, whichever comes first,
at the end of each file, on each heartbeat (the source's ``FlushPoint``: the server has nothing more, so
the last event read ended a transaction), and where a stop is asked for: ``--stop-at-end`` reached, or
SIGTERM/SIGINT (``settings.stop``). A commit fsyncs the output (and the spool), then atomically replaces
the state: position, GTIDs (each transaction's, and a file's PREVIOUS_GTIDS / GTID_LIST), schema history,
the output's committed length. The restart point is therefore always the start of the first uncommitted
transaction. The fsyncs and the state's replacement run on a committer thread while the stream is decoded
on (a catch-up's commit syncs a second of output); the state document is built when the commit is asked
for, and the next commit waits for the previous one, so a state never names output that is not synced.

Resuming: by file:position on the server the state was built on (exact, and what every server supports);
by GTID set (MySQL ``COM_BINLOG_DUMP_GTID``, MariaDB ``@slave_connect_state``) when the state knows the
complete set at its position and the server has GTIDs, which also lets the state move to another server
of the same replication topology. A GTID dump may send the head of a file again (MariaDB) or skip
transactions (MySQL): on the same server, events before the committed position are not fed again.
The complete set is known from a file's start (PREVIOUS_GTIDS / GTID_LIST) or from ``--from now``.
On another server (a failover) the state's file:offset and the schema history's positions are the old
server's: the session resumes by GTID set, starts the schema history anew from the schema in force, and
its commits record the new server as the one followed.

The replica ``server_id`` defaults to a random id in ``SERVER_ID_RANGE``, chosen once and kept in the state,
so a restarted tail replaces its own old dump thread on the server instead of colliding with it; the
tail registers under a name that carries the state's token, so a *different* replica with the same id is
told apart and named (``ServerIdCollisionError``).

About 540 lines: the run (state, retries, commits) and the session it starts per connection share the
state document and the output; each piece that stands alone (the connection, the failures, the output
files, the runner) lives in its own module already.
"""

from __future__ import annotations

import contextlib
import os
import random
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from binlog_model.errors import ConfigError, ConnectionLostError
from binlog_model.faults import kill_point
from binlog_model.io.connector import Connector
from binlog_model.io.live import PASSWORD_ENV, ServerURL, server_password
from binlog_model.io.replication_source import (
    SERVER_ID_RANGE,
    PurgedPositionError,
    ReplicationSource,
    ServerIdCollisionError,
    parse_start,
)
from binlog_model.io.state import PARTIAL, RunState, finish_output, lock_state, recover_outputs
from binlog_model.position import position_key
from binlog_model.resolve.assembler import AssemblerStats, StatementAssembler
from binlog_model.resolve.options import ResolveOptions
from binlog_model.runs.committer import Committer
from binlog_model.runs.continuity import begin_run
from binlog_model.runs.output import OutputWriter, part_name
from binlog_model.runs.progress import Counters
from binlog_model.runs.runner import Checkpoint, CommitPolicy, Runner, resume_of
from binlog_model.runs.source import Position, Resume
from binlog_model.sinks import sink_class
from schema_tracker.history import SchemaHistory

__all__ = ["SERVER_ID_RANGE", "PurgedPositionError", "ServerIdCollisionError", "TailResult", "TailSettings",
           "parse_start", "run_tail"]

_BACKOFF_FIRST, _BACKOFF_MAX = 0.2, 30.0
#: seconds a control query (the position, the binlog list) may take to answer
CONTROL_READ_TIMEOUT: Final = 30


@dataclass
class TailSettings:
    """What ``run_tail`` needs; the CLI fills it from its options. ``shaping``: the options that shape the
    output (``runs.continuity.shaping``), compared with the state's."""

    server: ServerURL
    state_dir: Path
    out_dir: Path
    options: ResolveOptions
    shaping: dict[str, Any]
    load_history: Callable[[], SchemaHistory]
    password: str | None = None
    fmt: str = "jsonl"
    json_defaults: bool = False
    json_values: str = "typed"
    zstd_level: int | None = None           # compress the parts: zstd frames, one ending at each commit
    snapshot_id: str | None = None
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
    on_session: Callable[[str], None] | None = None
    #: ``display(poll)``: shows ``live_counters`` while streaming (the CLI's live ``ProgressDisplay``)
    display: Callable[[Callable[[], Counters]], contextlib.AbstractContextManager[Any]] | None = None
    lenient_ddl: bool = False
    snapshot_now: bool = False              # --from now: the schema is read from the server at that moment
    spool: Any = None                       # an io.spool.Spool: the raw mirror, synced at each commit
    #: in place of part files: ``output(state, history, settle)`` gives the session's output (``apply``'s
    #: replica: events in; its ``checkpoint(Checkpoint)`` gives back the commit's work, which runs on the
    #: committer thread before the state is saved; ``settle`` waits for that work; it records no bytes)
    output: Callable[[RunState, Callable[[], SchemaHistory], Callable[[], None]], Any] | None = None
    #: ``prepare(state, connect)``: called with the state locked, before the first session (``apply
    #: --initial live`` takes its snapshot there, and sets ``start`` and ``load_history`` from it)
    prepare: Callable[[RunState, Callable[..., Any]], None] | None = None
    stop: threading.Event = field(default_factory=threading.Event)


@dataclass
class TailResult:
    events: int = 0
    commits: int = 0
    sessions: int = 0
    reconnects: int = 0
    position: str | None = None
    stats: AssemblerStats = field(default_factory=AssemblerStats)
    # for the live display: the current session's source, the last commit, the --stop-at-end target
    source: Any = field(default=None, repr=False)
    committed: tuple[str, int] | None = None
    target: tuple[str, int] | None = None


def live_counters(result: TailResult) -> Callable[[], Counters]:
    """The ``poll`` of a tail's live display: the committed position, the lag behind the server (seconds
    from the last event's timestamp, 0 once a heartbeat said it has nothing more; bytes only where the end
    is known: the ``--stop-at-end`` target in the same file), and the events so far."""
    def poll() -> Counters:
        source, at, end = result.source, result.committed, result.target
        lag: float | None = None
        if source is not None and source.caught_up:
            lag = 0.0
        elif source is not None and source.event_time:
            lag = max(0.0, time.time() - source.event_time)
        behind = end[1] - at[1] if at is not None and end is not None and at[0] == end[0] else None
        return Counters(rows=result.events, unit="events", position=result.position, lag_seconds=lag,
                        lag_bytes=max(0, behind) if behind is not None else None)
    return poll


def run_tail(settings: TailSettings) -> TailResult:
    """Follow the server until ``--stop-at-end`` is reached or ``settings.stop`` is set (then the current
    transaction is finished and committed). Raises ``PurgedPositionError``, ``ServerIdCollisionError``,
    ``StateMismatchError``, ``StateLockedError`` and the pipeline's errors; connection losses are retried."""
    if settings.output is None and settings.fmt not in ("jsonl", "proto"):
        raise ConfigError(f"format must be jsonl or proto, not {settings.fmt!r}")
    if settings.connect is None:
        # every connection of the run: TLS as the URL asks, failures classified once, the first one's patience
        server = settings.server
        settings.connect = Connector(server.where, server.user, tls=server.tls,
                                     connect_timeout=server.connect_timeout, stop=settings.stop)
    out = Path(settings.out_dir)
    result = TailResult()
    with lock_state(settings.state_dir):
        state = RunState.load(settings.state_dir)
        begin_run(state, settings.shaping, settings.snapshot_id,
                  lambda done: None if settings.output is not None else recover_outputs(state, Path(done)))
        source = dict(state.source or {})
        if state.fresh and state.source is None:
            source["token"] = secrets.token_hex(4)
        if settings.server_id is not None:
            source["server_id"] = settings.server_id
        source.setdefault("server_id", random.randint(*SERVER_ID_RANGE))
        state.source = source
        if settings.output is not None and state.fresh:
            state.save()    # a replica's app id is the state's token: saved before anything is written
        if state.position is not None:
            # a resume says where it stands even when nothing new comes to commit
            result.committed = (state.position["file"], state.position["offset"])
            result.position = f"{state.position['file']}:{state.position['offset']}"
        password = settings.password if settings.password is not None else server_password(settings.server)
        if settings.prepare is not None:
            settings.prepare(state, lambda **kw: server_connection(settings, password, **kw))
        target: tuple[str, int] | None = None
        failing_since: float | None = None
        delay = _BACKOFF_FIRST
        shown = (settings.display(live_counters(result)) if settings.display is not None
                 else contextlib.nullcontext())
        with shown:
            while True:
                session = _Session(settings, state, out, password, result)
                result.sessions += 1
                try:
                    if settings.stop_at_end and target is None:
                        target = result.target = session.server_end()
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
                if settings.options.tables.active:
                    result.stats.unmatched_table_patterns = settings.options.tables.unmatched(
                        session.assembler.seen_tables())
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
        pos = state.position or {}
        identity = state.source
        assert identity is not None
        self.source = ReplicationSource(self.connect, self.where, identity, start=settings.start,
                                        heartbeat=settings.heartbeat, resume_by=settings.resume_by,
                                        gtids_complete=bool(pos.get("gtids_complete")),
                                        verify_checksum=settings.verify_checksum,
                                        snapshot_now=settings.snapshot_now, take_snapshot=_catalog_of,
                                        on_packet=None if settings.spool is None else settings.spool.write)
        history = (SchemaHistory.from_json(state.history) if state.history is not None
                   else SchemaHistory(None, lenient=settings.lenient_ddl) if settings.snapshot_now
                   else settings.load_history())
        # a sink that takes serialized events (proto) gets the compiled row builder's bytes, as `events`; so
        # does `apply`'s output (the replica's writer reads the row images from them in C)
        self.serialized = settings.output is not None or sink_class(settings.fmt).takes_serialized
        self.assembler = StatementAssembler(history, settings.options, serialized=self.serialized)
        self.result.stats = self.assembler.stats
        self.result.source = self.source
        self.name = ""
        self.writer: OutputWriter | None = None
        self.committer = Committer()
        self._new_part()
        self.progressed = False
        self.gtids_complete = bool(pos.get("gtids_complete"))
        self.committed: tuple[str, int] | None = (pos["file"], pos["offset"]) if pos else None
        self._history_doc: tuple[Any, ...] | None = None   # the last history saved, and its document

    # --- the server ---------------------------------------------------------------------------------

    def connect(self, **kw: Any) -> Any:
        """``server_connection`` with this session's password."""
        return server_connection(self.settings, self.password, **kw)

    @property
    def where(self) -> str:
        server = self.settings.server
        return server.socket or f"{server.host}:{server.port}"

    def server_end(self) -> tuple[str, int]:
        """Where the server's binlog ends now (``--stop-at-end``)."""
        return self.source.binlog_end()

    # --- the stream -----------------------------------------------------------------------------------

    def run(self, target: tuple[str, int] | None) -> bool:
        """Stream until the target or a stop request (True), or raise ``ConnectionLostError``."""
        state = self.state
        resume = resume_of(state)
        kind, where = self.source.plan(resume)
        if self.source.start_gtids is not None:         # --from now / a GTID set: the set done so far
            state.gtids = self.source.start_gtids
            resume = Resume(resume.position, state.gtids, resume.files)
        self.gtids_complete = self.source.gtids_complete
        if self.settings.output is not None and not self.source.same_server:
            raise ConfigError(f"the state follows another server than {self.where}: a replica's commits are "
                              "keyed by the positions of the server it follows (a failover needs a new state "
                              "and --to)")
        history: SchemaHistory | None = None
        if state.history is None and self.source.snapshot_catalog is not None:
            history = SchemaHistory(self.source.snapshot_catalog, lenient=self.settings.lenient_ddl)
        elif not self.source.same_server:
            # a failover: the history is keyed by the old server's positions, which say nothing here (the
            # new server's files sort before or after them at random; a lookup would find an older schema,
            # a DDL would go "backwards"). The schema in force now starts a history of the new server.
            old = self.assembler.history
            history = SchemaHistory(old.catalog, lenient=old.lenient, server_version=old.server_version)
        if history is not None:
            self.assembler = StatementAssembler(history, self.settings.options, serialized=self.serialized)
            self.result.stats = self.assembler.stats
        if (target is not None and self.committed is not None and self.source.same_server
                and _key(self.committed) >= _key(target)):
            return True     # (another server's position says nothing about this one's end)
        if self.settings.spool is not None:
            # one spool mirrors one server: after a failover its file names would mix two servers' files
            self.settings.spool.follow(self.source.followed["server_uuid"] or self.source.followed["server"])
            if self.committed is not None:
                self.settings.spool.recover(*self.committed)  # what a killed run wrote past its commit goes
        if self.settings.on_session is not None:
            shown = f"{where[0]}:{where[1]}" if kind == "position" else f"GTID set {where}"
            self.settings.on_session(f"streaming from {shown}" + (" (by GTID)" if kind != "position" else ""))
        settings = self.settings

        def stop(at: Position | None) -> bool:
            return settings.stop.is_set() or (target is not None and at is not None
                                               and _key((at.file, at.offset)) >= _key(target))

        # the runner's files stay its own: a server's binlogs are not the state's input files
        runner = Runner(self.source, self.assembler, resume,
                        # a replica's commit by time waits while its last MERGEs run: a MERGE rewrites the
                        # files it touches, so one commit of two intervals' changes costs about what one
                        # of one interval's does
                        CommitPolicy(commit_seconds=settings.commit_seconds,
                                     commit_transactions=settings.commit_transactions,
                                     busy=self.committer.busy if settings.output is not None else None),
                        output_size=lambda: self.writer.mark() if self.writer is not None else 0,
                        on_commit=self.commit, stop=stop)
        result = self.result
        for event in runner.events():
            self.writer.write(event)    # type: ignore[union-attr]  # a part is open while streaming
            result.events += 1
        return runner.stopped     # a live source ends only by a stop (else ConnectionLostError)

    # --- commits --------------------------------------------------------------------------------------

    def commit(self, checkpoint: Checkpoint) -> None:
        """The runner's checkpoint made durable: a replica's merges, the output (and the spool) synced,
        then the state. That runs on the session's committer thread (``runs.committer``) while the stream
        is decoded on; the state document is built here, as the run's GtidSet and history are at the
        checkpoint."""
        committer = self.committer
        committer.wait()                # one commit at a time: the previous one is durable from here on
        writer = self.writer
        assert writer is not None
        position = checkpoint.position
        applied = getattr(writer, "checkpoint", None)
        # a replica's merges, run first on the committer thread: its commits are what the state then names
        merge = applied(checkpoint) if applied is not None else None
        state = self.state
        self.gtids_complete = self.gtids_complete or checkpoint.gtids_based
        size = writer.commit_length(checkpoint.output_bytes)     # a frame ends here when compressed
        # the position is now this server's (after a failover: the new one's, from here on it is followed)
        update = {"position": {**position.to_json(), "gtids_complete": self.gtids_complete},
                  "history": self._history_json(checkpoint.history),
                  "source": {**(state.source or {}), **self.source.followed},
                  "open_output": {"file": self.name, "bytes": size} if size else None}
        document = state.encoded(**update)
        # what the progress line says of this commit, as it is now (printed once it is durable)
        source = self.source
        # at --stop-at-end, reaching the server's end is being caught up, heartbeat or not
        target = self.result.target
        caught_up = source.caught_up or (target is not None and source.same_server
                                         and _key((position.file, position.offset)) >= _key(target))
        lag = 0.0 if caught_up else max(0.0, time.time() - source.event_time)
        seen = {"events": self.result.events, "gtids": str(state.gtids), "lag_seconds": round(lag, 3),
                "caught_up": caught_up}
        spool = self.settings.spool
        descriptors = [fd for fd in (writer.flushed_fd(), spool.flushed_fd() if spool is not None else None)
                       if fd is not None]

        def durable() -> None:
            if merge is not None:
                merge()
            try:
                for fd in descriptors:
                    os.fsync(fd)
            finally:
                for fd in descriptors:
                    os.close(fd)
            kill_point("output-synced")
            if spool is not None and position.rotated_to is not None:
                spool.ended(position.file, position.offset)     # at a file's end: the spool's copy is whole
            state.save(document)
            kill_point("state-saved")
            # only now does the state in memory move on: it always says what is on disk
            state.position, state.history = update["position"], update["history"]
            state.source, state.open_output = update["source"], update["open_output"]
            result = self.result
            self.committed = result.committed = (position.file, position.offset)
            self.progressed = True
            result.commits += 1
            result.position = str(position)
            if self.settings.on_progress is not None:
                self.settings.on_progress({"position": result.position, "commits": result.commits, **seen})

        if spool is not None and position.rotated_to is not None:
            committer.run(durable)      # the spool's file list changes on this thread: not concurrently
        else:
            committer.submit(durable)
        if writer.stored_size >= self.settings.part_bytes:
            self.finish()
            self._new_part()

    def _history_json(self, history: SchemaHistory) -> dict[str, Any]:
        """The history's document, built again only when the history changed (a DDL) since the last one."""
        # a history only grows (DDL entries); the assembler sets its server version and initial catalog
        cached = self._history_doc
        settings = (history.server_version, history.lenient)
        if (cached is None or cached[0] is not history or cached[1] != len(history)
                or cached[2] is not history.initial or cached[3] != settings):
            cached = self._history_doc = (history, len(history), history.initial, settings, history.to_json())
        return cached[4]

    def _new_part(self) -> None:
        if self.settings.output is not None:
            self.writer = self.settings.output(self.state, lambda: self.assembler.history,
                                               self.committer.wait)
            return
        fmt = self.settings.fmt
        zstd_level = self.settings.zstd_level
        self.name = part_name(self.state, fmt, zstd_level)
        self.writer = OutputWriter(self.out / (self.name + PARTIAL), fmt, self.settings.json_defaults,
                                   self.settings.json_values, zstd_level)

    def finish(self) -> None:
        """The session's output part becomes a finished file, listed in the state."""
        self.committer.wait()
        if self.settings.spool is not None:
            self.settings.spool.sync()
        writer = self.writer
        if writer is None:
            return
        writer.close()
        self.writer = None
        if self.settings.output is not None:
            return
        state = self.state
        committed = int(state.open_output["bytes"]) if state.open_output else 0
        state.open_output = None
        if committed:
            state.outputs.append({"file": self.name, "bytes": committed})
        state.save()
        finish_output(self.out, self.out / (self.name + PARTIAL), self.name, committed)

    def abandon(self) -> None:
        """A session that failed: close its output; what it committed stays (``recover_outputs``). A
        commit that failed on the committer thread raises here (after the cleanup)."""
        try:
            self.committer.wait()
        finally:
            if self.settings.spool is not None:
                self.settings.spool.close()
            if self.writer is not None:
                self.writer.close()
                self.writer = None
            if self.settings.output is None:
                recover_outputs(self.state, self.out)


def server_connection(settings: TailSettings, password: str, **kw: Any) -> Any:
    """A pymysql connection to the server; unreachable is ``ConnectionLostError`` (retried), refused
    credentials a ``ConfigError``. Every read has a timeout (a server that accepts the connection but
    never answers, or a stalled network, would otherwise hang the tail): ``CONTROL_READ_TIMEOUT`` for
    the control queries, the heartbeat's for the dump."""
    server = settings.server
    params: dict[str, Any] = {"user": server.user, "password": password, "charset": "utf8mb4",
                              "connect_timeout": 10, "autocommit": True,
                              "read_timeout": CONTROL_READ_TIMEOUT, "write_timeout": CONTROL_READ_TIMEOUT}
    if server.socket:
        # a local socket is private already: like the MySQL clients, no TLS there (it would only cost
        # the server's encryption and our decryption of every byte of the dump)
        params.update(unix_socket=server.socket, ssl_disabled=True)
    else:
        params.update(host=server.host, port=server.port)
    params.update(kw)
    import pymysql
    where = server.socket or f"{server.host}:{server.port}"
    connect = settings.connect or pymysql.connect
    try:
        return connect(**params)
    except pymysql.err.OperationalError as err:
        code = err.args[0] if err.args else None
        if code in (1044, 1045, 1698):
            raise ConfigError(f"cannot log in to {server.user}@{where}: {err.args[-1]} (the "
                              f"password comes from the URL, ${PASSWORD_ENV[0]} or a prompt)") from None
        raise ConnectionLostError(f"cannot connect to {where}: {err.args[-1] if err.args else err}",
                                  errno=code) from err
    except (pymysql.Error, OSError) as err:
        raise ConnectionLostError(f"cannot connect to {where}: {err}") from err


def _catalog_of(conn: Any) -> Any:
    from schema_tracker.snapshot import catalog_from_server
    return catalog_from_server(conn)


def _key(position: tuple[str, int]) -> tuple[Any, ...]:
    return position_key(*position)
