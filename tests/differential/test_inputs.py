"""One way to name inputs (issue 42): ``events``, ``dump`` and ``schema`` take files, folders and globs, in
rotation order, passing over the server's ``.index`` and ``.idx`` files (a shell's ``$DATADIR/binlog.*``
names them too), through the one expansion ``io.files.expand_paths``; and ``schema --sql`` reads a
one-database dump's database from its header, as ``--snapshot`` does.

Inputs: a server's own binlog folder (MariaDB 10.11, MariaDB 11.8 with its ``.idx`` GTID indexes, MySQL 9.7
with ``binlog.NNNNNN``), and a real ``--no-data`` dump of one database.
"""

from __future__ import annotations

import glob
import shutil
import subprocess
from pathlib import Path

import pytest

from binlog_model.cli import main
from binlog_model.testing.localserver import LocalServer
from binlog_model.testing.mariadb import MariaDBServer


def _output(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    status = main(argv)
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return captured.out


def test_commands_take_folders_globs_and_a_shell_expanded_datadir(
        server: LocalServer, fresh_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server.execute([f"CREATE TABLE `{fresh_db}`.t (id INT PRIMARY KEY, s VARCHAR(10))",
                    f"INSERT INTO `{fresh_db}`.t VALUES (1, 'a')", "FLUSH BINARY LOGS",
                    f"UPDATE `{fresh_db}`.t SET s = 'b' WHERE id = 1"])
    server.flush_and_collect(tmp_path / "ignored")          # the active file closed too
    # a copy of the server's own binlog folder: binlogs, the .index list and, on MariaDB 11.8, .idx files
    datadir = tmp_path / "datadir"
    shutil.copytree(server.binlog_dir, datadir,
                    ignore=lambda d, names: [n for n in names if not n.startswith(server.binlog_basename)])
    side = [p.name for p in datadir.iterdir() if p.suffix in (".index", ".idx")]
    assert f"{server.binlog_basename}.index" in side
    binlogs = sorted(str(p) for p in datadir.iterdir() if p.suffix not in (".index", ".idx"))
    shell = sorted(glob.glob(str(datadir / f"{server.binlog_basename}.*")))   # as bash expands it
    assert len(shell) > len(binlogs) >= 2

    for command in (["events"], ["dump"], ["schema"]):
        expected = _output([*command, *binlogs], capsys)
        assert fresh_db in expected
        assert _output([*command, str(datadir)], capsys) == expected
        assert _output([*command, *shell], capsys) == expected
        assert _output([*command, str(datadir / f"{server.binlog_basename}.*")], capsys) == expected
        assert _output([*command, *reversed(binlogs)], capsys) == expected        # rotation order

    assert main(["events", str(tmp_path / "nothing-*")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no binlog files match" in err and "give binlog files" in err


def test_schema_sql_reads_the_database_from_the_dump_header(mariadb: MariaDBServer, mariadb_db: str,
                                                            tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    mariadb.execute(f"CREATE TABLE `{mariadb_db}`.items (id INT PRIMARY KEY, name VARCHAR(20))")
    dump = subprocess.run([*mariadb.dump_command(), "--no-data", f"--socket={mariadb.socket}", "--user=root",
                           mariadb_db], capture_output=True, check=True).stdout
    assert b"\nUSE " not in dump and f"Database: {mariadb_db}".encode() in dump
    (tmp_path / "schema.sql").write_bytes(dump)
    out = _output(["schema", "--sql", str(tmp_path / "schema.sql")], capsys)
    assert f"{mariadb_db}.items (" in out and "`name` varchar(20)" in out
    # --database still wins over the header
    out = _output(["schema", "--sql", str(tmp_path / "schema.sql"), "--database", "other"], capsys)
    assert "other.items (" in out
