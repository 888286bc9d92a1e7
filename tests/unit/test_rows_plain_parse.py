"""The rows-event header's plain-read path (``rows._parse_plain``) gives the event the checked cursor path
(``rows._parse``) gives, on every rows event of the golden binlogs of MySQL, MariaDB 10.11 and 11.8."""

from __future__ import annotations

import pytest

from binlog_model.io.files import SliceReader
from binlog_model.wire import rows
from binlog_model.wire.rows import ROWS_EVENT_KINDS, RowsEvent
from tests._paths import REPO

GOLDEN = REPO / "fixtures" / "golden"


@pytest.mark.parametrize("server", ["mysql", "mariadb", "mariadb11"])
def test_plain_and_checked_parse_agree(server: str) -> None:
    plain = 0
    for path in sorted(GOLDEN.glob(f"{server}/*/binlogs/*")):
        reader = SliceReader(path)
        for event in reader:
            if not isinstance(event, RowsEvent) or event.compressed:
                continue
            kind, version, name, compressed = ROWS_EVENT_KINDS[int(event.header.event_type)]
            body = event.images.buf
            assert isinstance(body, memoryview)
            ctx = reader.decoder.context
            assert ctx is not None
            args = (event.header, body, ctx.post_header_len(event.header.event_type),
                    {event.table_id: event.table_map}, kind, version, compressed, name)
            fast = rows._parse_plain(*args)
            checked = rows._parse(*args)
            assert checked == event
            if fast is not None:
                plain += 1
                assert fast == checked
    assert plain > 50        # the plain path is the one real binlogs take
