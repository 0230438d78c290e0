"""paperpool's trace format is a true superset of the survey artifact's: every trace it
accepts (its trace_schema.json, and its validate_trace.py's rules: unique event ids,
edges naming events) validates, what it refuses is refused, what paperpool's format asks beyond it is a warning
(alike ones counted together), and a trace that declares paperpool's schema is held to
all of it."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paperpool.traces import artifact, mapping, metrics, synth, validation
from paperpool.traces.schema import schema_id

from .artifact_traces import (
    ARTIFACT_ASKS,
    artifact_traces,
    artifact_valid,
    edges,
    events,
    json_values,
    names,
    numbers,
    paperpool_events,
)
from .fixtures import SOURCE_EXAMPLE

needs_source = pytest.mark.skipif(not SOURCE_EXAMPLE.is_file(), reason="the source artifact (shared/) is not beside this clone")
WARNED = "(it declares no schema, so what paperpool's format asks beyond the survey artifact's is a warning)."


@pytest.mark.slow
@given(trace=artifact_traces())
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
def test_every_trace_the_artifacts_schema_accepts_validates(tmp_path, trace):
    assert artifact_valid(trace)  # the generator makes only what the artifact's schema accepts
    path = tmp_path / "artifact.json"
    path.write_text(json.dumps(trace, allow_nan=False), encoding="utf-8")
    valid, lines = validation.report("T", path)
    assert valid, lines
    assert lines[-1].startswith("T: valid: ")
    # read in chunks of three, and with the links resolved in a second process: the same report
    assert validation.report("T", path, chunk_above=0, chunk=3, apart_above=0) == (valid, lines)
    checked = validation.check_file(path)
    measured = metrics.compute(checked.index, checked.top, mapping.default(), len(checked.warnings))
    assert json.loads(metrics.to_json(measured))["warnings"] == len(lines) - 1


@needs_source
def test_the_artifacts_example_is_what_its_schema_accepts():
    assert artifact_valid(json.loads(SOURCE_EXAMPLE.read_text(encoding="utf-8")))


def _artifact_example(tmp_path, declared: bool = False):
    """The artifact's example as issue 20 found it refused: topology mixed, a field the
    artifact's format allows on an event, and a tool_call without its tool."""
    trace = json.loads(SOURCE_EXAMPLE.read_text(encoding="utf-8"))
    trace["topology"] = "mixed"
    trace["events"][3]["latency_ms"] = 1200  # the message
    trace["events"][4]["latency_ms"] = 800  # the tool_call
    del trace["events"][4]["tool"]
    trace["events"][6]["to"] = ""  # the return: the artifact's format allows an empty name
    if declared:
        trace = {"schema": schema_id(), **trace}
    path = tmp_path / "artifact.json"
    path.write_text(json.dumps(trace, indent=1), encoding="utf-8")
    return path


@needs_source
def test_what_the_artifact_allows_is_a_warning(run, tmp_path):
    path = _artifact_example(tmp_path)
    result = run("trace", "validate", str(path), cwd=tmp_path)
    unknown = "which paperpool does not read; prefix its name with x_ to keep it as an extension"
    assert (result.exit_code, result.output.splitlines()) == (
        0,
        [
            f"{path}: warning: /events/3/latency_ms: unknown field 'latency_ms', {unknown} (and 1 more event like it)",
            (
                f"{path}: warning: /events/4/tool: missing: a tool_call event needs `tool` (the tool a tool_call calls or a "
                "tool_result comes from); add it"
            ),
            f"{path}: warning: /events/6/to: is empty; write a name",
            f"{path}: valid: 8 events, 8 edges; 3 warnings {WARNED}",
        ],
    )


@needs_source
def test_a_trace_that_declares_paperpools_schema_is_held_to_it(run, tmp_path):
    path = _artifact_example(tmp_path, declared=True)
    result = run("trace", "validate", str(path), cwd=tmp_path)
    assert (result.exit_code, result.output.splitlines()) == (
        1,
        [
            f"{path}: /events/3/latency_ms: unknown field 'latency_ms'; remove it, or prefix its name with x_ to keep it as an extension",
            (
                f"{path}: /events/4/latency_ms: unknown field 'latency_ms'; remove it, or prefix its name with x_ to keep it as an "
                "extension"
            ),
            (
                f"{path}: /events/4/tool: missing: a tool_call event needs `tool` (the tool a tool_call calls or a tool_result "
                "comes from); add it"
            ),
            # the call the schema refused answers nothing
            (
                f"{path}: /events/5: tool_result of 'browser.search' answers no tool_call: there is no call of 'browser.search' "
                "at or before t=5; add the tool_call, or name it in `call`"
            ),
            f"{path}: /events/6/to: is empty; write a name",
            f"{path}: invalid, 5 problems.",
        ],
    )


@needs_source
def test_metrics_read_what_they_can_and_say_how_many_warnings(run, tmp_path):
    path = _artifact_example(tmp_path)
    result = run("trace", "metrics", str(path), "--format", "json", cwd=tmp_path)
    assert result.exit_code == 0
    text = result.output
    warnings, report = text[: text.index("{")], json.loads(text[text.index("{") :])
    assert len(warnings.splitlines()) == 3 and all(": warning: /events/" in line for line in warnings.splitlines())
    # the result e6 answers the call e5, which names no tool, by the edge e5 -> e6: still the executor's work;
    # the return e7 names no receiver, so nothing returns to the orchestrator
    assert (report["topology"], report["agents"], report["tool_calls"], report["warnings"]) == ("mixed", 3, 1, 3)
    assert report["agent_share"]["executor_1"]["events"] == 3


def _rules_trace(path, events: list, edges: list) -> None:
    path.write_text(
        json.dumps(
            {
                "trace_id": "rules",
                "task_id": "t",
                "events": events,
                "edges": edges,
                "rewards": {},
                "costs": {"tokens": 0, "wall_clock_s": 4},
            }
        ),
        encoding="utf-8",
    )


RULES_EVENTS = [
    {"id": "a", "t": 0, "type": "orchestrator_decision", "agent": "lead"},
    {"id": "b", "t": 1, "type": "spawn", "agent": "lead", "to": "w"},
    {"id": "c", "t": 2, "type": "tool_result", "agent": "w", "tool": "search"},
    {"id": "c2", "t": 3, "type": "message", "agent": "w", "to": "lead"},
    {"id": "d", "t": 4, "type": "aggregate", "agent": "lead"},
]
RULES_EDGES = [
    {"src": "a", "dst": "b", "type": "spawn"},
    {"src": "d", "dst": "a", "type": "causal"},
    {"src": "c", "dst": "d", "type": "message"},
    {"src": "d", "dst": "b", "type": "causal"},
]


def test_graph_rules_are_warnings_for_a_trace_that_declares_no_schema(run, tmp_path):
    path = tmp_path / "rules.json"
    _rules_trace(path, RULES_EVENTS, RULES_EDGES)
    result = run("trace", "validate", str(path), cwd=tmp_path)
    assert (result.exit_code, result.output.splitlines()) == (
        0,
        [
            (
                f"{path}: warning: /events/2: tool_result of 'search' answers no tool_call: there is no call of 'search' at or "
                "before t=2; add the tool_call, or name it in `call`"
            ),
            (
                f"{path}: warning: /edges/1: causal edge d -> a goes back in time (t=4 -> t=0); it must lead to an event at the "
                "same time or later: swap src and dst, or correct the times (and 1 more edge like it)"
            ),
            f"{path}: valid: 5 events, 4 edges; 2 warnings {WARNED}",
        ],
    )
    measured = json.loads(run("trace", "metrics", str(path), "--format", "json", cwd=tmp_path).output.split("\n", 2)[2])
    # the backwards edge is no dependency: a -> b, and c -> d: a chain of two, from t=2 to 4
    assert (measured["critical_path_events"], measured["critical_path_s"], measured["warnings"]) == (2, 2, 2)


def test_ids_given_twice_and_edges_to_no_event_are_errors_as_the_artifacts_checker_says(run, tmp_path):
    """Issue 38: the artifact's validate_trace.py refuses an event id given twice and an
    edge naming no event, so a trace in its format that does either is invalid here too
    (a superset accepts what the source accepts, not what it refuses)."""
    events = [*RULES_EVENTS[:3], {**RULES_EVENTS[3], "id": "c"}, RULES_EVENTS[4]]
    edges = [*RULES_EDGES[:2], {"src": "b", "dst": "zz", "type": "causal"}, *RULES_EDGES[2:]]
    path = tmp_path / "rules.json"
    _rules_trace(path, events, edges)
    result = run("trace", "validate", str(path), cwd=tmp_path)
    assert (result.exit_code, result.output.splitlines()) == (
        1,
        [
            (
                f"{path}: warning: /events/2: tool_result of 'search' answers no tool_call: there is no call of 'search' at or "
                "before t=2; add the tool_call, or name it in `call`"
            ),
            f"{path}: /events/3/id: id 'c' is already the id of /events/2; give each event its own id",
            (
                f"{path}: warning: /edges/1: causal edge d -> a goes back in time (t=4 -> t=0); it must lead to an event at the "
                "same time or later: swap src and dst, or correct the times (and 1 more edge like it)"
            ),
            f"{path}: /edges/2/dst: no event has id 'zz'; name an event of this trace, or add the event",
            f"{path}: invalid, 2 problems; 2 warnings.",
        ],
    )


def test_the_same_rules_are_errors_when_the_schema_is_declared(run, tmp_path):
    events = [{"id": "a", "t": 0, "type": "message", "agent": "lead"}, {"id": "a", "t": 1, "type": "message", "agent": "lead"}]
    path = tmp_path / "declared.json"
    path.write_text(json.dumps({"schema": schema_id(), "trace_id": "t", "events": events, "edges": []}), encoding="utf-8")
    result = run("trace", "validate", str(path), cwd=tmp_path)
    assert (result.exit_code, result.output.splitlines()) == (
        1,
        [
            f"{path}: /events/1/id: id 'a' is already the id of /events/0; give each event its own id",
            f"{path}: invalid, 1 problem.",
        ],
    )


def test_what_the_artifact_refuses_too_is_an_error(run, tmp_path):
    path = tmp_path / "broken.json"
    path.write_text(
        json.dumps(
            {
                "trace_id": "t",
                "topology": "ring",
                "events": [
                    {"id": "a", "t": -1, "type": "message", "agent": "lead", "role": ""},
                    {"id": "b", "t": 1, "type": "stop", "agent": ""},
                ],
                "edges": [],
            }
        ),
        encoding="utf-8",
    )
    result = run("trace", "validate", str(path), cwd=tmp_path)
    topologies = "centralized, planner_executor_critic, debate, swarm, hierarchical, harness, mixed, unknown, other"
    types = "orchestrator_decision, spawn, despawn, message, tool_call, tool_result, return, aggregate, human_intervention, safety_event"
    read_as = "as which a trace that declares no `schema` is read"
    declare = 'declare paperpool\'s schema in the trace ("schema": "urn:paperpool:schema:orchestration-trace:1.0.0")'
    asked = f"which the survey artifact's format asks for, {read_as}; or {declare}"
    assert (result.exit_code, result.output.splitlines()) == (
        1,
        [
            f"{path}: /task_id: missing: add `task_id` (the task the system was given), {asked}",
            f'{path}: /topology: "ring" is not a known topology; use one of {topologies}',
            f"{path}: /events/0/t: -1 is negative; t cannot be negative, write 0 or more",
            f"{path}: /events/1/agent: is empty; write a name",
            (
                f"{path}: /events/1/type: \"stop\" is an event type of paperpool's format, not of the survey artifact's, "
                f"{read_as}; {declare}, or use one of {types}"
            ),
            (
                f"{path}: /rewards: missing: add `rewards` (the run's rewards, one number per reward channel (for example "
                f"team, orchestration, tool)), {asked}"
            ),
            (
                f"{path}: /costs: missing: add `costs` (the run's costs as declared by the system; the events' own costs may "
                f"not add up to more), {asked}"
            ),
            f"{path}: invalid, 7 problems.",
        ],
    )


def test_a_large_trace_in_the_artifacts_format_gets_two_lines_of_warnings(run, tmp_path):
    """synth's artifact dialect: every event carries a field paperpool does not read, and
    every tool call leaves out its tool; each is one line, with the count of the others."""
    path = tmp_path / "artifact.json"
    synth.write(synth.generate(3000, "hierarchical", seed=1, dialect="artifact"), path)
    trace = json.loads(path.read_text(encoding="utf-8"))
    assert artifact_valid(trace)
    calls = sum(event["type"] == "tool_call" for event in trace["events"])
    first_call = next(k for k, event in enumerate(trace["events"]) if event["type"] == "tool_call")
    result = run("trace", "validate", str(path), cwd=tmp_path)
    assert (result.exit_code, result.output.splitlines()) == (
        0,
        [
            (
                f"{path}: warning: /events/0/latency_ms: unknown field 'latency_ms', which paperpool does not read; prefix its "
                "name with x_ to keep it as an extension (and 2,999 more events like it)"
            ),
            (
                f"{path}: warning: /events/{first_call}/tool: missing: a tool_call event needs `tool` (the tool a tool_call "
                f"calls or a tool_result comes from); add it (and {calls - 1:,} more events like it)"
            ),
            f"{path}: valid: 3,000 events, {len(trace['edges']):,} edges; 2 warnings {WARNED}",
        ],
    )
    # read in chunks, the warnings come out the same
    assert validation.report(str(path), path, chunk_above=0, chunk=500) == (True, result.output.splitlines())


@pytest.mark.slow
@given(
    event=events() | paperpool_events(),
    edge=edges
    | st.fixed_dictionaries({"src": names, "dst": names, "type": names}, optional={"x_note": json_values, "weight": numbers}),
)
@settings(max_examples=1500, deadline=None)
def test_the_probes_say_all_that_paperpools_schema_asks_beyond_the_artifacts(event, edge):
    """An event or edge meets paperpool's schema exactly when it meets the artifact's reading
    and every probe: so no warning is missed by probing (artifact.py), however the schema
    file's x-artifact marks change."""
    for section, item in (("events", event), ("edges", edge)):
        # paperpool's event types beyond the artifact's (stop) are the one place its reading is stricter
        strict = artifact._items(section, "paperpool").is_valid([item]) and not artifact.added_types(section, [item])
        lenient = artifact._items(section, "artifact").is_valid([item])
        probed = all(probe.one.is_valid(item) for probe in artifact.probes(section))
        assert strict == (lenient and probed), (section, item)
        assert artifact.properties_probe(section).is_valid([item]) == all(
            probe.one.is_valid(item) for probe in artifact.probes(section) if probe.key[0] == "property"
        )


def test_a_warning_is_one_line_whatever_the_file_is_called(tmp_path):
    path = tmp_path / "run: 1\x1b[2J.json"  # a colon and a space, and a terminal escape, in the name
    path.write_text(
        json.dumps(
            {"trace_id": "t", "events": [{"id": "a", "t": 0, "type": "message", "agent": "x", "latency_ms": 3}], "edges": []}
            | ARTIFACT_ASKS
        ),
        encoding="utf-8",
    )
    assert validation.report(str(path), path) == (
        True,
        [
            (
                f"{tmp_path}/run: 1\\x1b[2J.json: warning: /events/0/latency_ms: unknown field 'latency_ms', which paperpool does "
                "not read; prefix its name with x_ to keep it as an extension"
            ),
            f"{tmp_path}/run: 1\\x1b[2J.json: valid: 1 event, 0 edges; 1 warning {WARNED}",
        ],
    )


def test_a_trace_of_many_unknown_fields_shows_the_first_hundred_warnings(run, tmp_path):
    """One warning per unknown field name (issue 39's fresh review: 120,000 names printed
    120,000 lines): the first hundred shown, all counted."""
    event = {"id": "e0", "t": 0, "type": "message", "agent": "a"} | {f"f{i:04}": 0 for i in range(1200)}
    (tmp_path / "t.json").write_text(
        json.dumps({"trace_id": "t", "events": [event], "edges": []} | ARTIFACT_ASKS), encoding="utf-8"
    )
    result = run("trace", "validate", "t.json", cwd=tmp_path)
    lines = result.output.splitlines()
    assert (result.exit_code, len(lines)) == (0, 101)
    assert lines[-1] == (
        "t.json: valid: 1 event, 0 edges; 1,200 warnings (the first 100 shown) (it declares no schema, so "
        "what paperpool's format asks beyond the survey artifact's is a warning)."
    )
