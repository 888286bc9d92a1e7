"""Helpers for the tests of live connections (tests/differential/test_live_*.py): ``binlog-model tail``
and a ``mysql://`` snapshot run in this process, and the one-line failure they must end with."""

from __future__ import annotations

from pathlib import Path

import pytest

from binlog_model.cli import main

Outcome = tuple[int, str, list[str]]


def run_cli(capsys: pytest.CaptureFixture[str], args: list[str]) -> Outcome:
    """``binlog-model ARGS`` in this process: its status, stdout and stderr's lines."""
    capsys.readouterr()
    status = main(args)
    out, err = capsys.readouterr()
    return status, out, err.strip().splitlines()


def tail_to_end(capsys: pytest.CaptureFixture[str], url: str, work: Path, *extra: str) -> Outcome:
    """``tail URL --stop-at-end`` into ``work``/state and ``work``/out, a short --connect-timeout first."""
    return run_cli(capsys, ["tail", url, "--state", str(work / "state"), "--out", str(work / "out"),
                            "--stop-at-end", "--heartbeat", "1s", "--connect-timeout", "2", *extra])


def snapshot(capsys: pytest.CaptureFixture[str], url: str, work: Path, *extra: str) -> Outcome:
    """``schema --snapshot URL``: the catalog read from the server (nothing replayed after it)."""
    nothing = work / "no-statements.sql"
    nothing.write_text("")
    return run_cli(capsys, ["schema", "--sql", str(nothing), "--snapshot", url, "--json", *extra])


def tail_output(work: Path) -> str:
    out = work / "out"
    return "".join(p.read_text() for p in sorted(out.iterdir())) if out.is_dir() else ""


def assert_one_error(outcome: Outcome, kind: str, *words: str) -> None:
    """The command failed with one line on stderr, ``error: KIND: ...``, holding each of ``words``, and
    nothing else but the tail's line that it began streaming (a refusal of the dump itself comes after)."""
    status, _, lines = outcome
    assert status != 0, lines
    lines = [line for line in lines if not line.startswith("tail: streaming from ")]
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {kind}: "), lines
    for word in words:
        assert word in lines[0], (word, lines)
