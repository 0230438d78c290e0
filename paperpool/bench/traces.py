"""Trace validation and metrics against a plain json.load of the same file.

The work measured is that of `paperpool trace metrics FILE`: read and validate the
trace (JSON Schema, then the graph rules), then compute its metrics. It is timed inside
one process, alternating with `json.load` of the same file, so both meet the same
machine state; peak memory is read from two further processes, one doing each alone.
Run as `python -m paperpool.bench.traces FILE REPEAT MODE` for the child processes.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .measure import Sample, Series, run

TOPOLOGY = "hierarchical"
# how a trace written in the survey artifact's format is named in the table (synth --dialect artifact)
ARTIFACT = "in the artifact's format (no schema declared: 2 kinds of warning, on every event)"


@dataclass
class TraceRow:
    events: int
    edges: int
    megabytes: float
    ours: Series
    plain: Series  # json.load
    paused: Series  # json.load with the garbage collector paused, as paperpool parses
    dialect: str = "paperpool"  # or "artifact": synth's trace as the survey artifact's format allows

    @property
    def ratio(self) -> float:
        return self.ours.median / self.plain.median


def measure(folder: Path, events: int, times: int, seed: int = 0, dialect: str = "paperpool") -> TraceRow:
    path = folder / f"trace-{dialect}-{events}.json"
    # written by another process: a child's peak memory, as the system reports it, starts
    # from the size of the process that started it, and a million events take 1.3 GB
    run(
        [
            sys.executable,
            "-m",
            "paperpool.traces.synth",
            "--events",
            str(events),
            "--topology",
            TOPOLOGY,
            "--seed",
            str(seed),
            "--dialect",
            dialect,
            "-o",
            str(path),
        ],
        folder,
    )
    timed = json.loads(_child(path, times, "time").output.splitlines()[-1])
    ours = Series([Sample(seconds, None) for seconds in timed["ours"]])
    plain = Series([Sample(seconds, None) for seconds in timed["json.load"]])
    paused = Series([Sample(seconds, None) for seconds in timed["json.load, collector paused"]])
    alone = json.loads(_child(path, 1, "ours").output.splitlines()[-1])
    ours.samples[0].peak_mb = _with_helper(alone["peaks"])
    plain.samples[0].peak_mb = _child(path, 1, "json.load").peak_mb
    row = TraceRow(events, alone["edges"], path.stat().st_size / 1e6, ours, plain, paused, dialect)
    path.unlink()
    return row


def _child(path: Path, times: int, mode: str) -> Sample:
    return run([sys.executable, "-m", "paperpool.bench.traces", str(path), str(times), mode], path.parent)


def _with_helper(peaks: dict | None) -> float | None:
    """The validating process's peak memory plus that of the process it forks to resolve
    the links (traces/links.py), where wait4 gives only the larger of the two. The pages
    the two share (the file's bytes) are counted twice, so this is an upper bound."""
    return None if peaks is None else peaks["self"] + peaks["helper"]


def _ours(path: Path, subdecisions):
    from ..traces import metrics, validation

    checked = validation.check_file(path)
    if not checked.valid:
        raise SystemExit(f"{path}: the synthetic trace is not valid: {checked.findings[0].message}")
    return checked, metrics.compute(checked.index, checked.top, subdecisions)


def _plain(path: Path):
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def _paused(path: Path):
    gc.disable()
    try:
        return _plain(path)
    finally:
        gc.enable()


def child_main(path: Path, times: int, mode: str) -> None:
    from ..traces import mapping

    subdecisions = mapping.default()
    if mode == "json.load":
        _plain(path)
        return
    if mode == "ours":
        checked, _ = _ours(path, subdecisions)
        print(json.dumps({"edges": checked.index.n_edges, "peaks": _peaks()}))
        return
    _ours(path, subdecisions)  # imports and first-use costs are not the file's
    runs = (
        ("json.load", lambda: _plain(path)),
        ("ours", lambda: _ours(path, subdecisions)),
        ("json.load, collector paused", lambda: _paused(path)),
    )
    timings: dict[str, list[float]] = {name: [] for name, _ in runs}
    for _ in range(times):
        for name, work in runs:
            gc.collect()
            start = time.perf_counter()
            result = work()
            timings[name].append(time.perf_counter() - start)
            del result  # freeing the objects is not timed, for either
    print(json.dumps(timings))


def _peaks() -> dict | None:
    """This process's peak memory and its children's, in MB, where the system reports it."""
    try:
        import resource
    except ImportError:
        return None
    unit = 1024 * 1024 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB on Linux
    return {
        "self": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / unit,
        "helper": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / unit,
    }


if __name__ == "__main__":
    child_main(Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
