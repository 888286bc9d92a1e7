"""``TableFilter`` (``--tables`` / ``--exclude-tables``): the matching rules the docs state."""

from __future__ import annotations

import pytest

from binlog_model.errors import ConfigError
from binlog_model.resolve.table_filter import TableFilter


def test_includes_excludes_and_globs() -> None:
    only_shop = TableFilter.from_patterns(["shop.*", "*.audit_?"], ["shop.secret*"])
    assert [only_shop("shop", "orders"), only_shop("Shop", "ORDERS"), only_shop("shop", "secrets"),
            only_shop("crm", "audit_1"), only_shop("crm", "audit_12"), only_shop("crm", "users")] == [
        True, True, False, True, False, False]
    no_audit = TableFilter.from_patterns([], ["*.audit_*"])
    assert no_audit("crm", "users") and not no_audit("crm", "audit_log")
    assert TableFilter()("any", "table") and not TableFilter().active
    # a dot inside a glob class is no separator: exactly one dot splits DB and TABLE
    assert TableFilter.from_patterns(["db[0-9].t"])("db7", "t")


def test_database_events_follow_the_patterns() -> None:
    table_filter = TableFilter.from_patterns(["shop.orders", "crm.*"], ["crm.*", "shop.audit"])
    assert table_filter.database("shop")          # orders can pass
    assert not table_filter.database("crm")       # every table of crm is excluded
    assert not table_filter.database("other")     # no include pattern names it


def test_unmatched_patterns_are_named() -> None:
    table_filter = TableFilter.from_patterns(["shop.orders", "shop.ordres"], ["nosuch.*"])
    assert table_filter.unmatched({("shop", "orders"), ("crm", "users")}) == ["shop.ordres", "nosuch.*"]


@pytest.mark.parametrize("bad", ["orders", "shop.", ".orders", "shop.orders.id", ""])
def test_malformed_patterns_are_config_errors(bad: str) -> None:
    with pytest.raises(ConfigError, match=r"takes DB\.TABLE"):
        TableFilter.from_patterns([bad or "."])
