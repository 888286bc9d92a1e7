"""``binlog-model spark-pack [DEST]``: the zip of this package for ``spark-submit --py-files``.

Executors (and the driver-side Python that plans the source) whose Python lacks binlog-model import it
from this zip; see ``binlog_model.spark.pack`` for what it holds and docs/spark.md ("cluster") for the
``spark-submit`` options.
"""

from __future__ import annotations

from pathlib import Path

import click


@click.command("spark-pack")
@click.argument("dest", default="binlog_model_pack.zip", type=click.Path(dir_okay=False, path_type=Path))
def command(dest: Path) -> None:
    """Build DEST (default binlog_model_pack.zip): binlog-model and its pure-Python dependencies for
    spark-submit --py-files. Every Python Spark starts still needs pyarrow."""
    from binlog_model.spark.pack import build_pack

    path = build_pack(dest)
    click.echo(f"{path} ({path.stat().st_size / 1e6:.1f} MB): spark-submit --py-files {path} ...")
