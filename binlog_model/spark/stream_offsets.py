"""Where a ``mysql-binlog`` stream stands and how far one micro-batch may read.

An offset is a place between two transactions (``StreamOffset``: the file's name, the decoded position just
after the last event read there, the GTIDs seen so far and the digest of the schema history in force
there), printed as JSON with its keys in one fixed order, so the same place always prints the same text
(Spark compares offsets as text). ``StreamLimits`` are a micro-batch's limits: the source's options and
the engine's ``ReadLimit``, whichever is tighter.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from typing import Any

from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxBytes,
    ReadMaxFiles,
    ReadMaxRows,
)

from binlog_model.errors import ConfigError
from binlog_model.gtid import GtidSet
from binlog_model.position import file_sequence

__all__ = ["OFFSET_VERSION", "StreamLimits", "StreamOffset", "history_digest"]

OFFSET_VERSION = 1


@dataclass(frozen=True, slots=True)
class StreamOffset:
    """A place between two transactions. ``file``: the base name of the file the stream stands in (""
    before the first file); ``offset``: the decoded position after the last event read in it; ``gtids``:
    the canonical text of the GTIDs read since the stream's origin; ``schema``: ``history_digest`` of the
    schema history in force here."""

    file: str
    offset: int
    gtids: str
    schema: str

    def to_json(self) -> dict[str, Any]:
        # The key order is the canonical text's: json.dumps keeps it.
        return {"v": OFFSET_VERSION, "file": self.file, "offset": self.offset, "gtids": self.gtids,
                "schema": self.schema}

    def text(self) -> str:
        return json.dumps(self.to_json())

    @classmethod
    def from_json(cls, doc: Any) -> StreamOffset:
        """An offset as Spark hands it back; ``ConfigError`` for one this source did not write."""
        try:
            if doc.get("v") != OFFSET_VERSION:
                raise ValueError(f"version {doc.get('v')!r}")
            offset = cls(str(doc["file"]), int(doc["offset"]), str(doc["gtids"]), str(doc["schema"]))
            GtidSet.parse(offset.gtids)
        except (AttributeError, KeyError, TypeError, ValueError, ConfigError) as err:
            raise ConfigError(f"mysql-binlog stream: the checkpoint holds an offset this source did not "
                              f"write ({err}): {json.dumps(doc)[:200]}; start the query with a new "
                              "checkpoint") from err
        # Normalised on the way in too, so a hand-edited checkpoint cannot print two ways.
        return replace(offset, gtids=str(GtidSet.parse(offset.gtids)))

    @property
    def place(self) -> tuple[int, str, int]:
        return (file_sequence(self.file) if self.file else -1, self.file, self.offset)


def history_digest(doc: dict[str, Any]) -> str:
    """The digest a ``StreamOffset`` names its schema history by (canonical JSON, SHA-256, 32 hex)."""
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class StreamLimits:
    """How much one micro-batch may read; None: no limit. Files are those the batch reads from; bytes are
    decoded binlog bytes; rows are row changes plus one per event without rows (a DDL statement)."""

    files: int | None = None
    bytes: int | None = None
    rows: int | None = None

    @classmethod
    def parse(cls, opts: dict[str, str]) -> StreamLimits:
        def positive(key: str) -> int | None:
            raw = opts.get(key.lower())
            if raw is None:
                return None
            try:
                value = int(raw)
            except ValueError:
                value = 0
            if value < 1:
                raise ConfigError(f"mysql-binlog stream: option {key} must be a positive integer, "
                                  f"got {raw!r}")
            return value

        return cls(positive("maxFilesPerTrigger"), positive("maxBytesPerTrigger"),
                   positive("maxRowsPerTrigger"))

    def combined(self, limit: ReadLimit) -> StreamLimits:
        """The limits of one ``latestOffset`` call: none for ``ReadAllAvailable`` (a trigger that reads
        everything), else the options' limits and the engine's, whichever is tighter."""
        if isinstance(limit, ReadAllAvailable):
            return StreamLimits()

        def tight(a: int | None, b: int | None) -> int | None:
            return b if a is None else a if b is None else min(a, b)

        return StreamLimits(tight(self.files, limit.max_files if isinstance(limit, ReadMaxFiles) else None),
                            tight(self.bytes, limit.max_bytes if isinstance(limit, ReadMaxBytes) else None),
                            tight(self.rows, limit.max_rows if isinstance(limit, ReadMaxRows) else None))

    def default(self) -> ReadLimit:
        # Spark takes one ReadLimit; the others are still applied by ``combined``.
        if self.files is not None:
            return ReadMaxFiles(self.files)
        if self.bytes is not None:
            return ReadMaxBytes(self.bytes)
        if self.rows is not None:
            return ReadMaxRows(self.rows)
        return ReadAllAvailable()

