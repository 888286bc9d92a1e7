"""binlog-model: MySQL/MariaDB row-based binlogs to a compact, typed protobuf ``BinlogEvent`` model.

The curated public API::

    from binlog_model import iter_binlog_events, to_json
    for event in iter_binlog_events(paths, source="ppc:1", snapshot="schema.sql"):
        print(to_json(event))

The errors and positions are imported eagerly; everything else on first use (PEP 562), so ``import
binlog_model`` stays cheap and never pulls in sqlglot or pyspark until they are needed.
"""

from __future__ import annotations

import importlib
from typing import Any

from binlog_model.errors import (
    BadMagicError,
    BinlogError,
    ChecksumMismatchError,
    ConfigError,
    DecodeError,
    DecoderStateError,
    EncryptedBinlogError,
    IncompleteTransactionError,
    JsonDiffError,
    SchemaError,
    SchemaMismatchError,
    TruncatedEventError,
    UncertainSchemaError,
    UnknownTableError,
    UnsupportedDDLError,
    UnsupportedEventError,
)
from binlog_model.position import EventPosition

# public name -> module that defines it (imported on first attribute access)
_LAZY = {
    "iter_binlog_events": "binlog_model.runs.pipeline",
    "iter_serialized_events": "binlog_model.runs.pipeline",
    "history_from_binlogs": "binlog_model.runs.pipeline",
    "load_snapshot": "binlog_model.io.snapshots",
    "StatementAssembler": "binlog_model.resolve.assembler",
    "AssemblerOptions": "binlog_model.resolve.options",
    "ResolveOptions": "binlog_model.resolve.options",
    "BinlogDecoder": "binlog_model.wire.decoder",
    "NEED_DATA": "binlog_model.wire.decoder",
    "iter_events": "binlog_model.io.files",
    "BinlogEvent": "binlog_model.messages",
    "to_json": "binlog_model.messages",
    "from_json": "binlog_model.messages",
    "to_dict": "binlog_model.messages",
    "from_dict": "binlog_model.messages",
    "write_delimited": "binlog_model.sinks.delimited",
    "iter_delimited": "binlog_model.sinks.delimited",
    "python_value": "binlog_model.messages",
    "compiled_core": "binlog_model.compiled",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'binlog_model' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

__all__ = [
    *_LAZY,
    "BadMagicError",
    "BinlogError",
    "ChecksumMismatchError",
    "ConfigError",
    "DecodeError",
    "DecoderStateError",
    "EncryptedBinlogError",
    "EventPosition",
    "IncompleteTransactionError",
    "JsonDiffError",
    "SchemaError",
    "SchemaMismatchError",
    "TruncatedEventError",
    "UncertainSchemaError",
    "UnknownTableError",
    "UnsupportedDDLError",
    "UnsupportedEventError",
]
