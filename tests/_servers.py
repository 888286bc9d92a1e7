"""Helpers for tests that run on every server kind (the ``server`` fixture in conftest.py)."""

from __future__ import annotations

import pytest

from binlog_model.testing.localserver import LocalServer


def known_failure_on(request: pytest.FixtureRequest, server: LocalServer, label: str, reason: str) -> None:
    """Mark this run as an expected failure when it is on ``label`` (``"MySQL"`` / ``"MariaDB"``).

    Strict: once the gap named in ``reason`` (an open issue, in its own terms) is fixed, the test passes,
    the strict xfail reports XPASS as a failure, and this marker must go.
    """
    if server.label == label:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))


# Open gaps on MySQL, in the terms of the issue that owns each (the strict xfail turns XPASS once fixed).
GEOMETRY_CHARSET_GAP = ("issue 12 (MySQL 8/9 rows): GEOMETRY columns in a table that mixes them with text "
                        "and binary columns: TABLE_MAP's charset block is miscounted")
