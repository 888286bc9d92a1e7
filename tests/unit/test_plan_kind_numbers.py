"""The C row builder's model kinds (``K_*`` in ``_speedups/plan.h``) are ``resolve.plan.PlanKind``'s numbers:
the Python side sends ``int(kind)`` and C switches on ``K_*``, so a kind added or renumbered on one side
only must fail here, not write values as the wrong type."""

from __future__ import annotations

import re
import typing

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


_MODULE_C = REPO / "binlog_model" / "_speedups" / "module.c"
# The format unit compile_column reads each field with: a str or tuple as an object, ints and bools.
_UNIT = {str: "O", tuple: "O", int: "l", bool: "p"}


def test_compiled_column_is_the_tuple_compile_plan_unpacks() -> None:
    """``CompiledColumn``'s fields, in order and by type, are what module.c's ``compile_column`` parses
    (its PyArg_ParseTuple format and the column list its error message names): a field added, moved or
    retyped on one side only fails here, not as values read from the wrong slot."""
    from binlog_model.resolve.compiled_rows import CompiledColumn

    text = re.sub(r'"\s*\n\s*"', "", _MODULE_C.read_text(encoding="utf-8"))   # join adjacent literals
    found = re.search(r'PyArg_ParseTuple\(spec, "(\w+);a plan column is \(([^)]*)\)', text)
    assert found, "compile_column's PyArg_ParseTuple(spec, ...) call moved: update this test"
    fmt = found.group(1)
    c_names = [n.strip() for n in found.group(2).split(",")]
    fields = list(CompiledColumn._fields)
    assert [("type" if f == "type_code" else f) for f in fields] == c_names   # module.c says "type"
    hints = typing.get_type_hints(CompiledColumn)
    assert "".join(_UNIT[typing.get_origin(hints[f]) or hints[f]] for f in fields) == fmt


def test_c_column_types_are_the_wire_column_types() -> None:
    """module.c's ``T_*`` (the TABLE_MAP type codes its codec switch reads) are ``ColumnType``'s numbers."""
    from binlog_model.wire.column_types import ColumnType

    text = _MODULE_C.read_text(encoding="utf-8")
    enums = [_enum_numbers(body) for body in re.findall(r"enum\s*\{(.*?)\}", text, re.S)]
    types = [e for e in enums if any(name.startswith("T_") for name in e)]
    assert len(types) == 1, "module.c should have one enum of T_ column types"
    names = {"NULLTYPE": "NULL"}
    for name, number in types[0].items():
        short = name.removeprefix("T_")
        assert ColumnType[names.get(short, short)] == number, name
