"""The C core's protobuf field numbers come from the .proto: binlog_model/_speedups/proto_fields.h is exactly
what scripts/gen_proto_fields.py writes from the generated descriptor (binlog_model/_pb, itself checked
against proto/ by test_proto_fresh.py), and no C source spells a field number or tag of its own."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests._paths import REPO

SPEEDUPS = REPO / "binlog_model" / "_speedups"
# the C sources that read or write protobuf messages
PROTOBUF_SOURCES = ("arrow_columns.c", "typed_columns.c", "values.c", "rows.c")


def test_the_committed_header_is_what_the_descriptor_gives(tmp_path: Path) -> None:
    fresh = tmp_path / "proto_fields.h"
    subprocess.run([sys.executable, str(REPO / "scripts" / "gen_proto_fields.py"), str(fresh)], check=True,
                   capture_output=True, cwd=REPO, timeout=60)
    committed = (SPEEDUPS / "proto_fields.h").read_text(encoding="utf-8")
    assert fresh.read_text(encoding="utf-8") == committed, (
        "binlog_model/_speedups/proto_fields.h is stale: run python scripts/gen_proto_fields.py and commit")


def test_the_header_numbers_are_the_descriptor_numbers() -> None:
    from binlog_model._pb import binlog_event_pb2 as pb

    defines = dict(re.findall(r"^#define (PB_\w+) (.+)$", (SPEEDUPS / "proto_fields.h").read_text(), re.M))
    assert defines["PB_VALUE_BIT_VALUE"] == str(pb.Value.DESCRIPTOR.fields_by_name["bit_value"].number)
    assert defines["PB_VALUE_BIT_VALUE_TAG"] == "0x80, 0x01"            # 16 << 3 | varint, as a varint
    assert defines["PB_BINLOG_EVENT_ROWS"] == str(pb.BinlogEvent.DESCRIPTOR.fields_by_name["rows"].number)
    assert defines["PB_BINLOG_EVENT_ROWS_TAG"] == "0x5a"                 # 11 << 3 | length-delimited
    assert defines["PB_BINLOG_EVENT_OPERATION_DELETE"] == str(pb.BinlogEvent.DELETE)
    assert defines["PB_TIMESTAMP_NANOS"] == "2"


def test_c_sources_take_their_field_numbers_from_the_header() -> None:
    """Every source that speaks protobuf includes the header, and hand-written tags and message field
    enums are gone (a number must come through a PB_ name)."""
    for name in PROTOBUF_SOURCES:
        text = (SPEEDUPS / name).read_text(encoding="utf-8")
        assert '#include "proto_fields.h"' in text, name
        # an enum constant set to a bare number under a name that says "field" (EV_, POS_, ROW_, COL_, V_)
        handwritten = re.findall(r"\b(?:EV|POS|ROW|COL|V)_[A-Z_]+ = \d+", text)
        assert not handwritten, f"{name}: field numbers written by hand: {handwritten}"
        assert not re.findall(r"case \d+:", text), f"{name}: a field switched on by its number"
