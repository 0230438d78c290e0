"""Orchestration measures recomputed from a valid trace's event graph.

The json report (`paperpool trace metrics --format json`) has these keys, in this order;
they are stable: new keys may be added, none renamed or removed.

    trace_id, topology       as the trace gives them (topology null when absent)
    events, edges            how many
    agents                   distinct agents: whoever does an event's work (the caller, for a
                             tool_result) and whoever is spawned
    spawns                   spawn events
    max_fanout               the most sub-agents one agent spawns in one wave, a wave ending
                             when that agent aggregates (0 without spawns)
    depth                    spawn depth: 0 when nobody is spawned, 1 when only the root
                             agents spawn, and so on (an agent's spawner is the one of its
                             earliest spawn)
    messages, tool_calls, aggregations   events of those types
    event_types              {event type: count}, every type of the schema in its order
    stopped                  whether a stop event was recorded (the O5 decision)
    stop_t                   the time of the first stop event, or null
    subdecisions             {sub-decision id: events that count for it}, in the mapping's order
                             (the mapping is data: see subdecisions.yaml and mapping.py)
    total_work_events        events (each is one unit of work)
    critical_path_events     events on the longest chain of dependencies; null when the trace
                             has no dependency at all (and more than one event): no chain can
                             be known, and a note says so
    parallelism_speedup_events   total_work_events / critical_path_events (null with it)
    total_work_s             the agents' busy time added up: each agent is busy from its spawn
                             (or, when nobody spawns it, its first event) to its last event:
                             a lane of the timeline. In the trace's time_unit, as every time
                             here (the keys keep their _s)
    critical_path_s          the longest chain of dependencies in time: its last event's time
                             minus its first event's (null with critical_path_events)
    parallelism_speedup      total_work_s / critical_path_s, null when critical_path_s is 0
    protocol_overhead        messages per tool call, null without tool calls
    costs                    {tokens|seconds: {events: summed per-event costs (null, with a
                             note, when no event declares a cost), declared: the
                             trace's total or null}, tool_calls|messages: {events: counted,
                             declared: ...}, wall_clock_s: {declared: ...}}; seconds are
                             declared as costs.compute_s
    rewards                  {declared: the trace's rewards per channel, by_unit: {credit unit:
                             {channel: sum of the events' attached rewards}}}; units in the
                             schema's order, only those with rewards
    agent_share              {agent: {events, share, busy_s, share_s}} in order of each agent's
                             first event: its events and their share of all events, its busy
                             time and its share of total_work_s
    notes                    [{key, why}]: each measure given as null because it is no finite
                             number or cannot be known (key is its JSON pointer); empty for
                             most traces
    time_unit                what the trace's times count, as its time_unit declares: seconds
                             or steps; null when it declares none (text: "unit not declared")
    warnings                 how many warnings validation gave (a trace that declares no
                             schema: what paperpool's format asks beyond the artifact's); the
                             measures leave out what those name as unreadable

A trace's numbers are finite, but sums, differences and ratios of numbers near a double's
limit (1.8e308) are not always: such a measure is null, never Infinity or NaN, which JSON
does not have, and a note names it.

Dependencies, for the critical path, are the ordering edges (which validation guarantees run
forward in time and form no cycle) and every other edge that runs strictly forward in time;
together they form no cycle, so the longest chain is found in one pass in time order.
Numbers are rounded to 6 decimals.
"""

from __future__ import annotations

import json
import math
from itertools import repeat

import numpy as np

from paperpool.files.problems import plural

from . import paths, rules, schema
from .index import TraceIndex
from .loading import inert, no_gc_pauses
from .mapping import Subdecisions

FORMATS = ("text", "json")


def compute(ix: TraceIndex, trace: dict, mapping: Subdecisions, warnings: int = 0) -> dict:
    """The measures of a trace that validated (its index built and its tool results paired),
    with the number of warnings validation gave."""
    # a large trace's objects are still alive: a collection would walk them all; overflows
    # are expected and noted (see _nulled), not warned about
    with no_gc_pauses(), np.errstate(over="ignore", invalid="ignore"):
        result, unknown = _compute(ix, trace, mapping)
    # agent_share is not walked: its times are differences of two times of the trace and its
    # shares are of a finite, non-zero total, so they are finite (and it can hold 100,000 agents)
    result["notes"] = unknown + _nulled(result, [], skip="agent_share")
    result["time_unit"] = trace.get("time_unit")
    result["warnings"] = warnings
    return result


def no_dependencies() -> str:
    """Why the critical path of a trace without dependencies is unknown (the ordering edge
    types are the schema's)."""
    ordering = [name for name in schema.edge_types() if name in schema.ordering_edge_types()]
    return (
        f"unknown: the trace has no dependencies (no {', '.join(ordering[:-1])} or {ordering[-1]} edge, and no other "
        "edge forward in time), so no chain of dependencies, and no critical path, can be known; add its edges"
    )


CHAIN_KEYS = ("critical_path_events", "parallelism_speedup_events", "critical_path_s", "parallelism_speedup")


def _compute(ix: TraceIndex, trace: dict, mapping: Subdecisions) -> dict:
    counts = np.bincount(ix.type_code[ix.type_code >= 0], minlength=len(schema.event_types()))
    by_type = dict(zip(schema.event_types(), counts.tolist(), strict=True))
    depth, fanout = spawn_tree(ix)
    chain_events, chain_s, dependencies = critical_path(ix)
    total_s = float(agent_lanes(ix)[2].sum())
    stops = ix.positions("stop")
    result = {
        "trace_id": trace.get("trace_id"),
        "topology": trace.get("topology"),
        "events": ix.n,
        "edges": ix.n_edges,
        "agents": int(rules.agent_mask(ix).sum()),
        "spawns": by_type["spawn"],
        "max_fanout": fanout,
        "depth": depth,
        "messages": by_type["message"],
        "tool_calls": by_type["tool_call"],
        "aggregations": by_type["aggregate"],
        "event_types": by_type,
        "stopped": bool(stops.size),
        "stop_t": _round(ix.t[stops].min()) if stops.size else None,
        "subdecisions": subdecision_counts(ix, by_type, mapping),
        "total_work_events": ix.n,
        "critical_path_events": chain_events,
        "parallelism_speedup_events": _ratio(ix.n, chain_events),
        "total_work_s": _round(total_s),
        "critical_path_s": _round(chain_s),
        "parallelism_speedup": _ratio(total_s, chain_s),
        "protocol_overhead": _ratio(by_type["message"], by_type["tool_call"]),
        "costs": costs(ix, trace, by_type),
        "rewards": rewards(ix, trace),
        "agent_share": agent_share(ix, total_s),
    }
    unknown = []
    if not ix.cost_columns()[0].size:  # no event says what it cost: the sums are unknown, not 0
        for key in ("tokens", "seconds"):
            result["costs"][key]["events"] = None
            unknown.append({"key": schema.pointer(["costs", key, "events"]), "why": NO_COSTS})
    if not dependencies and ix.n > 1:  # every event would be a chain of one: a speedup of n, made up
        for key in CHAIN_KEYS:
            result[key] = None
        unknown += [{"key": schema.pointer([key]), "why": no_dependencies()} for key in CHAIN_KEYS]
    return result, unknown


def agent_lanes(ix: TraceIndex) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(names, events, busy seconds) per agent, in order of first appearance in time. An
    agent is busy from its spawn (or, unspawned, its first event) to its last event."""
    if "lanes" not in ix._cache:
        table = ix.agent_table()
        start = table.first_t.copy()
        agents, spawn_at = rules.first_spawns(ix)
        code = table.of_name[agents]
        acting = code >= 0
        np.minimum.at(start, code[acting], ix.t[spawn_at[acting]])
        appearance = np.lexsort((table.first_event, start))
        ix._cache["lanes"] = (
            [table.names[c] for c in appearance.tolist()],
            table.events[appearance],
            (table.last_t - start)[appearance],
        )
    return ix._cache["lanes"]


def agent_share(ix: TraceIndex, total_s: float) -> dict[str, dict]:
    names, events, busy = agent_lanes(ix)
    share = _rounded(events / ix.n) if ix.n else [None] * len(names)
    share_s = _rounded(busy / total_s) if total_s and math.isfinite(total_s) else [None] * len(names)
    rows = zip(events.tolist(), share, _rounded(busy), share_s, strict=True)
    return {name: {"events": e, "share": s, "busy_s": b, "share_s": bs} for name, (e, s, b, bs) in zip(names, rows, strict=True)}


def spawn_tree(ix: TraceIndex) -> tuple[int, int]:
    """(depth, largest fan-out) of who spawned whom. An agent's spawner is the agent of its
    earliest spawn; fan-out counts the spawns one agent makes in one wave, a wave ending
    when that agent aggregates."""
    spawns = ix.positions("spawn")
    if not spawns.size:
        return 0, 0
    spawner = ix.agent_table().code
    chosen = np.flatnonzero((ix.type_code == ix.code("spawn")) | (ix.type_code == ix.code("aggregate")))
    chosen = chosen[np.lexsort((chosen, ix.t[chosen], spawner[chosen]))]  # by agent, then in time order
    ends_wave = ix.type_code[chosen] == ix.code("aggregate")
    new_agent = np.r_[True, spawner[chosen][1:] != spawner[chosen][:-1]]
    wave = np.cumsum(ends_wave | new_agent)
    fanout = int(np.bincount(wave[~ends_wave]).max())
    # Parents in the code space of agent names (spawners act, so they have agent codes there);
    # a spawn that names no agent (the artifact's format allows one) creates no known child.
    spawns, children = rules.spawn_targets(ix)
    parents = ix.agent_code[spawns]
    latest_first = np.argsort(ix.t[spawns], kind="stable")[::-1]
    parent = np.full(len(ix.agent_names), -1, dtype=np.int64)
    earliest = np.unique(children[latest_first][::-1], return_index=True)  # first in time order
    parent[earliest[0]] = parents[latest_first][::-1][earliest[1]]
    return _depth(parent), fanout


def _depth(parent: np.ndarray) -> int:
    """The longest chain of parents, one level per numpy pass (spawn trees are shallow);
    a deeper tree, or a spawn loop, which never settles, is walked in Python instead."""
    depth = np.zeros(parent.size, dtype=np.int64)
    has_parent = parent >= 0
    for _ in range(64):
        deeper = np.where(has_parent, depth[np.maximum(parent, 0)] + 1, 0)
        if np.array_equal(deeper, depth):
            return int(depth.max(initial=0))
        depth = deeper
    return _walked_depth(parent.tolist(), np.flatnonzero(has_parent).tolist())


def _walked_depth(parent: list[int], children: list[int]) -> int:
    """The longest chain of parents, each agent's depth known once it is walked, so that
    each agent is walked once: a chain is followed up to a root, an agent already known,
    or where a loop closes (a set says which agents the chain holds: a list, searched at
    each step, made a chain of 60,000 spawns take 18 s)."""
    known: dict[int, int] = {}
    for start in children:
        chain, on_chain, node = [], set(), start
        while parent[node] >= 0 and node not in known and node not in on_chain:
            chain.append(node)
            on_chain.add(node)
            node = parent[node]
        base = known.get(node, 0)  # a root, a known depth, or where a loop closes
        for offset, member in enumerate(reversed(chain), start=1):
            known[member] = base + offset
    return max(known.values(), default=0)


def critical_path(ix: TraceIndex) -> tuple[int, float, int]:
    """(events, seconds, dependencies) along the longest chain of dependencies: found
    beside the links in the second process when there was one, else here."""
    if ix.chain is not None:
        return ix.chain
    return paths.critical_path(ix.t, ix.src, ix.dst, ix.edge_code)


def subdecision_counts(ix: TraceIndex, by_type: dict, mapping: Subdecisions) -> dict[str, int]:
    """Events per sub-decision: by type, except an event whose `decision` names one."""
    counts = {decision: sum(by_type.get(t, 0) for t in types) for decision, types in mapping.events.items()}
    positions, decisions = ix.fields["decision"]
    ids = list(counts)
    named = np.fromiter(
        map({decision: k for k, decision in enumerate(ids)}.get, decisions, repeat(-1)), dtype=np.int64, count=len(decisions)
    )
    known = named >= 0  # a value that is no sub-decision of this mapping leaves the event counted by its type
    types = schema.event_types()
    moved = np.bincount(ix.type_code[positions[known]], minlength=len(types))
    for code, count in enumerate(moved.tolist()):
        for decision, mapped in mapping.events.items():
            if count and types[code] in mapped:
                counts[decision] -= count
    for k, count in enumerate(np.bincount(named[known], minlength=len(ids)).tolist()):
        counts[ids[k]] += count
    return counts


def costs(ix: TraceIndex, trace: dict, by_type: dict) -> dict:
    tokens, seconds = rules.event_costs(ix)
    declared = trace.get("costs") or {}
    return {
        "tokens": {"events": _round(tokens), "declared": declared.get("tokens")},
        "seconds": {"events": _round(seconds), "declared": declared.get("compute_s")},
        "wall_clock_s": {"declared": declared.get("wall_clock_s")},
        "tool_calls": {"events": by_type["tool_call"], "declared": declared.get("tool_calls")},
        "messages": {"events": by_type["message"], "declared": declared.get("messages")},
    }


def rewards(ix: TraceIndex, trace: dict) -> dict:
    return {"declared": dict(trace.get("rewards") or {}), "by_unit": rewards_by_unit(ix.rewards)}


def rewards_by_unit(totals: dict) -> dict[str, dict[str, float]]:
    """(credit unit, channel) -> total, as credit unit -> channel -> rounded total, in the
    schema's order of units and the channels' alphabetical order."""
    by_unit: dict[str, dict[str, float]] = {}
    for (unit, channel), total in totals.items():
        by_unit.setdefault(unit, {})[channel] = total
    return {unit: {ch: _round(v) for ch, v in sorted(by_unit[unit].items())} for unit in schema.credit_units() if unit in by_unit}


def _round(value) -> float:
    return round(float(value), 6)


def _rounded(values: np.ndarray) -> list:
    """Rounded as _round does. np.round scales by 10**6 first, which overflows above
    1.8e302: such values have no decimals to round and are kept as they are."""
    small = np.abs(values) < 1e300
    return np.where(small, np.round(np.where(small, values, 0.0), 6), values).tolist()


def _ratio(numerator, denominator) -> float | None:
    return _round(numerator / denominator) if denominator else None


NO_COSTS = "unknown: no event declares a cost (tokens or seconds), so the events' costs cannot be summed"
NOT_FINITE = (
    "not a finite number: the trace's numbers are too large to add up, subtract or divide within a double's range (about 1.8e308)"
)


def _nulled(node: dict, path: list, skip: str | None = None) -> list[dict]:
    """Every infinite or NaN number of the result replaced with None in place, and a note
    for each (JSON has neither, and a reader of the report must know why one is missing)."""
    notes = []
    for key, value in node.items():
        if key == skip:
            continue
        if isinstance(value, dict):
            notes += _nulled(value, path + [key])
        elif isinstance(value, float) and not math.isfinite(value):
            node[key] = None
            notes.append({"key": schema.pointer(path + [key]), "why": NOT_FINITE})
    return notes


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
    lines.append("  declared: " + (", ".join(f"{k} {show(v)}" for k, v in declared.items()) or "none"))
    for unit, channels in result["rewards"]["by_unit"].items():
        lines.append(f"  credited to {unit}: " + ", ".join(f"{k} {show(v)}" for k, v in channels.items()))
    if not result["rewards"]["by_unit"]:
        lines.append("  no event carries a reward")
    busy = {"seconds": "busy s", "steps": "busy steps"}.get(time_unit, "busy time")
    lines.append(f"agents ({plural(len(result['agent_share']), 'agent')}): events, share, {busy}, share of time")
    for name, share in result["agent_share"].items():
        lines.append(
            f"  {name}: {show(share['events'])}, {show(share['share'])}, {show(share['busy_s'])}, {show(share['share_s'])}"
        )
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
