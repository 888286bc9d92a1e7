"""The middle stage: decoded binlog events + schema history -> protobuf ``BinlogEvent`` messages.

Options (``options``), per-TABLE_MAP row plans of plain data (``plan``), the row builders that read them
(``rows``; the compiled builder reads the same plans), transaction and statement routing, the spill buffer,
value conversion, type mapping, schema-change conversion and tables from TABLE_MAP metadata.
"""
