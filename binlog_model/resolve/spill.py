"""The open transaction's output: held in memory up to ``spill_bytes``, then in a temporary file.

A transaction's BinlogEvents are held back until its commit (ROLLBACK and ROLLBACK TO SAVEPOINT must be
able to discard them); a transaction larger than ``spill_bytes`` spills to a temporary file as
length-delimited messages, so memory stays flat whatever the transaction's size.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Iterator
from typing import Any

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.model import iter_delimited, write_delimited

__all__ = ["TransactionBuffer"]


class TransactionBuffer:
    """BinlogEvents of the open transaction, in memory until ``spill_bytes``, then in a temporary file."""

    def __init__(self, spill_bytes: int) -> None:
        self._spill_bytes = spill_bytes
        self._events: list[pb.BinlogEvent] = []
        self._bytes = 0
        self._file: Any = None          # spilled events (length-delimited), oldest first
        self._spilled = 0

    def __len__(self) -> int:
        return self._spilled + len(self._events)

    def append(self, event: pb.BinlogEvent, size: int | None = None) -> None:
        """Hold ``event``; ``size`` is its approximate byte size when the caller knows it (else measured)."""
        self._events.append(event)
        self._bytes += event.ByteSize() if size is None else size
        if self._bytes > self._spill_bytes:
            if self._file is None:
                self._file = tempfile.TemporaryFile(prefix="binlog-model-tx-")  # noqa: SIM115 (closed by discard)
            write_delimited(self._file, self._events)
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
        write_delimited(kept, itertools.islice(self._iter_spilled(), count))
        self._file.close()
        self._file = kept
        self._spilled = count
        self._events.clear()
        self._bytes = 0

    def _iter_spilled(self) -> Iterator[pb.BinlogEvent]:
        if self._file is None:
            return iter(())
        self._file.seek(0)
        return iter_delimited(self._file)

    def drain(self) -> Iterator[pb.BinlogEvent]:
        yield from self._iter_spilled()
        yield from self._events
        self.discard()

    def discard(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._events = []
        self._spilled = 0
        self._bytes = 0
