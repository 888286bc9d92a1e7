"""Coverage-guided fuzzing with atheris (libFuzzer) over the same targets: ``pip install atheris``, then

    python -m benchmarks.fuzz.coverage_guided decoder -max_total_time=600 -timeout=10 -rss_limit_mb=2048
    python -m benchmarks.fuzz.coverage_guided pipeline -max_total_time=600 -timeout=10

libFuzzer options follow the target name. The seed corpus is written once to
``/tmp/binlog-model-atheris/<target>/`` from the same seed pools as ``python -m benchmarks.fuzz``
(binlogs cut to about 4 KiB); libFuzzer adds the inputs that reach new code there. The library is
instrumented for coverage. A crash is any exception other than a ``BinlogError`` (and the decoder's
"internal decoder failure", a ``BinlogError`` that wraps a parser bug); libFuzzer's ``-timeout`` is the hang
check and ``-rss_limit_mb`` the memory check. It complements the mutation campaign (which covers the
structure-aware edits and the per-input memory bound); it does not replace it.
"""

from __future__ import annotations

import contextlib
import random
import sys
from pathlib import Path

import atheris

# Everything that imports the library is imported here, so all of it is instrumented for coverage.
with atheris.instrument_imports(include=["binlog_model", "schema_tracker"]):
    from benchmarks.fuzz import mutate
    from benchmarks.fuzz.seeds import load_pools
    from benchmarks.fuzz.targets import cleanup, run_ddl, run_decoder, run_pipeline, setup_catalog
    from binlog_model.errors import BinlogError
    from binlog_model.runs.pipeline import iter_binlog_events  # noqa: F401 - instrument the whole pipeline

CORPUS = Path("/tmp/binlog-model-atheris")


def _check(err: BinlogError) -> None:
    if "internal decoder failure" in str(err):
        raise RuntimeError(f"parser bug wrapped by the decoder: {err}") from err


def _decoder(data: bytes) -> None:
    try:
        run_decoder(data, {"verify_checksum": False, "chunks": [7, 1, 500]})
    except BinlogError as err:
        _check(err)


def _pipeline(data: bytes) -> None:
    try:
        run_pipeline(data, {"verify_checksum": False, "lenient": len(data) % 2 == 0})
    except BinlogError as err:
        _check(err)


def _ddl(data: bytes) -> None:
    with contextlib.suppress(BinlogError):
        run_ddl(data, {"lenient": len(data) % 2 == 0})


TARGETS = {"decoder": _decoder, "pipeline": _pipeline, "ddl": _ddl}


def _seed_corpus(target: str) -> Path:
    folder = CORPUS / target
    if folder.is_dir() and any(folder.iterdir()):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    pools = load_pools()
    rng = random.Random(16)
    items = pools.ddl if target == "ddl" else [mutate.window(rng, b, 4096) for b in pools.binlogs]
    for i, data in enumerate(items):
        (folder / f"seed-{i:05d}").write_bytes(data)
    return folder


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        raise SystemExit(f"usage: python -m benchmarks.fuzz.coverage_guided {{{','.join(TARGETS)}}} "
                         "[libFuzzer options]")
    target = sys.argv[1]
    setup_catalog(load_pools(generated_ddl=0).ddl_setup)
    corpus = _seed_corpus(target)
    try:
        atheris.Setup([sys.argv[0], *sys.argv[2:], str(corpus)], TARGETS[target])
        atheris.Fuzz()
    finally:
        cleanup()


if __name__ == "__main__":
    main()
