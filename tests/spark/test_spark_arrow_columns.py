"""The compiled batch builder (``_speedups.arrow_columns``) against the Python path, Arrow array for array.

The data source's batches are built twice from the same serialized events: with the C buffers, and with
``arrow_batch._ARROW_COLUMNS`` switched off (the Python path, itself tested against the per-value
reference in ``test_spark_bulk.py``). Inputs: every golden fixture in both modes and three image modes,
the shared corpus and the servers' test-suite binlogs (real bytes), hand-built edge values of every kind,
hypothesis-generated values, and every truncation and single-byte corruption of real events (hand-built
damage): the C code must then give the Python path's batch, leave the batch to it (None), or fail the
same way.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.compiled import speedups
from binlog_model.errors import (
    BinlogError,
    DecodeError,
    DecoderStateError,
    EncryptedBinlogError,
    IncompleteTransactionError,
    TruncatedEventError,
    UnknownTableError,
)
from binlog_model.runs.pipeline import iter_binlog_events, iter_serialized_events
from binlog_model.testing.sid import cache_root
from tests._paths import CORPUS, REPO, binlogs_under
from tests.spark._values import edge_values

# pyarrow and the compiled core only: nothing here needs Spark (arrow_batch does not import pyspark).
pytest.importorskip("pyarrow")

import pyarrow as pa

from binlog_model.spark import arrow_batch
from binlog_model.spark.arrow_batch import ArrowBatch
from binlog_model.spark.value_json import value_json

pytestmark = pytest.mark.skipif(speedups is None,
                                reason="the compiled core is not built (or is switched off)")

GOLDEN = REPO / "fixtures" / "golden" / "mariadb"
SCENARIOS = sorted(d.name for d in GOLDEN.iterdir() if (d / "binlogs").is_dir())
LENIENT = {"all_types"}
_COMPILED = arrow_batch._ARROW_COLUMNS


def _batch(payloads: list[bytes], events_mode: bool, compiled: bool,
           monkeypatch: pytest.MonkeyPatch) -> pa.RecordBatch:
    with monkeypatch.context() as patched:
        patched.setattr(arrow_batch, "_ARROW_COLUMNS", _COMPILED if compiled else None)
        batch = ArrowBatch(events_mode)
        for payload in payloads:
            batch.add(payload)
        return batch.build()


def _assert_same(payloads: list[bytes], events_mode: bool, monkeypatch: pytest.MonkeyPatch) -> pa.RecordBatch:
    # The C path must have taken the batch itself: a None (left to Python) would pass trivially.
    assert arrow_batch._compiled_batch(payloads, events_mode, _rows(payloads, events_mode)) is not None
    got = _batch(payloads, events_mode, True, monkeypatch)
    want = _batch(payloads, events_mode, False, monkeypatch)
    got.validate(full=True)
    assert got.schema == want.schema
    for name in got.schema.names:
        assert got.column(name).equals(want.column(name)), name
    return got


def _rows(payloads: list[bytes], events_mode: bool) -> int:
    events = [pb.BinlogEvent.FromString(p) for p in payloads]
    return sum(1 if events_mode or not e.rows else len(e.rows) for e in events)


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("image", ["changed", "changed_with_old", "full", "after"])
def test_golden_fixtures_give_the_python_batches(scenario: str, image: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    files = sorted((GOLDEN / scenario / "binlogs").iterdir())
    payloads = [e.SerializeToString()
                for e in iter_binlog_events(files, lenient_ddl=scenario in LENIENT, image=image)]
    for events_mode in (False, True):
        batch = _assert_same(payloads, events_mode, monkeypatch)
        assert batch.num_rows == _rows(payloads, events_mode)


MARIADB_TEST = Path("/usr/share/mysql/mysql-test")
MYSQL_TEST = cache_root() / "mysql-testsuite" / "root" / "usr" / "lib" / "mysql-test"
_ROOTS = ((CORPUS, "corpus"), (MARIADB_TEST, "mariadb-test"), (MYSQL_TEST, "mysql-test"))
_FILES = [pytest.param(f"{name}/{rel}", root / rel, id=f"{name}/{rel}")
          for root, name in _ROOTS for rel in binlogs_under(root)]

# Files whose events stop at a typed error (the events before it are still compared). A file outside this
# list that raises fails the test, and so does one in it that raises another error or no longer raises.
_NO_COLUMN_NAMES = UnknownTableError  # TABLE_MAPs without column names (no FULL metadata), no snapshot given
_WL2325 = ("binlog", "binlog_gtid", "binlog_nogtid")
EXPECTED_ERRORS: dict[str, type[BinlogError]] = {
    **{f"corpus/{rel}": _NO_COLUMN_NAMES for rel in (
        "MyFlash/testbinlog/haha.000008", "MyFlash/testbinlog/haha.000009", "MyFlash/testbinlog/haha.000041",
        "MySqlCdc/samples/MySqlCdc.Sample/mysql-bin.000001",
        "binlog-parser/data/fixtures/mysql-bin.01", "binlog-parser/data/fixtures/mysql-bin.03",
        "mysql-binlog-connector-java/src/test/resources/mysql-bin.checksum-crc32",
        "mysql-binlog-connector-java/src/test/resources/mysql-bin.checksum-none",
        "mysql-binlog-connector-java/src/test/resources/mysql-bin.compressed",
        "mysql-binlog-connector-rust/tests/parse_file_tests/mysql-bin.000057",
        "mysql-binlog-connector-rust/tests/parse_file_tests/mysql-bin.000080",
        "mysql-cdc-rs/tests/events/5.7/31_update_rows_v2/log.bin",
        "percona-binlog-server/mtr/binlog_streaming/std_data/data_80045_gtid/binlog.000002",
        "percona-binlog-server/mtr/binlog_streaming/std_data/data_80045_position/binlog.000002")},
    # ends inside a transaction (the Aurora padding event is the file's last)
    "corpus/mysql-binlog-connector-java/src/test/resources/mysql-bin.aurora-padding":
        IncompleteTransactionError,
    "mariadb-test/std_data/binlog_before_20574.bin": EncryptedBinlogError,
    "mariadb-test/std_data/bug11747416_32228_binlog.000001": TruncatedEventError,  # cut off mid-event
    "mariadb-test/std_data/corrupt-relay-bin.000624": TruncatedEventError,  # corrupt QUERY status length
    "mariadb-test/std_data/mdev-39404-binlog.000001": IncompleteTransactionError,  # crash test
    "mariadb-test/std_data/trunc_binlog.000001": IncompleteTransactionError,
    "mariadb-test/std_data/rpl/master-bin-seq_10.3.36.000001": _NO_COLUMN_NAMES,
    # MySQL 5.1.15-5.1.17 TABLE_MAPs without a metadata block (PENDING in tests/golden/test_corpus_decode.py)
    "mariadb-test/suite/binlog/std_data/bug32407.001": TruncatedEventError,
    "mariadb-test/suite/binlog/std_data/ver_5_1-telco.001": TruncatedEventError,
    "mariadb-test/suite/binlog/std_data/ver_5_1_17.001": TruncatedEventError,
    "mariadb-test/suite/binlog/std_data/invalid_row_v2_tag.001": DecoderStateError,  # corrupt table_id
    **{f"mariadb-test/suite/binlog/std_data/{image}-{kind}-row.binlog": _NO_COLUMN_NAMES
       for image in ("update", "write") for kind in ("full", "partial")},
    **{f"mysql-test/std_data/binlog_recovery/{name}.000001": _NO_COLUMN_NAMES for name in (
        "ddl_in_transaction", "duplicate_xid", "duplicate_xid_ddl", "duplicate_xid_xa_commit",
        "duplicate_xid_xa_prepare", "duplicate_xid_xa_rollback", "malformed_xid_xa_commit",
        "malformed_xid_xa_rollback", "orphan_begin_start", "orphan_xa_commit", "orphan_xa_rollback",
        "orphan_xid")},
    "mysql-test/std_data/binlog_recovery/orphan_xa_prepare.000001": IncompleteTransactionError,
    "mysql-test/std_data/binlog_truncated_event.000001": TruncatedEventError,
    "mysql-test/std_data/binlog_truncated_prev_gtid_event.000001": TruncatedEventError,
    "mysql-test/std_data/corrupt-relay-bin.000624": TruncatedEventError,
    **{f"mysql-test/std_data/{name}.000001": _NO_COLUMN_NAMES for name in (
        "replicated-bin", "rpl_gipk_equivalent_key", "rpl_no_gipk_high_column_number",
        "rpl_no_gipk_low_column_number", "rpl_no_gipk_minus_one_column_number",
        "rpl_no_gipk_schema_divergence")},
    "mysql-test/std_data/replicated-bin.000002": _NO_COLUMN_NAMES,
    **{f"mysql-test/suite/{suite}/std_data/{image}-{kind}-row.binlog": _NO_COLUMN_NAMES
       for suite in _WL2325 for image in ("update", "write") for kind in ("full", "partial")},
    # hand-edited 5.1 binlogs: an XID event of the wrong size, rows events without their TABLE_MAP
    **{f"mysql-test/suite/{suite}/std_data/ver_5_1-wl2325_r.001": DecodeError for suite in _WL2325},
    **{f"mysql-test/suite/{suite}/std_data/ver_5_1-wl2325_s.001": DecoderStateError for suite in _WL2325},
}
# Files that decode to the end without a single model event (no rows events and no DDL: only the
# FORMAT_DESCRIPTION, ROTATE, STOP, INCIDENT, or statement-based DML). Every other file must give events.
NO_EVENTS: frozenset[str] = frozenset({
    "corpus/binlog-parser/data/fixtures/mysql-bin.05", "corpus/binlog-parser/data/fixtures/mysql-bin.empty",
    "corpus/mysql-cdc-rs/tests/events/5.7/03_stop/log.bin",
    "corpus/mysql-cdc-rs/tests/events/5.7/04_rotate/log.bin",
    "corpus/mysql-cdc-rs/tests/events/5.7/15_format_desc/log.bin",
    "corpus/mysql-cdc-rs/tests/events/5.7/17_18_load/log.bin",
    "corpus/mysql-cdc-rs/tests/events/8.0/02_query/binlog.000001",
    "mariadb-test/std_data/binlog-header.binlog", "mariadb-test/std_data/binlog_savepoint.000001",
    "mariadb-test/std_data/bug40482-bin.000001", "mariadb-test/std_data/master-bin.000001",
    "mariadb-test/std_data/rpl/mysql-5.7.11-stm-temporal-round-binlog.000001",
    "mariadb-test/std_data/rpl/mysql-8.0.13-stm-temporal-round-binlog.000001",
    "mysql-test/std_data/binlog_no_fd_event.000001",
    "mysql-test/std_data/binlog_recovery/orphan_rollback.000001",
    "mysql-test/std_data/binlog_savepoint.000001", "mysql-test/std_data/bug40482-bin.000001",
    "mysql-test/std_data/master-bin.000001", "mysql-test/std_data/rpl_atomic_ddl_rollback_view.000001",
})


def _serialized(path: Path) -> tuple[list[bytes], BinlogError | None]:
    """The file's events as the data source gets them, up to its first error, and that error (if any)."""
    payloads: list[bytes] = []
    try:
        for payload in iter_serialized_events([path], lenient_ddl=True, verify_checksum=False):
            payloads.append(payload)
    except BinlogError as err:
        return payloads, err
    return payloads, None


@pytest.mark.parametrize(("key", "path"), _FILES)
def test_real_binlogs_give_the_python_batches(key: str, path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    payloads, error = _serialized(path)
    expected = EXPECTED_ERRORS.get(key)
    if expected is None:
        assert error is None, f"{key} raised {error!r}; list it in EXPECTED_ERRORS if it must"
    else:
        assert error is not None, f"{key} now decodes to its end: remove it from EXPECTED_ERRORS"
        assert type(error) is expected, f"{key} raised {error!r}, not the expected {expected.__name__}"
    if key in NO_EVENTS:
        assert not payloads, f"{key} now gives {len(payloads)} events: remove it from NO_EVENTS"
    elif expected is None:
        assert payloads, f"{key} decoded to its end without an event; list it in NO_EVENTS if it must"
    compared = 0
    for chunk in range(0, len(payloads), 500):
        compared += _assert_same(payloads[chunk:chunk + 500], False, monkeypatch).num_rows
    assert compared >= len(payloads)


def test_the_expected_outcomes_name_files_that_exist() -> None:
    """A stale entry (a file renamed or gone) would silently stop being checked: every listed file of an
    installed root is collected."""
    present = {name for root, name in _ROOTS if root.is_dir()}
    if not present:
        pytest.skip("no binlog root is installed (corpus, mariadb-test-data, MySQL test suite)")
    collected = {p.values[0] for p in _FILES}
    listed = {key for key in [*EXPECTED_ERRORS, *NO_EVENTS] if key.split("/", 1)[0] in present}
    assert listed - collected == set()
    assert not set(EXPECTED_ERRORS) & NO_EVENTS
    # Most real binlogs give events to compare: the lists are the exception, not the rule.
    assert len(collected - set(EXPECTED_ERRORS) - NO_EVENTS) >= len(collected) // 3


def _event_of(values: list[pb.Value], operation: int = pb.BinlogEvent.UPDATE) -> bytes:
    event = pb.BinlogEvent(db="d", table="t", operation=operation,
                           position=pb.BinlogPosition(file="b.000001"))
    for start in range(0, len(values), 7):
        row = event.rows.add(row_index=start)
        for i, value in enumerate(values[start:start + 7]):
            row.primary_key.add(name=f"k{i}", value=value)
            row.before.add(name=f"c{i}", value=value, invisible=i % 2 == 0)
            row.after.add(name=f"é\"{i}", value=value)
    return event.SerializeToString()


_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)
_VALUES = st.one_of(
    st.integers(-2**31, 2**31 - 1).map(lambda v: pb.Value(int_value=v)),
    st.integers(-2**63, 2**63 - 1).map(lambda v: pb.Value(long_value=v)),
    st.integers(0, 2**64 - 1).map(lambda v: pb.Value(uint64_value=v)),
    st.integers(0, 2**64 - 1).map(lambda v: pb.Value(bit_value=v)),
    st.integers(-2**63, 2**63 - 1).map(lambda v: pb.Value(time_micros=v)),
    st.integers(-2**63, 2**63 - 1).map(lambda v: pb.Value(timestamp_micros=v)),
    _TEXT.map(lambda v: pb.Value(string_value=v)), _TEXT.map(lambda v: pb.Value(json_value=v)),
    _TEXT.map(lambda v: pb.Value(decimal_value=v)),
    st.binary(max_size=20).map(lambda v: pb.Value(bytes_value=v)),
    st.floats(allow_nan=True, allow_infinity=True).map(lambda v: pb.Value(double_value=v)),
    st.floats(width=32).map(lambda v: pb.Value(float_value=v)),
    st.lists(_TEXT, max_size=4).map(lambda v: pb.Value(set_value=pb.SetValue(labels=v))),
    st.lists(st.integers(0, 2**32 - 1), min_size=7, max_size=7).map(
        lambda v: pb.Value(datetime_value=pb.DateTime(year=v[0], month=v[1], day=v[2], hour=v[3], minute=v[4],
                                                      second=v[5], micros=v[6]))),
    st.lists(st.integers(0, 2**32 - 1), min_size=3, max_size=3).map(
        lambda v: pb.Value(date_value=pb.Date(year=v[0], month=v[1], day=v[2]))),
    st.just(pb.Value(null_value=0)), st.just(pb.Value()),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_VALUES, min_size=1, max_size=30), st.sampled_from([1, 2, 3]))
def test_generated_values(values: list[pb.Value], operation: int) -> None:
    payload = _event_of(values, operation)
    with pytest.MonkeyPatch.context() as monkeypatch:
        batch = _assert_same([payload], False, monkeypatch)
    texts = [text for row in batch.column("primaryKey").to_pylist() for _, text in row]
    assert texts == [value_json(v) for v in values]


@pytest.mark.parametrize("row_index", [2**63 - 1, 2**63, 2**64 - 1])
def test_a_row_index_past_int64_fails_as_in_python(row_index: int) -> None:
    """Hand-built: a row index the int64 column cannot hold is the Python path's error, not a wrapped
    negative number."""
    event = pb.BinlogEvent.FromString(_event_of([pb.Value(int_value=1)]))
    event.rows[0].row_index = row_index
    payload = event.SerializeToString()
    got, want = _outcome(payload, True), _outcome(payload, False)
    if isinstance(want, pa.RecordBatch):
        assert isinstance(got, pa.RecordBatch) and got.equals(want)
        assert got.column("rowIndex").to_pylist() == [row_index]
    else:
        assert got == want


def _edge_events() -> list[pb.BinlogEvent]:
    """Hand-built: the event-level fields at their edges (optional fields set or not, file names the
    sequence regex reads in odd ways, integers past the columns' types, timestamps before 1970)."""
    base = pb.BinlogEvent.FromString(_event_of([pb.Value(int_value=1), pb.Value(string_value="x")]))
    events = []
    edits: list[dict[str, object]] = [
        {}, {"rows": None}, {"trace_info": "/* trace */"}, {"statement": ""}, {"statement": "INSERT é"},
        {"inner_index": 0}, {"inner_index": 7}, {"inner_index": 2**31}, {"inner_index": 2**32 - 1},
        {"file": "noseq"}, {"file": "a/b.7/mysql-bin"}, {"file": "dir/mysql-bin.000042"}, {"file": "x."},
        {"file": "x.\u0967\u0968"}, {"file": "x.12\n"}, {"file": "x.1.2"}, {"file": "x.99999999999999999999"},
        {"file": "x.999999999999999999"}, {"file": "é.5"}, {"seconds": -1, "nanos": -1},
        {"seconds": -1, "nanos": 999_999_999}, {"seconds": 2**62}, {"seconds": 9_223_372_036_853},
        {"transaction_id": 2**63 - 1}, {"transaction_id": 2**63}, {"query_index": 2**31 - 1},
        {"query_index": 2**31}, {"event_index": 2**32 - 1}, {"gtid_domain_id": 2**31},
        {"server_id": 2**32 - 1}, {"last_in_statement": True}, {"operation": 4}, {"operation": 0},
        {"operation": 9}, {"offset": 2**63}, {"next_offset": 2**63 - 1}, {"row_index": 2**63},
        {"source": "s\x00ource", "server_uuid": "u", "gtid": "0-1-2", "db": "é", "table": "t\"t"},
    ]
    for edit in edits:
        event = pb.BinlogEvent()
        event.CopyFrom(base)
        for key, value in edit.items():
            if key == "rows":
                del event.rows[:]
            elif key in ("file", "inner_index", "offset", "next_offset"):
                setattr(event.position, key, value)
            elif key in ("seconds", "nanos"):
                setattr(event.utc_timestamp, key, value)
            else:
                setattr(event, key, value)
        events.append(event)
    return events


@pytest.mark.parametrize("events_mode", [False, True])
def test_event_level_edges_give_the_python_outcome(events_mode: bool) -> None:
    checked = 0
    for event in _edge_events():
        payload = event.SerializeToString()
        got, want = _outcome(payload, True, events_mode), _outcome(payload, False, events_mode)
        if isinstance(want, pa.RecordBatch):
            assert isinstance(got, pa.RecordBatch) and got.equals(want), event
            checked += 1
        else:
            assert got == want, event
    assert checked >= 25


def _outcome(payload: bytes, compiled: bool, events_mode: bool = False) -> object:
    with pytest.MonkeyPatch.context() as monkeypatch:
        try:
            batch = _batch([payload], events_mode, compiled, monkeypatch)
        except Exception as err:
            return type(err)
    return batch


def _damaged(payload: bytes, rnd: random.Random) -> Iterator[bytes]:
    for end in range(len(payload)):
        yield payload[:end]
    for _ in range(400):
        at = rnd.randrange(len(payload))
        yield payload[:at] + bytes([rnd.randrange(256)]) + payload[at + 1:]


def test_damaged_events_give_the_python_outcome() -> None:
    """Hand-built damage (every truncation, random single bytes) of real events: the C code gives the
    Python path's batch, or leaves the batch to it, or both fail with the same error type."""
    files = sorted((GOLDEN / "all_types" / "binlogs").iterdir())
    events = [e for e in iter_binlog_events(files, lenient_ddl=True) if e.rows][:6]
    samples = [e.SerializeToString() for e in events] + [_event_of(edge_values()[:40])]
    rnd = random.Random(20261123)
    checked = 0
    for payload in samples:
        for damaged in _damaged(payload, rnd):
            got, want = _outcome(damaged, True), _outcome(damaged, False)
            if isinstance(want, pa.RecordBatch):
                assert isinstance(got, pa.RecordBatch) and got.equals(want)
            else:
                assert got == want
            checked += 1
    assert checked > 1000
