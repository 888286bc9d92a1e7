#!/usr/bin/env bash
# The main job on the bundled default input (the committed golden-fixture binlogs). Sets up only what the
# job needs (scripts/setup_main.sh: a venv with binlog-model[spark]); progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_main.sh
echo "main: [$(date +%H:%M:%S)] running binlog-model resolve (local Spark) on the golden fixtures" >&2
exec .venv/bin/binlog-model resolve --out "${OUT:-out/resolve}"
