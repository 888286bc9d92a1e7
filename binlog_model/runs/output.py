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

    ``mark()`` is what the runner records at each place it may commit: the output's length as the sink
    wrote it (uncompressed). ``commit_length(mark)`` turns it into the file length to commit;
    ``stored_size`` is the file's length as written so far."""

    def __init__(self, path: Path, fmt: str, json_defaults: bool, json_values: str = "typed",
                 zstd_level: int | None = None) -> None:
        self.path = path
        self.fmt = fmt
        self.json_defaults = json_defaults
        self.json_values = json_values
        self.zstd_level = zstd_level
        self._sink: EventSink | None = None
        self._zstd: ZstdFrameWriter | None = None
        # the last frame end: (uncompressed, compressed) lengths there
        self._frame_end = (0, 0)

    @property
    def size(self) -> int:
        """The output's length as the sink wrote it (uncompressed)."""
        return self._sink.bytes_written if self._sink is not None else 0

    def mark(self) -> int:
        """``size``, where the runner marks a place it may commit later: compressed output keeps a frame
        end possible there (``ZstdFrameWriter.mark``)."""
        if self._zstd is not None:
            self._zstd.mark()
        return self.size

    @property
    def stored_size(self) -> int:
        """The file's length as written so far."""
        if self.zstd_level is None:
            return self.size
        return self._zstd.stored_bytes if self._zstd is not None else self._frame_end[1]

    def commit_length(self, size: int) -> int:
        """The file length that holds exactly the output up to ``size`` (a ``mark``/``size`` value):
        ``size`` itself for plain output; for compressed output a frame is ended there and its compressed
        length returned. Raises ``BinlogError`` when no frame can end there any more (more than
        ``ZstdFrameWriter.HOLD_MAX`` bytes written since that mark)."""
        if self.zstd_level is None:
            return size
        if size == self._frame_end[0]:
            return self._frame_end[1]
        stream = self._zstd
        try:
            if stream is None:
                raise ValueError("nothing was written")
            stream.end_frame(at=size)
        except ValueError as err:
            raise BinlogError(f"compressed output {self.path} cannot be committed at {size} uncompressed "
                              f"bytes ({err})") from err
        self._frame_end = (size, stream.stored_bytes)
        return stream.stored_bytes

    def write(self, event: Any) -> None:
        if self._sink is None:
            if self.zstd_level is not None:
                self._zstd = create_zstd(self.path, self.zstd_level)
            self._sink = open_sink(self.fmt, self._zstd or self.path,  # type: ignore[arg-type]
                                   json_defaults=self.json_defaults, json_values=self.json_values)
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
