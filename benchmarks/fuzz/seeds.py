"""Seed inputs: real binlogs and real DDL, found wherever they are on this machine.

Binlogs: the golden fixtures (always, they are in the repository), ``../shared/corpus``, MariaDB's
``/usr/share/mysql/mysql-test`` and the mysql-testsuite ``std_data`` under the user cache (when present);
any file that starts with the binlog magic counts. DDL: the tracker's corpus (``tests/ddl_corpus``), the
statements of the QUERY events in those binlogs, and a stream from the seeded random DDL generator. The
same machine gives the same seeds in the same order, so (seed, index) names an input.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.fuzz import binlog as bl

REPO = Path(__file__).resolve().parents[2]
MAX_SEED_BYTES = 4 << 20


def binlog_roots() -> list[Path]:
    shared = Path(os.environ.get("BINLOG_MODEL_SHARED", REPO.parent / "shared"))
    if not shared.is_dir():
        shared = Path("/work/shared")
    return [
        REPO / "fixtures" / "golden",
        shared / "corpus",
        Path("/usr/share/mysql/mysql-test"),
        Path.home() / ".cache" / "binlog-model" / "mysql-testsuite" / "root" / "usr" / "lib" / "mysql-test",
    ]


def _binlog_files(root: Path) -> list[Path]:
    found = []
    for dirpath, _, names in os.walk(root):
        for name in names:
            path = Path(dirpath) / name
            try:
                if path.is_symlink() or not 24 <= path.stat().st_size <= MAX_SEED_BYTES:
                    continue
                with path.open("rb") as fh:
                    if fh.read(4) != bl.MAGIC:
                        continue
            except OSError:
                continue
            found.append(path)
    return sorted(found)


@dataclass
class Pools:
    binlogs: list[bytes] = field(default_factory=list)
    binlog_names: list[str] = field(default_factory=list)
    ddl: list[bytes] = field(default_factory=list)
    ddl_setup: list[str] = field(default_factory=list)

    def describe(self) -> dict[str, int]:
        return {"binlogs": len(self.binlogs), "binlog_bytes": sum(map(len, self.binlogs)),
                "ddl_statements": len(self.ddl)}


def load_pools(*, generated_ddl: int = 1500) -> Pools:
    pools = Pools()
    for root in binlog_roots():
        if not root.is_dir():
            continue
        for path in _binlog_files(root):
            data = path.read_bytes()
            pools.binlogs.append(data)
            pools.binlog_names.append(str(path))
            for event in bl.split(data).events:
                text = bl.query_text(event)
                if text and len(text) < 4096 and not text.lstrip()[:5].upper().startswith(b"BEGIN"):
                    pools.ddl.append(text)
    corpus = REPO / "tests" / "ddl_corpus"
    for sql_file in sorted(corpus.glob("*.sql")):
        from schema_tracker.ddl import split_statements

        pools.ddl.extend(s.encode("utf-8") for s in split_statements(sql_file.read_text("utf-8")))
    shapes = corpus / "tree_shapes.jsonl"
    if shapes.is_file():
        for line in shapes.read_text("utf-8").splitlines():
            if line.strip():
                pools.ddl.append(json.loads(line)["sql"].encode("utf-8"))
    from tests.ddl_random import _Gen

    gen = _Gen(16)
    pools.ddl_setup = ["CREATE DATABASE IF NOT EXISTS db", "USE db"] + [gen.step() for _ in range(40)]
    pools.ddl.extend(gen.step().encode("utf-8") for _ in range(generated_ddl))
    pools.ddl = sorted(set(pools.ddl))
    return pools
