"""Starting schemas from files: a ``mysqldump --no-data`` file, a saved schema history (``.json``), or a
live server URL; and saving a history. The tracker itself (``schema_tracker``) never opens a file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from binlog_model.errors import ConfigError, SchemaError
from binlog_model.io.documents import load_json, write_text
from schema_tracker.history import SchemaHistory
from schema_tracker.model import Catalog
from schema_tracker.snapshot import catalog_from_dump, dump_server_version

__all__ = ["Snapshot", "load_history", "load_snapshot", "read_sql_text", "save_history"]

Snapshot = str | os.PathLike[str] | Catalog | SchemaHistory | None


def load_snapshot(snapshot: Snapshot, *, lenient: bool = False, database: str | None = None,
                  catalog: Catalog | None = None) -> SchemaHistory:
    """A schema history to start from: a ``mysqldump --no-data`` file, a saved history (``.json``), a live
    server (``mysql://user@host:port/db``, see ``binlog_model.io.live``), a ``Catalog`` or a history.

    ``database``: the database of a dump's statements before any ``USE`` (a dump of one database has none;
    its header comment is used when this is not given). ``catalog``: the server defaults to start a dump
    from. Raises ``ConfigError`` for an unreadable or unknown snapshot and the tracker's ``SchemaError``
    subclasses for DDL it cannot follow."""
    if snapshot is None:
        return SchemaHistory(catalog, lenient=lenient)
    if isinstance(snapshot, SchemaHistory):
        return snapshot
    if isinstance(snapshot, Catalog):
        return SchemaHistory(snapshot, lenient=lenient)
    text = os.fspath(snapshot)
    if "://" in text:
        from binlog_model.io.live import catalog_from_url
        return SchemaHistory(catalog_from_url(text, database=database), lenient=lenient)
    path = Path(snapshot)
    if not path.is_file():
        raise ConfigError(f"snapshot file not found: {path}")
    if path.suffix.lower() == ".json" or _looks_like_json(path):
        doc = load_json(path, f"snapshot {path}")
        if isinstance(doc, dict) and "history" in doc:     # ``binlog-model schema --json`` output
            doc = doc["history"]
        return SchemaHistory.from_json(doc)
    text = read_sql_text(path)
    dump = catalog_from_dump(text, catalog, default_db=database, lenient=lenient)
    # the dump's server decides how later DDL reads (and --ddl's integer widths) until a binlog names one
    return SchemaHistory(dump, lenient=lenient, server_version=dump_server_version(text))


def _looks_like_json(path: Path) -> bool:
    with open(path, "rb") as fh:
        head = fh.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"{")


def read_sql_text(path: str | Path) -> str:
    """Read a SQL file, honouring a UTF-16/UTF-8 byte-order mark (some dumps are UTF-16)."""
    try:
        raw = Path(path).read_bytes()
    except OSError as err:
        raise SchemaError(f"cannot read SQL file {path}: {err}") from err
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16")
    return raw.decode("utf-8-sig", errors="replace")


def save_history(history: SchemaHistory, path: str | os.PathLike[str]) -> None:
    """Write ``history`` as its JSON document (``SchemaHistory.to_json``)."""
    write_text(path, json.dumps(history.to_json(), indent=1, sort_keys=True) + "\n")


def load_history(path: str | os.PathLike[str]) -> SchemaHistory:
    """A history saved by ``save_history``; ``SchemaError`` when the file cannot be read or is not one."""
    return SchemaHistory.from_json(load_json(path, f"schema history {path}", SchemaError))
