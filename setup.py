"""The optional C extension ``binlog_model._speedups`` (everything else is in pyproject.toml).

Every ``binlog_model/_speedups/*.c`` is compiled into one module with the system compiler; the headers
there are its dependencies. The extension is optional: where it cannot be built (no compiler, no Python
headers, a compile error), setuptools warns and the install goes on without it, and the library runs its
pure-Python path (``binlog_model.compiled_core()`` says why). ``BINLOG_MODEL_BUILD_EXT=0`` skips it;
``BINLOG_MODEL_EXT_REQUIRED=1`` makes a failed build an error (scripts/test.sh, so CI sees compiler errors).
Sanitizer builds pass their flags through ``CFLAGS``/``LDFLAGS`` (docs/fuzzing.md).
"""

from __future__ import annotations

import os
from glob import glob

from setuptools import Extension, setup

SOURCES = sorted(glob("binlog_model/_speedups/*.c"))
HEADERS = sorted(glob("binlog_model/_speedups/*.h"))

ext_modules = []
if SOURCES and os.environ.get("BINLOG_MODEL_BUILD_EXT", "1") != "0":
    ext_modules.append(Extension(
        "binlog_model._speedups",
        sources=SOURCES,
        depends=HEADERS,
        include_dirs=["binlog_model/_speedups"],
        extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter",
                            "-Wno-missing-field-initializers", "-fvisibility=hidden"],
        optional=os.environ.get("BINLOG_MODEL_EXT_REQUIRED") != "1",
    ))

setup(ext_modules=ext_modules)
