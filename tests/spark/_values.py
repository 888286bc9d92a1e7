"""Hand-built ``Value`` messages shared by the Arrow batch tests (no pyspark, no pyarrow needed here)."""

from __future__ import annotations

import math
import random
import struct

from binlog_model._pb import binlog_event_pb2 as pb


def edge_values() -> list[pb.Value]:
    """Hand-built values: every kind, with the edges of each (zero fields, escapes, non-finite floats...)."""
    values = []
    for p in [(2024, 1, 2, 3, 4, 5, 6), (0, 0, 0, 0, 0, 0, 0), (9999, 12, 31, 23, 59, 59, 999999),
              (0, 1, 0, 0, 0, 0, 1), (2018, 2, 29, 0, 0, 0, 0), (2000, 2, 29, 24, 0, 0, 0)]:
        values += [pb.Value(datetime_value=pb.DateTime(year=p[0], month=p[1], day=p[2], hour=p[3],
                                                       minute=p[4], second=p[5], micros=p[6])),
                   pb.Value(date_value=pb.Date(year=p[0], month=p[1], day=p[2]))]
    values += [pb.Value(set_value=pb.SetValue(labels=labels))
               for labels in ([], ["a"], ["a", 'b"', "é", "\x01"], [""], ["", ""])]
    values += [pb.Value(bytes_value=b) for b in (b"", b"\xff\x00", bytes(range(256)), "é".encode())]
    values += [pb.Value(string_value=t) for t in ("", 'é"\\\n\x00\u2028', "\U0001F600", "\x7f\x1f\\\\", "12")]
    values += [pb.Value(json_value='{"a": "x\\"y"}'), pb.Value(decimal_value="-12.340"),
               pb.Value(decimal_value="123456.7"), pb.Value(decimal_value="0.00000001")]
    values += [pb.Value(long_value=-5), pb.Value(time_micros=-5), pb.Value(uint64_value=2**64 - 1),
               pb.Value(int_value=-2**31), pb.Value(long_value=-2**63), pb.Value(long_value=3_000_000_000),
               pb.Value(bit_value=2**64 - 1), pb.Value(bit_value=5), pb.Value(timestamp_micros=0),
               pb.Value(timestamp_micros=-1), pb.Value(timestamp_micros=1_527_574_930_000_001),
               pb.Value(null_value=0), pb.Value(int_value=2**24 + 1), pb.Value(long_value=2**53 + 1)]
    rnd = random.Random(20261123)
    for _ in range(500):
        d = rnd.choice([rnd.random() * 10 ** rnd.randint(-30, 30), float(rnd.randint(-10**17, 10**17))])
        values += [pb.Value(double_value=d),
                   pb.Value(float_value=struct.unpack("f", rnd.randbytes(4))[0])]
    for v in (math.nan, math.inf, -math.inf, 0.0, -0.0, 5e-324, 1e16, 1e-5, 100.0):
        values += [pb.Value(double_value=v), pb.Value(float_value=v)]
    values += [pb.Value(geometry_value=pb.Geometry(srid=4326, wkb=b"\x01\x02")),
               pb.Value(vector_value=pb.Vector(values=[1.5, 2.0])),
               pb.Value(raw_text_value=pb.RawText(data=b"\xff", charset="utf8mb4")),
               pb.Value(json_diff=pb.JsonDiff(operations=[pb.JsonDiffOperation(op=1, path="$", value="1")])),
               pb.Value()]
    rnd.shuffle(values)
    return values
