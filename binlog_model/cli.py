"""The ``binlog-model`` console script: one click group, one module per subcommand.

Each subcommand lives in ``binlog_model/commands/<name>.py`` and exposes a click command named
``command``; this module only wires them together, so adding a subcommand never touches another one.
A subcommand's module is imported when that subcommand runs (or ``--help`` lists them all), so a run pays
only for the imports of its own command.
Every ``BinlogError`` (and an ``OSError`` such as an unwritable ``--out``) becomes a one-line message on
stderr and exit status 2, never a traceback. A reader that stops early (``| head``) ends the run quietly
with status 0.
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from binlog_model.compiled import compiled_core
from binlog_model.errors import BinlogError

# modules under binlog_model.commands; the subcommand's name is the module's with "-" for "_"
_COMMANDS = ("dump", "schema", "events", "tail", "apply", "fixtures", "resolve", "spark_pack", "cat")


class _ReaderGone(Exception):
    """stdout's reader went away (``| head``). Not an OSError, so click does not turn it into exit 1."""


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *(name.replace("_", "-") for name in _COMMANDS)})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = cmd_name.replace("-", "_")
        if cmd_name not in self.commands and module in _COMMANDS and "_" not in cmd_name:
            self.add_command(importlib.import_module(f"binlog_model.commands.{module}").command, cmd_name)
        return self.commands.get(cmd_name)

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except BrokenPipeError as err:
            raise _ReaderGone from err


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
# the second line says which row builder this process runs (click %-formats the message: escape the reason)
@click.version_option(package_name="binlog-model", message="%(prog)s, version %(version)s\ncompiled core: "
                      + compiled_core().replace("%", "%%"))
def cli() -> None:
    """MySQL / MariaDB row-based binlogs to typed BinlogEvents."""


def main(argv: list[str] | None = None) -> int:
    _keep_freed_memory()
    try:
        status = cli.main(args=argv, prog_name="binlog-model", standalone_mode=False)
    except _ReaderGone:
        _silence_stdout()
        return 0
    except BinlogError as err:
        click.echo(f"error: {type(err).__name__}: {err}", err=True)
        return 2
    except OSError as err:
        where = f" ({err.filename})" if err.filename else ""
        click.echo(f"error: {err.strerror or err}{where}", err=True)
        return 2
    except click.exceptions.Abort:
        return 130
    except click.ClickException as err:
        err.show()
        return err.exit_code
    # standalone_mode=False hands back a subcommand's return value, or ctx.exit(n)'s status.
    return status if isinstance(status, int) else 0


def _keep_freed_memory() -> None:
    """glibc's malloc hands freed blocks of a few hundred KB straight back to the kernel (its adaptive
    thresholds), and takes them again page fault by page fault for the next event or read chunk: 40,000+
    faults, ~0.15 s of system time per 100 MB binlog. Blocks up to 4 MiB come from the heap, and up to
    32 MiB of free heap is kept: the faults drop to the ~8,000 of a heap that stops growing; the peak RSS
    stays what it was. Only glibc has ``mallopt``; elsewhere nothing changes."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError, ImportError):
        return
    mallopt(-3, 4 << 20)        # M_MMAP_THRESHOLD (fixing it also ends the adaptive trim threshold)
    mallopt(-1, 32 << 20)       # M_TRIM_THRESHOLD


def _silence_stdout() -> None:
    """The reader of stdout went away: point stdout at /dev/null so the interpreter's final flush of the
    buffered rest does not raise again at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
