"""Running one function over a corpus's batches on every core, results in input order.

A few batches per worker are in flight at a time, never the whole corpus: the input is a
stream, and Pool.imap would read all of it ahead into its queue. Each worker is set up
once (its mapping, its columns) by `setup`, not once per batch.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor

AHEAD = 2  # batches in flight per worker: one computing, one waiting in its queue


def cores() -> int:
    """The cores this process may run on (a container's or taskset's limit, not the machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def ordered_map(work: Callable, batches: Iterable, workers: int, setup: Callable, *settings) -> Iterator:
    """work(batch) for every batch, in order; with one worker, in this process."""
    if workers <= 1:
        setup(*settings)
        for batch in batches:
            yield work(batch)
        return
    with ProcessPoolExecutor(workers, initializer=setup, initargs=settings) as pool:
        pending: deque = deque()
        try:
            for batch in batches:
                pending.append(pool.submit(work, batch))
                if len(pending) >= workers * AHEAD:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:  # stopped early (--strict, an error): what is queued is not run
            for future in pending:
                future.cancel()
