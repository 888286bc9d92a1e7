"""The benchmark workload: a mixed-type table on a throwaway MariaDB or MySQL 9, written as ROW/FULL binlogs.

Strategy: one table mixes every column family the decoder has a codec path for (INT UNSIGNED PK, BIGINT,
utf8mb4 VARCHAR, TEXT, DECIMAL, DATETIME(6), TIMESTAMP, ENUM, SET, DOUBLE, JSON, BIT, DATE, TIME(3), YEAR,
BLOB). The workload inserts ``rows`` rows with multi-row INSERTs, then UPDATEs ``update_fraction`` and
DELETEs ``delete_fraction`` of them with range statements (one statement touches about ``batch`` rows), so
the binlog holds realistic multi-row rows events. Values come from a seeded ``random.Random``: the same
parameters give the same rows.

The schema is created, saved as a ``mysqldump``-style ``snapshot.sql``, and the binlogs are reset *before*
the workload, so the binlogs hold only DML and the snapshot is the schema "taken before the workload".

The same statements run on both servers (``kind`` ``mariadb`` or ``mysql``: Debian sid's MySQL 9 from
``binlog_model.testing.mysql``); each server's snapshot is its own ``SHOW CREATE TABLE``.

Cache: ``$BINLOG_MODEL_BENCH_CACHE`` or ``~/.cache/binlog-model-bench``, one directory per parameter hash
(``<key>`` for MariaDB, ``<key>-mysql`` for MySQL; ``binlogs/``, ``snapshot.sql``, ``meta.json``;
``meta.json`` is written last and marks a complete entry).
The side-by-side comparison needs a live server holding the binlog (python-mysql-replication streams over
the replication protocol): ``live_server`` runs the (deterministic, seconds-long) workload on a fresh server
and every peer reads that server's files.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from binlog_model.testing.localserver import LocalServer
from binlog_model.testing.mariadb import MariaDBServer

__all__ = ["DATABASE", "SERVER_KINDS", "TABLE", "CachedWorkload", "Workload", "cache_root", "ensure_workload",
           "live_server", "new_server"]

#: the servers the workload runs on
SERVER_KINDS = ("mariadb", "mysql")

# Bump when the table or the statements change: the cache key includes it.
WORKLOAD_VERSION = 1
DATABASE = "bench"
TABLE = "mixed"

_DDL = f"""CREATE TABLE `{TABLE}` (
  `id` INT UNSIGNED NOT NULL,
  `big` BIGINT NOT NULL,
  `name` VARCHAR(255) CHARACTER SET utf8mb4 NOT NULL,
  `body` TEXT CHARACTER SET utf8mb4,
  `amount` DECIMAL(12,2) NOT NULL,
  `created` DATETIME(6) NOT NULL,
  `seen` TIMESTAMP NULL DEFAULT NULL,
  `status` ENUM('new','active','paused','closed') NOT NULL,
  `tags` SET('red','green','blue','gold','teal') NOT NULL,
  `score` DOUBLE,
  `doc` JSON,
  `flags` BIT(12) NOT NULL,
  `day` DATE,
  `span` TIME(3),
  `yr` YEAR,
  `payload` BLOB,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"""

_WORDS = ("alpha", "beta", "gamma", "delta", "épsilon", "zeta", "ηta", "theta", "kappa", "λambda", "mu",
          "nu", "xi", "omicron", "пи", "rho", "sigma", "tau", "表", "phi")
_STATUS = ("new", "active", "paused", "closed")
_TAGS = ("red", "green", "blue", "gold", "teal")


@dataclass(frozen=True, slots=True)
class Workload:
    """Workload parameters; ``key`` names the cache entry."""

    rows: int = 70_000
    update_fraction: float = 0.3
    delete_fraction: float = 0.1
    batch: int = 500
    text_len: int = 160
    seed: int = 20261122

    @property
    def key(self) -> str:
        text = json.dumps({"v": WORKLOAD_VERSION, **asdict(self)}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def updated(self) -> int:
        # UPDATE ... WHERE id % 10 < k touches k/10 of the ids (ids are 1..rows).
        return sum(1 for i in range(1, self.rows + 1) if i % 10 < round(self.update_fraction * 10))

    @property
    def deleted(self) -> int:
        return sum(1 for i in range(1, self.rows + 1) if i % 10 >= 10 - round(self.delete_fraction * 10))

    @property
    def row_changes(self) -> int:
        return self.rows + self.updated + self.deleted

    @property
    def row_images(self) -> int:
        return self.rows + 2 * self.updated + self.deleted

    @classmethod
    def for_changes(cls, changes: int, **kw: Any) -> Workload:
        """A workload of about ``changes`` row changes with the default update/delete fractions."""
        base = cls(**kw)
        per_row = 1 + base.update_fraction + base.delete_fraction
        return cls(rows=max(10, round(changes / per_row)), **kw)

    @classmethod
    def for_images(cls, images: int, **kw: Any) -> Workload:
        """A workload of at least ``images`` row images."""
        base = cls(**kw)
        per_row = 1 + 2 * base.update_fraction + base.delete_fraction
        return cls(rows=max(10, int(images / per_row) + 1), **kw)


@dataclass(frozen=True, slots=True)
class CachedWorkload:
    """A complete cache entry: the binlog files in order, the snapshot, and the counts."""

    workload: Workload
    directory: Path
    binlogs: tuple[Path, ...]
    snapshot: Path
    meta: dict[str, Any]

    @property
    def binlog_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.binlogs)


def new_server(kind: str = "mariadb") -> LocalServer:
    """A started throwaway server of ``kind`` (ROW binlog, FULL image, FULL metadata)."""
    if kind == "mariadb":
        return MariaDBServer(row_image="FULL", row_metadata="FULL").start()
    if kind == "mysql":
        from binlog_model.testing.mysql import MySQLServer

        return MySQLServer(row_image="FULL", row_metadata="FULL").start()
    raise ValueError(f"unknown server kind {kind!r}; expected one of {SERVER_KINDS}")


def _entry_name(w: Workload, kind: str) -> str:
    return w.key if kind == "mariadb" else f"{w.key}-{kind}"


def cache_root() -> Path:
    env = os.environ.get("BINLOG_MODEL_BENCH_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "binlog-model-bench"


def _sql_str(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _row_sql(rnd: random.Random, i: int, text_len: int) -> str:
    words = " ".join(rnd.choice(_WORDS) for _ in range(text_len // 6))[:text_len]
    name = f"{rnd.choice(_WORDS)}-{i}-{rnd.choice(_WORDS)}"
    tags = ",".join(t for t in _TAGS if rnd.random() < 0.4)
    doc = json.dumps({"id": i, "k": rnd.choice(_WORDS), "n": [rnd.randint(0, 999) for _ in range(3)],
                      "ok": rnd.random() < 0.5}, ensure_ascii=False)
    payload = rnd.randbytes(24).hex()
    null_score = rnd.random() < 0.05
    return (
        f"({i},{rnd.randint(-2**62, 2**62)},{_sql_str(name)},{_sql_str(words)},"
        f"{rnd.randint(-10**9, 10**9) / 100:.2f},"
        f"'2024-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d} {rnd.randint(0, 23):02d}:"
        f"{rnd.randint(0, 59):02d}:{rnd.randint(0, 59):02d}.{rnd.randint(0, 999999):06d}',"
        f"FROM_UNIXTIME({rnd.randint(10**9, 17 * 10**8)}),"
        f"'{rnd.choice(_STATUS)}',{_sql_str(tags)},"
        f"{'NULL' if null_score else repr(rnd.uniform(-1e6, 1e6))},{_sql_str(doc)},"
        f"b'{rnd.getrandbits(12):012b}',"
        f"'{rnd.randint(1990, 2030)}-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}',"
        f"'{rnd.randint(-838, 838)}:{rnd.randint(0, 59):02d}:{rnd.randint(0, 59):02d}"
        f".{rnd.randint(0, 999):03d}',"
        f"{rnd.randint(1901, 2155)},x'{payload}')"
    )


def iter_statements(w: Workload) -> Iterator[str]:
    """The workload's DML statements, in order (deterministic for the parameters)."""
    rnd = random.Random(w.seed)
    for start in range(1, w.rows + 1, w.batch):
        stop = min(start + w.batch, w.rows + 1)
        values = ",".join(_row_sql(rnd, i, w.text_len) for i in range(start, stop))
        yield f"INSERT INTO `{TABLE}` VALUES {values}"
    upd = round(w.update_fraction * 10)
    dele = round(w.delete_fraction * 10)
    # Ranges of ``batch * 10 / k`` ids so each statement changes about ``batch`` rows.
    if upd:
        step = max(1, w.batch * 10 // upd)
        for start in range(1, w.rows + 1, step):
            yield (f"UPDATE `{TABLE}` SET big = big + 1, score = score * 1.5, status = 'active', "
                   f"span = ADDTIME(span, '00:00:01.5'), name = CONCAT(name, '~') "
                   f"WHERE id BETWEEN {start} AND {start + step - 1} AND id % 10 < {upd}")
    if dele:
        step = max(1, w.batch * 10 // dele)
        for start in range(1, w.rows + 1, step):
            yield (f"DELETE FROM `{TABLE}` WHERE id BETWEEN {start} AND {start + step - 1} "
                   f"AND id % 10 >= {10 - dele}")


def schema_sql() -> str:
    return f"CREATE DATABASE `{DATABASE}`;\nUSE `{DATABASE}`;\n{_DDL};\n"


def _create_schema(server: LocalServer) -> None:
    server.execute([f"CREATE DATABASE `{DATABASE}`", f"USE `{DATABASE}`", _DDL])


def _snapshot_text(server: LocalServer) -> str:
    # What the server says the table is (a mysqldump --no-data equivalent), not our DDL string.
    create = server.query(f"SHOW CREATE TABLE `{DATABASE}`.`{TABLE}`")[0][1]
    return f"CREATE DATABASE `{DATABASE}`;\nUSE `{DATABASE}`;\n{create};\n"


def run_workload(server: LocalServer, w: Workload, *, log: Any = print) -> float:
    """Run the DML on ``server`` (schema already there); returns the seconds it took."""
    began = time.monotonic()
    conn = server.connect(DATABASE)
    try:
        with conn.cursor() as cur:
            for n, stmt in enumerate(iter_statements(w), 1):
                cur.execute(stmt)
                if n % 200 == 0:
                    log(f"  workload: {n} statements, {time.monotonic() - began:.0f} s")
    finally:
        conn.close()
    return time.monotonic() - began


def _store(w: Workload, files: list[Path], snapshot: str, version: str, seconds: float,
           kind: str = "mariadb") -> CachedWorkload:
    directory = cache_root() / _entry_name(w, kind)
    cache_root().mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{_entry_name(w, kind)}-", dir=cache_root()))
    (tmp / "binlogs").mkdir()
    for path in files:
        shutil.copyfile(path, tmp / "binlogs" / path.name)
    (tmp / "snapshot.sql").write_text(snapshot, encoding="utf-8")
    meta = {"workload": asdict(w), "key": w.key, "version": WORKLOAD_VERSION, "server": version,
            "binlogs": [p.name for p in files], "bytes": sum(p.stat().st_size for p in files),
            "row_changes": w.row_changes, "row_images": w.row_images, "generate_seconds": round(seconds, 1)}
    # meta.json last: its presence marks a complete entry.
    (tmp / "meta.json").write_text(json.dumps(meta, indent=2))
    shutil.rmtree(directory, ignore_errors=True)
    tmp.rename(directory)
    found = load_cached(w, kind)
    assert found is not None
    return found


def load_cached(w: Workload, kind: str = "mariadb") -> CachedWorkload | None:
    directory = cache_root() / _entry_name(w, kind)
    meta_path = directory / "meta.json"
    if not meta_path.is_file():
        return None
    meta = json.loads(meta_path.read_text())
    binlogs = tuple(directory / "binlogs" / name for name in meta["binlogs"])
    if not all(p.is_file() for p in binlogs):
        return None
    return CachedWorkload(w, directory, binlogs, directory / "snapshot.sql", meta)


def ensure_workload(w: Workload, *, server: MariaDBServer | None = None, log: Any = print) -> CachedWorkload:
    """The cached binlogs of ``w``, generating them (on ``server`` or a server of its own) on a miss."""
    cached = load_cached(w)
    if cached is not None:
        return cached
    own = server is None
    srv = server if server is not None else MariaDBServer(row_image="FULL", row_metadata="FULL").start()
    try:
        log(f"generating workload {w.key}: {w.rows} inserts, ~{w.row_changes} row changes, "
            f"{w.row_images} row images (MariaDB {srv.version})")
        _create_schema(srv)
        snapshot = _snapshot_text(srv)
        srv.reset_binlogs()
        seconds = run_workload(srv, w, log=log)
        files = srv.flush_and_collect(include_previous=True)
        return _store(w, files, snapshot, srv.version, seconds)
    finally:
        if own:
            srv.stop()


def live_server(w: Workload, *, kind: str = "mariadb",
                log: Any = print) -> tuple[LocalServer, CachedWorkload, list[Path]]:
    """A running server of ``kind`` whose binlog holds the workload, its cache entry, and that server's files.

    The workload is deterministic and takes seconds at benchmark sizes, so it is simply run again on the
    live server (a replay through ``mariadb-binlog | mariadb`` would re-log ANNOTATE_ROWS events holding
    the ``BINLOG '...'`` text, a different file). The caller stops the server.
    """
    server = new_server(kind)
    try:
        _create_schema(server)
        snapshot = _snapshot_text(server)
        server.reset_binlogs()
        log(f"running workload {w.key}: ~{w.row_changes} row changes, {w.row_images} row images "
            f"({server.label} {server.version})")
        seconds = run_workload(server, w, log=log)
        files = server.flush_and_collect(include_previous=True)
        cached = load_cached(w, kind) or _store(w, files, snapshot, server.version, seconds, kind)
        return server, cached, files
    except BaseException:
        server.stop()
        raise
