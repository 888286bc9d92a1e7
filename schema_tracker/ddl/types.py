"""Column definitions: data types, attributes, charset resolution and the server's type rewrites."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from sqlglot import exp

from binlog_model.charsets import CHARSET_CODECS, make_text_decoder
from schema_tracker.ddl.dialect import (
    IgnoredColumnAttribute,
    SerialDefaultValueColumnConstraint,
    SridColumnConstraint,
    UnsignedColumnAttribute,
    session,
    unsupported,
)
from schema_tracker.model import (
    TEXTUAL_TYPES,
    ColumnSchema,
    TableSchema,
    charset_of_collation,
    mbmaxlen,
)

_INT_TYPES: dict[str, tuple[str, bool]] = {
    "TINYINT": ("tinyint", False), "UTINYINT": ("tinyint", True),
    "SMALLINT": ("smallint", False), "USMALLINT": ("smallint", True),
    "MEDIUMINT": ("mediumint", False), "UMEDIUMINT": ("mediumint", True),
    "INT": ("int", False), "UINT": ("int", True),
    "BIGINT": ("bigint", False), "UBIGINT": ("bigint", True),
}
INT_WIDTH = {"tinyint": (4, 3), "smallint": (6, 5), "mediumint": (9, 8), "int": (11, 10),
              "bigint": (20, 20)}
_SIMPLE_TYPES = {
    "DATE": "date", "JSON": "json", "GEOMETRY": "geometry", "UUID": "uuid",
    "TINYTEXT": "tinytext", "TEXT": "text", "MEDIUMTEXT": "mediumtext", "LONGTEXT": "longtext",
    "TINYBLOB": "tinyblob", "BLOB": "blob", "MEDIUMBLOB": "mediumblob", "LONGBLOB": "longblob",
    "VARCHAR": "varchar", "NVARCHAR": "varchar", "CHAR": "char", "NCHAR": "char",
    "BINARY": "binary", "VARBINARY": "varbinary", "BIT": "bit",
    "TIME": "time", "DATETIME": "datetime", "TIMESTAMP": "timestamp", "TIMESTAMPTZ": "timestamp",
    "YEAR": "year", "ENUM": "enum", "SET": "set", "POINT": "point", "LINESTRING": "linestring",
    "POLYGON": "polygon", "MULTILINESTRING": "multilinestring", "MULTIPOLYGON": "multipolygon",
    "IPADDRESS": "inet6", "INET": "inet4", "INT4MULTIRANGE": "multipoint",
    "INT8MULTIRANGE": "geometrycollection", "VECTOR": "vector",
}
# ALTER TABLE actions that manage partitions (never columns).
# Also DISABLE/ENABLE KEYS and ORDER BY (row order), which touch no column either.
# Column constraint kinds that do not change what the tracker records.
_IGNORED_CONSTRAINTS = (
    exp.CommentColumnConstraint, exp.UniqueColumnConstraint, exp.OnUpdateColumnConstraint,
    exp.CheckColumnConstraint, exp.Reference, exp.IndexColumnConstraint, SridColumnConstraint,
    IgnoredColumnAttribute,
)
_TEXT_SIZES = (("tinytext", "tinyblob", 255), ("text", "blob", 65535),
               ("mediumtext", "mediumblob", 16777215), ("longtext", "longblob", 4294967295))
BINARY_OF = {"char": "binary", "varchar": "varbinary", "tinytext": "tinyblob", "text": "blob",
              "mediumtext": "mediumblob", "longtext": "longblob"}



def _int_param(node: exp.Expression) -> int:
    value = node.this if isinstance(node, exp.DataTypeParam) else node
    try:
        if "." in value.name:  # FLOAT(7.4), DECIMAL(19.5): both servers drop the fraction (19.5 is 19)
            return int(Decimal(value.name))
        return int(value.name)
    except (ValueError, AttributeError) as err:
        raise unsupported(f"type parameter is not an integer: {node.sql('mysql')}") from err


def column_def(node: exp.ColumnDef, table: TableSchema) -> tuple[ColumnSchema, bool]:
    """The column a definition describes in ``table`` (for charset inheritance); and whether it carries
    an inline PRIMARY KEY."""
    kind = node.args.get("kind")
    if not isinstance(kind, exp.DataType):
        raise unsupported(f"column {node.name!r} has no data type")
    col = _data_type(node.name, kind)
    charset = collation = None
    binary_attr = False
    nullable, pk = True, False
    for cons in node.args.get("constraints") or []:
        k = cons.args.get("kind") if isinstance(cons, exp.ColumnConstraint) else cons
        if isinstance(k, exp.NotNullColumnConstraint):
            nullable = bool(k.args.get("allow_null"))
        elif isinstance(k, exp.PrimaryKeyColumnConstraint):
            pk = True
        elif isinstance(k, exp.AutoIncrementColumnConstraint):
            col = replace(col, auto_increment=True)
        elif isinstance(k, exp.DefaultColumnConstraint):
            value = k.this
            if isinstance(value, exp.Collate):  # DEFAULT '' COLLATE x: the COLLATE is the column's
                collation = session().collation(value.expression.name)
                value = value.this
            if isinstance(value, exp.Introducer):  # DEFAULT _utf8'abc': the value is the literal
                value = value.expression
            is_null = isinstance(value, exp.Null)
            col = replace(col, default=None if is_null else value.sql("mysql"), has_default=True)
        elif isinstance(k, exp.CharacterSetColumnConstraint):
            charset = session().charset(k.this.name)
        elif isinstance(k, exp.CollateColumnConstraint):
            collation = session().collation(k.this.name)
        elif isinstance(k, exp.ComputedColumnConstraint):
            col = replace(col, generated=k.this.sql("mysql"), generated_stored=bool(k.args.get("persisted")))
        elif isinstance(k, exp.GeneratedAsIdentityColumnConstraint) and k.args.get("expression") is not None:
            # GENERATED ALWAYS AS (expr) without VIRTUAL/STORED: a VIRTUAL generated column
            col = replace(col, generated=k.args["expression"].sql("mysql"), generated_stored=False)
        elif isinstance(k, exp.InvisibleColumnConstraint):
            col = replace(col, invisible=True)
        elif isinstance(k, exp.ZeroFillColumnConstraint):
            col = replace(col, zerofill=True, unsigned=True)
            if col.data_type in INT_WIDTH and node.args["kind"].expressions == []:
                col = replace(col, length=INT_WIDTH[col.data_type][1])
        elif isinstance(k, UnsignedColumnAttribute):
            if col.data_type in INT_WIDTH and not kind.expressions:  # the unsigned default width
                col = replace(col, length=INT_WIDTH[col.data_type][1])
            col = replace(col, unsigned=True)
        elif isinstance(k, SerialDefaultValueColumnConstraint):
            col = replace(col, auto_increment=True)
            nullable = False
        elif isinstance(k, exp.BinaryColumnConstraint):
            binary_attr = True
        elif isinstance(k, _IGNORED_CONSTRAINTS):
            continue
        else:
            raise unsupported(f"column attribute {type(k).__name__} of {node.name!r} not understood")
    if col.data_type == "serial":
        col = replace(col, data_type="bigint", length=20, unsigned=True, auto_increment=True)
        nullable = False
    if col.auto_increment:
        nullable = False  # the server makes an AUTO_INCREMENT column NOT NULL
    col = replace(col, nullable=nullable and not pk)
    if kind.this in (exp.DataType.Type.NCHAR, exp.DataType.Type.NVARCHAR):
        charset = charset or "utf8mb3"
    if col.data_type == "varbinary" and col.length is not None and col.length > 65535:
        col = replace(col, data_type="blob")  # as VARCHAR above: too long for a row, a BLOB type
    if col.data_type == "blob":
        col = _sized(col, col.length)
    return _server_rules(_hex_labels(_resolve_charset(col, table, charset, collation, binary_attr))), pk


HEX_LABEL = "\x00hex:"  # marks an ENUM/SET label written as a hex literal until its charset is known


def _hex_labels(col: ColumnSchema) -> ColumnSchema:
    """ENUM/SET labels as the server stores them in the column's charset: hex/bit labels are bytes in that
    charset (binary: UTF-8 text when valid, else one character per byte); text labels the charset cannot
    hold become '?' per character, as the server converts them."""
    if col.data_type not in ("enum", "set"):
        return col
    decode = make_text_decoder(col.charset) if col.charset not in (None, "binary") else None
    codec = CHARSET_CODECS.get(col.charset or "") if col.charset not in (None, "binary") else None
    lossy = codec is not None and not codec.startswith(("utf", "ucs", "utf_"))
    if not lossy and not any(v.startswith(HEX_LABEL) for v in col.enum_values):
        return col
    if decode is None and col.charset not in (None, "binary"):
        raise unsupported(f"labels of column {col.name!r}: no codec for charset {col.charset}")
    labels = []
    for v in col.enum_values:
        if not v.startswith(HEX_LABEL):
            if lossy and decode is not None and codec is not None:
                v = decode(v.encode(codec, errors="replace"))
            labels.append(v)
            continue
        raw = bytes.fromhex(v[len(HEX_LABEL):]).rstrip(b" ")
        try:
            if decode is None:  # binary: the bytes as text when they are UTF-8, else byte by byte
                try:
                    labels.append(raw.decode("utf-8"))
                except UnicodeDecodeError:
                    labels.append(raw.decode("latin1"))
            else:
                labels.append(decode(raw))
        except (UnicodeDecodeError, ValueError) as err:
            raise unsupported(f"hex label 0x{raw.hex()} of column {col.name!r} is not valid "
                              f"{col.charset}") from err
    return replace(col, enum_values=tuple(labels))


def _server_rules(col: ColumnSchema) -> ColumnSchema:
    """What MySQL 8+ stores differently from MariaDB and MySQL 5.7: integer display widths are dropped
    (kept for ZEROFILL and for signed TINYINT(1), the boolean idiom), YEAR has no width, and
    GEOMETRYCOLLECTION is called GEOMCOLLECTION."""
    if not session().mysql8:
        return col
    if col.data_type in INT_WIDTH and not col.zerofill \
            and not (col.data_type == "tinyint" and col.length == 1 and not col.unsigned):
        return replace(col, length=None)
    if col.data_type == "year":
        return replace(col, length=None)
    if col.data_type == "geometrycollection":
        return replace(col, data_type="geomcollection")
    return col


def _resolve_charset(col: ColumnSchema, table: TableSchema, charset: str | None, collation: str | None,
                     binary_attr: bool) -> ColumnSchema:
    if col.data_type not in TEXTUAL_TYPES:
        return col
    if charset is None and collation is None and table.charset == "binary":
        charset = "binary"  # a CHARSET=binary table: its textual columns are binary ones
    if collation is not None and charset is None:
        charset = charset_of_collation(collation)  # COLLATE binary makes a binary string too
    if charset == "binary" and col.data_type in BINARY_OF:
        return _sized(replace(col, data_type=BINARY_OF[col.data_type]), col.length if
                      col.data_type in ("text", "blob") else None)
    if charset == "binary":  # ENUM/SET of binary strings: information_schema names no charset
        return replace(col, charset=None, collation=None)
    if charset is None:
        charset = table.charset or "latin1"
        collation = collation or table.collation or session().default_collation(charset)
    elif collation is None:
        collation = session().default_collation(charset)
    if binary_attr:
        collation = f"{charset}_bin"
    col = replace(col, charset=charset, collation=collation)
    if col.data_type == "varchar" and col.length is not None and col.length * mbmaxlen(charset) > 65535:
        # outside strict mode the server turns a VARCHAR too long for a row into the TEXT type that holds it
        return _sized(replace(col, data_type="text"), col.length)
    return _sized(col, col.length)


def _sized(col: ColumnSchema, length: int | None) -> ColumnSchema:
    """TEXT(n)/BLOB(n): the smallest TEXT/BLOB type that holds n characters (bytes for BLOB)."""
    if col.data_type not in ("text", "blob") or length is None:
        return col
    need = length * (mbmaxlen(col.charset) if col.data_type == "text" else 1)
    text_t = col.data_type == "text"
    for text_name, blob_name, limit in _TEXT_SIZES:
        if need <= limit:
            return replace(col, data_type=text_name if text_t else blob_name, length=None)
    return replace(col, data_type="longtext" if text_t else "longblob", length=None)


def _data_type(name: str, kind: exp.DataType) -> ColumnSchema:
    dtype = kind.this.name
    params = [p for p in kind.expressions if not isinstance(p, exp.Literal) or not p.is_string] \
        if dtype not in ("ENUM", "SET") else []
    ints = [_int_param(p) for p in params]
    if dtype in _INT_TYPES:
        data_type, unsigned = _INT_TYPES[dtype]
        width = ints[0] if ints else INT_WIDTH[data_type][1 if unsigned else 0]
        return ColumnSchema(name, data_type, length=width, unsigned=unsigned)
    if dtype == "BOOLEAN":
        return ColumnSchema(name, "tinyint", length=1)
    if dtype == "SERIAL":
        return ColumnSchema(name, "serial")
    if dtype in ("DECIMAL", "UDECIMAL"):
        precision = ints[0] if ints and ints[0] else 10  # DECIMAL(0) is DECIMAL(10,0), as the server says
        scale = ints[1] if len(ints) > 1 else 0
        return ColumnSchema(name, "decimal", precision=precision, scale=scale, unsigned=dtype == "UDECIMAL")
    if dtype in ("FLOAT", "DOUBLE", "UDOUBLE", "UINT256"):  # UINT256: FLOAT UNSIGNED (see dialect)
        base = "double" if "DOUBLE" in dtype else "float"
        unsigned = dtype.startswith("U")
        if len(ints) == 1:  # FLOAT(p): precision in bits picks FLOAT or DOUBLE
            return ColumnSchema(name, "double" if ints[0] > 24 else "float", unsigned=unsigned)
        if len(ints) == 2:
            return ColumnSchema(name, base, precision=ints[0], scale=ints[1], unsigned=unsigned)
        return ColumnSchema(name, base, unsigned=unsigned)
    if dtype in ("ENUM", "SET"):
        values = []
        for p in kind.expressions:
            if isinstance(p, exp.HexString):  # 0x61 / X'61': bytes in the column's charset, decoded later
                values.append(HEX_LABEL + p.this)
                continue
            if isinstance(p, exp.BitString):  # b'1001001': the same, written in bits
                nbytes = max(1, (len(p.this) + 7) // 8)
                values.append(HEX_LABEL + int(p.this or "0", 2).to_bytes(nbytes, "big").hex())
                continue
            if not (isinstance(p, exp.Literal) and p.is_string):
                raise unsupported(f"{dtype} member of column {name!r} is not a string literal")
            values.append(p.this.rstrip(" "))  # the server drops trailing spaces of labels
        return ColumnSchema(name, dtype.lower(), enum_values=tuple(values))
    if dtype in _SIMPLE_TYPES:
        data_type = _SIMPLE_TYPES[dtype]
        if data_type in ("time", "datetime", "timestamp"):
            return ColumnSchema(name, data_type, fsp=ints[0] if ints else 0)
        if data_type == "bit":  # MariaDB stores BIT(0) as bit(1) (MySQL rejects it)
            return ColumnSchema(name, data_type, length=ints[0] if ints and ints[0] else 1)
        if data_type in ("char", "binary"):
            return ColumnSchema(name, data_type, length=ints[0] if ints else 1)
        if data_type == "year":
            return ColumnSchema(name, data_type, length=4)
        if data_type == "vector":  # MySQL 9: VECTOR without a dimension holds 2048 floats
            return ColumnSchema(name, data_type, length=ints[0] if ints else 2048)
        if data_type in ("varchar", "varbinary", "text", "blob"):
            return ColumnSchema(name, data_type, length=ints[0] if ints else None)
        return ColumnSchema(name, data_type)
    raise unsupported(f"data type {kind.sql('mysql')} of column {name!r} not supported")


