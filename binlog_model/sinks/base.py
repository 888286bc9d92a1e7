"""What every event sink shares: a binary stream, the events and bytes written to it, flush/sync/close.

Strategy: a sink turns each ``BinlogEvent`` into one record of bytes (``encode``) and appends it to a
binary stream. It counts events and bytes, so a caller that commits output (``binlog_model.runs.incremental``)
knows the exact committed length. A sink opened on a path owns the file and closes it; one given a stream
(stdout, a caller's file) leaves it open. Sinks are context managers.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import IO, Any, ClassVar, Self

from google.protobuf.message import Message

from binlog_model._pb.binlog_event_pb2 import BinlogEvent

__all__ = ["EventSink"]


class EventSink:
    """Records of ``BinlogEvent`` s appended to a binary stream; subclasses say how an event is encoded.

    ``events`` and ``bytes_written`` count what this sink wrote. A subclass names its ``--format``
    (``format_name``), the suffix of the files it writes (``suffix``), whether its output is binary
    (``binary``: never to a terminal) and whether it takes an event's serialized bytes as they are
    (``takes_serialized``: the runner then never builds messages for it); the registry
    (``binlog_model.sinks.FORMATS``) lists the subclasses by ``format_name``. ``include_defaults``: a text
    sink also writes fields at their default value; ``json_values`` (``typed``/``plain``) is the JSON lines
sink's form of column values; binary sinks ignore both.
    """

    format_name: ClassVar[str] = ""
    suffix: ClassVar[str] = ""
    binary: ClassVar[bool] = False
    takes_serialized: ClassVar[bool] = False

    def __init__(self, stream: IO[bytes], *, owns_stream: bool = False, include_defaults: bool = False,
                 json_values: str = "typed") -> None:
        self._stream: IO[bytes] | None = stream
        self._owns = owns_stream
        self.events = 0
        self.bytes_written = 0

    @classmethod
    def open(cls, path: str | os.PathLike[str], **options: Any) -> Self:
        """A sink writing a new file at ``path`` (replacing one that exists); it closes the file."""
        return cls(Path(path).open("wb"), owns_stream=True, **options)

    def encode(self, event: Message) -> bytes:
        """The record bytes of one event."""
        raise NotImplementedError

    def write(self, event: Message | bytes) -> int:
        """Append one event; returns the bytes written. Bytes are an already serialized ``BinlogEvent``:
        a sink that writes protobuf takes them as they are (``DelimitedSink``), the others parse them."""
        if isinstance(event, bytes):
            return self.write_serialized(event)
        return self._append(self.encode(event))

    def write_serialized(self, body: bytes | bytearray | memoryview) -> int:
        """Append one event given as its serialized bytes."""
        return self.write(BinlogEvent.FromString(bytes(body)))

    def write_all(self, events: Iterable[Message] | Iterable[bytes]) -> int:
        """Append every event of ``events`` (lazily, one at a time); returns how many were written."""
        before = self.events
        for event in events:
            self.write(event)
        return self.events - before

    def _append(self, record: bytes, rest: bytes | bytearray | memoryview = b"") -> int:
        """Write one record (``record`` then ``rest``, its second part when there is one)."""
        if self._stream is None:
            raise ValueError("write to a closed sink")
        self._stream.write(record)
        if rest:
            self._stream.write(rest)
        size = len(record) + len(rest)
        self.events += 1
        self.bytes_written += size
        return size

    def flush(self) -> None:
        if self._stream is not None:
            self._stream.flush()

    def flushed_fd(self) -> int | None:
        """Flush to the OS and return a new descriptor of the same file (the caller fsyncs and closes it:
        an fsync on another thread while this sink goes on writing); None for a closed sink."""
        if self._stream is None:
            return None
        self._stream.flush()
        return os.dup(self._stream.fileno())

    def sync(self) -> None:
        """Flush and fsync: what was written survives a crash (for streams backed by a file)."""
        if self._stream is not None:
            self._stream.flush()
            os.fsync(self._stream.fileno())

    def close(self) -> None:
        """Flush; close the stream if this sink opened it. Closing twice is harmless."""
        if self._stream is None:
            return
        stream, self._stream = self._stream, None
        if self._owns:
            stream.close()
        else:
            stream.flush()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
