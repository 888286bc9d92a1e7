"""The schema history of the same binlogs as each caller of the one DDL pass builds it (for the tests that
check they agree)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from binlog_model.commands.schema import command as schema_command
from binlog_model.io.files import expand_paths
from binlog_model.io.snapshots import load_snapshot
from binlog_model.resolve.assembler import StatementAssembler
from binlog_model.runs.pipeline import history_from_binlogs, iter_binlog_events
from binlog_model.spark.partitions import build_history, scan_files


def three_histories(files: list[Path], snapshot: Path | None = None) -> dict[str, dict[str, Any]]:
    """The history as each caller builds it, as JSON: the CLI, the library (its own pass and the one the
    assembler builds while decoding rows) and the Spark driver (parallel scans, then the replay)."""
    given = ["--snapshot", str(snapshot)] if snapshot is not None else []
    run = CliRunner().invoke(schema_command, ["--json", *given, *map(str, files)])
    assert run.exit_code == 0, run.output
    decoding = StatementAssembler(load_snapshot(snapshot))
    for _ in iter_binlog_events(files, assembler=decoding):
        pass
    spark = build_history(scan_files(expand_paths(files)), history=load_snapshot(snapshot))
    library = history_from_binlogs(files, load_snapshot(snapshot))
    return {"cli": json.loads(run.output), "library": library.to_json(),
            "assembler": decoding.history.to_json(), "spark": spark.to_json()}
