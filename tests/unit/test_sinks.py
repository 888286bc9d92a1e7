"""binlog_model.sinks: the JSONL and length-delimited sinks write exactly what the messages' encoders say,
count what they wrote, and frame already-serialized bytes the same way as a message."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from binlog_model.errors import BinlogError, ConfigError
from binlog_model.messages import BinlogEvent, Row, from_json, to_json
from binlog_model.sinks import DelimitedSink, JsonlSink, open_sink
from binlog_model.sinks.delimited import encode_delimited, frame, parse_delimited


def _events() -> list[BinlogEvent]:
    first = BinlogEvent(db="ppc", table="campaigns", source="ppc:1", transaction_id=8,
                        operation=BinlogEvent.INSERT, rows=[Row(row_index=0)])
    second = BinlogEvent(db="ppc", table="häuser", source="ppc:1", transaction_id=9, query_index=1,
                         operation=BinlogEvent.DELETE)
    return [first, second]


def test_jsonl_sink_writes_one_utf8_line_per_event_and_counts_them() -> None:
    stream = io.BytesIO()
    sink = JsonlSink(stream)
    assert sink.write_all(_events()) == 2
    data = stream.getvalue()
    lines = data.decode("utf-8").splitlines()
    assert lines == [to_json(e) for e in _events()]
    assert [from_json(line) for line in lines] == _events()
    assert "häuser" in lines[1]                       # non-ASCII text as is, encoded UTF-8
    assert (sink.events, sink.bytes_written) == (2, len(data))


def test_jsonl_sink_include_defaults() -> None:
    stream = io.BytesIO()
    JsonlSink(stream, include_defaults=True).write(_events()[0])
    assert b'"queryIndex":0' in stream.getvalue()
    stream = io.BytesIO()
    JsonlSink(stream).write(_events()[0])
    assert b"queryIndex" not in stream.getvalue()


def test_delimited_sink_round_trips_and_counts_bytes() -> None:
    stream = io.BytesIO()
    with DelimitedSink(stream) as sink:
        assert sink.write_all(iter(_events())) == 2
    data = stream.getvalue()
    assert parse_delimited(data) == _events()
    assert sink.bytes_written == len(data) == sum(len(encode_delimited(e)) for e in _events())
    assert not stream.closed                          # a stream the caller gave stays open


def test_write_serialized_frames_bytes_as_write_does() -> None:
    by_message, by_bytes = io.BytesIO(), io.BytesIO()
    messages, serialized = DelimitedSink(by_message), DelimitedSink(by_bytes)
    for event in _events():
        assert messages.write(event) == serialized.write_serialized(event.SerializeToString())
    serialized.write_serialized(memoryview(_events()[1].SerializeToString()))
    messages.write(_events()[1])
    assert by_bytes.getvalue() == by_message.getvalue()
    assert (serialized.events, serialized.bytes_written) == (3, len(by_bytes.getvalue()))
    assert frame(b"") == b"\x00"
    assert frame(b"x" * 300)[:2] == b"\xac\x02"       # 300 as a two-byte varint


def test_open_sink_on_a_path_owns_and_closes_the_file(tmp_path: Path) -> None:
    path = tmp_path / "out.pb"
    with open_sink("proto", path) as sink:
        sink.write_all(_events())
    assert parse_delimited(path.read_bytes()) == _events()
    with pytest.raises(ValueError, match="closed sink"):
        sink.write(_events()[0])
    sink.close()                                      # a second close is harmless
    jsonl = tmp_path / "out.jsonl"
    with open_sink("jsonl", jsonl, json_defaults=True) as sink:
        sink.write(_events()[0])
    assert jsonl.read_text(encoding="utf-8") == to_json(_events()[0], include_defaults=True) + "\n"


def test_open_sink_rejects_an_unknown_format() -> None:
    with pytest.raises(ConfigError, match="unknown output format 'csv'"):
        open_sink("csv", io.BytesIO())


def test_sync_fsyncs_a_file_backed_sink(tmp_path: Path) -> None:
    path = tmp_path / "synced.jsonl"
    sink = open_sink("jsonl", path)
    sink.write(_events()[0])
    sink.sync()                                       # flushed: visible before close
    assert path.read_bytes() == (to_json(_events()[0]) + "\n").encode()
    sink.close()


def test_frame_refuses_what_protobuf_cannot_hold() -> None:
    class Huge:
        def __len__(self) -> int:
            return 1 << 31

    with pytest.raises(BinlogError, match="exceeds the protobuf limit"):
        frame(Huge())  # type: ignore[arg-type]


def test_parquet_stage_and_publish_moves_runs_and_renamed_tables(tmp_path: Path) -> None:
    """The Parquet layout: staged files land in ``db=/table=`` folders under run-prefixed names, the schema
    file replaces the old one, a renamed table's earlier files follow it, and publishing twice is harmless."""
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa
    import pyarrow.fs as pafs

    from binlog_model.sinks import parquet, publish

    fs = pafs.LocalFileSystem()
    out, staged = tmp_path / "out", tmp_path / "staged"
    old = out / parquet.table_folder("d", "old_name")
    old.mkdir(parents=True)
    pq.write_table(pa.table({"id": [1]}), old / "run-000001-part-0.parquet")
    publish.stage_layout(fs, str(staged), {("d", "t"): "id INT, v STRING"}, [("d", "old_name", "d", "t")])
    new = staged / parquet.table_folder("d", "t")
    pq.write_table(pa.table({"id": [2, 3], "v": ["x", "y"]}), new / "part-0.parquet")

    publish.publish(fs, str(staged), str(out), "run-000002")
    publish.publish(fs, str(staged), str(out), "run-000002")
    folder = out / "db=d" / "table=t"
    assert sorted(p.name for p in folder.glob("*.parquet")) == ["run-000001-part-0.parquet",
                                                                 "run-000002-part-0.parquet"]
    assert (folder / parquet.SCHEMA_FILE).read_text(encoding="utf-8") == "id INT, v STRING\n"
    assert not old.exists()
    assert pq.read_table(folder / "run-000002-part-0.parquet").column("v").to_pylist() == ["x", "y"]
    # The manifest commits both runs' files under the new name (the old folder's files followed it).
    assert publish.committed_files(out, "d", "t") == [f"{out}/db=d/table=t/run-00000{n}-part-0.parquet"
                                                      for n in (1, 2)]
    assert publish.committed_files(out, "d", "old_name") == []
