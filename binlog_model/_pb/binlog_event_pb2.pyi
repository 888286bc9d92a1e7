import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ColumnType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COLUMN_TYPE_UNSPECIFIED: _ClassVar[ColumnType]
    INTEGER: _ClassVar[ColumnType]
    LONG: _ClassVar[ColumnType]
    UINT64: _ClassVar[ColumnType]
    DECIMAL: _ClassVar[ColumnType]
    FLOAT: _ClassVar[ColumnType]
    DOUBLE: _ClassVar[ColumnType]
    STRING: _ClassVar[ColumnType]
    BYTES: _ClassVar[ColumnType]
    DATE: _ClassVar[ColumnType]
    DATETIME: _ClassVar[ColumnType]
    TIMESTAMP: _ClassVar[ColumnType]
    TIME: _ClassVar[ColumnType]
    BIT: _ClassVar[ColumnType]
    JSON: _ClassVar[ColumnType]
    GEOMETRY: _ClassVar[ColumnType]
    VECTOR: _ClassVar[ColumnType]
    SET: _ClassVar[ColumnType]
COLUMN_TYPE_UNSPECIFIED: ColumnType
INTEGER: ColumnType
LONG: ColumnType
UINT64: ColumnType
DECIMAL: ColumnType
FLOAT: ColumnType
DOUBLE: ColumnType
STRING: ColumnType
BYTES: ColumnType
DATE: ColumnType
DATETIME: ColumnType
TIMESTAMP: ColumnType
TIME: ColumnType
BIT: ColumnType
JSON: ColumnType
GEOMETRY: ColumnType
VECTOR: ColumnType
SET: ColumnType

class BinlogEvent(_message.Message):
    __slots__ = ("utc_timestamp", "source", "server_uuid", "transaction_id", "query_index", "row_index", "trace_info", "db", "table", "operation", "rows", "schema_changes", "position", "gtid", "statement", "event_index", "last_in_statement", "server_id", "gtid_domain_id", "statement_raw")
    class Operation(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        OPERATION_UNSPECIFIED: _ClassVar[BinlogEvent.Operation]
        INSERT: _ClassVar[BinlogEvent.Operation]
        UPDATE: _ClassVar[BinlogEvent.Operation]
        DELETE: _ClassVar[BinlogEvent.Operation]
        SCHEMA: _ClassVar[BinlogEvent.Operation]
    OPERATION_UNSPECIFIED: BinlogEvent.Operation
    INSERT: BinlogEvent.Operation
    UPDATE: BinlogEvent.Operation
    DELETE: BinlogEvent.Operation
    SCHEMA: BinlogEvent.Operation
    UTC_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    SERVER_UUID_FIELD_NUMBER: _ClassVar[int]
    TRANSACTION_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_INDEX_FIELD_NUMBER: _ClassVar[int]
    ROW_INDEX_FIELD_NUMBER: _ClassVar[int]
    TRACE_INFO_FIELD_NUMBER: _ClassVar[int]
    DB_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_CHANGES_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    GTID_FIELD_NUMBER: _ClassVar[int]
    STATEMENT_FIELD_NUMBER: _ClassVar[int]
    EVENT_INDEX_FIELD_NUMBER: _ClassVar[int]
    LAST_IN_STATEMENT_FIELD_NUMBER: _ClassVar[int]
    SERVER_ID_FIELD_NUMBER: _ClassVar[int]
    GTID_DOMAIN_ID_FIELD_NUMBER: _ClassVar[int]
    STATEMENT_RAW_FIELD_NUMBER: _ClassVar[int]
    utc_timestamp: _timestamp_pb2.Timestamp
    source: str
    server_uuid: str
    transaction_id: int
    query_index: int
    row_index: int
    trace_info: str
    db: str
    table: str
    operation: BinlogEvent.Operation
    rows: _containers.RepeatedCompositeFieldContainer[Row]
    schema_changes: _containers.RepeatedCompositeFieldContainer[SchemaChange]
    position: BinlogPosition
    gtid: str
    statement: str
    event_index: int
    last_in_statement: bool
    server_id: int
    gtid_domain_id: int
    statement_raw: RawText
    def __init__(self, utc_timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., source: _Optional[str] = ..., server_uuid: _Optional[str] = ..., transaction_id: _Optional[int] = ..., query_index: _Optional[int] = ..., row_index: _Optional[int] = ..., trace_info: _Optional[str] = ..., db: _Optional[str] = ..., table: _Optional[str] = ..., operation: _Optional[_Union[BinlogEvent.Operation, str]] = ..., rows: _Optional[_Iterable[_Union[Row, _Mapping]]] = ..., schema_changes: _Optional[_Iterable[_Union[SchemaChange, _Mapping]]] = ..., position: _Optional[_Union[BinlogPosition, _Mapping]] = ..., gtid: _Optional[str] = ..., statement: _Optional[str] = ..., event_index: _Optional[int] = ..., last_in_statement: _Optional[bool] = ..., server_id: _Optional[int] = ..., gtid_domain_id: _Optional[int] = ..., statement_raw: _Optional[_Union[RawText, _Mapping]] = ...) -> None: ...

class BinlogPosition(_message.Message):
    __slots__ = ("file", "offset", "next_offset", "inner_index")
    FILE_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    NEXT_OFFSET_FIELD_NUMBER: _ClassVar[int]
    INNER_INDEX_FIELD_NUMBER: _ClassVar[int]
    file: str
    offset: int
    next_offset: int
    inner_index: int
    def __init__(self, file: _Optional[str] = ..., offset: _Optional[int] = ..., next_offset: _Optional[int] = ..., inner_index: _Optional[int] = ...) -> None: ...

class Row(_message.Message):
    __slots__ = ("row_index", "primary_key", "before", "after")
    ROW_INDEX_FIELD_NUMBER: _ClassVar[int]
    PRIMARY_KEY_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    row_index: int
    primary_key: _containers.RepeatedCompositeFieldContainer[Column]
    before: _containers.RepeatedCompositeFieldContainer[Column]
    after: _containers.RepeatedCompositeFieldContainer[Column]
    def __init__(self, row_index: _Optional[int] = ..., primary_key: _Optional[_Iterable[_Union[Column, _Mapping]]] = ..., before: _Optional[_Iterable[_Union[Column, _Mapping]]] = ..., after: _Optional[_Iterable[_Union[Column, _Mapping]]] = ...) -> None: ...

class Column(_message.Message):
    __slots__ = ("name", "value", "invisible")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    INVISIBLE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: Value
    invisible: bool
    def __init__(self, name: _Optional[str] = ..., value: _Optional[_Union[Value, _Mapping]] = ..., invisible: _Optional[bool] = ...) -> None: ...

class Value(_message.Message):
    __slots__ = ("null_value", "int_value", "long_value", "string_value", "bytes_value", "decimal_value", "double_value", "float_value", "datetime_value", "date_value", "timestamp_micros", "time_micros", "uint64_value", "json_value", "set_value", "bit_value", "geometry_value", "vector_value", "raw_text_value", "json_diff")
    NULL_VALUE_FIELD_NUMBER: _ClassVar[int]
    INT_VALUE_FIELD_NUMBER: _ClassVar[int]
    LONG_VALUE_FIELD_NUMBER: _ClassVar[int]
    STRING_VALUE_FIELD_NUMBER: _ClassVar[int]
    BYTES_VALUE_FIELD_NUMBER: _ClassVar[int]
    DECIMAL_VALUE_FIELD_NUMBER: _ClassVar[int]
    DOUBLE_VALUE_FIELD_NUMBER: _ClassVar[int]
    FLOAT_VALUE_FIELD_NUMBER: _ClassVar[int]
    DATETIME_VALUE_FIELD_NUMBER: _ClassVar[int]
    DATE_VALUE_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_MICROS_FIELD_NUMBER: _ClassVar[int]
    TIME_MICROS_FIELD_NUMBER: _ClassVar[int]
    UINT64_VALUE_FIELD_NUMBER: _ClassVar[int]
    JSON_VALUE_FIELD_NUMBER: _ClassVar[int]
    SET_VALUE_FIELD_NUMBER: _ClassVar[int]
    BIT_VALUE_FIELD_NUMBER: _ClassVar[int]
    GEOMETRY_VALUE_FIELD_NUMBER: _ClassVar[int]
    VECTOR_VALUE_FIELD_NUMBER: _ClassVar[int]
    RAW_TEXT_VALUE_FIELD_NUMBER: _ClassVar[int]
    JSON_DIFF_FIELD_NUMBER: _ClassVar[int]
    null_value: _struct_pb2.NullValue
    int_value: int
    long_value: int
    string_value: str
    bytes_value: bytes
    decimal_value: str
    double_value: float
    float_value: float
    datetime_value: DateTime
    date_value: Date
    timestamp_micros: int
    time_micros: int
    uint64_value: int
    json_value: str
    set_value: SetValue
    bit_value: int
    geometry_value: Geometry
    vector_value: Vector
    raw_text_value: RawText
    json_diff: JsonDiff
    def __init__(self, null_value: _Optional[_Union[_struct_pb2.NullValue, str]] = ..., int_value: _Optional[int] = ..., long_value: _Optional[int] = ..., string_value: _Optional[str] = ..., bytes_value: _Optional[bytes] = ..., decimal_value: _Optional[str] = ..., double_value: _Optional[float] = ..., float_value: _Optional[float] = ..., datetime_value: _Optional[_Union[DateTime, _Mapping]] = ..., date_value: _Optional[_Union[Date, _Mapping]] = ..., timestamp_micros: _Optional[int] = ..., time_micros: _Optional[int] = ..., uint64_value: _Optional[int] = ..., json_value: _Optional[str] = ..., set_value: _Optional[_Union[SetValue, _Mapping]] = ..., bit_value: _Optional[int] = ..., geometry_value: _Optional[_Union[Geometry, _Mapping]] = ..., vector_value: _Optional[_Union[Vector, _Mapping]] = ..., raw_text_value: _Optional[_Union[RawText, _Mapping]] = ..., json_diff: _Optional[_Union[JsonDiff, _Mapping]] = ...) -> None: ...

class JsonDiff(_message.Message):
    __slots__ = ("operations",)
    OPERATIONS_FIELD_NUMBER: _ClassVar[int]
    operations: _containers.RepeatedCompositeFieldContainer[JsonDiffOperation]
    def __init__(self, operations: _Optional[_Iterable[_Union[JsonDiffOperation, _Mapping]]] = ...) -> None: ...

class JsonDiffOperation(_message.Message):
    __slots__ = ("op", "path", "value")
    class Op(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        OP_UNSPECIFIED: _ClassVar[JsonDiffOperation.Op]
        REPLACE: _ClassVar[JsonDiffOperation.Op]
        INSERT: _ClassVar[JsonDiffOperation.Op]
        REMOVE: _ClassVar[JsonDiffOperation.Op]
    OP_UNSPECIFIED: JsonDiffOperation.Op
    REPLACE: JsonDiffOperation.Op
    INSERT: JsonDiffOperation.Op
    REMOVE: JsonDiffOperation.Op
    OP_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    op: JsonDiffOperation.Op
    path: str
    value: str
    def __init__(self, op: _Optional[_Union[JsonDiffOperation.Op, str]] = ..., path: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class Date(_message.Message):
    __slots__ = ("year", "month", "day")
    YEAR_FIELD_NUMBER: _ClassVar[int]
    MONTH_FIELD_NUMBER: _ClassVar[int]
    DAY_FIELD_NUMBER: _ClassVar[int]
    year: int
    month: int
    day: int
    def __init__(self, year: _Optional[int] = ..., month: _Optional[int] = ..., day: _Optional[int] = ...) -> None: ...

class DateTime(_message.Message):
    __slots__ = ("year", "month", "day", "hour", "minute", "second", "micros")
    YEAR_FIELD_NUMBER: _ClassVar[int]
    MONTH_FIELD_NUMBER: _ClassVar[int]
    DAY_FIELD_NUMBER: _ClassVar[int]
    HOUR_FIELD_NUMBER: _ClassVar[int]
    MINUTE_FIELD_NUMBER: _ClassVar[int]
    SECOND_FIELD_NUMBER: _ClassVar[int]
    MICROS_FIELD_NUMBER: _ClassVar[int]
    year: int
    month: int
    day: int
    hour: int
    minute: int
    second: int
    micros: int
    def __init__(self, year: _Optional[int] = ..., month: _Optional[int] = ..., day: _Optional[int] = ..., hour: _Optional[int] = ..., minute: _Optional[int] = ..., second: _Optional[int] = ..., micros: _Optional[int] = ...) -> None: ...

class SetValue(_message.Message):
    __slots__ = ("labels",)
    LABELS_FIELD_NUMBER: _ClassVar[int]
    labels: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, labels: _Optional[_Iterable[str]] = ...) -> None: ...

class Geometry(_message.Message):
    __slots__ = ("srid", "wkb")
    SRID_FIELD_NUMBER: _ClassVar[int]
    WKB_FIELD_NUMBER: _ClassVar[int]
    srid: int
    wkb: bytes
    def __init__(self, srid: _Optional[int] = ..., wkb: _Optional[bytes] = ...) -> None: ...

class Vector(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, values: _Optional[_Iterable[float]] = ...) -> None: ...

class RawText(_message.Message):
    __slots__ = ("data", "charset")
    DATA_FIELD_NUMBER: _ClassVar[int]
    CHARSET_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    charset: str
    def __init__(self, data: _Optional[bytes] = ..., charset: _Optional[str] = ...) -> None: ...

class ColumnDefinition(_message.Message):
    __slots__ = ("column_name", "column_type", "nullable", "mysql_type", "default_value", "auto_increment", "charset", "collation", "generated", "invisible")
    COLUMN_NAME_FIELD_NUMBER: _ClassVar[int]
    COLUMN_TYPE_FIELD_NUMBER: _ClassVar[int]
    NULLABLE_FIELD_NUMBER: _ClassVar[int]
    MYSQL_TYPE_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_VALUE_FIELD_NUMBER: _ClassVar[int]
    AUTO_INCREMENT_FIELD_NUMBER: _ClassVar[int]
    CHARSET_FIELD_NUMBER: _ClassVar[int]
    COLLATION_FIELD_NUMBER: _ClassVar[int]
    GENERATED_FIELD_NUMBER: _ClassVar[int]
    INVISIBLE_FIELD_NUMBER: _ClassVar[int]
    column_name: str
    column_type: ColumnType
    nullable: bool
    mysql_type: str
    default_value: str
    auto_increment: bool
    charset: str
    collation: str
    generated: bool
    invisible: bool
    def __init__(self, column_name: _Optional[str] = ..., column_type: _Optional[_Union[ColumnType, str]] = ..., nullable: _Optional[bool] = ..., mysql_type: _Optional[str] = ..., default_value: _Optional[str] = ..., auto_increment: _Optional[bool] = ..., charset: _Optional[str] = ..., collation: _Optional[str] = ..., generated: _Optional[bool] = ..., invisible: _Optional[bool] = ...) -> None: ...

class SchemaChange(_message.Message):
    __slots__ = ("create_table", "create_or_modify_column", "rename_column", "drop_column", "drop_table", "rename_table", "truncate_table", "primary_key_changed", "table_charset_changed", "create_database", "alter_database", "drop_database", "skipped_statement")
    CREATE_TABLE_FIELD_NUMBER: _ClassVar[int]
    CREATE_OR_MODIFY_COLUMN_FIELD_NUMBER: _ClassVar[int]
    RENAME_COLUMN_FIELD_NUMBER: _ClassVar[int]
    DROP_COLUMN_FIELD_NUMBER: _ClassVar[int]
    DROP_TABLE_FIELD_NUMBER: _ClassVar[int]
    RENAME_TABLE_FIELD_NUMBER: _ClassVar[int]
    TRUNCATE_TABLE_FIELD_NUMBER: _ClassVar[int]
    PRIMARY_KEY_CHANGED_FIELD_NUMBER: _ClassVar[int]
    TABLE_CHARSET_CHANGED_FIELD_NUMBER: _ClassVar[int]
    CREATE_DATABASE_FIELD_NUMBER: _ClassVar[int]
    ALTER_DATABASE_FIELD_NUMBER: _ClassVar[int]
    DROP_DATABASE_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_STATEMENT_FIELD_NUMBER: _ClassVar[int]
    create_table: CreateTable
    create_or_modify_column: CreateOrModifyColumn
    rename_column: RenameColumn
    drop_column: DropColumn
    drop_table: DropTable
    rename_table: RenameTable
    truncate_table: TruncateTable
    primary_key_changed: PrimaryKeyChanged
    table_charset_changed: TableCharsetChanged
    create_database: CreateDatabase
    alter_database: AlterDatabase
    drop_database: DropDatabase
    skipped_statement: SkippedStatement
    def __init__(self, create_table: _Optional[_Union[CreateTable, _Mapping]] = ..., create_or_modify_column: _Optional[_Union[CreateOrModifyColumn, _Mapping]] = ..., rename_column: _Optional[_Union[RenameColumn, _Mapping]] = ..., drop_column: _Optional[_Union[DropColumn, _Mapping]] = ..., drop_table: _Optional[_Union[DropTable, _Mapping]] = ..., rename_table: _Optional[_Union[RenameTable, _Mapping]] = ..., truncate_table: _Optional[_Union[TruncateTable, _Mapping]] = ..., primary_key_changed: _Optional[_Union[PrimaryKeyChanged, _Mapping]] = ..., table_charset_changed: _Optional[_Union[TableCharsetChanged, _Mapping]] = ..., create_database: _Optional[_Union[CreateDatabase, _Mapping]] = ..., alter_database: _Optional[_Union[AlterDatabase, _Mapping]] = ..., drop_database: _Optional[_Union[DropDatabase, _Mapping]] = ..., skipped_statement: _Optional[_Union[SkippedStatement, _Mapping]] = ...) -> None: ...

class CreateTable(_message.Message):
    __slots__ = ("columns", "primary_key", "charset", "collation")
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    PRIMARY_KEY_FIELD_NUMBER: _ClassVar[int]
    CHARSET_FIELD_NUMBER: _ClassVar[int]
    COLLATION_FIELD_NUMBER: _ClassVar[int]
    columns: _containers.RepeatedCompositeFieldContainer[ColumnDefinition]
    primary_key: _containers.RepeatedScalarFieldContainer[str]
    charset: str
    collation: str
    def __init__(self, columns: _Optional[_Iterable[_Union[ColumnDefinition, _Mapping]]] = ..., primary_key: _Optional[_Iterable[str]] = ..., charset: _Optional[str] = ..., collation: _Optional[str] = ...) -> None: ...

class CreateOrModifyColumn(_message.Message):
    __slots__ = ("column_name", "column_type", "nullable", "mysql_type", "default_value", "auto_increment", "charset", "collation", "generated", "invisible", "first", "after_column")
    COLUMN_NAME_FIELD_NUMBER: _ClassVar[int]
    COLUMN_TYPE_FIELD_NUMBER: _ClassVar[int]
    NULLABLE_FIELD_NUMBER: _ClassVar[int]
    MYSQL_TYPE_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_VALUE_FIELD_NUMBER: _ClassVar[int]
    AUTO_INCREMENT_FIELD_NUMBER: _ClassVar[int]
    CHARSET_FIELD_NUMBER: _ClassVar[int]
    COLLATION_FIELD_NUMBER: _ClassVar[int]
    GENERATED_FIELD_NUMBER: _ClassVar[int]
    INVISIBLE_FIELD_NUMBER: _ClassVar[int]
    FIRST_FIELD_NUMBER: _ClassVar[int]
    AFTER_COLUMN_FIELD_NUMBER: _ClassVar[int]
    column_name: str
    column_type: ColumnType
    nullable: bool
    mysql_type: str
    default_value: str
    auto_increment: bool
    charset: str
    collation: str
    generated: bool
    invisible: bool
    first: bool
    after_column: str
    def __init__(self, column_name: _Optional[str] = ..., column_type: _Optional[_Union[ColumnType, str]] = ..., nullable: _Optional[bool] = ..., mysql_type: _Optional[str] = ..., default_value: _Optional[str] = ..., auto_increment: _Optional[bool] = ..., charset: _Optional[str] = ..., collation: _Optional[str] = ..., generated: _Optional[bool] = ..., invisible: _Optional[bool] = ..., first: _Optional[bool] = ..., after_column: _Optional[str] = ...) -> None: ...

class RenameColumn(_message.Message):
    __slots__ = ("old_column_name", "new_column_name")
    OLD_COLUMN_NAME_FIELD_NUMBER: _ClassVar[int]
    NEW_COLUMN_NAME_FIELD_NUMBER: _ClassVar[int]
    old_column_name: str
    new_column_name: str
    def __init__(self, old_column_name: _Optional[str] = ..., new_column_name: _Optional[str] = ...) -> None: ...

class DropColumn(_message.Message):
    __slots__ = ("column_name",)
    COLUMN_NAME_FIELD_NUMBER: _ClassVar[int]
    column_name: str
    def __init__(self, column_name: _Optional[str] = ...) -> None: ...

class DropTable(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RenameTable(_message.Message):
    __slots__ = ("old_db", "old_table", "new_db", "new_table")
    OLD_DB_FIELD_NUMBER: _ClassVar[int]
    OLD_TABLE_FIELD_NUMBER: _ClassVar[int]
    NEW_DB_FIELD_NUMBER: _ClassVar[int]
    NEW_TABLE_FIELD_NUMBER: _ClassVar[int]
    old_db: str
    old_table: str
    new_db: str
    new_table: str
    def __init__(self, old_db: _Optional[str] = ..., old_table: _Optional[str] = ..., new_db: _Optional[str] = ..., new_table: _Optional[str] = ...) -> None: ...

class TruncateTable(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PrimaryKeyChanged(_message.Message):
    __slots__ = ("primary_key",)
    PRIMARY_KEY_FIELD_NUMBER: _ClassVar[int]
    primary_key: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, primary_key: _Optional[_Iterable[str]] = ...) -> None: ...

class TableCharsetChanged(_message.Message):
    __slots__ = ("charset", "collation")
    CHARSET_FIELD_NUMBER: _ClassVar[int]
    COLLATION_FIELD_NUMBER: _ClassVar[int]
    charset: str
    collation: str
    def __init__(self, charset: _Optional[str] = ..., collation: _Optional[str] = ...) -> None: ...

class CreateDatabase(_message.Message):
    __slots__ = ("charset", "collation")
    CHARSET_FIELD_NUMBER: _ClassVar[int]
    COLLATION_FIELD_NUMBER: _ClassVar[int]
    charset: str
    collation: str
    def __init__(self, charset: _Optional[str] = ..., collation: _Optional[str] = ...) -> None: ...

class AlterDatabase(_message.Message):
    __slots__ = ("charset", "collation")
    CHARSET_FIELD_NUMBER: _ClassVar[int]
    COLLATION_FIELD_NUMBER: _ClassVar[int]
    charset: str
    collation: str
    def __init__(self, charset: _Optional[str] = ..., collation: _Optional[str] = ...) -> None: ...

class DropDatabase(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SkippedStatement(_message.Message):
    __slots__ = ("statement", "reason")
    STATEMENT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    statement: str
    reason: str
    def __init__(self, statement: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...
