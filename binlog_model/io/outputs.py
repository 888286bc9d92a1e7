"""Reading our own output back: the files ``events`` and ``tail`` write (length-delimited protobuf or JSON
lines, plain or zstd), and the part files of an ``--out`` folder in commit order.

Strategy: a file's format is judged by its bytes, not its name (output redirected from stdout has any
name): zstd frames are decompressed first (``io.compression.sniffed``), then JSON lines start with ``{"``,
which no delimited ``BinlogEvent`` record can (``{`` would be a 123-byte record, and ``"`` the tag of field
4 with the length-delimited wire type; field 4 is a uint64). A folder is read as its committed parts,
``part-NNNNNN.*`` in name order, which is the order they were committed in (``runs.output.part_name``); an
``.partial`` file is a run's open part, not committed yet, and is left out.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, cast

from binlog_model.errors import ConfigError, DecodeError, TruncatedEventError
from binlog_model.io.compression import PrefixedStream, sniffed
from binlog_model.io.state import PARTIAL
from binlog_model.messages import BinlogEvent, from_json
from binlog_model.sinks.delimited import iter_delimited

__all__ = ["iter_output", "iter_output_files", "output_files"]

_PART_PREFIX = "part-"
_JSONL_START = b'{"'
_CHUNK = 1 << 20


def output_files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """``paths`` with each folder replaced by its committed part files, in commit order. Raises
    ``ConfigError`` for a folder without part files."""
    files: list[Path] = []
    for given in paths:
        path = Path(given)
        if not path.is_dir():
            files.append(path)
            continue
        parts = sorted(p for p in path.iterdir() if p.name.startswith(_PART_PREFIX)
                       and not p.name.endswith(PARTIAL) and p.is_file())
        if not parts:
            raise ConfigError(f"{path} holds no part-NNNNNN files: give the --out folder of an `events "
                              "--state` or `tail` run, or the files themselves")
        files.extend(parts)
    return files


def iter_output(stream: IO[bytes], *, file: str | None = None) -> Iterator[BinlogEvent]:
    """The ``BinlogEvent`` s of one output stream: length-delimited protobuf or JSON lines, either one
    plain or as zstd frames. Errors are ``DecodeError`` s naming ``file`` and where: the byte offset of a
    protobuf record, the line number of a JSON line, the compressed offset of a zstd frame cut short
    (``TruncatedEventError``, as for a last JSON line without its newline)."""
    data = sniffed(stream, file=file)
    head = data.read(2)
    if head == _JSONL_START:
        yield from _iter_jsonl(head, data, file)
    else:
        yield from iter_delimited(cast(IO[bytes], PrefixedStream(head, data)), file=file)


def iter_output_files(paths: Iterable[str | os.PathLike[str]]) -> Iterator[BinlogEvent]:
    """Every event of ``output_files(paths)``, file after file."""
    for path in output_files(paths):
        with open(path, "rb") as stream:
            yield from iter_output(stream, file=os.fspath(path))


def _iter_jsonl(head: bytes, data: IO[bytes], file: str | None) -> Iterator[BinlogEvent]:
    rest = head
    line_number = 0
    while True:
        chunk = data.read(_CHUNK)
        rest += chunk
        lines = rest.split(b"\n")
        rest = lines.pop()
        for line in lines:
            line_number += 1
            try:
                yield from_json(line)
            except DecodeError as err:
                raise DecodeError(f"line {line_number} is not a BinlogEvent: {err.reason}", file=file,
                                  expected="one BinlogEvent as proto3 JSON per line") from err
        if not chunk:
            break
    if rest:
        raise TruncatedEventError(f"the last line ({line_number + 1}) has no newline: the file is cut short",
                                  file=file, expected="a JSON line ending in a newline")

