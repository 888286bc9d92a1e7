#!/usr/bin/env bash
# Set up everything the tests and the main job need on a fresh Debian machine: MariaDB server (apt-get,
# only when mariadbd is missing), a virtualenv at .venv with the project and its extras, and MySQL 9 and
# MariaDB 11.8 LTS (Debian sid's packages unpacked into the user cache, never into the system; see
# binlog_model/testing/sid.py) with MySQL's own test suite. Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."

# mariadb-server for the real-server tests; mariadb-test-data for MariaDB's own binlog test files
# (decoded by the corpus tests, which skip without them).
packages=()
if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
  packages+=(mariadb-server mariadb-client)
fi
if [ ! -d /usr/share/mysql/mysql-test ]; then
  packages+=(mariadb-test-data)
fi
if [ ${#packages[@]} -gt 0 ]; then
  echo "bootstrap: installing ${packages[*]} with apt-get" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.bootstrap-stamp
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/pip install -q --disable-pip-version-check -e '.[dev,spark,fixtures]'
  touch "$stamp"
fi

# MySQL 9 from Debian sid into ~/.cache/binlog-model (BINLOG_MODEL_CACHE overrides), once: ~10 s for the
# server, ~20 s for mysql-testsuite. The exact builds and their SHA-256 are pinned in
# binlog_model/testing/sid_pins.py (renewed with `python -m binlog_model.testing.sid --refresh-pins --write`).
# Where the pinned build cannot be had this warns and the MySQL tests skip with the reason; in CI
# (BINLOG_MODEL_REQUIRE_SERVERS=1 or CI set) it fails instead.
echo "bootstrap: MySQL 9 (Debian sid, user cache) and mysql-testsuite" >&2
.venv/bin/python -m binlog_model.testing.mysql --with-testsuite >&2

# MariaDB 11.8 LTS from Debian sid into the same cache, once (~10 s), pinned the same way: a warning and
# skipped tests locally, a failure in CI.
echo "bootstrap: MariaDB 11.8 LTS (Debian sid, user cache)" >&2
.venv/bin/python -m binlog_model.testing.mariadb11 >&2
