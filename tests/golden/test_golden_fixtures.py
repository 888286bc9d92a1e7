"""Golden fixtures: every committed fixture re-decodes to its expected.jsonl, and the expectations say what
the scenarios did.

- ``test_fixture_matches_expected`` is ``binlog-model fixtures verify`` per fixture directory.
- The verify machinery itself is checked on a copy of a fixture with one value changed (hand-edited
  expectation, named as such) — it must fail with a diff naming the fixture, event index and position.
- The spec example: the MariaDB fixture of seeds/000's example matches the spec's listing (transcribed
  below from the spec, not produced by our code) except for exactly the differences documented in its
  meta.json ``differences_from_spec``.
- Scenario coverage: outcomes read from expected.jsonl (split statements, rollbacks, savepoints,
  multi-table statements, schema of the time, tables without PK, PK updates).
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.cli import cli
from binlog_model.io.files import iter_events
from binlog_model.messages import from_json, python_value
from binlog_model.testing.golden import iter_fixture_dirs, read_meta, verify_fixture, verify_tree
from binlog_model.wire.header import EventType
from tests._paths import REPO

GOLDEN = REPO / "fixtures" / "golden"
MARIADB = GOLDEN / "mariadb"

# Fixtures whose expected.jsonl cannot be produced yet; strict, so the fix shows up as an XPASS to act on.
_KNOWN_BROKEN: dict[str, str] = {}


def _fixture_params() -> list[Any]:
    params = []
    for d in iter_fixture_dirs(GOLDEN):
        key = d.relative_to(GOLDEN).as_posix()
        marks = [pytest.mark.xfail(strict=True, reason=_KNOWN_BROKEN[key])] if key in _KNOWN_BROKEN else []
        params.append(pytest.param(d, id=key, marks=marks))
    return params


@pytest.mark.parametrize("fixture_dir", _fixture_params())
def test_fixture_matches_expected(fixture_dir: Path) -> None:
    result = verify_fixture(fixture_dir)
    assert result.ok, result.report()
    assert result.expected_count == read_meta(fixture_dir)["expected"]["events"] > 0


def test_every_scenario_has_a_mariadb_fixture() -> None:
    scenarios = {p.stem for p in (GOLDEN.parent / "scenarios").glob("*.sql")}
    fixtures = {d.name for d in iter_fixture_dirs(MARIADB)}
    assert scenarios <= fixtures


def _events(name: str, root: Path = MARIADB) -> list[pb.BinlogEvent]:
    lines = (root / name / "expected.jsonl").read_text(encoding="utf-8").splitlines()
    return [from_json(line) for line in lines]


# -- verify reports differences ------------------------------------------------------------------------------


def test_verify_shows_a_readable_diff_and_exits_1(tmp_path: Path) -> None:
    fixture = tmp_path / "mariadb" / "pk_updates"
    shutil.copytree(MARIADB / "pk_updates", fixture)
    lines = (fixture / "expected.jsonl").read_text(encoding="utf-8").splitlines()
    # Hand-edited expectation (corruption test): event #3's new key 10 becomes 11.
    assert '"intValue":10}' in lines[3]
    lines[3] = lines[3].replace('"intValue":10}', '"intValue":11}')
    (fixture / "expected.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")

    result = verify_fixture(fixture)
    assert not result.ok and len(result.diffs) == 1
    diff = result.diffs[0]
    offset = json.loads(lines[3])["position"]["offset"]
    assert f"event #3 at mysql-bin.000001@{offset}" in diff
    assert "\n-            \"intValue\": 11\n+            \"intValue\": 10\n" in diff

    run = CliRunner().invoke(cli, ["fixtures", "verify", str(tmp_path)])
    assert run.exit_code == 1, run.output
    assert "FAIL" in run.output and "0 of 1 fixtures match" in run.output

    shutil.copy(MARIADB / "pk_updates" / "expected.jsonl", fixture / "expected.jsonl")
    run = CliRunner().invoke(cli, ["fixtures", "verify", str(tmp_path)])
    assert run.exit_code == 0 and "1 of 1 fixtures match" in run.output


def _console(*args: str) -> subprocess.CompletedProcess[str]:
    """The real entry point (``binlog_model.cli.main``), for the process exit status."""
    return subprocess.run([sys.executable, "-m", "binlog_model.cli", *args], capture_output=True, text=True,
                          check=False, timeout=120)


def test_verify_exit_status_of_the_console_command(tmp_path: Path) -> None:
    fixture = tmp_path / "multi_table"
    shutil.copytree(MARIADB / "multi_table", fixture)
    assert _console("fixtures", "verify", str(tmp_path)).returncode == 0
    text = (fixture / "expected.jsonl").read_text(encoding="utf-8")
    # Hand-edited expectation (corruption test): one customer's name changed.
    (fixture / "expected.jsonl").write_text(text.replace('"ann"', '"anne"', 1), encoding="utf-8")
    done = _console("fixtures", "verify", str(tmp_path))
    assert done.returncode == 1 and '-            "stringValue": "anne"' in done.stdout
    (fixture / "expected.jsonl").unlink()
    done = _console("fixtures", "verify", str(tmp_path))
    assert done.returncode == 1 and "MISSING" in done.stdout
    done = _console("fixtures", "verify", "--allow-missing", str(tmp_path))
    assert done.returncode == 0 and "0 of 1 fixtures match; 1 without expected.jsonl" in done.stdout


def test_verify_reports_missing_and_extra_events(tmp_path: Path) -> None:
    fixture = tmp_path / "transactions"
    shutil.copytree(MARIADB / "transactions", fixture)
    lines = (fixture / "expected.jsonl").read_text(encoding="utf-8").splitlines()
    (fixture / "expected.jsonl").write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")  # one dropped
    result = verify_fixture(fixture)
    assert (result.expected_count, result.actual_count) == (len(lines) - 1, len(lines))
    assert len(result.diffs) == 1 and f"event #{len(lines) - 1}" in result.diffs[0]


def test_verify_tree_of_nothing_is_an_error(tmp_path: Path) -> None:
    from binlog_model.errors import ConfigError

    with pytest.raises(ConfigError, match="no golden fixtures"):
        verify_tree(tmp_path)


def test_recorded_options_are_used(tmp_path: Path) -> None:
    """spec_example records always_include=ppc.campaigns.currency; dropping it must change the output."""
    fixture = tmp_path / "spec_example"
    shutil.copytree(MARIADB / "spec_example", fixture)
    meta = read_meta(fixture)
    assert meta["expected"]["options"]["always_include"] == ["ppc.campaigns.currency"]
    meta["expected"]["options"]["always_include"] = []
    (fixture / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    result = verify_fixture(fixture)
    assert len(result.diffs) == 2  # the UPDATE and the DELETE lose `before: currency`
    assert all('"currency"' in d for d in result.diffs)


# -- the spec's example ------------------------------------------------------------------------------------

_DML = "1d3a69ea-6308-11e8-b040-0242ac110002"
_DDL = "495bea6a-6961-11e8-abee-0242ac110003"


def _spec_event(when: str, sid: str, gno: int, table: str, op: str, **more: Any) -> dict[str, Any]:
    event = {"utcTimestamp": when, "source": "ppc:1", "serverUuid": sid, "transactionId": gno,
             "gtid": f"{sid}:{gno}", "queryIndex": 0, "rowIndex": 0, "traceInfo": None, "db": "ppc",
             "table": table, "operation": op, "rows": [], "schemaChanges": [],
             "gtidEvent": "GTID_LOG_EVENT"}
    event.update(more)
    return event


def _row(index: int, pk: Any, before: list[Any], after: list[Any]) -> dict[str, Any]:
    return {"rowIndex": index, "primaryKey": pk, "before": before, "after": after}


# Transcribed from the spec's listing (seeds/000), in its vocabulary: (name, kind, value). The statement
# event of a rows event is what the spec's mysqlbinlog shows (ROWS_QUERY); charset is MySQL 5.7's default
# server charset latin1 (the listing prints none).
SPEC_LISTING = [
    _spec_event("2018-05-29T06:22:10Z", _DML, 8, "campaigns", "INSERT", statementEvent="ROWS_QUERY_LOG_EVENT",
                rows=[_row(0, [("cid", "Long", 1)], [],
                           [("cid", "Long", 1), ("name", "String", "one"), ("currency", "String", "RUB"),
                            ("geo", "String", ""), ("shows", "Integer", 0), ("clicks", "Integer", 0)]),
                      _row(1, [("cid", "Long", 2)], [],
                           [("cid", "Long", 2), ("name", "String", "two"), ("currency", "String", "USD"),
                            ("geo", "String", "10000,-123"), ("shows", "Integer", 123),
                            ("clicks", "Integer", 456)])]),
    _spec_event("2018-05-29T06:36:20Z", _DML, 9, "campaigns", "UPDATE", statementEvent="ROWS_QUERY_LOG_EVENT",
                rows=[_row(0, [("cid", "Long", 1)], [("currency", "String", "RUB")],
                           [("geo", "null", None), ("clicks", "Integer", 777)])]),
    _spec_event("2018-05-29T06:38:57Z", _DML, 10, "campaigns", "DELETE",
                statementEvent="ROWS_QUERY_LOG_EVENT",
                rows=[_row(0, [("cid", "Long", 2)], [("currency", "String", "USD")], [])]),
    _spec_event("2018-06-06T08:13:02Z", _DDL, 7, "foobar", "SCHEMA", schemaChanges=[
        ("CreateTable", [("foo", "INTEGER", False, None), ("bar", "INTEGER", True, None)], ["foo"],
         "latin1")]),
    _spec_event("2018-06-06T08:16:50Z", _DDL, 8, "foobar", "SCHEMA", schemaChanges=[
        ("CreateOrModifyColumn", ("bar", "INTEGER", False, None))]),
    _spec_event("2018-06-06T08:22:13Z", _DDL, 9, "foobar", "SCHEMA", schemaChanges=[
        ("CreateOrModifyColumn", ("baz", "STRING", False, "latin1"))]),
    _spec_event("2018-06-06T11:17:27Z", _DDL, 10, "foobar", "SCHEMA", schemaChanges=[
        ("RenameColumn", "baz", "hurrdurr")]),
    _spec_event("2018-06-06T11:20:21Z", _DDL, 11, "foobar", "SCHEMA", schemaChanges=[
        ("DropColumn", "hurrdurr")]),
    _spec_event("2018-06-06T11:21:58Z", _DDL, 12, "foobar", "SCHEMA", schemaChanges=[("DropTable",)]),
]

_SPEC_KIND = {"long_value": "Long", "int_value": "Integer", "string_value": "String", "null_value": "null"}


def _cols(columns: Any) -> list[tuple[str, str, Any]]:
    out = []
    for c in columns:
        kind = c.value.WhichOneof("kind")
        out.append((c.name, _SPEC_KIND.get(kind, kind), python_value(c.value)))
    return out


def _coldef(c: Any) -> tuple[Any, ...]:
    return (c.column_name, pb.ColumnType.Name(c.column_type), c.nullable, c.charset or None)


def _change(change: Any) -> tuple[Any, ...]:
    kind = change.WhichOneof("change")
    body = getattr(change, kind)
    if kind == "create_table":
        return ("CreateTable", [_coldef(c) for c in body.columns], list(body.primary_key), body.charset)
    if kind == "create_or_modify_column":
        return ("CreateOrModifyColumn", _coldef(body))
    if kind == "rename_column":
        return ("RenameColumn", body.old_column_name, body.new_column_name)
    if kind == "drop_column":
        return ("DropColumn", body.column_name)
    if kind == "drop_table":
        return ("DropTable",)
    return (kind,)


def _statement_events(binlogs: list[Path]) -> dict[int, tuple[str, str | None]]:
    """For each event offset: the type names of its transaction's GTID event and of the latest
    statement-text event (ANNOTATE_ROWS / ROWS_QUERY) before it in that transaction."""
    out: dict[int, tuple[str, str | None]] = {}
    gtid, text = "?", None
    for event in iter_events(binlogs):
        kind = event.header.event_type
        if kind in (EventType.GTID_EVENT, EventType.GTID_LOG_EVENT):
            gtid, text = EventType(kind).name, None
        elif kind in (EventType.ANNOTATE_ROWS_EVENT, EventType.ROWS_QUERY_LOG_EVENT):
            text = EventType(kind).name
        out[event.header.offset] = (gtid, text)
    return out


def _project(e: pb.BinlogEvent, kinds: dict[int, tuple[str, str | None]]) -> dict[str, Any]:
    gtid_event, text_event = kinds[e.position.offset]
    out = {"utcTimestamp": e.utc_timestamp.ToJsonString(), "source": e.source, "serverUuid": e.server_uuid,
           "transactionId": e.transaction_id, "gtid": e.gtid, "queryIndex": e.query_index,
           "rowIndex": e.row_index, "traceInfo": e.trace_info if e.HasField("trace_info") else None,
           "db": e.db, "table": e.table, "operation": pb.BinlogEvent.Operation.Name(e.operation),
           "rows": [_row(r.row_index, _cols(r.primary_key), _cols(r.before), _cols(r.after)) for r in e.rows],
           "schemaChanges": [_change(c) for c in e.schema_changes], "gtidEvent": gtid_event}
    if e.rows:
        out["statementEvent"] = text_event
    return out


def _without_charset(changes: list[Any]) -> list[Any]:
    def strip(value: Any) -> Any:
        if isinstance(value, tuple) and len(value) == 4 and isinstance(value[2], bool):   # a column
            return value[:3]
        if isinstance(value, (list, tuple)):
            items = [strip(v) for v in value]
            if items and items[0] == "CreateTable":
                items = items[:3]                                                          # table charset
            return type(value)(items)
        return value
    return [strip(c) for c in changes]


def _differing_fields(spec: dict[str, Any], got: dict[str, Any]) -> set[str]:
    fields = {k for k in spec if k != "schemaChanges" and spec[k] != got.get(k)}
    if _without_charset(spec["schemaChanges"]) != _without_charset(got["schemaChanges"]):
        fields.add("schemaChanges")
    elif spec["schemaChanges"] != got["schemaChanges"]:
        fields.add("charset")
    return fields


@pytest.mark.parametrize("root", [MARIADB, GOLDEN / "mariadb11"], ids=lambda p: p.name)
def test_spec_example_matches_the_spec_except_documented_differences(root: Path) -> None:
    """On MariaDB 10.11 and 11.8 alike (11.8's utf8mb4 is its own default, 10.11's the harness's)."""
    fixture = root / "spec_example"
    meta = read_meta(fixture)
    events = _events("spec_example", root)
    kinds = _statement_events([fixture / "binlogs" / b["name"] for b in meta["binlogs"]])
    projected = [_project(e, kinds) for e in events]

    # The scenario creates what the spec's example starts from: two leading SCHEMA events.
    leading = projected[:len(projected) - len(SPEC_LISTING)]
    differing: set[str] = set()
    if leading:
        differing.add("leadingEvents")
        assert [(p["operation"], p["table"], p["schemaChanges"][0][0]) for p in leading] == [
            ("SCHEMA", "", "create_database"), ("SCHEMA", "campaigns", "CreateTable")]
    rest = projected[len(leading):]
    assert len(rest) == len(SPEC_LISTING)
    for index, (spec, got) in enumerate(zip(SPEC_LISTING, rest, strict=True)):
        fields = _differing_fields(spec, got)
        # Any undocumented difference fails here, naming the event and the field.
        documented = {d["field"] for d in meta["differences_from_spec"]}
        for name in sorted(fields - documented):
            assert got.get(name) == spec[name], f"spec event {index} ({spec['operation']}) field {name}"
        differing |= fields

    assert differing == {d["field"] for d in meta["differences_from_spec"]}
    # The documented MariaDB values are what the fixture shows.
    assert {p["gtidEvent"] for p in projected} == {"GTID_EVENT"}
    assert {p["statementEvent"] for p in rest if "statementEvent" in p} == {"ANNOTATE_ROWS_EVENT"}
    assert {p["serverUuid"] for p in projected} == {""}
    assert [p["gtid"] for p in rest] == [f"0-1-{p['transactionId']}" for p in rest]
    assert [p["transactionId"] for p in rest] == [3, 4, 5, 6, 7, 8, 9, 10, 11]
    assert {p["utcTimestamp"] for p in projected} == {"2018-05-29T06:22:10Z"}
    assert {p["source"] for p in projected} == {"fixture:spec_example"}
    create = rest[3]["schemaChanges"][0]
    assert create[3] == "utf8mb4" and rest[5]["schemaChanges"][0][1][3] == "utf8mb4"


# -- scenario coverage ---------------------------------------------------------------------------------------


def _statement_groups(events: list[pb.BinlogEvent], table: str, op: int) -> list[list[pb.BinlogEvent]]:
    groups: dict[tuple[int, int], list[pb.BinlogEvent]] = {}
    for e in events:
        if e.table == table and e.operation == op:
            groups.setdefault((e.transaction_id, e.query_index), []).append(e)
    return list(groups.values())


@pytest.mark.parametrize(("op", "rows"), [(pb.BinlogEvent.INSERT, 5000), (pb.BinlogEvent.UPDATE, 5000),
                                          (pb.BinlogEvent.DELETE, 2500)])
def test_large_statement_is_split_in_max_rows_pieces(op: int, rows: int) -> None:
    (pieces,) = _statement_groups(_events("large_statement"), "items", op)
    count = -(-rows // 1000)
    assert len(pieces) == count
    assert [p.event_index for p in pieces] == list(range(count))
    assert [p.row_index for p in pieces] == [1000 * i for i in range(count)]
    assert [p.last_in_statement for p in pieces] == [False] * (count - 1) + [True]
    assert len({(p.transaction_id, p.query_index, p.gtid, p.statement) for p in pieces}) == 1
    row_indexes = [r.row_index for p in pieces for r in p.rows]
    assert row_indexes == list(range(rows))
    # every row appears once: the ids the statement touched
    ids = sorted(python_value(r.primary_key[0].value) for p in pieces for r in p.rows)
    expected_ids = list(range(1, 5001)) if rows == 5000 else [i for i in range(1, 5001) if i % 10 < 5]
    assert ids == expected_ids


def _rows_of(events: list[pb.BinlogEvent], table: str) -> list[tuple[int, dict[str, Any], dict[str, Any]]]:
    return [(e.operation, {c.name: python_value(c.value) for c in r.before},
             {c.name: python_value(c.value) for c in r.after})
            for e in events if e.table == table for r in e.rows]


def test_transactions_rolled_back_work_is_absent() -> None:
    events = _events("transactions")
    accounts = _rows_of(events, "accounts")
    ledger = _rows_of(events, "ledger")
    assert all(after.get("owner") != "mallory" and after.get("id") != 3 for _, _, after in accounts)
    notes = [after.get("note") for op, _, after in ledger if op == pb.BinlogEvent.INSERT]
    assert notes == ["transfer out", "transfer in", "opening deposit"]
    # the non-transactional Aria insert of the rolled-back transaction is logged on its own
    (audit,) = [e for e in events if e.table == "audit_log" and e.rows]
    assert audit.operation == pb.BinlogEvent.INSERT and audit.query_index == 0


def test_transactions_savepoint_keeps_only_the_kept_work() -> None:
    events = _events("transactions")
    (txn,) = {e.transaction_id for e in events if any(python_value(c.value) == "carol" for r in e.rows
                                                       for c in r.after)}
    pieces = [e for e in events if e.transaction_id == txn]
    assert [(e.table, e.operation, e.query_index) for e in pieces] == [
        ("accounts", pb.BinlogEvent.INSERT, 0), ("ledger", pb.BinlogEvent.INSERT, 1)]
    assert [python_value(c.value) for c in pieces[1].rows[0].after if c.name == "note"] == ["opening deposit"]


def test_transaction_statements_share_the_gtid_with_growing_query_index() -> None:
    events = _events("transactions")
    first = [e for e in events if e.transaction_id == events[5].transaction_id]
    assert [(e.table, e.operation, e.query_index) for e in first] == [
        ("accounts", pb.BinlogEvent.UPDATE, 0), ("accounts", pb.BinlogEvent.UPDATE, 1),
        ("ledger", pb.BinlogEvent.INSERT, 2)]
    assert len({e.gtid for e in first}) == 1


def test_multi_table_statements_give_one_event_per_table() -> None:
    events = _events("multi_table")
    by_statement: dict[tuple[int, int], list[pb.BinlogEvent]] = {}
    for e in events:
        if e.rows:
            by_statement.setdefault((e.transaction_id, e.query_index), []).append(e)
    multi = {tuple(sorted((e.db, e.table, pb.BinlogEvent.Operation.Name(e.operation)) for e in group))
             for group in by_statement.values() if len(group) > 1}
    assert multi == {
        (("shop", "customers", "UPDATE"), ("shop", "orders", "UPDATE")),
        (("shop", "orders", "DELETE"), ("shop_archive", "notes", "DELETE")),
        (("shop", "orders", "UPDATE"), ("shop_archive", "notes", "UPDATE")),
    }
    for group in by_statement.values():
        assert len({(e.statement, e.gtid) for e in group}) == 1
        assert all(e.last_in_statement for e in group)


def test_rows_use_the_schema_of_their_time() -> None:
    """ddl_between_dml: DDL and DML interleave; each rows event is read with the schema then current."""
    events = _events("ddl_between_dml")
    inserts = [(e.table, [c.name for c in r.after]) for e in events
               if e.operation == pb.BinlogEvent.INSERT for r in e.rows]
    assert inserts[0] == ("people", ["id", "name", "age"])
    assert ("people", ["id", "name", "age", "email"]) in inserts
    assert ("people", ["rowver", "id", "name", "nick", "age", "email"]) in inserts
    assert ("people", ["rowver", "id", "name", "age_years", "contact"]) in inserts
    assert ("people", ["name", "id", "age_years", "contact", "rowver"]) in inserts
    assert ("persons", ["name", "id", "age_years", "contact", "rowver"]) in inserts
    (ivy,) = [r for e in events for r in e.rows if any(python_value(c.value) == "ivy" for c in r.after)]
    assert {c.name: python_value(c.value) for c in ivy.after}["contact"] == "café"    # latin1 after CONVERT
    (big,) = [r for e in events for r in e.rows if any(python_value(c.value) == "fay" for c in r.after)]
    assert {c.name: python_value(c.value) for c in big.after}["age_years"] == 9000000000  # BIGINT by now


def test_tables_without_primary_key_have_empty_primary_key() -> None:
    events = _events("no_primary_key")
    for table in ("heap", "uniq_nullable", "plain_myisam"):
        rows = [r for e in events if e.table == table for r in e.rows]
        assert rows and all(not r.primary_key for r in rows), table
    duplicates = [e for e in events if e.table == "heap" and e.operation == pb.BinlogEvent.INSERT]
    assert len(duplicates[0].rows) == 4
    deleted = [r for e in events if e.table == "plain_myisam" and e.operation == pb.BinlogEvent.DELETE
               for r in e.rows]
    assert len(deleted) == 3


def test_unique_not_null_key_is_the_row_identity_without_a_primary_key() -> None:
    # InnoDB and information_schema treat the first UNIQUE NOT NULL key as the primary key (PRI)
    events = _events("no_primary_key")
    create = next(e for e in events if e.table == "uniq_not_null" and e.operation == pb.BinlogEvent.SCHEMA)
    assert list(create.schema_changes[0].create_table.primary_key) == ["k1", "k2"]
    keys = [[(c.name, python_value(c.value)) for c in r.primary_key]
            for e in events if e.table == "uniq_not_null" and e.rows for r in e.rows]
    assert keys == [[("k1", 1), ("k2", "aa")], [("k1", 1), ("k2", "bb")], [("k1", 2), ("k2", "aa")],
                    [("k1", 1), ("k2", "bb")], [("k1", 2), ("k2", "aa")]]


def test_pk_updates_key_by_old_value_with_new_value_in_after() -> None:
    events = _events("pk_updates")
    updates = [({c.name: python_value(c.value) for c in r.primary_key},
                {c.name: python_value(c.value) for c in r.after}) for e in events
               if e.operation == pb.BinlogEvent.UPDATE for r in e.rows]
    assert ({"id": 1}, {"id": 10}) in updates
    assert ({"tenant": 1, "code": "bbb"}, {"code": "ccc"}) in updates
    assert ({"tenant": 2, "code": "aaa"}, {"tenant": 3, "code": "zzz", "amount": 31}) in updates
    assert ({"k": "a"}, {"k": "A"}) in updates
    assert ({"k": "b"}, {"k": "ключ"}) in updates
    single = [({c.name: python_value(c.value) for c in r.primary_key}["id"],
               {c.name: python_value(c.value) for c in r.after}["id"])
              for e in events if e.table == "single" and e.operation == pb.BinlogEvent.UPDATE for r in e.rows]
    assert single == [(1, 10), (10, 110), (3, 103), (2, 102), (102, 7)]   # ORDER BY id DESC in one statement
    renumbered = [(pk["id"], after["id"]) for pk, after in updates if after.get("id", 0) >= 1000]
    assert renumbered == [(3, 3000), (2, 2000), (1, 1000)]


def test_event_times_follow_the_pinned_timestamp() -> None:
    events = _events("pk_updates")
    assert {e.utc_timestamp.ToDatetime(tzinfo=dt.UTC) for e in events} == {
        dt.datetime.fromtimestamp(1700000500, dt.UTC)}


# -- generate on a live server --------------------------------------------------------------------------


@pytest.mark.parametrize("server", ["mariadb", "mariadb11"])
@pytest.mark.parametrize("scenario", ["spec_example", "pk_updates"])
def test_generate_on_mariadb_reproduces_the_committed_expectations(tmp_path: Path, scenario: str,
                                                                   server: str) -> None:
    """A fresh server, the scenario, our decoder: the same expected.jsonl byte for byte (times are pinned),
    on the machine's MariaDB (fixtures/golden/mariadb) and on MariaDB 11.8 (fixtures/golden/mariadb11)."""
    from binlog_model.testing.mariadb import mariadb_available
    from binlog_model.testing.mariadb11 import mariadb11_available

    ok, reason = mariadb11_available() if server == "mariadb11" else mariadb_available()
    if not ok:
        pytest.skip(reason)
    committed_dir = GOLDEN / server / scenario
    committed = read_meta(committed_dir)
    out = tmp_path / server / scenario
    sql = GOLDEN.parent / "scenarios" / f"{scenario}.sql"
    args = ["fixtures", "generate", str(sql), "--server", server, "--out", str(out)]
    for column in committed["expected"]["options"]["always_include"]:
        args += ["--always-include", column]
    run = CliRunner().invoke(cli, args)
    assert run.exit_code == 0, run.output
    written = sorted(p.name for p in out.iterdir())
    assert written == ["binlogs", "expected.jsonl", "meta.json", "snapshot.json"]
    meta = read_meta(out)
    assert meta["scenario_sha256"] == committed["scenario_sha256"]
    assert meta["expected"]["options"] == committed["expected"]["options"]
    assert meta["expected"]["snapshot"] == "snapshot.json"
    assert meta.get("differences_from_spec") == committed.get("differences_from_spec")
    assert meta["server"]["version"].split(".")[:2] == committed["server"]["version"].split(".")[:2]
    assert (out / "expected.jsonl").read_bytes() == (committed_dir / "expected.jsonl").read_bytes()
    assert verify_fixture(out).ok


def test_generate_for_mysql_without_docker_says_so(tmp_path: Path) -> None:
    from binlog_model.testing.containers import docker_available

    if docker_available()[0]:
        pytest.skip("a Docker engine answers; the MySQL generate path is exercised by the container tests")
    sql = GOLDEN.parent / "scenarios" / "spec_example.sql"
    run = CliRunner().invoke(cli, ["fixtures", "generate", str(sql), "--server", "mysql:5.7",
                                   "--out", str(tmp_path / "out")])
    assert run.exit_code != 0
    assert "cannot generate a mysql:5.7 fixture: no Docker engine" in str(run.exception)
