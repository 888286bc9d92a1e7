"""The Python daemon of the command line's jobs (``spark.daemon``): Spark's zips leave the path only for the
same installed package, and the job names the module only for executors that import it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from binlog_model.spark.daemon import executors_import_package, without_redundant_zips
from tests._paths import REPO

pytest.importorskip("pyspark")


@pytest.fixture(scope="module")
def spark_path() -> tuple[str, str, str]:
    """This interpreter's pyspark: Spark's two zips (its ``python/lib``) and the folder holding it."""
    import pyspark

    installed = Path(pyspark.__file__).parent
    lib = installed / "python" / "lib"
    py4j = sorted(lib.glob("py4j-*-src.zip"))
    if not (lib / "pyspark.zip").is_file() or not py4j:
        pytest.skip(f"no Spark zips in {lib}")
    return str(lib / "pyspark.zip"), str(py4j[0]), str(installed.parent)


def test_the_zips_of_the_installed_packages_leave_the_path(spark_path: tuple[str, str, str]) -> None:
    pyspark_zip, py4j_zip, site_dir = spark_path
    stdlib_zip = os.path.join(sys.prefix, "lib", f"python{sys.version_info[0]}{sys.version_info[1]}.zip")
    assert without_redundant_zips([pyspark_zip, py4j_zip, "/nowhere", stdlib_zip, site_dir]) == [
        "/nowhere", stdlib_zip, site_dir]


def test_a_zip_stays_unless_a_later_folder_holds_its_very_package(spark_path: tuple[str, str, str],
                                                                 tmp_path: Path) -> None:
    pyspark_zip, py4j_zip, _site_dir = spark_path
    # Hand-made edge case: an installed pyspark of another version.
    (tmp_path / "pyspark").mkdir()
    (tmp_path / "pyspark" / "version.py").write_text('__version__: str = "0.0.1"\n', encoding="utf-8")
    assert without_redundant_zips([pyspark_zip, py4j_zip, str(tmp_path)]) == [pyspark_zip, py4j_zip,
                                                                               str(tmp_path)]
    assert without_redundant_zips([pyspark_zip]) == [pyspark_zip]


def test_the_module_is_named_only_for_executors_that_import_it() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_SUBMIT_ARGS")}
    env["PYTHONPATH"] = str(REPO)
    here = {"spark.executorEnv.PYTHONPATH": str(REPO)}
    assert executors_import_package("local[2]", {}, env)
    assert executors_import_package("spark://127.0.0.1:7077", here, env)      # a cluster of this machine
    assert executors_import_package("local[1]", {"spark.pyspark.python": sys.executable}, env)
    # Elsewhere, another Python, another copy of the package, or the user's own daemon: Spark's daemon.
    assert not executors_import_package("spark://db-7.example:7077", here, env)
    assert not executors_import_package("yarn", here, env)
    assert not executors_import_package("local[2]", {"spark.pyspark.python": "/usr/bin/python3"}, env)
    assert not executors_import_package("local[2]", {}, {**env, "PYSPARK_PYTHON": "/usr/bin/python3"})
    assert not executors_import_package("local[2]", {},
                                        {**env, "PYSPARK_SUBMIT_ARGS": "--py-files pack.zip pyspark-shell"})
    assert not executors_import_package("local[2]", {"spark.submit.pyFiles": "pack.zip"}, env)
    assert not executors_import_package("local[2]", {"spark.python.daemon.module": "mine.daemon"}, env)


def test_a_python_that_cannot_import_the_module_keeps_sparks_daemon(tmp_path: Path) -> None:
    """Asked of the interpreter itself: a PYTHONPATH that shadows the package with a broken one (hand-made)
    fails the import as a Python without the package would."""
    shadow = tmp_path / "binlog_model"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise ImportError('not this package')\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_SUBMIT_ARGS")}
    env["PYTHONPATH"] = str(tmp_path)
    assert not executors_import_package("local[2]", {}, env)
    assert executors_import_package("local[2]", {}, {**env, "PYTHONPATH": str(REPO)})
