"""How fast trace validation and metrics are, against a plain json.load of the same file.

    .venv/bin/python benchmarks/trace_bench.py [--sizes 10000,200000,1000000] [--topology hierarchical] [--repeat 3]

For each size a synthetic trace is written (paperpool.traces.synth, seed 0, about one
edge per event), then a fresh Python process per size runs, in turn, `json.load` of the
file and the library calls behind `paperpool trace validate` and `paperpool trace
metrics`: validation.check_file (parse, JSON Schema, graph rules) and metrics.compute,
the metrics command's whole work. Each is run --repeat times and the fastest kept, both
in that one process, so that they are measured side by side. Peak memory (ru_maxrss) is
read from two more processes per size: one that only validates and measures, one that
only runs json.load, for comparison.

Targets (issue 5): validate + metrics within 1.5 times json.load, and a million events
validated in under 10 s and 2 GB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

# Runs in a child process: argv is the trace file, the number of repetitions, and what
# to run: "time" (both, side by side), "ours" or "json.load" (once, for the peak memory).
CHILD = r"""
import gc, json, resource, sys, time
from pathlib import Path
from paperpool.traces import mapping, metrics, validation

path, repeat, mode = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
subdecisions = mapping.default()
if mode != "time":
    if mode == "ours":
        checked = validation.check_file(path)
        metrics.compute(checked.index, checked.top, subdecisions)
    else:
        with path.open(encoding="utf-8") as handle:
            json.load(handle)
    print(json.dumps({"peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
    sys.exit(0)
best = {"json.load": float("inf"), "validate": float("inf"), "validate+metrics": float("inf")}
for _ in range(repeat):
    start = time.perf_counter()
    with path.open(encoding="utf-8") as handle:
        document = json.load(handle)
    best["json.load"] = min(best["json.load"], time.perf_counter() - start)
    del document
    gc.collect()
    start = time.perf_counter()
    checked = validation.check_file(path)
    validated = time.perf_counter()
    result = metrics.compute(checked.index, checked.top, subdecisions)
    done = time.perf_counter()
    assert checked.valid, checked.findings[:3]
    best["validate"] = min(best["validate"], validated - start)
    best["validate+metrics"] = min(best["validate+metrics"], done - start)
    del checked, result
    gc.collect()
print(json.dumps(best))
"""


def measure(path: Path, repeat: int, mode: str) -> dict:
    output = subprocess.run([sys.executable, "-c", CHILD, str(path), str(repeat), mode], check=True,
                            capture_output=True, text=True, cwd=REPO).stdout
    return json.loads(output)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,200000,1000000")
    parser.add_argument("--topology", default="hierarchical")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from paperpool.traces import synth

    print(f"{'events':>10} {'edges':>10} {'file MB':>8} {'json.load s':>12} {'validate s':>11} {'+ metrics s':>12} "
          f"{'ratio':>6} {'peak MB':>8} {'json.load peak MB':>18}")
    with tempfile.TemporaryDirectory() as folder:
        for size in (int(part) for part in args.sizes.split(",")):
            path = Path(folder) / f"trace-{size}.json"
            trace = synth.generate(size, args.topology, seed=0)
            edges = len(trace["edges"])
            synth.write(trace, path)
            del trace
            best = measure(path, args.repeat, "time")
            ours, plain = measure(path, 1, "ours")["peak_mb"], measure(path, 1, "json.load")["peak_mb"]
            ratio = best["validate+metrics"] / best["json.load"]
            print(f"{size:>10,} {edges:>10,} {path.stat().st_size / 1e6:>8.1f} {best['json.load']:>12.2f} "
                  f"{best['validate']:>11.2f} {best['validate+metrics']:>12.2f} {ratio:>6.2f} {ours:>8.0f} {plain:>18.0f}", flush=True)


if __name__ == "__main__":
    main()
