"""A key given twice in one object of a trace file is refused by its JSON pointer, however
the file is read (whole, with its links resolved apart, in chunks), and a trace without
one is told so by counting, without reading it again (traces/duplicates.py)."""

from __future__ import annotations

import json
import re

import orjson
import pytest

from paperpool.traces import duplicates, links, synth, validation
from paperpool.traces.index import Builder
from paperpool.traces.schema import schema_id

WAYS = {
    "whole": {"apart_above": 2**62},
    "apart": {"apart_above": 0},
    "chunked": {"apart_above": 2**62, "chunk_above": 0, "chunk": 2},
    "chunked apart": {"apart_above": 0, "chunk_above": 0, "chunk": 2},
}
WHY = "JSON readers differ on which value they keep: keep one of them"
EVENT = '{"id": "e1", "t": 0, "type": "orchestrator_decision", "agent": "lead"'
STOP = '{"id": "e2", "t": 1, "type": "stop", "agent": "lead"}'
EDGE = '{"src": "e1", "dst": "e2", "type": "causal"}'


def _trace(top: str = "", event: str = "", edge: str = "") -> str:
    return f'{{"schema": "{schema_id()}", "trace_id": "t"{top}, "events": [{EVENT}{event}}}, {STOP}], "edges": [{EDGE[:-1]}{edge}}}]}}'


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ('{"trace_id": "a", "trace_id": "b", "events": [], "edges": []}', ["/trace_id: 'trace_id' is given twice in one object"]),
        (_trace(event=', "agent": "worker"'), ["/events/0/agent: 'agent' is given twice in one object"]),
        (
            _trace(event=', "cost": {"tokens": 1, "tokens": 100, "tokens": 2}'),
            ["/events/0/cost/tokens: 'tokens' is given 3 times in one object"],
        ),
        (_trace(edge=', "dst": "e1"'), ["/edges/0/dst: 'dst' is given twice in one object"]),
        (_trace(top=', "costs": {"tokens": 1, "tokens": 2}'), ["/costs/tokens: 'tokens' is given twice in one object"]),
        (_trace(top=', "events": []'), ["/events: 'events' is given twice in one object"]),
        (
            _trace(event=', "x_note": {"a": {"b": 1, "b": 2}}', edge=', "x_w": [{"k": 1, "k": 1}]'),
            ["/events/0/x_note/a/b: 'b' is given twice in one object", "/edges/0/x_w/0/k: 'k' is given twice in one object"],
        ),
        # each hides a key from one count: colons in text (\" : and a colon written \u003a) are no keys
        (
            _trace(event=', "reason": "a\\" : b\\": c", "reason": "d"'),
            ["/events/0/reason: 'reason' is given twice in one object"],
        ),
        (
            _trace(event=', "reason": "\\u003a\\u003A", "reason": "d"'),
            ["/events/0/reason: 'reason' is given twice in one object"],
        ),
        ('{"trace_id": "t", "events": {"a": 1, "a": 2}}', ["/events/a: 'a' is given twice in one object"]),
        ('[{"a": 1, "a": 2}]', ["/0/a: 'a' is given twice in one object"]),
    ],
)
def test_a_key_given_twice_is_refused_by_its_pointer_however_the_file_is_read(tmp_path, text, lines):
    path = tmp_path / "trace.json"
    path.write_text(text, encoding="utf-8")
    expected = (
        False,
        [f"trace.json: {line}; {WHY}" for line in lines]
        + [f"trace.json: invalid, {len(lines)} problem{'s' * (len(lines) > 1)}."],
    )
    for way, options in WAYS.items():
        assert validation.report("trace.json", path, **options) == expected, way


@pytest.mark.slow
def test_a_key_given_twice_deep_in_a_large_trace_is_found(tmp_path):
    path = tmp_path / "trace.json"
    synth.write(synth.generate(3000, "hierarchical", seed=3), path)
    text = path.read_text(encoding="utf-8")
    at = re.search(r'"id": ?"e1500"', text).start()
    path.write_text(text[:at] + '"role": "x", ' + text[at:], encoding="utf-8")
    position = next(k for k, event in enumerate(orjson.loads(path.read_bytes())["events"]) if event["id"] == "e1500")
    for way, options in WAYS.items():
        valid, lines = validation.report("trace.json", path, **(options | {"chunk": 700} if "chunk" in options else options))
        assert not valid and lines[0] == f"trace.json: /events/{position}/role: 'role' is given twice in one object; {WHY}", way


def test_values_that_look_like_keys_are_not_keys(tmp_path):
    """Colons after quotes and white space inside text, escaped colons, keys with white
    space before their colon, deep nesting: all read, nothing refused."""
    deep = '{"k": 1}'
    for _ in range(1000):
        deep = f"[{deep}]"
    text = _trace(
        top=f', "x_deep": {deep}, "x_spaced" :\n {{"a" : 1, "b"\t:2}}',
        event=', "reason": "a\\" : b \\u003a \\": c", "x_k": {"a\\"": 1, "a": 2}',
    )
    path = tmp_path / "trace.json"
    path.write_text(text, encoding="utf-8")
    for way, options in WAYS.items():
        assert validation.report("trace.json", path, **options) == (True, ["trace.json: valid: 2 events, 1 edge."]), way


def test_an_ordinary_trace_is_cleared_by_counting_alone(tmp_path):
    """What keeps the common case fast: the keys the index counts as it reads the events
    and edges are the most their text can hold, so neither is read again."""
    path = tmp_path / "trace.json"
    synth.write(synth.generate(2000, "planner_executor_critic", seed=4), path)
    data = path.read_bytes()
    trace = orjson.loads(data)
    builder = Builder()
    builder.add_events(trace["events"], 0, set())
    builder.count_edge_keys(trace["edges"], set())
    sections = links._read_sections(data)
    census = duplicates.census(data, {"events": sections.events, "edges": sections.edges})
    every = {name: sum(len(pairs) for pairs in _objects(json.dumps(trace[name]))) for name in ("events", "edges")}
    assert builder.keys == census.at_most == every


def _objects(text: str) -> list:
    found = []
    json.loads(text, object_pairs_hook=lambda pairs: found.append(pairs) or dict(pairs))
    return found


def test_import_otlp_refuses_an_export_that_gives_a_key_twice(run, tmp_path):
    export = {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "0123456789abcdef0123456789abcdef"}]}]}]}
    text = json.dumps(export).replace('"traceId"', '"spanId": "0123456789abcdef", "spanId"')
    (tmp_path / "export.json").write_text(text, encoding="utf-8")
    result = run("trace", "import-otlp", "export.json", "-o", "out.json", cwd=tmp_path)
    line = f"Error: export.json: /resourceSpans/0/scopeSpans/0/spans/0/spanId: 'spanId' is given twice in one object; {WHY}\n"
    assert (result.exit_code, result.output) == (1, line)
    assert not (tmp_path / "out.json").exists()


def test_past_the_cap_the_first_keys_given_twice_are_found_in_document_order():
    """locate stops after the first MOST_PROBLEMS + 1 and finds them in the order they are
    shown in: the schema's top-level fields first, /events/2 before /events/10, a key
    before the keys inside its value."""
    item = '{"k": 0, "k": [{"b": 1, "b": 2}]}'
    text = ('{"x_z": {"a": 1, "a": 2}, "events": [' + ", ".join([item] * 120) + '], "trace_id": "a", "trace_id": "b"}').encode()
    found = [finding.pointer for finding in duplicates.locate(text)]
    assert found == ["/trace_id"] + [pointer for k in range(50) for pointer in (f"/events/{k}/k", f"/events/{k}/k/0/b")]
    in_a_chunk = [finding.pointer for finding in duplicates.locate(b"[" + text + b"]", ["events"], 7)]
    assert in_a_chunk[:3] == ["/events/7/events/0/k", "/events/7/events/0/k/0/b", "/events/7/events/1/k"]  # no top level there


def test_keys_given_twice_a_thousand_levels_down_give_the_first_hundred(run, tmp_path):
    """Past the 255 levels orjson writes back, each object's place was a copy of its path
    and every key given twice was built and sorted (30,000 of them 1,000 levels down took
    2.3 GB); now the place is a link to the parent's, and the walk stops after the first
    hundred and one."""
    objects = "[" + ",".join(['{"a": 0, "a": 0}'] * 3000) + "]"
    path = tmp_path / "deep.json"
    path.write_text(
        '{"trace_id": "t", "task_id": "t", "rewards": {}, "costs": {}, "events": [], "edges": [], "x_a": '
        + "[" * 1000
        + objects
        + "]" * 1000
        + "}",
        encoding="utf-8",
    )
    result = run("trace", "validate", "deep.json", cwd=tmp_path)
    lines = result.output.splitlines()
    deep = "/x_a" + "/0" * 1000
    assert result.exit_code == 1 and len(lines) == 101
    assert lines[:100] == [f"deep.json: {deep}/{k}/a: 'a' is given twice in one object; {WHY}" for k in range(100)]
    assert lines[-1].startswith("deep.json: invalid, more than 100 problems")
