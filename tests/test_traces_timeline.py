"""The gallery's timeline drawing: well-formed, deterministic, escaped, theme-neutral."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from paperpool.problems import PaperpoolError
from paperpool.traces import mapping, metrics, synth, timeline
from paperpool.traces.validation import check_trace

from .conftest import REPO

SVG = "{http://www.w3.org/2000/svg}"
EXAMPLES = sorted((REPO / "traces").glob("*.json"))


def load(name: str) -> dict:
    return json.loads((REPO / "traces" / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: path.stem)
def test_every_example_draws_as_well_formed_svg(path):
    trace = json.loads(path.read_text(encoding="utf-8"))
    drawing = timeline.draw(trace)
    root = ET.fromstring(drawing)
    assert root.tag == f"{SVG}svg" and root.get("fill") == "currentColor"
    assert drawing == timeline.draw(json.loads(path.read_text(encoding="utf-8")))  # the same bytes every time


def test_lanes_spawn_and_return_arrows():
    drawing = timeline.draw(load("centralized-parallel-readers.json"))
    root = ET.fromstring(drawing)
    # lane labels: right-aligned text holding the full name as a tooltip, then the name
    lanes = [text.find(f"{SVG}title").tail for text in root.iter(f"{SVG}text") if text.get("text-anchor") == "end"
             and text.find(f"{SVG}title") is not None]
    assert lanes == ["lead", "reader_1", "reader_2", "reader_3"]
    arrows = [line.find(f"{SVG}title").text for line in root.iter(f"{SVG}line") if line.get("marker-end")]
    assert arrows == ["spawn"] * 3 + ["return"] * 3


def test_names_are_escaped():
    trace = load("debate-two-rounds.json")
    for event in trace["events"]:
        if event["agent"] == "pro":
            event["agent"] = "pro <b>&amp;</b>"
        if event.get("to") == "pro":
            event["to"] = "pro <b>&amp;</b>"
    trace["trace_id"] = 'debate "quoted" <id>'
    drawing = timeline.draw(trace)
    ET.fromstring(drawing)  # still well-formed XML
    assert "<b>" not in drawing and "pro &lt;b&gt;&amp;amp;&lt;/b&gt;" in drawing
    assert "debate &quot;quoted&quot; &lt;id&gt;" in drawing


def test_control_characters_in_names_keep_the_drawing_well_formed():
    """XML allows no control character but tab and line breaks: a name holding one is
    drawn as a message shows it, and right-to-left overrides are dropped, as on the pages."""
    trace = load("debate-two-rounds.json")
    trace["trace_id"] = "debate\x1b[2J\x01\u202e"
    trace = json.loads(json.dumps(trace).replace('"con"', json.dumps("con\x0b\x1b]0;x\x07")))
    drawing = timeline.draw(trace)
    root = ET.fromstring(drawing)
    assert root.find(f"{SVG}title").text == "Timeline of trace debate\\x1b[2J\\x01 (debate)"
    assert "<title>con\\x0b\\x1b]0;x\\x07</title>" in drawing


def test_ids_differ_between_traces():
    first = timeline.draw(load("debate-two-rounds.json"))
    second = timeline.draw(load("swarm-six-workers.json"))
    ids = lambda drawing: {element.get("id") for element in ET.fromstring(drawing).iter() if element.get("id")}
    assert ids(first) and not ids(first) & ids(second)


def test_a_crowd_of_agents_is_summed_up():
    trace = synth.generate(600, "swarm", fanout=50, depth=1, seed=2)
    checked = check_trace(trace)
    agents = metrics.compute(checked.index, checked.top, mapping.default())["agents"]
    drawing = timeline.draw(trace)
    assert agents > timeline.MAX_LANES
    assert f"and {agents - timeline.MAX_LANES} more agents not drawn" in drawing
    assert drawing.count('text-anchor="end"><title>') == timeline.MAX_LANES


def test_an_invalid_trace_is_not_drawn():
    trace = load("debate-two-rounds.json")
    trace["edges"].append({"src": "a1", "dst": "d1", "type": "causal"})
    with pytest.raises(PaperpoolError, match="is not valid"):
        timeline.draw(trace)
