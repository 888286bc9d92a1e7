"""The output part files of the runs that append to a folder (``events --state``, ``tail``): their names and
the writer whose byte count a commit records.

A part is written as ``NAME.partial`` (``io.state.PARTIAL``); the state says how many of its bytes are
committed, and ``io.state.finish_output`` / ``recover_outputs`` make it ``NAME``, cutting it back to that
length. A compressed part (``zstd_level``, ``NAME`` ends ``.zst``) ends a zstd frame at each commit
(``commit_length``), so the committed length is always a frame boundary and the cut leaves whole frames.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from binlog_model.errors import BinlogError
from binlog_model.io.compression import ZSTD_SUFFIX, ZstdFrameWriter, create_zstd
from binlog_model.io.state import RunState
from binlog_model.sinks import EventSink, open_sink, sink_class

__all__ = ["OutputWriter", "part_name"]


def part_name(state: RunState, fmt: str, zstd_level: int | None = None) -> str:
    """The next output part of ``state`` in format ``fmt``: ``part-NNNNNN.<the sink's suffix>``, plus
    ``.zst`` when compressed."""
    compressed = ZSTD_SUFFIX if zstd_level is not None else ""
    return f"part-{len(state.outputs) + 1:06d}.{sink_class(fmt).suffix}{compressed}"


class OutputWriter:
    """The run's output file: the sink of ``fmt`` (JSON lines or length-delimited protobuf), opened on the
    first event, zstd-compressed at ``zstd_level`` when it is given.

    ``size`` is the output's length as the sink wrote it (uncompressed): cheap, what the runner records at
    each mark. ``commit_length(size)`` turns a mark's ``size`` into the file length to commit; ``stored_size``
    is the file's length as written so far."""

    def __init__(self, path: Path, fmt: str, json_defaults: bool, zstd_level: int | None = None) -> None:
        self.path = path
        self.fmt = fmt
        self.json_defaults = json_defaults
        self.zstd_level = zstd_level
        self._sink: EventSink | None = None
        self._zstd: ZstdFrameWriter | None = None
        # the last frame end: (uncompressed, compressed) lengths there
        self._frame_end = (0, 0)

    @property
    def size(self) -> int:
        return self._sink.bytes_written if self._sink is not None else 0

    @property
    def stored_size(self) -> int:
        if self.zstd_level is None:
            return self.size
        return self._zstd.stored_bytes if self._zstd is not None else self._frame_end[1]

    def commit_length(self, size: int) -> int:
        """The file length that holds exactly the output up to ``size`` (a ``size`` value): ``size`` itself
        for plain output; for compressed output the frame is ended here (when ``size`` is now) and its
        compressed length returned. Raises ``BinlogError`` for a compressed length asked for a point that
        is neither now nor the last frame end (no frame ends there to cut back to)."""
        if self.zstd_level is None:
            return size
        if size == self._frame_end[0]:
            return self._frame_end[1]
        stream = self._zstd
        if stream is None or size != self.size:
            raise BinlogError(f"compressed output {self.path} cannot be committed at {size} uncompressed "
                              f"bytes: its frames end at {self._frame_end[0]} and it is at {self.size}")
        stream.end_frame()
        self._frame_end = (size, stream.stored_bytes)
        return stream.stored_bytes

    def write(self, event: Any) -> None:
        if self._sink is None:
            if self.zstd_level is not None:
                self._zstd = create_zstd(self.path, self.zstd_level)
            self._sink = open_sink(self.fmt, self._zstd or self.path,  # type: ignore[arg-type]
                                   json_defaults=self.json_defaults)
        self._sink.write(event)

    def sync(self) -> None:
        if self._sink is not None:
            self._sink.sync()

    def flushed_fd(self) -> int | None:
        """``EventSink.flushed_fd``: everything written is with the OS; a descriptor to fsync it by."""
        return self._sink.flushed_fd() if self._sink is not None else None

    def close(self) -> None:
        if self._sink is not None:
            self._sink.close()
            self._sink = None
        if self._zstd is not None:
            self._zstd.close()
            self._zstd = None
