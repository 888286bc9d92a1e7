"""Statements and object kinds that never change a table's columns, recognised by their leading keywords.

Audited against what MySQL 9.7 and MariaDB 10.11 write to the binlog as QUERY events: transaction control,
DML in statement format, accounts and privileges (CREATE/ALTER/DROP/RENAME USER, roles, GRANT/REVOKE, SET
PASSWORD, SET DEFAULT ROLE), stored programs and views (with DEFINER / ALGORITHM / SQL SECURITY prefixes),
tablespaces, undo tablespaces, logfile groups, servers, resource groups, spatial reference systems,
``ALTER INSTANCE`` (key rotation, redo logging), MySQL 9 JavaScript libraries, sequences and packages
(MariaDB), and table maintenance (ANALYZE, OPTIMIZE, REPAIR, CHECK, FLUSH). ``RENAME USER`` is handled
where RENAME TABLE is (``create.rename_tables``).
"""

from __future__ import annotations

from sqlglot.tokens import Token

# Leading keywords of statements that never change a table's columns.
IGNORED_FIRST = frozenset({
    "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "XA", "START", "GRANT", "REVOKE", "FLUSH",
    "ANALYZE", "OPTIMIZE", "REPAIR", "CHECK", "CHECKSUM", "INSERT", "UPDATE", "DELETE", "REPLACE",
    "SELECT", "SET", "USE", "LOAD", "CALL", "DO", "SHOW", "LOCK", "UNLOCK", "RESET", "PURGE", "KILL",
    "HANDLER", "INSTALL", "UNINSTALL", "EXPLAIN", "DESCRIBE", "DESC", "WITH", "VALUES", "TABLE",
    "STOP", "CHANGE", "BINLOG", "PREPARE", "EXECUTE", "DEALLOCATE", "CACHE", "SHUTDOWN", "HELP", "BACKUP",
})
# Object kinds after CREATE/DROP/ALTER that never change a table's columns.
IGNORED_KINDS = frozenset({
    "VIEW", "TRIGGER", "PROCEDURE", "FUNCTION", "EVENT", "USER", "ROLE", "INDEX", "SERVER", "SEQUENCE",
    "PACKAGE", "TABLESPACE", "LOGFILE", "SPATIAL", "RESOURCE", "SYNONYM", "UNDO", "INSTANCE", "LIBRARY",
})
_AFTER_DEFINER = IGNORED_KINDS | {"SQL", "ALGORITHM", "TABLE", "DATABASE", "SCHEMA", "AGGREGATE"}
# Modifiers that may sit between CREATE/DROP and the object kind.
_MODIFIERS = frozenset({"OR", "REPLACE", "ONLINE", "OFFLINE", "IGNORE", "UNIQUE", "FULLTEXT", "AGGREGATE",
                        "NONATOMIC", "DEFINITION"})



def object_kind(tokens: list[Token]) -> tuple[str, bool]:
    """The object keyword after CREATE/DROP/ALTER, skipping modifiers; and whether TEMPORARY was seen."""
    temporary = False
    i = 0
    while i < len(tokens):
        word = tokens[i].text.upper()
        if word == "TEMPORARY":
            temporary = True
        elif word == "DEFINER":  # DEFINER = user@host: skip to the next keyword we know
            while i + 1 < len(tokens) and tokens[i + 1].text.upper() not in _AFTER_DEFINER:
                i += 1
        elif word == "ALGORITHM" or (word == "SQL" and i + 1 < len(tokens)
                                     and tokens[i + 1].text.upper() == "SECURITY"):
            i += 2
        elif word == "SQL SECURITY":  # the tokenizer's single token for both words
            i += 1
        elif word not in _MODIFIERS:
            return word, temporary
        i += 1
    return "", temporary

