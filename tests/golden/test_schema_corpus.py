"""Acceptance 3: the DDL in every binlog and SQL file of ../shared/corpus replays without an error.

SQL files: each is replayed statement by statement (following USE). Two files are mysql client transcripts
(``mysql> `` prompts and result tables), not SQL: fed raw they raise ``UnsupportedDDLError`` naming the
prompt (tested), and their statements, cut out of the transcript, replay cleanly.

Binlogs: every file that starts with the binlog magic is read with ``iter_events`` in a DDL-only pass
(rows skipped) and every QUERY event is applied. MariaDB's own test binlogs (mariadb-test-data) are
replayed as well; the few that are deliberately corrupt or encrypted raise the decoder's typed errors,
which are listed here by name with their reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from binlog_model.errors import (
    ChecksumMismatchError,
    EncryptedBinlogError,
    TruncatedEventError,
    UnsupportedDDLError,
)
from binlog_model.io.files import iter_events
from binlog_model.io.snapshots import read_sql_text
from binlog_model.resolve.assembler import replay_ddl
from binlog_model.resolve.ddl_pass import DDL_SKIP_TYPES
from schema_tracker.history import SchemaHistory
from tests._paths import CORPUS

MARIADB_TEST = Path("/usr/share/mysql/mysql-test")
MAGIC = b"\xfebin"

# Deliberately broken files in mariadb-test-data: the decoder refuses them before any DDL matters.
EXPECTED_DECODE_ERRORS = {
    "binlog_before_20574.bin": EncryptedBinlogError,  # an encrypted binlog
    "bug11747416_32228_binlog.000001": TruncatedEventError,  # cut short inside a rows event
    "corrupt-relay-bin.000624": TruncatedEventError,  # a corrupt QUERY event (the test's purpose)
    "mdev-39404-binlog.000001": ChecksumMismatchError,  # a zeroed CRC32
}


def _files(root: Path, pattern: str) -> list[Path]:
    return sorted(p for p in root.rglob(pattern) if p.is_file()) if root.exists() else []


def _binlogs(root: Path) -> list[Path]:
    out = []
    for p in _files(root, "*"):
        if p.stat().st_size < 5_000_000:
            with p.open("rb") as fh:
                if fh.read(4) == MAGIC:
                    out.append(p)
    return out


SQL_FILES = _files(CORPUS, "*.sql")
CORPUS_BINLOGS = _binlogs(CORPUS)
MARIADB_BINLOGS = _binlogs(MARIADB_TEST)


def _transcript_statements(text: str) -> str:
    """The statements typed at ``mysql>`` prompts (continuation lines up to the closing ``;``)."""
    out, inside = [], False
    for line in text.splitlines():
        if line.startswith("mysql> "):
            line, inside = line[len("mysql> "):], True
        if inside:
            out.append(line)
            if line.rstrip().endswith(";"):
                inside = False
    return "\n".join(out)


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(p.parents[2])) for p in paths]


@pytest.mark.skipif(not SQL_FILES, reason=f"shared corpus not found: {CORPUS}")
@pytest.mark.parametrize("path", SQL_FILES, ids=_ids(SQL_FILES))
def test_corpus_sql_file_replays(path: Path) -> None:
    text = read_sql_text(path)
    history = SchemaHistory()
    if "mysql> " in text:
        with pytest.raises(UnsupportedDDLError, match="unrecognised statement MYSQL"):
            SchemaHistory().apply_script(text, "test", source=path.name)
        text = _transcript_statements(text)
    history.apply_script(text, "test", source=path.name)
    if "CREATE TABLE" in text.upper():
        assert any(True for _ in history.catalog.iter_tables()), "a CREATE TABLE left no table behind"


@pytest.mark.skipif(not CORPUS_BINLOGS, reason=f"shared corpus not found: {CORPUS}")
@pytest.mark.parametrize("path", CORPUS_BINLOGS, ids=_ids(CORPUS_BINLOGS))
def test_corpus_binlog_ddl_replays(path: Path) -> None:
    history = SchemaHistory()
    replay_ddl(iter_events([path], skip_types=DDL_SKIP_TYPES), history)
    for entry in history:
        assert entry.position is not None and entry.position.file == path.name


@pytest.mark.skipif(not MARIADB_BINLOGS, reason=f"mariadb-test-data not installed: {MARIADB_TEST}")
@pytest.mark.parametrize("path", MARIADB_BINLOGS, ids=[p.name for p in MARIADB_BINLOGS])
def test_mariadb_test_binlog_ddl_replays(path: Path) -> None:
    history = SchemaHistory()
    events = iter_events([path], skip_types=DDL_SKIP_TYPES)
    expected = EXPECTED_DECODE_ERRORS.get(path.name)
    if expected is None:
        replay_ddl(events, history)
    else:
        with pytest.raises(expected):
            replay_ddl(events, history)


def test_corpus_has_ddl_that_was_tracked() -> None:
    if not CORPUS_BINLOGS:
        pytest.skip(f"shared corpus not found: {CORPUS}")
    tables = set()
    for path in CORPUS_BINLOGS:
        history = SchemaHistory()
        replay_ddl(iter_events([path], skip_types=DDL_SKIP_TYPES), history)
        tables |= {t.qualified_name for t in history.catalog.iter_tables()}
    assert "test.int_table" in tables  # from mysql-cdc-rs 8.0 CREATE TABLE events
