"""The fuzz harness: mutated binlogs and DDL through the decoder, the pipeline and the schema tracker.

Run ``python -m benchmarks.fuzz --help``. The contract it checks, per input: only ``BinlogError``
subclasses escape, time stays within a limit proportional to the input's size, and memory within a small
multiple of it plus a constant. Findings are saved for ``tests/fuzz_regressions/``.
"""
