#!/usr/bin/env bash
# Regenerate the protobuf classes in binlog_model/_pb/ from proto/ (grpcio-tools' bundled protoc).
# Usage: scripts/gen_proto.sh [OUT_DIR]   (default binlog_model/_pb; tests/unit/test_proto_fresh.py passes a temp dir
# and compares bytes, so commit the output of this script unchanged).
# The .proto keeps its package path (binlog_model/v1/...) so its descriptor name is unique in the default pool;
# the generated module has no imports of ours, so it is moved flat into OUT_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
OUT=${1:-binlog_model/_pb}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" -m grpc_tools.protoc -Iproto --python_out="$tmp" --pyi_out="$tmp" proto/binlog_model/v1/binlog_event.proto
mkdir -p "$OUT"
cp "$tmp/binlog_model/v1/binlog_event_pb2.py" "$tmp/binlog_model/v1/binlog_event_pb2.pyi" "$OUT/"
# The C core's field numbers follow the descriptor just written (tests/unit/test_proto_fields.py checks it).
if [ "$OUT" = binlog_model/_pb ]; then "$PY" scripts/gen_proto_fields.py; fi
