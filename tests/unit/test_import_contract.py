"""The layering the architecture promises, checked on the source: a module that breaks a rule fails here with
the file, the line and the rule, before anyone has to find the tangle by reading.

- only ``schema_tracker/ddl`` imports sqlglot; only ``binlog_model/spark`` imports pyspark;
- ``binlog_model/wire`` (the sans-IO decoder) imports nothing above itself but the error tree and
  ``binlog_model.compiled`` (the choice of the compiled core), which imports nothing of the package;
- ``schema_tracker`` never imports ``binlog_model.wire`` (it takes plain statements);
- ``binlog_model/resolve`` (the middle stage) imports neither ``binlog_model.io`` nor ``binlog_model.sinks``;
- no import cycles among the modules of binlog_model and schema_tracker (module-level imports; an import
  inside a function, or under ``if TYPE_CHECKING:``, runs after both modules are loaded or never); inside
  ``binlog_model/spark``, whose modules import each other inside functions to keep pyspark out of
  ``import binlog_model``, the imports inside functions count too, so its dependencies go one way;
- only ``io/``, ``sinks/``, ``testing/`` and the command line (``commands/``, ``cli.py``) open files or use
  the file system otherwise (``tempfile``, ``shutil``, ``glob``, ``os``'s and ``pathlib``'s directory and
  file operations), except the few ``KNOWN_FS_USERS`` listed with their reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._paths import REPO

PACKAGES = ("binlog_model", "schema_tracker")
# The sans-IO decoder may use only itself, the error tree and the compiled-core choice (a leaf).
WIRE_MAY_IMPORT = ("binlog_model.wire", "binlog_model.errors", "binlog_model.compiled")
LEAVES = ("binlog_model/compiled.py", "binlog_model/errors.py")
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
            elif rule == "leaf":
                bad = rel in LEAVES and _under(name, "binlog_model") and name != "binlog_model"
            elif rule == "tracker":
                bad = rel.startswith("schema_tracker/") and _under(name, "binlog_model.wire")
            elif rule == "resolve":
                bad = rel.startswith("binlog_model/resolve/") and (
                    _under(name, "binlog_model.io") or _under(name, "binlog_model.sinks"))
            if bad:
                found.append(f"{rel}:{line} imports {name}")
    return found


@pytest.mark.parametrize("rule", ["sqlglot", "pyspark", "wire", "leaf", "tracker", "resolve"])
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


# File-system modules: any use counts (shutil.which only looks a program up on PATH).
FS_MODULES = {"tempfile", "shutil", "glob"}
FS_HARMLESS = {"shutil.which"}
# os / os.path / Path operations on the file system (pathlib's by method name: ``replace`` and ``rename``
# are left out, ``str.replace`` would match).
FS_OS_CALLS = {"os.replace", "os.rename", "os.remove", "os.unlink", "os.mkdir", "os.makedirs", "os.rmdir",
               "os.removedirs", "os.listdir", "os.scandir", "os.walk", "os.truncate", "os.link", "os.symlink",
               "os.path.exists", "os.path.isfile", "os.path.isdir", "os.path.getsize", "os.path.getmtime"}
FS_PATH_METHODS = {"mkdir", "unlink", "rmdir", "iterdir", "glob", "rglob", "touch", "exists", "is_dir",
                   "is_file"}
# Modules outside the I/O layers that use the file system anyway, each with its reason. A new one fails.
KNOWN_FS_USERS: dict[str, str] = {
    "binlog_model/resolve/spill.py": "a transaction beyond spill_bytes goes to an anonymous temporary file "
                                     "(no name, gone when closed); resolve may not import io",
    "binlog_model/spark/job.py": "the planner gets a --database snapshot's history in a temporary directory",
    "binlog_model/spark/jvm.py": "the driver JVM's class-data archive lives in the user's cache folder",
    "binlog_model/spark/pack.py": "builds the zip of this package that Spark executors import (a build "
                                  "step, not data)",
    "binlog_model/spark/session.py": "check_java looks for the java binary; stop_quickly removes the "
                                     "accumulator server's socket file, as pyspark's own stop does",
}


def _fs_uses(path: Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                if name.split(".")[0] in FS_MODULES:
                    yield node.lineno, f"import {name}"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            call = ast.unparse(node.func)
            owner = ast.unparse(node.func.value)
            module_call = owner in FS_MODULES and call not in FS_HARMLESS
            path_call = node.func.attr in FS_PATH_METHODS and owner not in {*FS_MODULES, "os", "os.path"}
            if module_call or path_call or call in FS_OS_CALLS:
                yield node.lineno, f"{call}()"


def test_only_the_io_layers_use_the_file_system() -> None:
    found = [f"{_rel(path)}:{line} {use}" for path in _modules()
             if not _rel(path).startswith(FILE_OPENERS) and _rel(path) not in KNOWN_FS_USERS
             for line, use in _fs_uses(path)]
    assert found == [], "\n".join(found)


def test_the_file_system_rule_sees_what_it_forbids(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import shutil, tempfile\nimport os\nfrom pathlib import Path\n"
                      "tempfile.mkdtemp()\nshutil.rmtree('x')\nshutil.which('java')\nos.replace('a', 'b')\n"
                      "Path('x').unlink()\n'text'.replace('a', 'b')\n", encoding="utf-8")
    assert [use for _, use in _fs_uses(sample)] == [
        "import shutil", "import tempfile", "tempfile.mkdtemp()", "shutil.rmtree()", "os.replace()",
        "Path('x').unlink()"]
    assert all((REPO / known).is_file() and list(_fs_uses(REPO / known)) for known in KNOWN_FS_USERS)


# --- import cycles ---------------------------------------------------------------------------------------

# Cycles known and accepted, each with its reason (sorted module names). Empty: a new cycle fails the test.
KNOWN_CYCLES: dict[tuple[str, ...], str] = {}


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _module_level_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports that run when the module loads: top level, and inside top-level if/try blocks (not in
    functions or classes' methods, not under ``if TYPE_CHECKING:``)."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node):
                yield from _module_level_imports(node.body)
            yield from _module_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                yield from _module_level_imports(block)


def _every_import(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports a module runs at all, at load or inside its functions (not under ``if TYPE_CHECKING:``)."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and _is_type_checking(node):
            yield from _every_import(node.orelse)
        else:
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                for child in getattr(node, field, ()):
                    yield from _every_import([child] if isinstance(child, ast.stmt) else child.body)


def _import_graph(paths: list[Path], root: Path = REPO, *, deferred_too: tuple[str, ...] = ()
                  ) -> dict[str, set[str]]:
    """Module → the project modules it imports when loaded (and, for modules under ``deferred_too``, inside
    its functions as well). ``from pkg import mod`` counts as ``pkg.mod`` when that is a module, else as
    ``pkg``; a package's own ``__init__`` is not an edge of its children."""
    names = {_module_name(p) if root == REPO else p.stem: p for p in paths}
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        imports = _every_import if name.startswith(deferred_too) else _module_level_imports
        for node in imports(ast.parse(path.read_text(encoding="utf-8")).body):
            if isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names if alias.name in names)
                continue
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                target = f"{base}.{alias.name}" if f"{base}.{alias.name}" in names else base
                if target in names and target != name:
                    edges.add(target)
        graph[name] = edges
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The strongly connected components of more than one module (each a cycle or several), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[str, ...]] = []

    def visit(node: str) -> None:   # Tarjan's algorithm; the graph is a few hundred modules deep at most
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(tuple(sorted(component)))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_import_cycles() -> None:
    graph = _import_graph(_modules(), deferred_too=("binlog_model.spark",))
    new = [c for c in _cycles(graph) if c not in KNOWN_CYCLES]
    assert new == [], "import cycles (module-level imports; in binlog_model.spark all):\n" + "\n".join(
        " <-> ".join(c) for c in new)


def test_the_checks_see_a_violation(tmp_path: Path) -> None:
    """The scanners themselves: a module that imports pyspark and opens a file is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("import pyspark\nfrom sqlglot import exp\nwith open('x') as f:\n    pass\n"
                   "Path('y').read_bytes()\n")
    assert sorted(n for _, n in _imports(bad)) == ["pyspark", "sqlglot", "sqlglot.exp"]
    assert sorted(_opens(bad)) == [(3, "open()"), (5, "Path('y').read_bytes()")]


def test_the_cycle_check_sees_a_cycle(tmp_path: Path) -> None:
    """A module-level cycle is found; the same imports inside a function or under TYPE_CHECKING are not."""
    (tmp_path / "a.py").write_text("import b\n")
    (tmp_path / "b.py").write_text("import c\n")
    (tmp_path / "c.py").write_text("from typing import TYPE_CHECKING\n"
                                   "if TYPE_CHECKING:\n    import d\nimport a\n")
    (tmp_path / "d.py").write_text("def f():\n    import c\n")
    graph = _import_graph(sorted(tmp_path.glob("*.py")), root=tmp_path)
    assert graph == {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert _cycles(graph) == [("a", "b", "c")]
    # Where function-level imports count (binlog_model.spark), d's import inside f is an edge; TYPE_CHECKING
    # imports still are not.
    graph = _import_graph(sorted(tmp_path.glob("*.py")), root=tmp_path, deferred_too=("c", "d"))
    assert graph == {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"c"}}
