"""The compiled row builder against the Python reference, byte for byte, on every real binlog we have.

Each binlog (the shared corpus, MariaDB's mysql-test data, MySQL's mysql-testsuite std_data, every golden
fixture) is resolved twice: with the compiled core, and with it switched off (``compile_rows`` then
returns None for every plan, exactly as under ``BINLOG_MODEL_PURE=1``). The serialized BinlogEvents must be
the same bytes, and a file that fails must fail with the same error class and message in both runs.

The statement lane (``resolve.lane``, C from the binlog's bytes to whole events) is on in the serialized
run and in a second run of messages, and off in the checked run below, whose rows all pass one method.

On top, while the compiled run goes, every rows event the C builder takes is also built by the Python
builder from the same plan, and the two serializations of the rows are compared byte for byte (so a
difference that protobuf's parse-and-reserialize would hide, such as an explicit default, still fails).
The test also checks that C really built rows where the plans allow it: a test that silently fell back to
Python everywhere would prove nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.compiled import speedups
from binlog_model.errors import BinlogError
from binlog_model.resolve import assembler, compiled_rows
from binlog_model.resolve.rows import python_row_builders
from binlog_model.runs.pipeline import iter_binlog_events, iter_serialized_events
from binlog_model.testing.golden import binlog_files, fixture_options, iter_fixture_dirs, read_meta
from binlog_model.testing.sid import pinned_root
from tests._paths import CORPUS, REPO, binlogs_under

pytestmark = pytest.mark.skipif(speedups is None,
                                reason="the compiled core is not built (or is switched off)")

MARIADB_TEST = Path("/usr/share/mysql/mysql-test")
MYSQL_TEST = pinned_root("mysql-testsuite") / "usr" / "lib" / "mysql-test"
GOLDEN = REPO / "fixtures" / "golden"


class _Checked:
    """Wraps ``CompiledRows.build``: every C result is compared with the Python builder's rows."""

    def __init__(self) -> None:
        self.rows_by_c = 0
        self.fallbacks = 0
        self.tables: set[tuple[str, str]] = set()    # (db, table) of the rows C built

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        # The statement lane builds its rows in C without this method: off here, so every rows event C
        # takes is checked one by one (``_compare`` runs the lane separately, against the same reference).
        monkeypatch.setattr(assembler, "LANE_AVAILABLE", False)
        build = compiled_rows.CompiledRows.build
        checker = self

        def checked(self: compiled_rows.CompiledRows, event: Any, first_row_index: int) -> list[bytes] | None:
            frames = build(self, event, first_row_index)
            if frames is None:
                checker.fallbacks += 1
                return None
            mode = {0: "full", 1: "changed", 2: "changed_with_old", 3: "after"}[self._mode]
            reference = pb.BinlogEvent()
            python_row_builders(self.plan, mode).for_kind(event.kind)(reference.rows, event.rows,
                                                                      first_row_index)
            assert b"".join(frames) == reference.SerializeToString(), (
                f"C and Python rows differ: {event.header.file} offset {event.header.offset}")
            checker.rows_by_c += len(frames)
            checker.tables.add((self.plan.db, self.plan.table))
            return frames

        monkeypatch.setattr(compiled_rows.CompiledRows, "build", checked)


def _resolve(paths: Any, monkeypatch: pytest.MonkeyPatch, compiled: bool, serialized: bool = False,
             **options: Any) -> tuple[list[bytes], tuple[type[BaseException], str] | None]:
    with monkeypatch.context() as patch:
        if not compiled:
            patch.setattr(compiled_rows, "speedups", None)
        out: list[bytes] = []
        try:
            if serialized:
                out.extend(iter_serialized_events(paths, **options))
            else:
                for event in iter_binlog_events(paths, **options):
                    out.append(event.SerializeToString())
        except BinlogError as err:
            return out, (type(err), str(err))
        return out, None


def _compare(paths: Any, monkeypatch: pytest.MonkeyPatch, **options: Any) -> _Checked:
    reference, ref_error = _resolve(paths, monkeypatch, compiled=False, **options)
    checker = _Checked()
    with monkeypatch.context() as patch:
        checker.install(patch)
        compiled, error = _resolve(paths, monkeypatch, compiled=True, **options)
    assert error == ref_error
    assert len(compiled) == len(reference)
    for i, (a, b) in enumerate(zip(compiled, reference, strict=True)):
        assert a == b, f"BinlogEvent #{i} differs"
    # The proto path: the compiled rows wrapped into event bytes without a parse, the same bytes again; it
    # and the messages run with the statement lane (resolve.lane), which is off in the checked run above.
    serialized, error = _resolve(paths, monkeypatch, compiled=True, serialized=True, **options)
    assert error == ref_error
    assert serialized == reference
    laned, error = _resolve(paths, monkeypatch, compiled=True, **options)
    assert error == ref_error
    assert laned == reference
    return checker


def _params(root: Path, prefix: str) -> Iterator[Any]:
    for rel in binlogs_under(root):
        yield pytest.param(root / rel, id=f"{prefix}/{rel}")


_FILES = [*_params(CORPUS, "corpus"), *_params(MARIADB_TEST, "mariadb-test"),
          *_params(MYSQL_TEST, "mysql-test")]


@pytest.mark.parametrize("path", _FILES)
def test_real_binlog_resolves_the_same_compiled(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tables without a schema fall back to their TABLE_MAP metadata or fail alike in both runs; DDL the
    # tracker cannot follow is skipped (lenient), so as many rows as possible reach the builders.
    _compare(path, monkeypatch, lenient_ddl=True, verify_checksum=False)


def test_the_real_binlogs_give_the_c_builder_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Across the real binlogs C built thousands of rows and fell back to Python on almost none of its
    events (the comparison above is not vacuous). 8,261 rows and 1 fallback (a JSON document json_text.c
    leaves to the reference) when written; a file added to the suites only raises the row count."""
    checker = _Checked()
    checker.install(monkeypatch)
    for param in _FILES:
        _resolve(param.values[0], monkeypatch, compiled=True, lenient_ddl=True, verify_checksum=False)
    assert checker.rows_by_c > 5000
    assert checker.fallbacks <= 3


@pytest.mark.parametrize("fixture_dir", [pytest.param(d, id=d.relative_to(GOLDEN).as_posix())
                                         for d in iter_fixture_dirs(GOLDEN)])
@pytest.mark.parametrize("image", ["changed", "changed_with_old", "full", "after"])
def test_golden_fixture_resolves_the_same_compiled(fixture_dir: Path, image: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    meta = read_meta(fixture_dir)
    options = fixture_options(fixture_dir, meta)
    # (A fixture with a JSON column resolves in Python until JSON is rendered in C.)
    checker = _compare(binlog_files(fixture_dir, meta), monkeypatch, source=options.source,
                       always_include=list(options.always_include), image=image,
                       max_rows=options.max_rows, max_bytes=options.max_bytes)
    # Every image mode is built by C (a mode C refused would fall back on every event, unseen above).
    assert checker.fallbacks <= checker.rows_by_c
