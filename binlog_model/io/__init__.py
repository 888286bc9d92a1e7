"""I/O around the sans-IO decoder: the only package that touches files (and, later, sockets)."""

from binlog_model.io.files import iter_events, open_binlog, sort_binlog_files

__all__ = ["iter_events", "open_binlog", "sort_binlog_files"]
