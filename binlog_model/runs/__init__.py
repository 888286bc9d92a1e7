"""Runs: one runner over an ``EventSource`` (files, a byte range, a replication connection), with the
commit policy and the state (schema history, position, one GtidSet, the output's committed length).

``source``: the ``EventSource`` protocol and its boundary markers; ``runner``: the runner; ``pipeline``:
the library's one-call entry points; ``incremental``: ``events --state`` runs.
"""
