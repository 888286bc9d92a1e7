"""Spark integration: the ``mysql-binlog`` data source, the per-table typed resolution job.

Strategy: nothing here imports pyspark at import time, so ``import binlog_model`` (and this package) works
without Spark installed; ``register`` and the job functions import it when called.
"""

from __future__ import annotations

from typing import Any

__all__ = ["register"]


def register(spark: Any) -> None:
    """Register the ``mysql-binlog`` data source with ``spark`` (a SparkSession):
    ``spark.read.format("mysql-binlog").option("source", "ppc:1").load("binlogs/")``."""
    from binlog_model.spark.datasource import BinlogDataSource

    spark.dataSource.register(BinlogDataSource)
