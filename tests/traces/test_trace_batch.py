"""A corpus's rows measured a batch at a time (batch.py) are the rows each trace gets on
its own (rows.measure, the single-trace path). The measures are written once
(measures.py, a single trace being a batch of one); what remains two, and why these
checks remain: the reading (batch.py's compiled columns, for speed, against the index
validation builds) and the rules' checks (the batch's vouching against rules.py's
findings, which say what is wrong). Compared column by column, and type by type, over
real traces (the pool's, the Who&When corpus, the test and hostile traces), synth's
corpora of every topology, traces made at random to reach every rule and measure the
batch computes, and hypothesis's traces, mostly invalid, which the batch must leave to
rows.measure. Each test also checks that the batch measured a good share itself, so
that it cannot pass by handing everything over. Each test runs twice: with the compiled
loops and with their Python versions."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paperpool.traces import artifact, batch, corpus, duplicates, index, measures, paths, rows, schema, synth
from paperpool.traces.mapping import default

from ..conftest import REPO
from .artifact_traces import artifact_traces, paperpool_events

MAPPING = default()
NAMES = [column.name for column in rows.columns(MAPPING)]
SCHEMA_ID = "urn:paperpool:schema:orchestration-trace:1.0.0"


@pytest.fixture(autouse=True, params=["compiled", "python"])
def loops(request, monkeypatch):
    """Every case both ways: with batch.py's per-event loops compiled (_columns.pyx, built
    at install) and with its Python versions, used where no C compiler built them."""
    if request.param == "python":
        for module in (artifact, batch, duplicates, index, measures, paths):
            monkeypatch.setattr(module, "_native", None)
    else:
        assert batch._native is not None, "paperpool/traces/_columns.pyx is not built: install a C compiler, then paperpool"
    return request.param


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b and type(a) is type(b)


def _compare(records: list[corpus.Record], size: int = 64) -> int:
    """Assert that every record's row and problem line are the same both ways; how many
    the batch measured itself."""
    here = 0
    for start in range(0, len(records), size):
        chunk = records[start : start + size]
        measured = batch.measure(chunk, MAPPING)
        alone = [rows.measure(record, MAPPING) for record in chunk]
        assert measured.problems == [one.problem for one in alone if one.problem]
        for k, (record, one) in enumerate(zip(chunk, alone, strict=True)):
            differ = {
                name: (one.row.get(name), measured.table[name][k])
                for name in NAMES
                if not _same(one.row.get(name), measured.table[name][k])
            }
            assert not differ, f"{record.label}: (alone, in a batch) {differ}"
        here += measured.here
    return here


def _lines(path: Path, traces: list) -> list[corpus.Record]:
    path.write_bytes(b"".join((t if isinstance(t, bytes) else orjson.dumps(t)) + b"\n" for t in traces))
    return list(corpus.records([path]))


@pytest.mark.slow
def test_real_traces_have_the_same_rows_in_a_batch():
    inputs = [
        REPO / "traces",
        REPO / "corpora",
        REPO / "tests" / "cases" / "traces",
        REPO / "tests" / "hostile" / "trace-validate",
        REPO / "tests" / "hostile" / "trace-metrics",
    ]
    past_limits = ("blank-lines", "compression-bomb")  # past a corpus's lines, past its compression ratio
    files = [path for path in corpus.expand([str(path) for path in inputs]) if not any(name in path.name for name in past_limits)]
    records = list(corpus.records(files))
    here = _compare(records)
    who_and_when = [r for r in records if r.file.endswith("who-and-when.jsonl.gz")]
    assert len(who_and_when) == 184
    assert here >= len(who_and_when) + 9  # the Who&When corpus, the gallery's nine traces, ...
    assert here < len(records)  # ... but none of the invalid ones


@pytest.mark.parametrize("topology", ["centralized", "planner_executor_critic", "debate", "swarm", "hierarchical"])
def test_synthetic_corpora_have_the_same_rows_in_a_batch(tmp_path, topology):
    traces = [synth.generate(20 + k % 40, topology, fanout=1 + k % 4, depth=1 + k % 3, seed=k) for k in range(40)]
    artifact = [synth.generate(30, topology, seed=k, dialect="artifact") for k in range(5)]  # declares no schema
    records = _lines(tmp_path / "c.jsonl", traces + artifact)
    assert _compare(records) == len(records)  # the artifact's format (its warnings counted) as well (issue 38)


def _made_up(rng: random.Random, k: int) -> dict:
    """A trace of a few agents, made to keep the rules most of the time and to break each
    of them now and then: spawns, tool calls answered by `call`, by an edge or by neither,
    same-time and backward edges, events out of time order, costs with a part missing, declared totals too small,
    decisions the mapping knows or not, rewards on several units and channels."""
    events, edges = [], []
    t = 0.0
    agents = ["lead"]
    last: dict[str, int] = {}

    def add(kind: str, agent: str, **fields) -> int:
        nonlocal t
        t += rng.choice([0.0, 0.0, 0.25, 1.0, 3.5])
        event = {"id": f"e{len(events)}", "t": t, "type": kind, "agent": agent, **fields}
        if rng.random() < 0.6:
            event["cost"] = rng.choice(
                [{"tokens": rng.randint(0, 900), "seconds": rng.random()}, {"tokens": 7}, {"seconds": 0.5}, {}]
            )
        if rng.random() < 0.2:
            event["decision"] = rng.choice(["O1", "O2", "O3", "O4", "O5", "X9"])
        if rng.random() < 0.2:
            event["rewards"] = [
                {
                    "channel": rng.choice(["team", "tool", "judge"]),
                    "unit": rng.choice(["team", "agent", "tool", "token"]),
                    "value": rng.uniform(-1, 1),
                }
                for _ in range(rng.randint(1, 3))
            ]
        events.append(event)
        position = len(events) - 1
        if agent in last and rng.random() < 0.8:
            edges.append({"src": f"e{last[agent]}", "dst": event["id"], "type": "causal"})
        last[agent] = position
        return position

    add("orchestrator_decision", "lead")
    for _ in range(rng.randint(0, 4)):
        parent = rng.choice(agents)
        child = f"w{len(agents)}"
        spawn = add("spawn", parent, to=child)
        edges.append(
            {"src": f"e{spawn}", "dst": f"e{spawn}", "type": "spawn"}
            if rng.random() < 0.02
            else {"src": f"e{spawn}", "dst": f"e{len(events)}", "type": "spawn"}
        )
        agents.append(child)
        add("orchestrator_decision", child)
    for _ in range(rng.randint(1, 25)):
        agent = rng.choice(agents)
        kind = rng.choice(["message", "tool_call", "aggregate", "return", "orchestrator_decision", "safety_event", "spawn"])
        if kind == "tool_call":
            tool = rng.choice(["search", "python"])
            call = add("tool_call", agent, tool=tool)
            how = rng.random()
            answer = {"tool": tool if rng.random() < 0.95 else "other"}
            if how < 0.6:
                answer["call"] = f"e{call}" if rng.random() < 0.97 else "nowhere"
            result = add("tool_result", tool, **answer)
            if 0.6 <= how < 0.9:
                edges.append({"src": f"e{call}", "dst": f"e{result}", "type": "tool_dependency"})
        elif kind in ("message", "return"):
            add(kind, agent, to=rng.choice(agents + ["ghost"] if rng.random() < 0.05 else agents))
        elif kind == "spawn":
            child = f"w{len(agents)}"
            add("spawn", agent, to=child)
            agents.append(child)
        else:
            add(kind, agent)
    if rng.random() < 0.8:
        add("stop", "lead", reason="done")
    for _ in range(rng.randint(0, 4)):  # edges at random: forward, at one time, or backwards
        a, b = rng.randrange(len(events)), rng.randrange(len(events))
        edges.append(
            {
                "src": f"e{min(a, b)}" if rng.random() < 0.9 else f"e{a}",
                "dst": f"e{max(a, b)}" if rng.random() < 0.9 else f"e{b}",
                "type": rng.choice(schema.edge_types()),
            }
        )
    if rng.random() < 0.1:  # written out of time order (the batch's ranks then come from a sort)
        rng.shuffle(events)
    trace = {"schema": SCHEMA_ID, "trace_id": f"made-{k}", "events": events, "edges": edges}
    for field, value in (
        ("task_id", f"task-{k % 3}"),
        ("run", "r"),
        ("step", k),
        ("group", "g"),
        ("time_unit", "seconds"),
        ("topology", "hierarchical"),
    ):
        if rng.random() < 0.7:
            trace[field] = value
    if rng.random() < 0.5:
        spent = sum(e.get("cost", {}).get("tokens", 0) for e in events)
        trace["costs"] = {"tokens": spent * rng.choice([1, 2, 0.5]), "wall_clock_s": rng.choice([1000.0, 0.1])}
    if rng.random() < 0.3:
        trace["rewards"] = {"team": rng.random()}
    return trace


def _event(k: int, t: float, kind: str, agent: str, **fields) -> dict:
    return {"id": f"e{k}", "t": t, "type": kind, "agent": agent, **fields}


CORNERS = [
    # one event: a chain of one, no dependency needed
    {"schema": SCHEMA_ID, "trace_id": "one", "events": [_event(0, 0, "stop", "lead")], "edges": []},
    # two agents that spawn each other at one time: the spawn tree never settles, and is walked
    {
        "schema": SCHEMA_ID,
        "trace_id": "loop",
        "events": [_event(0, 1, "spawn", "a", to="b"), _event(1, 1, "spawn", "b", to="a")],
        "edges": [],
    },
    # a spawn chain deeper than 64 passes of numpy, written latest first: walked
    {
        "schema": SCHEMA_ID,
        "trace_id": "deep",
        "events": [_event(k, k, "spawn", str(k), to=str(k + 1)) for k in range(100)][::-1],
        "edges": [],
    },
    # events at one time, the ordering edge against the file's order
    {
        "schema": SCHEMA_ID,
        "trace_id": "tie",
        "events": [_event(0, 2, "orchestrator_decision", "lead"), _event(1, 2, "stop", "lead")],
        "edges": [{"src": "e1", "dst": "e0", "type": "causal"}],
    },
    # a result answered through an edge only, and one with no call to be found but by its tool
    {
        "schema": SCHEMA_ID,
        "trace_id": "calls",
        "events": [
            _event(0, 0, "tool_call", "lead", tool="search"),
            _event(1, 1, "tool_result", "search", tool="search"),
            _event(2, 2, "tool_call", "lead", tool="python"),
            _event(3, 3, "tool_result", "python", tool="python"),
        ],
        "edges": [{"src": "e0", "dst": "e1", "type": "tool_dependency"}],
    },
]


def test_corner_traces_have_the_same_rows_in_a_batch(tmp_path):
    records = _lines(tmp_path / "corners.jsonl", CORNERS)
    # the batch measures the single event, the loop, the deep chain (measures.py walks
    # them, for one trace or many) and the calls paired by tool name; the tie may hide a
    # cycle, which rules.ordering searches on its own
    assert _compare(records) == 4


def _costed(*costs: dict, **top) -> dict:
    events = [_event(k, k, "message", "a", to="a", cost=cost) for k, cost in enumerate(costs)]
    return {"schema": SCHEMA_ID, "trace_id": "sums", "events": events, "edges": [], **top}


SUMS = [
    # numpy adds 3 values pairwise as ndarray.sum does, np.add.reduceat in another order: 3.396159 against 3.396158
    _costed({"seconds": 0.4184335}, {"seconds": 0.1607393}, {"seconds": 2.8169857}),
    # and the declared total on the edge of what the events add up to: invalid one way, valid the other
    _costed({"seconds": 0.4184335}, {"seconds": 0.1607393}, {"seconds": 2.8169857}, costs={"compute_s": 3.3961584966038414}),
    _costed({"tokens": 2**53}, {"tokens": 1}, {"tokens": 1}),
    _costed({"tokens": -0.0, "seconds": -0.0}),
    # busy times summed over agents: the same three values, one per agent
    {
        "schema": SCHEMA_ID,
        "trace_id": "busy",
        "edges": [],
        "events": [
            _event(0, 0, "message", "A", to="A"),
            _event(1, 0, "message", "B", to="A"),
            _event(2, 0, "message", "C", to="A"),
            _event(3, 0.4184335, "message", "A", to="A"),
            _event(4, 0.1607393, "message", "B", to="A"),
            _event(5, 2.8169857, "message", "C", to="A"),
        ],
    },
    # rewards past a double's range: in one channel, and in two channels of one unit
    {
        "schema": SCHEMA_ID,
        "trace_id": "huge",
        "edges": [],
        "events": [_event(0, 0, "stop", "a", rewards=[{"channel": "team", "unit": "team", "value": 1e308}] * 2)],
    },
    {
        "schema": SCHEMA_ID,
        "trace_id": "huger",
        "edges": [],
        "events": [
            _event(
                0,
                0,
                "stop",
                "a",
                rewards=[{"channel": "c1", "unit": "team", "value": 1e308}, {"channel": "c2", "unit": "team", "value": 1e308}],
            )
        ],
    },
]


def test_sums_are_added_in_the_order_of_the_single_trace_path(tmp_path):
    records = _lines(tmp_path / "sums.jsonl", SUMS)
    assert _compare(records, size=len(records)) == 6  # not the invalid one; the two whose rewards cannot be added up have notes
    measured = batch.measure(records, MAPPING).table
    assert measured["compute_s"][0] == 3.396159 and measured["valid"][1] is False and measured["tokens"][2] == 2.0**53
    assert measured["reward_team"][5:] == [None, None]
    assert "/rewards/by_unit/team: not a finite number" in measured["notes"][6]


@pytest.mark.slow
def test_traces_made_at_random_have_the_same_rows_in_a_batch(tmp_path):
    rng = random.Random(7)
    traces = [_made_up(rng, k) for k in range(600)]
    written = []
    for trace in traces:
        written.append(orjson.dumps(trace))
        if rng.random() < 0.1:  # the same trace laid out by json.dumps: white space before no colon, after each
            written.append(json.dumps(trace, indent=1).replace("\n", "").encode())
        if rng.random() < 0.05:  # a key given twice
            written.append(orjson.dumps(trace).replace(b'"trace_id":', b'"trace_id":"twice","trace_id":', 1))
    records = _lines(tmp_path / "made.jsonl", written)
    here = _compare(records)
    assert 0.3 * len(records) < here < 0.9 * len(records)  # both ways taken often


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(artifact_traces(), min_size=1, max_size=4), st.lists(paperpool_events(), min_size=1, max_size=6), st.booleans())
def test_hypothesis_traces_have_the_same_rows_in_a_batch(tmp_path_factory, artifacts, events, declared):
    made = [{**trace, "schema": SCHEMA_ID} if declared else trace for trace in artifacts]
    made.append({"schema": SCHEMA_ID, "trace_id": "p", "events": events, "edges": []})
    try:
        lines = [orjson.dumps(trace) for trace in made]
    except TypeError:  # an integer orjson cannot write
        return
    _compare(_lines(tmp_path_factory.mktemp("h") / "h.jsonl", lines))


def test_the_compiled_reader_counts_the_keys_the_python_one_counts(loops, tmp_path):
    """A trace whose keys are fewer than its text's colons after a quote (one given twice)
    is refused both ways; a trace with keys the reader does not count (an object in an
    x_ field) is taken after the exact check."""
    trace = synth.generate(10, "centralized", seed=3)
    text = orjson.dumps(trace)
    twice = text.replace(b'"agent":', b'"agent":"x","agent":', 1)
    nested = orjson.dumps(trace | {"events": [trace["events"][0] | {"x_note": {"a": 1, "b": 2}}] + trace["events"][1:]})
    records = _lines(tmp_path / "c.jsonl", [text, twice, nested])
    measured = batch.measure(records, MAPPING)
    assert measured.table["valid"] == [True, False, True]
    assert measured.here == 2
    assert measured.problems[0].startswith(f"{records[1].label}: ")
    assert "given twice" in measured.problems[0] or "twice" in measured.problems[0]


def test_short_lines_alike_are_measured_once_and_named_each_as_itself(tmp_path):
    """A short line measured once for its copies in a batch (a million lines of `{}` took a
    minute): each copy's row and problem line are its own, as measured alone."""
    path = tmp_path / "alike.jsonl"
    path.write_bytes(b"{}\n" * 5 + b'{"trace_id": 1}\n' * 3 + b"[]\n{}\n")
    records = list(corpus.records([path]))
    assert _compare(records, size=len(records)) == 0
    assert [row.line for row in records] == list(range(1, 11))


def test_a_short_file_is_measured_as_itself_whatever_came_before(tmp_path):
    """Round thirteen's review: a short file measured once for its copies was named in the
    next one's conversion hint, and a line's wording reached a file with the same bytes
    (and a file's a line). Each file, and each line after a file, is now its own."""
    export = (
        b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"7e5ea7c4000000000000000000000001",'
        b'"spanId":"0000000000000001","name":"a","startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]}]}'
    )
    cut = b'{"trace_id": "x", "events": [\n'
    for name, data in (("y1.json", export), ("y2.json", export), ("b.json", cut), ("c.json", cut)):
        (tmp_path / name).write_bytes(data)
    (tmp_path / "a.jsonl").write_bytes(cut)
    names = ["y1.json", "y2.json", "a.jsonl", "b.json", "c.json", "a.jsonl"]
    records = list(corpus.records([tmp_path / name for name in names]))
    _compare(records, size=len(records))
    problems = batch.measure(records, MAPPING).problems
    assert "y2.json -o" in problems[1] and "truncated; export or copy it again" in problems[3]


def test_a_field_nested_past_the_schemas_depth_is_read_alike_both_ways(tmp_path):
    """Round fourteen: a trace without a schema whose event `cost`, `rewards` or `call`
    (anything, in the artifact's format) nests 900 levels deep was invalid alone (wording
    its warning asked jsonschema-rs for errors it cannot give that deep) and valid in a
    batch. Both now warn that paperpool does not read it."""
    deep = 1
    for _ in range(900):
        deep = [deep]
    traces = [
        {
            "trace_id": f"t{name}",
            "task_id": "t",
            "rewards": {},
            "costs": {},
            "events": [{"id": "e", "t": 0, "type": "orchestrator_decision", "agent": "lead", name: deep}],
            "edges": [],
        }
        for name in ("cost", "rewards", "call")
    ]
    records = _lines(tmp_path / "deep.jsonl", [json.dumps(trace).encode() for trace in traces])  # (orjson writes 255 levels)
    assert _compare(records, size=len(records)) == 3
    assert batch.measure(records, MAPPING).table["warnings"] == [1, 1, 1]


TOOLS = ["search", "python", "", "it's a b'c", "two words", "'quoted'"]


def _by_tool(rng: random.Random, k: int, declared: bool) -> dict:
    """A trace of tool calls and results, most results left to pair by tool name: no
    `call`, and no edge into them or one from a call of another tool. Some answer no call
    (a call of their tool only later, at the same time later in the file, or none); tools
    unnamed, or named with quotes and spaces, whose words the warnings are counted by."""
    events, edges = [], []
    t = 0.0
    for position in range(rng.randint(1, 40)):
        t += rng.choice([0.0, 0.0, 0.5, 1.0])
        kind = rng.choice(["tool_call", "tool_call", "tool_result", "message"])
        event = _event(position, t, kind, rng.choice(["lead", "worker"]))
        if kind != "message" and rng.random() < 0.9:
            event["tool"] = rng.choice(TOOLS)
        if kind == "tool_result" and rng.random() < 0.1:
            calls = [e["id"] for e in events if e["type"] == "tool_call"]
            if calls:
                edges.append({"src": rng.choice(calls), "dst": event["id"], "type": "tool_dependency"})
        events.append(event)
    if rng.random() < 0.05:  # more unanswered results than are worded: a no-tool one past them
        at = len(events)
        events += [_event(at + j, t + 1, "tool_result", "w", tool="never") for j in range(schema.MOST_PROBLEMS + 3)]
        events.append(_event(len(events), t + 2, "tool_result", "w"))
    trace = {"trace_id": f"tools-{k}", "events": events, "edges": edges}
    if declared:
        return trace | {"schema": SCHEMA_ID}
    return trace | {"task_id": "t", "rewards": {}, "costs": {}}


def test_results_paired_by_tool_name_and_results_answering_none_in_a_batch(tmp_path):
    """Issue 38: a result left to pair by tool name, and one answering no call (a warning
    in the artifact's format, counted as validation counts it: alike words once, the
    first MOST_PROBLEMS + 1 worded), are measured in a batch as alone; an unanswered
    result in paperpool's format is an error, which rows.measure words."""
    rng = random.Random(38)
    traces = [_by_tool(rng, k, declared=k % 3 == 0) for k in range(300)]
    records = _lines(tmp_path / "tools.jsonl", traces)
    here = _compare(records)
    measured = batch.measure(records, MAPPING)
    artifact_rows = [k for k, trace in enumerate(traces) if "schema" not in trace]
    assert all(measured.table["valid"][k] for k in artifact_rows)
    assert here >= len(artifact_rows)  # every trace in the artifact's format, warned or not
    warned = [measured.table["warnings"][k] for k in artifact_rows]
    assert max(warned) >= 3 and 0 in warned  # warnings alike and not, and traces with none
    assert not all(measured.table["valid"])  # paperpool's format refuses a result answering nothing
