"""The shape of the wire package: the ``Event`` union names every event class, modules stay small, and
``NEED_DATA`` stays one object."""

from __future__ import annotations

import dataclasses
import pickle
import typing
from pathlib import Path

import binlog_model.wire as wire
from binlog_model.wire import events
from binlog_model.wire.parsers import EVENT_PARSERS

WIRE = Path(wire.__file__).parent


def test_event_union_names_every_event_class() -> None:
    classes = {getattr(events, name) for name in events.__all__ if name != "Event"}
    assert all(dataclasses.is_dataclass(c) for c in classes)
    assert set(typing.get_args(events.Event)) == classes | {wire.RowsEvent, wire.TableMapEvent}


def test_every_parser_annotates_an_event_of_the_union() -> None:
    members = {c.__name__ for c in typing.get_args(events.Event)}
    for code, parser in EVENT_PARSERS.items():
        returned = typing.get_type_hints(parser)["return"]
        if returned is typing.NoReturn:  # START_ENCRYPTION: always an error
            continue
        assert returned.__name__ in members, (code, parser.__name__)


def test_wire_modules_stay_small_or_say_why() -> None:
    for path in sorted(WIRE.rglob("*.py")):
        text = path.read_text()
        if text.count("\n") > 500:
            # the module docstring must say why (mention "500 lines")
            assert "500 lines" in text.split('"""')[1], f"{path.name} is over 500 lines without a reason"


def test_need_data_is_one_object() -> None:
    assert pickle.loads(pickle.dumps(wire.NEED_DATA)) is wire.NEED_DATA
    assert str(wire.NEED_DATA) == repr(wire.NEED_DATA) == "NEED_DATA"
    assert isinstance(wire.NEED_DATA, wire.NeedData)
