"""The three things fuzzed, each a function of (input, options) that raises what the library raises.

- ``decoder``: the sans-IO ``BinlogDecoder`` fed the whole input, then again in random chunks (one byte
  at a time included); both runs must end alike (same events, same error type), a differential check.
  Some decoder inputs are single binary JSON values (generated, then damaged) for the JSON reader.
- ``pipeline``: ``iter_binlog_events`` over the input written to a file, strict or lenient (lenient DDL,
  incomplete tail allowed), every BinlogEvent serialized so a value the model cannot hold shows up here.
- ``ddl``: ``SchemaHistory.apply`` of one mutated or generated statement, strict or lenient, on a catalog
  built from generated DDL (turning changes into the model is the pipeline's part, fuzzed there).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

from binlog_model.errors import BinlogError
from binlog_model.position import EventPosition
from binlog_model.wire.decoder import NEED_DATA, BinlogDecoder
from binlog_model.wire.rows import RowsEvent


class DifferentialMismatch(AssertionError):
    """Whole and chunked decoding of the same bytes ended differently."""


def _touch(event: Any) -> None:
    # A rows event decodes its row images on first access to ``rows``: read them, as consumers do.
    if isinstance(event, RowsEvent):
        event.rows  # noqa: B018


def _decode(data: bytes, chunks: list[int], verify: bool) -> tuple[int, BinlogError | None]:
    decoder = BinlogDecoder(file="fuzz.bin", verify_checksum=verify)
    count = 0
    pos = 0
    try:
        for size in chunks:
            if pos >= len(data):
                break
            decoder.receive_data(data[pos:pos + size])
            pos += size
            while (event := decoder.next_event()) is not NEED_DATA:
                _touch(event)
                count += 1
        if pos < len(data):
            decoder.receive_data(data[pos:])
        decoder.receive_data(b"")
        while (event := decoder.next_event()) is not NEED_DATA:
            _touch(event)
            count += 1
    except BinlogError as err:
        return count, err
    return count, None


_MAX_CHUNKS = 400


def run_decoder(data: bytes, options: dict[str, Any]) -> str:
    """Decode whole and chunked; raise the whole run's error (a ``BinlogError``) if it had one.
    With option ``json`` the input is one binary JSON value (a JSON column's bytes) for the JSON reader."""
    if options.get("json"):
        return _run_json(data)
    verify = bool(options.get("verify_checksum"))
    count, error = _decode(data, [len(data)], verify)
    chunks = options.get("chunks") or [1]
    # At most _MAX_CHUNKS feeds (the rest in one piece), so tiny chunks do not dominate the run time.
    feeds = (list(chunks) * (_MAX_CHUNKS // len(chunks) + 1))[:_MAX_CHUNKS]
    count2, error2 = _decode(data, feeds, verify)
    if (count, type(error)) != (count2, type(error2)):
        raise DifferentialMismatch(f"whole input: {count} events, {error!r}; chunks {chunks}: "
                                   f"{count2} events, {error2!r}")
    if error is not None:
        raise error
    return f"{count} events"


def _run_json(data: bytes) -> str:
    from binlog_model.wire.json_binary import parse_json_binary, parse_json_diffs

    with contextlib.suppress(BinlogError):
        parse_json_diffs(data)  # the same bytes read as a partial-update diff list
    parse_json_binary(data)
    return "json"


_TMP = Path(os.environ.get("BINLOG_MODEL_FUZZ_TMP", "/dev/shm" if os.path.isdir("/dev/shm") else
                           tempfile.gettempdir()))


def _pipeline_file() -> Path:
    return _TMP / f"binlog-model-fuzz-{os.getpid()}" / "mysql-bin.000001"


def cleanup() -> None:
    """Remove this process's scratch file of the pipeline target."""
    path = _pipeline_file()
    path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        path.parent.rmdir()


def run_pipeline(data: bytes, options: dict[str, Any]) -> str:
    from binlog_model.runs.pipeline import iter_binlog_events

    path = _pipeline_file()
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    count = 0
    for event in iter_binlog_events(
            path, verify_checksum=bool(options.get("verify_checksum")),
            lenient_ddl=bool(options.get("lenient")), allow_incomplete_tail=bool(options.get("lenient")),
            image=options.get("image", "changed"), max_rows=int(options.get("max_rows", 1000)),
            statement_text=options.get("statement_text", "all"),
            always_include=options.get("always_include") or None):
        event.SerializeToString()
        count += 1
    return f"{count} BinlogEvents"


_CATALOG: Any = None


def setup_catalog(statements: list[str]) -> None:
    """The catalog every ddl input starts from (generated tables in database ``db``)."""
    global _CATALOG
    from schema_tracker.history import SchemaHistory

    history = SchemaHistory(lenient=True)
    for sql in statements:
        if sql.upper().startswith("USE "):
            continue
        history.apply(sql, "db")
    _CATALOG = history.catalog


def run_ddl(data: bytes, options: dict[str, Any]) -> str:
    from schema_tracker.history import SchemaHistory

    # The decoder hands statements over as UTF-8 with surrogateescape; do the same with the mutant.
    sql = data.decode("utf-8", "surrogateescape")
    catalog = _CATALOG
    if options.get("setup"):  # statements to apply first (regression inputs name their own tables)
        start = SchemaHistory(lenient=True)
        start.apply_script(options["setup"], "db")
        catalog = start.catalog
    history = SchemaHistory(catalog, lenient=bool(options.get("lenient")))
    changes = history.apply(sql, options.get("db", "db"), EventPosition("mysql-bin.000001", 4))
    return f"{len(changes)} changes"


TARGETS = {"decoder": run_decoder, "pipeline": run_pipeline, "ddl": run_ddl}
