"""A trace that declares no schema is refused exactly when the survey artifact's own checker
(trace-schema/validate_trace.py) refuses it (issue 38): hypothesis makes traces the
artifact accepts (artifact_traces) and breaks each, at most once, in one of the ways its
checker looks for; paperpool's verdict and the checker's must agree on every one.

The checker's rules are restated below as facts (its authors' code is not ours to ship).
With PAPERPOOL_ARTIFACT_CHECKER naming a copy of validate_trace.py, each case is also run
through that file, and the restatement must agree with it too."""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import io
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paperpool.traces import validation

from .artifact_traces import EDGE_TYPES, EVENT_TYPES, artifact_traces

# validate_trace.py's rules, as facts: the fields it requires, the types it knows, and that
# ids are unique, edges name events, and no time or cost is negative
REQUIRED_TOP_LEVEL = ("trace_id", "task_id", "events", "edges", "rewards", "costs")
REQUIRED_EVENT = ("id", "t", "type", "agent")
REQUIRED_EDGE = ("src", "dst", "type")


def checker_refuses(trace: dict) -> bool:
    if any(field not in trace for field in REQUIRED_TOP_LEVEL) or not trace["events"]:
        return True
    ids = set()
    for event in trace["events"]:
        if any(field not in event for field in REQUIRED_EVENT) or event["type"] not in EVENT_TYPES:
            return True
        if event["id"] in ids or event["t"] < 0:
            return True
        ids.add(event["id"])
    for edge in trace["edges"]:
        if any(field not in edge for field in REQUIRED_EDGE) or edge["type"] not in EDGE_TYPES:
            return True
        if edge["src"] not in ids or edge["dst"] not in ids:
            return True
    return any(value < 0 for value in trace["costs"].values())


def _breaks(trace: dict) -> list:
    """Every way of breaking `trace` once that the checker looks for."""
    events, edges = trace["events"], trace["edges"]
    ways: list = [("top", field) for field in REQUIRED_TOP_LEVEL] + [("no events",)]
    ways += [("event field", k, field) for k in range(len(events)) for field in REQUIRED_EVENT]
    ways += [("event type", k, kind) for k in range(len(events)) for kind in ("stop", "thinking")]
    ways += [("same id", k) for k in range(1, len(events))] + [("negative t", k) for k in range(len(events))]
    ways += [("edge field", k, field) for k in range(len(edges)) for field in REQUIRED_EDGE]
    ways += [("edge type", k) for k in range(len(edges))]
    ways += [("edge end", k, end) for k in range(len(edges)) for end in ("src", "dst")]
    ways += [("negative cost", key) for key in ("tokens", "compute_s", "x_gpu_hours")]
    return ways


def _broken(trace: dict, way: tuple) -> dict:
    broken = copy.deepcopy(trace)
    events, edges = broken["events"], broken["edges"]
    match way:
        case ("top", field):
            del broken[field]
        case ("no events",):
            broken["events"], broken["edges"] = [], []
        case ("event field", k, field):
            del events[k][field]
        case ("event type", k, kind):
            events[k]["type"] = kind
        case ("same id", k):
            events[k]["id"] = events[0]["id"]
        case ("negative t", k):
            events[k]["t"] = -0.5
        case ("edge field", k, field):
            del edges[k][field]
        case ("edge type", k):
            edges[k]["type"] = "depends_on"
        case ("edge end", k, end):
            edges[k][end] = "no such event"
        case ("negative cost", key):
            broken["costs"][key] = -1
    return broken


@st.composite
def cases(draw) -> dict:
    trace = draw(artifact_traces())
    way = draw(st.sampled_from([None, *_breaks(trace)]))
    return trace if way is None else _broken(trace, way)


def _real_checker():
    named = os.environ.get("PAPERPOOL_ARTIFACT_CHECKER")
    if not named:
        return None
    spec = importlib.util.spec_from_file_location("artifact_checker", named)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.validate


REAL_CHECKER = _real_checker()


def _real_verdict(path: Path) -> bool:
    """Whether the artifact's validate_trace.py refuses the file (it exits on a refusal)."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            REAL_CHECKER(str(path))
    except SystemExit:
        return True
    return False


@pytest.mark.slow
@given(trace=cases())
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
def test_paperpool_refuses_what_the_artifacts_checker_refuses(tmp_path, trace):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace, allow_nan=False), encoding="utf-8")
    refused = checker_refuses(trace)
    if REAL_CHECKER is not None:
        assert _real_verdict(path) == refused, "the restated rules disagree with validate_trace.py"
    valid, lines = validation.report("t.json", path)
    assert valid == (not refused), lines


def test_each_way_of_breaking_a_trace_is_refused_by_the_restated_rules():
    """The breaks are each a refusal, so the property test above cannot pass by breaking nothing."""
    trace = {
        "trace_id": "t",
        "task_id": "t",
        "events": [{"id": "a", "t": 0, "type": "message", "agent": "x"}, {"id": "b", "t": 1, "type": "message", "agent": "y"}],
        "edges": [{"src": "a", "dst": "b", "type": "causal"}],
        "rewards": {},
        "costs": {"tokens": 1, "wall_clock_s": 1},
    }
    assert not checker_refuses(trace)
    for way in _breaks(trace):
        broken = _broken(trace, way)
        assert checker_refuses(broken), way
        assert not validation.check_trace(broken).valid, way
