"""The Spark layer's pure parts (no SparkSession): slicing, lineages, type mapping, options, Java check,
and the ``resolve`` command's one-line errors."""

from __future__ import annotations

import datetime
import itertools
import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from binlog_model.errors import BinlogError, ConfigError
from binlog_model.position import EventPosition, position_key
from binlog_model.runs.pipeline import iter_binlog_events
from schema_tracker.history import SchemaHistory
from schema_tracker.model import ColumnSchema
from tests._paths import REPO

pytest.importorskip("pyspark")

from binlog_model.spark.datasource import plan
from binlog_model.spark.partitions import expand_paths, scan_file
from binlog_model.spark.reading import ReadOptions, read_slice
from binlog_model.spark.session import SparkSetupError, check_java
from binlog_model.spark.typed import _Invalid, convert_value, spark_type, table_lineages

GOLDEN = REPO / "fixtures" / "golden" / "mariadb"
LARGE = GOLDEN / "large_statement" / "binlogs" / "mysql-bin.000001"


def test_slices_start_at_transaction_starts_and_decode_to_the_same_events() -> None:
    history, slices = plan([LARGE], sliceBytes="4096")
    assert len(slices) >= 3
    scan = scan_file(LARGE)
    assert all(s.start in scan.tx_starts or s.start == 0 for s in slices)
    assert [s.end for s in slices[:-1]] == [s.start for s in slices[1:]] and slices[-1].end is None
    options = ReadOptions.parse({"path": str(LARGE)})
    rows = [r for s in slices for b in read_slice(s, history.to_json(), options) for r in b.to_pylist()]
    expected = sum(max(len(e.rows), 1) for e in iter_binlog_events(LARGE))
    assert len(rows) == expected


def test_statement_text_option_shapes_the_events_as_the_library_does() -> None:
    history, slices = plan([LARGE])

    def spark_statements(mode: str | None) -> list[str | None]:
        given = {"path": str(LARGE), "mode": "events", "maxRows": "50"}
        if mode is not None:
            given["statementText"] = mode
        options = ReadOptions.parse(given)
        return [r["statement"] for s in slices for b in read_slice(s, history.to_json(), options)
                for r in b.to_pylist()]

    def library_statements(mode: str) -> list[str | None]:
        return [e.statement if e.HasField("statement") else None
                for e in iter_binlog_events(LARGE, max_rows=50, statement_text=mode)]

    every, first, none = spark_statements(None), spark_statements("first"), spark_statements("none")
    assert every == library_statements("all") and first == library_statements("first")
    assert none == library_statements("none") == [None] * len(none)
    # A split statement: its text on every piece, on the first only, or nowhere.
    assert sum(t is not None for t in every) > sum(t is not None for t in first) > 0
    with pytest.raises(ConfigError, match="statement_text must be all, first or none"):
        ReadOptions.parse({"path": str(LARGE), "statementText": "some"})


@pytest.mark.parametrize("scenario", ["mariadb/all_types", "mariadb/large_statement", "mysql/all_types",
                                      "mysql/large_statement", "mysql/multi_table"])
def test_the_typed_job_s_decode_without_statement_text_is_the_same_but_the_text(scenario: str) -> None:
    """The typed job's tasks pass the ROWS_QUERY / ANNOTATE_ROWS events over unparsed: their events are the
    source's, event for event, without ``statement`` and ``trace_info`` (which no typed table holds)."""
    from binlog_model._pb import binlog_event_pb2 as pb
    from binlog_model.spark.reading import decode_slice

    files = sorted((REPO / "fixtures" / "golden" / scenario / "binlogs").iterdir())
    history, slices = plan(files, sliceBytes="4096")
    # statement text on every event where there is one: what the lean decode must lack
    options = ReadOptions.parse({"paths": json.dumps([str(f) for f in files]), "image": "after",
                                 "statementText": "all", "maxRows": "7"})

    def events(without_text: bool) -> list[pb.BinlogEvent]:
        out = []
        for piece in slices:
            for payload in decode_slice(piece, history.to_json(), options, without_text=without_text):
                out.append(pb.BinlogEvent.FromString(payload))
        return out

    full, lean = events(False), events(True)
    assert len(full) == len(lean) > 0
    rows = [(a, b) for a, b in zip(full, lean, strict=True) if a.operation != pb.BinlogEvent.SCHEMA]
    assert sum(a.HasField("statement") for a, _ in rows) > 0      # the fixture logs its row statements' text
    for a, b in zip(full, lean, strict=True):
        if a.operation != pb.BinlogEvent.SCHEMA:        # (a DDL's text is its QUERY event's: kept)
            for name in ("statement", "statement_raw", "trace_info"):
                a.ClearField(name)
                assert not b.HasField(name)
        assert a == b


def test_pre_pass_history_equals_the_pipeline_history() -> None:
    files = sorted((GOLDEN / "ddl_between_dml" / "binlogs").iterdir())
    history, _ = plan(files)
    from binlog_model.io.files import iter_events
    from binlog_model.resolve.assembler import StatementAssembler
    from binlog_model.resolve.options import AssemblerOptions
    full = StatementAssembler(SchemaHistory(), AssemblerOptions())
    list(full.assemble(iter_events(files)))
    assert history.to_json() == full.history.to_json()


def test_lineage_follows_renames_and_keeps_dropped_columns() -> None:
    history = SchemaHistory()
    stmts = ["CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, a INT, b TEXT)",
             "ALTER TABLE d.t CHANGE a a2 BIGINT", "ALTER TABLE d.t DROP COLUMN b",
             "ALTER TABLE d.t ADD COLUMN a INT UNSIGNED"]
    for i, sql in enumerate(stmts):
        history.apply(sql, None, EventPosition("mysql-bin.000001", 100 * (i + 1)))
    lineage = table_lineages(history)[("d", "t")]
    assert [(c.name, c.spark) for c in lineage.columns] == [     # the table's order, then the dropped b
        ("id", "int"), ("a2", "bigint"), ("a", "bigint"), ("b", "string")]
    at = lambda off: lineage.names_at(position_key("mysql-bin.000001", off))  # noqa: E731
    assert at(250) == {"id": "id", "a": "a2", "b": "b"}         # before the rename: a is today's a2
    assert at(350) == {"id": "id", "a2": "a2", "b": "b"}
    assert at(550) == {"id": "id", "a2": "a2", "a": "a"}        # the new a is a new column


def test_reused_name_gets_a_version_suffix() -> None:
    history = SchemaHistory()
    for i, sql in enumerate(["CREATE DATABASE d", "CREATE TABLE d.t (id INT, x INT)",
                             "ALTER TABLE d.t DROP COLUMN x", "ALTER TABLE d.t ADD COLUMN x VARCHAR(3)"]):
        history.apply(sql, None, EventPosition("f.000001", 10 * (i + 1)))
    lineage = table_lineages(history)[("d", "t")]
    assert [c.name for c in lineage.columns] == ["id", "x", "x__v1"]     # the dropped x after the table's
    assert lineage.names_at(position_key("f.000001", 25))["x"] == "x__v1"
    assert lineage.names_at(position_key("f.000001", 45))["x"] == "x"


@pytest.mark.parametrize(("column", "expected"), [
    (ColumnSchema("c", "int"), "int"),
    (ColumnSchema("c", "int", unsigned=True), "bigint"),
    (ColumnSchema("c", "bigint", unsigned=True), "decimal(20,0)"),
    (ColumnSchema("c", "decimal", precision=12, scale=3), "decimal(12,3)"),
    (ColumnSchema("c", "decimal", precision=65, scale=30), "string"),
    (ColumnSchema("c", "datetime", fsp=6), "timestamp_ntz"),
    (ColumnSchema("c", "timestamp", fsp=6), "timestamp"),
    (ColumnSchema("c", "time", fsp=6), "bigint"),
    (ColumnSchema("c", "json"), "string"),
    (ColumnSchema("c", "enum", enum_values=("a",)), "string"),
    (ColumnSchema("c", "set", enum_values=("a",)), "string"),
    (ColumnSchema("c", "blob"), "binary"),
    (ColumnSchema("c", "varchar", length=3, charset="binary"), "binary"),
])
def test_spark_type_mapping(column: ColumnSchema, expected: str) -> None:
    assert spark_type(column)[0] == expected


def test_value_conversion_and_invalid_values() -> None:
    import pyarrow as pa
    assert convert_value('{"uint64Value":"18446744073709551615"}', pa.decimal128(20, 0)) == Decimal(2**64 - 1)
    assert convert_value('{"decimalValue":"-1.50"}', pa.decimal128(5, 2)) == Decimal("-1.50")
    assert convert_value('{"timestampMicros":"1000001"}', pa.timestamp("us", tz="UTC")) == \
        datetime.datetime(1970, 1, 1, 0, 0, 1, 1, tzinfo=datetime.UTC)
    assert convert_value('{"setValue":{"labels":["a","c"]}}', pa.string()) == "a,c"
    assert convert_value('{"nullValue":null}', pa.int32()) is None
    for bad in ('{"dateValue":{}}', '{"timestampMicros":"0"}',
                '{"datetimeValue":{"year":2018,"month":2,"day":31}}'):
        with pytest.raises(_Invalid):
            convert_value(bad, pa.date32())


def test_bad_options_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="paths"):
        ReadOptions.parse({})
    with pytest.raises(ConfigError, match="ddl"):
        ReadOptions.parse({"path": "x", "ddl": "maybe"})
    with pytest.raises(ConfigError, match="FILE:OFFSET"):
        ReadOptions.parse({"path": "x", "startPosition": "nowhere"})
    with pytest.raises(ConfigError, match="no binlog files match"):
        expand_paths([str(tmp_path / "nothing*.000001")])


def test_missing_java_is_a_setup_error(tmp_path: Path) -> None:
    with pytest.raises(SparkSetupError, match="Java 17"):
        check_java(str(tmp_path / "no-java"))
    assert issubclass(SparkSetupError, BinlogError)


def test_resolve_without_java_prints_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(Path(sys.executable).parent)     # the venv's scripts, no java
    done = subprocess.run([sys.executable, "-m", "binlog_model.cli", "resolve", "--out", str(tmp_path)],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=120, check=False)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: SparkSetupError:"), done.stderr


def test_resolve_rejects_a_bad_always_include_before_spark_starts(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(Path(sys.executable).parent)     # no java: reaching Spark would be a SparkSetupError
    done = subprocess.run([sys.executable, "-m", "binlog_model.cli", "resolve", "--out", str(tmp_path),
                           "--always-include", "ppc.campaigns", str(LARGE)],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=120, check=False)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert lines == ["error: ConfigError: --always-include expects db.table.column, got 'ppc.campaigns'"], \
        done.stderr


def test_docs_list_the_type_mapping() -> None:
    from binlog_model.spark.typed import MAPPING_ROWS

    text = (REPO / "docs" / "spark.md").read_text(encoding="utf-8")
    for mysql, spark, note in MAPPING_ROWS:
        assert f"| {mysql} | `{spark}` | {note} |" in text


def test_gtid_set_skips_processed_transactions() -> None:
    from binlog_model.gtid import GtidSet

    files = sorted((GOLDEN / "transactions" / "binlogs").iterdir())
    events = list(iter_binlog_events(files))
    seqs = sorted({e.transaction_id for e in events})
    cut = seqs[len(seqs) // 2]
    skip = GtidSet.parse(f"{events[0].gtid_domain_id}-1-{cut}")
    assert [e for e in events if not skip.contains(e)] == [e for e in events if e.transaction_id > cut]
    mysql = GtidSet.parse("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:7")
    from binlog_model._pb import binlog_event_pb2 as pb
    at = lambda gno: pb.BinlogEvent(server_uuid="3e11fa47-71ca-11e1-9e33-c80aa9429562",  # noqa: E731
                                    transaction_id=gno, gtid=f"x:{gno}")
    assert [mysql.contains(at(n)) for n in (1, 5, 6, 7, 8)] == [True, True, False, True, False]
    with pytest.raises(ConfigError, match="GTID set"):
        GtidSet.parse("0-1")


def test_plan_file_gives_the_same_partitions_without_a_second_pre_pass(tmp_path: Path) -> None:
    """run_resolve plans on the driver and hands the plan to the data source (planFile): the reader's
    partitions are then those slices and that history, and the files are not scanned again."""
    from unittest import mock

    from binlog_model.spark import datasource
    from binlog_model.spark.datasource import BinlogReader, save_plan

    files = [str(p) for p in sorted((GOLDEN / "ddl_between_dml" / "binlogs").iterdir())]
    history, slices = plan(files, sliceBytes="2048")
    target = tmp_path / "plan.json"
    save_plan(target, files, history, slices)
    fresh = BinlogReader(ReadOptions.parse({"paths": ",".join(files), "sliceBytes": "2048"})).partitions()
    with mock.patch.object(datasource, "scan_files", side_effect=AssertionError("scanned again")):
        reused = BinlogReader(ReadOptions.parse({"paths": ",".join(files), "sliceBytes": "2048",
                                                 "planFile": str(target)})).partitions()
    pairs = [(p.piece, p.history) for p in reused]  # type: ignore[attr-defined]
    assert pairs == [(p.piece, p.history) for p in fresh]  # type: ignore[attr-defined]
    assert len(reused) == len(slices) > 1
    with pytest.raises(ConfigError, match="other files"):
        BinlogReader(ReadOptions.parse({"paths": str(LARGE), "planFile": str(target)})).partitions()
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    with pytest.raises(ConfigError, match="not a plan"):
        BinlogReader(ReadOptions.parse({"paths": str(LARGE), "planFile": str(bad)})).partitions()


def test_packed_history_is_parsed_once_per_worker_and_reads_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """Partitions carry the history compressed; a worker parses it once, and every slice still gets a
    history of its own (what one slice's assembler records is not seen by the next)."""
    from binlog_model.spark import reading

    files = sorted((GOLDEN / "ddl_between_dml" / "binlogs").iterdir())
    history, slices = plan(files, sliceBytes="2048")
    options = ReadOptions.parse({"paths": ",".join(map(str, files))})
    doc = history.to_json()
    packed = reading.pack_history(doc)
    assert len(packed) < len(json.dumps(doc))
    want = [b.to_pylist() for s in slices for b in read_slice(s, doc, options)]
    parsed: list[int] = []
    real = SchemaHistory.from_json

    def counted(doc: dict[str, object]) -> SchemaHistory:
        parsed.append(1)
        return real(doc)

    monkeypatch.setattr(SchemaHistory, "from_json", counted)
    for _ in range(2):
        got = [b.to_pylist() for s in slices for b in read_slice(s, packed, options)]
        assert got == want
    assert len(parsed) == 1
    one = reading._history_for(packed, False)
    one.apply("CREATE DATABASE extra_db", None, EventPosition("mysql-bin.999999", 4))
    assert len(one.entries) == len(history.entries) + 1
    assert len(reading._history_for(packed, False).entries) == len(history.entries)
    with pytest.raises(ConfigError, match="corrupt"):
        reading._history_for(b"not zlib", False)


def test_min_slices_cuts_large_files_finer_but_not_below_the_floor() -> None:
    """Planning only (hand-built FileScan summaries, no bytes read): one 64 MiB file with a transaction
    every 100 kB is one slice by default, at least minSlices slices when asked, and never cut below
    MIN_AUTO_SLICE_BYTES however many slices are asked for."""
    from binlog_model.spark.partitions import MIN_AUTO_SLICE_BYTES, FileScan, plan_slices

    size = 64 << 20
    scan = FileScan("hand-built.000001", size, b"fde", (), tuple(range(4, size, 100_000)))
    assert len(plan_slices([scan])) == 1
    eight = plan_slices([scan], min_slices=8)
    assert 8 <= len(eight) <= 9
    many = plan_slices([scan], min_slices=10_000)
    starts = [s.start for s in many]
    assert all(b - a >= MIN_AUTO_SLICE_BYTES for a, b in itertools.pairwise(starts))
    assert len(many) <= size // MIN_AUTO_SLICE_BYTES
    assert len(plan_slices([scan], slice_bytes=4 << 20, min_slices=2)) == 16   # sliceBytes still caps


def test_root_cause_is_the_last_python_exception_line() -> None:
    from binlog_model.spark.failures import SparkJobError, root_cause

    # The shape of a planner failure as pyspark raises it (a Python traceback inside the Spark error).
    text = ("[PYTHON_DATA_SOURCE_ERROR] Failed to create Python data source instance: Traceback (most recent "
            "call last):\n  File \"/x/pyspark/worker.py\", line 12, in main\n    func = read_command()\n"
            "  File \"/x/cloudpickle.py\", line 3, in loads\nModuleNotFoundError: No module named 'google'\n"
            "\tat org.apache.spark.sql.execution.python.X.run(X.scala:1)")
    assert root_cause(text) == "ModuleNotFoundError: No module named 'google'"
    assert root_cause("Job aborted\n\tat org.apache.Y") == "Job aborted"
    library = ("Traceback (most recent call last):\n"
               "binlog_model.errors.DecodeError: bad event (file x, offset 4)")
    assert root_cause(library) == "DecodeError: bad event (file x, offset 4)"
    err = SparkJobError.from_spark(RuntimeError(text), "/tmp/spark.log")
    assert str(err) == "ModuleNotFoundError: No module named 'google' (full Spark log: /tmp/spark.log)"


def test_tables_options_filter_the_source_as_the_library_does() -> None:
    """The source's ``tables``/``excludeTables`` options (comma-separated ``DB.TABLE`` globs) give the rows
    ``iter_binlog_events(tables=..., exclude_tables=...)`` gives; a malformed pattern fails at parse."""
    binlogs = GOLDEN / "multi_table" / "binlogs"
    files = sorted(binlogs.iterdir())
    history, slices = plan(files)
    options = ReadOptions.parse({"path": str(binlogs), "mode": "events", "tables": "shop.*, *.notes",
                                 "excludeTables": "shop.customers"})
    got = [(r["table"], r["operation"]) for s in slices for b in read_slice(s, history.to_json(), options)
           for r in b.to_pylist() if r["table"]]
    kept = iter_binlog_events(files, tables=["shop.*", "*.notes"], exclude_tables=["shop.customers"])
    want = [(e.table, ("INSERT", "UPDATE", "DELETE", "SCHEMA")[e.operation - 1]) for e in kept if e.table]
    assert got == want
    assert {t for t, _ in got} == {"orders", "notes"}
    with pytest.raises(ConfigError, match=r"--tables takes DB\.TABLE"):
        ReadOptions.parse({"path": str(binlogs), "tables": "orders"})
