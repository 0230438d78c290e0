"""Running one function over a corpus's batches on every core, results in input order.

A few batches per worker are in flight at a time, never the whole corpus: the input is a
stream, and Pool.imap would read all of it ahead into its queue. Each worker is set up
once (its mapping, its columns) by `setup`, not once per batch.
"""

from __future__ import annotations

import itertools
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from paperpool.files import processes

AHEAD = 2  # batches in flight per worker: one computing, one waiting in its queue


def cores() -> int:
    """The cores this process may run on (a container's or taskset's limit, not the machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class WorkerLost(Exception):
    """A batch whose work ran out of memory, or whose worker was killed (by the system,
    when the memory ran out): the caller says which input, once, and stops."""

    def __init__(self, batch, killed: bool):
        super().__init__("killed" if killed else "out of memory")
        self.batch, self.killed = batch, killed


def ordered_map(work: Callable, batches: Iterable, workers: int, setup: Callable, *settings) -> Iterator:
    """work(batch) for every batch, in order; with one worker, or one batch, in this
    process. WorkerLost when a batch's work runs out of memory or its worker is killed."""
    batches = iter(batches)
    first = list(itertools.islice(batches, 2))
    batches = itertools.chain(first, batches)
    if workers <= 1 or len(first) < 2:
        setup(*settings)
        for batch in batches:
            try:
                yield work(batch)
            except MemoryError:
                raise WorkerLost(batch, killed=False) from None
        return
    started = (os.getpid(), setup, *settings)
    with ProcessPoolExecutor(
        workers, mp_context=processes.context(), initializer=processes.start_worker, initargs=started
    ) as pool:
        pending: deque = deque()
        try:
            for batch in batches:
                _submit(pool, work, batch, pending)
                if len(pending) >= workers * AHEAD:
                    yield _result(*pending.popleft())
            while pending:
                yield _result(*pending.popleft())
        finally:  # stopped early (--strict, an error): what is queued is not run
            for future, _ in pending:
                future.cancel()


def _submit(pool: ProcessPoolExecutor, work: Callable, batch, pending: deque) -> None:
    """The batch handed to the pool. A pool a killed worker broke refuses it: the first
    batch in flight is named (every one of them fails alike), else this one."""
    try:
        pending.append((pool.submit(work, batch), batch))
    except BrokenProcessPool:
        raise WorkerLost(pending[0][1] if pending else batch, killed=True) from None


def _result(future: Future, batch):
    """The batch's result; WorkerLost as _submit says."""
    try:
        return future.result()
    except MemoryError:
        raise WorkerLost(batch, killed=False) from None
    except BrokenProcessPool:
        raise WorkerLost(batch, killed=True) from None
