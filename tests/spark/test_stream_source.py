"""``spark.readStream.format("mysql-binlog")`` over an archive that grows, on binlogs of real MySQL 9.7 and
MariaDB servers (``_stream_archive``: the active file growing in seeded prefixes, a rotation, DDL between
rounds, a file arriving gzip-compressed and a read one recompressed in place).

The driver-side reader is exercised without a JVM first (offsets, limits, transaction boundaries, a
restart at every offset, AvailableNow's target), then through real local Spark: a query running while the
rounds arrive, the driver SIGKILLed at seeded moments and restarted from its checkpoint, and AvailableNow
stopping at the files present at its start. Every check ends with the sink equal to a batch read of the
final files, row for row by position, each row once.

``BINLOG_MODEL_STREAM_KILLS=N`` runs the SIGKILL restart test with N kills per seed (not by default: each kill
costs a driver JVM start), ``BINLOG_MODEL_STREAM_SEEDS=a,b`` its seeds; the real-Spark tests run on one
server's files each by default, on both with ``BINLOG_MODEL_STREAM_ALL=1``.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxBytes, ReadMaxFiles, ReadMaxRows

from binlog_model.errors import ConfigError
from binlog_model.io.files import iter_events
from binlog_model.spark.datasource import plan
from binlog_model.spark.reading import ReadOptions, read_slice
from binlog_model.spark.session import local_session
from binlog_model.spark.stream_offsets import StreamOffset
from binlog_model.spark.streaming import BinlogStreamReader, _slice_options
from binlog_model.wire.events import FormatDescriptionEvent
from tests.spark._stream_archive import Archive, server_history, spark_run_on

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]
KINDS = ("mysql", "mariadb")


@pytest.fixture(scope="module", params=KINDS)
def history(request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[Path]]:
    """(server kind, the four closed files of the workload) per server, made once per module."""
    _, files = server_history(request.getfixturevalue(request.param), request.param, "stream",
                              tmp_path_factory.mktemp(f"files-{request.param}"))
    return request.param, files


# --- the driver-side reader, no JVM -------------------------------------------------------------------------


def _as_key(row: dict[str, Any]) -> tuple[Any, ...]:
    return (row["file"], row["offset"], row["innerIndex"], row["eventIndex"], row["rowIndex"],
            json.dumps(row, sort_keys=True, default=lambda v: v.hex() if isinstance(v, bytes) else str(v)))


def _batch_rows(folder: Path, **options: str) -> Counter[tuple[Any, ...]]:
    history, slices = plan([folder], **options)
    read = ReadOptions.parse({"paths": "unused", **options})
    doc = history.to_json()
    return Counter(_as_key(r) for piece in slices for b in read_slice(piece, doc, read)
                   for r in b.to_pylist())


def _stream_rows(reader: BinlogStreamReader, start: dict[str, Any], end: dict[str, Any]
                 ) -> list[dict[str, Any]]:
    options = _slice_options(reader.options.read)
    return [r for p in reader.partitions(start, end) for b in read_slice(p.piece, p.history, options)
            for r in b.to_pylist()]


def _drain(reader: BinlogStreamReader, start: dict[str, Any], limit: Any
           ) -> list[tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]]:
    """latestOffset until it stops moving: the batches (start, end, rows)."""
    out = []
    while True:
        end = reader.latestOffset(start, limit)
        if json.dumps(end) == json.dumps(start):
            return out
        out.append((start, end, _stream_rows(reader, start, end)))
        reader.commit(end)
        start = end


def _first_transaction(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The leading rows of ``rows`` that belong to its first transaction (one GTID)."""
    return list(itertools.takewhile(lambda r: r["gtid"] == rows[0]["gtid"], rows)) if rows else []


def _check_canonical(offset: dict[str, Any]) -> None:
    text = json.dumps(offset)
    assert list(offset) == ["v", "file", "offset", "gtids", "schema"]
    assert StreamOffset.from_json(json.loads(text)).text() == text


def test_reader_batches_end_at_transactions_and_restart_anywhere(history: tuple[str, list[Path]],
                                                                 tmp_path: Path) -> None:
    kind, files = history
    archive = Archive(files, tmp_path / "archive", seed=7)
    opts = {"path": str(archive.folder), "maxRowsPerTrigger": "7", "schemaLocation": str(tmp_path / "schema")}
    reader = BinlogStreamReader(opts)
    start = reader.initialOffset()
    _check_canonical(start)
    batches = []
    round_starts = set()                            # the index of each round's first batch
    for _ in archive.rounds():
        got = _drain(reader, start, reader.getDefaultReadLimit())
        assert got, "every round brings at least one whole transaction"
        round_starts.add(len(batches))
        batches += got
        start = got[-1][1]
    seen_gtids: dict[str, int] = {}
    for n, (_, end, rows) in enumerate(batches):
        _check_canonical(end)
        gtids = {r["gtid"] for r in rows if r["gtid"]}
        for g in gtids:
            assert seen_gtids.setdefault(g, n) == n, f"transaction {g} split over batches"
        assert len(rows) <= 7 or len(gtids) == 1, f"batch {n}: {len(rows)} rows of {len(gtids)} transactions"
    # and full: a batch that is not the last of its round ended because the next transaction did not fit
    for n, ((_, _, rows), (_, _, after)) in enumerate(itertools.pairwise(batches)):
        if n + 1 not in round_starts:
            assert len(rows) + len(_first_transaction(after)) > 7, (
                f"batch {n} ({len(rows)} rows) ended though the next transaction "
                f"({len(_first_transaction(after))} rows) fit under maxRowsPerTrigger=7")
    assert any(len({r["gtid"] for r in rows}) > 1 for _, _, rows in batches), "no batch of two transactions"

    total = Counter(_as_key(r) for _, _, rows in batches for r in rows)
    assert sum(total.values()) > 100
    assert total == _batch_rows(archive.plain_copy(tmp_path / "plain")), "stream == batch, each row once"

    # A restart at any offset: a new reader (another process) plans each batch again to the same rows:
    # with the stored histories, and with none (rebuilt from the archive, which was recompressed since).
    for location in (str(tmp_path / "schema"), None):
        fresh_opts = {k: v for k, v in opts.items() if k != "schemaLocation" or location}
        for begin, end, rows in batches[::3]:
            again = BinlogStreamReader(fresh_opts)
            assert _stream_rows(again, begin, end) == rows
            # The archive has grown since: the next offset is the same one, or further when the batch
            # had ended where the data did.
            later = StreamOffset.from_json(again.latestOffset(begin, again.getDefaultReadLimit()))
            assert later.place >= StreamOffset.from_json(end).place
    # the files are the named server's own (MariaDB's version string says MariaDB, MySQL 9's does not)
    fde = next(iter_events(files[0]))
    assert isinstance(fde, FormatDescriptionEvent)
    assert ("MariaDB" in fde.server_version) == (kind == "mariadb"), (kind, fde.server_version)


def test_reader_limits_files_and_bytes(history: tuple[str, list[Path]], tmp_path: Path) -> None:
    _, files = history
    archive = Archive(files, tmp_path / "archive", seed=3)
    for _ in archive.rounds():
        pass
    reader = BinlogStreamReader({"path": str(archive.folder), "maxFilesPerTrigger": "1"})
    batches = _drain(reader, reader.initialOffset(), reader.getDefaultReadLimit())
    # one batch per file, in order, each reading that whole file and no other
    assert [sorted({r["file"] for r in rows}) for _, _, rows in batches] == [[f.name] for f in files]
    assert [StreamOffset.from_json(end).file for _, end, _ in batches] == [f.name for f in files]

    reader = BinlogStreamReader({"path": str(archive.folder), "maxBytesPerTrigger": "2000"})
    start = reader.initialOffset()
    batches = _drain(reader, start, ReadMaxBytes(2000))
    # A batch of several transactions within one file reads at most 2000 bytes of it; most batches are such
    # batches (the limit bites: without it the few rounds' bytes would be one batch).
    shared = 0
    for begin, end, rows in batches:
        b, e = StreamOffset.from_json(begin), StreamOffset.from_json(end)
        if b.file == e.file and len({r["gtid"] for r in rows if r["gtid"]}) > 1:
            assert e.offset - b.offset <= 2000, (b.file, b.offset, e.offset)
            shared += 1
    assert shared >= len(batches) // 2 and len(batches) >= 8, f"{shared} of {len(batches)} batches checked"
    # ReadAllAvailable (Trigger.Once) ignores the options: one batch.
    reader = BinlogStreamReader({"path": str(archive.folder), "maxFilesPerTrigger": "1"})
    assert len(_drain(reader, reader.initialOffset(), ReadAllAvailable())) == 1
    assert isinstance(reader.getDefaultReadLimit(), ReadMaxFiles)
    assert isinstance(BinlogStreamReader({"path": str(archive.folder), "maxRowsPerTrigger": "3"})
                      .getDefaultReadLimit(), ReadMaxRows)


def test_available_now_target_is_the_archive_at_start(history: tuple[str, list[Path]],
                                                       tmp_path: Path) -> None:
    _, files = history
    archive = Archive(files, tmp_path / "archive", seed=11)
    rounds = archive.rounds()
    next(rounds)                                    # file 1 whole, file 2 growing
    grown_to = (archive.folder / files[1].name).stat().st_size
    reader = BinlogStreamReader({"path": str(archive.folder), "maxRowsPerTrigger": "20"})
    start = reader.initialOffset()
    reader.prepareForTriggerAvailableNow()
    for _ in rounds:                                # everything else arrives after the query started
        pass
    batches = _drain(reader, start, reader.getDefaultReadLimit())
    last = StreamOffset.from_json(batches[-1][1])
    assert (last.file, last.offset <= grown_to) == (files[1].name, True)
    rows = Counter(_as_key(r) for _, _, b in batches for r in b)
    expected = Counter({k: n for k, n in _batch_rows(archive.plain_copy(tmp_path / "plain")).items()
                        if k[0] == files[0].name or (k[0] == files[1].name and k[1] < last.offset)})
    assert rows == expected


def test_bad_options_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        BinlogStreamReader({"path": str(tmp_path / "nope")})
    with pytest.raises(ConfigError, match="maxFilesPerTrigger must be a positive integer"):
        BinlogStreamReader({"path": str(tmp_path), "maxFilesPerTrigger": "0"})
    with pytest.raises(ConfigError, match="batch reads only"):
        BinlogStreamReader({"path": str(tmp_path), "stopPosition": "mysql-bin.000001:4"})
    with pytest.raises(ConfigError, match="did not write"):
        StreamOffset.from_json({"file": "x"})
    empty = BinlogStreamReader({"path": str(tmp_path)})
    start = empty.initialOffset()
    assert empty.latestOffset(start, ReadAllAvailable()) == start, "an empty folder waits"


# --- real Spark ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def spark() -> Any:
    session = local_session("local[2]")
    session.conf.set("spark.sql.shuffle.partitions", "2")
    return session


def _sink_rows(spark: Any, frame: Any) -> Counter[tuple[Any, ...]]:
    from pyspark.sql import functions as F

    cols = [c for c in frame.columns]
    rows = frame.select(*cols).withColumn("event", F.hex("event")).collect()
    return Counter(_as_key(r.asDict(recursive=True)) for r in rows)


def test_query_follows_the_archive_rounds(spark: Any, history: tuple[str, list[Path]],
                                          tmp_path: Path) -> None:
    kind, files = history
    spark_run_on(kind, "mariadb")
    archive = Archive(files, tmp_path / "archive", seed=5)
    archive.folder.mkdir(parents=True, exist_ok=True)
    stream = (spark.readStream.format("mysql-binlog")
              .option("schemaLocation", str(tmp_path / "ck" / "schema"))
              .option("maxRowsPerTrigger", "40").load(str(archive.folder)))
    query = (stream.writeStream.format("parquet").option("path", str(tmp_path / "sink"))
             .option("checkpointLocation", str(tmp_path / "ck")).trigger(processingTime="200 milliseconds")
             .start())
    try:
        for _ in archive.rounds():
            query.processAllAvailable()
    finally:
        query.stop()
    assert query.exception() is None
    got = _sink_rows(spark, spark.read.parquet(str(tmp_path / "sink")))
    plain = archive.plain_copy(tmp_path / "plain")
    want = _sink_rows(spark, spark.read.format("mysql-binlog").load(str(plain)))
    assert got == want


def test_available_now_query_stops_at_the_files_of_its_start(spark: Any, history: tuple[str, list[Path]],
                                                             tmp_path: Path) -> None:
    kind, files = history
    spark_run_on(kind, "mysql")
    archive = Archive(files, tmp_path / "archive", seed=9)
    rounds = archive.rounds()
    next(rounds)
    next(rounds)
    present = {p.name for p in archive.folder.iterdir() if not p.name.startswith(".")}
    batches: list[int] = []

    def sink(frame: Any, batch_id: int) -> None:
        if not batches:
            for _ in rounds:        # the rest arrives while the query runs
                pass
        batches.append(batch_id)
        frame.write.mode("append").parquet(str(tmp_path / "sink"))

    query = (spark.readStream.format("mysql-binlog").option("maxFilesPerTrigger", "1")
             .load(str(archive.folder)).writeStream.foreachBatch(sink)
             .option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True).start())
    query.awaitTermination(300)
    assert not query.isActive and query.exception() is None
    assert len(batches) >= 2, "maxFilesPerTrigger=1 over two files: at least two batches"
    frame = spark.read.parquet(str(tmp_path / "sink"))
    assert {r["file"] for r in frame.select("file").distinct().collect()} <= present
    assert frame.count() < spark.read.format("mysql-binlog").load(str(archive.folder)).count()


def _stream_query(spark: Any, archive: Path, sink: Path, checkpoint: Path, rows: str) -> Any:
    """The restart test's query (``_stream_driver`` builds the same one)."""
    return (spark.readStream.format("mysql-binlog").option("schemaLocation", f"{checkpoint}/binlog-schema")
            .option("maxRowsPerTrigger", rows).load(str(archive))
            .writeStream.format("parquet").option("path", str(sink))
            .option("checkpointLocation", str(checkpoint)))


def _driver(archive: Path, sink: Path, checkpoint: Path, *, available_now: bool) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYTHONPATH=str(REPO))
    return subprocess.Popen(
        [sys.executable, "-m", "tests.spark._stream_driver", str(archive), str(sink), str(checkpoint),
         "available-now" if available_now else "continuous"],
        cwd=str(REPO), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)


def _batches(checkpoint: Path) -> int:
    offsets = checkpoint / "offsets"
    return len([p for p in offsets.iterdir() if p.name.isdigit()]) if offsets.is_dir() else 0


def test_driver_killed_and_restarted_from_its_checkpoint(spark: Any, history: tuple[str, list[Path]],
                                                         tmp_path: Path) -> None:
    kind, files = history
    if "BINLOG_MODEL_STREAM_KILLS" not in os.environ:
        pytest.skip("a campaign (JVM starts, ~2 minutes): BINLOG_MODEL_STREAM_KILLS=N runs it; by default "
                    "the restart logic runs in test_reader_batches_end_at_transactions_and_restart_anywhere")
    spark_run_on(kind, "mariadb")
    kills = int(os.environ["BINLOG_MODEL_STREAM_KILLS"])
    seeds = [int(s) for s in os.environ.get("BINLOG_MODEL_STREAM_SEEDS", "1").split(",")]
    for seed in seeds:
        rng = random.Random(seed)
        work = tmp_path / f"seed{seed}"
        archive = Archive(files, work / "archive", seed=seed)
        archive.folder.mkdir(parents=True, exist_ok=True)
        rounds = archive.rounds()
        t0 = time.monotonic()
        for n in range(kills):
            next(rounds, None)
            done = _batches(work / "ck")
            proc = _driver(archive.folder, work / "sink", work / "ck", available_now=False)
            # Killed while it runs: once it has planned a batch more than before, after a seeded delay
            # (mid-batch, between batches, while committing).
            deadline = time.monotonic() + 120
            while _batches(work / "ck") <= done and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(rng.uniform(0.0, 1.5))
            os.killpg(proc.pid, signal.SIGKILL)
            print(f"seed {seed} kill {n}: {_batches(work / 'ck')} batches planned, "
                  f"at {time.monotonic() - t0:.1f}s")
            proc.wait()
            assert proc.returncode == -signal.SIGKILL, f"kill {n}: the driver had already exited"
        for _ in rounds:
            pass
        # The restart that finishes: this process's session, from the killed drivers' checkpoint.
        query = _stream_query(spark, archive.folder, work / "sink", work / "ck", "100000").trigger(
            availableNow=True).start()
        query.awaitTermination(300)
        assert query.exception() is None
        print(f"seed {seed}: finished at {time.monotonic() - t0:.1f}s, {_batches(work / 'ck')} batches")
        got = _sink_rows(spark, spark.read.parquet(str(work / "sink")))
        plain = archive.plain_copy(work / "plain")
        want = _sink_rows(spark, spark.read.format("mysql-binlog").load(str(plain)))
        assert got == want, f"seed {seed}"


def test_a_damaged_older_file_stops_the_stream(history: tuple[str, list[Path]], tmp_path: Path) -> None:
    """Only the newest file may end inside an event or a transaction; an older one that does is damage (a
    typed error naming it), with or without AvailableNow's size caps."""
    from binlog_model.errors import TruncatedEventError

    _, files = history
    archive = Archive(files, tmp_path / "archive", seed=2)
    archive.put(0, archive.cut(0, 0.5, 0.9))      # cut short, and a later file exists
    archive.put(1)
    for available_now in (False, True):
        reader = BinlogStreamReader({"path": str(archive.folder)})
        start = reader.initialOffset()
        if available_now:
            reader.prepareForTriggerAvailableNow()
        with pytest.raises(TruncatedEventError, match=files[0].name):
            reader.latestOffset(start, ReadAllAvailable())
