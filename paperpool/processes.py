"""How paperpool's worker processes start: one rule for every pool of them (reading a
large pool's records, measuring a trace corpus).

Not by fork, although it is the quickest: fork copies only the thread that calls it, and
a lock another thread held at that moment stays held in the copy for good, so the worker
hangs or crashes. By the time a pool of workers starts, numpy's, pyarrow's and duckdb's
thread pools often run (and a notebook's or a test runner's own threads). The workers
start from a server process instead, which imports their modules once and is forked
while it runs a single thread; Python 3.14 does the same by default. Without it (not on
Linux or macOS), the platform's default: spawn.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.context import BaseContext


def context(*modules: str) -> BaseContext:
    """The start method's context, its server importing `modules` before any worker starts."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context()
    found = multiprocessing.get_context("forkserver")
    found.set_forkserver_preload(list(dict.fromkeys(modules)))
    return found
