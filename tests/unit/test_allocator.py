"""``runs.allocator.limit_malloc_arenas``: glibc's arenas capped for an ``apply`` run, counted by glibc
itself (``malloc_info``'s ``<heap nr=…>`` elements), in a fresh process whose threads each allocate."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from binlog_model.runs.allocator import _glibc
from tests._paths import REPO

# a fresh process: cap the arenas (or not), let 6 threads allocate, then count glibc's heaps
_CHILD = r"""
import ctypes, re, sys, tempfile, threading
from binlog_model.runs.allocator import limit_malloc_arenas
capped = limit_malloc_arenas() if sys.argv[1] == "cap" else None
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
libc.fopen.restype = ctypes.c_void_p
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
libc.fclose.argtypes = [ctypes.c_void_p]
started, done = threading.Barrier(7), threading.Event()
def work():
    block = libc.malloc(1000)       # a new thread's first malloc takes an arena of its own, up to the cap
    started.wait()
    done.wait()
    libc.free(block)
threads = [threading.Thread(target=work) for _ in range(6)]
for t in threads:
    t.start()
started.wait()
with tempfile.NamedTemporaryFile(suffix=".xml") as out:
    f = libc.fopen(out.name.encode(), b"w")
    libc.malloc_info(0, f)
    libc.fclose(f)
    heaps = len(re.findall(r'<heap nr="', open(out.name).read()))
done.set()
for t in threads:
    t.join()
print(capped, heaps)
"""


def _heaps(mode: str, **env: str) -> tuple[str, int]:
    inherited = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    out = subprocess.run([sys.executable, "-c", _CHILD, mode], cwd=REPO, check=True, capture_output=True,
                         text=True, env=inherited | env)
    capped, heaps = out.stdout.split()
    return capped, int(heaps)


@pytest.mark.skipif(not _glibc(), reason="malloc arenas are glibc's")
def test_an_apply_run_uses_two_arenas_where_threads_would_take_more() -> None:
    assert _heaps("leave")[1] > 2       # the threads got arenas of their own
    assert _heaps("cap") == ("True", 2)
    # an arena count the user set in the environment is theirs
    assert _heaps("cap", MALLOC_ARENA_MAX="4") == ("False", 4)
