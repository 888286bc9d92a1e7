"""One DDL pass on binlogs a live server writes now: MySQL 9.7's tagged GTIDs (``uuid:tag:n``) and the
server charset taken from ``collation_server`` come out the same from the ``schema`` CLI, the library and
the Spark pre-pass, and as the assembler records them while decoding."""

from __future__ import annotations

from typing import Any

from tests._histories import three_histories


def test_three_callers_keep_gtid_tags_and_adopt_the_server_charset(server: Any, fresh_db: str) -> None:
    mysql = server.family == "MySQL"
    tagged = ["SET gtid_next = 'AUTOMATIC:ddlpass'", "ALTER TABLE t ADD COLUMN c int",
              "SET gtid_next = 'AUTOMATIC'"] if mysql else ["ALTER TABLE t ADD COLUMN c int"]
    server.flush_and_collect()
    conn = server.connect(fresh_db)
    try:
        with conn.cursor() as cur:
            for sql in ["CREATE TABLE t (id int PRIMARY KEY, b varchar(3))", "INSERT INTO t VALUES (1, 'x')",
                        *tagged, "INSERT INTO t VALUES (2, 'y', 3)", "ALTER TABLE t DROP COLUMN b"]:
                cur.execute(sql)
    finally:
        conn.close()
    files = server.flush_and_collect()
    docs = three_histories(files)
    reference = docs["assembler"]
    for name, doc in docs.items():
        assert doc == reference, f"{name} differs from the assembler's history"
    mine = [e for e in reference["entries"] if e["default_db"] == fresh_db]
    assert [e["statement"].split()[0] for e in mine] == ["CREATE", "ALTER", "ALTER"]
    if mysql:
        uuid = server.query("SELECT @@server_uuid")[0][0]
        assert mine[1]["gtid"].startswith(f"{uuid}:ddlpass:")      # the tag is kept
        assert mine[0]["gtid"].startswith(f"{uuid}:") and mine[0]["gtid"].count(":") == 1
    else:
        assert all(e["gtid"].startswith("0-") for e in mine)       # domain-server-sequence
    # no snapshot: the server's own default charset, from the QUERY events' collation_server
    assert reference["initial"]["server_charset"] == server.query("SELECT @@character_set_server")[0][0]
