"""Row images decode on first access to ``RowsEvent.rows``, with the error the eager decoder raised; the
diagnostic mode (``dump``) still shows a rows event whose images do not decode raw, with that error.

Input: the HAND-MUTATED regression file of tests/fuzz_regressions (a WRITE_ROWS whose columns-present
bitmap is all zero: zero-byte images that can never end)."""

from __future__ import annotations

import pytest

from binlog_model.errors import DecodeError
from binlog_model.wire import BinlogDecoder, UndecodableEvent
from binlog_model.wire.decoder import NEED_DATA
from binlog_model.wire.rows import RowsEvent
from tests._paths import REPO

DATA = (REPO / "tests" / "fuzz_regressions" / "rows-no-column-present.hand-mutated.bin").read_bytes()


def _events(**options: object) -> list[object]:
    decoder = BinlogDecoder(file="x.bin", **options)  # type: ignore[arg-type]
    decoder.receive_data(DATA)
    decoder.receive_data(b"")
    out = []
    while (event := decoder.next_event()) is not NEED_DATA:
        out.append(event)
    return out


def test_a_bad_image_fails_on_first_access_with_its_location() -> None:
    rows_events = [e for e in _events() if isinstance(e, RowsEvent)]
    assert rows_events
    with pytest.raises(DecodeError, match="row image is empty") as info:
        for e in rows_events:
            e.rows  # noqa: B018
    bad = next(e for e in rows_events if e.header.offset == info.value.offset)
    assert info.value.file == "x.bin" and info.value.event_type == "WRITE_ROWS_EVENT_V1"
    assert bad.kind == "insert"


def test_dump_mode_shows_the_bad_rows_event_raw_with_that_error() -> None:
    raw = [e for e in _events(raw_undecodable=True) if isinstance(e, UndecodableEvent)]
    assert len(raw) == 1
    assert isinstance(raw[0].error, DecodeError) and "row image is empty" in str(raw[0].error)
