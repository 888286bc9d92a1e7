"""zstd-compressed output files (``--compress zstd``): a writer whose frames end where a run commits, and
the reader every reader of our output goes through.

Strategy: a compressed output file is a sequence of whole zstd frames (RFC 8878 allows concatenated frames;
``zstd -d`` and every zstd library read them as one stream). ``ZstdFrameWriter`` is the binary stream an
event sink writes to: it compresses what it is given and ends the current frame at ``end_frame`` (also at
``flush``), so the file's length after a commit is a frame boundary. A run that is killed mid-frame is cut
back to the committed length by ``io.state.recover_outputs`` exactly as a plain part is: the bytes before
that length are whole frames. Frames carry zstd's content checksum, so damage inside a frame is found.

Readers sniff zstd's magic number rather than trusting a suffix (a file redirected from stdout has none):
``sniffed`` wraps a stream, ``ZstdFrameReader`` is the decompressing stream, and a frame that ends before
its last block is a ``TruncatedEventError`` naming the file and the compressed offset of that frame.
"""

from __future__ import annotations

import os
from typing import IO, Any

from binlog_model.errors import DecodeError, TruncatedEventError

__all__ = ["DEFAULT_LEVEL", "MAX_LEVEL", "ZSTD_MAGIC", "ZSTD_SUFFIX", "PrefixedStream", "ZstdFrameReader",
           "ZstdFrameWriter", "create_zstd", "is_zstd", "sniffed"]

ZSTD_SUFFIX = ".zst"
#: the first four bytes of every zstd frame (RFC 8878, 3.1.1: 0xFD2FB528, little-endian)
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# Level 1: half the CPU of level 3 on our output for ~7% more bytes (docs/benchmarks.md, "Compressed output
# and Debezium's JSON"); archives that can spend the CPU take a higher --compress-level.
DEFAULT_LEVEL = 1
MAX_LEVEL = 22
# Compressing each small record separately costs a call into zstd per record; a batch of this many bytes
# is handed over at once (the frame boundary is still exactly where end_frame is called).
_BATCH = 128 << 10
# Compressed bytes fed to the decompressor per step: bounds what one step inflates to.
_READ_CHUNK = 64 << 10


def _zstandard() -> Any:
    # imported on first use: a Spark task that reads plain records (the packed executors have no zstandard)
    # never needs it
    import zstandard

    return zstandard


def is_zstd(head: bytes) -> bool:
    """Whether bytes starting a file are a zstd frame's."""
    return head[:4] == ZSTD_MAGIC


class ZstdFrameWriter:
    """A binary write stream that zstd-compresses into ``raw``; ``end_frame`` ends the current frame.

    ``stored_bytes``: the compressed bytes handed to ``raw`` so far; right after ``end_frame`` it is the
    length of whole frames. ``written``: the uncompressed bytes written. ``close`` ends the frame and closes
    ``raw`` when ``owns_raw``, else flushes it.

    ``mark()`` names a place a frame may still end at after more is written (a run's commit may come for
    a point it passed: the last transaction start before an input cut short): bytes after the latest mark
    stay uncompressed until the next mark, up to ``HOLD_MAX``; past that they are compressed and the mark
    is given up (``end_frame(at=mark)`` then raises ``ValueError``).
    """

    HOLD_MAX = 64 << 20

    def __init__(self, raw: IO[bytes], *, level: int = DEFAULT_LEVEL, owns_raw: bool = True) -> None:
        self._raw: IO[bytes] | None = raw
        self._owns = owns_raw
        # One zstd worker thread: the compression runs beside the decoding (on another core where one is
        # free) instead of after it; its output is the same for any worker count >= 1.
        self._compressor = _zstandard().ZstdCompressor(level=level, write_checksum=True, threads=1)
        self._frame: Any = None          # the open frame's compressobj, None between frames
        self._pending = bytearray()      # written, not handed to zstd yet
        self._fed = 0                    # uncompressed bytes handed to zstd
        self._mark: int | None = None    # the latest mark, while nothing after it was handed to zstd
        self.stored_bytes = 0

    @property
    def written(self) -> int:
        return self._fed + len(self._pending)

    def mark(self) -> int:
        """Keep the current place one a frame can end at (``end_frame(at=...)``); returns ``written``."""
        self._mark = self.written
        return self._mark

    def write(self, data: bytes | bytearray | memoryview) -> int:
        pending = self._pending
        pending += data
        if len(pending) >= _BATCH:
            mark = self._mark
            if mark is None:
                self._compress(len(pending))
            elif len(pending) - (mark - self._fed) > self.HOLD_MAX:
                self._mark = None       # too much after the mark to hold: compress it, give the mark up
                self._compress(len(pending))
            elif mark - self._fed >= _BATCH:
                self._compress(mark - self._fed)
        return len(data)

    def _compress(self, size: int) -> None:
        """Hand the first ``size`` pending bytes to zstd."""
        if not size:
            return
        if self._frame is None:
            self._frame = self._compressor.compressobj()
        pending = self._pending
        self._emit(self._frame.compress(bytes(pending[:size])))
        del pending[:size]
        self._fed += size

    def _emit(self, data: bytes) -> None:
        if data:
            assert self._raw is not None
            self._raw.write(data)
            self.stored_bytes += len(data)

    def end_frame(self, at: int | None = None) -> None:
        """End the current frame after ``at`` uncompressed bytes (default: all written; else the latest
        mark, or a place after it); what was written after ``at`` starts the next frame. No empty frames.
        Raises ``ValueError`` for a place already compressed past."""
        end = self.written if at is None else at
        if not self._fed <= end <= self.written:
            raise ValueError(f"no frame can end at {end} uncompressed bytes: {self._fed} are compressed "
                             f"and {self.written} written")
        self._compress(end - self._fed)
        if self._mark is not None and self._mark <= self._fed:
            self._mark = None           # the frame ends there now
        if self._frame is not None:
            self._emit(self._frame.flush(_zstandard().COMPRESSOBJ_FLUSH_FINISH))
            self._frame = None

    def flush(self) -> None:
        """End the frame and flush ``raw``: what was written is whole frames with the OS."""
        if self._raw is None:
            return
        self.end_frame()
        self._raw.flush()

    def fileno(self) -> int:
        if self._raw is None:
            raise ValueError("fileno of a closed ZstdFrameWriter")
        return self._raw.fileno()

    def isatty(self) -> bool:
        return self._raw is not None and self._raw.isatty()

    def close(self) -> None:
        if self._raw is None:
            return
        self.flush()
        raw, self._raw = self._raw, None
        if self._owns:
            raw.close()

    @property
    def closed(self) -> bool:
        return self._raw is None


class ZstdFrameReader:
    """A binary read stream of the decompressed bytes of ``raw``, a sequence of zstd frames.

    ``read(n)`` returns up to ``n`` bytes (fewer only at the end). Raises ``TruncatedEventError`` when
    ``raw`` ends inside a frame and ``DecodeError`` for bytes that are not zstd frames; both name ``file``
    and the compressed offset of the frame.
    """

    def __init__(self, raw: IO[bytes], *, file: str | None = None, owns_raw: bool = True) -> None:
        self._raw = raw
        self._owns = owns_raw
        self.file = file
        self._decompressor = _zstandard().ZstdDecompressor()
        self._frame: Any = None          # the decompressobj of the frame being read
        self._frame_offset = 0           # compressed offset where that frame starts
        self._consumed = 0               # compressed bytes fed to decompressobjs so far
        self._input = b""                # compressed bytes read but not fed yet (the next frame's)
        self._output = bytearray()
        self._ended = False

    def read(self, n: int = -1) -> bytes:
        output = self._output
        while (n < 0 or len(output) < n) and not self._ended:
            self._step()
        if n < 0 or n >= len(output):
            data = bytes(output)
            output.clear()
        else:
            data = bytes(output[:n])
            del output[:n]
        return data

    def _step(self) -> None:
        data = self._input or self._raw.read(_READ_CHUNK)
        self._input = b""
        if not data:
            self._ended = True
            if self._frame is not None:
                raise TruncatedEventError("the file ends inside a zstd frame: it was cut short (a copy in "
                                          "progress, or a killed run's .partial part, which the next run "
                                          "with its --state cuts back to whole frames)",
                                          file=self.file, offset=self._frame_offset,
                                          expected="the rest of the zstd frame")
            return
        if self._frame is None:
            self._frame_offset = self._consumed
            # (a chunk shorter than the magic, past the first, is left to zstd to judge)
            if (self._frame_offset == 0 or len(data) >= 4) and not is_zstd(data):
                raise DecodeError("bytes that are not a zstd frame", file=self.file,
                                  offset=self._frame_offset, expected="zstd magic 28 b5 2f fd")
            self._frame = self._decompressor.decompressobj()
        try:
            self._output += self._frame.decompress(data)
        except _zstandard().ZstdError as err:
            raise DecodeError(f"corrupt zstd frame ({err})", file=self.file, offset=self._frame_offset,
                              expected="a valid zstd frame") from err
        if self._frame.eof:
            rest = self._frame.unused_data
            self._consumed += len(data) - len(rest)
            self._input = rest
            self._frame = None
        else:
            self._consumed += len(data)

    def close(self) -> None:
        if self._owns:
            self._raw.close()

    def __enter__(self) -> ZstdFrameReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class PrefixedStream:
    """``head`` (bytes already read from ``rest`` to judge its format) and then ``rest``, as one read
    stream."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self._head = head
        self._rest = rest

    def read(self, n: int = -1) -> bytes:
        if not self._head:
            return self._rest.read(n)
        if n < 0:
            data, self._head = self._head + self._rest.read(), b""
            return data
        data, self._head = self._head[:n], self._head[n:]
        if len(data) < n:
            data += self._rest.read(n - len(data))
        return data


def sniffed(stream: IO[bytes], *, file: str | None = None) -> IO[bytes]:
    """``stream``'s bytes, decompressed when they are zstd frames (by the magic number at the start). Only
    ``read`` is offered; ``stream`` stays open."""
    head = stream.read(4)
    prefixed = PrefixedStream(head, stream)
    if is_zstd(head):
        return ZstdFrameReader(prefixed, file=file, owns_raw=False)  # type: ignore[arg-type,return-value]
    return prefixed  # type: ignore[return-value]


def create_zstd(path: str | os.PathLike[str], level: int = DEFAULT_LEVEL) -> ZstdFrameWriter:
    """A new file at ``path`` (replacing one that exists), written through a ``ZstdFrameWriter`` that owns
    it."""
    return ZstdFrameWriter(open(path, "wb"), level=level)  # the writer closes it
