"""Every code block of the README and of docs/ runs, so the docs cannot rot.

Each fenced block must say what it is: ``python`` and ``bash`` blocks run; ``text`` (diagrams, output,
command synopses) does not; a runnable block that must not run here carries
``<!-- docs-test: skip (reason) -->`` on the line before it. Blocks under a heading about running on a
cluster need one (spark-submit, object stores) and are skipped with that reason.

The blocks of one file run in order in one sandbox folder, in a fresh interpreter started there (as a
user's script: a Spark example starts its own JVM in that folder), sharing one Python namespace (Spark
examples reuse the quick start's session), with ``binlog-model`` on the PATH. The sandbox holds what the
examples name: ``ppc-schema.sql``, a real ``--no-data`` dump of the database ``ppc`` (one database: no
USE line), and ``binlogs/``, the binlog files a MariaDB wrote after that dump (spec-like DML on
``ppc.campaigns`` in two files), named as MySQL 8+ names them (``binlog.000001``), as the README's examples
do.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from binlog_model.testing.mariadb import MariaDBServer, mariadb_available
from tests._paths import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
RUNNABLE = ("python", "bash")
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
_SKIP = re.compile(r"<!-- docs-test: skip \((.+?)\) -->\s*$")


@dataclass
class Block:
    doc: Path
    line: int
    lang: str
    code: str
    skip: str | None

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(REPO)}:{self.line}"


def blocks(doc: Path) -> list[Block]:
    text = doc.read_text(encoding="utf-8")
    found = []
    for m in _FENCE.finditer(text):
        before = text[:m.start()]
        line = before.count("\n") + 1
        previous = before.rstrip("\n").rsplit("\n", 1)[-1]
        skip = _SKIP.search(previous)
        prose = _FENCE.sub("", before)          # a "# comment" inside a code block is no heading
        heading = next((h for h in reversed(re.findall(r"(?m)^#+ .*$", prose))), "")
        reason = skip.group(1) if skip else ("needs a cluster" if "cluster" in heading.lower() else None)
        found.append(Block(doc, line, m.group(1), m.group(2), reason))
    return found


ALL = [b for doc in DOCS for b in blocks(doc)]


@pytest.mark.parametrize("block", ALL, ids=lambda b: b.where)
def test_every_block_says_what_it_is(block: Block) -> None:
    assert block.skip or block.lang in (*RUNNABLE, "text", "proto", "json"), (
        f"{block.where}: fence the block as ```python/```bash (it runs) or ```text (it does not)")


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ok, reason = mariadb_available()
    if not ok:
        pytest.skip(f"no local MariaDB: {reason}")
    root = tmp_path_factory.mktemp("docs")
    server = MariaDBServer(row_image="FULL", row_metadata="FULL")
    server.binlog_basename = "binlog"           # MySQL 8+'s names, which the README's examples use
    with server:
        server.execute(["CREATE DATABASE ppc",
                        "CREATE TABLE ppc.campaigns (cid INT UNSIGNED NOT NULL PRIMARY KEY, name TEXT, "
                        "currency ENUM('RUB','UAH','USD','EUR') NOT NULL, geo TEXT, shows INT, clicks INT)"])
        dump = subprocess.run([*server.dump_command(), "--no-data", f"--socket={server.socket}",
                               "--user=root", "ppc"], capture_output=True, check=True)
        (root / "ppc-schema.sql").write_bytes(dump.stdout)
        server.flush_and_collect()      # the archive starts after the dump
        server.execute(["INSERT INTO ppc.campaigns VALUES (1, 'one', 'RUB', 'x', 10, 1), "
                        "(2, 'two', 'USD', NULL, 20, 2)",
                        "UPDATE ppc.campaigns SET clicks = 777, geo = NULL WHERE cid = 1"])
        server.flush_and_collect(root / "binlogs")
        server.execute(["INSERT INTO ppc.campaigns VALUES (3, 'three', 'EUR', 'y', 30, 3)",
                        "DELETE FROM ppc.campaigns WHERE cid = 2"])
        server.flush_and_collect(root / "binlogs")
    bin_dir = root / ".bin"
    bin_dir.mkdir()
    shim = bin_dir / "binlog-model"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m binlog_model.cli "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    return root


# Runs a doc's blocks in order in a fresh interpreter started in the sandbox (so a Spark example starts its
# own JVM there, as a user's script would): python blocks share one namespace, bash blocks run in bash.
_RUNNER = """
import json, subprocess, sys
namespace = {"__name__": "__docs__"}
for where, lang, code in json.load(open(sys.argv[1])):
    print(f"--- {where}", flush=True)
    if lang == "bash":
        subprocess.run(["bash", "-euo", "pipefail", "-c", code], check=True)
    else:
        exec(compile(code, where, "exec"), namespace)
    sys.stdout.flush()
"""


def _run_doc(doc: Path, sandbox: Path, tmp_path: Path) -> tuple[list[str], str]:
    work = tmp_path / "work"
    shutil.copytree(sandbox, work)
    env = {**os.environ, "PATH": f"{work / '.bin'}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           # As in an activated virtualenv: Spark's Python workers run this interpreter.
           "PYSPARK_PYTHON": sys.executable}
    runnable = [b for b in blocks(doc) if b.lang in RUNNABLE and not b.skip]
    plan = tmp_path / "blocks.json"
    plan.write_text(json.dumps([[b.where, b.lang, b.code] for b in runnable]))
    runner = tmp_path / "runner.py"
    runner.write_text(_RUNNER)
    done = subprocess.run([sys.executable, str(runner), str(plan)], cwd=work, env=env, capture_output=True,
                          text=True, timeout=1200, check=False)
    assert done.returncode == 0, f"{doc.name} blocks failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return [b.where for b in runnable], done.stdout


def test_readme_blocks_run(sandbox: Path, tmp_path: Path) -> None:
    ran, out = _run_doc(REPO / "README.md", sandbox, tmp_path)
    assert len(ran) >= 4, ran
    assert '"operation":"UPDATE"' in out            # the library example printed events
    assert "events;" in out and "currency" in out    # the worked example read them back
    parts = sorted((tmp_path / "work" / "events").iterdir())
    assert [p.name for p in parts] == ["part-000001.jsonl"]
    assert (tmp_path / "work" / "my-fixtures" / "my_scenario" / "expected.jsonl").is_file()


@pytest.mark.spark
def test_spark_doc_blocks_run(sandbox: Path, tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    from binlog_model.spark.session import check_java
    check_java()
    ran, out = _run_doc(REPO / "docs" / "spark.md", sandbox, tmp_path)
    assert len(ran) >= 2, ran
    assert "INSERT" in out and "cid" in out
    assert any((tmp_path / "work" / "tables" / "db=ppc" / "table=campaigns").glob("run-000001-*.parquet"))
    # The streaming examples: a batch per file, published into the table folder.
    assert "2 batches, 5 row changes" in out
    assert any((tmp_path / "work" / "live-tables" / "db=ppc" / "table=campaigns").glob("batch-*.parquet"))


@pytest.mark.spark
def test_replica_doc_blocks_run(sandbox: Path, tmp_path: Path) -> None:
    """docs/replica.md: ``apply`` over the sandbox's binlogs, read back with deltalake and with Spark."""
    pytest.importorskip("deltalake")
    pytest.importorskip("pyspark")
    from binlog_model.spark.session import check_java
    check_java()
    ran, out = _run_doc(REPO / "docs" / "replica.md", sandbox, tmp_path)
    assert len(ran) == 3, ran
    assert "'cid': 1" in out and "'cid': 3" in out and "'cid': 2" not in out     # 2 was deleted
    assert (tmp_path / "work" / "replica" / "ppc" / "campaigns" / "_delta_log").is_dir()


def test_other_docs_have_no_runnable_blocks_left_untested() -> None:
    tested = {REPO / "README.md", REPO / "docs" / "spark.md", REPO / "docs" / "replica.md"}
    for doc in DOCS:
        if doc in tested:
            continue
        runnable = [b.where for b in blocks(doc) if b.lang in RUNNABLE and not b.skip]
        assert not runnable, f"runnable blocks in a doc no test runs: {runnable}"
