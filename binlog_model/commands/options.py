"""Command-line options that several commands take with one meaning, stated once (name, flags, help).

Strategy: a shared option is a ``click.option`` decorator built here and applied by each command, so its
help text and parsing cannot drift between ``events``, ``resolve``, ``tail`` and ``dump``. Options whose
meaning differs per command (``--snapshot``'s sources, ``--progress``' display) stay with the command.
"""

from __future__ import annotations

import click

__all__ = ["always_include", "lenient_ddl", "no_verify_checksum"]

always_include = click.option(
    "--always-include", "always_include", multiple=True, metavar="DB.TABLE.COLUMN",
    help="Column always put in `before` for UPDATE/DELETE (repeatable).")
lenient_ddl = click.option(
    "--lenient-ddl", is_flag=True,
    help="Skip DDL the tracker cannot follow: the table it names becomes uncertain, and its rows then fail "
    "loudly (UncertainSchemaError), never resolved from TABLE_MAP metadata.")
no_verify_checksum = click.option("--no-verify-checksum", is_flag=True,
                                  help="Do not verify CRC32 event checksums.")
