"""What makes a run continue a saved state: the options that shape its output, and the snapshot it started
from, checked the same way for ``events --state`` and ``resolve --state``.

Strategy: the state (``io.state.RunState``) records the output-shaping options of its first run; every
later run states its own (``shaping``, one dict layout for both commands) and ``begin_run`` refuses a run
whose options or ``--snapshot`` differ, then adopts the options (keeping the first run's snapshot
fingerprint, ``snapshot_digest``). Before it compares anything, it lets the caller recover what a killed run
left, in the output folder that run committed to: finishing a commit is never refused.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from binlog_model.errors import ConfigError
from binlog_model.io.documents import sha256_of
from binlog_model.io.state import RunState, StateMismatchError
from binlog_model.resolve.options import ResolveOptions
from binlog_model.resolve.table_filter import TableFilter

__all__ = ["begin_run", "shaping", "snapshot_digest"]


def snapshot_digest(snapshot: str | os.PathLike[str] | None) -> str | None:
    """A fingerprint of a snapshot argument: the SHA-256 of a file's bytes, or the text of a URL (without
    its query, and without a password: the state file keeps it)."""
    if snapshot is None:
        return None
    text = os.fspath(snapshot)
    if "://" in text:
        from binlog_model.io.live import redacted_url
        return redacted_url(text.split("?", 1)[0])
    try:
        return sha256_of(text)
    except OSError as err:
        raise ConfigError(f"cannot read snapshot {text}: {err}") from err


def shaping(*, source: str, always_include: Iterable[str], lenient_ddl: bool, database: str | None,
            out: str, command: str | None = None, events: ResolveOptions | None = None,
            json_defaults: bool = False, fmt: str | None = None,
            tables: TableFilter | None = None, json_values: str = "typed", compress: bool = False
            ) -> dict[str, Any]:
    """The options a state compares between runs. ``always_include`` as ``db.table.column`` texts;
    ``events``: the ``events`` command's resolve options (image, splitting, statement text), with its
    ``json_defaults``, ``fmt`` and ``json_values``; ``compress``: the parts are zstd; ``command``:
    ``"resolve"`` for the Spark runs (the key layouts are the ones states on disk already hold). ``tables``
    (or ``events.tables``): the table filter. The newer options are stated only when they differ from the
    old behaviour, so states written before them still compare equal."""
    doc: dict[str, Any] = {} if command is None else {"command": command}
    doc["source"] = source
    doc["always_include"] = sorted(always_include)
    if events is not None:
        doc.update(image=events.image, max_rows=events.max_rows, max_bytes=events.max_bytes,
                   statement_text=events.statement_text)
    doc["lenient_ddl"] = lenient_ddl
    doc["database"] = database
    if events is not None:
        doc.update(json_defaults=json_defaults, format=fmt)
        if json_values != "typed":     # states written before --json-values hold none: typed
            doc["json_values"] = json_values
    if compress:
        doc["compress"] = "zstd"      # the level is not: any level's frames read the same
    doc["out"] = out
    table_filter = tables if tables is not None else events.tables if events is not None else None
    if table_filter is not None:
        doc.update(table_filter.options())
    return doc


def begin_run(state: RunState, options: dict[str, Any], snapshot_id: str | None,
              recover: Callable[[str], None]) -> None:
    """``recover(out)`` what a killed run left in the output folder ``out`` the state committed to (this
    run's own for a new state), then check that a run with ``options`` (``shaping``) and ``snapshot_id``
    continues ``state`` (``StateMismatchError`` otherwise), then adopt the options."""
    recover(state.options.get("out") or options["out"])
    state.check_options(options)
    started_with = state.options.get("snapshot")
    if not state.fresh and snapshot_id is not None and started_with not in (None, snapshot_id):
        raise StateMismatchError(f"--snapshot differs from the one the state in {state.directory} started "
                                 "with; later runs need no --snapshot (the state holds the schema)")
    state.options = {**options, "snapshot": state.options.get("snapshot", snapshot_id)}
