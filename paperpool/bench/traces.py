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


@dataclass
class TraceRow:
    events: int
    edges: int
    megabytes: float
    ours: Series
    plain: Series  # json.load

    @property
    def ratio(self) -> float:
        return self.ours.median / self.plain.median


def measure(folder: Path, events: int, times: int, seed: int = 0) -> TraceRow:
    from ..traces import synth

    path = folder / f"trace-{events}.json"
    trace = synth.generate(events, TOPOLOGY, seed=seed)
    edges = len(trace["edges"])
    synth.write(trace, path)
    del trace
    timed = json.loads(_child(path, times, "time").output.splitlines()[-1])
    ours = Series([Sample(seconds, None) for seconds in timed["ours"]])
    plain = Series([Sample(seconds, None) for seconds in timed["json.load"]])
    ours.samples[0].peak_mb = _child(path, 1, "ours").peak_mb
    plain.samples[0].peak_mb = _child(path, 1, "json.load").peak_mb
    row = TraceRow(events, edges, path.stat().st_size / 1e6, ours, plain)
    path.unlink()
    return row


def _child(path: Path, times: int, mode: str) -> Sample:
    return run([sys.executable, "-m", "paperpool.bench.traces", str(path), str(times), mode], path.parent)


def _ours(path: Path, subdecisions):
    from ..traces import metrics, validation

    checked = validation.check_file(path)
    if not checked.valid:
        raise SystemExit(f"{path}: the synthetic trace is not valid: {checked.findings[0].message}")
    return checked, metrics.compute(checked.index, checked.top, subdecisions)


def _plain(path: Path):
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def child_main(path: Path, times: int, mode: str) -> None:
    from ..traces import mapping

    subdecisions = mapping.default()
    if mode != "time":
        _ours(path, subdecisions) if mode == "ours" else _plain(path)
        return
    _ours(path, subdecisions)  # imports and first-use costs are not the file's
    timings: dict[str, list[float]] = {"ours": [], "json.load": []}
    for _ in range(times):
        for name, work in (("json.load", lambda: _plain(path)), ("ours", lambda: _ours(path, subdecisions))):
            gc.collect()
            start = time.perf_counter()
            result = work()
            timings[name].append(time.perf_counter() - start)
            del result  # freeing the objects is not timed, for either
    print(json.dumps(timings))


if __name__ == "__main__":
    child_main(Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
