"""The README stays true: its type-mapping table is the code's, and its two commands are what CI runs."""

from __future__ import annotations

import re

from binlog_model.resolve.types import column_type_name, map_column, type_mapping_markdown
from schema_tracker.model import ColumnSchema
from tests._paths import REPO


def _readme() -> str:
    return (REPO / "README.md").read_text(encoding="utf-8")


def test_type_mapping_table_matches_the_code() -> None:
    m = re.search(r"<!-- type-mapping:start -->\n(.*?)<!-- type-mapping:end -->", _readme(), re.S)
    assert m, "README lost its type-mapping markers"
    assert m.group(1).strip() == type_mapping_markdown().strip()


def _readme_type_rows() -> list[tuple[str, bool, str, str, str]]:
    m = re.search(r"<!-- type-mapping:start -->\n(.*?)<!-- type-mapping:end -->", _readme(), re.S)
    assert m, "README lost its type-mapping markers"
    rows = []
    for line in m.group(1).strip().splitlines()[2:]:          # after the header and the |---| line
        label, column_type, kind, note = (cell.strip() for cell in line.strip().strip("|").split("|"))
        data_type, _, flag = label.partition(" ")
        assert flag in ("", "unsigned"), line
        rows.append((data_type, flag == "unsigned", column_type, kind.strip("`"), note))
    return rows


def test_each_readme_type_row_is_what_map_column_gives() -> None:
    """Row by row, the README's claim is checked against the mapping the converter uses (``map_column``)."""
    rows = _readme_type_rows()
    assert len(rows) > 40
    for data_type, unsigned, column_type, kind, note in rows:
        charset = "utf8mb4" if "charset" in note else None
        mapped = map_column(ColumnSchema("c", data_type, unsigned=unsigned, charset=charset,
                                         enum_values=("a", "b")))
        got = (column_type_name(mapped.column_type), mapped.value_kind.value)
        assert got == (column_type, kind), data_type
        if "charset binary → BYTES" in note:
            binary = map_column(ColumnSchema("c", data_type, charset="binary"))
            assert (column_type_name(binary.column_type), binary.value_kind.value) == ("BYTES", "bytes_value")


def test_readme_gives_exactly_two_commands_and_ci_runs_them() -> None:
    section = _readme().split("## Two commands", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.*?)\n```", section, re.S)
    assert commands == ["bash scripts/main.sh", "bash scripts/test.sh"]
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    for command in commands:
        assert command in ci
