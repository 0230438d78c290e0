"""`paperpool trace metrics`: a valid trace's measures (measures.py, where each is
computed and described once) as a report, in text or in JSON.

The json report has these keys, in this order; they are stable: new keys may be added,
none renamed or removed. Times are in the trace's time_unit (the keys keep their _s);
numbers are rounded to 6 decimals; a measure that cannot be known, or is no finite
number, is null and a note says why.

    trace_id, topology       as the trace gives them (topology null when absent)
    events, edges, agents, spawns, max_fanout, depth   as measures.MEASURES describes them
    messages, tool_calls, aggregations   events of those types
    event_types              {event type: count}, every type of the schema in its order
    stopped, stop_t          as measures.MEASURES describes them (stop_t null without a stop)
    subdecisions             {sub-decision id: events that count for it}, in the mapping's order
                             (the mapping is data: see subdecisions.yaml and mapping.py)
    total_work_events, critical_path_events, parallelism_speedup_events   as measures.MEASURES
    total_work_s, critical_path_s, parallelism_speedup, protocol_overhead   as measures.MEASURES
    costs                    {tokens|seconds: {events: the measures tokens and compute_s,
                             declared: the trace's total or null}, tool_calls|messages:
                             {events: counted, declared: ...}, wall_clock_s: {declared: ...}};
                             seconds are declared as costs.compute_s
    rewards                  {declared: the trace's rewards per channel, by_unit: {credit unit:
                             {channel: sum of the events' attached rewards}}}; units in the
                             schema's order, channels in alphabetical order, only those given
    agent_share              {agent: {events, share, busy_s, share_s}} in order of each agent's
                             first event: its events and their share of all events, its busy
                             time (a lane of the timeline) and its share of total_work_s
    notes                    [{key, why}]: each measure given as null, by its JSON pointer
    time_unit                seconds or steps, as the trace declares; null when it declares
                             none (text: "unit not declared")
    warnings                 how many warnings validation gave (a trace that declares no
                             schema: what paperpool's format asks beyond the artifact's); the
                             measures leave out what those name as unreadable
"""

from __future__ import annotations

import heapq
import itertools
import json
import math

import numpy as np

from paperpool.files.problems import plural

from . import measures, schema
from .index import TraceIndex
from .loading import inert, no_gc_pauses
from .mapping import Subdecisions

FORMATS = ("text", "json")


def compute(ix: TraceIndex, trace: dict, mapping: Subdecisions, warnings: int = 0) -> dict:
    """The measures of a trace that validated (its index built and its tool results paired),
    with the number of warnings validation gave: a batch of one (measures.py)."""
    # a large trace's objects are still alive: a collection would walk them all
    with no_gc_pauses():
        m = measures.of_index(ix)
        values = measures.Values(m)
    column = {name: value[0] for name, value in values.columns.items()}
    by_type = dict(zip(schema.event_types(), m.by_type[0].tolist(), strict=True))
    declared = trace.get("costs") or {}
    return {
        "trace_id": trace.get("trace_id"),
        "topology": trace.get("topology"),
        **{key: column[key] for key in ("events", "edges", "agents", "spawns", "max_fanout", "depth")},
        "messages": by_type["message"],
        "tool_calls": by_type["tool_call"],
        "aggregations": by_type["aggregate"],
        "event_types": by_type,
        "stopped": column["stopped"],
        "stop_t": column["stop_t"],
        "subdecisions": dict(zip(mapping.events, m.subdecisions(mapping)[0].tolist(), strict=True)),
        **{key: column[key] for key in ("total_work_events", *measures.CHAIN_KEYS[:2], "total_work_s", *measures.CHAIN_KEYS[2:])},
        "protocol_overhead": column["protocol_overhead"],
        "costs": {
            "tokens": {"events": column["tokens"], "declared": declared.get("tokens")},
            "seconds": {"events": column["compute_s"], "declared": declared.get("compute_s")},
            "wall_clock_s": {"declared": declared.get("wall_clock_s")},
            "tool_calls": {"events": by_type["tool_call"], "declared": declared.get("tool_calls")},
            "messages": {"events": by_type["message"], "declared": declared.get("messages")},
        },
        "rewards": {"declared": dict(trace.get("rewards") or {}), "by_unit": values.by_unit(0)},
        "agent_share": agent_share(m, ix.agent_names),
        "notes": values.notes(0),
        "time_unit": trace.get("time_unit"),
        "warnings": warnings,
    }


def agent_share(m: measures.Measures, names: list[str]) -> dict[str, dict]:
    """Each agent's events and their share of all events, its busy time and its share of
    total_work_s, in order of each agent's first event. Not checked for numbers past a
    double's range: its times are differences of two of the trace's times, and its
    shares are of a finite, non-zero total (and it can hold 100,000 agents)."""
    lanes, n = m.lanes, int(m.batch.n[0])
    total_s = float(lanes.total[0])
    with np.errstate(over="ignore", invalid="ignore"):
        share = _rounded(lanes.events / n) if n else [None] * lanes.name.size
        share_s = _rounded(lanes.busy / total_s) if total_s and math.isfinite(total_s) else [None] * lanes.name.size
    rows = zip(lanes.events.tolist(), share, _rounded(lanes.busy), share_s, strict=True)
    return {
        names[code]: {"events": e, "share": s, "busy_s": b, "share_s": bs}
        for code, (e, s, b, bs) in zip(lanes.name.tolist(), rows, strict=True)
    }


# A report for a terminal lists at most this many agents, and reward channels a line (a trace
# can hold 100,000 of either).
LISTED_AT_MOST = 20


def _channels(channels: dict, show) -> str:
    """The first LISTED_AT_MOST channels and their values, and how many more."""
    listed = ", ".join(f"{k} {show(v)}" for k, v in itertools.islice(channels.items(), LISTED_AT_MOST))
    more = len(channels) - LISTED_AT_MOST
    return listed + (f", and {plural(more, 'more channel')} (--format json gives each)" if more > 0 else "")


def _busiest(agents: dict) -> list[str]:
    """Every agent in order of its first event, or, past LISTED_AT_MOST, the busiest ones
    (by events, then first event)."""
    if len(agents) <= LISTED_AT_MOST:
        return list(agents)
    return heapq.nsmallest(LISTED_AT_MOST, agents, key=lambda name: -agents[name]["events"])


def _rounded(values: np.ndarray) -> list:
    """Rounded to 6 places as a measure is. np.round scales by 10**6 first, which
    overflows above 1.8e302: such values have no decimals to round and are kept as they are."""
    small = np.abs(values) < 1e300
    return np.where(small, np.round(np.where(small, values, 0.0), 6), values).tolist()


def to_json(result: dict) -> str:
    """Strict JSON: no NaN or Infinity (compute gave them as null)."""
    return inert(json.dumps(result, indent=2, ensure_ascii=False, allow_nan=False)) + "\n"


def to_text(result: dict, mapping: Subdecisions) -> str:
    def show(value) -> str:
        if value is None:
            return "n/a"
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:  # not 309 digits for 1e308
            value = int(value)
        return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)

    time_unit = result.get("time_unit")
    after = {"seconds": " s", "steps": " steps"}.get(time_unit, "")  # a time, in the trace's unit

    def when(value) -> str:
        return show(value) + (after if value is not None else "")

    lines = [
        f"trace {result['trace_id']} ({result['topology'] or 'topology not given'})",
        f"  events {show(result['events'])}, edges {show(result['edges'])}, agents {show(result['agents'])}",
        f"  spawns {show(result['spawns'])}, largest fan-out {show(result['max_fanout'])}, spawn depth {show(result['depth'])}",
        f"  messages {show(result['messages'])}, tool calls {show(result['tool_calls'])}, aggregations {show(result['aggregations'])}",
        "  stopped: " + (f"yes, at t={when(result['stop_t'])}" if result["stopped"] else "no stop event recorded"),
        f"sub-decisions (event types from {mapping.source}):",
    ]
    for decision, count in result["subdecisions"].items():
        lines.append(f"  {decision} {mapping.label(decision)}: {show(count)}")
    lines += [
        "work and critical path:",
        (
            f"  in events: {show(result['total_work_events'])} of work, {show(result['critical_path_events'])} on the critical path, "
            f"speedup {show(result['parallelism_speedup_events'])}"
        ),
        (
            f"  in time ({time_unit or 'unit not declared: time_unit would say seconds or steps'}): "
            f"{when(result['total_work_s'])} of work, {when(result['critical_path_s'])} on the critical path, "
            f"speedup {show(result['parallelism_speedup'])}"
        ),
        f"  protocol overhead (messages per tool call): {show(result['protocol_overhead'])}",
        "costs (events' sum / declared):",
    ]
    for name, pair in result["costs"].items():
        lines.append(f"  {name}: {show(pair.get('events', '-'))} / {show(pair['declared'])}")
    lines.append("rewards:")
    declared = result["rewards"]["declared"]
    lines.append("  declared: " + (_channels(declared, show) or "none"))
    for unit, channels in result["rewards"]["by_unit"].items():
        lines.append(f"  credited to {unit}: " + _channels(channels, show))
    if not result["rewards"]["by_unit"]:
        lines.append("  no event carries a reward")
    busy = {"seconds": "busy s", "steps": "busy steps"}.get(time_unit, "busy time")
    agents = result["agent_share"]
    shown = _busiest(agents)
    which = f"; the {len(shown):,} with the most events" if len(shown) < len(agents) else ""
    lines.append(f"agents ({plural(len(agents), 'agent')}{which}): events, share, {busy}, share of time")
    for name in shown:
        share = agents[name]
        lines.append(
            f"  {name}: {show(share['events'])}, {show(share['share'])}, {show(share['busy_s'])}, {show(share['share_s'])}"
        )
    if len(shown) < len(agents):
        lines.append(f"  and {plural(len(agents) - len(shown), 'more agent')}: --format json gives each")
    if result["notes"]:
        lines.append("notes (measures shown as n/a):")
        lines += [f"  {note['key']}: {note['why']}" for note in result["notes"]]
    if result.get("warnings"):
        lines.append(
            f"{plural(result['warnings'], 'warning')}: `paperpool trace validate` lists them; the measures leave out "
            "what they name as unreadable"
        )
    # names and ids come from the trace: a terminal must show them, not act on them
    return "\n".join(map(schema.printable, lines)) + "\n"
