"""Decoded column values that have no natural Python type.

Strategy: the wire layer returns plain Python values wherever one fits (int, bytes, Decimal, datetime);
the few cases that do not fit get a small frozen dataclass here, so a consumer can tell "not in the row
image" (``NOT_PRESENT``) from SQL NULL (``None``) and a zero date from a real one without guessing.
``JsonDocument.to_json`` renders the tree as MySQL's ``JSON`` output does (``", "`` and ``": "``).
"""

from __future__ import annotations

import base64
import datetime
import json
import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

__all__ = [
    "NOT_PRESENT",
    "Geometry",
    "InvalidDate",
    "InvalidDateTime",
    "JsonDiff",
    "JsonDocument",
    "JsonOpaque",
    "NotPresent",
    "format_json_double",
]


class NotPresent:
    """Type of ``NOT_PRESENT``: the column is not in this row image (MINIMAL/NOBLOB images)."""

    __slots__ = ()
    _instance: NotPresent | None = None

    def __new__(cls) -> NotPresent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NOT_PRESENT"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "NOT_PRESENT"


NOT_PRESENT: Final = NotPresent()


@dataclass(frozen=True, slots=True)
class InvalidDate:
    """A DATE the server stored but Python cannot represent (``0000-00-00``, ``2020-02-00``...)."""

    year: int
    month: int
    day: int

    def __str__(self) -> str:
        return f"{self.year:04d}-{self.month:02d}-{self.day:02d}"


@dataclass(frozen=True, slots=True)
class InvalidDateTime:
    """A DATETIME/TIMESTAMP with a zero or invalid date part; TIMESTAMP zero is all zeros."""

    year: int
    month: int
    day: int
    hour: int = 0
    minute: int = 0
    second: int = 0
    microsecond: int = 0

    def __str__(self) -> str:
        text = (f"{self.year:04d}-{self.month:02d}-{self.day:02d} "
                f"{self.hour:02d}:{self.minute:02d}:{self.second:02d}")
        return f"{text}.{self.microsecond:06d}" if self.microsecond else text


@dataclass(frozen=True, slots=True)
class JsonOpaque:
    """A JSON opaque scalar of a MySQL type this library does not turn into a Python value."""

    mysql_type: int
    raw: bytes


@dataclass(frozen=True, slots=True)
class Geometry:
    """A GEOMETRY value: the SRID MySQL prefixes and the OGC WKB bytes after it."""

    srid: int
    wkb: bytes


@dataclass(frozen=True, slots=True)
class JsonDiff:
    """One entry of a MySQL 8 partial JSON update (PARTIAL_UPDATE_ROWS_EVENT).

    ``operation`` is ``"REPLACE"``, ``"INSERT"`` or ``"REMOVE"``; ``path`` is the JSON path text;
    ``value`` is the new value (a JSON tree as in ``JsonDocument.value``), ``None`` for REMOVE.
    """

    operation: str
    path: str
    value: Any = None


class JsonDiffs(tuple[JsonDiff, ...]):
    """The diffs of one partially updated JSON column, in order: a tuple of ``JsonDiff`` with a type of its
    own, so that no other tuple value (a VECTOR's floats, a SET's labels) is ever taken for one."""

    __slots__ = ()


@dataclass(frozen=True, slots=True, eq=False)
class JsonDocument:
    """A binary JSON value decoded into a Python tree (see docs/contracts.md for the leaf types).

    Two documents are equal when they render the same: Python's own ``1 == True == 1.0`` must not make
    ``{"x": 1}`` and ``{"x": true}`` look unchanged.
    """

    value: Any

    def to_json(self) -> str:
        """Render as MySQL prints JSON: ``{"a": 1, "b": [true, null]}``."""
        parts: list[str] = []
        _render(self.value, parts)
        return "".join(parts)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, JsonDocument):
            return NotImplemented
        return self is other or self.to_json() == other.to_json()

    def __hash__(self) -> int:
        return hash(self.to_json())


def format_json_double(v: float) -> str:
    """A double as MySQL's JSON output writes it: shortest round-trip digits, ``1e100``, ``1.0``."""
    if math.isnan(v) or math.isinf(v):
        # JSON cannot hold these; MySQL refuses them on input, so they only come from corrupt data.
        return json.dumps(str(v))
    text = repr(v)
    if "e" in text:
        mant, exp = text.split("e")
        sign = "-" if exp.startswith("-") else ""
        return f"{mant.removesuffix('.0')}e{sign}{exp.lstrip('+-').lstrip('0') or '0'}"
    return text


def _render(v: Any, out: list[str]) -> None:
    if v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, str):
        out.append(json.dumps(v, ensure_ascii=False))
    elif isinstance(v, int):
        out.append(str(v))
    elif isinstance(v, float):
        out.append(format_json_double(v))
    elif isinstance(v, Decimal):
        out.append(format(v, "f"))
    elif isinstance(v, dict):
        out.append("{")
        first = True
        for k, item in v.items():
            if not first:
                out.append(", ")
            first = False
            out.append(json.dumps(k, ensure_ascii=False))
            out.append(": ")
            _render(item, out)
        out.append("}")
    elif isinstance(v, list):
        out.append("[")
        for i, item in enumerate(v):
            if i:
                out.append(", ")
            _render(item, out)
        out.append("]")
    elif isinstance(v, datetime.datetime):
        out.append(f'"{v.strftime("%Y-%m-%d %H:%M:%S")}.{v.microsecond:06d}"')
    elif isinstance(v, datetime.date):
        out.append(f'"{v.isoformat()}"')
    elif isinstance(v, datetime.timedelta):
        out.append(f'"{_format_time(v)}"')
    elif isinstance(v, JsonOpaque):
        out.append(f'"base64:type{v.mysql_type}:{base64.b64encode(v.raw).decode("ascii")}"')
    elif isinstance(v, InvalidDate | InvalidDateTime):
        out.append(f'"{v}"')
    else:
        out.append(json.dumps(str(v), ensure_ascii=False))


def _format_time(v: datetime.timedelta) -> str:
    total = v.days * 86_400_000_000 + v.seconds * 1_000_000 + v.microseconds
    sign = "-" if total < 0 else ""
    total = abs(total)
    secs, micro = divmod(total, 1_000_000)
    h, rem = divmod(secs, 3600)
    m, s = divmod(rem, 60)
    return f"{sign}{h:02d}:{m:02d}:{s:02d}.{micro:06d}"
