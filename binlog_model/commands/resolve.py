"""``binlog-model resolve [BINLOG_PATHS...] --out DIR``: the main job on local Spark.

Binlogs → per-table typed Parquet (``DIR/db=<db>/table=<table>/``) resolved with the schema in force at
each row's position, and a per-table summary. Without paths it resolves the bundled golden fixtures: each
``fixtures/golden/mariadb/<scenario>/binlogs`` directory is an independent server history, so each is its
own input set with the source label ``golden:<scenario>`` and its own output ``DIR/<scenario>/``.
"""

from __future__ import annotations

import time
from pathlib import Path

import click

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "golden" / "mariadb"


def _say(text: str) -> None:
    click.echo(f"[{time.strftime('%H:%M:%S')}] {text}", err=True)


@click.command("resolve")
@click.argument("paths", nargs=-1)
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output directory for the Parquet tables.")
@click.option("--source", default="", help="Source label put in every row, e.g. ppc:1.")
@click.option("--snapshot", metavar="FILE|URL",
              help="Starting schema: a mysqldump --no-data .sql file, a schema history .json, or a live "
              "server mysql://user@host:port/db.")
@click.option("--database", "-d", default=None,
              help="Database of the snapshot's statements before any USE (default: from the dump's header).")
@click.option("--state", "state_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Incremental run: read only what is new since the last run with this state directory and "
              "add its Parquet files to the table folders.")
@click.option("--always-include", "always_include", multiple=True, metavar="DB.TABLE.COLUMN")
@click.option("--lenient-ddl", is_flag=True, help="Skip DDL the tracker cannot follow.")
@click.option("--master", default="local[2]", show_default=True, help="Spark master for the local session.")
@click.option("--slice-mb", type=click.IntRange(min=1), default=64, show_default=True,
              help="Split files into slices of about this many MB at transaction starts.")
def command(paths: tuple[str, ...], out: Path, source: str, snapshot: str | None, database: str | None,
            state_dir: Path | None, always_include: tuple[str, ...], lenient_ddl: bool, master: str,
            slice_mb: int) -> None:
    """Resolve binlog PATHS (files, directories or globs) into typed per-table Parquet on local Spark."""
    from binlog_model.errors import ConfigError
    from binlog_model.spark.job import SparkJobError, SparkSetupError, check_java, local_session, run_resolve
    if state_dir is not None and not paths:
        raise ConfigError("--state needs the binlog PATHS to follow (one state per binlog sequence)")
    if snapshot and "://" not in snapshot and not Path(snapshot).is_file():
        raise ConfigError(f"snapshot file not found: {snapshot}")     # before Spark starts
    check_java()
    try:
        from pyspark.errors import PySparkException
    except ImportError as err:
        raise SparkSetupError("pyspark is not installed: pip install 'binlog-model[spark]'") from err
    if paths:
        inputs = [(source, list(paths), out)]
    else:
        scenarios = sorted(d for d in FIXTURES.iterdir() if (d / "binlogs").is_dir())
        inputs = [(source or f"golden:{d.name}", [str(d / "binlogs")], out / d.name) for d in scenarios]
        _say(f"no paths given: resolving the {len(inputs)} bundled golden fixture histories")
    spark = local_session(master)
    try:
        for label, files, target in inputs:
            result = run_resolve(spark, files, target, source=label, snapshot=snapshot,
                                 lenient_ddl=lenient_ddl, always_include=always_include,
                                 slice_bytes=slice_mb << 20, progress=_say, database=database,
                                 state_dir=state_dir)
            click.echo(f"== {label or '(no source)'}: {result.files} files, {result.rows} row changes, "
                       f"{result.seconds:.1f}s -> {target}")
            click.echo(f"   {'table':<40} {'INSERT':>7} {'UPDATE':>7} {'DELETE':>7} {'SCHEMA':>7} "
                       f"{'columns':>7} {'versions':>8}")
            for t in result.tables:
                name = f"{t.db}.{t.table}" if t.table else f"{t.db} (database)"
                ops = t.operations
                click.echo(f"   {name:<40} {ops.get('INSERT', 0):>7} {ops.get('UPDATE', 0):>7} "
                           f"{ops.get('DELETE', 0):>7} {ops.get('SCHEMA', 0):>7} {t.columns:>7} "
                           f"{t.schema_versions:>8}")
    except PySparkException as err:
        raise SparkJobError.from_spark(err) from err
    finally:
        spark.stop()
