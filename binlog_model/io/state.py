"""The saved state of incremental runs (``--state DIR``): what is done, and the schema at that point.

Strategy: one JSON document, ``DIR/state.json``, replaced atomically (written to a temporary file in the
same directory, fsynced, ``os.replace``d, the directory fsynced), so a run killed at any moment leaves
either the previous state or the one of its last committed step, never a mix. It holds:

- ``options``: the options that shape the output; a later run with other values is refused
  (``StateMismatchError``), since its output could not be concatenated with the earlier runs';
- ``position``: where the next run resumes (file base name, offset of the next transaction, and that
  file's FORMAT_DESCRIPTION bytes, needed to decode from the middle of a file), plus the file a ROTATE
  event at its end named, if any;
- ``files``: every file base name done or started, with the bytes consumed;
- ``gtid_executed``: the GTIDs of the transactions done (``binlog_model.gtid.GtidSet.to_json``: MySQL
  intervals per ``uuid`` or ``uuid:tag``, MariaDB the latest ``domain-server-seq`` per domain), and
  ``gtid_text``, the same set as MySQL / MariaDB print it; empty without GTIDs (the position is then the
  only record);
- ``history``: the schema history at ``position`` (``SchemaHistory.to_json``);
- ``source``: for a live tail only, the replica identity it keeps across runs (its ``server_id``) and the
  server it follows;
- ``outputs``: the output files committed so far, in order, each with its committed length in bytes, and
  ``open_output``: the file a run is writing, with the bytes its committed steps wrote;
- ``publishing``: the commit marker of runs that publish staged files (``resolve --state``, ``resolve
  --stream``: ``runs.commit``): the staged folder the state committed and whose files are not all moved
  yet, None otherwise. The next run finishes that publish before it compares anything;
- ``stream_batch``: for ``resolve --stream`` only, the last micro-batch id published.

Version 1 documents (``publishing`` kept inside ``options``) are read and written back as version 2.

Output files are committed with the state: a run writes ``NAME.partial`` and only the state says how many
of its bytes are committed. ``recover_outputs`` (run at the start of every run) truncates a partial file to
its committed length and renames it, or deletes a partial file no state mentions, so the output directory
then holds exactly what the state says.

One run at a time: ``lock_state`` takes an exclusive ``flock`` on ``DIR/state.lock`` before a run reads or
recovers anything and holds it to the run's last commit, so a second run started meanwhile (a cron job that
fires again) is refused with ``StateLockedError`` instead of recovering away the first run's open output. The
OS drops the lock when its holder dies, even by SIGKILL. Where ``flock`` is a no-op or local to one machine
(NFS mounted without locking, many FUSE and object-store mounts, some SMB setups) it does not hold: keep the
state directory on a local disk or a file system with working locks.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from binlog_model.errors import BinlogError, ConfigError
from binlog_model.gtid import GtidSet
from binlog_model.io.documents import encode_json, fsync_dir, load_json, truncate_durably, write_bytes_atomic

__all__ = ["FORMAT", "VERSION", "RunState", "StateLockedError", "StateMismatchError",
           "adopt_legacy_stream_state", "finish_output", "lock_state", "recover_outputs"]

FORMAT = "binlog-model/run-state"
VERSION = 2
STATE_FILE = "state.json"
LOCK_FILE = "state.lock"
PARTIAL = ".partial"


class StateMismatchError(ConfigError):
    """A run's options or inputs do not continue the saved state (other options, missing files)."""


class StateLockedError(ConfigError):
    """Another run holds the state directory (``lock_state``). ``pid`` and ``started`` name that run (None
    when it had not written them yet)."""

    def __init__(self, directory: Path, pid: int | None, started: str | None) -> None:
        self.directory = directory
        self.pid = pid
        self.started = started
        holder = f"pid {pid}, started {started}" if pid is not None else "just starting, pid not written yet"
        super().__init__(f"state directory {directory} is in use by another run ({holder}); wait for it to "
                         "finish or use another --state")

    def __reduce__(self) -> tuple[Any, ...]:      # pickled (copied) with its fields, not only the message
        return type(self), (self.directory, self.pid, self.started)


def _state_directory(directory: str | os.PathLike[str]) -> Path:
    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise ConfigError(f"--state must be a directory: {d} is a file")
    return d


# The state directories this process holds: realpath -> (pid, thread, start time). A nested lock_state of
# the same thread (the resolve command locks before Spark starts, run_resolve again) goes through.
_HELD: dict[str, tuple[int, int, str]] = {}
_HELD_GUARD = threading.Lock()


@contextlib.contextmanager
def lock_state(directory: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold ``directory`` (created if missing) for one run: an exclusive, non-blocking ``flock`` on its
    ``state.lock``, in which the holder writes its pid and start time. Raises ``StateLockedError`` at once,
    having written nothing, when another process (or another thread of this one) holds it."""
    d = _state_directory(directory)
    d.mkdir(parents=True, exist_ok=True)
    key, me = os.path.realpath(d), (os.getpid(), threading.get_ident())
    with _HELD_GUARD:
        owner = _HELD.get(key)
    if owner is not None and owner[:2] == me:
        yield d
        return
    if owner is not None:
        raise StateLockedError(d, owner[0], owner[2])
    # Opened without truncating: a refused run must leave the holder's note as it is.
    fd = os.open(d / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StateLockedError(d, *_holder(fd)) from None
        except OSError as err:       # ENOLCK and the like: a file system without working locks
            raise ConfigError(f"cannot lock the state directory {d} ({err.strerror}): put --state on a local "
                              "disk or a file system with working flock locks") from err
        started = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "started": started}).encode() + b"\n", 0)
        with _HELD_GUARD:
            _HELD[key] = (*me, started)
        try:
            yield d
        finally:
            with _HELD_GUARD:
                del _HELD[key]
            os.ftruncate(fd, 0)     # no stale holder for a reader racing the next run's note
    finally:
        os.close(fd)                # releases the flock (the OS does the same for a killed process)


def _holder(fd: int) -> tuple[int | None, str | None]:
    """The pid and start time the holder wrote into the lock file (None, None before it wrote them)."""
    try:
        doc = json.loads(os.pread(fd, 4096, 0) or b"null")
        return int(doc["pid"]), str(doc["started"])
    except (OSError, ValueError, TypeError, KeyError):
        return None, None


@dataclass
class RunState:
    """The state document (see the module docstring); ``load`` / ``save`` read and write it."""

    directory: Path
    options: dict[str, Any] = field(default_factory=dict)
    position: dict[str, Any] | None = None
    files: dict[str, int] = field(default_factory=dict)
    gtids: GtidSet = field(default_factory=GtidSet)
    history: dict[str, Any] | None = None
    outputs: list[dict[str, Any]] = field(default_factory=list)
    open_output: dict[str, Any] | None = None
    runs: int = 0
    #: what a live source keeps between runs (``binlog-model tail``: its replica server_id, registration
    #: name and the server it follows); None for file runs
    source: dict[str, Any] | None = None
    #: the staged folder a committed publish has not finished moving (``runs.commit``), or None
    publishing: str | None = None
    #: ``resolve --stream``: the last micro-batch published, or None
    stream_batch: int | None = None

    @property
    def path(self) -> Path:
        return self.directory / STATE_FILE

    @property
    def fresh(self) -> bool:
        return self.runs == 0 and self.position is None

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> RunState:
        """The state in ``directory``, or an empty one when the directory has none yet."""
        d = _state_directory(directory)
        path = d / STATE_FILE
        if not path.exists():
            return cls(d)
        doc = load_json(path, f"the state file {path}")
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ConfigError(f"{path} is not a binlog-model run state")
        if doc.get("version") not in (1, VERSION):
            raise ConfigError(f"{path} has state version {doc.get('version')}; this binlog-model reads "
                              f"versions 1 and {VERSION}: use the binlog-model that wrote it")
        options = dict(doc["options"])
        publishing = doc.get("publishing", options.pop("publishing", None))   # version 1 kept it there
        return cls(d, options=options, position=doc["position"], files=doc["files"],
                   gtids=GtidSet.from_json(doc["gtid_executed"]), history=doc["history"],
                   outputs=doc["outputs"], open_output=doc["open_output"], runs=doc["runs"],
                   source=doc.get("source"), publishing=publishing, stream_batch=doc.get("stream_batch"))

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, "options": self.options, "position": self.position,
                "files": self.files, "gtid_executed": self.gtids.to_json(), "gtid_text": str(self.gtids),
                "history": self.history, "outputs": self.outputs, "open_output": self.open_output,
                "runs": self.runs, "publishing": self.publishing, "stream_batch": self.stream_batch,
                **({"source": self.source} if self.source is not None else {})}

    def encoded(self, **changes: Any) -> bytes:
        """The state document with ``changes`` (fields of ``to_json``) applied, as ``save`` writes it;
        ``self`` is unchanged (a tail builds it at a commit and writes it once the output is synced)."""
        return encode_json({**self.to_json(), **changes})

    def save(self, document: bytes | None = None) -> None:
        """Replace the state file atomically with this state, or with ``document`` (from ``encoded``)."""
        write_bytes_atomic(self.path, self.encoded() if document is None else document)

    def check_options(self, options: dict[str, Any]) -> None:
        """Refuse a run whose output-shaping options differ from the ones the state was built with."""
        if self.fresh or not self.options:
            return
        keys = (set(self.options) | set(options)) - {"snapshot"}     # later runs need no snapshot
        differ = sorted(k for k in keys if self.options.get(k) != options.get(k))
        if differ:
            shown = "; ".join(f"{k}: state {self.options.get(k)!r}, this run {options.get(k)!r}"
                              for k in differ)
            raise StateMismatchError(
                f"the options differ from the ones the state in {self.directory} was built with ({shown}); "
                "their output could not be concatenated with the earlier runs': rerun with the same options, "
                "or start a new --state directory")


def adopt_legacy_stream_state(state: RunState, legacy: Path) -> None:
    """Take over the ``_stream.json`` (``legacy``) of a ``resolve --stream`` output written before the stream
    kept a ``RunState``: its last batch and its publishing marker; the old file goes."""
    if not state.fresh or state.stream_batch is not None or not legacy.exists():
        return
    doc = load_json(legacy, f"the stream state {legacy}")
    if not isinstance(doc, dict) or "batch" not in doc:
        raise ConfigError(f"{legacy} is not the state of a resolve --stream output")
    state.stream_batch, state.publishing = doc["batch"], doc.get("publishing")
    state.save()
    legacy.unlink()


def recover_outputs(state: RunState, out_dir: Path) -> None:
    """Make ``out_dir`` agree with the committed ``state`` after a run that may have been killed: the open
    output's committed bytes become a finished output file, uncommitted bytes and unknown ``.partial``
    files go. Saves the state when it changed."""
    out_dir.mkdir(parents=True, exist_ok=True)
    changed = False
    if state.open_output is not None:
        name, size = state.open_output["file"], int(state.open_output["bytes"])
        partial = out_dir / (name + PARTIAL)
        if size and partial.exists():
            truncate_durably(partial, size)
            os.replace(partial, out_dir / name)
            state.outputs.append({"file": name, "bytes": size})
        state.open_output = None
        changed = True
    for entry in state.outputs:
        final, partial = out_dir / entry["file"], out_dir / (entry["file"] + PARTIAL)
        if not final.exists() and partial.exists():
            # Killed between the commit of the state and the rename: finish the rename.
            truncate_durably(partial, int(entry["bytes"]))
            os.replace(partial, final)
        elif not final.exists():
            raise BinlogError(f"the state in {state.directory} lists the output file {final}, which is "
                              "missing: restore it, or start a new --state directory")
    for stray in out_dir.glob("*" + PARTIAL):
        stray.unlink()      # written by a run killed before its first committed step
    if changed:
        state.save()
    fsync_dir(out_dir)


def finish_output(out_dir: Path, partial: Path, name: str, committed: int) -> Path | None:
    """A run's last step on disk, after its state was saved: the ``committed`` bytes of ``partial`` become
    the finished output ``out_dir/name`` (bytes after the last commit, an open transaction, are cut), or the
    partial file goes when nothing was committed. Returns the finished file, if any."""
    final: Path | None = None
    if committed:
        truncate_durably(partial, committed)
        os.replace(partial, out_dir / name)
        final = out_dir / name
    elif partial.exists():
        partial.unlink()
    fsync_dir(out_dir)
    return final
