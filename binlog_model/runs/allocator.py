"""A cap on glibc's malloc arenas for a long ``apply`` run.

Why: glibc gives each new thread its own malloc arena, up to eight per core. ``apply``'s threads (the
committer, delta-rs's runtime) allocate and free large, varied blocks. Memory freed in one arena is not
reused by another, so the process's peak RSS crept up with each commit. On issue 40's benchmark (the 5M
changes binlogs, the table growing to 1.57M rows), ``apply``'s peak was 680 MiB with glibc's default and
612-621 MiB with two arenas; a 1M-change run's peak stayed at 563-605 MiB either way. The run times did
not change beyond this machine's spread.

Only the ``apply`` command calls this, at its start, before its threads exist: the process is the CLI's
own. A program using the library decides for itself (``MALLOC_ARENA_MAX=2`` in its environment does the
same). A ``MALLOC_ARENA_MAX`` already set is left as it is.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

__all__ = ["ARENAS", "limit_malloc_arenas"]

#: malloc arenas for an ``apply`` run
ARENAS = 2
_M_ARENA_MAX = -8       # glibc's mallopt parameter number (malloc.h)


def limit_malloc_arenas(arenas: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas at ``arenas``; False where that is not done (not glibc, or the
    environment sets ``MALLOC_ARENA_MAX``)."""
    if "MALLOC_ARENA_MAX" in os.environ or not _glibc():
        return False
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_ARENA_MAX, arenas))


def _glibc() -> bool:
    """Whether the C library is glibc (musl and macOS have no such arenas)."""
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (ValueError, OSError, AttributeError):
        return False
