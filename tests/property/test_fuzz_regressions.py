"""Every input in tests/fuzz_regressions/ (one README line each) gives its expected outcome, in time.

The inputs are our own hand-mutated bytes (see that folder's README); each once hung the decoder or let a
non-``BinlogError`` escape. Besides the outcome, the tests below check what the fixes promise: undecodable
statement text is kept raw (``statement_raw``), text in the client's charset is decoded in it, and
unresolvable primary-key / always-include names are ``SchemaMismatchError`` naming table and position.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from benchmarks.fuzz import runner
from benchmarks.fuzz.targets import cleanup
from binlog_model.errors import SchemaMismatchError, UnsupportedDDLError
from binlog_model.runs import pipeline
from tests._paths import REPO

HERE = REPO / "tests" / "fuzz_regressions"
GOLDEN = REPO / "fixtures" / "golden" / "mariadb" / "spec_example" / "binlogs" / "mysql-bin.000001"
_ROW = re.compile(r"^\| `([^`]+)` \| ([a-z, ]+) \| `(\{.*?\})` \| (\w+) \|")


def _cases() -> list[Any]:
    cases = []
    for line in (HERE / "README.md").read_text("utf-8").splitlines():
        m = _ROW.match(line)
        if not m:
            continue
        name, targets, options, expected = m.groups()
        for target in (t.strip() for t in targets.split(",")):
            cases.append(pytest.param(name, target, json.loads(options), expected,
                                      id=f"{name}-{target}-{options}"))
    return cases


CASES = _cases()


@pytest.fixture(autouse=True, scope="module")
def _scratch_file_removed() -> Any:
    yield
    cleanup()  # the pipeline target's scratch file under /dev/shm


def test_every_regression_file_has_a_readme_line() -> None:
    listed = {c.values[0] for c in CASES}
    present = {p.name for p in HERE.glob("*.hand-mutated.*")}
    assert present and listed == present


@pytest.mark.parametrize(("name", "target", "options", "expected"), CASES)
def test_regression_input(name: str, target: str, options: dict[str, Any], expected: str) -> None:
    # The CRC footers were fixed up after the mutation, so checksums are verified too.
    case = runner.Case(0, target, (HERE / name).read_bytes(), {"verify_checksum": True, **options})
    result = runner.run_case(case, trace_memory=True)
    assert result.kind in ("ok", "error"), f"{result.kind}: {result.detail}"
    assert (result.detail if result.kind == "error" else "ok") == expected


def _events(name: str, **kw: Any) -> list[Any]:
    return list(pipeline.iter_binlog_events(HERE / name, **kw))


def test_undecodable_annotate_text_is_kept_raw() -> None:
    [insert] = [e for e in _events("annotate-invalid-utf8.hand-mutated.bin") if e.operation == e.INSERT]
    assert not insert.HasField("statement")
    assert b"VALUES (1, '\xffne', 'RUB'" in insert.statement_raw.data
    assert insert.statement_raw.charset == ""
    assert [r.after[1].value.string_value for r in insert.rows] == ["one", "two"]  # the rows are untouched


def test_undecodable_ddl_text_is_kept_raw_with_its_charset() -> None:
    events = _events("ddl-comment-invalid-utf8.hand-mutated.bin")
    create = next(e for e in events if e.table == "campaigns" and e.schema_changes)
    assert not create.HasField("statement")
    assert create.statement_raw.data.endswith(b"\n) /* caf\xe9 */")
    assert create.statement_raw.charset == "utf8mb4"
    assert [c.name for c in events[-1].rows[0].after][:2] == ["cid", "name"]  # the table was still tracked


def test_ddl_text_in_the_client_charset_is_decoded_in_it() -> None:
    events = _events("ddl-comment-latin1.hand-mutated.bin")
    create = next(e for e in events if e.table == "campaigns" and e.schema_changes)
    assert create.statement.endswith("\n) /* café */")
    assert not create.HasField("statement_raw")


def test_identifier_that_is_not_text_is_a_typed_error_naming_it() -> None:
    with pytest.raises(UnsupportedDDLError) as info:
        _events("ddl-identifier-invalid-utf8.hand-mutated.bin")
    assert info.value.table == "ppc.foo\\xffbar"
    assert info.value.position is not None and info.value.position.offset == 2080
    str(info.value).encode("utf-8")  # the message prints


def test_skipped_statement_reason_shows_undecodable_bytes_escaped() -> None:
    events = _events("ddl-unparsable-invalid-utf8.hand-mutated.bin", lenient_ddl=True)
    skipped = [c.skipped_statement for e in events for c in e.schema_changes
               if c.HasField("skipped_statement")]
    assert skipped and "\\xff" in skipped[0].reason
    assert events[-1].statement_raw.data.endswith(b"int not null \xff(")


def test_primary_key_naming_a_missing_column_is_a_schema_mismatch() -> None:
    with pytest.raises(SchemaMismatchError) as info:
        _events("pk-unknown-column.hand-mutated.bin")
    assert info.value.table == "ppc.campaigns"
    # the WRITE_ROWS event (at 1207 in the fixture; the edited CREATE TABLE is 13 bytes longer)
    assert info.value.position is not None and info.value.position.offset == 1207 + 13
    assert "primary key column 'cjd'" in str(info.value)


def test_always_include_naming_a_missing_column_is_a_schema_mismatch(tmp_path: Path) -> None:
    with pytest.raises(SchemaMismatchError) as info:
        list(pipeline.iter_binlog_events(GOLDEN, always_include=["ppc.campaigns.nope"]))
    assert info.value.table == "ppc.campaigns"
    assert info.value.position is not None and info.value.position.offset == 1207
    assert "always-include column 'nope'" in str(info.value)


def test_always_include_names_match_case_insensitively() -> None:
    events = list(pipeline.iter_binlog_events(GOLDEN, always_include=["PPC.Campaigns.CURRENCY"]))
    update = next(e for e in events if e.operation == e.UPDATE)
    assert [c.name for c in update.rows[0].before] == ["currency"]


def _hand_built_table_map(count: int) -> bytes:
    # HAND-BUILT TABLE_MAP body: table_id 1, `d`.`t`, ``count`` TINY columns, no metadata, no NULLs.
    lenenc = bytes([count]) if count < 0xFB else b"\xfc" + count.to_bytes(2, "little")
    return (b"\x01\0\0\0\0\0" + b"\0\0" + b"\x01d\0" + b"\x01t\0" + lenenc + b"\x01" * count + b"\0"
            + bytes((count + 7) // 8))


def test_table_map_column_count_above_the_server_limit_is_refused() -> None:
    from binlog_model.errors import DecodeError
    from binlog_model.wire.header import EventHeader
    from binlog_model.wire.table_map import MAX_COLUMNS, parse_table_map_event

    header = EventHeader(0, 19, 1, 0, 0, 0, 4, "hand-built.000001")
    ok = parse_table_map_event(header, memoryview(_hand_built_table_map(MAX_COLUMNS)), 8)
    assert ok.column_count == 4096
    with pytest.raises(DecodeError, match="column count 4097 is above MySQL's limit of 4096") as info:
        parse_table_map_event(header, memoryview(_hand_built_table_map(MAX_COLUMNS + 1)), 8)
    assert info.value.offset == 4 and info.value.file == "hand-built.000001"
