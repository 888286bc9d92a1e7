"""Runs: one runner over an ``EventSource`` (files, a byte range, a replication connection), with the
commit policy and the state (schema history, position, one GtidSet, the output's committed length).

``source``: the ``EventSource`` protocol and its boundary markers; ``transactions``: the one detector of
units of work, the boundary tracker every source wraps its events in, and the one GTID recorder;
``runner``: the runner; ``pipeline``: the library's one-call entry points; ``incremental``: ``events
--state`` runs.
"""
