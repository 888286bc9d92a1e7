"""The ``EventSource`` protocol: decoded binlog events plus the boundaries the decoder itself saw.

Strategy: a source is anything that decodes binlog bytes (files, a Spark byte range, a replication
connection) and yields, in stream order, the decoded events (``binlog_model.wire.events``) interleaved with
small boundary markers. The runner (``binlog_model.runs.runner``) is the only consumer that needs the
markers; ``StatementAssembler.feed`` never sees them. Markers come from what the source's decoder already
read, so nothing re-opens a file to learn its FORMAT_DESCRIPTION or where it rotates to:

``FileBegin``          reading starts (or resumes) in ``file`` at ``offset`` (0: from the magic)
``FormatDescription``  the file's FORMAT_DESCRIPTION event as raw bytes (what ``BinlogDecoder.resume``
                       needs): after the FDE event of a file read from its start, or right after
                       ``FileBegin`` when the source resumed mid-file with known bytes
``TransactionStart``   before the top-level event that starts a unit of work (a GTID, a BEGIN without
                       GTID, a DDL statement as its own unit) at ``offset``: a place a run can stop at
``TransactionEnd``     after the event that ends one (XID, COMMIT, ROLLBACK, XA PREPARE, the DDL);
                       ``offset`` is where the next top-level event starts (for a compressed
                       transaction: right after its inner XID, the end of the TRANSACTION_PAYLOAD)
``Rotate``             after a top-level ROTATE event: the file the stream continues in
``FileEnd``            after the last whole event read from ``file`` (its end, or the end of a byte range);
                       ``partial_bytes``: trailing bytes of a half-written event left unread
``FlushPoint``         a live source has delivered everything its server has written so far (a
                       heartbeat; ``offset``: where the server says it stands, 0 if it does not): a run
                       commits where it is, so the last transaction of a burst is not left waiting

``file`` is always the name events carry in ``header.file`` (a path or URI as given to a file source, the
server's file name for a replication source). The markers other than ``FileBegin``, ``FileEnd`` and
``FlushPoint`` come from ``runs.transactions.BoundaryTracker`` (the one detector of units of work), which
every source uses per file: ``tracker.wrap(events, decoder)``.

Resuming: the runner hands a source a ``Resume``: the saved ``Position`` (file, offset, the file's
FORMAT_DESCRIPTION bytes, the file a ROTATE before it named), the ``GtidSet`` done so far, and the files
finished (name -> end offset). A file source starts at the position (checking the files given against
it); a replication source may start there with COM_BINLOG_DUMP, or from the GtidSet with
COM_BINLOG_DUMP_GTID / MariaDB's ``@slave_connect_state``. Either way the events it yields must begin at a
transaction boundary at or after the position, with ``FileBegin`` (and ``FormatDescription``) first.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from binlog_model.gtid import GtidSet
from binlog_model.wire import events as ev

__all__ = ["BOUNDARY_TYPES", "Boundary", "EventSource", "FileBegin", "FileEnd",
           "FlushPoint", "FormatDescription", "Position", "Resume", "Rotate", "TransactionEnd",
           "TransactionStart", "decoded"]


# --- boundaries ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FileBegin:
    """Reading starts in ``file`` at ``offset`` (0: from its magic; else an event boundary)."""

    file: str
    offset: int


@dataclass(frozen=True, slots=True)
class FormatDescription:
    """The raw FORMAT_DESCRIPTION event of ``file`` (header, body and checksum as in the file), which the
    decoder of the events after ``offset`` reads with. None only for binlog v1/v3 files, which have none."""

    file: str
    offset: int
    raw: bytes | None


@dataclass(frozen=True, slots=True)
class TransactionStart:
    """A unit of work starts at ``offset`` (the next event): with nothing pending, a run may stop here."""

    file: str
    offset: int


@dataclass(frozen=True, slots=True)
class TransactionEnd:
    """A unit of work ended with the previous event; ``offset`` is where the next top-level event starts."""

    file: str
    offset: int


@dataclass(frozen=True, slots=True)
class Rotate:
    """A top-level ROTATE event (ending at ``offset``): the stream continues in ``next_file`` at
    ``next_position``."""

    file: str
    offset: int
    next_file: str
    next_position: int


@dataclass(frozen=True, slots=True)
class FileEnd:
    """The source is done with ``file`` (or its byte range): ``offset`` is the end of the last whole event
    read; ``partial_bytes`` the bytes after it that are an incomplete event (only when the source may stop
    before a half-written tail)."""

    file: str
    offset: int
    partial_bytes: int = 0


@dataclass(frozen=True, slots=True)
class FlushPoint:
    """A live source has nothing more for now: every event its server wrote (up to ``offset`` of ``file``
    by the server's word, 0 when it does not say) has been yielded."""

    file: str
    offset: int


Boundary = FileBegin | FormatDescription | TransactionStart | TransactionEnd | Rotate | FileEnd | FlushPoint
_BOUNDARY_CLASSES = (FileBegin, FormatDescription, TransactionStart, TransactionEnd, Rotate, FileEnd,
                     FlushPoint)
BOUNDARY_TYPES: frozenset[type] = frozenset(_BOUNDARY_CLASSES)


def decoded(items: Iterable[ev.Event | Boundary]) -> Iterator[ev.Event]:
    """The decoded events of a source's stream, without its markers (for a reader that needs no
    boundaries: a dump, the DDL pass)."""
    return (item for item in items if not isinstance(item, _BOUNDARY_CLASSES))


# --- resuming -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Position:
    """Where a run stopped: the next event starts at ``offset`` of ``file`` (a base name).
    ``format_description``: that file's FORMAT_DESCRIPTION bytes (to resume the decoder there);
    ``rotated_to``: the file a ROTATE at the end of ``file`` named, when the run stopped at that end."""

    file: str
    offset: int
    format_description: bytes | None = None
    rotated_to: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The run state's form (``RunState.position``)."""
        return {"file": self.file, "offset": self.offset, "rotated_to": self.rotated_to,
                "format_description": self.format_description.hex() if self.format_description else None}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any] | None) -> Position | None:
        if doc is None:
            return None
        fde = doc.get("format_description")
        return cls(doc["file"], int(doc["offset"]), bytes.fromhex(fde) if fde else None,
                   doc.get("rotated_to"))

    def __str__(self) -> str:
        return f"{self.file}:{self.offset}"


@dataclass(frozen=True)
class Resume:
    """What a source needs to continue a run: the saved position (None: from the start), the GTIDs done,
    and the files finished so far (base name -> end offset; a file source checks its input against them)."""

    position: Position | None = None
    gtids: GtidSet = field(default_factory=GtidSet)
    files: Mapping[str, int] = field(default_factory=dict)


# --- the protocol -------------------------------------------------------------------------------------------


@runtime_checkable
class EventSource(Protocol):
    """Decoded events and ``Boundary`` markers, in stream order (see the module docstring).

    ``read(resume)`` starts (or continues at ``resume``; None: a run without state) and yields until the
    input ends (a file source) or the caller stops iterating (a live source). Errors are ``BinlogError``
    subclasses naming the file and offset. ``total_bytes``: the input's size when known, else None;
    ``bytes_read``: how much of it was read so far (both for progress; updated per chunk, not per event)."""

    @property
    def total_bytes(self) -> int | None: ...

    @property
    def bytes_read(self) -> int: ...

    def read(self, resume: Resume | None = None) -> Iterator[ev.Event | Boundary]: ...
