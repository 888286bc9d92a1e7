"""Acceptance 4: pin sqlglot's tree shape for every statement form the tracker supports.

``tests/ddl_corpus/tree_shapes.jsonl`` maps each statement of the DDL corpora (the differential corpus and
``tests/ddl_corpus/forms.sql``) to ``ddl.statement_shapes``: the node classes, argument names, data types
and keywords of the tree sqlglot returns, for the whole statement and for each ALTER TABLE action as the
tracker parses it. A sqlglot upgrade that moves an argument or changes a node fails here, loudly, before it
can change a catalog. After reviewing such a change, regenerate with::

    .venv/bin/python -m tests.test_ddl_tree_shape
"""

from __future__ import annotations

import json
import logging

import pytest

from schema_tracker.ddl import split_statements, statement_shapes
from tests._paths import REPO, TESTS

HERE = TESTS / "ddl_corpus"
GOLDEN = HERE / "tree_shapes.jsonl"
SOURCES = (HERE / "differential.sql", HERE / "forms.sql")


def corpus_statements() -> list[str]:
    seen: dict[str, None] = {}
    for src in SOURCES:
        text = src.read_text(encoding="utf-8").replace("{db2}", "db2").replace("{db}", "db1")
        for sql in split_statements(text):
            seen.setdefault(" ".join(sql.split()), None)
    return list(seen)


def load_golden() -> dict[str, list[str]]:
    rows = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {r["sql"]: r["shapes"] for r in rows}


def test_golden_covers_the_corpus() -> None:
    assert set(load_golden()) == set(corpus_statements()), "regenerate tree_shapes.jsonl (see docstring)"


@pytest.mark.parametrize("sql", corpus_statements())
def test_tree_shape_is_pinned(sql: str) -> None:
    assert statement_shapes(sql) == load_golden()[sql]


def test_only_the_ddl_package_imports_sqlglot() -> None:
    root = REPO
    importers = sorted(str(p.relative_to(root)) for folder in ("binlog_model", "schema_tracker")
                       for p in (root / folder).rglob("*.py")
                       if any(line.split()[:2] in (["import", "sqlglot"], ["from", "sqlglot"])
                              or line.startswith(("import sqlglot", "from sqlglot"))
                              for line in p.read_text(encoding="utf-8").splitlines()))
    assert importers, "the scan found no importer at all: it is broken"
    assert all(p.startswith("schema_tracker/ddl/") for p in importers), importers


def main() -> None:
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    with GOLDEN.open("w", encoding="utf-8") as out:
        for sql in corpus_statements():
            out.write(json.dumps({"sql": sql, "shapes": statement_shapes(sql)}, ensure_ascii=False) + "\n")
    print(f"wrote {GOLDEN}")


if __name__ == "__main__":
    main()
