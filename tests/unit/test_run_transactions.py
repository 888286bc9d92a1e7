"""The units of work as the sources' markers delimit them (``runs.transactions``), and what the readers that
are not the runner take from them: a file's FORMAT_DESCRIPTION (``io.file_source.format_description_of``,
what the stream driver resumes a file with) and the pre-pass's history scan, which leaves out exactly the
units of rows only. Real binlogs: the golden fixtures of both servers and the corpus's compressed and
gzipped files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from binlog_model.io.file_source import FileSource, format_description_of
from binlog_model.resolve.transactions import QueryKind, classify_query
from binlog_model.runs.source import FormatDescription, TransactionEnd, TransactionStart, decoded
from binlog_model.spark.partitions import KEEP_TYPES, scan_file
from binlog_model.wire import events as ev
from tests._paths import CORPUS, REPO, require

GOLDEN = REPO / "fixtures" / "golden"
FILES = sorted(str(p) for p in GOLDEN.glob("*/*/binlogs/*") if p.is_file())
COMPRESSED = CORPUS / "mysql-binlog-connector-java/src/test/resources/mysql-bin.compressed"
GZIPPED = CORPUS / "mysql-binlog-connector-java/src/test/resources/mysql-bin.sakila.gz"


def test_every_golden_server_kind_is_here() -> None:
    assert {Path(f).parents[2].name for f in FILES} >= {"mariadb", "mysql"}


@pytest.mark.parametrize("path", [*FILES, "compressed", "gzipped"])
def test_format_description_of_is_the_marker_of_a_whole_read(path: str) -> None:
    """The bytes a read that starts inside the file needs: those of the whole read's ``FormatDescription``
    marker; a read resumed with them at the file's last unit of work reads as the tail of the whole read."""
    name = {"compressed": str(require(COMPRESSED)), "gzipped": str(require(GZIPPED))}.get(path, path)
    whole = list(FileSource([name]).read())
    marker = next(m for m in whole if type(m) is FormatDescription)
    fde = format_description_of(name)
    assert fde is not None and fde == marker.raw
    starts = [m.offset for m in whole if type(m) is TransactionStart]
    at = starts[-1]
    resumed = FileSource.byte_range(name, at, None, fde)
    tail = [(type(e).__name__, e.header.offset) for e in decoded(resumed.read())]
    expected = [(type(e).__name__, e.header.offset) for e in decoded(whole) if e.header.offset >= at]
    assert tail == expected


def test_handbuilt_magic_only_file_has_no_format_description(tmp_path: Path) -> None:
    """Edge case: a binlog the server has only begun (its magic and nothing else) has none yet."""
    path = tmp_path / "binlog.000001"
    path.write_bytes(b"\xfebin")
    assert format_description_of(path) is None


def _units(path: str) -> tuple[list[Any], list[list[Any]]]:
    """The kept events (``KEEP_TYPES``, top level) of ``path`` outside units of work, and those of each
    unit, as the source's markers delimit them."""
    outside: list[Any] = []
    units: list[list[Any]] = []
    unit: list[Any] | None = None
    for item in FileSource([path]).read():
        if type(item) is TransactionStart:
            unit = []
            units.append(unit)
        elif type(item) is TransactionEnd:
            unit = None
        elif isinstance(item, KEEP_TYPES) and item.header.inner_index is None:
            (outside if unit is None else unit).append(item)
    return outside, units


def _kind(event: Any) -> QueryKind | str:
    return classify_query(event.query) if isinstance(event, ev.QueryEvent) else type(event).__name__


@pytest.mark.parametrize("path", [*FILES, "compressed"])
def test_a_history_scan_leaves_out_exactly_the_units_of_rows_only(path: str) -> None:
    """``scan_file(row_transactions=False)`` keeps every event outside units and every unit whole, except
    the units whose kept events are a GTID, a BEGIN and their commit (the rows between them skipped). A
    compressed transaction keeps its GTID: its commit is inside its payload."""
    name = str(require(COMPRESSED)) if path == "compressed" else path
    outside, units = _units(name)
    rows_only = {(*gtid, *begin, commit) for gtid in ((), ("GtidEvent",), ("MariadbGtidEvent",))
                 for begin in ((), (QueryKind.BEGIN,)) for commit in ("XidEvent", QueryKind.COMMIT)}
    left = {e.header.offset for unit in units if tuple(map(_kind, unit)) not in rows_only for e in unit}
    left |= {e.header.offset for e in outside}
    scan = scan_file(name, row_transactions=False)
    assert [e.header.offset for e in scan.events] == sorted(left)
