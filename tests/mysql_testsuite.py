"""DDL statements taken from MySQL's own test suite (``mysql-testsuite``'s ``.test`` files).

Strategy: a ``.test`` file is a mysqltest script: SQL statements end with the current delimiter, and
mysqltest's own commands (``--error``, ``let``, ``if (…) { … }``, ``perl; … EOF`` …) sit between them.
``extract_statements`` drops every mysqltest command and block, every statement that uses a mysqltest
variable (``$x``), and keeps the SQL statements that can change a schema (CREATE, ALTER, DROP, RENAME,
TRUNCATE) plus the session settings and ``USE`` they depend on. Statements that would change the server
rather than the session (SET GLOBAL, anything on the ``mysql``/``sys`` schemas, replication, shutdown)
are dropped, so one server can run many files in a row. ``ddl_heavy_files`` ranks files by how many
schema statements they hold.

Nothing here is copied into the repository: the files are read from the package cache at run time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

__all__ = ["SUITES", "ddl_heavy_files", "extract_statements", "mysql_testsuite_root"]

# The suites the differential draws from (``main`` is the top-level ``t/`` folder).
SUITES = ("main", "innodb", "parts", "binlog", "rpl")

# mysqltest's own commands (first word of a statement written without ``--``).
_MYSQLTEST_COMMANDS = frozenset({
    "append_file", "assert", "cat_file", "change_user", "character_set", "chmod", "connect", "connection",
    "copy_file", "copy_files_wildcard", "dec", "delimiter", "die", "diff_files", "dirty_close",
    "disable_abort_on_error", "disable_async_client", "disable_connect_log", "disable_info",
    "disable_metadata", "disable_parsing", "disable_ps_protocol", "disable_query_log", "disable_reconnect",
    "disable_result_log", "disable_rpl_parse", "disable_session_track_info", "disable_testcase",
    "disable_warnings", "disconnect", "echo", "enable_abort_on_error", "enable_async_client",
    "enable_connect_log", "enable_info", "enable_metadata", "enable_parsing", "enable_ps_protocol",
    "enable_query_log", "enable_reconnect", "enable_result_log", "enable_rpl_parse",
    "enable_session_track_info", "enable_testcase", "enable_warnings", "end", "end_timer", "error", "eval",
    "exec", "exec_in_background", "execw", "exit", "expr", "file_exists", "force-cpdir", "force-rmdir",
    "horizontal_results", "if", "inc", "let", "list_files", "list_files_append_file",
    "list_files_write_file", "lowercase_result", "mkdir", "move_file", "output", "partially_sorted_result",
    "perl", "ping", "query", "query_attributes", "query_get_value", "query_horizontal", "query_vertical",
    "real_sleep", "reap", "remove_file", "remove_files_wildcard", "replace_column", "replace_numeric_round",
    "replace_regex", "replace_result", "reset_connection", "result_format", "rmdir", "save_master_pos",
    "send", "send_eval", "send_quit", "send_shutdown", "shutdown_server", "skip", "skip_if_hypergraph",
    "sleep", "sorted_result", "source", "start_timer", "sync_slave_with_master", "sync_with_master",
    "system", "vertical_results", "wait_for_slave_to_stop", "while", "write_file"
})

# Leading keywords of the statements kept.
_KEPT_FIRST = frozenset({"CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE", "USE", "SET"})
# Words that make a statement unsafe on a shared server, or outside what the differential measures.
_UNSAFE = re.compile(
    r"\b(GLOBAL|PERSIST|PERSIST_ONLY|@@GLOBAL|SQL_LOG_BIN|GTID_NEXT|GTID_PURGED|DEBUG|DEBUG_SYNC|"
    r"REPLICA|SLAVE|MASTER|SOURCE|SHUTDOWN|RESTART|CLONE|KEYRING|"
    r"MYSQL\s*\.|`MYSQL`\s*\.|SYS\s*\.|PERFORMANCE_SCHEMA|INFORMATION_SCHEMA|DATABASE\s+(IF\s+EXISTS\s+)?"
    r"`?(MYSQL|SYS)`?\b|SCHEMA\s+(IF\s+EXISTS\s+)?`?(MYSQL|SYS)`?\b|"
    r"PSEUDO_\w+|TIMESTAMP\s*=|SERVER_ID|BINLOG_FORMAT|SESSION_TRACK\w*|"
    r"SPATIAL\s+REFERENCE\s+SYSTEM|RESOURCE\s+GROUP|LOGFILE\s+GROUP|UNDO\s+TABLESPACE|COMPONENT|"
    r"PLUGIN|FUNCTION\s+\w+\s+RETURNS|SONAME|ENCRYPTION\s*=\s*'Y'|DEFAULT_TABLE_ENCRYPTION|"
    r"TABLE_ENCRYPTION_PRIVILEGE_CHECK|FOREIGN_KEY_CHECKS\s*=\s*0|LOAD_FILE|BINLOG_\w+)",
    re.IGNORECASE)


# Account statements: the tracker ignores them (tests/differential/test_schema_mysql_forms.py checks that),
# and some
# files change root's own password or lock it, which would shut the run out of its server. Also USE of a
# system schema: its tables are the server's own, outside what a binlog consumer tracks.
_ACCOUNTS = re.compile(r"^\s*(CREATE|ALTER|DROP|RENAME)\s+(USER|ROLE)\b|\bROOT\b|"
                       r"^\s*USE\s+`?(mysql|sys|performance_schema|information_schema)`?\s*$", re.IGNORECASE)


def mysql_testsuite_root() -> Path | None:
    """The unpacked ``usr/lib/mysql-test`` of sid's pinned mysql-testsuite package, or None when absent."""
    from binlog_model.testing.sid import pinned_root

    root = pinned_root("mysql-testsuite") / "usr/lib/mysql-test"
    return root if (root / "t").is_dir() else None


def _suite_dirs(root: Path, suites: Iterable[str]) -> list[Path]:
    return [root / "t" if s == "main" else root / "suite" / s / "t" for s in suites]


_DDL_LINE = re.compile(rb"^[ \t]*(?:create|alter|drop|rename|truncate)\b(?![ \t]+(?:user|role)\b)",
                       re.IGNORECASE | re.MULTILINE)


def ddl_heavy_files(root: Path, suites: Iterable[str] = SUITES, limit: int = 300) -> list[Path]:
    """The ``limit`` files of ``suites`` with the most lines starting a schema statement (ties by path),
    so the selection is stable for a given test-suite version."""
    scored = []
    for folder in _suite_dirs(root, suites):
        for path in sorted(folder.glob("*.test")):
            n = len(_DDL_LINE.findall(path.read_bytes()))
            if n:
                scored.append((-n, str(path.relative_to(root)), path))
    scored.sort()
    return [p for _, _, p in scored[:limit]]


class _Splitter:
    """Cuts text fed line by line at the delimiter outside quotes and comments (linear: the quote and
    comment state is kept between lines)."""

    def __init__(self) -> None:
        self.buffer: list[str] = []
        self.quote = ""
        self.comment = False

    @property
    def empty(self) -> bool:
        return not "".join(self.buffer).strip()

    def feed(self, line: str, delimiter: str) -> list[str]:
        out: list[str] = []
        start = i = 0
        n = len(line)
        while i < n:
            ch = line[i]
            if self.comment:
                if line.startswith("*/", i):
                    self.comment = False
                    i += 2
                    continue
            elif self.quote:
                if ch == "\\" and self.quote != "`":
                    i += 2
                    continue
                if ch == self.quote:
                    self.quote = ""
            elif ch in "'\"`":
                self.quote = ch
            elif line.startswith("/*", i) and not line.startswith(("/*!", "/*+"), i):
                self.comment = True
                i += 2
                continue
            elif line.startswith(delimiter, i):
                self.buffer.append(line[start:i])
                out.append("".join(self.buffer))
                self.buffer = []
                i += len(delimiter)
                start = i
                continue
            i += 1
        self.buffer.append(line[start:] + "\n")
        return out


def extract_statements(path: Path) -> list[str]:
    """The schema statements of one ``.test`` file, in order (see the module docstring)."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    statements: list[str] = []
    delimiter = ";"
    splitter = _Splitter()
    depth = 0  # inside if/while blocks (skipped: they depend on mysqltest variables)
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        i += 1
        if splitter.empty:
            low = stripped.lower()
            if not stripped or stripped.startswith(("#", "--")):
                continue
            first = re.split(r"[\s(;]", low, maxsplit=1)[0]
            if first in ("perl", "write_file", "append_file") or low.startswith("--perl"):
                end = "EOF"
                m = re.search(r"(?:perl|write_file\s+\S+|append_file\s+\S+)\s+(\w+)\s*;", stripped, re.I)
                if m and first != "perl":
                    end = m.group(1)
                elif first == "perl" and (m2 := re.match(r"perl\s+(\w+)\s*;", stripped, re.I)):
                    end = m2.group(1)
                while i < len(lines) and lines[i].strip() != end:
                    i += 1
                i += 1
                continue
            if first == "delimiter":
                rest = stripped.split(None, 1)[1] if len(stripped.split(None, 1)) > 1 else ";"
                new = rest[:-len(delimiter)] if rest.endswith(delimiter) else rest
                delimiter = new.strip() or ";"
                continue
            if first in ("if", "while"):
                depth += stripped.count("{") - stripped.count("}")
                if "{" not in stripped:  # the brace opens on a later line
                    while i < len(lines) and "{" not in lines[i]:
                        i += 1
                    if i < len(lines):
                        depth += lines[i].count("{") - lines[i].count("}")
                        i += 1
                while depth > 0 and i < len(lines):
                    depth += lines[i].count("{") - lines[i].count("}")
                    i += 1
                depth = 0
                continue
            if stripped.startswith("}"):
                continue
        for piece in splitter.feed(line, delimiter):
            sql = piece.strip()
            if sql:
                _keep(sql, statements)
    return statements


def _keep(sql: str, out: list[str]) -> None:
    first = re.split(r"[\s(;]", sql, maxsplit=1)[0]
    if first.lower() in _MYSQLTEST_COMMANDS or "$" in sql or first.upper() not in _KEPT_FIRST:
        return
    if _UNSAFE.search(sql) or _ACCOUNTS.search(sql):
        return
    if re.match(r"SET\s+(PASSWORD|ROLE|DEFAULT\s+ROLE|TRANSACTION)\b", sql, re.IGNORECASE):
        return
    out.append(sql)
