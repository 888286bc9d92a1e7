#!/usr/bin/env bash
# Set up only what the main job (`binlog-model resolve` on local Spark) needs: a virtualenv at .venv with
# the project and its `spark` extra. No database server, no MySQL download, no test tools (scripts/bootstrap.sh
# installs those for the test suite). Java 17+ must be on the machine: `resolve` checks and says so.
# Idempotent: a second run only checks. PYTHON=/path/to/python3.11 picks the interpreter for the venv.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "main: [$(date +%H:%M:%S)] $*" >&2; }

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  say "creating the virtualenv .venv with $PY"
  "$PY" -m venv .venv
fi
# scripts/bootstrap.sh's stamp means every extra is already installed (a superset of what runs here).
if [ -f .venv/.bootstrap-stamp ] && [ ! pyproject.toml -nt .venv/.bootstrap-stamp ]; then
  exit 0
fi
stamp=.venv/.main-stamp
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  say "installing binlog-model[spark] into .venv (pyspark is ~300 MB: the first time takes a few minutes)"
  # pip's own lines, filtered to one per package, as progress.
  .venv/bin/pip install --disable-pip-version-check --no-color -e '.[spark]' 2>&1 \
    | grep --line-buffered -E '^(Collecting|Downloading|Installing collected|Successfully|ERROR)' \
    | sed -u 's/^/main:   /' >&2 || true
  if ! .venv/bin/python -c 'import binlog_model, pyspark' 2>/dev/null; then
    say "pip did not install binlog-model[spark]; rerun: .venv/bin/pip install -e '.[spark]'"
    exit 1
  fi
  touch "$stamp"
  say "installed"
fi
