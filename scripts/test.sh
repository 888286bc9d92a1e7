#!/usr/bin/env bash
# The whole test suite, from a fresh machine: bootstrap, lint (ruff + mypy), then pytest.
# Tests needing a Docker engine skip with their reason; everything else runs against a real local MariaDB
# and real local Spark.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
.venv/bin/ruff check binlog_model schema_tracker tests benchmarks
.venv/bin/mypy
.venv/bin/pytest "$@"
