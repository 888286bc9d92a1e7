"""One exception tree for the whole library.

Strategy: every public function raises only ``BinlogError`` subclasses. Low-level failures
(``IndexError``, ``struct.error``, ``UnicodeDecodeError``, zstd errors) are caught at the boundary of the
module that can name *where* the input went wrong, and re-raised ``from`` the original as one of these.
Each error carries structured attributes (file, offset, event type, table, statement) as well as a message
that says them, so a log line alone is enough to find the bad bytes.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BadMagicError",
    "BinlogError",
    "ChecksumMismatchError",
    "ConfigError",
    "ConnectionLostError",
    "DecodeError",
    "DecoderStateError",
    "EncryptedBinlogError",
    "IncompleteTransactionError",
    "JsonDiffError",
    "MissingExtraError",
    "PrivilegeError",
    "ReplicationError",
    "SchemaError",
    "SchemaMismatchError",
    "SchemaNewerThanBinlogError",
    "ServerAccessError",
    "ServerAuthenticationError",
    "ServerUnreachableError",
    "TlsError",
    "TruncatedEventError",
    "UncertainSchemaError",
    "UnknownHostError",
    "UnknownTableError",
    "UnsupportedDDLError",
    "UnsupportedEventError",
]


class BinlogError(Exception):
    """Base class of every error this library raises on purpose."""


class ConfigError(BinlogError, ValueError):
    """A bad option or argument given by the caller (not bad input data)."""


class MissingExtraError(ConfigError):
    """An optional dependency is not installed; the message names the extra to install."""


# --- wire decoding --------------------------------------------------------------------------------------


class DecodeError(BinlogError):
    """Binlog bytes could not be decoded.

    Attributes: ``file`` (name or None), ``offset`` (byte offset of the event in the stream, or None),
    ``event_type`` (upstream name such as ``"WRITE_ROWS_EVENT"``, or None) and ``expected`` (what the
    decoder expected to find).
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        offset: int | None = None,
        event_type: str | None = None,
        expected: str | None = None,
    ) -> None:
        self.reason = message
        self.file = file
        self.offset = offset
        self.event_type = event_type
        self.expected = expected
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.file is not None:
            where.append(f"file {self.file}")
        if self.offset is not None:
            where.append(f"offset {self.offset}")
        if self.event_type is not None:
            where.append(f"event {self.event_type}")
        text = self.reason
        if self.expected:
            text += f" (expected {self.expected})"
        return f"{text} [{', '.join(where)}]" if where else text

    def located(self, *, file: str | None = None, offset: int | None = None,
                event_type: str | None = None) -> DecodeError:
        """Fill in location fields that are still unknown (used as an error travels outwards)."""
        if file is not None and self.file is None:
            self.file = file
        if offset is not None and self.offset is None:
            self.offset = offset
        if event_type is not None and self.event_type is None:
            self.event_type = event_type
        self.args = (self._render(),)
        return self


class TruncatedEventError(DecodeError):
    """The input ended (or a length field pointed) past the end of the available bytes."""


class IncompleteTransactionError(TruncatedEventError):
    """The input ends inside a transaction (no XID/COMMIT/ROLLBACK), e.g. a binlog still being written."""


class ChecksumMismatchError(DecodeError):
    """An event's CRC32 footer does not match its bytes."""

    def __init__(self, message: str, *, stored: int | None = None, computed: int | None = None,
                 **where: Any) -> None:
        self.stored = stored
        self.computed = computed
        super().__init__(message, **where)


class BadMagicError(DecodeError):
    """The input does not start with the binlog magic ``\\xfebin``."""


class UnsupportedEventError(DecodeError):
    """The bytes are valid but use a feature this decoder does not support."""


class EncryptedBinlogError(UnsupportedEventError):
    """The binlog is encrypted (START_ENCRYPTION_EVENT); decrypt it before decoding."""


class JsonDiffError(DecodeError):
    """A partial JSON update does not apply to the column's before value (MySQL would reject it): the path
    does not resolve there, or it is not a path a diff can hold."""


class DecoderStateError(BinlogError):
    """The event stream is out of order (rows before their TABLE_MAP), or the decoder is already failed."""


class ReplicationError(BinlogError):
    """The server refused or broke the binlog dump (unknown file, lost connection, protocol surprise).
    ``errno``: the server's or client's error number when there is one (1236: the server cannot send the
    position asked for; 2013: the connection was lost), else None."""

    def __init__(self, message: str, *, errno: int | None = None) -> None:
        super().__init__(message)
        self.errno = errno

    def __reduce__(self) -> tuple[Any, ...]:      # pickled (copied) with its errno
        return _rebuild_replication_error, (type(self), str(self), self.errno)


def _rebuild_replication_error(cls: type[ReplicationError], message: str,
                               errno: int | None) -> ReplicationError:
    return cls(message, errno=errno)


class ConnectionLostError(ReplicationError):
    """The connection to the server broke or went silent (no event nor heartbeat within the read timeout):
    a reconnect can resume from the last commit."""


# --- live servers: what retrying cannot heal (binlog_model.io.server_errors decides) -------------------


class ServerAccessError(BinlogError):
    """A live server cannot be used as asked, and asking again will not change that: the run stops at once.
    ``where`` is host:port (or the socket), ``errno`` the server's or client's error number, if any."""

    def __init__(self, message: str, *, where: str = "", errno: int | None = None) -> None:
        super().__init__(message)
        self.where = where
        self.errno = errno

    def __reduce__(self) -> tuple[Any, ...]:      # pickled (copied) with its attributes
        return _rebuild_access_error, (type(self), str(self), self.where, self.errno)


def _rebuild_access_error(cls: type[ServerAccessError], message: str, where: str,
                          errno: int | None) -> ServerAccessError:
    return cls(message, where=where, errno=errno)


class ServerAuthenticationError(ServerAccessError):
    """The server refused the login: user, password, client certificate or the host it is from."""


class PrivilegeError(ServerAccessError):
    """The account lacks a privilege; the message names the ``GRANT`` that gives it."""


class UnknownHostError(ServerAccessError):
    """The server's host name does not resolve (DNS says there is no such name)."""


class TlsError(ServerAccessError):
    """TLS could not be set up as ``--ssl-mode`` asks: no TLS on the server, or its certificate fails
    verification (wrong CA, expired, another host name)."""


class ServerUnreachableError(ServerAccessError):
    """The first connection of a run did not succeed within ``--connect-timeout`` seconds."""


# --- schema tracking and resolution ----------------------------------------------------------------------


class SchemaError(BinlogError):
    """Base for schema problems. ``position`` is ``(file, offset)`` or None; ``table`` is ``db.table``."""

    def __init__(self, message: str, *, table: str | None = None, position: Any = None,
                 statement: str | None = None) -> None:
        self.reason = message
        self.table = table
        self.position = position
        self.statement = statement
        parts = [message]
        if table:
            parts.append(f"table {table}")
        if position is not None:
            parts.append(f"at {position}")
        if statement:
            # Undecodable statement bytes (surrogate escapes) shown as \xNN, so the message always prints.
            shown = statement.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            shown = shown if len(shown) <= 300 else shown[:300] + "..."
            parts.append(f"statement: {shown}")
        super().__init__("; ".join(parts))


class UnsupportedDDLError(SchemaError):
    """A statement changes schema but could not be understood (strict mode)."""


class SchemaNewerThanBinlogError(SchemaError):
    """A statement finds the tracked schema already past it: CREATE of a table or database the schema
    has, DROP TABLE of one it lacks, ADD of a column it has. The likely cause is a snapshot taken after
    the binlog's start, so the schema at the binlog's start is unknown."""

    CAUSE = ("the schema is newer than the binlog: the snapshot was likely taken after the binlog's start "
             "(take the snapshot before the first binlog, or start at a binlog written after the snapshot; "
             "--lenient-ddl records the statement and goes on)")


class UnknownTableError(SchemaError):
    """Rows arrived for a table the tracker does not know and TABLE_MAP carries no usable metadata."""


class SchemaMismatchError(SchemaError):
    """The TABLE_MAP column count or types disagree with the tracked schema at that position."""

    def __init__(self, message: str, *, tracked: Any = None, binlog: Any = None, **kw: Any) -> None:
        self.tracked = tracked
        self.binlog = binlog
        detail = message
        if tracked is not None or binlog is not None:
            detail += f"; tracked columns: {tracked}; binlog columns: {binlog}"
        super().__init__(detail, **kw)


class UncertainSchemaError(SchemaError):
    """Rows arrived for a table whose schema became uncertain after a DDL skipped in lenient mode."""
