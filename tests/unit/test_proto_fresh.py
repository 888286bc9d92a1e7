"""The committed generated code in binlog_model/_pb/ is exactly what scripts/gen_proto.sh makes from proto/.

Regenerates into a temp dir with the same script and compares bytes, so an edited .proto without a
regeneration (or a hand edit of generated code) fails here with the file named.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests._paths import REPO

GENERATED = ("binlog_event_pb2.py", "binlog_event_pb2.pyi")


def test_generated_code_is_fresh(tmp_path: Path) -> None:
    if importlib.util.find_spec("grpc_tools") is None:
        pytest.skip("grpcio-tools is not installed (pip install -e '.[dev]')")
    subprocess.run(["bash", str(REPO / "scripts" / "gen_proto.sh"), str(tmp_path)], check=True,
                   env={"PYTHON": sys.executable, "PATH": "/usr/bin:/bin"}, capture_output=True, timeout=120)
    for name in GENERATED:
        fresh = (tmp_path / name).read_bytes()
        committed = (REPO / "binlog_model" / "_pb" / name).read_bytes()
        assert fresh == committed, f"binlog_model/_pb/{name} is stale: run scripts/gen_proto.sh and commit"


def test_generated_module_imports_under_the_package() -> None:
    from binlog_model._pb import binlog_event_pb2

    assert binlog_event_pb2.DESCRIPTOR.name == "binlog_model/v1/binlog_event.proto"
    assert binlog_event_pb2.DESCRIPTOR.package == "binlog_model.v1"
