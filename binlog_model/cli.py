"""The ``binlog-model`` console script: one click group, one module per subcommand.

Each subcommand lives in ``binlog_model/commands/<name>.py`` and exposes a click command named
``command``; this module only wires them together, so adding a subcommand never touches another one.
Every ``BinlogError`` becomes a one-line message on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import importlib
import sys

import click

from binlog_model.errors import BinlogError

# modules under binlog_model.commands; the subcommand's name is the module's with "-" for "_"
_COMMANDS = ("dump", "schema", "events", "fixtures", "resolve", "spark_pack")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="binlog-model")
def cli() -> None:
    """MySQL / MariaDB row-based binlogs to typed BinlogEvents."""


for _name in _COMMANDS:
    _module = importlib.import_module(f"binlog_model.commands.{_name}")
    cli.add_command(_module.command, _name.replace("_", "-"))


def main(argv: list[str] | None = None) -> int:
    try:
        status = cli.main(args=argv, prog_name="binlog-model", standalone_mode=False)
    except BinlogError as err:
        click.echo(f"error: {type(err).__name__}: {err}", err=True)
        return 2
    except click.exceptions.Abort:
        return 130
    except click.ClickException as err:
        err.show()
        return err.exit_code
    # standalone_mode=False hands back a subcommand's return value, or ctx.exit(n)'s status.
    return status if isinstance(status, int) else 0


if __name__ == "__main__":
    sys.exit(main())
