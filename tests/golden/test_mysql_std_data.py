"""Every binlog in MySQL's own test suite (Debian sid's ``mysql-testsuite``, ``mysql-test/**/std_data``)
decodes to its end, or fails with the typed error its content calls for, at the event that calls for it.

The suite is read from the user cache where ``binlog_model.testing.sid.fetch_sid_packages('mysql-testsuite')``
unpacks its pinned build; the tests skip when it is absent. Each file that does not
decode is listed below with its error, the offset of the event it stops at, and why. ``dump`` (a diagnostic
tool) goes past the undecodable events of the pre-GA logs, showing them raw with a note.

The corruption cases at the end use HAND-BUILT bytes (a JSON opaque value cut short, a post-header shorter
than its fields): no server writes them.
"""

from __future__ import annotations

import json
import re
import struct
from typing import Any

import pytest

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.cli import main as cli_main
from binlog_model.errors import (
    BinlogError,
    ChecksumMismatchError,
    DecodeError,
    DecoderStateError,
    TruncatedEventError,
)
from binlog_model.io import iter_events
from binlog_model.messages import python_value
from binlog_model.resolve.assembler import StatementAssembler
from binlog_model.resolve.options import AssemblerOptions
from binlog_model.testing.sid import pinned_root
from binlog_model.wire import BinlogDecoder, EventType, UnknownEvent
from binlog_model.wire.cursor import Cursor
from binlog_model.wire.json_binary import parse_json_binary
from schema_tracker.history import SchemaHistory
from tests._paths import binlogs_under

MYSQL_TEST = pinned_root("mysql-testsuite") / "usr" / "lib" / "mysql-test"

_WL2325_R = "5.2.2 pre-GA log (wl2325): its events are numbered differently; the first that does not fit " \
            "is a 38-byte 'XID' (8-byte body expected)"
_WL2325_S = "5.2.2 pre-GA log (wl2325): a rows event type with no TABLE_MAP before it (pre-GA numbering)"
_EDITED = "edited by hand for the binlog recovery tests (duplicated/malformed XID) without recomputing the " \
          "CRC32; decodes to its end with verify_checksum=False"

# The FORMAT_DESCRIPTION's type byte was overwritten (a "no FD event" test): that event is an UnknownEvent
# (raw bytes kept) and the file decodes with the default v4 layout.
NO_FORMAT_DESCRIPTION = {"std_data/binlog_no_fd_event.000001"}

# relative path -> (error class, offset of the event it stops at, why)
EXPECTED_FAILURES: dict[str, tuple[type[BinlogError], int, str]] = {
    "std_data/binlog_recovery/duplicate_xid.000001": (ChecksumMismatchError, 672, _EDITED),
    "std_data/binlog_recovery/duplicate_xid_ddl.000001": (ChecksumMismatchError, 507, _EDITED),
    "std_data/binlog_recovery/duplicate_xid_xa_prepare.000001": (ChecksumMismatchError, 884, _EDITED),
    "std_data/binlog_recovery/malformed_xid_xa_commit.000001": (ChecksumMismatchError, 889, _EDITED),
    "std_data/binlog_recovery/malformed_xid_xa_rollback.000001": (ChecksumMismatchError, 889, _EDITED),
    "std_data/binlog_truncated_event.000001": (TruncatedEventError, 4,
                                               "cut 10 bytes into its first event header (truncation test)"),
    "std_data/binlog_truncated_prev_gtid_event.000001": (
        TruncatedEventError, 120, "cut 9 bytes into the PREVIOUS_GTIDS event header (truncation test)"),
    "std_data/corrupt-relay-bin.000624": (TruncatedEventError, 91204,
                                          "deliberately corrupt relay log: a QUERY event whose "
                                          "status-variables length points past its body"),
    "suite/binlog/std_data/ver_5_1-wl2325_r.001": (DecodeError, 428, _WL2325_R),
    "suite/binlog_gtid/std_data/ver_5_1-wl2325_r.001": (DecodeError, 428, _WL2325_R),
    "suite/binlog_nogtid/std_data/ver_5_1-wl2325_r.001": (DecodeError, 428, _WL2325_R),
    "suite/binlog/std_data/ver_5_1-wl2325_s.001": (DecoderStateError, 411, _WL2325_S),
    "suite/binlog_gtid/std_data/ver_5_1-wl2325_s.001": (DecoderStateError, 411, _WL2325_S),
    "suite/binlog_nogtid/std_data/ver_5_1-wl2325_s.001": (DecoderStateError, 411, _WL2325_S),
}


def _binlogs() -> list[str]:
    return binlogs_under(MYSQL_TEST)


def _require_suite() -> None:
    if not MYSQL_TEST.is_dir():
        pytest.skip(f"MySQL's test suite is not in the cache ({MYSQL_TEST}); fetch it with "
                    "python -m binlog_model.testing.mysql --with-testsuite")


def _offset_of(err: BaseException) -> int | None:
    offset = getattr(err, "offset", None)
    if offset is None:   # DecoderStateError names the offset in its message only
        m = re.search(r"offset (\d+)\]", str(err))
        offset = int(m.group(1)) if m else None
    return offset


@pytest.mark.parametrize("relpath", _binlogs())
def test_mysql_test_suite_binlog(relpath: str) -> None:
    path = MYSQL_TEST / relpath
    expected = EXPECTED_FAILURES.get(relpath)
    if expected is None:
        events = list(iter_events(path))
        first = int(events[0].header.event_type)
        if relpath in NO_FORMAT_DESCRIPTION:
            assert isinstance(events[0], UnknownEvent) and first == 48
        else:
            assert first in (EventType.FORMAT_DESCRIPTION_EVENT, EventType.START_EVENT_V3)
        tops = [e for e in events if e.header.inner_index is None]
        last = tops[-1].header
        assert last.offset + last.event_size == path.stat().st_size   # decoded to the very end
        return
    error, offset, _why = expected
    with pytest.raises(error) as info:
        list(iter_events(path))
    assert type(info.value) is error
    assert _offset_of(info.value) == offset
    message = str(info.value).split(" [")[0]   # the reason, without the file path
    assert not re.search(r"(?<![\w.])-\d", message), f"a message never reports a negative count: {message}"


def test_the_suite_has_the_binlogs_listed() -> None:
    _require_suite()
    found = set(_binlogs())
    assert len(found) >= 60
    assert set(EXPECTED_FAILURES) <= found


@pytest.mark.parametrize("relpath", [p for p, (e, _o, _w) in EXPECTED_FAILURES.items()
                                     if e is ChecksumMismatchError])
def test_hand_edited_recovery_logs_decode_without_checksums(relpath: str) -> None:
    _require_suite()
    events = list(iter_events(MYSQL_TEST / relpath, verify_checksum=False))
    last = events[-1].header
    assert last.offset + last.event_size == (MYSQL_TEST / relpath).stat().st_size


def test_corrupt_relay_log_fails_exactly_at_its_corrupt_query_event() -> None:
    _require_suite()
    path = MYSQL_TEST / "std_data/corrupt-relay-bin.000624"
    events = []
    with pytest.raises(TruncatedEventError) as info:
        for event in iter_events(path):
            events.append(event)
    assert info.value.offset == 91204 and info.value.event_type == "QUERY_EVENT"
    assert "status variables" in str(info.value)
    assert events[-1].header.offset + events[-1].header.event_size == 91204   # everything before it decoded


def test_xid_of_the_wrong_size_stops_at_the_first_one() -> None:
    _require_suite()
    with pytest.raises(DecodeError) as info:
        list(iter_events(MYSQL_TEST / "suite/binlog/std_data/ver_5_1-wl2325_r.001"))
    assert info.value.offset == 428 and info.value.event_type == "XID_EVENT"
    assert "body is 19 bytes (event of 38)" in str(info.value)


@pytest.mark.parametrize(("relpath", "notes"), [
    ("suite/binlog/std_data/ver_5_1-wl2325_s.001", 3),
    ("suite/binlog/std_data/ver_5_1-wl2325_r.001", 5),
    ("std_data/corrupt-relay-bin.000624", 1),
])
def test_dump_shows_undecodable_events_raw_and_goes_on(relpath: str, notes: int,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    _require_suite()
    path = MYSQL_TEST / relpath
    # Exit status 1 after the whole dump, as mysqlbinlog's when it could not decode everything.
    warning = (f"warning: {notes} event{'s' if notes > 1 else ''} could not be decoded and "
               f"{'were' if notes > 1 else 'was'} shown raw")
    assert cli_main(["dump", str(path)]) == 1
    captured = capsys.readouterr()
    text = captured.out
    assert captured.err.splitlines()[-1] == warning
    assert text.count("# NOTE: this event cannot be decoded") == notes
    offsets = [int(m) for m in re.findall(r"^# at (\d+)$", text, re.M)]
    # Every event to the end of the file is listed: the framing holds, so the dump walks all of it.
    last_end = int(re.findall(r"end_log_pos (\d+)", text)[-1])
    assert offsets == sorted(offsets) and last_end == path.stat().st_size
    assert cli_main(["dump", "--json", str(path)]) == 1
    objects = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    raw = [o for o in objects if o["event"] == "UndecodableEvent"]
    assert len(raw) == notes and all(o["raw"]["hex"] and o["error"] for o in raw)
    # Typed errors stay for the paths that need values.
    with pytest.raises(BinlogError):
        list(iter_events(path))


# --- HAND-BUILT corruption ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("payload", "message"), [
    (bytes([0x0F, 10, 4]) + b"\x00" * 4, "opaque DATE of 4 bytes"),            # DATE needs 8
    (bytes([0x0F, 12, 3]) + b"\x00" * 3, "opaque DATETIME of 3 bytes"),
    (bytes([0x0F, 11, 0]), "opaque TIME of 0 bytes"),
    (bytes([0x0F, 246, 1, 5]), "DECIMAL of 1 bytes lacks its precision and scale"),
    (bytes([0x0F, 246, 3, 10, 2, 0x80]), r"DECIMAL\(10,2\) has 1 bytes of digits"),
])
def test_json_opaque_shorter_than_its_type_is_a_typed_error(payload: bytes, message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        parse_json_binary(payload)


def test_a_read_placed_past_its_region_never_reports_a_negative_count() -> None:
    # A post-header length shorter than the fields read at a fixed position inside it.
    with pytest.raises(TruncatedEventError) as info:
        Cursor(b"\x00" * 40, 13, 5).u32("file_id")
    assert "file_id would start 8 bytes past the end of its region" in str(info.value)
    assert "-" not in str(info.value)


# --- MySQL 8/9 rows of the suite's binlogs, through the assembler -----------------------------------------

def _events(relpath: str) -> list[pb.BinlogEvent]:
    """The BinlogEvents of one suite binlog, replaying the schema from its own DDL (no snapshot)."""
    history = SchemaHistory()
    assembler = StatementAssembler(history, AssemblerOptions(image="full"))
    out: list[pb.BinlogEvent] = []
    for event in iter_events(MYSQL_TEST / relpath):
        out.extend(assembler.feed(event))
    out.extend(assembler.close())
    return [e for e in out if e.operation != pb.BinlogEvent.SCHEMA]


def _after(event: pb.BinlogEvent) -> list[list[tuple[str, Any, bool]]]:
    return [[(c.name, python_value(c.value), c.invisible) for c in row.after] for row in event.rows]


def test_vector_rows_of_a_9_0_binlog() -> None:
    _require_suite()
    rows = [r for e in _events("std_data/rpl_vector_binlog.000001") for r in _after(e)]
    f32 = [struct.unpack("<f", struct.pack("<f", v))[0] for v in (1.1, 2.1, 3.1, 4.1)]
    assert rows[0] == [("c1", 1, False), ("v1", (1.0, 2.0, 3.0, 4.0), False)]
    assert rows[1] == [("c1", 2, False), ("v1", tuple(f32), False)]
    assert len(rows) == 3


@pytest.mark.parametrize("relpath", ["std_data/rpl_binlog_with_gipk_info_full_metadata.000001",
                                     "std_data/rpl_binlog_with_gipk_info_with_gipk.000001"])
def test_generated_invisible_primary_key_is_the_key_and_marked(relpath: str) -> None:
    _require_suite()
    gipk = [e for e in _events(relpath) if e.table == "t2"]
    assert gipk
    for event in gipk:
        for row in event.rows:
            assert [(c.name, c.invisible) for c in row.primary_key] == [("my_row_id", True)]
            assert (row.after[0].name, row.after[0].invisible) == ("my_row_id", True)
            assert not any(c.invisible for c in row.after[1:])


def _tracker_keeps_hidden_columns() -> bool:
    from schema_tracker.model import Catalog
    from schema_tracker.snapshot import catalog_from_dump

    catalog = catalog_from_dump("CREATE DATABASE d; USE d; CREATE TABLE t (a INT, INDEX i ((a + 1)));",
                                Catalog(server_charset="utf8mb4"))
    table = catalog.table("d", "t")
    return table is not None and any(getattr(c, "hidden", False) for c in table.columns)


def test_hidden_functional_index_column_of_an_8_0_17_binlog_is_resolved_and_left_out() -> None:
    """MySQL 8.0.17 logged the hidden generated column of ``INDEX i((a+1))`` (column 2 of 3, not in the row
    image); the tracker keeps it at that position, the assembler leaves it out of the rows."""
    _require_suite()
    if not _tracker_keeps_hidden_columns():
        pytest.xfail("the tracker does not keep functional-index hidden columns yet (issue 11's branch does)")
    (event,) = _events("std_data/rpl_unfiltered_hidden_gcol.000001")
    assert _after(event) == [[("a", 1, False), ("b", "1", False)]]


@pytest.mark.parametrize(("event_type", "body", "error", "message"), [
    (16, b"\x01" * 9, DecodeError, r"XID_EVENT body is 9 bytes \(event of 28\); it holds exactly 8"),
    (16, b"\x01" * 7, TruncatedEventError, "XID_EVENT body is 7 bytes"),
    (5, b"\x01" * 10, DecodeError, "INTVAR_EVENT body is 10 bytes"),
    (13, b"\x01" * 15, TruncatedEventError, "RAND_EVENT body is 15 bytes"),
    (3, b"\x00", DecodeError, "STOP_EVENT body is 1 bytes"),
])
def test_fixed_size_bodies_of_another_size_stop_at_that_event(event_type: int, body: bytes,
                                                              error: type[DecodeError], message: str) -> None:
    # HAND-BUILT: one bare v4 event at offset 4 (for_events: the default layout, no checksum footer).
    header = (0).to_bytes(4, "little") + bytes([event_type]) + (1).to_bytes(4, "little") \
        + (19 + len(body)).to_bytes(4, "little") + (4 + 19 + len(body)).to_bytes(4, "little") + b"\x00\x00"
    decoder = BinlogDecoder.for_events(checksum=False, start_offset=4, file="hand-built")
    decoder.receive_data(header + body)
    decoder.receive_data(b"")
    with pytest.raises(error, match=message) as info:
        decoder.next_event()
    assert type(info.value) is error and info.value.offset == 4
