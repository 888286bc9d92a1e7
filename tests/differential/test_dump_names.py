"""``dump`` labels row values with their column names where they are known (issue 42): from the TABLE_MAP's
optional metadata (``binlog_row_metadata=FULL``), or from a ``--snapshot`` that follows the binlog's DDL; and
with ``mysqlbinlog``'s ``@N`` where they are not (``MINIMAL`` metadata, no snapshot). On MariaDB 10.11,
MariaDB 11.8 and MySQL 9.7, with a real ``--no-data`` dump of the server's own tool.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from binlog_model.cli import main
from binlog_model.testing.localserver import LocalServer

_VALUE = re.compile(r"^###   (`[^`]*`|\S+?)=(\S+) /\*", re.M)


def _labels(out: str) -> list[tuple[str, str]]:
    return _VALUE.findall(out)


def test_dump_names_columns_where_known(server: LocalServer, fresh_db: str, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    server.execute(f"CREATE TABLE `{fresh_db}`.t (id INT PRIMARY KEY, `odd name` INT)")
    dump = subprocess.run([*server.dump_command(), "--no-data", f"--socket={server.socket}", "--user=root",
                           fresh_db], capture_output=True, check=True).stdout
    (tmp_path / "schema.sql").write_bytes(dump)
    server.flush_and_collect(tmp_path / "before")
    server.execute("SET GLOBAL binlog_row_metadata = 'MINIMAL'")
    try:
        server.execute([f"INSERT INTO `{fresh_db}`.t VALUES (1, 10)",
                        f"ALTER TABLE `{fresh_db}`.t ADD COLUMN extra INT",
                        f"INSERT INTO `{fresh_db}`.t VALUES (2, 20, 200)"])
    finally:
        server.execute("SET GLOBAL binlog_row_metadata = 'FULL'")
    server.execute(f"INSERT INTO `{fresh_db}`.t VALUES (3, 30, 300)")
    files = [str(f) for f in server.flush_and_collect(tmp_path / "binlogs")]

    assert main(["dump", *files]) == 0
    plain = _labels(capsys.readouterr().out)
    # MINIMAL: mysqlbinlog's @N; FULL (the last insert): the names the TABLE_MAP carries
    assert plain == [("@1", "1"), ("@2", "10"), ("@1", "2"), ("@2", "20"), ("@3", "200"),
                     ("id", "3"), ("`odd name`", "30"), ("extra", "300")]

    assert main(["dump", *files, "--snapshot", str(tmp_path / "schema.sql")]) == 0
    named = capsys.readouterr()
    # the snapshot names the MINIMAL rows, and follows the ALTER for the second one
    assert _labels(named.out) == [("id", "1"), ("`odd name`", "10"), ("id", "2"), ("`odd name`", "20"),
                                  ("extra", "200"), ("id", "3"), ("`odd name`", "30"), ("extra", "300")]
    assert named.err == ""
