"""Random traces that the survey artifact's trace_schema.json accepts (hypothesis): every
field it defines, with any value it allows there, and any other field on an event, since
it allows those. tests/source/artifact-trace-schema.json states what it requires."""

from __future__ import annotations

import json

import jsonschema_rs
from hypothesis import strategies as st

from ..conftest import SOURCE

ARTIFACT_SCHEMA = json.loads((SOURCE / "artifact-trace-schema.json").read_text(encoding="utf-8"))
artifact_valid = jsonschema_rs.validator_for(ARTIFACT_SCHEMA).is_valid
_event = ARTIFACT_SCHEMA["$defs"]["event"]["properties"]
EVENT_TYPES = _event["type"]["enum"]
EDGE_TYPES = ARTIFACT_SCHEMA["$defs"]["edge"]["properties"]["type"]["enum"]
TOPOLOGIES = ARTIFACT_SCHEMA["properties"]["topology"]["enum"]
DEFINED = set(_event)  # an event's other fields may hold anything
PAPERPOOL_TYPES = [*EVENT_TYPES, "stop"]

# text of any kind (no lone surrogates: UTF-8 cannot hold them), empty included
text = st.text(st.characters(exclude_categories=("Cs",)), max_size=6)
# names that repeat, so that ids collide and edges find their events; some far too long
IDS = [f"e{k}" for k in range(8)]
names = st.sampled_from(IDS) | st.sampled_from(["lead", "worker", "search", "x" * 250]) | text.filter(bool)
numbers = (
    st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0, 1e308, -1e308, 5e-324])
)
amounts = st.integers(0, 2**64 - 1) | st.floats(min_value=0, allow_nan=False, allow_infinity=False) | st.sampled_from([0, 1e308])
json_values = st.recursive(
    st.none() | st.booleans() | numbers | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
# the fields paperpool's format gives a meaning to, which the artifact's leaves free: shaped
# as paperpool reads them, or not at all
paperpool_fields = {
    "call": names | json_values,
    "decision": st.sampled_from(["O1", "O2", "O3", "O4", "O5"]) | json_values,
    "reason": text | json_values,
    "cost": st.fixed_dictionaries({}, optional={"tokens": numbers, "seconds": numbers}) | json_values,
    "rewards": st.lists(
        st.fixed_dictionaries(
            {
                "channel": st.sampled_from(["team", "tool", "a b"]),
                "unit": st.sampled_from(["team", "agent", "teem"]),
                "value": numbers,
            }
        ),
        max_size=2,
    )
    | json_values,
    "x_note": json_values,
}


@st.composite
def events(draw) -> dict:
    event = {"id": draw(names), "t": draw(amounts), "type": draw(st.sampled_from(EVENT_TYPES)), "agent": draw(names)}
    for field in ("role", "from", "to", "tool", "content_ref"):
        if draw(st.booleans()):
            event[field] = draw(names | text | st.just("y" * 2100))
    if draw(st.booleans()):
        event["trusted"] = draw(st.booleans())
    for field, values in paperpool_fields.items():
        if draw(st.integers(0, 3)) == 0:
            event[field] = draw(values)
    others = draw(
        st.dictionaries(text.filter(lambda key: key not in DEFINED and key not in paperpool_fields), json_values, max_size=2)
    )
    return {**event, **others}


@st.composite
def paperpool_events(draw) -> dict:
    """Events as paperpool's format has them (some of them a little off): its types, stop
    included, each field well or badly made."""
    event = {"id": draw(names), "t": draw(amounts), "type": draw(st.sampled_from(PAPERPOOL_TYPES)), "agent": draw(names)}
    for field in ("role", "from", "to", "tool", "call", "decision", "content_ref", "reason"):
        if draw(st.booleans()):
            event[field] = draw(names | st.just(""))
    for field, values in paperpool_fields.items():
        if draw(st.integers(0, 2)) == 0:
            event[field] = draw(values)
    return event


edges = st.fixed_dictionaries({"src": names, "dst": names, "type": st.sampled_from(EDGE_TYPES)})
amount_fields = st.fixed_dictionaries(
    {"tokens": amounts, "wall_clock_s": amounts},
    optional={"tool_calls": amounts, "messages": amounts, "compute_s": amounts, "usd": amounts},
)


@st.composite
def artifact_traces(draw) -> dict:
    """A trace the artifact accepts: its schema (the test checks that it does), and its
    checker's rules (validate_trace.py), which its schema does not state: each event its
    own id, each edge naming events, no cost negative."""
    trace = {"trace_id": draw(names), "task_id": draw(names)}
    if draw(st.booleans()):
        trace["system"] = draw(text)
    if draw(st.booleans()):
        trace["topology"] = draw(st.sampled_from(TOPOLOGIES))
    trace["events"] = draw(st.lists(events(), min_size=1, max_size=12, unique_by=lambda event: event["id"]))
    ids = st.sampled_from([event["id"] for event in trace["events"]])
    trace["edges"] = [{**edge, "src": draw(ids), "dst": draw(ids)} for edge in draw(st.lists(edges, max_size=14))]
    trace["rewards"] = draw(st.dictionaries(text, numbers, max_size=3))
    costs = draw(amount_fields)
    costs |= draw(st.dictionaries(text.filter(lambda key: key not in costs), amounts, max_size=2))
    trace["costs"] = costs
    if draw(st.booleans()):
        trace["metrics"] = draw(st.dictionaries(text, numbers, max_size=3))
    return trace


# The fields paperpool's reading of the artifact's format asks of every trace besides
# trace_id, events and edges (as its checker, validate_trace.py, does; its schema asks
# tokens and wall_clock_s of costs too): a hand-written trace without `schema` adds these.
ARTIFACT_ASKS = {"task_id": "t", "rewards": {}, "costs": {}}
