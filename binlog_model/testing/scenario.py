"""Run a scenario SQL file on a real server and collect the binlog files it produced.

Strategy: a scenario is a plain ``.sql`` file (``fixtures/scenarios/``) whose leading comment block says what
it covers and may carry directives, one per line, ``-- @name: value``:

* ``@binlog_row_image: FULL|MINIMAL|NOBLOB`` — ``SET SESSION binlog_row_image`` before the first statement;
* ``@sql_mode: <modes>`` — ``SET SESSION sql_mode`` (empty allowed, e.g. for zero dates);
* ``@time_zone: +00:00`` — ``SET SESSION time_zone``;
* ``@timestamp: <unix seconds>`` — ``SET SESSION timestamp``, so the events' timestamps (and NOW()) are the
  same on every run and golden fixtures regenerate byte-stable where the server allows.

An unknown directive is a ``ConfigError`` (a misspelt one must not be ignored). The runner resets the
server's binlogs, runs every statement over ONE connection (so BEGIN/COMMIT, savepoints, ``USE`` and session
variables span statements), then flushes and returns the closed binlog files. On MySQL it runs the
scenario's MySQL dialect variant ``<dir>/mysql/<name>.sql`` where there is one. It works with any server
object of the harness API (``MariaDBServer``, ``MySQLContainerServer``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from binlog_model.errors import ConfigError
from binlog_model.testing.bundled import SCENARIO_DIR, golden_dir
from binlog_model.testing.mariadb import run_statements
from binlog_model.testing.sqlserver import ROW_IMAGES
from binlog_model.testing.sqltext import parse_directives, split_statements

__all__ = ["SCENARIO_DIR", "Scenario", "list_scenarios", "load_scenario", "run_scenario",
           "scenario_for_dialect", "scenario_label", "server_dialect"]

_CREATE_DATABASE = re.compile(r"^\s*CREATE\s+(?:DATABASE|SCHEMA)\s+(?:IF\s+NOT\s+EXISTS\s+)?`?([\w$]+)`?",
                              re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Scenario:
    """A parsed scenario file: its name (file stem), path, directives, statements and the file's sha256."""

    name: str
    path: Path
    directives: dict[str, str]
    statements: tuple[str, ...]
    sha256: str

    @property
    def databases(self) -> tuple[str, ...]:
        """The databases the scenario creates (``CREATE DATABASE``/``SCHEMA`` statements), in order."""
        found = (_CREATE_DATABASE.match(stmt) for stmt in self.statements)
        return tuple(m.group(1) for m in found if m)

    def session_setup(self) -> list[str]:
        """The ``SET SESSION`` statements the directives ask for, in a fixed order."""
        out = []
        if "timestamp" in self.directives:
            out.append(f"SET SESSION timestamp = {int(self.directives['timestamp'])}")
        if "time_zone" in self.directives:
            out.append(f"SET SESSION time_zone = '{self.directives['time_zone']}'")
        if "sql_mode" in self.directives:
            out.append(f"SET SESSION sql_mode = '{self.directives['sql_mode']}'")
        if "binlog_row_image" in self.directives:
            out.append(f"SET SESSION binlog_row_image = '{self.directives['binlog_row_image']}'")
        return out


def load_scenario(path: Path | str) -> Scenario:
    """Read and check a scenario file. ``ConfigError`` names the file for unknown or malformed directives."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise ConfigError(f"cannot read scenario {path}: {err}") from err
    text = raw.decode("utf-8")
    directives = parse_directives(text)
    _check_directives(path, directives)
    try:
        statements = tuple(split_statements(text))
    except ConfigError as err:
        raise ConfigError(f"scenario {path}: {err}") from err
    if not statements:
        raise ConfigError(f"scenario {path} has no statements")
    return Scenario(path.stem, path, directives, statements, hashlib.sha256(raw).hexdigest())


def server_dialect(server: Any) -> str:
    """``mariadb`` or ``mysql``: the SQL dialect of a harness server (MariaDB's version string says so)."""
    name = f"{getattr(server, 'version', '')} {getattr(server, 'label', '')}".lower()
    return "mariadb" if "mariadb" in name else "mysql"


def scenario_for_dialect(path: Path | str, dialect: str) -> Path:
    """The scenario file to run in ``dialect``: its variant ``<dir>/<dialect>/<name>.sql`` where there is
    one (MariaDB-only SQL such as the Sequence engine or Aria rewritten for MySQL), else ``path``."""
    path = Path(path)
    variant = path.parent / dialect / path.name
    return variant if variant.is_file() else path


def list_scenarios(directory: Path = SCENARIO_DIR) -> list[Path]:
    """The scenario files in ``directory``, sorted by name."""
    return sorted(Path(directory).glob("*.sql"))


def run_scenario(server: Any, path: Path | str, dest_dir: Path | None = None, *,
                 cleanup: bool = True) -> list[Path]:
    """Reset ``server``'s binlogs, run the scenario at ``path`` over one connection, flush and collect.

    The databases the scenario creates are dropped first (before the reset, so the binlog does not show
    it), which makes a scenario re-runnable on the shared session server; with ``cleanup`` they are dropped
    again after collecting (into the next binlog file, never into the returned ones).

    The server's dialect variant of the scenario runs where there is one (``scenario_for_dialect``).

    Returns the closed binlog files (copied into ``dest_dir`` if given), oldest first. Raises
    ``ConfigError`` for a bad scenario file and ``HarnessError`` naming the failing statement.
    """
    scenario = load_scenario(scenario_for_dialect(path, server_dialect(server)))
    drops = [f"DROP DATABASE IF EXISTS `{name}`" for name in scenario.databases]
    server.execute(drops)
    server.reset_binlogs()
    conn = server.connect()
    try:
        run_statements(conn, scenario.session_setup())
        run_statements(conn, scenario.statements)
    finally:
        conn.close()
    result: list[Path] = server.flush_and_collect(dest_dir)
    if cleanup:
        server.execute(drops)
    return result


def _check_directives(path: Path, directives: dict[str, str]) -> None:
    known = ("binlog_row_image", "sql_mode", "time_zone", "timestamp")
    for key, value in directives.items():
        if key not in known:
            raise ConfigError(f"scenario {path}: unknown directive @{key} (known: {', '.join(known)})")
        if "'" in value or "\\" in value:
            raise ConfigError(f"scenario {path}: directive @{key} value must not contain quotes: {value!r}")
    image = directives.get("binlog_row_image")
    if image is not None and image.upper() not in ROW_IMAGES:
        raise ConfigError(f"scenario {path}: @binlog_row_image must be one of {ROW_IMAGES}, got {image!r}")
    stamp = directives.get("timestamp")
    if stamp is not None and not stamp.isdigit():
        raise ConfigError(f"scenario {path}: @timestamp must be unix seconds, got {stamp!r}")


# Known, expected differences between binlogs from the harness's MariaDB and the spec's MySQL 5.7 example.
MARIADB_VS_SPEC_MYSQL57 = (
    "GTIDs are MariaDB's domain-server-sequence (GTID_EVENT 162, e.g. 0-1-5), not MySQL's server_uuid:gno"
    " (GTID_LOG_EVENT 33); MariaDB writes GTID_LIST (163) and BINLOG_CHECKPOINT (161) events at file start.",
    "The SQL text of row changes comes in ANNOTATE_ROWS_EVENT (160), not MySQL's ROWS_QUERY_LOG_EVENT (29).",
    "There is no server UUID (no PREVIOUS_GTIDS_LOG_EVENT; @@server_uuid does not exist): a model field for"
    " the server UUID stays empty and the source is identified by server_id and GTID domain.",
    "Row events are the v1 WRITE/UPDATE/DELETE_ROWS_EVENT (23/24/25) without the v2 extra-data header.",
    "binlog_row_metadata=FULL puts column names, signedness, charsets, ENUM/SET strings and the primary key"
    " into TABLE_MAP optional metadata (MySQL 5.7 has none).",
    "Event timestamps are pinned by the scenario's @timestamp directive (SET SESSION timestamp), not the"
    " spec's 2018 wall-clock times of each statement; FORMAT_DESCRIPTION and file-start events carry the"
    " generation time. QUERY events' exec_time is therefore large (now minus the pinned time), as when"
    " mysqlbinlog output is replayed.",
    "table_id values, thread ids and log positions differ from the spec's mysqlbinlog listing.",
)

# The same for the Docker MySQL servers (the 5.7 one runs exactly the spec's flags).
MYSQL57_VS_SPEC_MYSQL57 = (
    "Same server flags as the spec; the server UUID, GTIDs, table_id values, thread ids and log positions"
    " differ from the spec's mysqlbinlog listing.",
    "Event timestamps are pinned by the scenario's @timestamp directive (SET SESSION timestamp).",
)
MYSQL80_VS_SPEC_MYSQL57 = (
    *MYSQL57_VS_SPEC_MYSQL57,
    "MySQL 8.0 with binlog_row_metadata=FULL: TABLE_MAP events carry optional metadata (column names,"
    " signedness, charsets, ENUM/SET strings, primary key); GTID events carry commit timestamps and"
    " transaction length; with binlog_transaction_compression=ON row events sit inside"
    " TRANSACTION_PAYLOAD_EVENT (40).",
)


def known_differences_for(version: str) -> tuple[str, ...]:
    """The ``known_differences`` list for a server version string (MariaDB, MySQL 5.7 or later)."""
    if "mariadb" in version.lower():
        return MARIADB_VS_SPEC_MYSQL57
    if version.startswith("5."):
        return MYSQL57_VS_SPEC_MYSQL57
    return MYSQL80_VS_SPEC_MYSQL57


def scenario_label(path: Path) -> str:
    """The scenario's path as recorded in fixture metadata: ``fixtures/scenarios/[<server>/]<name>.sql``."""
    try:
        return f"fixtures/scenarios/{Path(path).resolve().relative_to(SCENARIO_DIR).as_posix()}"
    except ValueError:  # a scenario outside the repository's folder: its file name
        return f"fixtures/scenarios/{Path(path).name}"


def write_golden_binlogs(server: Any, path: Path | str, out_dir: Path | str,
                         known_differences: tuple[str, ...] | None = None,
                         run: Callable[[Any, Scenario, Path], list[Path]] | None = None) -> dict[str, Any]:
    """Run the scenario on ``server`` and write ``out_dir/binlogs/*`` plus ``out_dir/meta.json``.

    Existing files in ``out_dir/binlogs`` are replaced. Keys of an existing ``meta.json`` that this function
    does not write (e.g. the golden generator's ``expected``) are kept, and go stale with new binlogs (the
    generator's verify notices). Returns the metadata written: server version and flags, the scenario's
    directives and sha256, the UTC generation time, each binlog file's size and sha256, and
    ``known_differences`` from the spec's MySQL 5.7 setup (by default chosen from the server version).
    ``run(server, scenario, binlog_dir)`` replaces ``run_scenario`` when a scenario needs its own driver
    (the spec example on MySQL: ``binlog_model.testing.spec_example``); it returns the binlog files it wrote.
    """
    import datetime
    import json
    import shutil

    scenario = load_scenario(scenario_for_dialect(path, server_dialect(server)))
    out = Path(out_dir)
    binlog_dir = out / "binlogs"
    if binlog_dir.exists():
        shutil.rmtree(binlog_dir)
    files = run(server, scenario, binlog_dir) if run is not None else run_scenario(server, scenario.path,
                                                                                   binlog_dir)
    flags = server.reproducible_flags() if hasattr(server, "reproducible_flags") else []
    meta: dict[str, Any] = {
        "scenario": scenario_label(scenario.path),
        "scenario_sha256": scenario.sha256,
        "directives": scenario.directives,
        "server": {"product": "MariaDB" if "MariaDB" in server.version else "MySQL",
                   "version": server.version, "flags": flags},
        "generated_at": datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat(),
        "binlogs": [{"name": f.name, "size": f.stat().st_size,
                     "sha256": hashlib.sha256(f.read_bytes()).hexdigest()} for f in files],
        "known_differences_from_spec_mysql57": list(
            known_differences if known_differences is not None else known_differences_for(server.version)),
    }
    meta_path = out / "meta.json"
    if meta_path.is_file():
        meta = {**json.loads(meta_path.read_text(encoding="utf-8")), **meta}
    meta_path.write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return meta


def main(argv: list[str] | None = None) -> int:
    """Regenerate golden binlogs: ``python -m binlog_model.testing.scenario [OUT_ROOT] [SCENARIO ...]``.

    Starts one throwaway MariaDB (FULL image, FULL metadata, as the test session's) and writes
    ``OUT_ROOT/<scenario>/binlogs`` and ``meta.json`` for each scenario (all by default).
    """
    import sys

    from binlog_model.testing.mariadb import MariaDBServer

    args = list(sys.argv[1:] if argv is None else argv)
    out_root = Path(args.pop(0)) if args else golden_dir("mariadb")
    paths = [Path(a) if a.endswith(".sql") else SCENARIO_DIR / f"{a}.sql" for a in args] or list_scenarios()
    with MariaDBServer(row_image="FULL", row_metadata="FULL") as server:
        for scenario_path in paths:
            meta = write_golden_binlogs(server, scenario_path, out_root / scenario_path.stem)
            sizes = ", ".join(f"{b['name']} ({b['size']} bytes)" for b in meta["binlogs"])
            print(f"{scenario_path.stem}: {sizes}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
