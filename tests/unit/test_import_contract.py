"""The layering the architecture promises, checked on the source: a module that breaks a rule fails here with
the file, the line and the rule, before anyone has to find the tangle by reading.

- only ``schema_tracker/ddl`` imports sqlglot; only ``binlog_model/spark`` imports pyspark;
- ``binlog_model/wire`` (the sans-IO decoder) imports nothing above itself;
- ``schema_tracker`` never imports ``binlog_model.wire`` (it takes plain statements);
- only ``io/``, ``sinks/``, ``testing/`` and the command line (``commands/``, ``cli.py``) open files.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._paths import REPO

PACKAGES = ("binlog_model", "schema_tracker")
# The sans-IO decoder may use only itself and the error tree.
WIRE_MAY_IMPORT = ("binlog_model.wire", "binlog_model.errors")
FILE_OPENERS = ("binlog_model/io/", "binlog_model/sinks/", "binlog_model/testing/", "binlog_model/commands/",
                "binlog_model/cli.py")
# Calls that open a file by name: builtins, pathlib, and the compression modules' own open().
OPEN_CALLS = {"open", "read_bytes", "read_text", "write_bytes", "write_text"}
OPEN_MODULES = {"gzip", "bz2", "lzma", "io", "os", "zstandard", "tarfile", "zipfile"}


def _modules() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py") if "_pb" not in p.parts)


def _rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(REPO).with_suffix("").parts[:-1]) if path.is_relative_to(REPO) else ""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:   # relative: resolve against the module's package
                parts = package.split(".")
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            yield node.lineno, base
            for alias in node.names:   # ``from binlog_model import wire`` imports the subpackage
                yield node.lineno, f"{base}.{alias.name}"


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _violations(rule: str) -> list[str]:
    found = []
    for path in _modules():
        rel = _rel(path)
        for line, name in _imports(path):
            bad = False
            if rule == "sqlglot":
                bad = _under(name, "sqlglot") and not rel.startswith("schema_tracker/ddl")
            elif rule == "pyspark":
                bad = _under(name, "pyspark") and not rel.startswith("binlog_model/spark/")
            elif rule == "wire":
                bad = (rel.startswith("binlog_model/wire/") and _under(name, "binlog_model")
                       and name != "binlog_model" and not any(_under(name, ok) for ok in WIRE_MAY_IMPORT))
            elif rule == "tracker":
                bad = rel.startswith("schema_tracker/") and _under(name, "binlog_model.wire")
            if bad:
                found.append(f"{rel}:{line} imports {name}")
    return found


@pytest.mark.parametrize("rule", ["sqlglot", "pyspark", "wire", "tracker"])
def test_import_layering(rule: str) -> None:
    assert _violations(rule) == [], "\n".join(_violations(rule))


def _opens(path: Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "open":
            yield node.lineno, "open()"
        elif isinstance(func, ast.Attribute) and func.attr in OPEN_CALLS:
            owner = func.value
            if func.attr == "open" and isinstance(owner, ast.Name) and owner.id not in OPEN_MODULES:
                continue   # e.g. webbrowser.open, a connection's open(): not a file by name
            yield node.lineno, f"{ast.unparse(func)}()"


def test_only_the_io_layers_open_files() -> None:
    found = [f"{_rel(path)}:{line} {call}" for path in _modules()
             if not _rel(path).startswith(FILE_OPENERS) for line, call in _opens(path)]
    assert found == [], "\n".join(found)


def test_the_checks_see_a_violation(tmp_path: Path) -> None:
    """The scanners themselves: a module that imports pyspark and opens a file is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("import pyspark\nfrom sqlglot import exp\nwith open('x') as f:\n    pass\n"
                   "Path('y').read_bytes()\n")
    assert sorted(n for _, n in _imports(bad)) == ["pyspark", "sqlglot", "sqlglot.exp"]
    assert sorted(_opens(bad)) == [(3, "open()"), (5, "Path('y').read_bytes()")]
