#!/usr/bin/env bash
# The whole test suite, from a fresh machine: bootstrap, the C extension built in place, lint (ruff + mypy),
# pytest, then the packaging smoke (sdist + wheel into a fresh venv, scripts/package_smoke.sh).
# Tests needing a Docker engine skip with their reason; everything else runs against a real local MariaDB
# and real local Spark.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
# The optional compiled core, in place and incremental; here a compile error fails the run (pip would
# only warn and fall back), and the suite requires the core to be on (tests/unit/test_compiled_loader.py).
BINLOG_MODEL_EXT_REQUIRED=1 .venv/bin/python setup.py -q build_ext --inplace
export BINLOG_MODEL_REQUIRE_COMPILED=1
.venv/bin/ruff check binlog_model schema_tracker tests benchmarks
.venv/bin/mypy
.venv/bin/pytest "$@"
bash scripts/package_smoke.sh
