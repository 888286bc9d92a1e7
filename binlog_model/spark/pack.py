"""``binlog-model spark-pack`` / ``python -m binlog_model.spark.pack``: this package and its pure-Python
dependencies as one zip for ``spark-submit --py-files``, for executors whose Python lacks the package.

Strategy: Spark puts a ``--py-files`` ``.zip`` on ``sys.path`` of the driver, of the driver-side Python
worker that plans the ``mysql-binlog`` source, and of every executor's Python worker, and Python imports
from it with ``zipimport``. ``zipimport`` loads ``.py`` files only, and finds a namespace package (``google``)
only through a folder entry, so the zip holds the ``.py`` sources of binlog_model, schema_tracker, sqlglot
and protobuf's ``google`` tree with an entry for every folder. Compiled code cannot ship this way: protobuf
then runs its pure-Python implementation (slower, same results) and the zstandard module is absent
(MySQL's compressed transactions need it installed on the executors); ``runtime_notes`` says so, and the
data source writes it once per Python worker to that worker's log (the executor's stderr). pyarrow is
compiled too: every Python that Spark starts (the planner on the driver, the executors) needs it
installed, as Spark's Python data sources always do.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path

from binlog_model.io.documents import read_bytes

__all__ = ["PACKAGES", "build_pack", "runtime_notes"]

# Top-level import names carried by the zip, in the order they are written.
PACKAGES: tuple[str, ...] = ("binlog_model", "schema_tracker", "sqlglot", "google")
# Never needed on an executor: the test harness (servers) and the command line.
_SKIP = (("binlog_model", "testing"), ("binlog_model", "commands"))


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"cannot pack {name}: it is not importable here")
    return Path(next(iter(spec.submodule_search_locations)))


def build_pack(dest: str | os.PathLike[str], packages: Sequence[str] = PACKAGES) -> Path:
    """Write the zip to ``dest``; returns its path. Only ``.py`` and ``py.typed`` files, with folder
    entries, deterministic order."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in packages:
            root = _package_dir(name)
            for folder, dirs, files in os.walk(root):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                rel = Path(folder).relative_to(root.parent)
                if rel.parts[:2] in _SKIP:
                    dirs[:] = []
                    continue
                zf.writestr(zipfile.ZipInfo(rel.as_posix() + "/", date_time=(2020, 1, 1, 0, 0, 0)), b"")
                for file in sorted(files):
                    if file.endswith(".py") or file == "py.typed":
                        info = zipfile.ZipInfo((rel / file).as_posix(), date_time=(2020, 1, 1, 0, 0, 0))
                        info.compress_type = zipfile.ZIP_DEFLATED
                        zf.writestr(info, read_bytes(Path(folder) / file))
    tmp.replace(dest)
    return dest


def runtime_notes() -> list[str]:
    """What this Python runs differently from a full install (empty when nothing): the package imported
    from a zip, protobuf's pure-Python implementation, a missing zstandard."""
    notes = []
    here = __file__
    if ".zip" in here or ".egg" in here:
        notes.append(f"binlog-model runs from {here.split('.zip')[0]}.zip (spark-pack): pure Python only")
    try:
        from google.protobuf.internal import api_implementation

        if api_implementation.Type() == "python":
            notes.append("protobuf uses its pure-Python implementation (its compiled core was not shipped): "
                         "slower, same results")
    except ImportError:
        pass
    if importlib.util.find_spec("zstandard") is None:
        notes.append("zstandard is not installed: MySQL compressed transactions (binlog_transaction_"
                     "compression) cannot be read here")
    return notes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m binlog_model.spark.pack",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("dest", nargs="?", default="binlog_model_pack.zip")
    args = parser.parse_args(argv)
    path = build_pack(args.dest)
    print(f"{path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
