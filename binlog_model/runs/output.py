"""The output part files of the runs that append to a folder (``events --state``, ``tail``): their names and
the writer whose byte count a commit records.

A part is written as ``NAME.partial`` (``io.state.PARTIAL``); the state says how many of its bytes are
committed, and ``io.state.finish_output`` / ``recover_outputs`` make it ``NAME``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from binlog_model.io.state import RunState
from binlog_model.sinks import EventSink, open_sink, sink_class

__all__ = ["OutputWriter", "part_name"]


def part_name(state: RunState, fmt: str) -> str:
    """The next output part of ``state`` in format ``fmt``: ``part-NNNNNN.<the sink's suffix>``."""
    return f"part-{len(state.outputs) + 1:06d}.{sink_class(fmt).suffix}"


class OutputWriter:
    """The run's output file: the sink of ``fmt`` (JSON lines or length-delimited protobuf), opened on the
    first event; its byte count is the exact length a step commits."""

    def __init__(self, path: Path, fmt: str, json_defaults: bool, json_values: str = "typed") -> None:
        self.path = path
        self.fmt = fmt
        self.json_defaults = json_defaults
        self.json_values = json_values
        self._sink: EventSink | None = None

    @property
    def size(self) -> int:
        return self._sink.bytes_written if self._sink is not None else 0

    def write(self, event: Any) -> None:
        if self._sink is None:
            self._sink = open_sink(self.fmt, self.path, json_defaults=self.json_defaults,
                                   json_values=self.json_values)
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
