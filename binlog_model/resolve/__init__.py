"""The middle stage: decoded binlog events + schema history -> protobuf ``BinlogEvent`` messages.

One job per module:
- ``options``: ``ResolveOptions.parse`` (image and statement-text enums, always-include entries), used by
  the CLI, ``iter_binlog_events`` and the Spark reader alike;
- ``plan``: per TABLE_MAP layout a ``RowPlan`` of plain data, read by both row builders;
- ``rows``: the pure-Python row builder (the reference; ``binlog_model._speedups`` reads the same plans);
- ``tables``: TABLE_MAP + catalog in force -> row builders, cached per layout;
- ``transactions``: routing tables (transaction states, QUERY routes), identity, XA and savepoints;
- ``spill``: the open transaction's output, spilled to a temporary file past ``spill_bytes``;
- ``assembler``: ``StatementAssembler``, the event handlers;
- ``convert``: one value -> ``Value``; ``types``: MySQL type -> model type (the README table);
- ``schema_changes``: tracker changes -> ``SchemaChange`` and SCHEMA events;
- ``from_table_map``: a table from TABLE_MAP metadata; ``statement_text``: statement text and trace info.
"""
