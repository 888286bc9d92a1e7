"""The typed job as it was before issue 23 (main at e8b198e), kept only as the reference of the equality
tests: one cached read of the ``mysql-binlog`` source, then one ``typed_frame`` written by Spark per table.
The new path (``run_resolve``: per-slice pyarrow writes) must give the same tables row for row, with the
same column types and nullability."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from typing import Any

from binlog_model.sinks import parquet


def dataframe_resolve(spark: Any, paths: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str], *,
                      source: str = "", lenient_ddl: bool = False, slice_bytes: int = 64 << 20,
                      snapshot: str | None = None) -> dict[tuple[str, str], dict[str, int]]:
    """Write the typed tables the old way; the per-table operation counts."""
    from pyspark.sql import functions as F

    from binlog_model.io.files import absolute_name
    from binlog_model.spark.datasource import plan, save_plan
    from binlog_model.spark.partitions import expand_paths
    from binlog_model.spark.typed import table_lineages, untyped_lineage
    from binlog_model.spark.typed_arrow import typed_frame

    files = expand_paths(paths)
    out = absolute_name(out)
    options = {"paths": json.dumps(files), "source": source, "image": "full",
               "ddl": "lenient" if lenient_ddl else "strict", "sliceBytes": str(slice_bytes),
               "minSlices": str(2 * max(1, spark.sparkContext.defaultParallelism))}
    if snapshot:
        options["snapshot"] = snapshot
    with tempfile.TemporaryDirectory(prefix="binlog-model-plan-") as plan_dir:
        history, slices = plan(files, **{k: v for k, v in options.items() if k != "paths"})
        lineages = table_lineages(history)
        options["planFile"] = os.path.join(plan_dir, "plan.json")
        save_plan(options["planFile"], files, history, slices)
        parquet.configure(spark)
        changes = spark.read.format("mysql-binlog").options(**options).load().cache()
        counts = changes.groupBy("db", "table", "operation").count().collect()
        logged: dict[tuple[str, str], dict[str, int]] = {}
        for r in counts:
            logged.setdefault((r["db"], r["table"]), {})[r["operation"]] = r["count"]
        by_table: dict[tuple[str, str], dict[str, int]] = {}
        owners: dict[tuple[str, str], int] = {}
        for key, lineage in lineages.items():
            ops = by_table[key] = {}
            for name in lineage.logged_names:
                owners[name] = owners.get(name, 0) + 1
                for op, count in logged.get(name, {}).items():
                    ops[op] = ops.get(op, 0) + count
        for name, ops in logged.items():
            if name not in owners:
                by_table[name] = dict(ops)
        for key in sorted(k for k, ops in by_table.items() if set(ops) - {"SCHEMA"}):
            lineage = lineages.get(key)
            if lineage is not None and any(owners.get(name, 0) > 1 for name in lineage.logged_names):
                typed_counts = typed_frame(changes, lineage).groupBy("binlog_operation").count().collect()
                schema_events = by_table[key].get("SCHEMA")
                by_table[key] = {r["binlog_operation"]: r["count"] for r in typed_counts}
                if schema_events:
                    by_table[key]["SCHEMA"] = schema_events
            if lineage is None:
                keys = F.concat(F.coalesce(F.map_keys("after"), F.array()),
                                F.coalesce(F.map_keys("before"), F.array()))
                names = [r[0] for r in changes.where((F.col("db") == key[0]) & (F.col("table") == key[1]))
                         .select(F.explode(keys).alias("key")).distinct().orderBy("key").collect()]
                lineage = untyped_lineage(key[0], key[1], names)
            parquet.write_table(typed_frame(changes, lineage), out, key[0], key[1])
        changes.unpersist()
    return by_table
