"""Small documents the jobs keep beside their data (run states, plans, schema files, output tails), read
and written whole: the one place outside the binlog reader that opens local files by name.

Writes that a crash must not tear go through ``write_json_atomic`` (temp file, fsync, rename, fsync of the
folder); ``truncate_durably`` cuts an output back to its committed length.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from binlog_model.errors import BinlogError, ConfigError

__all__ = ["fsync_dir", "load_json", "log_tail", "read_bytes", "read_json", "read_text", "sha256_of",
           "truncate_durably", "write_bytes_atomic", "write_json_atomic", "write_text"]

PathLike = str | os.PathLike[str]


def read_bytes(path: PathLike) -> bytes:
    return Path(path).read_bytes()


def read_text(path: PathLike) -> str:
    return Path(path).read_text(encoding="utf-8")


def write_text(path: PathLike, text: str) -> None:
    Path(path).write_text(text, encoding="utf-8")


def read_json(path: PathLike) -> Any:
    """The JSON document in ``path`` (``OSError`` / ``ValueError`` for the caller to name in its error)."""
    return json.loads(read_text(path))


def load_json(path: PathLike, what: str, error: type[BinlogError] = ConfigError) -> Any:
    """The JSON document in ``path``; ``error`` "cannot read {what}: {cause}" when it cannot be read or
    parsed (the one message every saved document gives)."""
    try:
        return read_json(path)
    except (OSError, ValueError) as err:
        raise error(f"cannot read {what}: {err}") from err


def sha256_of(path: PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def encode_json(doc: Any) -> bytes:
    """The bytes ``write_json_atomic`` writes for ``doc``."""
    return json.dumps(doc, sort_keys=True).encode("utf-8")


def write_json_atomic(path: Path, doc: Any) -> None:
    """Write ``doc`` to ``path`` so that a reader (or a crash) sees the old file or the new one, whole."""
    write_bytes_atomic(path, encode_json(doc))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` durably, whole or not at all (a crash leaves the old file or none)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def fsync_dir(path: PathLike) -> None:
    """Make a rename in ``path`` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def truncate_durably(path: PathLike, size: int) -> None:
    """Cut ``path`` to its first ``size`` bytes and make that durable."""
    with open(path, "r+b") as fh:
        fh.truncate(size)
        fh.flush()
        os.fsync(fh.fileno())


def log_tail(path: str | None, size: int = 4 << 20) -> str:
    """The last ``size`` bytes of a log file as text ('' when there is none)."""
    if not path:
        return ""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - size))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
