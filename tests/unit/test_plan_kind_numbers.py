"""The C row builder's model kinds (``K_*`` in ``_speedups/plan.h``) are ``resolve.plan.PlanKind``'s numbers:
the Python side sends ``int(kind)`` and C switches on ``K_*``, so a kind added or renumbered on one side
only must fail here, not write values as the wrong type."""

from __future__ import annotations

import re

from binlog_model.resolve.plan import PlanKind
from tests._paths import REPO

# NONE marks a HIDDEN column, which C never converts (compiled_rows sends its wire size only).
PYTHON_ONLY = {"NONE"}


def _enum_numbers(body: str) -> dict[str, int]:
    """``NAME = n, NEXT, ...`` of a C enum body → names and numbers (implicit ones count on)."""
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    numbers, nxt = {}, 0
    for item in (i.strip() for i in body.split(",")):
        if not item:
            continue
        name, _, value = (p.strip() for p in item.partition("="))
        nxt = int(value, 0) if value else nxt
        numbers[name] = nxt
        nxt += 1
    return numbers


def _c_kinds() -> dict[str, int]:
    header = (REPO / "binlog_model" / "_speedups" / "plan.h").read_text(encoding="utf-8")
    enums = [_enum_numbers(body) for body in re.findall(r"enum\s*\{(.*?)\}", header, re.S)]
    kinds = [e for e in enums if any(name.startswith("K_") for name in e)]
    assert len(kinds) == 1, "plan.h should have one enum of K_ model kinds"
    return {name.removeprefix("K_"): number for name, number in kinds[0].items()}


def test_c_kinds_are_the_python_plan_kinds() -> None:
    python = {kind.name: kind.value for kind in PlanKind if kind.name not in PYTHON_ONLY}
    assert _c_kinds() == python


def test_the_header_parser_counts_implicit_numbers() -> None:
    assert _enum_numbers("A = 1, B, /* c */ C, D = 7, E") == {"A": 1, "B": 2, "C": 3, "D": 7, "E": 8}
