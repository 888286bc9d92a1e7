"""TABLE_MAP + the catalog in force → the table's row builders, built once per TABLE_MAP layout.

Every transaction logs its own TABLE_MAP, so a table's plan is cached twice: per (table id, catalog) for
the events of one transaction, and per layout (names, types, metadata under the same catalog) across
transactions, so a plan is built again only when the schema or the logged layout changes. A table the
catalog lacks is resolved from the TABLE_MAP's FULL metadata when it names its columns; a table made
uncertain by a DDL statement skipped in lenient mode fails loudly instead. The ``--always-include`` names
are resolved here too, and the tables they name that no TABLE_MAP touched are remembered for a warning.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from binlog_model.errors import ConfigError, SchemaMismatchError, UncertainSchemaError, UnknownTableError
from binlog_model.position import EventPosition
from binlog_model.resolve.compiled_rows import compile_rows
from binlog_model.resolve.from_table_map import table_from_table_map
from binlog_model.resolve.options import ImageMode
from binlog_model.resolve.plan import build_plan
from binlog_model.resolve.rows import RowBuilders, python_row_builders
from binlog_model.wire.table_map import TableMapEvent
from schema_tracker.model import Catalog, TableSchema

__all__ = ["TableResolver"]

_MAX_LAYOUTS = 4096


class TableResolver:
    """``builders(table_map, catalog, position)`` → the ``RowBuilders`` of that table at that position.

    ``always_include``: ``{(db, table): columns}`` (any case); ``on_table_from_metadata`` is called each
    time a table is built from TABLE_MAP metadata (the assembler counts it in its stats).
    """

    def __init__(self, always_include: Mapping[tuple[str, str], Iterable[str]], image: ImageMode,
                 on_table_from_metadata: Callable[[], None], *, lenient: bool = False) -> None:
        self.always = {(db.lower(), t.lower()): tuple(c.lower() for c in cols)
                       for (db, t), cols in always_include.items()}
        self.unseen = set(self.always)     # always-include tables no TABLE_MAP has named yet
        # Tables named by a DDL statement skipped in lenient mode that the tracker did not know: uncertain
        # too, so their rows fail loudly instead of resolving from TABLE_MAP metadata.
        self.skipped_tables: set[tuple[str, str]] = set()
        self._image = image
        # --lenient-ddl: a TABLE_MAP that contradicts the tracked schema makes the table uncertain (its rows
        # fail as UncertainSchemaError, naming what the binlog said) instead of a SchemaMismatchError.
        self._lenient = lenient
        self._on_table_from_metadata = on_table_from_metadata
        self._by_id: dict[tuple[int, int], tuple[TableMapEvent, Catalog, RowBuilders]] = {}
        self._layouts: dict[tuple[Any, ...], tuple[Catalog, RowBuilders]] = {}

    def schema_changed(self) -> None:
        """A DDL statement ran: table ids may now name other tables."""
        self._by_id.clear()

    def check_at_start(self, catalog: Catalog) -> None:
        """--always-include columns of tables the schema already knows where the input starts (a snapshot,
        or a history continued from an earlier run) are checked before any row, not at the first one."""
        for (db, t), cols in self.always.items():
            known = catalog.table(db, t)
            if known is not None:
                _check_always_include(known, cols)

    def builders(self, table_map: TableMapEvent, catalog: Catalog, position: EventPosition) -> RowBuilders:
        key = (table_map.table_id, id(catalog))
        cached = self._by_id.get(key)
        if cached is not None and cached[0] is table_map and cached[1] is catalog:
            return cached[2]
        # Reuse the builders of an identical TABLE_MAP under the same catalog (same names, types, metadata)
        # instead of rebuilding the plan and its checks.
        layout = (id(catalog), table_map.schema, table_map.table, table_map.column_types,
                  table_map.column_metas, table_map.signedness, table_map.charsets, table_map.column_names,
                  table_map.enum_values, table_map.set_values, table_map.primary_key)
        shared = self._layouts.get(layout)
        if shared is not None and shared[0] is catalog:
            self._by_id[key] = (table_map, catalog, shared[1])
            return shared[1]
        built = self._build(table_map, catalog, position)
        if len(self._layouts) >= _MAX_LAYOUTS:
            self._layouts.clear()
        self._layouts[layout] = (catalog, built)
        self._by_id[key] = (table_map, catalog, built)
        return built

    def _build(self, table_map: TableMapEvent, catalog: Catalog, position: EventPosition) -> RowBuilders:
        schema = catalog.table(table_map.schema, table_map.table)
        if schema is None and (table_map.schema.lower(), table_map.table.lower()) in self.skipped_tables:
            raise UncertainSchemaError(
                "the table was named by a DDL statement skipped in lenient mode; its rows do not fall back "
                "to the TABLE_MAP's metadata", table=f"{table_map.schema}.{table_map.table}",
                position=position)
        if schema is None:
            schema = table_from_table_map(table_map)
            if schema is None:
                raise UnknownTableError(
                    "rows for a table the schema history does not know, and the TABLE_MAP carries no column "
                    "names (the server did not run with binlog_row_metadata=FULL); give a --snapshot that "
                    "defines the table",
                    table=f"{table_map.schema}.{table_map.table}", position=position)
            self._on_table_from_metadata()
        elif schema.uncertain:
            raise UncertainSchemaError(
                "the table's schema is uncertain after a DDL statement skipped in lenient mode",
                table=schema.qualified_name, position=position)
        wanted = self.always.get((schema.db.lower(), schema.name.lower()), ())
        if wanted:
            self.unseen.discard((schema.db.lower(), schema.name.lower()))
        try:
            plan = build_plan(table_map, schema, wanted, position)
        except SchemaMismatchError as err:
            if not self._lenient:
                raise
            raise UncertainSchemaError(f"the table's schema is uncertain: {err.reason}",
                                       table=schema.qualified_name, position=position) from err
        builders = python_row_builders(plan, self._image)
        # The compiled builder when the core is on and C handles every column; else Python alone.
        compiled = compile_rows(plan, table_map, self._image)
        return builders if compiled is None else replace(builders, compiled=compiled)


def _check_always_include(schema: TableSchema, wanted: Iterable[str]) -> None:
    """At start, against the snapshot: a name the table lacks is a ConfigError before any event (at a
    TABLE_MAP the same mistake is a SchemaMismatchError with the position: ``plan.build_plan``)."""
    names = {c.name.lower() for c in schema.columns}
    missing = [c for c in wanted if c not in names]
    if missing:
        raise ConfigError(f"--always-include names column(s) {', '.join(missing)} that table "
                          f"{schema.qualified_name} does not have in the snapshot (its columns: "
                          f"{', '.join(c.name for c in schema.columns)})")
