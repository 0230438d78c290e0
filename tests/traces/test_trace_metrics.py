"""`paperpool trace metrics`: every measure checked against values worked out by hand."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from paperpool.traces import links, mapping, measures, metrics, synth
from paperpool.traces.schema import schema_id
from paperpool.traces.validation import check_trace

from ..conftest import REPO, edit
from .fixtures import FIXTURES, SOURCE_EXAMPLE

NO_COSTS = [{"key": f"/costs/{key}/events", "why": measures.NO_COSTS} for key in ("tokens", "seconds")]

EXAMPLES = REPO / "traces"
SCHEMA_ID = schema_id()  # a trace that declares it is held to all of paperpool's rules
KEYS = [
    "trace_id",
    "topology",
    "events",
    "edges",
    "agents",
    "spawns",
    "max_fanout",
    "depth",
    "messages",
    "tool_calls",
    "aggregations",
    "event_types",
    "stopped",
    "stop_t",
    "subdecisions",
    "total_work_events",
    "critical_path_events",
    "parallelism_speedup_events",
    "total_work_s",
    "critical_path_s",
    "parallelism_speedup",
    "protocol_overhead",
    "costs",
    "rewards",
    "agent_share",
    "notes",
    "time_unit",
    "warnings",
]


def measure(run, path, cwd) -> dict:
    result = run("trace", "metrics", str(path), "--format", "json", cwd=cwd)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_json_keys_are_the_documented_ones_in_order(run, tmp_path):
    result = measure(run, FIXTURES / "valid.json", tmp_path)
    assert list(result) == KEYS
    for key in KEYS:  # each key is explained in the module's docstring
        assert re.search(rf"^    (\S+, )*{key}\b", metrics.__doc__, re.MULTILINE), key


def test_the_fixture_trace(run, tmp_path):
    m = measure(run, FIXTURES / "valid.json", tmp_path)
    # lead d1 s1 s2 a1 x1; worker_a c1, r1 (the result of its call), b1; worker_b m1 b2
    assert (m["events"], m["edges"], m["agents"], m["spawns"], m["max_fanout"], m["depth"]) == (10, 11, 3, 2, 2, 1)
    assert (m["messages"], m["tool_calls"], m["aggregations"], m["stopped"], m["stop_t"]) == (1, 1, 1, True, 6)
    # O1: 2 spawns + d1, whose decision field says O1; O2: the tool call; O3: the message
    assert m["subdecisions"] == {"O1": 3, "O2": 1, "O3": 1, "O4": 1, "O5": 1}
    # longest chain d1 s1 c1 r1 b1 a1 x1: 7 events, t 0 -> 6; 10 / 7 = 1.428571
    assert (m["total_work_events"], m["critical_path_events"], m["parallelism_speedup_events"]) == (10, 7, 1.428571)
    # lanes: lead 0 -> 6, worker_a spawned at 1, last at 4: 3, worker_b 1 -> 4: 3; 12 / 6 = 2
    assert (m["total_work_s"], m["critical_path_s"], m["parallelism_speedup"]) == (12, 6, 2)
    assert m["protocol_overhead"] == 1  # 1 message per 1 tool call
    # tokens 100 + 50 + 200, seconds 1 + 2
    assert m["costs"] == {
        "tokens": {"events": 350, "declared": 400},
        "seconds": {"events": 3, "declared": 3},
        "wall_clock_s": {"declared": 6},
        "tool_calls": {"events": 1, "declared": 1},
        "messages": {"events": 1, "declared": 1},
    }
    assert m["rewards"] == {"declared": {"team": 1}, "by_unit": {"team": {"team": 1}, "tool": {"tool": 0.5}}}
    # events 5/10, 3/10, 2/10; busy 6/12, 3/12, 3/12
    assert m["agent_share"] == {
        "lead": {"events": 5, "share": 0.5, "busy_s": 6, "share_s": 0.5},
        "worker_a": {"events": 3, "share": 0.3, "busy_s": 3, "share_s": 0.25},
        "worker_b": {"events": 2, "share": 0.2, "busy_s": 3, "share_s": 0.25},
    }


def test_centralized_parallel_readers(run):
    m = measure(run, EXAMPLES / "centralized-parallel-readers.json", REPO)
    assert (m["events"], m["agents"], m["spawns"], m["max_fanout"], m["depth"], m["tool_calls"]) == (15, 4, 3, 3, 1, 3)
    assert m["subdecisions"] == {"O1": 4, "O2": 3, "O3": 0, "O4": 1, "O5": 1}  # 3 spawns + d1 (O1); 3 tool calls
    # d1 s1 c1 r1 b1 a1 x1: 7 events of 15, 15 / 7 = 2.142857; t 0 -> 10
    assert (m["critical_path_events"], m["parallelism_speedup_events"], m["critical_path_s"]) == (7, 2.142857, 10)
    # lead 0 -> 10: 10; readers spawned at 1, last events at 7, 6 and 8: 6 + 5 + 7; 28 / 10 = 2.8
    assert (m["total_work_s"], m["parallelism_speedup"]) == (28, 2.8)
    assert (m["stopped"], m["stop_t"]) == (True, 10)
    # coverage 0.5 + 0.3 + 0.2 to agents
    assert m["rewards"]["by_unit"] == {"team": {"team": 1}, "orchestrator": {"orchestration": 0.6}, "agent": {"coverage": 1}}
    assert m["costs"]["tokens"] == {"events": 5300, "declared": 5300}  # 600 + 1200 + 1500 + 1100 + 900
    # lead 6 of 15 events, 10 of 28 s; readers 3 events each, 6, 5 and 7 of 28 s
    assert m["agent_share"] == {
        "lead": {"events": 6, "share": 0.4, "busy_s": 10, "share_s": 0.357143},
        "reader_1": {"events": 3, "share": 0.2, "busy_s": 6, "share_s": 0.214286},
        "reader_2": {"events": 3, "share": 0.2, "busy_s": 5, "share_s": 0.178571},
        "reader_3": {"events": 3, "share": 0.2, "busy_s": 7, "share_s": 0.25},
    }


def test_swarm(run):
    m = measure(run, EXAMPLES / "swarm-six-workers.json", REPO)
    assert (m["events"], m["agents"], m["spawns"], m["max_fanout"], m["depth"]) == (27, 7, 6, 6, 1)
    assert m["subdecisions"] == {"O1": 7, "O2": 6, "O3": 0, "O4": 1, "O5": 1}
    # d1 s c r b a1 x1: 7 of 27 events = 3.857143; t 0 -> 10
    assert (m["critical_path_events"], m["parallelism_speedup_events"], m["critical_path_s"]) == (7, 3.857143, 10)
    # coordinator 10; workers from 1 to 3 + their shard's 3, 4, 3, 5, 3, 4 s: 5 + 6 + 5 + 7 + 5 + 6 = 34; 44 / 10
    assert (m["total_work_s"], m["parallelism_speedup"]) == (44, 4.4)
    assert m["rewards"]["by_unit"] == {"tool": {"tool": 0.6}}  # six results, 0.1 each
    assert m["costs"]["seconds"] == {"events": 30, "declared": 30}  # 1 + 6 x 1 + (3+4+3+5+3+4) + 1


def test_debate_has_no_stop(run):
    m = measure(run, EXAMPLES / "debate-two-rounds.json", REPO)
    assert (m["stopped"], m["stop_t"], m["messages"], m["tool_calls"], m["protocol_overhead"]) == (False, None, 4, 0, None)
    assert m["subdecisions"] == {"O1": 3, "O2": 0, "O3": 4, "O4": 1, "O5": 0}  # a1's decision field says O4, as its type
    # d1 s1 m1 m3 a1 (or through con): 5 events; judge 0 -> 6, debaters 0.5 -> 4: 6 + 3.5 + 3.5 = 13; 13 / 6
    assert (m["critical_path_events"], m["total_work_s"], m["parallelism_speedup"]) == (5, 13, 2.166667)
    assert m["rewards"]["by_unit"] == {"team": {"team": 1}, "message": {"debate": 1.4}}  # 0.4 + 0.3 + 0.2 + 0.5


def test_hierarchical_depth_and_fanout(run):
    m = measure(run, EXAMPLES / "hierarchical-two-levels.json", REPO)
    # director -> lead_data -> crawler, cleaner; director -> lead_model -> trainer; the guard and the operator act
    # unspawned: agents director, lead_data, lead_model, crawler, cleaner, trainer, guard, operator
    assert (m["agents"], m["spawns"], m["max_fanout"], m["depth"]) == (8, 5, 2, 2)
    assert m["event_types"]["safety_event"] == 1 and m["event_types"]["human_intervention"] == 1
    # O1: 5 spawns + d1 + d2; O2: 3 tool calls + d3 (decision O2)
    assert m["subdecisions"] == {"O1": 7, "O2": 4, "O3": 1, "O4": 3, "O5": 1}
    assert m["rewards"]["by_unit"] == {
        "team": {"team": 0.8},
        "orchestrator": {"orchestration": 0.5},
        "turn": {"process": 0.9},
        "token": {"efficiency": -0.05},
    }


@pytest.mark.skipif(not SOURCE_EXAMPLE.is_file(), reason="the source artifact (shared/) is not beside this clone")
def test_the_source_example(run, tmp_path):
    m = measure(run, SOURCE_EXAMPLE, tmp_path)
    # orchestrator, planner_1, executor_1 (the browser.search result is executor_1's, by the return edge e5 -> e6)
    assert (m["agents"], m["spawns"], m["max_fanout"], m["depth"], m["stopped"]) == (3, 2, 2, 1, False)
    assert m["subdecisions"] == {"O1": 2, "O2": 1, "O3": 1, "O4": 1, "O5": 0}  # e1 names no decision
    # e1 e2 e4 e5 e6 e7 e8: 7 of 8 events, t 0 -> 7; lanes 7 + (3 - 1) + (6 - 2) = 13; 13 / 7 = 1.857143
    assert (m["critical_path_events"], m["critical_path_s"], m["total_work_s"], m["parallelism_speedup"]) == (7, 7, 13, 1.857143)
    assert m["costs"]["tool_calls"] == {"events": 1, "declared": 1}
    assert m["rewards"] == {"declared": {"team": 1.0, "orchestration": 0.3, "tool": 0.1}, "by_unit": {}}


def test_text_report(run, tmp_path):
    result = run("trace", "metrics", str(FIXTURES / "valid.json"), cwd=tmp_path)
    assert result.exit_code == 0
    assert result.output.splitlines()[:16] == [
        "trace fixture-base (centralized)",
        "  events 10, edges 11, agents 3",
        "  spawns 2, largest fan-out 2, spawn depth 1",
        "  messages 1, tool calls 1, aggregations 1",
        "  stopped: yes, at t=6",
        "sub-decisions (event types from paperpool's subdecisions.yaml):",
        "  O1 Spawn: 3",
        "  O2 Delegate: 1",
        "  O3 Communicate: 1",
        "  O4 Aggregate: 1",
        "  O5 Stop: 1",
        "work and critical path:",
        "  in events: 10 of work, 7 on the critical path, speedup 1.428571",
        "  in time (unit not declared: time_unit would say seconds or steps): 12 of work, 6 on the critical path, speedup 2",
        "  protocol overhead (messages per tool call): 1",
        "costs (events' sum / declared):",
    ]


def test_the_registry_mapping_replaces_the_default(run, pool_copy):
    edit(pool_copy / "registry.yaml", "    O3: [message]\n", "    O3: [message, return]\n")
    m = measure(run, FIXTURES / "valid.json", pool_copy)
    assert m["subdecisions"]["O3"] == 3  # the message and the two returns
    result = run("trace", "metrics", str(FIXTURES / "valid.json"), cwd=pool_copy)
    assert "sub-decisions (event types from registry.yaml):" in result.output
    assert "  O2 Delegate: 1" in result.output  # labels from the registry's subdecision vocabulary


def test_a_pool_without_a_traces_section_uses_the_default(run, tiny):
    assert measure(run, FIXTURES / "valid.json", tiny)["subdecisions"]["O3"] == 1


def test_an_invalid_registry_is_reported_not_ignored(run, pool_copy):
    edit(pool_copy / "registry.yaml", "    O2: [tool_call]\n", "    O2: [tool_cal]\n")
    result = run("trace", "metrics", str(FIXTURES / "valid.json"), cwd=pool_copy)
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        "Error: registry.yaml is not valid (problems above); fix it, or run outside the "
        "pool to use paperpool's default sub-decision mapping"
    )


def test_metrics_refuse_an_invalid_trace(run, tmp_path):
    name = str(FIXTURES / "cycle.json")
    result = run("trace", "metrics", name, cwd=tmp_path)
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        f"Error: {name} is not a valid trace (1 problem above); fix it first: paperpool trace validate {name}"
    )


def test_the_default_mapping_is_data():
    default = mapping.default()
    assert default.events == {
        "O1": ["spawn", "despawn"],
        "O2": ["tool_call"],
        "O3": ["message"],
        "O4": ["aggregate"],
        "O5": ["stop"],
    }
    assert default.source == "paperpool's subdecisions.yaml"


@pytest.mark.parametrize("topology", synth.TOPOLOGIES)
def test_synthetic_traces_are_valid_and_repeatable(topology):
    first = synth.generate(400, topology, fanout=3, depth=2, seed=7)
    assert first == synth.generate(400, topology, fanout=3, depth=2, seed=7)
    assert first != synth.generate(400, topology, fanout=3, depth=2, seed=8)
    checked = check_trace(first)
    assert checked.valid, checked.findings[:3]
    m = metrics.compute(checked.index, checked.top, mapping.default())
    assert (m["events"], m["stopped"], m["topology"]) == (400, True, topology)


def test_synthetic_hierarchy_has_the_depth_asked_for():
    checked = check_trace(synth.generate(2000, "hierarchical", fanout=2, depth=3, seed=1))
    m = metrics.compute(checked.index, checked.top, mapping.default())
    assert (m["depth"], m["max_fanout"]) == (3, 2)


def test_the_same_measures_from_a_file_read_in_chunks(tmp_path):
    path = tmp_path / "big.json"
    synth.write(synth.generate(5000, "centralized", fanout=4, depth=1, seed=3), path)
    from paperpool.traces.validation import check_file

    whole = check_file(path)
    chunked = check_file(path, chunk_above=0, chunk=700)  # eight chunks, the last one short
    assert whole.valid and chunked.valid
    assert metrics.compute(whole.index, whole.top, mapping.default()) == metrics.compute(
        chunked.index, chunked.top, mapping.default()
    )


def _strict_json(text: str) -> dict:
    """JSON as the standard has it: NaN and Infinity, which Python's json reads by default, refused."""

    def refuse(constant: str):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def _write_trace(path, events: list[dict], edges: list[dict]) -> None:
    trace = {"schema": SCHEMA_ID, "trace_id": "edge-of-double", "events": events, "edges": edges}
    path.write_text(json.dumps(trace), encoding="utf-8")


NOT_FINITE = (
    "not a finite number: the trace's numbers are too large to add up, subtract or divide within a double's range (about 1.8e308)"
)


def test_sums_past_a_doubles_range_are_null_with_a_note(run, tmp_path):
    """Each number is finite, as validate requires, but two lanes of 1.5e308 s add up to
    more than a double holds, and so do two rewards and two token counts of 1e308."""
    big = {"cost": {"tokens": 1e308}, "rewards": [{"channel": "team", "unit": "team", "value": 1e308}]}
    _write_trace(
        tmp_path / "big.json",
        [
            {"id": "a", "t": 0, "type": "orchestrator_decision", "agent": "lead", **big},
            {"id": "b", "t": 1.5e308, "type": "message", "agent": "lead", "to": "w", **big},
            {"id": "c", "t": 0, "type": "message", "agent": "w"},
            {"id": "d", "t": 1.5e308, "type": "stop", "agent": "w"},
        ],
        [{"src": "a", "dst": "b", "type": "causal"}],
    )
    result = run("trace", "metrics", "big.json", "--format", "json", cwd=tmp_path)
    assert result.exit_code == 0 and "Warning" not in result.output
    m = _strict_json(result.output)
    assert (m["total_work_s"], m["critical_path_s"], m["parallelism_speedup"]) == (None, 1.5e308, None)
    assert (m["costs"]["tokens"], m["rewards"]["by_unit"]) == ({"events": None, "declared": None}, {"team": {"team": None}})
    # each lane's 1.5e308 s is a double still; its share of an unknown total is unknown
    assert m["agent_share"]["lead"] == {"events": 2, "share": 0.5, "busy_s": 1.5e308, "share_s": None}
    assert m["notes"] == [
        {"key": key, "why": NOT_FINITE}
        for key in ("/total_work_s", "/parallelism_speedup", "/costs/tokens/events", "/rewards/by_unit/team/team")
    ]
    text = run("trace", "metrics", "big.json", cwd=tmp_path).output
    assert "inf" not in text and "nan" not in text
    assert "): n/a of work, 1.5e+308 on the critical path, speedup n/a\n" in text
    assert text.endswith(
        f"notes (measures shown as n/a):\n  /total_work_s: {NOT_FINITE}\n  /parallelism_speedup: {NOT_FINITE}\n"
        f"  /costs/tokens/events: {NOT_FINITE}\n  /rewards/by_unit/team/team: {NOT_FINITE}\n"
    )


def test_a_ratio_over_a_near_zero_critical_path_is_null_with_a_note(run, tmp_path):
    """A critical path of 5e-324 s (the smallest double) under 1e300 s of work: the
    speedup divides past a double's range."""
    _write_trace(
        tmp_path / "ratio.json",
        [
            {"id": "a", "t": 0, "type": "orchestrator_decision", "agent": "lead"},
            {"id": "b", "t": 5e-324, "type": "message", "agent": "lead", "to": "w"},
            {"id": "c", "t": 0, "type": "message", "agent": "w"},
            {"id": "d", "t": 1e300, "type": "stop", "agent": "w"},
        ],
        [{"src": "a", "dst": "b", "type": "causal"}],
    )
    m = _strict_json(run("trace", "metrics", "ratio.json", "--format", "json", cwd=tmp_path).output)
    assert (m["total_work_s"], m["critical_path_s"], m["parallelism_speedup"]) == (1e300, 0.0, None)
    assert m["notes"] == [*NO_COSTS, {"key": "/parallelism_speedup", "why": NOT_FINITE}]


def test_a_trace_of_ordinary_numbers_has_no_notes(run, tmp_path):
    assert measure(run, FIXTURES / "valid.json", tmp_path)["notes"] == []
    assert "notes" not in run("trace", "metrics", str(FIXTURES / "valid.json"), cwd=tmp_path).output


@pytest.mark.slow
def test_sums_past_a_doubles_range_print_no_warning(tmp_path):
    """numpy reports an overflow as a RuntimeWarning on stderr, with a line of its own source:
    validate and metrics say what overflowed in their own words and print nothing else. Run
    as processes, since pytest would catch the warnings."""
    costly = [
        {"id": "a", "t": 0, "type": "orchestrator_decision", "agent": "lead", "cost": {"tokens": 1e308, "seconds": 1e308}},
        {"id": "b", "t": 1, "type": "stop", "agent": "lead", "cost": {"tokens": 1e308, "seconds": 1e308}},
    ]
    _write_trace(tmp_path / "costly.json", costly, [{"src": "a", "dst": "b", "type": "causal"}])
    declared = {
        "schema": SCHEMA_ID,
        "trace_id": "declared",
        "events": costly,
        "edges": [],
        "costs": {"tokens": 1e308, "compute_s": 5},
    }
    (tmp_path / "declared.json").write_text(json.dumps(declared), encoding="utf-8")

    def paperpool(*args):
        done = subprocess.run(
            [sys.executable, "-m", "paperpool", "trace", *args], cwd=tmp_path, capture_output=True, text=True, check=False
        )
        return done.returncode, done.stdout, done.stderr

    assert paperpool("validate", "costly.json") == (0, "costly.json: valid: 2 events, 1 edge.\n", "")
    code, out, err = paperpool("metrics", "costly.json", "--format", "json")
    assert (code, err) == (0, "")
    assert _strict_json(out)["notes"] == [
        {"key": key, "why": NOT_FINITE} for key in ("/costs/tokens/events", "/costs/seconds/events")
    ]
    assert paperpool("validate", "declared.json") == (
        1,
        (
            "declared.json: /costs/compute_s: the events' costs add up to more than 1.8e308 s, more than the declared 5 s of compute; "
            "correct the total or the events' costs\n"
            "declared.json: /costs/tokens: the events' costs add up to more than 1.8e308 tokens, more than the declared 1e+308; "
            "correct the total or the events' costs\n"
            "declared.json: invalid, 2 problems.\n"
        ),
        "",
    )
    code, out, err = paperpool("metrics", "declared.json")
    assert (code, out) == (1, "") and "Warning" not in err and err.endswith("paperpool trace validate declared.json\n")


@pytest.mark.filterwarnings("error")
def test_times_far_apart_resolved_apart_warn_nothing():
    """The second process finds the critical path before the schema has judged the times:
    -1e308 and 1e308 are 2e308 apart, past a double's range, and say so with no warning
    (which would reach the terminal from the child)."""
    data = json.dumps(
        {"events": [{"id": "a", "t": -1e308}, {"id": "b", "t": 1e308}], "edges": [{"src": "a", "dst": "b", "type": "causal"}]}
    ).encode()
    assert links.resolve(data).chain == (2, float("inf"), 1)


def _six_events_without_edges(path, **top) -> None:
    """Six events, two per agent, and no edge: nothing says what waits on what."""
    events = [{"id": f"e{k}", "t": k, "type": "message", "agent": f"agent_{k // 2}"} for k in range(6)]
    path.write_text(json.dumps({"schema": SCHEMA_ID, "trace_id": "six", **top, "events": events, "edges": []}), encoding="utf-8")


NO_DEPENDENCIES = (
    "unknown: the trace has no dependencies (no causal, spawn, return or aggregate edge, and no other edge "
    "forward in time), so no chain of dependencies, and no critical path, can be known; add its edges"
)


def test_without_dependencies_the_critical_path_is_unknown(run, tmp_path):
    """Not a speedup of 6 for six events that each were a chain of their own."""
    _six_events_without_edges(tmp_path / "six.json")
    m = _strict_json(run("trace", "metrics", "six.json", "--format", "json", cwd=tmp_path).output)
    assert (m["total_work_events"], m["critical_path_events"], m["parallelism_speedup_events"]) == (6, None, None)
    assert (m["total_work_s"], m["critical_path_s"], m["parallelism_speedup"]) == (3, None, None)  # three lanes of 1
    assert m["notes"] == NO_COSTS + [
        {"key": key, "why": NO_DEPENDENCIES}
        for key in ("/critical_path_events", "/parallelism_speedup_events", "/critical_path_s", "/parallelism_speedup")
    ]
    text = run("trace", "metrics", "six.json", cwd=tmp_path).output.splitlines()
    assert text[12:14] == [
        "  in events: 6 of work, n/a on the critical path, speedup n/a",
        ("  in time (unit not declared: time_unit would say seconds or steps): 3 of work, n/a on the critical path, speedup n/a"),
    ]


def test_one_edge_forward_in_time_is_a_dependency(run, tmp_path):
    _six_events_without_edges(tmp_path / "six.json")
    trace = json.loads((tmp_path / "six.json").read_text(encoding="utf-8"))
    trace["edges"] = [{"src": "e0", "dst": "e5", "type": "message"}]  # no ordering edge, but forward in time
    (tmp_path / "six.json").write_text(json.dumps(trace), encoding="utf-8")
    m = measure(run, tmp_path / "six.json", tmp_path)
    assert (m["critical_path_events"], m["parallelism_speedup_events"], m["critical_path_s"], m["notes"]) == (2, 3, 5, NO_COSTS)


def test_the_events_costs_are_unknown_when_no_event_declares_one(run, tmp_path):
    """A trace whose events say nothing of what they cost has no known token or second
    sum: null with a note, never 0; one cost anywhere makes the sums known."""
    _six_events_without_edges(tmp_path / "six.json")
    m = measure(run, tmp_path / "six.json", tmp_path)
    assert (m["costs"]["tokens"]["events"], m["costs"]["seconds"]["events"]) == (None, None)
    assert m["notes"][:2] == NO_COSTS
    trace = json.loads((tmp_path / "six.json").read_text(encoding="utf-8"))
    trace["events"][2]["cost"] = {"seconds": 1.5}
    (tmp_path / "six.json").write_text(json.dumps(trace), encoding="utf-8")
    m = measure(run, tmp_path / "six.json", tmp_path)
    assert (m["costs"]["tokens"]["events"], m["costs"]["seconds"]["events"]) == (0.0, 1.5)
    assert [note["key"] for note in m["notes"]][:1] != ["/costs/tokens/events"]


@pytest.mark.parametrize(
    ("unit", "in_time", "stopped", "busy"),
    [
        (
            "seconds",
            "  in time (seconds): 12 s of work, 6 s on the critical path, speedup 2",
            "  stopped: yes, at t=6 s",
            "busy s",
        ),
        (
            "steps",
            "  in time (steps): 12 steps of work, 6 steps on the critical path, speedup 2",
            "  stopped: yes, at t=6 steps",
            "busy steps",
        ),
    ],
)
def test_times_are_given_in_the_declared_unit(run, tmp_path, unit, in_time, stopped, busy):
    trace = json.loads((FIXTURES / "valid.json").read_text(encoding="utf-8"))
    (tmp_path / "t.json").write_text(json.dumps({**trace, "time_unit": unit}), encoding="utf-8")
    text = run("trace", "metrics", "t.json", cwd=tmp_path).output.splitlines()
    assert (text[4], text[13]) == (stopped, in_time)
    assert f"agents (3 agents): events, share, {busy}, share of time" in text
    assert measure(run, tmp_path / "t.json", tmp_path)["time_unit"] == unit


def test_an_undeclared_unit_is_said_so(run, tmp_path):
    assert measure(run, FIXTURES / "valid.json", tmp_path)["time_unit"] is None
    text = run("trace", "metrics", str(FIXTURES / "valid.json"), cwd=tmp_path).output
    assert "  stopped: yes, at t=6\n" in text and "agents (3 agents): events, share, busy time, share of time\n" in text


def test_a_unit_the_schema_does_not_know_is_refused(run, tmp_path):
    trace = json.loads((FIXTURES / "valid.json").read_text(encoding="utf-8"))
    (tmp_path / "t.json").write_text(json.dumps({**trace, "time_unit": "minutes"}), encoding="utf-8")
    result = run("trace", "validate", "t.json", cwd=tmp_path)
    assert (result.exit_code, result.output.splitlines()[0]) == (
        1,
        't.json: /time_unit: "minutes" is not a known value of time_unit; use one of seconds, steps',
    )


def test_a_hierarchy_as_deep_as_synth_builds_is_valid_and_a_deeper_one_is_one_line(tmp_path):
    """Each level of a hierarchy is a call within the one above: --depth 2,000 ended in a
    RecursionError's traceback; now past MAX_DEPTH it is refused in one line."""
    deepest = synth.generate(2 * synth.MAX_DEPTH + 10, "hierarchical", fanout=1, depth=synth.MAX_DEPTH)
    assert check_trace(deepest).valid
    done = subprocess.run(
        [sys.executable, "-m", "paperpool.traces.synth", "--events", "5000", "--depth", "2000", "--fanout", "1", "-o", "s.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        1,
        "",
        (
            "Error: Invalid value for '--depth': a hierarchy of 2,000 levels is deeper than the 500 synth builds; give --depth "
            "500 or fewer (see python -m paperpool.traces.synth --help)\n"
        ),
    )
    assert not (tmp_path / "s.json").exists()


@pytest.mark.slow
def test_the_command_line_ends_without_freeing_the_trace_and_loses_no_output(run, tmp_path):
    """`trace metrics FILE` as a process ends with os._exit once its report is flushed
    (context.end_unfreed: a parsed trace of millions of objects took 0.14 s to free):
    what it prints, through a pipe, is the whole report, and its exit status 0."""
    path = FIXTURES / "valid.json"
    expected = run("trace", "metrics", str(path), "--format", "json", cwd=tmp_path).output
    done = subprocess.run(
        [sys.executable, "-m", "paperpool", "trace", "metrics", str(path), "--format", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, expected, "")
