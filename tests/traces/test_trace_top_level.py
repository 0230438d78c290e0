"""A trace's top level (all but its events and edges) is bounded: read whole and once more
for keys given twice, it takes far more than its size, so past 16 MB it is refused from
its bytes before any of it is parsed, however the file is read (traces/source.py). The
files are made at test time: the hostile corpus can only grow JSON with a hole or text
appended after its end, which leaves no valid trace."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from paperpool.traces import synth, validation
from paperpool.traces.source import MAX_TOP_BYTES

from ..conftest import REPO

EXAMPLE = REPO / "traces" / "centralized-parallel-readers.json"
WAYS = {
    "whole": {"apart_above": 2**62},
    "apart": {"apart_above": 0},
    "chunked": {"apart_above": 2**62, "chunk_above": 0},
    "chunked apart": {"apart_above": 0, "chunk_above": 0},
}
FIX = "over the limit of 16 MB; keep large data in events, or in a file of its own"


def _padded(path: Path, items: int) -> None:
    """The example trace with an x_pad of `items` small objects (10 bytes each), as the review made it."""
    trace = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**trace, "x_pad": [{"a": 0}] * items}), encoding="utf-8")


@pytest.mark.slow
def test_a_large_field_beside_the_events_is_refused_before_it_is_parsed(run, tmp_path):
    path = tmp_path / "padded.json"
    _padded(path, 1_800_000)  # 18 MB
    line = f"padded.json: /x_pad: the trace's fields other than events and edges take 18 MB, {FIX}"
    for way, options in WAYS.items():
        started = time.perf_counter()
        assert validation.report("padded.json", path, **options) == (False, [line, "padded.json: invalid, 1 problem."]), way
        assert time.perf_counter() - started < 1.5, way  # was 3.4 s and 1.1 GB
    result = run("trace", "validate", "padded.json", cwd=tmp_path)
    assert (result.exit_code, result.output) == (1, f"{line}\npadded.json: invalid, 1 problem.\n")
    result = run("trace", "metrics", "padded.json", cwd=tmp_path)
    assert result.exit_code == 1 and result.output.startswith(line + "\n") and "Traceback" not in result.output


@pytest.mark.slow
def test_the_largest_field_is_named_only_when_it_is_most_of_the_top_level(tmp_path):
    """A key given again and again counts each time (Python's json would read each one)."""
    text = json.dumps({"trace_id": "t", "events": [], "edges": []})[:-1]
    path = tmp_path / "repeated.json"
    note = '"x_note": "' + "n" * 1_000_000 + '"'  # 1 MB, given 18 times
    path.write_text(text + ", " + ", ".join([note] * 18) + "}", encoding="utf-8")
    for way, options in WAYS.items():
        assert (
            validation.report("repeated.json", path, **options)[1][0]
            == f"repeated.json: the trace's fields other than events and edges take 18 MB, {FIX}"
        ), way


@pytest.mark.slow
def test_a_large_trace_with_a_top_level_under_the_limit_is_read_as_before(tmp_path):
    trace = synth.generate(80_000, "hierarchical", seed=5)
    trace["x_note"] = "n" * (MAX_TOP_BYTES - 100_000)
    path = tmp_path / "large.json"
    synth.write(trace, path)
    assert path.stat().st_size > 2 * MAX_TOP_BYTES
    for way, options in WAYS.items():
        assert validation.report(
            "large.json", path, **(options | {"chunk": 30_000} if "chunk_above" in options else options)
        ) == (True, ["large.json: valid: 80,000 events, " + f"{len(trace['edges']):,} edges."]), way
