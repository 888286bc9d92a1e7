"""One progress display for every long command (``events``, ``schema``, ``resolve``, ``dump``, the tail).

Strategy: the display never touches the hot loop. A daemon thread wakes a few times a second and reads the
run's counters through one callable (``poll`` -> ``Counters``: bytes read of the total, files done of the
total, rows), which are plain integers the reading loop already keeps (``EventSource.bytes_read``, updated
per chunk; ``AssemblerStats.row_changes``); reading them from another thread is safe under the GIL and costs
the loop nothing. What it shows depends on where stderr goes (``mode``):

- ``bar`` (stderr is a terminal): a tqdm bar of bytes done of the total with rate and ETA, and the files
  done of the total and rows/s beside it;
- ``log`` (``--progress`` off a terminal): one line every ``interval`` seconds, then a last one at the end:
  ``events: 1.2 GiB of 4.0 GiB (30%), 3 of 10 files, 120000 rows/s, ETA 0:05:00``;
- ``off``: nothing (the default off a terminal: scripts and CI logs stay as they were).

A total that is not known shows what was done and the rates, without percentage or ETA. What a run counts
its work in is its own: ``unit`` names the parts (``files``; the Spark job's ``slices``, whose bytes and
rows count as each slice's task ends), a run without bytes draws its bar in parts, and ``rows`` None is
"not known yet". ``live=True`` is the tail's display, a run with no end:
a status line (no bar, no ETA) of the position, the lag behind the server (seconds, and bytes where known)
and events/s over the last interval, from the same thread and the same ``mode`` rules.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import IO, Any, Self

__all__ = ["Counters", "ProgressDisplay", "progress_mode", "source_counters"]


@dataclass(frozen=True, slots=True)
class Counters:
    """A snapshot of a run's progress. ``*_total`` None: not known."""

    bytes_done: int = 0
    bytes_total: int | None = None
    files_done: int = 0
    files_total: int | None = None
    rows: int | None = 0
    unit: str = "files"               # what files_done counts: files, slices
    # a live run (``live=True``): where it is, and how far behind the server (None: not known)
    position: str | None = None
    lag_seconds: float | None = None
    lag_bytes: int | None = None


def progress_mode(flag: bool | None, stream: IO[str] | None = None, *, output_on_terminal: bool = False
                  ) -> str:
    """``bar``, ``log`` or ``off`` for a ``--progress/--no-progress`` flag (None: not given). A bar needs a
    terminal on stderr that the command's own output does not share (``output_on_terminal``)."""
    stream = sys.stderr if stream is None else stream
    terminal = _isatty(stream) and not output_on_terminal
    if flag is False:
        return "off"
    if terminal:
        return "bar"
    return "log" if flag else "off"


def source_counters(source: Any, rows: Callable[[], int] = lambda: 0) -> Callable[[], Counters]:
    """The ``poll`` of a run over an ``EventSource`` (``bytes_read`` / ``total_bytes``; ``files_done`` /
    ``file_count`` where the source keeps them), with ``rows`` from the assembler's stats."""
    def poll() -> Counters:
        return Counters(source.bytes_read, source.total_bytes, getattr(source, "files_done", 0),
                        getattr(source, "file_count", None), rows())
    return poll


class ProgressDisplay:
    """The display of one command (see the module docstring); a context manager that starts and stops its
    thread. ``label``: the command's name, first on every line."""

    def __init__(self, label: str, poll: Callable[[], Counters], *, mode: str = "off",
                 stream: IO[str] | None = None, interval: float = 30.0, tick: float = 0.25,
                 live: bool = False) -> None:
        if mode not in ("bar", "log", "off"):
            raise ValueError(f"progress mode must be bar, log or off, not {mode!r}")
        self.label = label
        self.poll = poll
        self.mode = mode
        self.stream = sys.stderr if stream is None else stream
        self.interval = interval
        self.tick = tick
        self.live = live
        self._rate = _Rate()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._bar: Any = None
        self._started = 0.0
        self._shown_bytes = 0
        self._in_parts = False      # the bar counts parts (files_done), not bytes

    def __enter__(self) -> Self:
        if self.mode == "off":
            return self
        self._started = time.monotonic()
        if self.mode == "bar":
            from tqdm import tqdm

            first = self._poll()
            if self.live:       # no end, so no bar: a status line the thread rewrites
                self._bar = tqdm(total=None, desc=f"{self.label}: {self._live_text(first)}",
                                 file=self.stream, dynamic_ncols=True,
                                 leave=True, mininterval=self.tick, bar_format="{desc}")
            elif first.bytes_total is None and not first.bytes_done and first.files_total is not None:
                self._bar = tqdm(total=first.files_total, desc=self.label, unit=f" {first.unit}",
                                 file=self.stream, dynamic_ncols=True, leave=True, mininterval=self.tick)
                self._in_parts = True
            else:
                self._bar = tqdm(total=first.bytes_total, desc=self.label, unit="B", unit_scale=True,
                                 unit_divisor=1024, file=self.stream, dynamic_ncols=True, leave=True,
                                 mininterval=self.tick)
        self._thread = threading.Thread(target=self._run, name=f"{self.label}-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close(finished=exc_type is None)

    def close(self, *, finished: bool = True) -> None:
        """Stop the thread; show the final state (a finished run's totals, or where a failed one stopped)."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        counters = self._poll()
        if self._bar is not None:
            self._show_bar(counters)
            self._bar.close()
            self._bar = None
        else:
            self.stream.write(self.line(counters, time.monotonic() - self._started, done=finished) + "\n")
            self.stream.flush()

    def echo(self, text: str) -> None:
        """A line of the command's own (a reconnect, a new session) on the display's stream, above the bar
        while one is drawn (written through tqdm, which clears the bar and redraws it below)."""
        bar = self._bar
        if bar is not None:
            bar.write(text, file=self.stream)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    # --- the thread ---------------------------------------------------------------------------------------

    def _run(self) -> None:
        last_log = time.monotonic()
        while not self._stop.wait(self.tick if self._bar is not None else min(self.tick * 4, self.interval)):
            counters = self._poll()
            if self._bar is not None:
                self._show_bar(counters)
            elif time.monotonic() - last_log >= self.interval:
                last_log = time.monotonic()
                self.stream.write(self.line(counters, last_log - self._started) + "\n")
                self.stream.flush()

    def _poll(self) -> Counters:
        try:
            return self.poll()
        except Exception:      # a counter read mid-change must never break the run it watches
            return Counters()

    def _show_bar(self, counters: Counters) -> None:
        bar = self._bar
        if self.live:
            bar.set_description_str(f"{self.label}: {self._live_text(counters)}", refresh=True)
            return
        done, total = ((counters.files_done, counters.files_total) if self._in_parts
                       else (counters.bytes_done, counters.bytes_total))
        if total is not None and bar.total != total:
            bar.total = total
        step = done - self._shown_bytes
        files = (f"{counters.files_done}/{counters.files_total} {counters.unit}"
                 if counters.files_total is not None else f"{counters.files_done} {counters.unit}")
        elapsed = max(time.monotonic() - self._started, 1e-9)
        rows = "" if counters.rows is None else f", {counters.rows / elapsed:,.0f} rows/s"
        # a bar of parts already shows them as its count
        bar.set_postfix_str(rows.lstrip(", ") if self._in_parts else files + rows, refresh=False)
        if step > 0:
            self._shown_bytes = done
            bar.update(step)
        else:
            bar.refresh()

    # --- the log line -------------------------------------------------------------------------------------

    def line(self, counters: Counters, elapsed: float, *, done: bool = False) -> str:
        """One log line of ``counters`` after ``elapsed`` seconds (``done``: the run finished)."""
        c = counters
        if self.live:
            text = self._live_text(c)
            return f"{self.label}: " + (f"stopped, {text}, in {_duration(elapsed)}" if done else text)
        parts = []
        if c.bytes_total is not None or c.bytes_done:
            parts.append(_size(c.bytes_done) + (f" of {_size(c.bytes_total)}" if c.bytes_total else ""))
            if c.bytes_total and not done:
                parts[0] += f" ({100 * c.bytes_done / c.bytes_total:.0f}%)"
        parts.append(f"{c.files_done} of {c.files_total} {c.unit}" if c.files_total is not None
                     else f"{c.files_done} {c.unit}")
        if c.rows is not None:
            rate = c.rows / elapsed if elapsed > 0 else 0.0
            parts.append(f"{c.rows} rows ({rate:,.0f}/s)" if done else f"{rate:,.0f} rows/s")
        if done:
            parts.append(f"in {_duration(elapsed)}")
        elif c.bytes_total and c.bytes_done:
            left = elapsed * (c.bytes_total - c.bytes_done) / c.bytes_done
            parts.append(f"ETA {_duration(left)}")
        elif c.files_total and c.files_done and c.bytes_total is None:
            left = elapsed * (c.files_total - c.files_done) / c.files_done
            parts.append(f"ETA {_duration(left)}")
        return f"{self.label}: " + ("done, " if done else "") + ", ".join(parts)

    def _live_text(self, c: Counters) -> str:
        """A live run's state: position, lag (seconds and bytes where known), events/s lately."""
        parts = [f"at {c.position or 'the start'}"]
        lag = [f"{c.lag_seconds:.1f} s" if c.lag_seconds is not None else "",
               _size(c.lag_bytes) if c.lag_bytes is not None else ""]
        if any(lag):
            parts.append("lag " + " / ".join(x for x in lag if x))
        parts.append(f"{self._rate.per_second(c.rows or 0):,.0f} events/s")
        return ", ".join(parts)


class _Rate:
    """Events/s over the last few seconds (a live run's average since its start says little after a
    stall): the count and time of the previous reading, a new rate once at least a second went by (before
    the first second: the rate so far)."""

    def __init__(self) -> None:
        self._at = time.monotonic()
        self._count = 0
        self._rate: float | None = None

    def per_second(self, count: int) -> float:
        now = time.monotonic()
        if now - self._at >= 1.0:
            self._rate = max(0, count - self._count) / (now - self._at)
            self._at, self._count = now, count
        if self._rate is None:
            return count / (now - self._at) if now > self._at else 0.0
        return self._rate


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _size(n: int | None) -> str:
    value = float(n or 0)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"


def _duration(seconds: float) -> str:
    s = int(seconds + 0.5)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
