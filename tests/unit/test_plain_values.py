"""``--json-values plain``: every value kind as plain JSON, by the rules of docs/contracts.md.

The values are the golden fixtures' (real MariaDB 10.11, 11.8 and MySQL 9.7 bytes, every column type of
``all_types``); each plain value is checked against the Python value ``messages.python_value`` gives for the
same ``Value`` (another path than ``plain_value``'s). The kinds no fixture holds (VECTOR, undecodable text,
partial JSON updates) and the integer bounds are checked on hand-written values.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from binlog_model._pb.binlog_event_pb2 import (
    BinlogEvent,
    Column,
    JsonDiff,
    JsonDiffOperation,
    RawText,
    Row,
    Value,
    Vector,
)
from binlog_model.commands.events import command as events_command
from binlog_model.messages import from_json, python_value, to_dict
from binlog_model.sinks.jsonl import encode_jsonl, plain_value, plain_values
from tests._paths import REPO

GOLDEN = REPO / "fixtures" / "golden"
EXACT = 2 ** 53


def _golden_events() -> list[BinlogEvent]:
    return [from_json(line) for path in sorted(GOLDEN.rglob("expected.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines()]


def _micros(text: str) -> int:
    m = re.fullmatch(r"(-?)(\d{2,3}):(\d{2}):(\d{2})(?:\.(\d{6}))?", text)
    assert m, text
    sign, h, mi, s, frac = m.groups()
    total = ((int(h) * 60 + int(mi)) * 60 + int(s)) * 1_000_000 + int(frac or 0)
    return -total if sign else total


def _check(value: Value, plain: Any) -> None:
    """``plain`` is ``value`` by the documented rules, compared with ``python_value``'s reading."""
    kind = value.WhichOneof("kind")
    py = python_value(value)
    if kind in ("int_value", "long_value", "uint64_value", "bit_value"):
        assert plain == (py if -EXACT <= py <= EXACT else str(py)), (kind, py, plain)
    elif kind == "decimal_value":
        assert isinstance(plain, str) and Decimal(plain) == py
    elif kind == "bytes_value":
        assert base64.b64decode(plain, validate=True) == py
    elif kind == "date_value":
        assert plain == (py.isoformat() if isinstance(py, dt.date) else
                         f"{py.year:04d}-{py.month:02d}-{py.day:02d}")
    elif kind == "datetime_value":
        if isinstance(py, dt.datetime):
            assert plain == py.isoformat()
        else:       # a zero or invalid DATETIME keeps its digits
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?", plain), plain
    elif kind == "timestamp_micros":
        assert plain == (py.isoformat().replace("+00:00", "Z") if isinstance(py, dt.datetime)
                         else "0000-00-00T00:00:00Z")
    elif kind == "time_micros":
        assert _micros(plain) == py // dt.timedelta(microseconds=1)
    elif kind == "set_value":
        assert plain == list(py)
    elif kind == "geometry_value":
        assert plain == {"srid": py.srid, "wkb": base64.b64encode(py.wkb).decode()}
    elif kind in ("double_value", "float_value", "string_value", "json_value", "null_value"):
        assert plain == py and type(plain) is type(py)
    else:
        raise AssertionError(f"no golden value of kind {kind}")
    json.dumps(plain, allow_nan=False)      # plain JSON: no NaN, no bytes, no objects of ours


def test_every_golden_value_kind_is_plain_json_by_the_rules() -> None:
    seen = set()
    for event in _golden_events():
        doc = plain_values(event)
        for row, row_doc in zip(event.rows, doc.get("rows", []), strict=True):
            images = (("primaryKey", row.primary_key), ("before", row.before), ("after", row.after))
            for key, columns in images:
                if not columns:
                    continue
                assert list(row_doc[key]) == [c.name for c in columns]     # column order kept
                for col in columns:
                    _check(col.value, row_doc[key][col.name])
                    seen.add(col.value.WhichOneof("kind"))
    assert seen == {"null_value", "int_value", "long_value", "string_value", "bytes_value", "decimal_value",
                    "double_value", "float_value", "datetime_value", "date_value", "timestamp_micros",
                    "time_micros", "uint64_value", "json_value", "set_value", "bit_value", "geometry_value"}


@pytest.mark.parametrize(("value", "plain"), [
    (Value(long_value=EXACT), EXACT),
    (Value(long_value=EXACT + 1), str(EXACT + 1)),
    (Value(long_value=-EXACT - 1), str(-EXACT - 1)),
    (Value(long_value=-(2 ** 63)), "-9223372036854775808"),
    (Value(uint64_value=2 ** 64 - 1), "18446744073709551615"),
    (Value(bit_value=2 ** 64 - 1), "18446744073709551615"),
    (Value(decimal_value="-0.000000000000000001"), "-0.000000000000000001"),
    (Value(time_micros=-3020399000000), "-838:59:59"),
    (Value(time_micros=1_000_001), "00:00:01.000001"),
    (Value(timestamp_micros=1527574930_000001), "2018-05-29T06:22:10.000001Z"),
    (Value(timestamp_micros=0), "0000-00-00T00:00:00Z"),
    (Value(vector_value=Vector(values=[1.0, -2.5])), [1.0, -2.5]),
    (Value(raw_text_value=RawText(data=b"\xff", charset="utf8mb4")),
     {"base64": "/w==", "charset": "utf8mb4"}),
    (Value(json_diff=JsonDiff(operations=[JsonDiffOperation(op=JsonDiffOperation.REMOVE, path="$.b")])),
     {"jsonDiff": {"operations": [{"op": "REMOVE", "path": "$.b"}]}}),
])
def test_bounds_and_the_kinds_no_fixture_holds(value: Value, plain: Any) -> None:
    assert plain_value(value) == plain


def test_zero_dates_keep_their_digits() -> None:
    event = from_json(json.dumps({"rows": [{"after": [
        {"name": "d", "value": {"dateValue": {}}},
        {"name": "t", "value": {"datetimeValue": {"year": 2024, "month": 2, "day": 0}}}]}]}))
    assert plain_values(event)["rows"][0]["after"] == {"d": "0000-00-00", "t": "2024-02-00T00:00:00"}


def test_events_cli_writes_plain_values(tmp_path: Path) -> None:
    fixture = GOLDEN / "mysql" / "all_types"
    binlogs = sorted(str(p) for p in (fixture / "binlogs").iterdir())
    snapshot = fixture / "snapshot.json"
    args = [*binlogs, "--snapshot", str(snapshot)] if snapshot.exists() else binlogs
    typed = CliRunner().invoke(events_command, args)
    plain = CliRunner().invoke(events_command, [*args, "--json-values", "plain"])
    assert typed.exit_code == 0 and plain.exit_code == 0, (typed.output, plain.output)
    typed_lines, plain_lines = typed.output.splitlines(), plain.output.splitlines()
    assert len(plain_lines) == len(typed_lines) > 0
    assert CliRunner().invoke(events_command, [*args, "--json-values", "typed"]).output == typed.output
    for t, p in zip(typed_lines, plain_lines, strict=True):
        event = from_json(t)
        assert json.loads(p) == plain_values(event)
        assert (encode_jsonl(event, json_values="plain").decode() == p + "\n")
    # the parts other than row values are the typed ones
    first = next(i for i, t in enumerate(typed_lines) if from_json(t).rows)
    doc, typed_doc = json.loads(plain_lines[first]), to_dict(from_json(typed_lines[first]))
    doc.pop("rows")
    typed_doc.pop("rows")
    assert doc == typed_doc


def test_plain_values_of_a_hand_written_row_keep_names_and_order() -> None:
    event = BinlogEvent(operation=BinlogEvent.INSERT)
    event.rows.append(Row(after=[Column(name="z", value=Value(int_value=3)),
                                 Column(name="a", value=Value(null_value=0))]))
    assert json.dumps(plain_values(event)["rows"][0]["after"]) == '{"z": 3, "a": null}'


def test_an_incremental_run_keeps_its_json_values(tmp_path: Path) -> None:
    fixture = GOLDEN / "mysql" / "all_types"
    binlogs = sorted(str(p) for p in (fixture / "binlogs").iterdir())
    state, out = tmp_path / "state", tmp_path / "out"
    args = [*binlogs, "--snapshot", str(fixture / "snapshot.json"), "--state", str(state), "--out", str(out)]
    first = CliRunner().invoke(events_command, [*args, "--json-values", "plain"])
    assert first.exit_code == 0, first.output
    (part,) = sorted(out.glob("part-*.jsonl"))
    rows = [json.loads(line) for line in part.read_text(encoding="utf-8").splitlines()]
    assert any(isinstance(r.get("after"), dict) for e in rows for r in e.get("rows", []))
    again = CliRunner().invoke(events_command, args)        # typed: not the form the state started with
    assert again.exit_code != 0 and "json_values: state 'plain', this run None" in str(again.exception)
