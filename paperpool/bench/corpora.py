"""Trace corpora: `trace metrics --format parquet` over a JSON Lines corpus against a
plain loop that parses every line with orjson in one process, `trace export`, and the
DuckDB summary over the exported tables.

The corpus is synth's (`--traces N --events 50`: rollouts in groups of 8, steps and a
run), and, for `trace metrics` against the orjson loop alone, corpora of the same size
that paperpool did not shape for itself (KINDS): synth's in the survey artifact's format
(no schema declared, a warning on every event), the same with a tool_result per trace
that answers no call (a graph rule's warning), and the pool's Who&When corpus, imported
from real logs, repeated to the size. Each repeat runs the orjson loop and the command one after the other, each in a
fresh process and timed inside it (start-up is not the corpus's), so both meet the same
machine; what earlier steps wrote is written out before each (os.sync), so that no step
is timed while the kernel writes another's files. Peak memory is the command's process
plus its workers: the largest worker's peak times the workers (an upper bound; pages
they share are counted for each).
Run as `python -m paperpool.bench.corpora MODE ...` for the child processes.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .measure import Sample, Series, run

EVENTS = 50  # per trace: the rollouts of 30 to 300 events, at the small end where per-trace costs show
KINDS = {
    "synth": "synth's rollouts (schema declared)",
    "artifact": "synth's, in the artifact's format",
    "warned": "the same, a result answering no call",
    "imported": "the Who&When corpus (imported), repeated",
}
IMPORTED = Path("corpora") / "who-and-when.jsonl.gz"  # in the shipped pool


@dataclass
class CorpusRow:
    traces: int
    megabytes: float
    metrics: Series  # trace metrics --format parquet
    plain: Series  # the orjson loop
    export: Series  # (synth's corpus only, as the summary)
    summary: Series  # DuckDB over the exported tables
    events: int
    kind: str = "synth"

    @property
    def ratio(self) -> float:
        return self.metrics.median / self.plain.median


def measure(folder: Path, traces: int, times: int, seed: int = 0) -> CorpusRow:
    path = folder / f"corpus-{traces}.jsonl"
    _synth(folder, path, traces, seed)
    metrics, plain, export, summary = Series(), Series(), Series(), Series()
    events = 0
    for _ in range(times):
        plain.samples.append(_child(folder, "orjson", path))
        metrics.samples.append(_child(folder, "metrics", path))
        tables = folder / "tables"
        export.samples.append(_child(folder, "export", path, tables))
        found = _child(folder, "summary", tables)
        events = json.loads(found.output)["events"]
        summary.samples.append(found)
        _remove(tables)
    row = CorpusRow(traces, path.stat().st_size / 1e6, metrics, plain, export, summary, events)
    path.unlink()
    return row


def measure_kind(folder: Path, kind: str, traces: int, times: int, pool: Path, seed: int = 0) -> CorpusRow | None:
    """`trace metrics` and the orjson loop on a corpus of another KIND; None when the pool
    holds no Who&When corpus to repeat."""
    path = folder / f"corpus-{kind}-{traces}.jsonl"
    if kind == "imported":
        if not (pool / IMPORTED).is_file():
            return None
        _repeated(pool / IMPORTED, path, traces)
    else:
        _synth(folder, path, traces, seed, "artifact")
        if kind == "warned":
            _unanswered(path)
    metrics, plain = Series(), Series()
    for _ in range(times):
        plain.samples.append(_child(folder, "orjson", path))
        metrics.samples.append(_child(folder, "metrics", path))
    events = _events(path)
    row = CorpusRow(traces, path.stat().st_size / 1e6, metrics, plain, Series(), Series(), events, kind)
    path.unlink()
    return row


def _synth(folder: Path, path: Path, traces: int, seed: int, dialect: str = "paperpool") -> None:
    run(
        [
            sys.executable,
            "-m",
            "paperpool.traces.synth",
            "--traces",
            str(traces),
            "--events",
            str(EVENTS),
            "--seed",
            str(seed),
            "--dialect",
            dialect,
            "-o",
            str(path),
        ],
        folder,
    )


def _repeated(source: Path, path: Path, traces: int) -> None:
    """The corpus's lines over and over, each copy with its own trace_id, to `traces` lines."""
    import gzip

    import orjson

    with gzip.open(source, "rb") as handle:
        lines = [orjson.loads(line) for line in handle if line.strip()]
    with path.open("wb") as out:
        for n in range(traces):
            trace = lines[n % len(lines)]
            out.write(orjson.dumps({**trace, "trace_id": f"{trace['trace_id']}-{n // len(lines)}"}) + b"\n")


def _unanswered(path: Path) -> None:
    """Each trace's first tool_result made to answer no call: no `call`, no edge into it,
    a tool no call names (a warning of the graph rules, in the artifact's format)."""
    import orjson

    changed = path.with_suffix(".warned")
    with path.open("rb") as lines, changed.open("wb") as out:
        for line in lines:
            trace = orjson.loads(line)
            result = next((event for event in trace["events"] if event["type"] == "tool_result"), None)
            if result is not None:
                result.pop("call", None)
                result["tool"] = "unknown_tool"
                trace["edges"] = [edge for edge in trace["edges"] if edge["dst"] != result["id"]]
            out.write(orjson.dumps(trace) + b"\n")
    changed.replace(path)


def _events(path: Path) -> int:
    import orjson

    with path.open("rb") as lines:
        return sum(len(orjson.loads(line)["events"]) for line in lines)


def _child(folder: Path, mode: str, *paths: Path) -> Sample:
    _settle()
    done = run([sys.executable, "-m", "paperpool.bench.corpora", mode, *map(str, paths)], folder)
    found = json.loads(done.output.splitlines()[-1])
    return Sample(found["seconds"], found.get("peak_mb"), json.dumps(found))


def _settle() -> None:
    """Write out what the steps before wrote (the corpus, an export's gigabyte of tables)
    before the next is timed: the kernel's writeback would otherwise take a core from it,
    and the command on two cores loses more to that than the loop on one."""
    if hasattr(os, "sync"):
        os.sync()


def _remove(folder: Path) -> None:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


def _peak_mb(jobs: int) -> float | None:
    try:
        import resource
    except ImportError:
        return None
    unit = 1024 * 1024 if sys.platform == "darwin" else 1024
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / unit
    worker = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / unit
    return own + worker * jobs


def child_main(mode: str, paths: list[str]) -> None:
    if mode == "orjson":
        import orjson

        start = time.perf_counter()
        with open(paths[0], "rb") as handle:
            for line in handle:
                orjson.loads(line)
        print(json.dumps({"seconds": time.perf_counter() - start, "peak_mb": _peak_mb(0)}))
        return
    if mode == "summary":
        from ..traces import summary

        start = time.perf_counter()
        found = summary.summarise(Path(paths[0]), [])
        events = sum(row["events"] for row in found.event_types)
        print(json.dumps({"seconds": time.perf_counter() - start, "events": events}))
        return
    from ..traces import mapping, tables, workers

    subdecisions, jobs = mapping.default(), workers.cores()
    with tempfile.TemporaryDirectory(prefix="paperpool-bench-") as scratch:
        start = time.perf_counter()
        if mode == "metrics":
            outcome = tables.metrics_table(paths, "parquet", Path(scratch, "rows.parquet"), subdecisions, print, jobs=jobs)
        else:
            outcome = tables.export_tables([paths[0]], Path(paths[1]), subdecisions, print, jobs=jobs)
        seconds = time.perf_counter() - start
    if outcome.invalid:
        raise SystemExit(f"{paths[0]}: {outcome.invalid} synthetic traces are invalid")
    print(json.dumps({"seconds": seconds, "peak_mb": _peak_mb(jobs)}))


if __name__ == "__main__":
    child_main(sys.argv[1], sys.argv[2:])
