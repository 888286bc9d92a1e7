"""The curated top-level API: every advertised name resolves, and importing the package stays cheap."""

from __future__ import annotations

import subprocess
import sys

import pytest

import binlog_model


@pytest.mark.parametrize("name", binlog_model.__all__)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(binlog_model, name) is not None


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        binlog_model.no_such_thing  # noqa: B018


def test_import_does_not_pull_in_sqlglot_or_pyspark() -> None:
    code = "import sys, binlog_model; print(sorted(m for m in ('sqlglot', 'pyspark') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
