"""The README's layout section names the code as it is: every path and module it names exists, and every
package folder of binlog_model and schema_tracker is named there."""

from __future__ import annotations

import re

from tests._paths import REPO


def _layout() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return text[text.index("## Layout"):]


def test_every_folder_named_exists() -> None:
    named = re.findall(r"^([\w/]+/)\s", _layout(), re.M)
    assert "binlog_model/resolve/" in named
    missing = [p for p in named if not (REPO / p).is_dir()]
    assert missing == []


def test_every_module_named_exists_in_its_folder() -> None:
    missing = []
    for line in re.findall(r"^(binlog_model/\w+/|schema_tracker/)\s+(.*(?:\n {20,}.*)*)", _layout(), re.M):
        folder, text = line
        for module in re.findall(r"\b(\w+)\.py\b", text):
            candidates = [REPO / folder / f"{module}.py", REPO / "binlog_model" / f"{module}.py"]
            if not any(c.is_file() for c in candidates):
                missing.append(f"{folder}{module}.py")
    assert missing == []


def test_every_package_folder_is_named() -> None:
    layout = _layout()
    folders = [p.relative_to(REPO).as_posix() + "/" for root in ("binlog_model", "schema_tracker")
               for p in (REPO / root).iterdir()
               if p.is_dir() and not p.name.startswith("__") and (p / "__init__.py").exists()]
    unnamed = [f for f in folders if f not in layout and f.split("/", 1)[1] not in layout]
    assert unnamed == []
