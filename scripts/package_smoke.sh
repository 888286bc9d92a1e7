#!/usr/bin/env bash
# Packaging smoke (part of scripts/test.sh, about a minute): what a user gets from `pip install`.
#   1. `python -m build` makes the sdist and, from it, the wheel (so the sdist must carry the C sources).
#   2. The wheel goes into a fresh venv; outside the checkout, the compiled core must be on, `binlog-model
#      --version` must say so, and every golden fixture shipped in the wheel must decode to its
#      expected.jsonl.
#   3. The sdist built again with no working compiler (CC=/bin/false): the install still succeeds, the
#      core is off with its reason, and the fixtures still decode (the pure-Python path).
# PYTHON picks the interpreter that builds (default .venv/bin/python; it needs `build`, setuptools, wheel:
# the dev extra). Builds run without build isolation, so no network is needed to compile; the fresh venv
# gets the runtime dependencies from the package index pip is configured with.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
work=$(mktemp -d "${TMPDIR:-/tmp}/binlog-model-package.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$PY" -m build --no-isolation --outdir "$work/dist" . >"$work/build.log" 2>&1 || {
  tail -n 40 "$work/build.log"; exit 1; }
sdist=$(ls "$work"/dist/*.tar.gz)
wheel=$(ls "$work"/dist/*.whl)
case "$wheel" in
  *-none-any.whl) echo "package smoke: the wheel has no compiled extension: $wheel" >&2; exit 1 ;;
esac
tar -tzf "$sdist" >"$work/sdist.txt"
grep -q '/binlog_model/_speedups/.*\.c$' "$work/sdist.txt" || {
  echo "package smoke: the sdist lacks the C sources" >&2; exit 1; }

"$PY" -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check "$wheel"

# Run from an empty folder so nothing resolves to the checkout.
check() {  # check EXPECTED_STATUS_PREFIX
  (cd "$work" && "$work/venv/bin/python" - "$1" "$work/venv" <<'EOF'
import sys
from importlib.metadata import files
from pathlib import Path

import binlog_model
from binlog_model.testing.golden import verify_fixture

want, venv = sys.argv[1], Path(sys.argv[2]).resolve()
assert Path(binlog_model.__file__).resolve().is_relative_to(venv), binlog_model.__file__
status = binlog_model.compiled_core()
assert status.startswith(want), f"compiled core: {status} (wanted {want})"
dirs = sorted({Path(f.locate()).parent for f in files("binlog-model") if f.name == "expected.jsonl"})
assert dirs, "the wheel bundles no golden fixtures"
bad = [r.report() for r in map(verify_fixture, dirs) if not r.ok]
assert not bad, "\n".join(bad)[:4000]
print(f"package smoke: compiled core: {status}; {len(dirs)} bundled fixtures decode to their expectations")
EOF
  )
  (cd "$work" && "$work/venv/bin/binlog-model" --version) >"$work/version.txt"
  grep -q "^compiled core: $1" "$work/version.txt" || {
    echo "package smoke: binlog-model --version lacks 'compiled core: $1'" >&2; exit 1; }
}
check on

# No compiler: the optional extension fails to build, the install does not.
CC=/bin/false "$PY" -m pip wheel -q --no-build-isolation --no-deps -w "$work/nocc" "$sdist" \
  >"$work/nocc.log" 2>&1 || { tail -n 40 "$work/nocc.log"; exit 1; }
"$work/venv/bin/pip" install -q --disable-pip-version-check --no-deps --force-reinstall "$work"/nocc/*.whl
check "off (not built"
echo "package smoke: ok"
