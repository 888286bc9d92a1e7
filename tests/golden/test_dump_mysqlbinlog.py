"""``binlog-model dump`` against MySQL's own text: sid's ``mysqlbinlog -vv`` of the same MySQL 9 binlogs.

Compared: every ``###`` line (``### INSERT INTO``/``UPDATE``/``DELETE FROM``, ``### WHERE``/``### SET`` and
the ``###   @n=value /* TYPE meta=… nullable=… is_null=… */`` column lines), in order, of the MySQL golden
fixtures (``fixtures/golden/mysql/*``) and of one live binlog with the byte and number edges the fixtures
lack. ``mysqlbinlog`` runs from the same sid packages as the server (``mysql_tool``), with
``--base64-output=decode-rows -vv``.

The normalisation, applied before comparing (everything else must be equal character for character):

1. mysqlbinlog writes string bytes >= 0x80 raw; its output is read as UTF-8 with every byte that is not
   part of a UTF-8 sequence written ``\\xNN``, which is what ``dump`` prints for such bytes (so that its
   output stays text). UTF-8 text (utf8mb4 columns, JSON) is therefore compared as the characters.
2. FLOAT: mysqlbinlog prints ``%-20g`` (6 significant digits), which loses float32 values that need up to 9.
   ``dump`` prints the same text where 6 digits read back as the stored float32, and the fewest digits that
   do otherwise; such a value of ours is compared after formatting it with ``%-20g``.
3. YEAR 0 (``0000``): mysqlbinlog prints the stored byte plus 1900, i.e. ``1900``, a year the column cannot
   hold; ``dump`` prints ``0``. mysqlbinlog's ``1900`` for a YEAR column is read as ``0``.
4. Column types this mysqlbinlog cannot print (``!! Don't know how to handle column type=255`` for
   GEOMETRY): mysqlbinlog stops that row image there; our lines from that column to the end of the image are
   left out, and the type is recorded so that the test shows what was not compared.
5. A JSON document that is a string scalar: mysqlbinlog prints the string's characters without the JSON
   quotes (``'just a string'``); ``dump`` prints the JSON text (``'"just a string"'``), which tells it
   apart from other documents. Ours is compared with its quotes removed (for strings without escapes,
   the only kind the fixtures hold).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from binlog_model.commands.dump import render_event
from binlog_model.io.files import iter_events
from binlog_model.testing.golden import iter_fixture_dirs, read_meta
from tests._paths import REPO

MYSQL_GOLDEN = REPO / "fixtures" / "golden" / "mysql"

_UNKNOWN = re.compile(r"^###   @(\d+)=!! Don't know how to handle column type=(\d+)")
_JSON_STRING = re.compile(r"""^'"[^"\\]*"'$""")  # a JSON string scalar without escapes
_COLUMN = re.compile(r"^(###   @\d+=)(.*?)( /\* (\w+).*\*/)$")


class MysqlbinlogFailed(Exception):
    """mysqlbinlog exited non-zero (its stderr is the message)."""


def _mysqlbinlog() -> list[str]:
    from binlog_model.testing.mysql import mysql_available, mysql_tool

    ok, reason = mysql_available()
    if not ok:
        pytest.skip(reason)
    return mysql_tool("mysqlbinlog")


def theirs(files: list[Path]) -> list[str]:
    """mysqlbinlog -vv's ### lines, read as UTF-8 with stray bytes as \\xNN (normalisation 1 and 3).

    (mysqlbinlog prints a statement's row lines after its last rows event, so they are compared as one
    sequence, not per event.)"""
    done = subprocess.run([*_mysqlbinlog(), "-vv", "--base64-output=decode-rows", *map(str, files)],
                          capture_output=True, check=False, timeout=300)
    if done.returncode != 0:
        raise MysqlbinlogFailed(done.stderr.decode(errors="replace").strip())
    text = done.stdout.decode("utf-8", errors="backslashreplace")
    lines = []
    for line in text.splitlines():
        if not line.startswith("###"):
            continue
        match = _COLUMN.match(line)
        if match and match.group(4) == "YEAR" and match.group(2) == "1900":
            line = f"{match.group(1)}0{match.group(3)}"
        lines.append(line)
    return lines


def ours(files: list[Path]) -> list[list[str]]:
    """dump's ### lines per rows event, FLOAT values written as mysqlbinlog's %-20g (normalisation 2)."""
    events = []
    for event in iter_events(files):
        lines = []
        for line in render_event(event):
            if not line.startswith("###"):
                continue
            match = _COLUMN.match(line)
            if match and match.group(4) == "FLOAT" and match.group(2) != "NULL":
                line = f"{match.group(1)}{float(match.group(2)):<20g}{match.group(3)}"
            value = match.group(2) if match else ""
            if match and match.group(4) == "JSON" and _JSON_STRING.match(value):
                # normalisation 5: a string scalar without its JSON quotes
                line = f"{match.group(1)}'{value[2:-2]}'{match.group(3)}"
            lines.append(line)
        if lines:
            events.append(lines)
    return events


def compare(mine: list[list[str]], reference: list[str]) -> tuple[list[str], dict[str, int]]:
    """The differing lines (normalisation 4 applied) and the count of our lines, per column type, that
    mysqlbinlog could not print."""
    flat = [(index, line) for index, lines in enumerate(mine) for line in lines]
    diffs: list[str] = []
    not_compared: dict[str, int] = {}
    i = j = 0
    while i < len(reference) and j < len(flat):
        event, line = flat[j]
        unknown = _UNKNOWN.match(reference[i])
        if unknown:  # mysqlbinlog gives up on the rest of this rows event: skip ours to its end
            if not line.startswith(f"###   @{unknown.group(1)}="):
                diffs.append(f"line {j}: expected our column @{unknown.group(1)} here, got {line!r}")
            kind = f"type={unknown.group(2)}"
            while j < len(flat) and flat[j][0] == event:
                not_compared[kind] = not_compared.get(kind, 0) + 1
                j += 1
            i += 1
            continue
        if reference[i] != line:
            diffs.append(f"line {j} (rows event {event}):\n  mysqlbinlog: {reference[i]}\n"
                         f"  dump:        {line}")
        i += 1
        j += 1
    if i < len(reference) or j < len(flat):
        diffs.append(f"lengths differ: mysqlbinlog {len(reference)} lines (at {i}), "
                     f"dump {len(flat)} (at {j})")
    return diffs, not_compared


def _binlogs(fixture: Path) -> list[Path]:
    return [fixture / "binlogs" / b["name"] for b in read_meta(fixture)["binlogs"]]


@pytest.mark.parametrize("fixture", [pytest.param(d, id=d.name) for d in iter_fixture_dirs(MYSQL_GOLDEN)])
def test_dump_rows_equal_mysqlbinlog_on_mysql_fixtures(fixture: Path) -> None:
    files = _binlogs(fixture)
    reference, mine = theirs(files), ours(files)
    diffs, not_compared = compare(mine, reference)
    assert not diffs, f"{len(diffs)} differing lines in {fixture.name}:\n" + "\n".join(diffs[:20])
    assert sum(line.startswith("###   @") for lines in mine for line in lines) > 0
    # Only GEOMETRY (255) is beyond this mysqlbinlog, and only all_types has geometry values.
    assert set(not_compared) <= {"type=255"}
    assert bool(not_compared) == (fixture.name == "all_types")


def test_the_comparison_sees_a_difference() -> None:
    """The comparison is not blind: a changed value and a dropped line are reported."""
    files = _binlogs(MYSQL_GOLDEN / "pk_updates")
    reference, mine = theirs(files), ours(files)
    assert compare(mine, reference) == ([], {})
    event = next(k for k, lines in enumerate(mine) if any(line.startswith("###   @1=") for line in lines))
    at = next(k for k, line in enumerate(mine[event]) if line.startswith("###   @1="))
    changed = [list(lines) for lines in mine]
    changed[event][at] = changed[event][at].replace("@1=", "@1=9", 1)
    diffs, _ = compare(changed, reference)
    assert len(diffs) == 1 and f"(rows event {event})" in diffs[0] and "@1=9" in diffs[0]
    diffs, _ = compare([*mine[:-1], mine[-1][:-1]], reference)
    assert diffs == [f"lengths differ: mysqlbinlog {len(reference)} lines (at {len(reference) - 1}), "
                     f"dump {len(reference) - 1} (at {len(reference) - 1})"]


def test_dump_rows_equal_mysqlbinlog_on_byte_and_number_edges(tmp_path: Path) -> None:
    """Every byte value in a VARBINARY, float32 values that need more than 6 digits, YEAR 0, signed and
    unsigned extremes, BIT, SET, DECIMAL zero, TIME(3)/DATETIME(3)/TIMESTAMP(3) and VECTOR (a value and
    NULL) on a fresh MySQL 9."""
    _mysqlbinlog()
    from binlog_model.testing.mysql import MySQLServer

    with MySQLServer(row_image="FULL", row_metadata="FULL") as server:
        server.execute(["CREATE DATABASE edges", "USE edges", """CREATE TABLE t (
            id INT PRIMARY KEY, b VARBINARY(300), f FLOAT, y YEAR, ti TINYINT, tu TINYINT UNSIGNED,
            bu BIGINT UNSIGNED, bit5 BIT(5), s SET('a','b','c','d','e','f','g','h','i'), d DECIMAL(10,4),
            t3 TIME(3), dt3 DATETIME(3), ts3 TIMESTAMP(3) NULL, e ENUM('x','y'), v VECTOR(3))"""])
        server.reset_binlogs()
        conn = server.connect("edges")
        try:
            with conn.cursor() as cur:
                cur.execute("INSERT INTO t VALUES (1, %s, 16777217, 0, -128, 255, 18446744073709551615,"
                            " b'10101', 'a,i', 0, '-00:00:01.500', '2020-01-02 03:04:05.006',"
                            " '1970-01-01 00:00:01.5', 'y', TO_VECTOR('[1.5,-2,123456789]'))",
                            (bytes(range(256)),))
                cur.execute("INSERT INTO t VALUES (2, '', 1.2345678, 1901, 127, 0, 0, b'0', '', -0.0001,"
                            " '838:59:59', '1000-01-01 00:00:00', NULL, NULL, NULL)")
                cur.execute("UPDATE t SET f = 0.1, ti = -1, bu = 9223372036854775808, y = 2155 WHERE id = 2")
            conn.commit()
        finally:
            conn.close()
        files = server.flush_and_collect(tmp_path)
    reference, mine = theirs(files), ours(files)
    diffs, not_compared = compare(mine, reference)
    assert not diffs, "\n".join(diffs[:20])
    assert not not_compared
    text = "\n".join(line for lines in mine for line in lines)
    assert "@5=-128 (128) /* TINYINT" in text and "@6=-1 (255) /* TINYINT" in text
    assert "@8=b'10101' /* BIT(5)" in text and "@9=b'0000000100000001' /* SET(2 bytes)" in text
    assert "@10=0.0000 /* DECIMAL(10,4)" in text and "@11='-00:00:01.500' /* TIME(3)" in text
    assert "@13=1.500 /* TIMESTAMP(3)" in text and "@4=0 /* YEAR" in text
    assert "@15=[1.50000e+00,-2.00000e+00,1.23457e+08] /* VECTOR(3)" in text
    assert "@15=NULL /* VECTOR(3)" in text
    # our own text keeps the float32 exactly where mysqlbinlog's 6 digits lose it
    (own,) = [line for event in iter_events(files) for line in render_event(event)
              if line.startswith("###   @3=16777216")]
    assert re.match(r"###   @3=16777216 +/\* FLOAT", own)


def test_dump_rows_equal_mysqlbinlog_on_mysql_test_suite_binlogs() -> None:
    """MySQL's own std_data binlogs (servers 5.0 to 9.0, package mysql-testsuite): wherever both tools read
    a file to its end, the row lines are equal. Files one of them refuses are listed, not compared (the
    typed errors of ours are the test-data issue's subject)."""
    from binlog_model.errors import BinlogError
    from binlog_model.testing.mysql import mysql_test_dir
    from binlog_model.testing.sqlserver import HarnessError

    _mysqlbinlog()
    try:
        root = mysql_test_dir()
    except HarnessError as err:
        pytest.skip(f"no mysql-testsuite: {err}")
    binlogs = sorted(p for p in root.rglob("*") if "std_data" in p.parts and p.is_file()
                     and p.open("rb").read(4) == b"\xfebin")
    assert len(binlogs) >= 40
    compared, refused, rows = 0, {}, 0
    for path in binlogs:
        name = path.relative_to(root).as_posix()
        try:
            mine = ours([path])
        except BinlogError as err:
            refused[name] = f"dump: {type(err).__name__}"
            continue
        try:
            reference = theirs([path])
        except MysqlbinlogFailed as err:
            refused[name] = f"mysqlbinlog: {str(err).splitlines()[0]}"
            continue
        diffs, not_compared = compare(mine, reference)
        assert not diffs, f"{name}:\n" + "\n".join(diffs[:20])
        assert not not_compared, name
        compared += 1
        rows += sum(line.startswith("###   @") for lines in mine for line in lines)
    assert compared >= 45 and rows >= 150, (compared, rows, refused)


def test_dump_rows_equal_mysqlbinlog_on_compressed_minimal_image(tmp_path: Path) -> None:
    """zstd TRANSACTION_PAYLOAD events (binlog_transaction_compression=ON) and MINIMAL images / metadata:
    the rows inside the payloads and the columns each image leaves out come out as mysqlbinlog's."""
    _mysqlbinlog()
    from binlog_model.testing.mysql import MySQLServer

    with MySQLServer(row_image="MINIMAL", row_metadata="MINIMAL", transaction_compression=True) as server:
        server.execute(["CREATE DATABASE c", "CREATE TABLE c.t (id INT PRIMARY KEY, a VARCHAR(10), n INT,"
                        " d DECIMAL(5,2))"])
        server.reset_binlogs()
        server.execute(["INSERT INTO c.t VALUES (1, 'a', -5, 1.5), (2, 'b', NULL, 0)",
                        "UPDATE c.t SET n = -7 WHERE id = 1", "DELETE FROM c.t WHERE id = 2"])
        files = server.flush_and_collect(tmp_path)
    assert any(e.header.type_name == "TRANSACTION_PAYLOAD_EVENT" for e in iter_events(files))
    reference, mine = theirs(files), ours(files)
    assert compare(mine, reference) == ([], {})
    assert reference[-8:] == [
        "### UPDATE `c`.`t`", "### WHERE", "###   @1=1 /* INT meta=0 nullable=0 is_null=0 */",
        "### SET", "###   @3=-7 (4294967289) /* INT meta=0 nullable=1 is_null=0 */",
        "### DELETE FROM `c`.`t`", "### WHERE", "###   @1=2 /* INT meta=0 nullable=0 is_null=0 */"]
