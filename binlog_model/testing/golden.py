"""Golden fixtures: generate ``expected.jsonl`` from a fixture's binlogs and verify it with a readable diff.

Strategy: a fixture is a directory ``fixtures/golden/<server>/<scenario>/`` holding ``binlogs/*`` and
``meta.json`` (written by the scenario runner, ``binlog_model.testing.scenario.write_golden_binlogs``),
optionally ``snapshot.json`` (the schema before the scenario ran, a saved ``SchemaHistory``) and
``expected.jsonl`` (one canonical proto3-JSON ``BinlogEvent`` per line). Everything that changes the decoded
output (source label, ``always_include``, ``image``, split limits) lives in the ``"expected"`` section this
module adds to ``meta.json``, so ``verify`` decodes exactly as ``generate`` did. The runner's keys are kept
as they are; this module only adds ``"expected"`` (and ``"differences_from_spec"`` when given).

``verify`` re-decodes and compares line by line; a difference is reported per event as a unified diff of
pretty JSON naming the fixture, the event index and the binlog position. ``generate_fixture`` makes a
fixture on a live server; the spec's example runs there as ``spec_example`` drives it.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from binlog_model._pb import binlog_event_pb2 as pb
from binlog_model.errors import BinlogError, ConfigError
from binlog_model.io.snapshots import load_snapshot, save_history
from binlog_model.messages import to_json
from binlog_model.resolve.options import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS
from binlog_model.runs.pipeline import iter_binlog_events
from binlog_model.testing.spec_example import (
    SPEC_ALWAYS_INCLUDE,
    SPEC_EXAMPLE,
    SPEC_EXAMPLE_MYSQL_KNOWN,
    SPEC_MYSQL_SERVER,
    SPEC_SOURCE,
    SpecRunOnMySQL,
    default_differences,
)

__all__ = [
    "EXPECTED_NAME",
    "META_NAME",
    "MYSQL_SKIPPED_SCENARIOS",
    "SERVER_CHOICES",
    "SNAPSHOT_NAME",
    "FixtureResult",
    "GoldenOptions",
    "decode_fixture",
    "default_options",
    "fixture_events",
    "fixture_options",
    "generate_fixture",
    "iter_fixture_dirs",
    "read_meta",
    "scenario_for_server",
    "verify_fixture",
    "verify_tree",
    "write_expected",
]

META_NAME = "meta.json"
EXPECTED_NAME = "expected.jsonl"
SNAPSHOT_NAME = "snapshot.json"
_IMAGES = ("changed", "changed_with_old", "full")


@dataclass(frozen=True, slots=True)
class GoldenOptions:
    """The decode options of a fixture: recorded in ``meta.json["expected"]["options"]``."""

    source: str = ""
    always_include: tuple[str, ...] = ()     # "db.table.column"
    image: str = "changed"
    max_rows: int = DEFAULT_MAX_ROWS
    max_bytes: int = DEFAULT_MAX_BYTES

    def __post_init__(self) -> None:
        if self.image not in _IMAGES:
            raise ConfigError(f"image must be one of {_IMAGES}, got {self.image!r}")
        if self.max_rows < 1 or self.max_bytes < 1:
            raise ConfigError(f"max_rows/max_bytes must be positive: {self.max_rows}, {self.max_bytes}")

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "always_include": list(self.always_include), "image": self.image,
                "max_rows": self.max_rows, "max_bytes": self.max_bytes}

    @classmethod
    def from_json(cls, doc: dict[str, Any], where: str) -> GoldenOptions:
        known = {"source", "always_include", "image", "max_rows", "max_bytes"}
        unknown = set(doc) - known
        if unknown:  # a misspelt option must not silently decode differently
            raise ConfigError(f"{where}: unknown expected.options keys {sorted(unknown)}")
        include = doc.get("always_include", [])
        if not isinstance(include, list) or not all(isinstance(c, str) for c in include):
            raise ConfigError(f"{where}: expected.options.always_include must be a list of db.table.column")
        try:
            return cls(source=str(doc.get("source", "")), always_include=tuple(include),
                       image=str(doc.get("image", "changed")),
                       max_rows=int(doc.get("max_rows", DEFAULT_MAX_ROWS)),
                       max_bytes=int(doc.get("max_bytes", DEFAULT_MAX_BYTES)))
        except (TypeError, ValueError) as err:
            raise ConfigError(f"{where}: bad expected.options: {err}") from err


@dataclass(frozen=True, slots=True)
class FixtureResult:
    """The outcome of verifying one fixture: ``diffs`` is empty when it matches; ``missing`` when it has
    no ``expected.jsonl`` at all (a failure unless the caller allows missing expectations)."""

    fixture: Path
    expected_count: int
    actual_count: int
    diffs: tuple[str, ...] = field(default=())
    missing: bool = False

    @property
    def ok(self) -> bool:
        return not self.diffs

    def report(self) -> str:
        if self.missing:
            return f"MISSING {self.fixture}: {self.diffs[0]}"
        if self.ok:
            return f"ok   {self.fixture} ({self.actual_count} events)"
        head = (f"FAIL {self.fixture}: {len(self.diffs)} differing event(s); "
                f"expected {self.expected_count} events, decoded {self.actual_count}")
        return "\n".join([head, *self.diffs])


def read_meta(fixture_dir: Path) -> dict[str, Any]:
    """The fixture's ``meta.json`` as a dict; ``ConfigError`` names the file when missing or unreadable."""
    path = Path(fixture_dir) / META_NAME
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ConfigError(f"cannot read fixture metadata {path}: {err}") from err
    if not isinstance(doc, dict):
        raise ConfigError(f"fixture metadata {path} is not a JSON object")
    return doc


def fixture_options(fixture_dir: Path, meta: dict[str, Any] | None = None) -> GoldenOptions:
    """The options recorded for the fixture (defaults, with source ``fixture:<dir name>``, when none)."""
    meta = read_meta(fixture_dir) if meta is None else meta
    expected = meta.get("expected")
    if expected is None:
        return GoldenOptions(source=f"fixture:{Path(fixture_dir).name}")
    return GoldenOptions.from_json(expected.get("options", {}), f"{Path(fixture_dir) / META_NAME}")


def binlog_files(fixture_dir: Path, meta: dict[str, Any]) -> list[Path]:
    """The fixture's binlog files in the order ``meta.json`` lists them (every one must exist)."""
    entries = meta.get("binlogs")
    if not entries:
        raise ConfigError(f"{Path(fixture_dir) / META_NAME} lists no binlogs")
    files = [Path(fixture_dir) / "binlogs" / e["name"] for e in entries]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise ConfigError(f"fixture {fixture_dir}: binlog files missing: {', '.join(missing)}")
    return files


def fixture_events(fixture_dir: Path, options: GoldenOptions | None = None) -> Iterator[pb.BinlogEvent]:
    """The fixture's binlogs decoded with ``options`` (default: the recorded ones), as events."""
    fixture_dir = Path(fixture_dir)
    meta = read_meta(fixture_dir)
    options = fixture_options(fixture_dir, meta) if options is None else options
    snapshot_path = fixture_dir / SNAPSHOT_NAME
    snapshot = load_snapshot(snapshot_path) if snapshot_path.is_file() else None
    return iter_binlog_events(binlog_files(fixture_dir, meta), source=options.source, snapshot=snapshot,
                              always_include=list(options.always_include), image=options.image,
                              max_rows=options.max_rows, max_bytes=options.max_bytes)


def decode_fixture(fixture_dir: Path, options: GoldenOptions | None = None) -> list[str]:
    """Decode the fixture's binlogs with ``options`` (default: the recorded ones) to canonical JSON lines."""
    return [to_json(e) for e in fixture_events(fixture_dir, options)]


def write_expected(fixture_dir: Path, options: GoldenOptions | None = None,
                   differences_from_spec: Sequence[dict[str, str]] | None = None) -> dict[str, Any]:
    """(Re)write ``expected.jsonl`` from the fixture's binlogs and record the options in ``meta.json``.

    The runner's keys in ``meta.json`` are kept; ``"expected"`` (options, event count, sha256 of
    ``expected.jsonl``) is replaced, and ``"differences_from_spec"`` too when given. Returns the new meta.
    """
    fixture_dir = Path(fixture_dir)
    meta = read_meta(fixture_dir)
    options = fixture_options(fixture_dir, meta) if options is None else options
    lines = decode_fixture(fixture_dir, options)
    text = "".join(line + "\n" for line in lines)
    (fixture_dir / EXPECTED_NAME).write_text(text, encoding="utf-8")
    meta["expected"] = {"file": EXPECTED_NAME, "options": options.to_json(), "events": len(lines),
                        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                        "snapshot": SNAPSHOT_NAME if (fixture_dir / SNAPSHOT_NAME).is_file() else None}
    if differences_from_spec is None:
        differences_from_spec = default_differences(fixture_dir, meta)
    if differences_from_spec is not None:
        meta["differences_from_spec"] = [dict(d) for d in differences_from_spec]
    meta_text = json.dumps(meta, indent=2, ensure_ascii=False) + "\n"
    (fixture_dir / META_NAME).write_text(meta_text, encoding="utf-8")
    return meta


def _pretty(line: str) -> list[str]:
    return json.dumps(json.loads(line), indent=2, sort_keys=True, ensure_ascii=False).splitlines()


def _where(line: str) -> str:
    try:
        pos = json.loads(line).get("position", {})
    except ValueError:
        return "?"
    return f"{pos.get('file', '?')}@{pos.get('offset', '0')}"


def verify_fixture(fixture_dir: Path) -> FixtureResult:
    """Re-decode the fixture and compare with its ``expected.jsonl``, one unified diff per differing event."""
    fixture_dir = Path(fixture_dir)
    expected_path = fixture_dir / EXPECTED_NAME
    try:
        expected = expected_path.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        return FixtureResult(fixture_dir, 0, 0, (f"cannot read {expected_path}: {err}",),
                             missing=not expected_path.exists())
    try:
        actual = decode_fixture(fixture_dir)
    except BinlogError as err:  # a fixture that no longer decodes is a difference, reported like the others
        return FixtureResult(fixture_dir, len(expected), 0,
                             (f"{fixture_dir}: decoding failed: {type(err).__name__}: {err}",))
    diffs = []
    for index in range(max(len(expected), len(actual))):
        exp = expected[index] if index < len(expected) else None
        act = actual[index] if index < len(actual) else None
        if exp == act:
            continue
        where = _where(act if act is not None else exp or "")
        label = f"{fixture_dir} event #{index} at {where}"
        diff = difflib.unified_diff(_pretty(exp) if exp else [], _pretty(act) if act else [],
                                    fromfile=f"expected {label}", tofile=f"decoded  {label}", lineterm="")
        diffs.append("\n".join(diff))
    return FixtureResult(fixture_dir, len(expected), len(actual), tuple(diffs))


def iter_fixture_dirs(root: Path) -> Iterator[Path]:
    """Every fixture directory under ``root`` (a directory with ``meta.json`` and ``binlogs/``), sorted."""
    root = Path(root)
    if (root / META_NAME).is_file():
        yield root
        return
    for meta in sorted(root.rglob(META_NAME)):
        if (meta.parent / "binlogs").is_dir():
            yield meta.parent


def verify_tree(root: Path) -> list[FixtureResult]:
    """Verify every fixture under ``root``; ``ConfigError`` when there is none (a wrong path is no pass)."""
    dirs = list(iter_fixture_dirs(root))
    if not dirs:
        raise ConfigError(f"no golden fixtures (meta.json + binlogs/) under {root}")
    return [verify_fixture(d) for d in dirs]


# -- generation on a live server -----------------------------------------------------------------------------

SERVER_CHOICES = ("mariadb", "mariadb11", "mysql", "mysql:5.7", "mysql:8.0")
_CONTAINER_KIND = {"mysql:5.7": "mysql57", "mysql:8.0": "mysql80"}

# Scenarios whose MySQL fixture cannot be generated yet: name -> the reason, in the owning issue's terms.
# The generator skips them and says so; tests/golden/test_golden_mysql.py lists them.
# Empty: every scenario runs.
MYSQL_SKIPPED_SCENARIOS: dict[str, str] = {}


def server_family(server: str) -> str:
    """``mariadb`` or ``mysql``: the Docker MySQL servers speak the same dialect as the local one, and
    MariaDB 11.8 (``mariadb11``) the same as the machine's MariaDB."""
    return "mysql" if server.startswith("mysql") else "mariadb"


def scenario_for_server(scenario: Path, server: str) -> Path:
    """The scenario file to run on ``server`` (a ``SERVER_CHOICES`` name): its dialect variant
    ``<dir>/<family>/<name>.sql`` when there is one, else ``scenario`` (``scenario.scenario_for_dialect``)."""
    from binlog_model.testing.scenario import scenario_for_dialect

    return scenario_for_dialect(scenario, server_family(server))


def default_options(name: str, server: str) -> GoldenOptions:
    """The decode options a scenario's fixture is generated with unless the caller gives others.

    The spec example always includes ``currency`` (the spec's requirement); on MySQL it also carries the
    spec's source label, so that its events equal the spec's field by field.
    """
    if name != SPEC_EXAMPLE:
        return GoldenOptions(source=f"fixture:{name}")
    source = SPEC_SOURCE if server == "mysql" else f"fixture:{name}"
    return GoldenOptions(source=source, always_include=SPEC_ALWAYS_INCLUDE)


def _start_server(server: str, name: str = "") -> Any:
    if server == "mariadb":
        from binlog_model.testing.mariadb import MariaDBServer

        return MariaDBServer(row_image="FULL", row_metadata="FULL").start()
    if server == "mariadb11":
        from binlog_model.testing.mariadb11 import MariaDB11Server, mariadb11_available

        ok, reason = mariadb11_available()
        if not ok:
            raise ConfigError(f"cannot generate a mariadb11 fixture: {reason}")
        return MariaDB11Server(row_image="FULL", row_metadata="FULL").start()
    if server == "mysql":
        from binlog_model.testing.mysql import MySQLServer, mysql_available

        ok, reason = mysql_available()
        if not ok:
            raise ConfigError(f"cannot generate a mysql fixture: {reason}")
        if name == SPEC_EXAMPLE:
            return MySQLServer(**SPEC_MYSQL_SERVER).start()  # type: ignore[arg-type]
        return MySQLServer(row_image="FULL", row_metadata="FULL").start()
    if server in _CONTAINER_KIND:
        from binlog_model.testing.containers import docker_available, server_for

        ok, reason = docker_available()
        if not ok:
            raise ConfigError(f"cannot generate a {server} fixture: {reason}")
        return server_for(_CONTAINER_KIND[server]).start()
    raise ConfigError(f"unknown server {server!r}; expected one of {SERVER_CHOICES}")


def generate_fixture(scenario: Path, server: str, out_dir: Path, options: GoldenOptions | None = None,
                     differences_from_spec: Sequence[dict[str, str]] | None = None) -> dict[str, Any]:
    """Start ``server``, snapshot its schema, run ``scenario``, and write a complete fixture to ``out_dir``.

    ``out_dir`` gets ``binlogs/`` and ``meta.json`` (from the scenario runner), ``snapshot.json`` (the
    catalog before the scenario, as a ``SchemaHistory``) and ``expected.jsonl``. The server's dialect
    variant of the scenario is run when there is one (``scenario_for_server``); the spec example on MySQL
    runs with the spec's flags and numbering (``spec_example.SpecRunOnMySQL``). Returns the meta written.
    """
    from binlog_model.testing.scenario import load_scenario, write_golden_binlogs
    from binlog_model.testing.sqlserver import run_statements
    from schema_tracker.history import SchemaHistory
    from schema_tracker.snapshot import catalog_from_server

    parsed = load_scenario(scenario_for_server(scenario, server))
    if server == "mysql" and parsed.name in MYSQL_SKIPPED_SCENARIOS:
        raise ConfigError(f"the MySQL fixture of {parsed.name} is not generated: "
                          f"{MYSQL_SKIPPED_SCENARIOS[parsed.name]}")
    options = options or default_options(parsed.name, server)
    spec_run = SpecRunOnMySQL(parsed) if server == "mysql" and parsed.name == SPEC_EXAMPLE else None
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    live = _start_server(server, parsed.name)
    try:
        conn = live.connect()
        try:
            if spec_run is not None:  # the spec's example starts from a schema holding ppc.campaigns
                run_statements(conn, spec_run.prelude)
            catalog = catalog_from_server(conn)
        finally:
            conn.close()
        write_golden_binlogs(live, parsed.path, out_dir,
                             known_differences=SPEC_EXAMPLE_MYSQL_KNOWN if spec_run else None,
                             run=spec_run.run if spec_run else None)
    finally:
        live.stop()
    save_history(SchemaHistory(catalog), out_dir / SNAPSHOT_NAME)
    if spec_run is not None:
        meta = read_meta(out_dir)
        meta["spec_run"] = spec_run.meta()
        (out_dir / META_NAME).write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n",
                                         encoding="utf-8")
    return write_expected(out_dir, options, differences_from_spec)
