"""The open transaction's output: held in memory up to ``spill_bytes``, then in a temporary file.

A transaction's BinlogEvents are held back until its commit (ROLLBACK and ROLLBACK TO SAVEPOINT must be
able to discard them); a transaction larger than ``spill_bytes`` spills to a temporary file as
length-delimited messages, so memory stays flat whatever the transaction's size.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Iterable, Iterator
from typing import IO, Any

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.framing import frame, iter_frames

__all__ = ["TransactionBuffer"]


class TransactionBuffer:
    """BinlogEvents of the open transaction, in memory until ``spill_bytes``, then in a temporary file.

    An event is held as a message, or as its serialized bytes (what the compiled row builder's pieces
    become); ``drain`` gives them all as messages, or all as bytes with ``serialized=True``.
    """

    def __init__(self, spill_bytes: int, *, serialized: bool = False) -> None:
        self._spill_bytes = spill_bytes
        self.serialized = serialized
        self._events: list[pb.BinlogEvent | bytes] = []
        self._bytes = 0
        self._file: IO[bytes] | None = None          # spilled events (length-delimited), oldest first
        self._spilled = 0

    def __len__(self) -> int:
        return self._spilled + len(self._events)

    def append(self, event: pb.BinlogEvent | bytes, size: int | None = None) -> None:
        """Hold ``event``; ``size`` is its approximate byte size when the caller knows it (else measured)."""
        self._events.append(event)
        if size is None:
            size = len(event) if isinstance(event, bytes) else event.ByteSize()
        self._bytes += size
        if self._bytes > self._spill_bytes:
            if self._file is None:
                self._file = tempfile.TemporaryFile(prefix="binlog-model-tx-")  # noqa: SIM115 (closed by discard)
            _write_frames(self._file, (_body(e) for e in self._events))
            self._spilled += len(self._events)
            self._events.clear()
            self._bytes = 0

    def truncate(self, count: int) -> None:
        """Drop every event after the first ``count`` (ROLLBACK TO SAVEPOINT)."""
        if count >= self._spilled:
            del self._events[count - self._spilled:]
            return
        # Rare: the savepoint lies inside the spilled part; copy the first ``count`` events one by one.
        kept = tempfile.TemporaryFile(prefix="binlog-model-tx-")  # noqa: SIM115 (closed by discard)
        _write_frames(kept, itertools.islice(self._iter_spilled(), count))
        if self._file is not None:     # always here: count < spilled
            self._file.close()
        self._file = kept
        self._spilled = count
        self._events.clear()
        self._bytes = 0

    def _iter_spilled(self) -> Iterator[bytes]:
        if self._file is None:
            return iter(())
        self._file.seek(0)
        return _read_frames(self._file)

    def drain(self) -> Iterator[Any]:
        """Every held event in order: messages, or serialized bytes when ``serialized``."""
        if self.serialized:
            yield from self._iter_spilled()
            for e in self._events:
                yield e if isinstance(e, bytes) else e.SerializeToString()
        else:
            for body in self._iter_spilled():
                yield pb.BinlogEvent.FromString(body)
            for e in self._events:
                yield pb.BinlogEvent.FromString(e) if isinstance(e, bytes) else e
        self.discard()

    def discard(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._events = []
        self._spilled = 0
        self._bytes = 0


def _body(event: pb.BinlogEvent | bytes) -> bytes:
    return event if isinstance(event, bytes) else event.SerializeToString()


def _write_frames(stream: IO[bytes], bodies: Iterable[bytes]) -> None:
    # Our own temporary file, in the delimited format of the proto sink.
    for body in bodies:
        stream.write(frame(body))


def _read_frames(stream: IO[bytes]) -> Iterator[bytes]:
    for _offset, body in iter_frames(stream, file="(spill file)"):
        yield body
