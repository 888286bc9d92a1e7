"""The parts of ``binlog-model tail`` that need no server: the GTID set as ``COM_BINLOG_DUMP_GTID`` carries
it, ``--from`` parsing, the command line's refusals, and the spool's file handling.

The expected dump bytes are hand-built from MySQL's ``Gtid_set::encode`` layout (an edge-case fixture,
named as such); the replication tests (tests/differential/test_tail.py) show real servers accept them.
Also the committer thread's ordering and errors (the kill tests show the crash-safety of its commits).
"""

from __future__ import annotations

import os
import struct
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from binlog_model.cli import main
from binlog_model.errors import ConfigError, ReplicationError
from binlog_model.gtid import GtidSet
from binlog_model.io.replication_source import parse_start
from binlog_model.io.spool import MAGIC, Spool

U1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
U2 = "0bc1d1b2-0000-4000-8000-000000000001"


def test_encode_untagged_gtid_set() -> None:
    gtids = GtidSet.parse(f"{U1}:1-5:7,{U2}:3")
    hand_built = (struct.pack("<Q", 2)
                  + uuid.UUID(U2).bytes + struct.pack("<Q", 1) + struct.pack("<QQ", 3, 4)
                  + uuid.UUID(U1).bytes + struct.pack("<Q", 2) + struct.pack("<QQQQ", 1, 6, 7, 8))
    assert gtids.encode_mysql() == hand_built


def test_encode_tagged_gtid_set_uses_the_tagged_format_throughout() -> None:
    gtids = GtidSet.parse(f"{U1}:1-2:batch:4")
    count = (1 << 56) | (2 << 8) | 1          # format byte 1 at both ends, the count in between
    hand_built = (struct.pack("<Q", count)
                  + uuid.UUID(U1).bytes + b"\x00" + struct.pack("<Q", 1) + struct.pack("<QQ", 1, 3)
                  + uuid.UUID(U1).bytes + bytes([5 << 1]) + b"batch" + struct.pack("<Q", 1)
                  + struct.pack("<QQ", 4, 5))
    assert gtids.encode_mysql() == hand_built


def test_empty_gtid_set_encodes_as_a_zero_count() -> None:
    assert GtidSet().encode_mysql() == b"\0" * 8


@pytest.mark.parametrize(("text", "kind"), [
    ("earliest", "earliest"), ("now", "now"), ("binlog.000123:4", "position"),
    ("mysql-bin.000002:1234", "position"), (f"{U1}:1-5", "gtid"), (f"{U1}:batch:1", "gtid"),
    ("0-1-5", "gtid"), ("0-1-5,1-2-7", "gtid"),
])
def test_parse_start(text: str, kind: str) -> None:
    assert parse_start(text)[0] == kind


@pytest.mark.parametrize("text", ["latest", "binlog.000001:2", "nonsense:x"])
def test_parse_start_refuses(text: str) -> None:
    with pytest.raises(ConfigError, match="--from"):
        parse_start(text)


def test_password_in_the_url_is_taken_and_never_echoed(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from binlog_model.io.live import parse_server_url, redacted_url, server_password
    from binlog_model.runs.continuity import snapshot_digest

    server = parse_server_url("mysql://u:p%40ss%3Aw@db-host:3307/ppc?ssl-mode=required")
    assert (server.user, server.host, server.port, server.password) == ("u", "db-host", 3307, "p@ss:w")
    assert server_password(server) == "p@ss:w"            # the URL's wins over $BINLOG_MODEL_PASSWORD
    assert "p@ss" not in repr(server)
    assert redacted_url("mysql://u:p%40ss%3Aw@db-host:3307/ppc") == "mysql://u@db-host:3307/ppc"
    assert snapshot_digest("mysql://u:p%40ss%3Aw@db-host:3307/ppc?ssl-mode=required") \
        == "mysql://u@db-host:3307/ppc"
    # nothing listens on port 1: the one-line failure names user@host:port, not the password
    code = main(["tail", "mysql://u:secret@127.0.0.1:1", "--connect-timeout", "0.2", "--state",
                 str(tmp_path / "s"), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code != 0 and err.strip() and "secret" not in err
    assert "secret" not in "".join(p.read_text() for p in (tmp_path / "s").rglob("*") if p.is_file())


def test_bad_from_fails_before_connecting(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["tail", "mysql://u@127.0.0.1:1", "--from", "latest", "--state", str(tmp_path / "s"),
                 "--out", str(tmp_path / "o")])
    assert code == 2
    assert "--from 'latest' is neither" in capsys.readouterr().err


@dataclass
class _Packet:        # what Spool.write reads of an io.replication.ReplicationPacket
    file: str
    offset: int
    raw: bytes


def test_spool_truncates_a_resent_tail_and_journals_whole_files(tmp_path: Path) -> None:
    """Hand-built packet bytes (the spool copies bytes; it does not decode them)."""
    spool = Spool(tmp_path)
    spool.write(_Packet("b.000001", 4, b"A" * 10))
    spool.write(_Packet("b.000001", 14, b"B" * 5))
    spool.write(_Packet("b.000001", 14, b"C" * 6))       # re-sent after a reconnect: replaces from 14
    spool.write(_Packet("b.000002", 4, b"D" * 3))        # the server moved on: b.000001 is whole
    spool.sync()
    assert (tmp_path / "b.000001").read_bytes() == MAGIC + b"A" * 10 + b"C" * 6
    assert Spool(tmp_path).whole == {"b.000001"}
    spool.close()
    again = Spool(tmp_path)
    again.recover("b.000001", 14)        # committed inside b.000001: later files go, the file is cut
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["b.000001"]
    assert (tmp_path / "b.000001").read_bytes() == MAGIC + b"A" * 10


def test_spool_leaves_out_a_file_it_lacks_the_head_of(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    spool.write(_Packet("b.000007", 900, b"x" * 4))
    spool.close()
    assert spool.skipped == ["b.000007"] and not (tmp_path / "b.000007").exists()
    with pytest.raises(ReplicationError, match="no plain file name"):
        Spool(tmp_path).write(_Packet("../evil", 4, b"x"))


def test_spool_leaves_out_a_file_with_a_gap_and_mirrors_one_server(tmp_path: Path) -> None:
    """Hand-built packet bytes. A dump that jumps inside a file (a GTID dump on a server the state was not
    built on skips the transactions of its set) leaves the file out instead of failing; a file committed
    at its end is whole without the next file's first packet; the spool refuses a second server."""
    spool = Spool(tmp_path)
    spool.follow("server-a")
    spool.write(_Packet("b.000001", 4, b"A" * 10))
    spool.write(_Packet("b.000001", 40, b"B" * 5))       # a gap: b.000001 cannot be a copy
    assert spool.skipped == ["b.000001"] and not (tmp_path / "b.000001").exists()
    spool.write(_Packet("b.000001", 45, b"C" * 5))       # the rest of it is ignored
    spool.write(_Packet("b.000002", 4, b"D" * 3))
    spool.sync()
    spool.ended("b.000002", 7)                           # a commit past its ROTATE: whole
    spool.close()
    assert not (tmp_path / "b.000001").exists()
    again = Spool(tmp_path)
    assert again.whole == {"b.000002"} and again.server == "server-a"
    again.follow("server-a")
    with pytest.raises(ConfigError, match="give it a new --spool directory"):
        again.follow("server-b")


def test_committer_runs_one_commit_at_a_time_in_order() -> None:
    from binlog_model.runs.committer import Committer
    done: list[int] = []
    started = threading.Event()

    def slow() -> None:
        started.set()
        time.sleep(0.2)
        done.append(1)
    committer = Committer()
    assert not committer.busy()
    committer.submit(slow)
    assert started.wait(5) and done == []         # on its own thread: submit returned before it ended
    assert committer.busy()
    committer.submit(lambda: done.append(2))       # waits for the first: a state never overtakes another
    assert done[0] == 1
    committer.wait()
    assert done == [1, 2] and not committer.busy()


def test_committer_raises_a_failed_commit_on_the_main_thread() -> None:
    from binlog_model.runs.committer import Committer

    def failing() -> None:
        raise OSError(5, "Input/output error")    # an fsync that failed
    committer = Committer()
    committer.submit(failing)
    with pytest.raises(OSError, match="Input/output error"):
        committer.submit(lambda: None)             # the next commit does not start after a failed one
    committer.wait()                               # said once


def test_sink_flushed_fd_syncs_what_was_written(tmp_path: Path) -> None:
    from binlog_model.sinks.delimited import DelimitedSink
    path = tmp_path / "out.pb"
    with DelimitedSink.open(path) as sink:
        sink.write_serialized(b"\x08\x01")
        fd = sink.flushed_fd()
        assert fd is not None
        try:
            os.fsync(fd)
            assert os.fstat(fd).st_size == path.stat().st_size == sink.bytes_written > 0
        finally:
            os.close(fd)
