"""The gallery's timeline drawing: well-formed, deterministic, escaped, theme-neutral."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from paperpool.files.problems import PaperpoolError
from paperpool.traces import mapping, metrics, synth, timeline
from paperpool.traces.validation import check_trace

from ..conftest import REPO
from .artifact_traces import ARTIFACT_ASKS

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
    lanes = [
        text.find(f"{SVG}title").tail
        for text in root.iter(f"{SVG}text")
        if text.get("text-anchor") == "end" and text.find(f"{SVG}title") is not None
    ]
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

    def ids(drawing):
        return {element.get("id") for element in ET.fromstring(drawing).iter() if element.get("id")}

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


def _ticks(drawing: str) -> tuple[list[str], str]:
    root = ET.fromstring(drawing)
    texts = list(root.iter(f"{SVG}text"))
    ticks = [text.text for text in texts if text.get("text-anchor") == "middle"]
    label = next(text.text for text in texts if text.get("text-anchor") == "end" and text.text and text.text.startswith("t"))
    return ticks, label


def test_time_runs_from_the_start_of_the_run():
    """The converted OpenTelemetry run's first event comes at t=1.9 (the lead's first model
    call ends then): its axis still starts at 0, ticked at round numbers."""
    trace = load("research-team-otlp.json")
    assert min(event["t"] for event in trace["events"]) == 1.9
    assert _ticks(timeline.draw(trace)) == (["0", "5", "10", "15"], "t (s)")
    first = min(trace["events"], key=lambda event: event["t"])
    marks = [
        shape
        for shape in ET.fromstring(timeline.draw(trace)).iter()
        if shape.find(f"{SVG}title") is not None and (shape.find(f"{SVG}title").text or "").endswith(" at t=1.9")
    ]
    assert first["type"] == "orchestrator_decision" and len(marks) == 1
    # the mark stands 1.9 / 15.2 of the way along the plot, not at its left end
    plot = timeline.WIDTH - timeline.LABELS - timeline.RIGHT
    assert marks[0].get("points").split(",")[0] == str(round(timeline.LABELS + 1.9 / 15.2 * plot, 1))


def test_the_axis_names_the_traces_time_unit():
    trace = load("debate-two-rounds.json")
    assert _ticks(timeline.draw(trace)) == (["0", "2", "4", "6"], "t (s)")
    trace["time_unit"] = "steps"
    assert _ticks(timeline.draw(trace))[1] == "t (steps)"
    del trace["time_unit"]
    assert _ticks(timeline.draw(trace))[1] == "t"  # no unit drawn that the trace does not declare


def test_readable_names():
    trace = load("research-team-otlp.json")
    assert trace["trace_id"] == "7e5ea7c4000000000000000000000001"
    assert timeline.readable_name(trace, "research-team-otlp") == "research-team-otlp"  # not the hex id
    assert timeline.readable_name({**trace, "trace_id": "1b4e28ba-2fa1-11d2-883f-0016d3cca427"}, "file") == "file"
    assert timeline.readable_name({**trace, "title": "Literature review by a research team"}, "file") == (
        "Literature review by a research team"
    )
    assert timeline.readable_name(load("swarm-six-workers.json"), "file") == "example-swarm"


def test_the_gallery_names_every_shipped_trace_readably():
    from paperpool.registry import load_registry
    from paperpool.traces.site.gallery import gallery

    registry, problems = load_registry(REPO)
    assert problems == []
    cards = gallery(registry)
    assert [card.name for card in cards] == [
        "example-centralized-readers",
        "example-debate",
        "example-hierarchical",
        "example-planner-executor-critic",
        "research-team-otlp",
        "example-swarm",
        "Who&When algorithm-generated 1: This spreadsheet contains a list of clients for a retractable awnin…",
        "Who&When algorithm-generated 10: As of the 2020 census, what was the population difference between…",
        "Who&When hand-crafted 14: What percentage of the total penguin population according to the upper es…",
    ]
    assert not any(timeline.OPAQUE_ID.fullmatch(card.name) for card in cards)
    otlp = next(card for card in cards if card.file == "traces/research-team-otlp.json")
    assert otlp.trace_id == "7e5ea7c4000000000000000000000001"
    assert "<title id=" in otlp.svg and "Timeline of trace research-team-otlp (centralized)</title>" in otlp.svg
    assert otlp.rows[8:10] == [("Critical path (s)", "13.3"), ("Total work (s)", "26.5")]
    # the converted Who&When logs have a title, and count steps
    titled = [card for card in cards if load(card.file.split("/", 1)[1]).get("title")]
    assert len(titled) == 3 and all(card.name == load(card.file.split("/", 1)[1])["title"] for card in titled)
    assert all([label for label, _ in card.rows[8:10]] == ["Critical path (steps)", "Total work (steps)"] for card in titled)


@pytest.mark.parametrize("latest", [3e-323, 5e-324, 1e-300])
def test_a_trace_whose_latest_time_is_subnormal_draws(latest):
    """A valid trace ending at 3e-323 (issue 39's fresh review: the axis found no step for
    a fifth of it, whose power of ten is 0.0, and build ended in an internal error)."""
    trace = load("debate-two-rounds.json")
    for number, event in enumerate(trace["events"]):
        event["t"] = latest if number == len(trace["events"]) - 1 else 0
    assert check_trace(trace).valid
    assert ET.fromstring(timeline.draw(trace)).tag == f"{SVG}svg"


def _answered(results: int, caller: str, times=None) -> dict:
    """One tool_call by `caller`, answered by `results` tool_results (at t=1, or at the times given)."""
    events = [{"id": "c", "t": 0, "type": "tool_call", "agent": caller, "tool": "x"}]
    events += [
        {"id": f"r{k}", "t": 1 if times is None else times[k], "type": "tool_result", "agent": "r", "tool": "x", "call": "c"}
        for k in range(results)
    ]
    return {"trace_id": "answered", "events": events, "edges": []} | ARTIFACT_ASKS


def test_events_on_one_pixel_are_one_mark_and_a_long_name_is_quoted_cut():
    """A caller of 100,000 characters answered 6,000 times at one time: one mark that says
    how many, the name quoted to 100 characters (each result's title quoted it whole, 1.2 GB)."""
    drawing = timeline.draw(_answered(6_000, "A" * 100_000))
    titles = [title.text for title in ET.fromstring(drawing).iter(f"{SVG}title")]
    assert f"6,000 tool_result events by {'A' * 100}… (99,900 characters more) at t=1" in titles
    assert len(drawing) < 5_000


def test_a_drawing_holds_at_most_max_marks_and_says_how_many_events_it_left_out():
    """Messages of eight agents, each at its own time: more marks than MAX_MARKS (a lane
    is 590 pixels wide). The earliest MAX_MARKS are drawn, and a note counts the events
    left out."""
    lanes, each = 8, 1_000
    events = [
        {"id": f"m{k}", "t": k, "type": "message", "agent": f"a{k % lanes}", "to": f"a{(k + 1) % lanes}"}
        for k in range(lanes * each)
    ]
    root = ET.fromstring(timeline.draw({"trace_id": "spread", "events": events, "edges": []} | ARTIFACT_ASKS))
    shapes = [shape for shape in root if shape.tag in (f"{SVG}circle", f"{SVG}rect", f"{SVG}polygon")]
    titles = [shape.find(f"{SVG}title") for shape in shapes]
    marks = [title.text for title in titles if title is not None and " by " in title.text]  # not the legend's
    assert len(marks) == timeline.MAX_MARKS
    drawn = sum(int(title.split()[0].replace(",", "")) if title[0].isdigit() else 1 for title in marks)
    notes = [text.text for text in root.iter(f"{SVG}text") if text.text and "not drawn" in text.text]
    assert notes == [f"and {lanes * each - drawn:,} more events not drawn"]
