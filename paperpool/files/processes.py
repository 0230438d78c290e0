"""How paperpool's worker processes start: one rule for every pool of them (reading a
large pool's records, measuring a trace corpus).

By fork where there is one: the workers start at once, with the modules already imported.
A forked worker copies only the thread that forked, so a lock another thread held at
that moment stays held in the copy: the risk is in a process whose libraries run busy
threads (a test runner's, once, in CI), not in a command that has just started. A corpus
of one batch is measured in the command's own process, with no worker at all. Not from a server process (forkserver,
Python 3.14's default): signalled alone while its workers started, a command left the
server and a worker running for good, holding its output open (a review saw it in 4 runs
of 10). Without fork (Windows), the platform's default: spawn.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable
from multiprocessing.context import BaseContext

_PR_SET_PDEATHSIG = 1  # prctl(2)


def context() -> BaseContext:
    """The start method's context for a pool of workers."""
    if "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def start_worker(parent: int, setup: Callable | None = None, *settings) -> None:
    """A worker's first step (a pool's initializer: initargs=(os.getpid(), setup, *settings)):
    end with the command, then set up. A command killed with SIGKILL (timeout -s KILL, the
    out-of-memory killer) runs no handler that could stop its workers, and they stayed for
    good, holding its standard output open; on Linux the kernel ends them when it ends.
    Where the command is gone already (it ended while this one started), end now."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)
    if setup is not None:
        setup(*settings)
