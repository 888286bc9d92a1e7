"""``binlog-model fixtures generate|expect|verify``: golden fixtures from real servers, and their check.

Strategy: the click layer only parses options; ``binlog_model.testing.golden`` does the work. ``verify``
prints one line per fixture and a unified diff per differing event, and exits 1 on any difference.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from binlog_model.resolve.options import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS, ImageMode
from binlog_model.testing.golden import (
    MYSQL_SKIPPED_SCENARIOS,
    SERVER_CHOICES,
    GoldenOptions,
    default_options,
    fixture_options,
    generate_fixture,
    read_meta,
    verify_tree,
    write_expected,
)
from binlog_model.testing.scenario import list_scenarios


@click.group("fixtures")
def command() -> None:
    """Golden fixtures: binlogs from real servers and the BinlogEvents we decode from them."""


def _options(source: str | None, name: str, always_include: tuple[str, ...], image: str, max_rows: int,
             max_bytes: int) -> GoldenOptions:
    return GoldenOptions(source=source if source is not None else f"fixture:{name}",
                         always_include=always_include, image=image, max_rows=max_rows, max_bytes=max_bytes)


_decode_options = [
    click.option("--source", default=None, help="Source label (default fixture:<scenario>)."),
    click.option("--always-include", "always_include", multiple=True, metavar="DB.TABLE.COLUMN",
                 help="Column always put in `before` for UPDATE/DELETE (repeatable); recorded in meta.json."),
    click.option("--image", type=click.Choice([m.value for m in ImageMode]), default="changed",
                 show_default=True, help="Row image of the expected events; recorded in meta.json."),
    click.option("--max-rows", type=click.IntRange(min=1), default=DEFAULT_MAX_ROWS, show_default=True),
    click.option("--max-bytes", type=click.IntRange(min=1), default=DEFAULT_MAX_BYTES, show_default=True),
]


def _with_decode_options(func: Callable[..., None]) -> Callable[..., None]:
    for option in reversed(_decode_options):
        func = option(func)
    return func


@command.command("generate")
@click.argument("scenario", type=click.Path(exists=True, path_type=Path))
@click.option("--server", type=click.Choice(SERVER_CHOICES), default="mariadb", show_default=True,
              help="mariadb, mariadb11 and mysql run a local server (mariadb: the machine's; mariadb11 and "
                   "mysql: Debian sid's MariaDB 11.8 and MySQL 9, fetched into the user cache); mysql:5.7 "
                   "and mysql:8.0 need a Docker engine (testcontainers).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Fixture directory, e.g. fixtures/golden/mysql/<scenario>/; with a SCENARIO folder, "
                   "the root that gets one directory per scenario, e.g. fixtures/golden/mysql/.")
@_with_decode_options
def generate(scenario: Path, server: str, out_dir: Path, source: str | None, always_include: tuple[str, ...],
             image: str, max_rows: int, max_bytes: int) -> None:
    """Run SCENARIO on a fresh server; write binlogs/, meta.json, snapshot.json and expected.jsonl.

    SCENARIO is a .sql file, or a folder (fixtures/scenarios) to generate every scenario in it. The
    server's dialect variant (fixtures/scenarios/mysql/<name>.sql) runs where there is one; the spec
    example runs with the spec's settings (always-include currency; on MySQL also its flags and source).
    """
    scenarios = list_scenarios(scenario) if scenario.is_dir() else [scenario]
    if not scenarios:
        raise click.UsageError(f"no *.sql scenarios in {scenario}")
    for path in scenarios:
        target = out_dir / path.stem if scenario.is_dir() else out_dir
        if server == "mysql" and path.stem in MYSQL_SKIPPED_SCENARIOS:
            click.echo(f"{target}: skipped: {MYSQL_SKIPPED_SCENARIOS[path.stem]}")
            continue
        defaults = default_options(path.stem, server)
        options = _options(source if source is not None else defaults.source, path.stem,
                           always_include or defaults.always_include, image, max_rows, max_bytes)
        meta = generate_fixture(path, server, target, options)
        click.echo(f"{target}: {meta['server']['version']}, {len(meta['binlogs'])} binlog file(s), "
                   f"{meta['expected']['events']} events")


@command.command("expect")
@click.argument("fixture_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--keep-options", is_flag=True, help="Reuse the options recorded in meta.json.")
@_with_decode_options
def expect(fixture_dir: Path, keep_options: bool, source: str | None, always_include: tuple[str, ...],
           image: str, max_rows: int, max_bytes: int) -> None:
    """Rewrite FIXTURE_DIR/expected.jsonl from its committed binlogs (no server needed)."""
    if keep_options:
        options = fixture_options(fixture_dir, read_meta(fixture_dir))
    else:
        options = _options(source, fixture_dir.name, always_include, image, max_rows, max_bytes)
    meta = write_expected(fixture_dir, options)
    click.echo(f"{fixture_dir}: {meta['expected']['events']} events")


@command.command("verify")
@click.argument("root", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--allow-missing", is_flag=True,
              help="A fixture without expected.jsonl is listed as MISSING instead of failing the run.")
def verify(root: Path, allow_missing: bool) -> None:
    """Re-decode every fixture under ROOT and diff against expected.jsonl; exit 1 on any difference."""
    results = verify_tree(root)
    for result in results:
        click.echo(result.report())
    failed = [r for r in results if not r.ok and not (allow_missing and r.missing)]
    missing = sum(r.missing for r in results)
    click.echo(f"{sum(r.ok for r in results)} of {len(results)} fixtures match"
               + (f"; {missing} without expected.jsonl" if missing else ""))
    if failed:
        # SystemExit, not click's Exit: binlog_model.cli.main runs click with standalone_mode=False and
        # would turn an Exit into status 0.
        raise SystemExit(1)
