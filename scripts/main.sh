#!/usr/bin/env bash
# The main job on the bundled default input (the committed golden-fixture binlogs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/binlog-model resolve --out "${OUT:-out/resolve}"
