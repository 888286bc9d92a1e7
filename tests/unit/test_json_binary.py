"""MySQL binary JSON: every value type, containers, opaque values, diffs, rendering, and corruption.

Real-server binary JSON is covered by test_rows_corpus (MySqlCdc and mysql-bin.000057, both MySQL);
MariaDB has no binary JSON. The byte strings below are HAND-BUILT from the documented format
(``json_binary.h``) to reach the types those files lack, and to corrupt them.
"""

from __future__ import annotations

import collections
import datetime
import random
import struct
from decimal import Decimal
from typing import Any

import pytest

from binlog_model.errors import DecodeError, TruncatedEventError
from binlog_model.wire.json_binary import parse_json_binary, parse_json_diffs
from binlog_model.wire.values import JsonDiff, JsonDocument, JsonOpaque, format_json_double

# small array [1, "a"]: count 2, size 12, entries (int16 inline 1), (string at offset 10), then "\x01a"
SMALL_ARRAY = bytes.fromhex("02" "0200" "0c00" "050100" "0c0a00" "0161")
# small object {"a": null}: count 1, size 12, key entry (offset 11, len 1), value entry literal null, "a"
SMALL_OBJECT = bytes.fromhex("00" "0100" "0c00" "0b000100" "040000" "61")
# large array [2147483647]: 4-byte count/size; int32 is inlined in large containers
LARGE_ARRAY = bytes.fromhex("03" "01000000" "0d000000" "07ffffff7f")
DECIMAL_OPAQUE = bytes.fromhex("0f" "f6" "09" "0e04" "810DFB38D204D2")


def _packed_datetime(y: int, mo: int, d: int, h: int, mi: int, s: int, us: int) -> bytes:
    ymd = ((y * 13 + mo) << 5) | d
    hms = (h << 12) | (mi << 6) | s
    return struct.pack("<q", (((ymd << 17) | hms) << 24) + us)


SCALARS: list[tuple[str, bytes, Any]] = [
    ("null", b"\x04\x00", None),
    ("true", b"\x04\x01", True),
    ("false", b"\x04\x02", False),
    ("int16", b"\x05\xff\xff", -1),
    ("uint16", b"\x06\xff\xff", 65535),
    ("int32", b"\x07" + struct.pack("<i", -300000), -300000),
    ("uint32", b"\x08" + struct.pack("<I", 3000000000), 3000000000),
    ("int64", b"\x09" + struct.pack("<q", -3000000000), -3000000000),
    ("uint64", b"\x0a" + struct.pack("<Q", 2**64 - 1), 2**64 - 1),
    ("double", b"\x0b" + struct.pack("<d", 12345678.87654321), 12345678.87654321),
    ("string", b"\x0c\x06Monica", "Monica"),
    ("empty_string", b"\x0c\x00", ""),
    ("long_string", b"\x0c\x80\x01" + b"x" * 128, "x" * 128),  # 2-byte variable length
    ("utf8_string", b"\x0c\x04" + "😀".encode(), "😀"),
    ("small_array", SMALL_ARRAY, [1, "a"]),
    ("small_object", SMALL_OBJECT, {"a": None}),
    ("large_array", LARGE_ARRAY, [2147483647]),
    ("decimal", DECIMAL_OPAQUE, Decimal("1234567890.1234")),
    ("datetime", b"\x0f\x0c\x08" + _packed_datetime(2015, 1, 15, 23, 24, 25, 500),
     datetime.datetime(2015, 1, 15, 23, 24, 25, 500)),
    ("date", b"\x0f\x0a\x08" + _packed_datetime(2015, 1, 15, 0, 0, 0, 0), datetime.date(2015, 1, 15)),
    ("time", b"\x0f\x0b\x08" + struct.pack("<q", -(((1 << 12) | (2 << 6) | 3) << 24)),
     -datetime.timedelta(hours=1, minutes=2, seconds=3)),
    ("opaque_other", b"\x0f\xfc\x02\x01\x02", JsonOpaque(252, b"\x01\x02")),
    ("empty_document", b"", None),
]


@pytest.mark.parametrize(("data", "expected"), [s[1:] for s in SCALARS], ids=[s[0] for s in SCALARS])
def test_value_types(data: bytes, expected: Any) -> None:
    assert parse_json_binary(data) == expected


@pytest.mark.parametrize("data", [s[1] for s in SCALARS if s[1]], ids=[s[0] for s in SCALARS if s[1]])
def test_every_truncation_is_a_typed_error(data: bytes) -> None:
    for n in range(1, len(data)):
        try:
            parse_json_binary(data[:n])
        except (TruncatedEventError, DecodeError):
            continue
        # Opaque values shorter than their packed form fall back to JsonOpaque; nothing else may pass.
        assert data[0] == 0x0F


def test_offset_past_container_is_truncated_error() -> None:
    bad = bytearray(SMALL_ARRAY)
    bad[9] = 0x40  # the string entry's offset now points past the 12-byte array
    with pytest.raises(TruncatedEventError):
        parse_json_binary(bytes(bad))


def test_unknown_type_byte_is_decode_error() -> None:
    with pytest.raises(DecodeError, match="unknown JSON value type 0x0e"):
        parse_json_binary(b"\x0e\x00")


def test_random_and_damaged_bytes_decode_or_raise_typed_errors() -> None:
    """A type byte followed by random bytes, and a hand-built value above with one byte replaced, either
    decode or raise ``TruncatedEventError``/``DecodeError`` (nothing else); mixed in, the undamaged values
    decode to theirs. Both outcomes are counted, so a parser that raised for every input fails here."""
    rng = random.Random(99)
    valid = [(data, expected) for _, data, expected in SCALARS if data]
    outcomes: collections.Counter[str] = collections.Counter()
    for n in range(3000):
        if n % 3 == 0:
            data, expected = valid[n // 3 % len(valid)]
            assert parse_json_binary(data) == expected
            outcomes["valid"] += 1
            continue
        if n % 3 == 1:
            good = rng.choice(valid)[0]
            at = rng.randrange(len(good))
            data = good[:at] + bytes([rng.getrandbits(8)]) + good[at + 1:]
        else:
            data = bytes([rng.choice([0, 1, 2, 3, 4, 5, 12, 15])]) + bytes(
                rng.getrandbits(8) for _ in range(rng.randint(0, 30)))
        try:
            parse_json_binary(data)
        except (TruncatedEventError, DecodeError):
            outcomes["error"] += 1
        else:
            outcomes["decoded"] += 1
    assert outcomes["valid"] == 1000
    # Both outcomes in a meaningful share (about 30% of the damaged and random inputs decode with this seed).
    assert outcomes["error"] >= 200 and outcomes["decoded"] >= 200, outcomes


def test_diffs() -> None:
    # REPLACE $.a with int16 1; REMOVE $.b; INSERT $.c[0] with "x"
    data = (b"\x00\x03$.a\x03\x05\x01\x00" + b"\x02\x03$.b" + b"\x01\x06$.c[0]\x03\x0c\x01x")
    assert parse_json_diffs(data) == (
        JsonDiff("REPLACE", "$.a", 1), JsonDiff("REMOVE", "$.b"), JsonDiff("INSERT", "$.c[0]", "x"))
    with pytest.raises(DecodeError, match="operation 7"):
        parse_json_diffs(b"\x07\x00")
    with pytest.raises(TruncatedEventError):
        parse_json_diffs(data[:-1])


def test_to_json_renders_like_mysql() -> None:
    doc = JsonDocument({"a": 1, "b": [True, None], "c": "é\"\n", "d": Decimal("1.50"), "e": 2.5,
                        "f": datetime.date(2015, 1, 15), "g": datetime.datetime(2015, 1, 15, 1, 2, 3),
                        "h": -datetime.timedelta(hours=1, seconds=1), "i": JsonOpaque(252, b"\x01")})
    assert doc.to_json() == (
        '{"a": 1, "b": [true, null], "c": "é\\"\\n", "d": 1.50, "e": 2.5, "f": "2015-01-15", '
        '"g": "2015-01-15 01:02:03.000000", "h": "-01:00:01.000000", "i": "base64:type252:AQ=="}')
    assert JsonDocument([]).to_json() == "[]" and JsonDocument({}).to_json() == "{}"


@pytest.mark.parametrize(("value", "text"), [(1.0, "1.0"), (1e100, "1e100"), (-1.5e-7, "-1.5e-7"),
                                              (0.1, "0.1"), (12345678.87654321, "12345678.87654321")])
def test_double_rendering(value: float, text: str) -> None:
    assert format_json_double(value) == text
