"""The one GTID set (``binlog_model.gtid.GtidSet``): MySQL's text form with tagged GTIDs (8.4+), MariaDB's
GTID lists, the run state's JSON (old state files included), and the round trip between them."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.errors import ConfigError
from binlog_model.gtid import GtidSet
from binlog_model.io.state import RunState
from binlog_model.wire import events as ev
from binlog_model.wire.header import EventHeader, EventType

U1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
U2 = "1d3a69ea-6308-11e8-b040-0242ac110002"


def _gtid_event(sid: str, gno: int, tag: str | None = None, *, anonymous: bool = False) -> ev.GtidEvent:
    kind = EventType.ANONYMOUS_GTID_LOG_EVENT if anonymous else EventType.GTID_LOG_EVENT
    return ev.GtidEvent(EventHeader(1, kind, 1, 10, 110, 0, 100, "binlog.000001"), flags=1,
                        sid=uuid.UUID(sid), gno=gno, tag=tag)


# --- MySQL's text --------------------------------------------------------------------------------------


def test_mysql_text_with_tags_is_printed_as_mysql_prints_it() -> None:
    gtids = GtidSet.parse(f"{U1.upper()}:1-5:7:Batch:1-3,\n{U2}:tag_2:4, {U1}:6:batch:4")
    assert str(gtids) == f"{U2}:tag_2:4,{U1}:1-7:batch:1-4"
    assert gtids.intervals(U1) == [(1, 7)] and gtids.intervals(U1, "batch") == [(1, 4)]


def test_a_tag_straight_after_the_uuid_is_what_a_run_with_only_tagged_gtids_writes() -> None:
    assert str(GtidSet.parse(f"{U1}:batch:1-2")) == f"{U1}:batch:1-2"


def test_mariadb_gtid_list_one_item_per_domain() -> None:
    gtids = GtidSet.parse("1-2-30, 0-1-100")
    assert str(gtids) == "0-1-100,1-2-30"
    assert [gtids.contains_mariadb(0, s) for s in (1, 100, 101)] == [True, True, False]
    with pytest.raises(ConfigError, match="domain 0 is given twice"):
        GtidSet.parse("0-1-5,0-2-6")


@pytest.mark.parametrize("text", ["0-1", "x-1-2", f"{U1}", f"{U1}:", f"{U1}:0", f"{U1}:5-3", f"{U1}:1:a:b:2",
                                  f"{U1}:batch", "nonsense:1-2", f"{U1}:9tag:1", f"{U1}:{'t' * 33}:1"])
def test_bad_text_is_a_config_error_naming_the_item(text: str) -> None:
    with pytest.raises(ConfigError, match="GTID set"):
        GtidSet.parse(text)


def test_contains_model_events_tagged_and_untagged() -> None:
    gtids = GtidSet.parse(f"{U1}:1-5:batch:7")
    event = lambda source, gno: pb.BinlogEvent(server_uuid=source, transaction_id=gno,  # noqa: E731
                                               gtid=f"{source}:{gno}")
    assert [gtids.contains(event(U1, n)) for n in (1, 5, 6, 7)] == [True, True, False, False]
    assert [gtids.contains(event(f"{U1}:batch", n)) for n in (5, 7)] == [False, True]
    assert not gtids.contains(pb.BinlogEvent(transaction_id=1))      # no GTID: never skipped


# --- property-style: round trip and interval merging ---------------------------------------------------

_sources = st.tuples(st.sampled_from([U1, U2]), st.sampled_from(["", "batch", "a_1"]))
_gtids = st.lists(st.tuples(_sources, st.integers(1, 80)), max_size=60)


def _built(items: list[tuple[tuple[str, str], int]]) -> GtidSet:
    gtids = GtidSet()
    for (source, tag), gno in items:
        gtids.add_mysql(source, gno, tag)
    return gtids


@given(_gtids)
def test_intervals_are_merged_sorted_and_hold_exactly_the_numbers_added(items: list[Any]) -> None:
    gtids = _built(items)
    for source in {s for s, _ in items}:
        spans = gtids.intervals(*source)
        assert {n for lo, hi in spans for n in range(lo, hi + 1)} == {g for s, g in items if s == source}
        assert all(spans[i][1] + 1 < spans[i + 1][0] for i in range(len(spans) - 1)), spans
        assert all(gtids.contains_mysql(source[0], g, source[1]) for s, g in items if s == source)


@given(_gtids, st.randoms())
def test_text_round_trip_in_any_order_and_grouping(items: list[Any], rng: Any) -> None:
    gtids = _built(items)
    text = str(gtids)
    assert str(GtidSet.parse(text)) == text
    # The same GTIDs given as MySQL accepts them: shuffled, one item per GTID, tags as typed.
    shuffled = [f"{s}:{t.upper()}:{g}" if t else f"{s}:{g}" for (s, t), g in items]
    rng.shuffle(shuffled)
    assert str(GtidSet.parse(",\n".join(shuffled))) == text
    assert GtidSet.from_json(json.loads(json.dumps(gtids.to_json()))) == gtids


# --- the run state -------------------------------------------------------------------------------------

# gtid_executed and gtid_text as state.json held them before binlog_model.gtid (the io.state GtidSet).
OLD_STATE_GTIDS = {"mysql": {U1: [[1, 3], [7, 7]], f"{U1}:batch": [[1, 2]]},
                   "mariadb": {"0": "0-2-42"}}
OLD_STATE_TEXT = f"{U1}:1-3:7,{U1}:batch:1-2,0-2-42"


def _old_state_file(directory: Path) -> Path:
    directory.mkdir()
    doc = {"format": "binlog-model/run-state", "version": 1, "options": {"format": "jsonl"},
           "position": {"file": "binlog.000001", "offset": 400, "rotated_to": None,
                        "format_description": None},
           "files": {"binlog.000001": 400}, "gtid_executed": OLD_STATE_GTIDS, "gtid_text": OLD_STATE_TEXT,
           "history": None, "outputs": [], "open_output": None, "runs": 1}
    (directory / "state.json").write_text(json.dumps(doc), encoding="utf-8")
    return directory


def test_a_state_written_by_the_old_code_still_loads(tmp_path: Path) -> None:
    state = RunState.load(_old_state_file(tmp_path / "state"))
    assert str(state.gtids) == f"{U1}:1-3:7:batch:1-2,0-2-42"
    assert state.gtids.to_json() == OLD_STATE_GTIDS        # saved again unchanged
    # Its gtid_text (one item per source) is a set the parser reads, the same set.
    assert GtidSet.parse(OLD_STATE_TEXT) == state.gtids


def _run_state_text(tmp_path: Path) -> str:
    """A run's state after GTID events as the decoder gives them, saved and loaded: its ``gtid_text``."""
    state = RunState.load(tmp_path / "run")
    for event in (_gtid_event(U1, 1), _gtid_event(U1, 2), _gtid_event(U1, 1, "batch"),
                  _gtid_event(U1, 2, "batch"), _gtid_event(U1, 0, anonymous=True)):
        state.gtids.add_event(event)
    state.save()
    text = json.loads((tmp_path / "run" / "state.json").read_text(encoding="utf-8"))["gtid_text"]
    assert RunState.load(tmp_path / "run").gtids == state.gtids
    return str(text)


def test_a_tagged_set_a_run_writes_is_read_back(tmp_path: Path) -> None:
    text = _run_state_text(tmp_path)
    assert text == f"{U1}:1-2:batch:1-2"
    assert str(GtidSet.parse(text)) == text


def test_a_tagged_set_a_run_writes_is_accepted_by_the_spark_gtidset_option(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    from binlog_model.spark.reading import ReadOptions

    text = _run_state_text(tmp_path)
    skip = ReadOptions.parse({"paths": "binlog.000001", "gtidSet": text}).skip_gtids
    assert skip is not None
    assert skip.contains(pb.BinlogEvent(server_uuid=f"{U1}:batch", transaction_id=2, gtid=f"{U1}:batch:2"))
