"""``binlog_model.compiled.maker``: the compiled constructor of the decoder's frozen dataclasses makes the
same instances as the classes themselves, refuses what it cannot fill exactly, and falls back to the class."""

from __future__ import annotations

import dataclasses
import gc
import sys
from typing import Any

import pytest

from binlog_model import compiled
from binlog_model.compiled import maker, speedups
from binlog_model.position import EventPosition
from binlog_model.wire.header import EventHeader, EventType
from binlog_model.wire.rows import RowImages, RowsEvent
from binlog_model.wire.table_map import TableMapEvent

HEADER = EventHeader(1_700_000_000, EventType.WRITE_ROWS_EVENT, 7, 120, 4_567, 0, 4_447, "binlog.000042",
                     None)
TABLE_MAP = TableMapEvent(HEADER, 88, 1, "db", "t", (3, 15), (0, 80), (False, True), (False, None),
                          column_names=("id", "name"), primary_key=(0,))
IMAGES = RowImages(memoryview(b"\x00\x01\x00\x00\x00\x01a"), 0, 7, b"\x03", None, "WRITE_ROWS_EVENT")

# Each class the decoder makes per event, with the values of one instance (every __init__ field in order).
CASES: list[tuple[type, tuple[Any, ...]]] = [
    (EventHeader, tuple(getattr(HEADER, f.name) for f in dataclasses.fields(EventHeader))),
    (EventHeader, (5, 999, 0, 19, 0, 1, 0, None, 3)),     # an unknown type code, inside a payload
    (EventPosition, ("binlog.000042", 4_447)),
    (RowImages, (memoryview(b"\x00\x01"), 0, 2, b"\x01", b"\x01", "UPDATE_ROWS_EVENT")),
    (RowsEvent, (HEADER, "insert", 2, 88, 1, None, TABLE_MAP, 2, (True, True), None, IMAGES, False)),
    (TableMapEvent, tuple(getattr(TABLE_MAP, f.name) for f in dataclasses.fields(TableMapEvent))),
]

compiled_only = pytest.mark.skipif(getattr(speedups, "Maker", None) is None,
                                   reason="the compiled core is off")


@compiled_only
@pytest.mark.parametrize(("cls", "values"), CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_a_made_instance_equals_the_class_s_own(cls: type, values: tuple[Any, ...]) -> None:
    assert speedups is not None
    make: Any = maker(cls)
    assert type(make) is speedups.Maker
    made, own = make(*values), cls(*values)
    assert type(made) is cls
    assert made == own and repr(made) == repr(own)
    for f in dataclasses.fields(cls):
        assert getattr(made, f.name) == getattr(own, f.name), f.name
    if cls.__hash__ is not None and cls is not RowsEvent and cls is not TableMapEvent:   # (tuples of views)
        assert hash(made) == hash(own)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.__setattr__(dataclasses.fields(cls)[0].name, None)


@compiled_only
def test_a_default_factory_field_gets_a_new_value_per_instance() -> None:
    make = maker(RowsEvent)
    values = CASES[4][1]
    first, second = make(*values), make(*values)
    assert first._rows == [] and first._rows is not second._rows
    assert first.rows == second.rows == RowsEvent(*values).rows      # the lazy decode works on either


@compiled_only
def test_values_are_held_and_released() -> None:
    value = "a-file-name-held-only-here-" + str(id(object()))
    before = sys.getrefcount(value)
    made = maker(EventPosition)(value, 4)
    assert sys.getrefcount(value) == before + 1
    assert value in gc.get_referents(made)       # the collector sees the slots (cycles are found)
    del made
    assert sys.getrefcount(value) == before


@compiled_only
def test_wrong_calls_raise_type_error() -> None:
    make = maker(EventPosition)
    with pytest.raises(TypeError, match="takes 2 positional values"):
        make("binlog.000001")
    with pytest.raises(TypeError):
        make("binlog.000001", 4, 5)
    with pytest.raises(TypeError):
        make(file="binlog.000001", offset=4)


@compiled_only
def test_the_c_side_refuses_what_it_cannot_fill_exactly() -> None:
    assert speedups is not None
    build = speedups.Maker
    with pytest.raises(TypeError, match="every slot"):
        build(EventPosition, ("file",), ())                   # a slot left empty
    with pytest.raises(TypeError):
        build(EventPosition, ("file", "file"), ())            # a slot named twice
    with pytest.raises(TypeError):
        build(EventPosition, ("file", "sort_key"), ())        # not a slot

    @dataclasses.dataclass(frozen=True)
    class WithDict:
        a: int

    with pytest.raises(TypeError, match="slotted"):
        build(WithDict, ("a",), ())


def test_classes_that_do_not_qualify_get_their_own_constructor() -> None:
    @dataclasses.dataclass(slots=True)
    class Mutable:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            if self.a < 0:
                raise ValueError("negative")

    @dataclasses.dataclass(frozen=True, slots=True)
    class Fixed:
        a: int
        b: int = dataclasses.field(default=0, init=False)

    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    for cls in (Mutable, Checked, Fixed, NoSlots):
        assert maker(cls) is cls


def test_without_the_compiled_core_maker_is_the_class(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compiled, "speedups", None)
    for cls, values in CASES:
        make: Any = maker(cls)
        assert make is cls
        assert make(*values) == cls(*values)


def test_the_positional_call_sites_match_the_fields_order() -> None:
    """The decoder calls these makers with every field positionally (``decoder._decode``,
    ``rows._parse_plain``, ``assembler._position``): a field added or moved must move there too."""
    def names(cls: type) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    assert names(EventHeader) == ["timestamp", "event_type", "server_id", "event_size", "log_pos", "flags",
                                  "offset", "file", "inner_index"]
    assert names(RowsEvent) == ["header", "kind", "version", "table_id", "flags", "extra_data", "table_map",
                                "column_count", "columns_present", "columns_present_after", "images",
                                "compressed", "_rows"]
    assert names(RowImages) == ["buf", "pos", "end", "present", "present_after", "name"]
    assert names(EventPosition) == ["file", "offset"]
    assert names(TableMapEvent)[0] == "header"      # with_header: the header, then the rest in order
