"""Work shared between this process and forked copies of it, one per further core.

The work is cut into parts, numbered in a pipe; each process takes the next number when
done with a part, so a process that runs slower (this machine's second core is, by a
third) takes fewer. A copy sends its results back through a pipe, pickled: it is this
process itself, forked a moment ago, and its results never touch a file. The parts a copy
took are done again here if it fails. Linux only: elsewhere fork is unsafe or missing,
and callers do the work in this process.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Callable

from paperpool.files.yamlio import write_all

_NUMBER = 4  # bytes a part's number takes in the pipe; a pipe's writes of this size are whole


def available() -> bool:
    return sys.platform == "linux" and (os.cpu_count() or 1) > 1


def share(
    work: Callable[[list], list], items: list, part_size: int, copies: int = 1, meanwhile: Callable[[], object] | None = None
) -> tuple[list, object]:
    """work(part) for every part of `items`, in order, concatenated; `copies` forked
    processes help. `meanwhile()` runs here first, while the copies start on the parts;
    its result is returned too."""
    part_size = max(part_size, -(-len(items) // 8000))  # the numbers must fit in a pipe's buffer (64 KB)
    parts = [items[start : start + part_size] for start in range(0, len(items), part_size)]
    numbers, writing = os.pipe()
    try:
        write_all(writing, b"".join(number.to_bytes(_NUMBER, "big") for number in range(len(parts))))
    finally:
        os.close(writing)  # read to the end, the pipe says there is no more
    helpers, done = [], {}
    try:
        helpers = [_fork(work, parts, numbers) for _ in range(copies)]
        extra = meanwhile() if meanwhile is not None else None
        done.update(_take(work, parts, numbers))
    finally:
        os.close(numbers)
        for helper in helpers:
            taken = _collect(*helper)
            if taken is not None:
                done.update(taken)
    for number, part in enumerate(parts):  # those of a copy that failed
        if number not in done:
            done[number] = work(part)
    return [result for number in range(len(parts)) for result in done[number]], extra


def _take(work, parts: list[list], numbers: int) -> dict[int, list]:
    done = {}
    while len(number := os.read(numbers, _NUMBER)) == _NUMBER:
        index = int.from_bytes(number, "big")
        done[index] = work(parts[index])
    return done


def _fork(work, parts: list[list], numbers: int) -> tuple[int, int]:
    """A forked copy taking parts: (its pid, the pipe it answers on)."""
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:  # the copy: it never returns into its parent's code, whatever happens
        status = 1
        try:
            os.close(reading)
            write_all(writing, pickle.dumps(_take(work, parts, numbers), pickle.HIGHEST_PROTOCOL))
            status = 0
        finally:
            os._exit(status)
    os.close(writing)
    return pid, reading


def _collect(pid: int, reading: int) -> dict[int, list] | None:
    """What a copy did, or None if it failed."""
    chunks = []
    try:
        while chunk := os.read(reading, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(reading)
        _, status = os.waitpid(pid, 0)
    if status != 0:
        return None
    try:
        return pickle.loads(b"".join(chunks))
    except (pickle.UnpicklingError, EOFError, ValueError):
        return None
