"""The benchmark runs end to end on a small pool and trace, prints its one table and
the targets, and puts them between the markers of the file --write names."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import REPO

pytestmark = pytest.mark.slow  # real builds, installs or long runs: left out of the quick run, run by scripts/test and CI

TINY = REPO / "tests" / "pools" / "tiny"


def bench(*arguments: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "paperpool.bench", "--root", str(TINY), *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_benchmark_prints_one_table_and_the_targets(tmp_path):
    results = tmp_path / "BENCHMARKS.md"
    results.write_text(
        "# Ours\n\n<!-- paperpool:bench:start -->\nSTALE-BLOCK\n<!-- paperpool:bench:end -->\n\nkept\n", encoding="utf-8"
    )
    done = bench(
        "--sizes",
        "20,200",
        "--events",
        "300",
        "--artifact-events",
        "300",
        "--corpus-traces",
        "40,400",
        "--bounded-groups",
        "10,20",
        "--repeat",
        "2",
        "--write",
        str(results),
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and not line.startswith("| measurement")]
    measured = {(row.split(" | ")[0][2:], row.split(" | ")[1]) for row in rows}
    for command in ("validate", "stats", "gaps", "claims", "readme", "build"):
        for size in ("5 entries, shipped", "20 entries, synthetic", "200 entries, synthetic"):
            assert (command, size) in measured
    growth = [row for row in rows if row.endswith("| 200 / 20 entries |")]
    assert len(growth) == 6
    trace = next(row for row in rows if row.startswith("| trace validate + metrics | 300 events"))
    assert trace.endswith("| / json.load |")
    artifact = next(
        row for row in rows if row.startswith("| trace validate + metrics | 300 events") and "artifact's format" in row
    )
    assert artifact.endswith("| / json.load |") and artifact != trace
    paused = next(row for row in rows if row.startswith("| json.load, garbage collector paused | 300 events"))
    assert paused.endswith("| validate + metrics / this |")
    corpus = next(row for row in rows if row.startswith("| trace metrics --format parquet (a corpus, every core) | 400 traces"))
    assert corpus.endswith("| / the orjson loop |")
    for measurement in ("a loop parsing every line with orjson", "trace export", "trace summary: DuckDB"):
        assert any(row.startswith(f"| {measurement}") and "| 40 traces, 2,000 events" in row for row in rows), measurement
    assert re.search(r"^- (holds|MISSED): trace metrics under 1 GB at 400 traces: [\d,]+ MB$", done.stdout, re.MULTILINE)
    for row in rows:  # median between fastest and slowest
        median, low, high = (float(cell) for cell in row.split(" | ")[2:5])
        assert low <= median <= high
    assert re.search(r"^- (holds|MISSED): validate: 200 / 20 entries at most 12: \d+\.\d$", done.stdout, re.MULTILINE)
    assert re.search(
        r"^- (holds|MISSED): trace validate \+ metrics at most 1\.5 x json\.load at 300 events: ", done.stdout, re.MULTILINE
    )
    for measurement in (
        "trace validate: a trace of 1.5 million problems",
        "build: a corpus line of 500,000 empty events",
        "trace metrics: past the corpus's lines",
        "build: a corpus past its lines",
        "build: an exclude_docs pattern",
    ):
        assert any(row.startswith(f"| {measurement}") for row in rows), measurement
    assert any(row.endswith("| 20 / 10 groups |") for row in rows)
    assert re.search(
        r"^- (holds|MISSED): build with a corpus page of 20 groups at most 2 x its time at 10 \(linear\): ",
        done.stdout,
        re.MULTILINE,
    )
    text = results.read_text(encoding="utf-8")
    assert text.startswith("# Ours\n\n<!-- paperpool:bench:start -->\n\nMeasured on ") and text.endswith(
        "<!-- paperpool:bench:end -->\n\nkept\n"
    )
    assert "STALE-BLOCK" not in text and "| build | 200 entries, synthetic |" in text
    assert "trace metrics against the artifact's validate_trace.py: not measured (give --artifact-validator)." in done.stdout


@pytest.mark.skipif(
    not (REPO.parent / "shared" / "source-artifact" / "example_trace.json").is_file(),
    reason="the survey artifact's example trace (shared/source-artifact) is not beside this clone",
)
def test_the_benchmark_times_trace_metrics_against_a_checker_given(tmp_path):
    """The rows and the target of --artifact-validator. The artifact's own checker is its
    authors' code and not in this repository; the plumbing is tested with a checker of
    ours that reads the file as JSON, beside the artifact's example trace (copied from
    ../shared/source-artifact), as the checker sits beside it in the artifact."""
    checker = tmp_path / "validate_trace.py"
    checker.write_text("import json, sys\njson.load(open(sys.argv[1], encoding='utf-8'))\n", encoding="utf-8")
    (tmp_path / "example_trace.json").write_bytes(
        (REPO.parent / "shared" / "source-artifact" / "example_trace.json").read_bytes()
    )
    done = bench(
        *("--sizes", "0", "--events", "0", "--artifact-events", "200000", "--corpus-traces", "0", "--bounded-groups", "0"),
        *("--repeat", "1", "--artifact-validator", str(checker)),
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    example = [row for row in rows if "the artifact's example_trace.json" in row]
    synthetic = [row for row in rows if "200,000 events" in row and "synth, the artifact's format" in row]
    for found in (example, synthetic):
        assert [row.split(" | ")[0] for row in found] == [
            "| trace metrics FILE (a whole command)",
            "| the artifact's validate_trace.py FILE",
        ]
        assert found[0].endswith("| / validate_trace.py |")
    assert re.search(
        r"^- (holds|MISSED): trace metrics at most the artifact's validate_trace\.py at 200,000 events in its format: "
        r"\d+\.\d\d s / \d+\.\d\d s = \d+\.\d\d x$",
        done.stdout,
        re.MULTILINE,
    )


def test_the_benchmark_refuses_a_file_without_markers_before_measuring(tmp_path):
    results = tmp_path / "BENCHMARKS.md"
    results.write_text("# Ours\n", encoding="utf-8")
    done = bench("--sizes", "abc", "--write", str(results))
    assert (done.returncode, done.stderr.splitlines()[-1]) == (
        1,
        (
            "Error: Invalid value for '--sizes': 'abc': give whole numbers separated by commas, e.g. 1000,10000 "
            "(see python -m paperpool.bench --help)"
        ),
    )
    done = bench("--sizes", "0", "--events", "0", "--corpus-traces", "0", "--write", str(results))
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        f"Error: {results.name}: the generated block needs exactly one line <!-- paperpool:bench:start --> and one line "
        "<!-- paperpool:bench:end --> (found: neither); fix the markers, nothing was changed"
    )
    assert results.read_text(encoding="utf-8") == "# Ours\n"
