"""binlog-model: MySQL/MariaDB row-based binlogs to a compact, typed protobuf ``BinlogEvent`` model.

The curated public API. Submodules import heavy dependencies (sqlglot, pyspark) lazily.
"""

from binlog_model.errors import (
    BadMagicError,
    BinlogError,
    ChecksumMismatchError,
    ConfigError,
    DecodeError,
    DecoderStateError,
    EncryptedBinlogError,
    IncompleteTransactionError,
    SchemaError,
    SchemaMismatchError,
    TruncatedEventError,
    UncertainSchemaError,
    UnknownTableError,
    UnsupportedDDLError,
    UnsupportedEventError,
)
from binlog_model.position import BinlogPosition

__all__ = [
    "BadMagicError",
    "BinlogError",
    "BinlogPosition",
    "ChecksumMismatchError",
    "ConfigError",
    "DecodeError",
    "DecoderStateError",
    "EncryptedBinlogError",
    "IncompleteTransactionError",
    "SchemaError",
    "SchemaMismatchError",
    "TruncatedEventError",
    "UncertainSchemaError",
    "UnknownTableError",
    "UnsupportedDDLError",
    "UnsupportedEventError",
]
