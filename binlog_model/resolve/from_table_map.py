"""A ``TableSchema`` built from a TABLE_MAP's optional metadata (MySQL 8 / MariaDB
``binlog_row_metadata=FULL``), for tables the schema history has never seen.

Strategy: the TABLE_MAP type code and metadata give the storage type (``LONG`` → int, BLOB with 2 length
bytes → blob/text, ...), the signedness bitmap gives UNSIGNED, the charset ids tell text from binary, and
the names, ENUM/SET values and primary key come from their own TLVs. Without column names there is nothing
to resolve: the caller raises ``UnknownTableError``. Display widths and defaults are unknown and left out.
"""

from __future__ import annotations

from binlog_model.charsets import charset_for_collation_id
from binlog_model.wire.codecs.strings import split_string_meta
from binlog_model.wire.column_types import ColumnType as T
from binlog_model.wire.table_map import TableMapEvent
from schema_tracker.model import ColumnSchema, TableSchema, mbmaxlen

__all__ = ["table_from_table_map"]

_INTEGERS = {T.TINY: "tinyint", T.SHORT: "smallint", T.INT24: "mediumint", T.LONG: "int",
             T.LONGLONG: "bigint"}
_FIXED = {T.FLOAT: "float", T.DOUBLE: "double", T.YEAR: "year", T.DATE: "date", T.NEWDATE: "date",
          T.JSON: "json", T.GEOMETRY: "geometry", T.VECTOR: "vector", T.DECIMAL: "decimal"}
_TEMPORAL = {T.TIME: "time", T.TIME2: "time", T.DATETIME: "datetime", T.DATETIME2: "datetime",
             T.TIMESTAMP: "timestamp", T.TIMESTAMP2: "timestamp"}
_BLOBS = {1: ("tinyblob", "tinytext"), 2: ("blob", "text"), 3: ("mediumblob", "mediumtext"),
          4: ("longblob", "longtext")}


def _text(values: tuple[bytes, ...] | None) -> tuple[str, ...]:
    return tuple(v.decode("utf-8", "surrogateescape") for v in values or ())


def table_from_table_map(tm: TableMapEvent) -> TableSchema | None:
    """The table as far as its TABLE_MAP describes it, or None when it carries no column names."""
    if tm.column_names is None or len(tm.column_names) != tm.column_count:
        return None
    columns = []
    for i, name in enumerate(tm.column_names):
        code, meta = tm.column_types[i], tm.column_metas[i]
        charset_id = tm.charsets[i] if tm.charsets else None
        if charset_id is None and tm.enum_set_charsets:
            charset_id = tm.enum_set_charsets[i]
        charset = charset_for_collation_id(charset_id) if charset_id is not None else None
        unsigned = bool(tm.signedness and tm.signedness[i])
        nullable = tm.nullable[i]
        kw: dict[str, object] = {}
        if code in _INTEGERS:
            data_type = _INTEGERS[T(code)]
        elif code in _FIXED:
            data_type = _FIXED[T(code)]
        elif code in _TEMPORAL:
            data_type = _TEMPORAL[T(code)]
            if code in (T.TIME2, T.DATETIME2, T.TIMESTAMP2):
                kw["fsp"] = meta
        elif code == T.NEWDECIMAL:
            data_type = "decimal"
            kw.update(precision=meta >> 8, scale=meta & 0xFF)
        elif code == T.BIT:
            data_type = "bit"
            kw["length"] = (meta >> 8) * 8 + (meta & 0xFF)
        elif code in (T.VARCHAR, T.VAR_STRING):
            data_type = "varbinary" if charset == "binary" else "varchar"
            kw["length"] = meta // mbmaxlen(charset)      # the metadata counts bytes, the type characters
        elif code == T.STRING:
            real, length = split_string_meta(meta)
            if real == T.ENUM:
                data_type = "enum"
                kw["enum_values"] = _text(tm.enum_values[i] if tm.enum_values else None)
            elif real == T.SET:
                data_type = "set"
                kw["enum_values"] = _text(tm.set_values[i] if tm.set_values else None)
            else:
                data_type = "binary" if charset == "binary" else "char"
                kw["length"] = length // mbmaxlen(charset)
        elif code == T.BLOB:
            blob, text = _BLOBS.get(meta, ("longblob", "longtext"))
            data_type = blob if charset in (None, "binary") else text
        else:
            return None
        columns.append(ColumnSchema(name=name, data_type=data_type, unsigned=unsigned, charset=charset,
                                    nullable=nullable, **kw))  # type: ignore[arg-type]
    primary_key = tuple(tm.column_names[i] for i in tm.primary_key or ())
    return TableSchema(db=tm.schema, name=tm.table, columns=tuple(columns), primary_key=primary_key)
