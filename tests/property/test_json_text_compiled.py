"""The compiled JSON renderer (``_speedups.json_text``) against the Python reference, byte for byte.

The reference is ``JsonDocument(parse_json_binary(data)).to_json()``. The C renderer may answer ``None``
("let the reference decide"), but when it answers text it must be the reference's text, and it must
answer ``None`` for every document the reference refuses. Inputs: every JSON value in the golden
fixtures, the shared corpus and the MySQL/MariaDB test-suite binlogs (collected while the real decoder
reads them); hypothesis documents in MySQL's key order; those documents damaged by the fuzz mutator; and
hand-built edge cases (named as such). Skipped without the built extension (scripts/test.sh builds it).
"""

from __future__ import annotations

import math
import random
import struct
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.fuzz.mutate import json_document, json_encode
from binlog_model.compiled import speedups
from binlog_model.errors import BinlogError
from binlog_model.wire.json_binary import parse_json_binary
from binlog_model.wire.values import JsonDocument

pytestmark = pytest.mark.skipif(speedups is None, reason="compiled core off (not built or BINLOG_MODEL_PURE)")


def _reference(data: bytes) -> str | None:
    try:
        return JsonDocument(parse_json_binary(data)).to_json()
    except BinlogError:
        return None


def _check(data: bytes) -> str | None:
    """Assert the contract on one input; return the C answer."""
    assert speedups is not None
    got = speedups.json_text(data)
    want = _reference(data)
    if want is None:
        assert got is None, f"C renders a document the reference refuses: {data.hex()} -> {got!r}"
    elif got is not None:
        assert got == want, f"{data.hex()}: C {got!r} != reference {want!r}"
    return got


def _mysql_order(value: Any) -> Any:
    """Objects with keys in MySQL's stored order (length of the UTF-8 key, then its bytes)."""
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (len(k.encode()), k.encode()))
        return {k: _mysql_order(value[k]) for k in keys}
    if isinstance(value, list):
        return [_mysql_order(v) for v in value]
    return value


def _document(value: Any, large: bool = False) -> bytes:
    t, body = json_encode(_mysql_order(value), large)
    return bytes([t]) + body


def test_every_json_value_in_the_shared_binlogs() -> None:
    from benchmarks.fuzz.native import json_documents, seed_binlogs

    docs = json_documents(seed_binlogs())   # the real decoder runs; each document it meets is kept
    assert len(docs) >= 10, "the golden fixtures alone hold JSON values: the collection point moved?"
    rendered = [_check(d) for d in docs]
    assert all(r is not None for r, d in zip(rendered, docs, strict=True) if b"\x0f" not in d[:1]), (
        "a real document without opaque values was left to the reference")


_scalars = st.one_of(
    st.none(), st.booleans(),
    st.integers(-(1 << 63), (1 << 64) - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
)
_json = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=6), st.dictionaries(st.text(max_size=12), inner, max_size=6)), max_leaves=40)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_json, st.booleans())
def test_generated_documents_render_identically(value: Any, large: bool) -> None:
    data = _document(value, large)
    got = _check(data)
    assert got is not None, f"valid document left to the reference: {data.hex()}"


def test_damaged_documents_never_render_what_the_reference_refuses() -> None:
    rng = random.Random(14)
    refused = rendered = 0
    for _ in range(4000):
        data = json_document(rng)
        if _check(data) is None:
            refused += 1
        else:
            rendered += 1
    assert refused > 500 and rendered > 500  # both sides of the contract were exercised


def _varlen(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


# Hand-built edge cases (corruption and rare forms, named as such).
_EDGES = {
    "empty value is null": b"",
    "string with every escape": bytes([0x0C]) + _varlen(11) + b'"\\\b\f\n\r\t\x00\x1f\x7f/',
    "string with a cut multibyte": bytes([0x0C, 2, 0x61, 0xC3]),
    "string with valid multibyte": bytes([0x0C]) + _varlen(9) + "é€😀".encode(),
    "overlong utf-8": bytes([0x0C, 2, 0xC0, 0x80]),
    "surrogate utf-8": bytes([0x0C, 3, 0xED, 0xA0, 0x80]),
    "above U+10FFFF": bytes([0x0C, 4, 0xF4, 0x90, 0x80, 0x80]),
    "varlen of 6 bytes": bytes([0x0C, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]),
    "string longer than the value": bytes([0x0C, 0x7F, 0x61]),
    "opaque blob": bytes([0x0F, 252]) + _varlen(5) + b"\x00\x01\xfe\xff\x80",
    "opaque varchar of 1 and 2 bytes": bytes([0x02, 2, 0, 17, 0, 0x0F, 10, 0, 0x0F, 13, 0,
                                              15, 1, 0x61, 15, 2, 0x61, 0x62]),
    "opaque decimal (left to the reference)": bytes([0x0F, 246, 4, 4, 2, 0x81, 0x00]),
    "opaque date (left to the reference)": bytes([0x0F, 10, 8]) + b"\0" * 8,
    "unknown literal": bytes([0x04, 0x03]),
    "unknown type": bytes([0x0D, 0]),
    "int16 cut short": bytes([0x05, 1]),
    "int64 min": bytes([0x09]) + struct.pack("<q", -(1 << 63)),
    "uint64 max": bytes([0x0A]) + b"\xff" * 8,
    "double nan": bytes([0x0B]) + struct.pack("<d", math.nan),
    "double -inf": bytes([0x0B]) + struct.pack("<d", -math.inf),
    "double 1e-7": bytes([0x0B]) + struct.pack("<d", 1e-7),
    "double 1e22": bytes([0x0B]) + struct.pack("<d", 1e22),
    "double -0.0": bytes([0x0B]) + struct.pack("<d", -0.0),
    "object keys out of order (left to the reference)": bytes([0x00, 2, 0, 20, 0, 18, 0, 1, 0, 19, 0, 1, 0,
                                                               0x04, 1, 0, 0x04, 2, 0, 0x62, 0x61]),
    "object with a duplicate key": bytes([0x00, 2, 0, 19, 0, 18, 0, 1, 0, 18, 0, 1, 0,
                                          0x04, 1, 0, 0x04, 2, 0, 0x61]),
    "container size past the value": bytes([0x02, 1, 0, 0xFF, 0x00, 0x04, 0, 0]),
    "value offset past the container": bytes([0x02, 1, 0, 7, 0, 0x0C, 9, 0]),
    "header larger than size": bytes([0x02, 5, 0, 7, 0, 0x04, 0, 0]),
    "large array with inline int32": bytes([0x03, 1, 0, 0, 0, 13, 0, 0, 0, 0x07, 0xFF, 0xFF, 0xFF, 0x7F]),
    "small array with int32 by offset": bytes([0x02, 1, 0, 11, 0, 0x07, 7, 0, 1, 0, 0, 0]),
    "nesting 100 deep": b"\x02" + b"".join(struct.pack("<HH", 1, 7 * (100 - i) + 4) + b"\x02\x07\x00"
                                           for i in range(100)) + struct.pack("<HH", 0, 4),
    "nesting 102 deep": b"\x02" + b"".join(struct.pack("<HH", 1, 7 * (102 - i) + 4) + b"\x02\x07\x00"
                                           for i in range(102)) + struct.pack("<HH", 0, 4),
}


@pytest.mark.parametrize("name", list(_EDGES))
def test_edge_cases(name: str) -> None:
    _check(_EDGES[name])


def test_edge_cases_left_to_the_reference() -> None:
    # The reference renders these; C hands them back (Decimal/date formatting, dict key merging).
    for name in ("object keys out of order (left to the reference)", "object with a duplicate key",
                 "opaque decimal (left to the reference)", "opaque date (left to the reference)"):
        assert _reference(_EDGES[name]) is not None, name
        assert speedups is not None and speedups.json_text(_EDGES[name]) is None, name


def test_edge_cases_that_c_renders_itself() -> None:
    # Not everything may go back to the reference: the common forms are rendered in C.
    for name in ("empty value is null", "string with every escape", "string with valid multibyte",
                 "opaque blob", "opaque varchar of 1 and 2 bytes", "int64 min", "uint64 max", "double nan",
                 "double -inf", "double 1e-7", "double 1e22", "double -0.0", "large array with inline int32",
                 "small array with int32 by offset", "nesting 100 deep"):
        assert _check(_EDGES[name]) is not None, name


def test_every_truncation_of_a_real_document_is_refused_or_identical() -> None:
    data = _document({"a": [1, 2.5, "x" * 200, None, {"b": True}], "long key here": -70000, "u": 1 << 63})
    for cut in range(len(data)):
        _check(data[:cut])
    assert _check(data) is not None
