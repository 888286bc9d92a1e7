"""Which row builder runs: the compiled core (``binlog_model._speedups``) or the pure-Python reference.

The choice is made once, when this module is first imported, and never changes in that process: a
process never mixes builders halfway through a binlog. ``BINLOG_MODEL_PURE=1`` (any value but "", "0")
forces the reference path. The extension is optional at install time, so being absent is a normal state,
reported with its reason by ``compiled_core()`` and ``binlog-model --version``; code that can use the
builder reads ``speedups`` (the module, or ``None``). Where the compiled CRC-32 runs on this CPU, the
decoder checks event checksums with it (``wire.checksum``; same results as ``zlib.crc32``). ``maker(cls)``
gives the decoder's hot frozen dataclasses a constructor that fills their slots in C. This module imports
nothing of the package, so every layer may import it.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

__all__ = ["PURE_ENV", "compiled_core", "maker", "speedups"]

_T = TypeVar("_T")

PURE_ENV = "BINLOG_MODEL_PURE"
_MODULE = "binlog_model._speedups"
_BUILD_HINT = ("the install needs a C compiler and the Python headers; in a checkout: "
               "python setup.py build_ext --inplace")


def _choose() -> tuple[ModuleType | None, str]:
    """The compiled module (or None) and the status line's text."""
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        return None, f"off ({PURE_ENV}={os.environ[PURE_ENV]})"
    try:
        module = importlib.import_module(_MODULE)
    except ImportError as err:
        # A missing extension, or one that does not load here (a build for another Python, a missing
        # symbol): both mean the reference path, and the reason is worth printing.
        return None, f"off (not built: {err}; {_BUILD_HINT})"
    if getattr(module, "__file__", None) is None:
        # The C sources' folder binlog_model/_speedups/ imports as a namespace package when no
        # built module sits beside it (a source checkout that was never built).
        return None, f"off (not built: only the C sources were found; {_BUILD_HINT})"
    return module, "on"


speedups, _STATUS = _choose()


def maker(cls: type[_T]) -> Callable[..., _T]:
    """A constructor of ``cls``, a frozen dataclass with slots, that takes every ``__init__`` field
    positionally, in order (no defaults): the compiled core's ``Maker``, which fills the slots in one C call
    (a frozen dataclass's own ``__init__`` makes one ``object.__setattr__`` call per field: 1-4 us, paid per
    event by the decoder), or ``cls`` itself when the core is off or ``cls`` does not qualify (a
    ``__post_init__``, a field neither in ``__init__`` nor made by a ``default_factory``, no slots)."""
    build = getattr(speedups, "Maker", None)
    params = getattr(cls, "__dataclass_params__", None)
    if (build is None or params is None or not params.frozen or "__slots__" not in cls.__dict__
            or hasattr(cls, "__post_init__")):
        return cls
    init: list[str] = []
    factories: list[tuple[str, Callable[[], Any]]] = []
    for f in dataclasses.fields(cls):   # type: ignore[arg-type]  # a dataclass, checked above
        if f.init:
            init.append(f.name)
        elif f.default_factory is not dataclasses.MISSING:
            factories.append((f.name, f.default_factory))
        else:
            return cls
    try:
        return build(cls, tuple(init), tuple(factories))
    except TypeError:   # a layout the C side does not fill exactly (it says why): the class's own __init__
        return cls


def compiled_core() -> str:
    """``"on"`` when the compiled row builder is in use, else ``"off (reason)"``."""
    return _STATUS
