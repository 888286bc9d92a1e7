"""The binlog's fixed-width little-endian layouts, compiled once for every reader of the wire format.

Strategy: ``struct.Struct`` objects are stateless, so one instance per layout serves the decoder, the
cursor, the column codecs, binary JSON and the replication reader alike; a layout (the v4 event header
above all) is then stated in one place and cannot drift between two readers.
"""

from __future__ import annotations

import struct

__all__ = ["F32", "F64", "HEADER_V1", "HEADER_V4", "I8", "I16", "I32", "I64", "U8", "U16", "U32", "U64"]

I8 = struct.Struct("<b")
U8 = struct.Struct("<B")
I16 = struct.Struct("<h")
U16 = struct.Struct("<H")
I32 = struct.Struct("<i")
U32 = struct.Struct("<I")
I64 = struct.Struct("<q")
U64 = struct.Struct("<Q")
F32 = struct.Struct("<f")
F64 = struct.Struct("<d")

HEADER_V4 = struct.Struct("<IBIIIH")  # timestamp, type, server_id, event_size, log_pos, flags (19 bytes)
HEADER_V1 = struct.Struct("<IBII")  # timestamp, type, server_id, event_size (binlog v1, 13 bytes)
