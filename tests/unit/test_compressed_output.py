"""``--compress zstd`` and ``binlog-model cat``: compressed output read back equals the plain output, frames
end exactly where a run commits, a cut-short frame is named with its file and offset, and ``cat`` prints
what ``events --format jsonl`` printed.

The golden fixtures are the input (every server family); the zstd frames are checked with the zstandard
library's own reader as well as ours, so a reader bug of ours cannot hide a writer bug.
"""

from __future__ import annotations

import io
import os
import signal
from pathlib import Path
from typing import Any

import pytest
import zstandard

from binlog_model.cli import main
from binlog_model.errors import BinlogError, DecodeError, TruncatedEventError
from binlog_model.io.compression import ZSTD_MAGIC, ZstdFrameReader, ZstdFrameWriter
from binlog_model.io.outputs import iter_output, output_files
from binlog_model.io.state import RunState
from binlog_model.runs.output import OutputWriter
from binlog_model.sinks.delimited import parse_delimited
from binlog_model.testing.golden import binlog_files, fixture_options, iter_fixture_dirs, read_meta
from tests._paths import REPO
from tests._zstd import unpacked

GOLDEN = REPO / "fixtures" / "golden"
FIXTURES = sorted(iter_fixture_dirs(GOLDEN))
SPEC = GOLDEN / "mariadb" / "spec_example"
MULTI = GOLDEN / "mysql" / "ddl_between_dml"




def _frames(data: bytes) -> list[int]:
    """The end offsets of the zstd frames of ``data``."""
    ends, at = [], 0
    while at < len(data):
        assert data[at:at + 4] == ZSTD_MAGIC, f"no frame starts at {at}"
        at += _frame_size(data[at:])
        ends.append(at)
    return ends


def _frame_size(data: bytes) -> int:
    obj = zstandard.ZstdDecompressor().decompressobj()
    obj.decompress(data)
    return len(data) - len(obj.unused_data)


def _events_args(fixture: Path) -> list[str]:
    meta = read_meta(fixture)
    options = fixture_options(fixture, meta)
    args = ["events", *map(str, binlog_files(fixture, meta)), "--source", options.source, "--image",
            options.image, "--max-rows", str(options.max_rows), "--max-bytes", str(options.max_bytes)]
    for column in options.always_include:
        args += ["--always-include", column]
    if (fixture / "snapshot.json").is_file():
        args += ["--snapshot", str(fixture / "snapshot.json")]
    return args


def _run(args: list[str], capsysbinary: pytest.CaptureFixture[bytes]) -> bytes:
    capsysbinary.readouterr()
    assert main(args) == 0, capsysbinary.readouterr().err.decode()
    return capsysbinary.readouterr().out


# -- the frame writer and reader ---------------------------------------------------------------------------

def test_frames_end_exactly_at_each_end_frame_and_never_empty() -> None:
    raw = io.BytesIO()
    writer = ZstdFrameWriter(raw, level=3, owns_raw=False)
    pieces = [b"a" * 10, b"", b"xyz" * 100_000, b"q"]
    lengths = []
    for piece in pieces:
        writer.write(piece)
        writer.end_frame()
        writer.end_frame()          # twice: no empty frame
        lengths.append(writer.stored_bytes)
    writer.close()
    data = raw.getvalue()
    assert len(data) == writer.stored_bytes == lengths[-1]
    assert _frames(data) == sorted(set(lengths)), "one frame per end_frame that had data"
    for n, end in enumerate(lengths):
        assert unpacked(data[:end]) == b"".join(pieces[:n + 1])


def test_a_frame_cut_short_is_named_with_its_file_and_offset() -> None:
    raw = io.BytesIO()
    writer = ZstdFrameWriter(raw, owns_raw=False)
    writer.write(b"first frame " * 50)
    writer.end_frame()
    second = writer.stored_bytes
    writer.write(os.urandom(5000))
    writer.close()
    data = raw.getvalue()
    for cut in (second + 1, second + 7, len(data) - 1):
        with pytest.raises(TruncatedEventError) as info:
            ZstdFrameReader(io.BytesIO(data[:cut]), file="part.zst").read()
        assert (info.value.file, info.value.offset) == ("part.zst", second)
        assert "cut short" in str(info.value) and "part.zst" in str(info.value)
    assert ZstdFrameReader(io.BytesIO(data[:second])).read() == b"first frame " * 50


def test_bytes_that_are_not_zstd_are_a_decode_error() -> None:
    with pytest.raises(DecodeError) as info:
        ZstdFrameReader(io.BytesIO(b"plain text, not a frame"), file="x.zst").read()
    assert info.value.offset == 0 and "zstd" in str(info.value)
    damaged = bytearray(zstandard.ZstdCompressor(write_checksum=True).compress(b"abc" * 1000))
    damaged[-6] ^= 0xFF
    with pytest.raises(DecodeError):
        ZstdFrameReader(io.BytesIO(bytes(damaged)), file="x.zst").read()


def test_reads_in_small_pieces_equal_one_read() -> None:
    data = os.urandom(300_000) + b"z" * 300_000
    raw = io.BytesIO()
    with_frames = ZstdFrameWriter(raw, owns_raw=False)
    for i in range(0, len(data), 70_001):
        with_frames.write(data[i:i + 70_001])
        if i % 3 == 0:
            with_frames.end_frame()
    with_frames.close()
    reader = ZstdFrameReader(io.BytesIO(raw.getvalue()))
    got = bytearray()
    while chunk := reader.read(4093):
        got += chunk
    assert bytes(got) == data


def test_output_writer_commits_only_at_frame_ends(tmp_path: Path) -> None:
    writer = OutputWriter(tmp_path / "p.pb.zst", "proto", False, zstd_level=3)
    assert writer.commit_length(0) == 0
    writer.write(b"\x08\x01")       # a serialized BinlogEvent (utc_timestamp absent; field 1 varint)
    mark = writer.mark()
    first = writer.commit_length(mark)
    assert first == writer.stored_size > 0
    assert writer.commit_length(mark) == first, "the last frame end again: no new frame"
    writer.write(b"\x08\x02")
    with pytest.raises(BinlogError, match="cannot be committed"):
        writer.commit_length(writer.size + 1)
    writer.close()
    data = (tmp_path / "p.pb.zst").read_bytes()
    assert unpacked(data[:first]) == b"\x02\x08\x01"


def test_a_commit_at_an_earlier_mark_ends_the_frame_there(tmp_path: Path) -> None:
    """The runner commits the last transaction start before an input cut short, after more output was
    written (an XA transaction prepared and held, others committed after it): the frame ends at that mark,
    and what came after it goes on in the next frame."""
    from binlog_model.framing import frame

    writer = OutputWriter(tmp_path / "p.pb.zst", "proto", False, zstd_level=1)
    before = [os.urandom(60_000) for _ in range(4)]     # past the batch size on both sides of the mark
    after = [os.urandom(70_000) for _ in range(3)]
    for body in before:
        writer.write(body)
    mark = writer.mark()
    for body in after:
        writer.write(body)
    committed = writer.commit_length(mark)
    writer.close()
    data = (tmp_path / "p.pb.zst").read_bytes()
    assert committed in _frames(data)
    assert unpacked(data[:committed]) == b"".join(map(frame, before))
    assert unpacked(data) == b"".join(map(frame, before + after))


def test_a_mark_given_up_past_the_hold_limit_cannot_be_cut_at(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ZstdFrameWriter, "HOLD_MAX", 100_000)
    raw = io.BytesIO()
    writer = ZstdFrameWriter(raw, owns_raw=False)
    writer.write(b"a" * 1000)
    mark = writer.mark()
    writer.write(os.urandom(300_000))       # more than HOLD_MAX after the mark: compressed
    with pytest.raises(ValueError, match="no frame can end"):
        writer.end_frame(at=mark)
    writer.end_frame()
    assert unpacked(raw.getvalue())[:1000] == b"a" * 1000


# -- compressed output read back equals the plain output (golden fixtures) ---------------------------------

@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.relative_to(GOLDEN).as_posix())
def test_compressed_output_reads_back_as_the_plain_output(fixture: Path, tmp_path: Path,
                                                          capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    args = _events_args(fixture)
    jsonl = _run([*args, "--format", "jsonl"], capsysbinary)
    assert jsonl.count(b"\n") == len((fixture / "expected.jsonl").read_text().splitlines())
    proto = tmp_path / "e.pb"
    _run([*args, "--format", "proto", "--out", str(proto)], capsysbinary)
    for fmt, plain in (("jsonl", jsonl), ("proto", proto.read_bytes())):
        packed = tmp_path / f"e.{fmt}.zst"
        _run([*args, "--format", fmt, "--compress", "zstd", "--compress-level", "9", "--out", str(packed)],
             capsysbinary)
        assert packed.read_bytes()[:4] == ZSTD_MAGIC
        assert unpacked(packed.read_bytes()) == plain
        # every reader of ours: cat (JSON lines as events printed them) and parse_delimited
        assert _run(["cat", str(packed)], capsysbinary) == jsonl
    assert parse_delimited((tmp_path / "e.proto.zst").read_bytes()) == parse_delimited(proto.read_bytes())
    assert _run(["cat", str(proto), str(tmp_path / "e.jsonl.zst")], capsysbinary) == jsonl + jsonl


# -- events --state --compress zstd ------------------------------------------------------------------------

def test_state_runs_write_zst_parts_whose_frames_end_at_each_commit(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    args = _events_args(MULTI)
    want = _run([*args, "--format", "jsonl"], capsysbinary)
    state, out = tmp_path / "state", tmp_path / "out"
    commits: list[int] = []
    import binlog_model.runs.incremental as incremental

    original = incremental._Commits.commit

    def record(self: Any, checkpoint: Any) -> None:
        original(self, checkpoint)
        if self.state.open_output is not None:
            commits.append(int(self.state.open_output["bytes"]))
    incremental._Commits.commit = record     # type: ignore[method-assign]
    try:
        _run([*args, "--state", str(state), "--out", str(out), "--compress", "zstd", "--commit-bytes", "512"],
             capsysbinary)
    finally:
        incremental._Commits.commit = original     # type: ignore[method-assign]
    doc = RunState.load(state)
    assert [o["file"] for o in doc.outputs] == ["part-000001.jsonl.zst"]
    data = (out / "part-000001.jsonl.zst").read_bytes()
    assert len(commits) >= 5, "small --commit-bytes: many commits"
    assert set(commits) <= set(_frames(data)), "every committed length is a frame end"
    assert unpacked(data) == want
    assert _run(["cat", str(out)], capsysbinary) == want
    assert doc.options["compress"] == "zstd"


def test_compression_is_part_of_what_a_state_continues(tmp_path: Path,
                                                       capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    args = _events_args(SPEC)
    state, out = tmp_path / "state", tmp_path / "out"
    _run([*args, "--state", str(state), "--out", str(out)], capsysbinary)
    assert main([*args, "--state", str(state), "--out", str(out), "--compress", "zstd"]) == 2
    assert "compress" in capsysbinary.readouterr().err.decode()


def test_compress_level_without_zstd_is_a_usage_error(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main([*_events_args(SPEC), "--compress-level", "5"]) == 2
    assert b"--compress-level needs --compress zstd" in capsysbinary.readouterr().err


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("point", ["output-synced", "state-saved"])
def test_killed_at_a_commit_step_then_rerun_equals_one_run(
        point: str, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """SIGKILL (BINLOG_MODEL_KILL_AT) at a step of the n-th commit: the part on disk holds a frame the
    state may not commit yet; the rerun cuts the part back to the committed frames and the output equals
    one run's."""
    args = _events_args(MULTI)
    want = _run([*args, "--format", "proto", "--out", str(tmp_path / "one.pb")], capsysbinary)
    want = (tmp_path / "one.pb").read_bytes()
    for nth in (1, 2, 4, 7):
        root = tmp_path / f"{point}-{nth}"
        argv = [*args, "--format", "proto", "--state", str(root / "state"), "--out", str(root / "out"),
                "--compress", "zstd", "--commit-bytes", "512"]
        pid = os.fork()
        if pid == 0:
            os.environ["BINLOG_MODEL_KILL_AT"] = f"{point}:{nth}"
            try:
                os._exit(main(argv))
            except BaseException:
                os._exit(3)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (point, nth, status)
        assert list((root / "out").glob("*.partial")), "the killed run left its open part"
        _run(argv, capsysbinary)
        parts = output_files([root / "out"])
        assert [p.name for p in parts] == [o["file"] for o in RunState.load(root / "state").outputs]
        assert unpacked(b"".join(p.read_bytes() for p in parts)) == want, (point, nth)


def test_recovery_cuts_a_torn_frame_back_to_the_committed_frames(tmp_path: Path) -> None:
    """A run killed in the middle of writing a frame: the state commits the frames before it; recovery
    truncates the part to them, as it does a plain part."""
    from binlog_model.io.state import recover_outputs

    raw = io.BytesIO()
    writer = ZstdFrameWriter(raw, owns_raw=False)
    writer.write(b"committed " * 100)
    writer.end_frame()
    committed = writer.stored_bytes
    writer.write(os.urandom(300_000))
    writer.end_frame()
    # what a kill while the next frame was being written leaves: part of that frame
    torn = raw.getvalue()[:committed + (writer.stored_bytes - committed) // 2]
    with pytest.raises(TruncatedEventError):
        ZstdFrameReader(io.BytesIO(torn)).read()
    out = tmp_path / "out"
    out.mkdir()
    (out / "part-000001.pb.zst.partial").write_bytes(torn)
    state = RunState(tmp_path / "state")
    state.directory.mkdir()
    state.open_output = {"file": "part-000001.pb.zst", "bytes": committed}
    recover_outputs(state, out)
    assert (out / "part-000001.pb.zst").read_bytes() == torn[:committed]
    assert unpacked(torn[:committed]) == b"committed " * 100
    assert state.outputs == [{"file": "part-000001.pb.zst", "bytes": committed}]


# -- cat -----------------------------------------------------------------------------------------------------

def test_cat_filters_by_table_glob_and_operation(tmp_path: Path,
                                                 capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    fixture = GOLDEN / "mariadb" / "multi_table"
    packed = tmp_path / "e.pb.zst"
    _run([*_events_args(fixture), "--format", "proto", "--compress", "zstd", "--out", str(packed)],
         capsysbinary)
    with open(packed, "rb") as stream:
        events = list(iter_output(stream))
    tables = {(e.db, e.table) for e in events if e.table}
    assert len(tables) >= 2
    db, table = sorted(tables)[0]
    pattern = f"{db.upper()}.{table[:2]}*"
    got = _run(["cat", str(packed), "--tables", pattern, "--op", "update", "--op", "insert"], capsysbinary)
    from binlog_model.messages import from_json
    kept = [from_json(line) for line in got.splitlines()]
    expected = [e for e in events if e.table.startswith(table[:2]) and e.db == db
                and e.operation in (e.INSERT, e.UPDATE)]
    assert kept == expected and kept
    assert _run(["cat", str(packed), "--tables", "nope.*"], capsysbinary) == b""


def test_cat_of_a_folder_reads_committed_parts_in_order_not_partial(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    args = _events_args(SPEC)
    want = _run([*args, "--format", "jsonl"], capsysbinary)
    out = tmp_path / "out"
    _run([*args, "--state", str(tmp_path / "state"), "--out", str(out), "--format", "proto", "--compress",
          "zstd"], capsysbinary)
    (out / "part-000002.pb.zst.partial").write_bytes(b"\x28\xb5\x2f\xfd torn")
    assert _run(["cat", str(out)], capsysbinary) == want
    assert main(["cat", str(tmp_path / "state")]) == 2
    assert b"no part-NNNNNN files" in capsysbinary.readouterr().err


def test_cat_names_the_file_and_offset_of_a_cut_zst(tmp_path: Path,
                                                     capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    packed = tmp_path / "e.jsonl.zst"
    _run([*_events_args(SPEC), "--compress", "zstd", "--out", str(packed)], capsysbinary)
    packed.write_bytes(packed.read_bytes()[:-5])
    assert main(["cat", str(packed)]) == 2
    err = capsysbinary.readouterr().err.decode()
    assert err.count("\n") == 1 and "TruncatedEventError" in err
    assert f"file {packed}, offset 0" in err


def test_cat_names_a_json_line_cut_short(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    plain = tmp_path / "e.jsonl"
    _run([*_events_args(SPEC), "--out", str(plain)], capsysbinary)
    plain.write_bytes(plain.read_bytes()[:-10])
    assert main(["cat", str(plain)]) == 2
    assert b"has no newline" in capsysbinary.readouterr().err
    plain.write_bytes(b'{"db": 5}\n')
    assert main(["cat", str(plain)]) == 2
    assert b"line 1 is not a BinlogEvent" in capsysbinary.readouterr().err


def test_cat_refuses_a_table_that_is_not_db_dot_table(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main(["cat", str(SPEC / "expected.jsonl"), "--tables", "orders"]) == 2
    assert b"takes DB.TABLE" in capsysbinary.readouterr().err


def test_events_to_stdout_compressed_is_one_frame(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    args = _events_args(SPEC)
    plain = _run(args, capsysbinary)
    packed = _run([*args, "--compress", "zstd"], capsysbinary)
    assert _frames(packed) == [len(packed)]
    assert unpacked(packed) == plain


def test_table_matcher_matches_without_case_and_database_events_by_database() -> None:
    from binlog_model.commands.cat import table_matcher
    from binlog_model.resolve.table_filter import TableFilter

    matches = table_matcher(TableFilter.from_patterns(["Shop.order_*", "ppc.campaigns"]))
    assert matches("shop", "ORDER_items") and matches("PPC", "campaigns")
    assert not matches("shop", "orders") and matches("shop", "") and not matches("other", "")
    assert table_matcher(TableFilter())("any", "")
