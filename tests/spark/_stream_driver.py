"""A streaming driver the restart test runs (and SIGKILLs): ``python -m tests.spark._stream_driver ARCHIVE
SINK CHECKPOINT continuous|available-now``. ``continuous`` runs a 300 ms trigger until killed;
``available-now`` reads what is there and exits 0."""

from __future__ import annotations

import sys

from binlog_model.spark.session import local_session


def main(archive: str, sink: str, checkpoint: str, how: str) -> None:
    spark = local_session("local[2]")
    spark.sparkContext.setLogLevel("ERROR")
    # Small batches while it may be killed; the last run reads the rest in one.
    rows = "25" if how == "continuous" else "100000"
    writer = (spark.readStream.format("mysql-binlog").option("schemaLocation", f"{checkpoint}/binlog-schema")
              .option("maxRowsPerTrigger", rows).load(archive)
              .writeStream.format("parquet").option("path", sink).option("checkpointLocation", checkpoint))
    if how == "available-now":
        writer.trigger(availableNow=True).start().awaitTermination()
    else:
        writer.trigger(processingTime="300 milliseconds").start().awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:5])
