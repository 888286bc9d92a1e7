"""Which row builder runs: the compiled core (``binlog_model._speedups``) or the pure-Python reference.

The choice is made once, when this module is first imported, and never changes in that process: a
process never mixes builders halfway through a binlog. ``BINLOG_MODEL_PURE=1`` (any value but "", "0")
forces the reference path. The extension is optional at install time, so being absent is a normal state,
reported with its reason by ``compiled_core()`` and ``binlog-model --version``; code that can use the
builder reads ``speedups`` (the module, or ``None``). Where the compiled CRC-32 runs on this CPU, the
decoder checks event checksums with it (``wire.decoder.use_crc32``; same results as ``zlib.crc32``).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = ["PURE_ENV", "compiled_core", "speedups"]

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
if speedups is not None and getattr(speedups, "CRC32_ACCELERATED", False):
    # the decoder's event checksums: zlib.crc32's results, ~3x faster (folded with PCLMULQDQ)
    from binlog_model.wire.decoder import use_crc32
    use_crc32(speedups.crc32)


def compiled_core() -> str:
    """``"on"`` when the compiled row builder is in use, else ``"off (reason)"``."""
    return _STATUS
