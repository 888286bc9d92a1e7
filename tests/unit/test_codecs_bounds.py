"""Every column codec: a known value decodes, and every truncation raises TruncatedEventError.

The inputs here are HAND-BUILT edge-case bytes (real-server values are covered by test_rows_seeds,
test_rows_corpus and test_server_values). Packed DECIMAL examples are the ones documented in MySQL's
``decimal2bin`` comment; temporal bytes follow the documented layouts.
"""

from __future__ import annotations

import collections
import datetime
import random
import struct
from decimal import Decimal
from typing import Any

import pytest

from binlog_model.errors import BinlogError, DecodeError, TruncatedEventError
from binlog_model.wire.codecs import json as json_codecs
from binlog_model.wire.codecs import numeric, spatial, strings, temporal
from binlog_model.wire.codecs.dispatch import Codec, codec_for
from binlog_model.wire.column_types import ColumnType as T
from binlog_model.wire.values import Geometry, InvalidDate, InvalidDateTime, JsonDocument

UTC = datetime.UTC

# (id, codec, meta, hand-built bytes, expected value)
CASES: list[tuple[str, Codec, int, bytes, Any]] = [
    ("tiny", numeric.decode_tiny, 0, b"\x80", -128),
    ("tiny_unsigned", numeric.decode_tiny_unsigned, 0, b"\xff", 255),
    ("short", numeric.decode_short, 0, b"\x00\x80", -32768),
    ("short_unsigned", numeric.decode_short_unsigned, 0, b"\xff\xff", 65535),
    ("int24", numeric.decode_int24, 0, b"\x00\x00\x80", -8388608),
    ("int24_unsigned", numeric.decode_int24_unsigned, 0, b"\xff\xff\xff", 16777215),
    ("long", numeric.decode_long, 0, b"\xff\xff\xff\xff", -1),
    ("long_unsigned", numeric.decode_long_unsigned, 0, b"\xff\xff\xff\xff", 4294967295),
    ("longlong", numeric.decode_longlong, 0, b"\x00" * 7 + b"\x80", -(2**63)),
    ("longlong_unsigned", numeric.decode_longlong_unsigned, 0, b"\xff" * 8, 2**64 - 1),
    ("float", numeric.decode_float, 4, struct.pack("<f", 1.5), 1.5),
    ("double", numeric.decode_double, 8, struct.pack("<d", -2.25), -2.25),
    ("newdecimal", numeric.decode_newdecimal, (14 << 8) | 4, bytes.fromhex("810DFB38D204D2"),
     Decimal("1234567890.1234")),
    ("newdecimal_negative", numeric.decode_newdecimal, (14 << 8) | 4, bytes.fromhex("7EF204C72DFB2D"),
     Decimal("-1234567890.1234")),
    ("newdecimal_scale0", numeric.decode_newdecimal, (5 << 8), bytes.fromhex("800001"), Decimal(1)),
    ("bit", numeric.decode_bit, (1 << 8) | 2, b"\x03\xff", 0x3FF),
    ("year", numeric.decode_year, 0, b"\x7b", 2023),
    ("year_zero", numeric.decode_year, 0, b"\x00", 0),
    ("vector", numeric.decode_vector, 4, b"\x08\x00\x00\x00" + struct.pack("<2f", 1.0, -2.5), (1.0, -2.5)),
    ("date", temporal.decode_date, 0, bytes.fromhex("4a280f"), datetime.date(1940, 2, 10)),
    ("date_zero", temporal.decode_date, 0, b"\x00\x00\x00", InvalidDate(0, 0, 0)),
    ("time", temporal.decode_time, 0, (-123456 & 0xFFFFFF).to_bytes(3, "little"),
     -datetime.timedelta(hours=12, minutes=34, seconds=56)),
    ("time2_fsp0", temporal.decode_time2, 0, (0x800000 + (1 << 12)).to_bytes(3, "big"),
     datetime.timedelta(hours=1)),
    # -00:00:00.5 with fsp 1: integer part -1 (0x7fffff) plus a "reversed" fraction 0x100 - 50.
    ("time2_fsp1_negative", temporal.decode_time2, 1, (0x800000 - 1).to_bytes(3, "big") + bytes([0x100 - 50]),
     -datetime.timedelta(seconds=0, microseconds=500000)),
    ("time2_fsp4", temporal.decode_time2, 4, (0x800000 + 1).to_bytes(3, "big") + (1234).to_bytes(2, "big"),
     datetime.timedelta(seconds=1, microseconds=123400)),
    ("time2_fsp6", temporal.decode_time2, 6,
     (0x800000000000 + (1 << 24) + 7).to_bytes(6, "big"), datetime.timedelta(seconds=1, microseconds=7)),
    ("datetime", temporal.decode_datetime, 0, (20200229123456).to_bytes(8, "little"),
     datetime.datetime(2020, 2, 29, 12, 34, 56)),
    ("datetime2_fsp3", temporal.decode_datetime2, 3,
     (0x8000000000 + ((((2020 * 13 + 2) << 5) | 29) << 17) + ((12 << 12) | (34 << 6) | 56))
     .to_bytes(5, "big") + (789 * 10).to_bytes(2, "big"),
     datetime.datetime(2020, 2, 29, 12, 34, 56, 789000)),
    ("datetime2_zero", temporal.decode_datetime2, 0, (0x8000000000).to_bytes(5, "big"),
     InvalidDateTime(0, 0, 0)),
    ("timestamp", temporal.decode_timestamp, 0, (1).to_bytes(4, "little"),
     datetime.datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)),
    ("timestamp2_fsp6", temporal.decode_timestamp2, 6, (86400).to_bytes(4, "big") + (5).to_bytes(3, "big"),
     datetime.datetime(1970, 1, 2, 0, 0, 0, 5, tzinfo=UTC)),
    ("timestamp2_zero", temporal.decode_timestamp2, 0, b"\x00" * 4, InvalidDateTime(0, 0, 0)),
    ("varchar", strings.decode_varchar, 10, b"\x03abc", b"abc"),
    ("varchar_2byte_length", strings.decode_varchar, 300, b"\x03\x00abc", b"abc"),
    ("string", strings.decode_string, 40, b"\x02hi", b"hi"),
    ("enum", strings.decode_enum, 2, b"\x2c\x01", 300),
    ("set", strings.decode_set, 8, b"\xff" * 8, 2**64 - 1),
    ("blob1", strings.decode_blob, 1, b"\x02xy", b"xy"),
    ("blob4", strings.decode_blob, 4, b"\x02\x00\x00\x00xy", b"xy"),
    ("geometry", spatial.decode_geometry, 4,
     b"\x19\x00\x00\x00" + b"\xe6\x10\x00\x00" + bytes.fromhex("0101000000000000000000f03f0000000000000040"),
     Geometry(4326, bytes.fromhex("0101000000000000000000f03f0000000000000040"))),
    ("json", json_codecs.decode_json, 4, b"\x02\x00\x00\x00\x04\x01", JsonDocument(True)),
]


@pytest.mark.parametrize(("codec", "meta", "data", "expected"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_codec_decodes_value_and_consumes_exactly(codec: Codec, meta: int, data: bytes,
                                                   expected: Any) -> None:
    # A trailing byte proves the codec reports how much it consumed instead of reading to the end.
    value, end = codec(memoryview(data + b"\xee"), 0, meta)
    assert value == expected
    assert end == len(data)


@pytest.mark.parametrize(("codec", "meta", "data"), [c[1:4] for c in CASES], ids=[c[0] for c in CASES])
def test_codec_truncated_input_raises_truncated_error(codec: Codec, meta: int, data: bytes) -> None:
    for n in range(len(data)):
        with pytest.raises(TruncatedEventError) as info:
            codec(memoryview(data[:n]), 0, meta)
        assert info.value.expected  # says what it wanted


def test_codec_reads_at_an_offset() -> None:
    value, end = numeric.decode_long(memoryview(b"\x00\x00\x2a\x00\x00\x00"), 2, 0)
    assert (value, end) == (42, 6)


def test_string_meta_unpacks_char_lengths_above_255() -> None:
    # CHAR(100) utf8mb4 = 400 bytes: 400 = 0x190, bits 8-9 (0b01) stored inverted in bits 4-5 of byte0.
    byte0 = T.STRING ^ ((400 >> 4) & 0x30)
    assert strings.split_string_meta((byte0 << 8) | (400 & 0xFF)) == (T.STRING, 400)
    assert strings.split_string_meta(0xF701) == (T.ENUM, 1)
    assert strings.split_string_meta(0xF808) == (T.SET, 8)


def test_codec_for_picks_unsigned_and_unpacks_enum() -> None:
    assert codec_for(T.LONG, 0, unsigned=True)[0] is numeric.decode_long_unsigned
    assert codec_for(T.LONG, 0)[0] is numeric.decode_long
    assert codec_for(T.STRING, 0xF702) == (strings.decode_enum, 2)


@pytest.mark.parametrize(("column_type", "meta"), [(T.DECIMAL, 0), (T.TIME2, 7), (T.BLOB, 5), (200, 0),
                                                    (T.STRING, 0xF703)])
def test_unsupported_columns_raise_a_typed_error_when_used(column_type: int, meta: int) -> None:
    codec, m = codec_for(column_type, meta)
    with pytest.raises(BinlogError):
        codec(memoryview(b"\x00" * 16), 0, m)


@pytest.mark.parametrize(("codec", "meta", "data", "expected"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_codec_on_random_and_damaged_bytes_decodes_or_raises_a_decode_error(codec: Codec, meta: int,
                                                                          data: bytes, expected: Any) -> None:
    """Random bytes, and the case's bytes with one byte replaced, either decode within their bounds or raise
    a ``DecodeError`` (truncated, unsupported or invalid), nothing else; mixed in, the undamaged bytes
    followed by random ones decode to the case's value. Both outcomes are counted: a codec that raised for
    every input, or never raised, would fail here."""
    rng = random.Random(1234)
    outcomes: collections.Counter[str] = collections.Counter()
    for n in range(300):
        if n % 3 == 0:  # valid: the case's bytes, then anything
            value, end = codec(memoryview(data + rng.randbytes(rng.randint(0, 8))), 0, meta)
            assert (value, end) == (expected, len(data))
            outcomes["valid"] += 1
            continue
        if n % 3 == 1:  # damaged: one byte of the case's bytes replaced
            at = rng.randrange(len(data))
            sample = data[:at] + bytes([rng.getrandbits(8)]) + data[at + 1:]
        else:
            sample = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 24)))
        try:
            _value, end = codec(memoryview(sample), 0, meta)
        except DecodeError:  # TruncatedEventError and UnsupportedEventError are DecodeErrors
            outcomes["error"] += 1
        else:
            assert 0 < end <= len(sample)
            outcomes["decoded"] += 1
    assert outcomes["valid"] == 100
    assert outcomes["error"] > 0, outcomes
    assert outcomes["error"] + outcomes["decoded"] == 200


@pytest.mark.parametrize("meta", [0x0000, 0x0205, 0x4200, 0x0A1F])
def test_impossible_newdecimal_metadata_is_unsupported_not_a_crash(meta: int) -> None:
    """HAND-BUILT metadata (precision 0, scale above precision, precision 66, scale 31): the column's
    values cannot be sized, so using the codec raises UnsupportedEventError."""
    from binlog_model.errors import UnsupportedEventError
    from binlog_model.wire.codecs.dispatch import codec_for
    from binlog_model.wire.column_types import ColumnType

    codec, codec_meta = codec_for(ColumnType.NEWDECIMAL, meta)
    with pytest.raises(UnsupportedEventError, match="NEWDECIMAL"):
        codec(memoryview(b"\x80\x00\x00\x00\x00\x00"), 0, codec_meta)
