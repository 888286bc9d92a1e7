"""The README stays true: its type-mapping table is the code's, and its two commands are what CI runs."""

from __future__ import annotations

import re

from binlog_model.resolve.types import type_mapping_markdown
from tests._paths import REPO


def _readme() -> str:
    return (REPO / "README.md").read_text(encoding="utf-8")


def test_type_mapping_table_matches_the_code() -> None:
    m = re.search(r"<!-- type-mapping:start -->\n(.*?)<!-- type-mapping:end -->", _readme(), re.S)
    assert m, "README lost its type-mapping markers"
    assert m.group(1).strip() == type_mapping_markdown().strip()


def test_readme_gives_exactly_two_commands_and_ci_runs_them() -> None:
    section = _readme().split("## Two commands", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.*?)\n```", section, re.S)
    assert commands == ["bash scripts/main.sh", "bash scripts/test.sh"]
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    for command in commands:
        assert command in ci
