"""Codecs for DATE, TIME, DATETIME and TIMESTAMP columns, old and fractional (MySQL 5.6+) formats.

Strategy: the 5.6+ "2" types are big-endian with an offset so that byte order sorts like the value;
the old types are little-endian integers. A value Python cannot hold (zero dates, day 0, month 13 from
corrupt or sql_mode='' rows) becomes ``InvalidDate``/``InvalidDateTime``, never an exception. The
``packed`` helpers are shared with JSON opaque temporal values, which use MySQL's in-memory packed form.
"""

from __future__ import annotations

import datetime

from binlog_model.errors import UnsupportedEventError
from binlog_model.wire.codecs._bounds import Buffer, need
from binlog_model.wire.values import InvalidDate, InvalidDateTime

__all__ = [
    "datetime_from_packed",
    "decode_date",
    "decode_datetime",
    "decode_datetime2",
    "decode_time",
    "decode_time2",
    "decode_timestamp",
    "decode_timestamp2",
    "make_date",
    "make_datetime",
    "time_from_packed",
]

_UTC = datetime.UTC
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=_UTC)
_TIMEF_INT_OFS = 0x800000
_TIMEF_OFS = 0x800000000000
_DATETIMEF_INT_OFS = 0x8000000000
# Bytes of the fractional part for fsp 0..6.
_FRAC_BYTES = (0, 1, 1, 2, 2, 3, 3)


_timedelta = datetime.timedelta


def _frac_bytes(fsp: int, what: str) -> int:
    if not 0 <= fsp <= 6:
        raise UnsupportedEventError(f"{what} with fractional precision {fsp}", expected="fsp 0-6")
    return _FRAC_BYTES[fsp]


def make_date(year: int, month: int, day: int) -> datetime.date | InvalidDate:
    """``datetime.date`` when valid, else ``InvalidDate`` (zero and out-of-range parts)."""
    try:
        return datetime.date(year, month, day)
    except ValueError:
        return InvalidDate(year, month, day)


def make_datetime(year: int, month: int, day: int, hour: int, minute: int, second: int,
                  micro: int) -> datetime.datetime | InvalidDateTime:
    """Naive ``datetime.datetime`` when valid, else ``InvalidDateTime``."""
    try:
        return datetime.datetime(year, month, day, hour, minute, second, micro)
    except ValueError:
        return InvalidDateTime(year, month, day, hour, minute, second, micro)


def datetime_from_packed(packed: int) -> datetime.datetime | InvalidDateTime:
    """MySQL's packed DATETIME longlong (``intpart << 24 | microseconds``) as a value."""
    if packed < 0:
        packed = -packed
    intpart, micro = packed >> 24, packed & 0xFFFFFF
    ymd, hms = intpart >> 17, intpart & 0x1FFFF
    ym = ymd >> 5
    return make_datetime(ym // 13, ym % 13, ymd & 31, hms >> 12, (hms >> 6) & 63, hms & 63, micro)


def time_from_packed(packed: int) -> datetime.timedelta:
    """MySQL's packed TIME longlong as a (possibly negative) timedelta."""
    sign = -1 if packed < 0 else 1
    packed = abs(packed)
    hms, micro = packed >> 24, packed & 0xFFFFFF
    hours = (hms >> 12) & 0x3FF
    # Positional (days, seconds, microseconds): about twice as fast as keyword arguments.
    delta = _timedelta(0, hours * 3600 + ((hms >> 6) & 63) * 60 + (hms & 63), micro)
    return -delta if sign < 0 else delta


def decode_date(buf: Buffer, pos: int, meta: int) -> tuple[datetime.date | InvalidDate, int]:
    """DATE/NEWDATE: 3 bytes little-endian, ``year << 9 | month << 5 | day``."""
    if pos + 3 > len(buf):
        need(buf, pos, 3, "DATE")
    v = buf[pos] | (buf[pos + 1] << 8) | (buf[pos + 2] << 16)
    return make_date(v >> 9, (v >> 5) & 15, v & 31), pos + 3


def decode_time(buf: Buffer, pos: int, meta: int) -> tuple[datetime.timedelta, int]:
    """Old TIME: 3 bytes little-endian signed integer ``HHMMSS``."""
    if pos + 3 > len(buf):
        need(buf, pos, 3, "TIME")
    v = buf[pos] | (buf[pos + 1] << 8) | (buf[pos + 2] << 16)
    if v & 0x800000:
        v -= 0x1000000
    sign = -1 if v < 0 else 1
    v = abs(v)
    delta = datetime.timedelta(hours=v // 10000, minutes=(v // 100) % 100, seconds=v % 100)
    return (-delta if sign < 0 else delta), pos + 3


def decode_time2(buf: Buffer, pos: int, meta: int) -> tuple[datetime.timedelta, int]:
    """TIME2 (meta = fsp): 3 bytes big-endian with offset, then 0-3 fraction bytes.

    Negative values keep the fraction "reversed" for sort order, which ``my_time_packed_from_binary``
    undoes by borrowing one second.
    """
    nfrac = _frac_bytes(meta, "TIME2")
    if pos + (3 + nfrac) > len(buf):
        need(buf, pos, 3 + nfrac, "TIME2")
    if nfrac == 3:
        packed = int.from_bytes(buf[pos:pos + 6], "big") - _TIMEF_OFS
        return time_from_packed(packed), pos + 6
    intpart = int.from_bytes(buf[pos:pos + 3], "big") - _TIMEF_INT_OFS
    if nfrac == 0:
        return time_from_packed(intpart << 24), pos + 3
    if nfrac == 1:
        frac = buf[pos + 3]
        if intpart < 0 and frac:
            intpart += 1
            frac -= 0x100
        return time_from_packed((intpart << 24) + frac * 10000), pos + 4
    frac = (buf[pos + 3] << 8) | buf[pos + 4]
    if intpart < 0 and frac:
        intpart += 1
        frac -= 0x10000
    return time_from_packed((intpart << 24) + frac * 100), pos + 5


def _read_frac(buf: Buffer, pos: int, nfrac: int) -> int:
    if nfrac == 1:
        return buf[pos] * 10000
    if nfrac == 2:
        return ((buf[pos] << 8) | buf[pos + 1]) * 100
    if nfrac == 3:
        return (buf[pos] << 16) | (buf[pos + 1] << 8) | buf[pos + 2]
    return 0


def decode_datetime(buf: Buffer, pos: int, meta: int) -> tuple[datetime.datetime | InvalidDateTime, int]:
    """Old DATETIME: 8 bytes little-endian integer ``YYYYMMDDhhmmss``."""
    if pos + 8 > len(buf):
        need(buf, pos, 8, "DATETIME")
    v = int.from_bytes(buf[pos:pos + 8], "little")
    if v > 99991231235959:
        # No old-format DATETIME is this large: these are the 8 bytes of MariaDB's pre-10.1 high-precision
        # DATETIME(n) (mysql56_temporal_format=OFF), which TABLE_MAP logs with the same type and no fsp.
        raise UnsupportedEventError(
            f"DATETIME value {v} is out of range for the old format: MariaDB's pre-10.1 high-precision "
            "temporal columns (mysql56_temporal_format=OFF) are not supported; ALTER them to the current "
            "format (or FORCE the table) before decoding")
    d, t = divmod(v, 1_000_000)
    return make_datetime(d // 10000, (d // 100) % 100, d % 100, t // 10000, (t // 100) % 100,
                         t % 100, 0), pos + 8


def decode_datetime2(buf: Buffer, pos: int, meta: int) -> tuple[datetime.datetime | InvalidDateTime, int]:
    """DATETIME2 (meta = fsp): 5 bytes big-endian with offset, then 0-3 fraction bytes."""
    nfrac = _frac_bytes(meta, "DATETIME2")
    if pos + (5 + nfrac) > len(buf):
        need(buf, pos, 5 + nfrac, "DATETIME2")
    intpart = int.from_bytes(buf[pos:pos + 5], "big") - _DATETIMEF_INT_OFS
    micro = _read_frac(buf, pos + 5, nfrac)
    return datetime_from_packed((intpart << 24) + micro), pos + 5 + nfrac


def _timestamp(seconds: int, micro: int) -> datetime.datetime | InvalidDateTime:
    if seconds == 0:
        # 0 is the zero timestamp '0000-00-00 00:00:00', not the epoch.
        return InvalidDateTime(0, 0, 0, 0, 0, 0, 0)
    return _EPOCH + _timedelta(0, seconds, micro)


def decode_timestamp(buf: Buffer, pos: int, meta: int) -> tuple[datetime.datetime | InvalidDateTime, int]:
    """Old TIMESTAMP: 4 bytes little-endian seconds since the epoch (UTC)."""
    if pos + 4 > len(buf):
        need(buf, pos, 4, "TIMESTAMP")
    return _timestamp(int.from_bytes(buf[pos:pos + 4], "little"), 0), pos + 4


def decode_timestamp2(buf: Buffer, pos: int, meta: int) -> tuple[datetime.datetime | InvalidDateTime, int]:
    """TIMESTAMP2 (meta = fsp): 4 bytes big-endian seconds, then 0-3 fraction bytes."""
    nfrac = _frac_bytes(meta, "TIMESTAMP2")
    if pos + (4 + nfrac) > len(buf):
        need(buf, pos, 4 + nfrac, "TIMESTAMP2")
    seconds = int.from_bytes(buf[pos:pos + 4], "big")
    return _timestamp(seconds, _read_frac(buf, pos + 4, nfrac)), pos + 4 + nfrac
