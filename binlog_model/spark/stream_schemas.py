"""The schema histories a ``mysql-binlog`` stream's offsets name by digest (``history_digest``), packed
(zlib-compressed JSON, ``reading.pack_history``): the last few in memory, and every one the stream reached
in ``schemaLocation`` (a local folder or a URI ``pyarrow.fs`` writes) when given, checked against its
digest when read back; those no offset needs any more are deleted on commit.
"""

from __future__ import annotations

import json
import zlib
from collections import OrderedDict
from pathlib import Path

from binlog_model.errors import ConfigError
from binlog_model.io.documents import write_bytes_atomic
from binlog_model.io.files import base_name, is_uri, output_filesystem
from binlog_model.spark.stream_offsets import history_digest
from schema_tracker.history import SchemaHistory

__all__ = ["SchemaStore", "unpack_history"]

_HISTORY_FILE = "history-{}.json.z"


class SchemaStore:
    """Histories by digest: in memory (the last few), and in ``schemaLocation`` when given."""

    def __init__(self, location: str | None) -> None:
        self.location = location
        self._memory: OrderedDict[str, bytes] = OrderedDict()

    def put(self, digest: str, packed: bytes) -> None:
        self._memory[digest] = packed
        self._memory.move_to_end(digest)
        while len(self._memory) > 8:
            self._memory.popitem(last=False)
        if self.location is None:
            return
        fs, root = output_filesystem(self.location)
        final = f"{root}/{_HISTORY_FILE.format(digest)}"
        if fs.get_file_info(final).size is not None:
            return
        fs.create_dir(root, recursive=True)
        if not is_uri(self.location):
            # Local: durable before the offset naming it reaches Spark's log.
            write_bytes_atomic(Path(final), packed)
            return
        tmp = f"{final}.tmp"
        with fs.open_output_stream(tmp) as out:
            out.write(packed)
        fs.move(tmp, final)

    def get(self, digest: str) -> bytes | None:
        if digest in self._memory:
            return self._memory[digest]
        if self.location is None:
            return None
        fs, root = output_filesystem(self.location)
        path = f"{root}/{_HISTORY_FILE.format(digest)}"
        if fs.get_file_info(path).size is None:
            return None
        with fs.open_input_stream(path) as fh:
            packed = bytes(fh.read())
        doc = json.loads(zlib.decompress(packed))
        if history_digest(doc) != digest:
            raise ConfigError(f"mysql-binlog stream: {path} does not hold the history it is named after")
        return packed

    def keep_only(self, digests: set[str]) -> None:
        """Delete the stored histories no offset still needs (``commit``: every offset before ``end``)."""
        if self.location is None:
            return
        import pyarrow.fs as pafs

        fs, root = output_filesystem(self.location)
        for info in fs.get_file_info(pafs.FileSelector(root, allow_not_found=True)):
            name = base_name(info.path)
            if (name.startswith("history-") and name.endswith(".json.z")
                    and name[len("history-"):-len(".json.z")] not in digests):
                fs.delete_file(info.path)


def unpack_history(packed: bytes) -> SchemaHistory:
    return SchemaHistory.from_json(json.loads(zlib.decompress(packed)))
