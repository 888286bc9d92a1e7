"""What a column holds where no change gave it a value: its DEFAULT, or the server's implicit default.

Rows that exist when a column is added get its default (the server fills them; the binlog has no row event
for that), and so do the columns a MINIMAL-image INSERT does not name. Only a constant default is known
here: an expression (``CURRENT_TIMESTAMP``, ``(RAND())``), a generated or AUTO_INCREMENT column, or a zero
date is not, and the value is then null and the column listed in ``binlog_invalid``: never a guess.
"""

from __future__ import annotations

import datetime
import re
from decimal import Decimal, InvalidOperation
from typing import Any

import pyarrow as pa

from binlog_model.spark.typed_values import InvalidValue, coerce_value
from schema_tracker.model import ColumnSchema

__all__ = ["default_value"]

_NUMERIC = {"tinyint", "smallint", "mediumint", "int", "integer", "bigint", "decimal", "float", "double",
            "year", "bit"}
_TEXT = {"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "binary", "varbinary", "tinyblob",
         "blob", "mediumblob", "longblob", "set"}
_QUOTED = re.compile(r"^'((?:[^']|'')*)'$", re.S)


def default_value(column: ColumnSchema, arrow: pa.DataType) -> tuple[bool, Any]:
    """``(known, value)``: the value ``column`` gets by default, typed for ``arrow``; ``known`` is false
    when it cannot be known here (the value is then None)."""
    if column.generated is not None or column.auto_increment:
        return False, None
    if not column.has_default:
        if column.nullable:
            return True, None
        return _implicit(column, arrow)
    if column.default is None or column.default.upper() == "NULL":
        return True, None
    plain = _literal(column)
    if plain is None:
        return False, None
    try:
        return True, coerce_value(plain, arrow)
    except InvalidValue:
        return False, None


def _implicit(column: ColumnSchema, arrow: pa.DataType) -> tuple[bool, Any]:
    """The server's default for a NOT NULL column without DEFAULT: 0, '', the first ENUM label; a zero
    date has no typed value (unknown)."""
    t = column.data_type
    if t in _NUMERIC:
        return True, coerce_value(0, arrow)
    if t in _TEXT:
        return True, coerce_value(b"" if pa.types.is_binary(arrow) else "", arrow)
    if t == "enum" and column.enum_values:
        return True, column.enum_values[0]
    return False, None


def _literal(column: ColumnSchema) -> Any:
    """A constant DEFAULT's plain value (None: not a constant)."""
    text = (column.default or "").strip()
    t = column.data_type
    if text.lower().startswith("b'") and text.endswith("'"):
        return int(text[2:-1] or "0", 2)
    if text.lower().startswith("0x"):
        try:
            raw = bytes.fromhex(text[2:])
        except ValueError:
            return None
        return raw if t not in _NUMERIC else int.from_bytes(raw, "big")
    quoted = _QUOTED.match(text)
    if quoted is not None:
        text = quoted.group(1).replace("''", "'")
        if t in ("date",):
            return _parse(datetime.date.fromisoformat, text)
        if t in ("datetime", "timestamp"):
            value = _parse(datetime.datetime.fromisoformat, text)
            if isinstance(value, datetime.datetime) and t == "timestamp":
                return None      # a TIMESTAMP default is in the session's time zone: not known here
            return value
        if t == "time":
            return None
        if t in _NUMERIC:
            return _number(text)
        return text
    if text.startswith("("):
        return None     # an expression default
    return _number(text)


def _parse(parse: Any, text: str) -> Any:
    try:
        return parse(text)
    except ValueError:
        return None


def _number(text: str) -> Any:
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return int(value) if value == value.to_integral_value() and "." not in text and "e" not in text.lower() \
        else value
