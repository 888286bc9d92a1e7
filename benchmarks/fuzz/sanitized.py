"""The compiled core built with AddressSanitizer + UBSan, and the environment to run Python over it.

    python -m benchmarks.fuzz.sanitized build [--out DIR] [--cc auto|gcc|clang]
    python -m benchmarks.fuzz.sanitized env [--out DIR]          # shell exports, for running by hand
    python -m benchmarks.fuzz.sanitized run [--out DIR] -- python -m benchmarks.fuzz.native json ...

Strategy: ``setup.py build_ext`` into ``DIR/lib`` (never in place, so the normal build stays as it is),
with ``-fsanitize=address,undefined -fno-sanitize-recover=undefined`` (UB aborts, so nothing is reported
and forgotten). The interpreter is not instrumented, so the ASan runtime must be the first library loaded:
``LD_PRELOAD``. Two toolchains:

- clang (any ``clang``/``clang-NN`` on PATH) plus atheris: also ``-fsanitize=fuzzer-no-link``, so libFuzzer
  (atheris's ``asan_with_fuzzer.so``, preloaded) sees the C code's coverage: coverage-guided fuzzing.
- gcc (always there): the same sanitizers with gcc's ``libasan.so`` preloaded; no C coverage for
  libFuzzer, so the seeded mutation loop of ``benchmarks.fuzz.native`` drives it.

``PYTHONMALLOC=malloc`` makes every Python object a malloc block ASan can see. Leaks are checked by
``native.py`` with tracemalloc around each sampled C call; LeakSanitizer is off unless ``--lsan``
(on CPython 3.11 it reports objects only frames reference, and at exit the interpreter's start-up
blocks). ``BINLOG_MODEL_FUZZ_SPEEDUPS`` tells ``benchmarks.fuzz.native`` where the sanitized module is;
it refuses to run on any other build.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = Path("/tmp/binlog-model-asan")
SANITIZE = "-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"


def find_clang() -> str | None:
    for name in ["clang", *(f"clang-{v}" for v in range(22, 13, -1))]:
        path = shutil.which(name)
        if path:
            return path
    return None


def _atheris_runtime() -> Path | None:
    try:
        import atheris
    except ImportError:
        return None
    path = Path(atheris.path()) / "asan_with_fuzzer.so"
    return path if path.is_file() else None


def build(out: Path = DEFAULT_OUT, cc: str = "auto") -> dict[str, str]:
    """Build the sanitized extension into ``out/lib``; return (and save) what was built."""
    clang = find_clang() if cc in ("auto", "clang") else None
    if cc == "clang" and (clang is None or _atheris_runtime() is None):
        raise SystemExit("--cc clang needs a clang on PATH and atheris (its ASan+libFuzzer runtime)")
    use_clang = clang is not None and _atheris_runtime() is not None
    compiler = clang if use_clang else (shutil.which("gcc") or "gcc")
    assert compiler is not None
    cflags = SANITIZE + (" -fsanitize=fuzzer-no-link" if use_clang else "")
    # clang: the runtime comes only from the preloaded atheris library, so the link must not name one;
    # setuptools repeats CFLAGS on the link line, hence a linker wrapper that drops the -fsanitize flags.
    # gcc links its shared libasan/libubsan as ordinary dependencies.
    shutil.rmtree(out / "lib", ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    linker = f"{compiler} -shared"
    if use_clang:
        wrapper = out / "link-without-sanitizer-runtime.sh"
        # each original argument is shifted off the front and, unless a -fsanitize flag, appended again
        wrapper.write_text('#!/bin/sh\nfor a in "$@"; do\n'
                           '  case "$a" in -fsanitize*) ;; *) set -- "$@" "$a" ;; esac\n'
                           f'  shift\ndone\nexec {compiler} "$@"\n')
        wrapper.chmod(0o755)
        linker = f"{wrapper} -shared"
    env = {**os.environ, "CC": compiler, "LDSHARED": linker, "CFLAGS": cflags,
           "LDFLAGS": "" if use_clang else "-fsanitize=address,undefined", "BINLOG_MODEL_EXT_REQUIRED": "1"}
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--force", "--build-lib", str(out / "lib"),
                    "--build-temp", str(out / "temp")], cwd=REPO, env=env, check=True)
    built = sorted((out / "lib" / "binlog_model").glob("_speedups.*.so"))
    if not built:
        raise SystemExit(f"no sanitized module under {out / 'lib'}")
    if use_clang:
        preload = str(_atheris_runtime())
    else:
        preload = subprocess.run([compiler, "-print-file-name=libasan.so"], capture_output=True, text=True,
                                 check=True).stdout.strip()
    if not Path(preload).is_file():
        raise SystemExit(f"no ASan runtime to preload ({preload!r}): gcc's comes with libasan (libgcc-*-dev)")
    info = {"toolchain": "clang+libFuzzer" if use_clang else "gcc", "compiler": compiler, "cflags": cflags,
            "module": str(built[0]), "preload": preload}
    (out / "build.json").write_text(json.dumps(info, indent=1))
    return info


def run_env(out: Path = DEFAULT_OUT, base: dict[str, str] | None = None,
            lsan: bool = False) -> dict[str, str]:
    """The environment for a Python process over the sanitized build in ``out`` (built first). ``lsan``:
    LeakSanitizer on (for ``native --lsan``; its exit-time report then lists the interpreter's own
    start-up blocks too)."""
    info_file = out / "build.json"
    if not info_file.is_file():
        raise SystemExit(f"no sanitized build in {out}: run `python -m benchmarks.fuzz.sanitized build`")
    info = json.loads(info_file.read_text())
    env = dict(os.environ if base is None else base)
    env.update(
        LD_PRELOAD=info["preload"],
        PYTHONMALLOC="malloc",
        ASAN_OPTIONS=f"detect_leaks={int(lsan)}:abort_on_error=0:halt_on_error=1:allocator_may_return_null=0:"
                     "print_summary=1:symbolize=1:handle_segv=1",
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1",
        BINLOG_MODEL_FUZZ_SPEEDUPS=str(Path(info["module"]).parent),
        BINLOG_MODEL_FUZZ_TOOLCHAIN=info["toolchain"],
        PYTHONPATH=str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""),
    )
    env.pop("BINLOG_MODEL_PURE", None)
    return env


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.fuzz.sanitized", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=("build", "env", "run"))
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--cc", choices=("auto", "gcc", "clang"), default="auto")
    p.add_argument("--lsan", action="store_true", help="run: LeakSanitizer on (with native --lsan)")
    argv = sys.argv[1:] if argv is None else argv
    command = argv[argv.index("--") + 1:] if "--" in argv else []
    args = p.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    if args.action == "build":
        print(json.dumps(build(args.out, args.cc)))
        return 0
    env = run_env(args.out, lsan=args.lsan)
    if args.action == "env":
        for key in ("LD_PRELOAD", "PYTHONMALLOC", "ASAN_OPTIONS", "UBSAN_OPTIONS",
                    "BINLOG_MODEL_FUZZ_SPEEDUPS", "BINLOG_MODEL_FUZZ_TOOLCHAIN", "PYTHONPATH"):
            print(f"export {key}='{env[key]}'")
        return 0
    command = command or [sys.executable, "-m", "benchmarks.fuzz.native", "json"]
    if command[0] == "python":
        command[0] = sys.executable
    return subprocess.run(command, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
