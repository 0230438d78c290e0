"""Timing a command as a user runs it: a fresh process each time, its wall-clock time
and its peak memory (with that of the processes it starts, such as the site engine)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from paperpool.files.problems import PaperpoolError


@dataclass
class Sample:
    seconds: float
    peak_mb: float | None  # None where the system does not report it
    output: str = ""


@dataclass
class Series:
    """Several samples of one measurement."""

    samples: list[Sample] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(sample.seconds for sample in self.samples)

    @property
    def low(self) -> float:
        return min(sample.seconds for sample in self.samples)

    @property
    def high(self) -> float:
        return max(sample.seconds for sample in self.samples)

    @property
    def peak_mb(self) -> float | None:
        peaks = [sample.peak_mb for sample in self.samples if sample.peak_mb is not None]
        return max(peaks) if peaks else None


def repeat(take: Callable[[], Sample], times: int) -> Series:
    return Series([take() for _ in range(times)])


def run(command: list[str], cwd: Path, expect: int | None = 0) -> Sample:
    """Run a command to its end; PaperpoolError with its complaint when it fails (ends
    with another status than `expect`: a refused input's case expects 1; None: either,
    where the pool's registry decides, a title's length limit say)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if hasattr(os, "wait4"):
        # wait4 reports this process's own peak memory, with its waited-for children's,
        # where getrusage would report the largest of every child the benchmark ran
        output, errors = _drain(process)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        peak = usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)  # bytes on macOS, KiB on Linux
    else:
        output, errors = process.communicate()
        seconds, peak = time.perf_counter() - start, None
    if expect is not None and process.returncode != expect:
        last = (errors or output).strip().splitlines()[-1:] or ["no output"]
        raise PaperpoolError(f"benchmark step `{' '.join(command[2:])}` failed in {cwd} (exit {process.returncode}): {last[0]}")
    return Sample(seconds, peak, output)


def _drain(process: subprocess.Popen) -> tuple[str, str]:
    """Read both pipes to their end without reaping the process (communicate would)."""
    import threading

    errors: list[str] = []
    reader = threading.Thread(target=lambda: errors.append(process.stderr.read()))
    reader.start()
    output = process.stdout.read()
    reader.join()
    process.stdout.close()
    process.stderr.close()
    return output, errors[0]


def paperpool(root: Path, *arguments: str) -> list[str]:
    """The command line of a paperpool command on the pool at `root`."""
    return [sys.executable, "-m", "paperpool", "--root", str(root), *arguments]
