"""``read_tables``: a resolve output read table by table, on local Spark, from the real MariaDB binlogs of
the ``ddl_between_dml`` golden fixture (columns added FIRST and AFTER, dropped, renamed, moved; tables
renamed, copied, moved across databases).

Each table keeps its own columns, in the table's current order with the dropped ones after them; the
plain ``spark.read.parquet`` over the tree, which docs/spark.md warns against, does not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")
from binlog_model.spark.incremental import read_tables
from binlog_model.spark.job import run_resolve
from binlog_model.spark.session import local_session
from tests._paths import REPO

pytestmark = pytest.mark.spark

FIXTURE = REPO / "fixtures" / "golden" / "mariadb" / "ddl_between_dml"


@pytest.fixture(scope="module")
def spark() -> Any:
    return local_session("local[2]")


def test_read_tables_gives_each_table_its_own_columns_in_its_order(spark: Any, tmp_path: Path) -> None:
    out = tmp_path / "tables"
    run_resolve(spark, [str(p) for p in sorted((FIXTURE / "binlogs").iterdir())], str(out), source="s:1")
    tables = read_tables(spark, out)
    assert sorted(tables) == [("ddl", "humans"), ("ddl", "humans_copy"), ("ddl", "moved")]

    def own(df: Any) -> list[str]:
        return [c for c in df.columns if not c.startswith("binlog_")]

    # MODIFY name FIRST, rowver moved AFTER contact; nick (added AFTER name, later dropped) comes last
    assert own(tables[("ddl", "humans")]) == ["name", "id", "age_years", "contact", "rowver", "nick"]
    assert own(tables[("ddl", "humans_copy")]) == ["name", "id", "age_years", "contact", "rowver"]
    assert own(tables[("ddl", "moved")]) == ["k", "v", "w"]
    humans = tables[("ddl", "humans")]
    assert humans.count() == 20 and humans.where("name = 'ivy'").select("contact").first()[0] == "café"
    assert tables[("ddl", "moved")].count() == 3   # logged as ddl_other.t, then as ddl.moved

    # Over the whole tree, Spark takes one file's schema: some table loses its columns.
    tree = spark.read.parquet(str(out))
    assert any(set(own(df)) - set(tree.columns) for df in tables.values())


def test_read_tables_of_an_empty_output_is_empty(spark: Any, tmp_path: Path) -> None:
    assert read_tables(spark, tmp_path / "nothing") == {}
