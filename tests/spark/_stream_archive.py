"""A growing binlog archive for the stream source's tests, from a real server.

The server writes four binlog files (DDL between them and inside them, single-row and multi-statement
transactions, a rename); ``Archive`` then lays them into a folder in rounds as a sync job would see a server
write them: the active file as prefixes of its final bytes cut at seeded places (mid-event and
mid-transaction: an active binlog only ever grows, so a prefix of the final file is what a copy of it held
at some moment), files arriving gzip-compressed, and an already-read file recompressed in place.
"""

from __future__ import annotations

import gzip
import os
import random
import shutil
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any


#: (statements, then FLUSH BINARY LOGS): four files
def workload(db: str) -> list[list[str]]:
    t, u = f"`{db}`.t", f"`{db}`.u"
    return [
        [f"CREATE TABLE {t} (id INT PRIMARY KEY, v INT, s VARCHAR(32))",
         f"INSERT INTO {t} VALUES " + ", ".join(f"({i}, {i * 10}, 'r{i}')" for i in range(1, 21)),
         f"UPDATE {t} SET v = v + 1 WHERE id <= 5"],
        [*(f"INSERT INTO {t} VALUES ({i}, {i}, 'single{i}')" for i in range(21, 51)),
         f"ALTER TABLE {t} ADD COLUMN w BIGINT",
         f"INSERT INTO {t} VALUES (51, 1, 'after alter', 9000000000)",
         "BEGIN", f"INSERT INTO {t} VALUES (52, 2, 'in tx', 1)", f"UPDATE {t} SET w = 7 WHERE id < 10",
         f"DELETE FROM {t} WHERE id = 20", "COMMIT",
         *(f"INSERT INTO {t} VALUES ({i}, {i}, 'tail{i}', {i})" for i in range(53, 73))],
        [f"CREATE TABLE {u} (k VARCHAR(10) PRIMARY KEY, n DECIMAL(10,2))",
         f"INSERT INTO {u} VALUES ('a', 1.50), ('b', 2.25)", f"ALTER TABLE {t} MODIFY v BIGINT",
         f"UPDATE {t} SET v = 5000000000 WHERE id = 1"],
        [*(f"INSERT INTO {u} VALUES ('k{i}', {i}.01)" for i in range(30)),
         f"RENAME TABLE {u} TO `{db}`.u2", f"INSERT INTO `{db}`.u2 VALUES ('z', 9.99)",
         f"DELETE FROM {t} WHERE id > 60"],
    ]


def server_files(server: Any, db: str, dest: Path) -> list[Path]:
    """The four closed files holding ``workload(db)`` (plus whatever other tests wrote meanwhile)."""
    server.flush_and_collect()
    files: list[Path] = []
    for part in workload(db):
        server.execute(part)
        files += server.flush_and_collect(dest)
    assert len(files) == 4, files
    return files


class Archive:
    """The folder a stream reads, filled in rounds from the final ``files``."""

    def __init__(self, files: list[Path], folder: Path, seed: int) -> None:
        self.files = files
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.rng = random.Random(seed)

    def put(self, index: int, size: int | None = None, *, gz: bool = False) -> None:
        """File ``index`` as its first ``size`` bytes (all by default), gzip-compressed or not, written under
        a temporary name and renamed in (as a sync job publishes)."""
        data = self.files[index].read_bytes()
        if size is not None:
            data = data[:size]
        if gz:
            data = gzip.compress(data, compresslevel=1)
        target = self.folder / self.files[index].name
        tmp = self.folder / f".{target.name}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, target)

    def cut(self, index: int, lo: float, hi: float) -> int:
        """A seeded byte count inside ``[lo, hi)`` of file ``index``'s size (mid-event as a rule)."""
        size = self.files[index].stat().st_size
        return self.rng.randrange(int(size * lo), int(size * hi))

    def rounds(self) -> Iterable[str]:
        """Fill the folder round by round; each yields a label once its round is in place."""
        self.put(0)
        self.put(1, self.cut(1, 0.15, 0.4))
        yield "file 1 whole, file 2 growing"
        self.put(0, gz=True)                         # archived in place once read
        self.put(1, self.cut(1, 0.45, 0.9))
        yield "file 1 recompressed, file 2 grown (past its ALTER)"
        self.put(1)
        self.put(2, gz=True)                         # rotation: a new file, arriving compressed
        self.put(3, self.cut(3, 0.3, 0.7))
        yield "file 2 whole, file 3 gzip, file 4 growing"
        self.put(3)
        yield "file 4 whole"

    def plain_copy(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        for f in self.files:
            shutil.copyfile(f, folder / f.name)
        return folder


def server_history(server: Any, kind: str, prefix: str, dest: Path) -> tuple[str, list[Path]]:
    """(database, the closed files of the workload) written by ``server`` in a database of its own."""
    db = f"{prefix}_{kind}_{os.getpid()}"
    server.execute(f"CREATE DATABASE `{db}`")
    try:
        return db, server_files(server, db, dest)
    finally:
        server.execute(f"DROP DATABASE IF EXISTS `{db}`")


def spark_run_on(kind: str, default: str) -> None:
    """Skip a real-Spark test on the server kind it does not run on by default: the Spark side does not
    depend on the server (the reader-level tests run on both); ``BINLOG_MODEL_STREAM_ALL=1`` runs both."""
    import pytest

    if kind != default and os.environ.get("BINLOG_MODEL_STREAM_ALL") != "1":
        pytest.skip(f"runs on {default}'s files by default (BINLOG_MODEL_STREAM_ALL=1: every server)")


def keyed(rows: Iterable[Any]) -> Counter[tuple[Any, ...]]:
    """Rows of the source as a multiset keyed by position (file, offset, innerIndex, eventIndex, rowIndex)
    with the whole row's JSON: equal multisets mean every row once, the same values."""
    return Counter((r["file"], r["offset"], r["innerIndex"], r["eventIndex"], r["rowIndex"], r["j"])
                   for r in rows)
