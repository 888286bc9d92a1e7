"""``typed_values.message_converters``: each shortcut gives exactly what ``message_value`` gives for the same
``Value`` message and column type (the same value, of the same Python type, with a decimal's exponent and a
zero's sign), or raises ``InvalidValue`` where it does; over random values of every kind a shortcut takes,
edges included (out of range, wrong scale, too many digits, no such date, the zero timestamp)."""

from __future__ import annotations

import random
from typing import Any

import pyarrow as pa
import pytest

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.spark.typed_values import InvalidValue, message_converters, message_value

TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.float32(), pa.float64(), pa.decimal128(12, 2),
         pa.decimal128(20, 0), pa.decimal128(38, 10), pa.decimal128(5, 5), pa.date32(), pa.timestamp("us"),
         pa.timestamp("us", tz="UTC")]


def _values(rng: random.Random) -> list[pb.Value]:
    out = []
    for _ in range(400):
        edges = [0, -128, 127, 128, -129, 32767, -32769, rng.randrange(-2**31, 2**31)]
        out.append(pb.Value(int_value=rng.choice(edges)))
        out.append(pb.Value(long_value=rng.choice([2**31, -2**63, 2**63 - 1, rng.randrange(-2**63, 2**63)])))
        out.append(pb.Value(uint64_value=rng.choice([0, 2**63, 2**64 - 1, rng.randrange(2**64)])))
        out.append(pb.Value(bit_value=rng.randrange(2**rng.choice([1, 8, 40, 64]))))
        out.append(pb.Value(time_micros=rng.randrange(-838 * 3600 * 10**6, 838 * 3600 * 10**6)))
        out.append(pb.Value(float_value=rng.uniform(-1e6, 1e6)))
        out.append(pb.Value(double_value=rng.choice([rng.uniform(-1e300, 1e300), 0.1, -0.0])))
        whole = rng.choice(["0", "-0", "1", "12345678901", "99999999999999999999",
                            str(rng.randrange(10**30)), "007", "-000", "9999999999", "-0009999999999",
                            "0" * 40 + "1", "-" + str(10**rng.choice([9, 10, 19, 20, 27, 28]) - 1)])
        scale = rng.choice([0, 1, 2, 5, 10, 12])
        frac = "".join(rng.choice("0123456789") for _ in range(scale))
        out.append(pb.Value(decimal_value=f"{whole}.{frac}" if scale else whole))
        # texts the decoder never writes but Decimal reads
        out.append(pb.Value(decimal_value=rng.choice([".25", "-.5", "1.", "+1.25", "1e3", "1E-2", "-0.",
                                                      "00.", ".00000", "-.00", "0.10"])))
        out.append(pb.Value(date_value=pb.Date(year=rng.choice([0, 1, 2024, 9999]),
                                               month=rng.randrange(0, 13), day=rng.randrange(0, 32))))
        out.append(pb.Value(datetime_value=pb.DateTime(
            year=rng.choice([0, 1000, 2024, 9999]), month=rng.randrange(0, 13), day=rng.randrange(0, 32),
            hour=rng.randrange(0, 25), minute=rng.randrange(0, 61), second=rng.randrange(0, 61),
            micros=rng.choice([0, 999999, 1000000, rng.randrange(10**6)]))))
        out.append(pb.Value(timestamp_micros=rng.choice([0, 1, -1, rng.randrange(-2**40, 2**50)])))
    return out


def _answer(fn: Any) -> Any:
    try:
        value = fn()
    except InvalidValue:
        return "invalid"
    return type(value), repr(value)


@pytest.mark.parametrize("arrow", TYPES, ids=str)
def test_each_shortcut_gives_what_message_value_gives(arrow: pa.DataType) -> None:
    shortcuts = message_converters(arrow)
    assert shortcuts, f"no shortcut for {arrow}"
    compared = invalid = 0
    for value in _values(random.Random(str(arrow))):
        kind = value.WhichOneof("kind")
        shortcut = shortcuts.get(kind)
        if shortcut is None:
            continue
        raw = getattr(value, kind)
        expected = _answer(lambda: message_value(value, arrow))       # noqa: B023 - called at once
        assert _answer(lambda: shortcut(raw)) == expected, (arrow, kind, raw)       # noqa: B023
        compared += 1
        invalid += expected == "invalid"
    assert compared >= 400
    assert invalid or arrow in (pa.float32(), pa.float64()), "no edge value reached the invalid branch"
