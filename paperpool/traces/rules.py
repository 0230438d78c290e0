"""The graph rules of a trace, the ones no JSON Schema can state. Each rule reports every
event or edge that breaks it, by JSON pointer, and each runs in time linear in events plus
edges: vectorised over the index's arrays where it can, one Python pass where it cannot.

The rules: event ids are unique; every edge names existing events; the ordering edges
(the schema's x-ordering-edge-types: causal, spawn, return, aggregate) run forward in time
and form no cycle; an agent acts no earlier than the spawn that creates it; every
tool_result answers a tool_call made no later; a return goes to an agent of the trace;
the events' costs add up to no more than the declared totals. That costs and rewards are
finite and costs not negative is the loader's and the schema's to say (NaN, Infinity and
numbers past a double's range are refused by pointer; costs have a minimum of 0).
"""

from __future__ import annotations

import math

import numpy as np

from paperpool.files.problems import suggest

from . import measures, schema
from .index import EVENT_CODES, MISSING, NO_TOOL, TraceIndex
from .schema import Finding

ALL = 1 << 62  # no cap on a rule's findings


def check(ix: TraceIndex, trace: dict, schema_findings=(), most: int = schema.MOST_PROBLEMS) -> list[Finding]:
    """The graph rules' findings; `schema_findings` tell which parts not to judge twice.
    Each rule builds at most `most` + 1 (the first, in document order), so that a caller
    keeping `most` can tell there were more."""
    return [finding for found in by_rule(ix, trace, schema_findings, most).values() for finding in found]


def by_rule(ix: TraceIndex, trace: dict, schema_findings=(), most: int = schema.MOST_PROBLEMS) -> dict[str, list[Finding]]:
    """Each graph rule's findings, by the rule's name (a trace that declares no schema has
    them as warnings, one per rule: artifact.py); at most `most` + 1 each."""
    most = max(most, 0) + 1
    found = {"unique_ids": unique_ids(ix, most), "edge_ends": edge_ends(ix, most), "ordering": ordering(ix, most)}
    found["tool_results"] = tool_results(ix, most)  # pairs results with calls, which sets the actors
    found["spawned_agents_act_after_spawn"] = spawned_agents_act_after_spawn(ix, most)
    found["returns_reach_agents"] = returns_reach_agents(ix, most)
    if not any(f.pointer == "/costs" or f.pointer.startswith("/costs/") for f in schema_findings):
        found["costs_within_totals"] = costs_within_totals(ix, trace, most)
    return found


def unique_ids(ix: TraceIndex, most: int = ALL) -> list[Finding]:
    if ix.unique:
        return []
    findings = []
    for offset, events in ix.source.chunks("events"):  # read again only when some id is repeated
        if len(findings) >= most:
            break
        for position, event in enumerate(events, start=offset):
            identifier = event.get("id") if isinstance(event, dict) else None
            first = ix.index.get(identifier) if isinstance(identifier, str) else None
            if first is not None and first != position and len(findings) < most:
                findings.append(
                    Finding(
                        f"/events/{position}/id",
                        f"id '{identifier}' is already the id of /events/{first}; give each event its own id",
                    )
                )
    return findings


def edge_ends(ix: TraceIndex, most: int = ALL) -> list[Finding]:
    findings = []
    for end, positions in (("src", ix.src), ("dst", ix.dst)):
        for k in np.flatnonzero(positions == MISSING)[:most].tolist():
            name = ix.edge(k)[end]
            findings.append(
                Finding(
                    f"/edges/{k}/{end}",
                    f"no event has id '{name}'; " + suggest(name, ix.index, "name an event of this trace, or add the event"),
                )
            )
    return findings


def _ordering_words() -> str:
    names = [name for name in schema.edge_types() if name in schema.ordering_edge_types()]
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]


def ordering(ix: TraceIndex, most: int = ALL) -> list[Finding]:
    """Ordering edges run forward in time (or stay at one time) and form no cycle. With
    every one forward, a cycle can only join events of a single time, so only those edges
    are searched, unless some edge already runs backwards."""
    ordered = np.flatnonzero(ix.edge_mask(schema.ordering_edge_types()))
    t_src, t_dst = ix.t[ix.src[ordered]], ix.t[ix.dst[ordered]]
    backwards = ordered[t_src > t_dst]  # as ordering_backwards finds them
    findings = []
    for k in backwards[:most].tolist():
        edge, a, b = ix.edge(k), ix.src[k], ix.dst[k]
        findings.append(
            Finding(
                f"/edges/{k}",
                f"{edge['type']} edge {edge['src']} -> {edge['dst']} goes back in time "
                f"(t={_num(ix.t[a])} -> t={_num(ix.t[b])}); it must lead to an event at the same time or later: "
                "swap src and dst, or correct the times",
            )
        )
    searched = ordered if backwards.size else ordered[t_src == t_dst]
    for cycle in find_cycles(ix.src[searched].tolist(), ix.dst[searched].tolist(), searched.tolist(), most):
        names = [ix.edge(k)["src"] for k in cycle] + [ix.edge(cycle[-1])["dst"]]
        findings.append(
            Finding(
                f"/edges/{cycle[-1]}",
                f"{_ordering_words()} edges form a cycle {schema.shown_cycle(names, 'events')}; "
                "an event cannot wait on itself: remove or reverse one of these edges",
            )
        )
    return findings


def find_cycles(sources: list[int], targets: list[int], edge_ids: list[int], most: int = ALL) -> list[list[int]]:
    """One cycle (as the edge ids along it) per edge that closes one in a depth-first
    search, the first `most` by that closing edge: every cyclic part of the graph is
    reported. Each closing edge is kept as (edge, the node it leaves, the node it reaches),
    and only the cycles returned are built from the search tree's parent edges, so that
    many edges closing one long cycle cost time and memory linear in the graph (copying
    the path for each was quadratic: 20,000 edges closing a cycle of 20,000 took 3 GB)."""
    outgoing: dict[int, list[tuple[int, int]]] = {}
    for a, b, k in zip(sources, targets, edge_ids, strict=True):
        outgoing.setdefault(a, []).append((b, k))
    state: dict[int, int] = {}  # absent: unseen; 1: on the current path; 2: done
    parent_edge: dict[int, tuple[int, int]] = {}  # node -> (the node before it, the edge) in the search tree
    closing = []
    for root in outgoing:
        if root in state:
            continue
        state[root] = 1
        path_nodes, stack = [root], [iter(outgoing.get(root, ()))]
        while stack:
            step = next(stack[-1], None)
            if step is None:
                stack.pop()
                state[path_nodes.pop()] = 2
                continue
            nxt, k = step
            if state.get(nxt) == 1:
                closing.append((k, path_nodes[-1], nxt))
            elif nxt not in state:
                state[nxt] = 1
                parent_edge[nxt] = (path_nodes[-1], k)
                path_nodes.append(nxt)
                stack.append(iter(outgoing.get(nxt, ())))
    closing.sort()
    return [_cycle(parent_edge, *closed) for closed in closing[:most]]


def _cycle(parent_edge: dict[int, tuple[int, int]], k: int, last: int, first: int) -> list[int]:
    """The edges from `first` down the search tree to `last`, then `k` back to `first`
    (`first` was on the path to `last` when `k` was met, so it is an ancestor of it)."""
    edges = [k]
    node = last
    while node != first:
        node, edge = parent_edge[node]
        edges.append(edge)
    return edges[::-1]


def tool_results(ix: TraceIndex, most: int = ALL) -> list[Finding]:
    """Pair each tool_result with the tool_call it answers: the one its `call` names, else
    a tool_call with an edge into it, else the latest tool_call of the same tool made no
    later. The pairs say whose work a result is (the caller's); a result with none is a
    problem."""
    results = ix.positions("tool_result")
    ix.actor_code = ix.agent_code
    if results.size == 0:
        return []
    findings: list[Finding] = []
    call_at = ix.fields["call"][0]
    named_call = np.full(ix.n, MISSING, dtype=np.int64)
    named_call[call_at] = ix.named_calls
    has_call = np.zeros(ix.n, dtype=bool)
    has_call[call_at] = True
    calls, given = named_call[results], has_call[results]
    linked = _linked_calls(ix, results)
    calls[~given] = linked[~given]
    checked = np.flatnonzero(calls >= 0)
    wrong = np.zeros(results.size, dtype=bool)
    wrong[checked] = _mismatch(ix, results[checked], calls[checked])
    for k in np.flatnonzero(given & ((calls < 0) | wrong)).tolist():
        if calls[k] not in ix.broken_events and len(findings) < most:  # the schema has said what is wrong with the call
            r = int(results[k])
            findings.append(Finding(f"/events/{r}/call", _call_problem(ix, r, int(calls[k]), ix.event(r)["call"])))
    calls[wrong] = MISSING  # a wrong call answers nothing; a wrong linked one leaves the result to pair by tool
    unpaired = np.flatnonzero(~given & (calls < 0))
    if unpaired.size:
        findings += _pair_by_tool(ix, results, calls, unpaired, most - len(findings))
    paired = calls >= 0
    ix.calls = dict(zip(results[paired].tolist(), calls[paired].tolist(), strict=True))
    ix.actor_code = ix.agent_code.copy()
    ix.actor_code[results[paired]] = ix.agent_code[calls[paired]]
    return findings


def _linked_calls(ix: TraceIndex, results: np.ndarray) -> np.ndarray:
    return linked_calls(ix.type_code, ix.src, ix.dst, results)


def linked_calls(kind: np.ndarray, src: np.ndarray, dst: np.ndarray, results: np.ndarray) -> np.ndarray:
    """For each result, the first tool_call with an edge into it (in the file), or MISSING
    (`kind`: each event's type code; edge ends below 0 name no event)."""
    both = np.flatnonzero((src >= 0) & (dst >= 0))
    into = both[(kind[src[both]] == EVENT_CODES["tool_call"]) & (kind[dst[both]] == EVENT_CODES["tool_result"])]
    by_result = np.full(kind.size, MISSING, dtype=np.int64)
    if into.size:
        targets, first = np.unique(dst[into], return_index=True)  # the first edge in the file wins
        by_result[targets] = src[into[first]]
    return by_result[results]


def _mismatch(ix: TraceIndex, results: np.ndarray, calls: np.ndarray) -> np.ndarray:
    unnamed = ix.tool_names.index(NO_TOOL) if NO_TOOL in ix.tool_names else -2
    return mismatched(ix.type_code, ix.t, ix.coded("tool"), results, calls, unnamed)


def mismatched(kind, t, tools, results: np.ndarray, calls: np.ndarray, unnamed: int) -> np.ndarray:
    """Whether each pairing of a result with a call (an event position) is wrong: not a
    tool_call, a later call, or another tool (`unnamed`: the code of no tool named; such
    a call, which the artifact's format allows, may be answered by any result)."""
    bad = (kind[calls] != EVENT_CODES["tool_call"]) | (t[calls] > t[results])
    fine = np.flatnonzero(~bad)
    bad[fine] = (tools[calls[fine]] != tools[results[fine]]) & (tools[calls[fine]] != unnamed)
    return bad


def _call_problem(ix: TraceIndex, r: int, a: int, named: str) -> str:
    if a < 0:
        return f"no event has id '{named}'; name the tool_call this result answers"
    call = ix.event(a)
    if ix.type_code[a] != ix.code("tool_call"):
        return f"'{named}' is a {call['type']} event, not a tool_call; name the tool_call this result answers"
    tools = ix.coded("tool")
    if tools[a] != tools[r]:
        return f"'{named}' calls {_tool(ix, a)}, not {_tool(ix, r)}; name a call of the same tool"
    return f"'{named}' comes later (t={_num(ix.t[a])}) than this result (t={_num(ix.t[r])}); a result answers an earlier call"


def _pair_by_tool(ix: TraceIndex, results: np.ndarray, calls: np.ndarray, unpaired: np.ndarray, most: int) -> list[Finding]:
    """Pair the remaining results by tool name, in time order; `calls` is filled in (the
    findings: at most `most`)."""
    waiting = dict(zip(results[unpaired].tolist(), unpaired.tolist(), strict=True))
    candidates = np.concatenate([ix.positions("tool_call"), results[unpaired]])
    order = candidates[np.lexsort((candidates, np.nan_to_num(ix.t[candidates], nan=-1.0)))].tolist()
    tools = [ix.tool_names[code] for code in ix.coded("tool")[order].tolist()]
    latest: dict[str, int] = {}
    findings = []
    for i, tool in zip(order, tools, strict=True):
        if i not in waiting:
            latest[tool] = i
            continue
        a = latest.get(tool)
        if a is None and len(findings) >= most:
            continue
        if a is None:
            findings.append(Finding(f"/events/{i}", unanswered(tool, ix.t[i])))
        else:
            calls[waiting[i]] = a
    return findings


def unanswered(tool: str, t: float) -> str:
    """What is said of a tool_result of `tool` (NO_TOOL: none named) at time t that
    answers no tool_call (batch.py counts these words as validation does)."""
    if tool == NO_TOOL:
        return (
            f"tool_result without `tool` answers no tool_call: there is no call "
            f"without `tool` at or before t={_num(t)}; name the tool, or the call in `call`"
        )
    return (
        f"tool_result of '{tool}' answers no tool_call: there is no call of "
        f"'{tool}' at or before t={_num(t)}; add the tool_call, or name it in `call`"
    )


def acting_before_spawn(m: measures.Measures) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The spawned agents of a batch that act before the spawn that creates them: each
    one's key, earliest event and earliest spawn."""
    spawned, spawn_at = m.spawned
    at, acts = m.actors.where(spawned)
    early = np.flatnonzero(acts & (m.actors.first_t[at] < m.batch.t[spawn_at]))
    return spawned[early], m.actors.earliest[at[early]], spawn_at[early]


def spawned_agents_act_after_spawn(ix: TraceIndex, most: int = ALL) -> list[Finding]:
    keys, earliest, spawn_at = acting_before_spawn(measures.of_index(ix))
    findings = []
    for k in np.argsort(earliest, kind="stable")[:most].tolist():  # the first in the file
        name, s, i = ix.agent_names[int(keys[k])], int(spawn_at[k]), int(earliest[k])
        findings.append(
            Finding(
                f"/events/{i}/t",
                f"agent '{name}' acts at t={_num(ix.t[i])}, before the spawn that creates it "
                f"(/events/{s}, t={_num(ix.t[s])}); correct the times, or spawn it earlier",
            )
        )
    return sorted(findings, key=Finding.sort_key)


def stray_returns(m: measures.Measures) -> np.ndarray:
    """The returns of a batch that go to no agent of their trace (one in the artifact's
    format need not say to whom)."""
    b = m.batch
    returns = np.flatnonzero((b.kind == EVENT_CODES["return"]) & (b.to >= 0))
    return returns[~np.isin(m.tr[returns] * b.span + b.to[returns], m.everyone)]


def returns_reach_agents(ix: TraceIndex, most: int = ALL) -> list[Finding]:
    m = measures.of_index(ix)
    stray = stray_returns(m)
    if not stray.size:
        return []
    names = [ix.agent_names[key] for key in m.everyone.tolist()]
    findings = []
    for r in stray[:most].tolist():
        to = ix.agent_names[int(m.batch.to[r])]
        findings.append(
            Finding(
                f"/events/{r}/to",
                f"return goes to '{to}', which is no agent of this trace; "
                + suggest(to, names, "return to the agent that spawned or called this one"),
            )
        )
    return findings


def costs_within_totals(ix: TraceIndex, trace: dict, most: int = ALL) -> list[Finding]:
    declared = trace.get("costs")
    if not isinstance(declared, dict):
        return []
    m = measures.of_index(ix)
    _, tokens, seconds = (float(values[0]) for values in m.costs)
    over = over_declared(declared, tokens, seconds, float(m.longest_cost[0]))
    findings = []
    if "tokens" in over:
        findings.append(
            Finding(
                "/costs/tokens",
                f"the events' costs add up to {_num(tokens)} tokens, more than the declared "
                f"{_num(declared['tokens'])}; correct the total or the events' costs",
            )
        )
    if "compute_s" in over:
        findings.append(
            Finding(
                "/costs/compute_s",
                f"the events' costs add up to {_num(seconds)} s, more than the declared "
                f"{_num(declared['compute_s'])} s of compute; correct the total or the events' costs",
            )
        )
    if "wall_clock_s" in over:
        limit = declared["wall_clock_s"]
        positions, _, each = ix.cost_columns()
        for i, took in zip(positions[each > limit][:most].tolist(), each[each > limit][:most].tolist(), strict=True):
            findings.append(
                Finding(
                    f"/events/{i}/cost/seconds",
                    f"the event took {_num(took)} s, longer than the whole run (wall_clock_s {_num(limit)}); correct one of them",
                )
            )
    return findings


def over_declared(declared: dict, tokens: float, seconds: float, longest: float) -> list[str]:
    """The totals a trace declares that its events cost more than: `tokens` and `compute_s`
    (the events' sums, infinite past a double's range), `wall_clock_s` (some one event's
    seconds, `longest`)."""
    over = [
        key for key, spent in (("tokens", tokens), ("compute_s", seconds)) if key in declared and exceeds(spent, declared[key])
    ]
    return over + (["wall_clock_s"] if "wall_clock_s" in declared and longest > declared["wall_clock_s"] else [])


def exceeds(summed: float, declared: float) -> bool:
    """More than declared, beyond what adding up decimal fractions in binary can err by."""
    return summed > declared + 1e-9 * max(1.0, abs(declared))


def _tool(ix: TraceIndex, position: int) -> str:
    name = ix.tool_names[ix.coded("tool")[position]]
    return "no tool" if name == NO_TOOL else f"'{name}'"


def _num(value) -> str:
    """A number as a person writes it: 3 rather than 3.0, thousands separated; 1e+308
    rather than its 309 digits; a sum past a double's range as what it is."""
    value = float(value)
    if math.isinf(value):  # a sum of costs, which are not negative
        return "more than 1.8e308"
    return f"{int(value):,}" if value.is_integer() and abs(value) < 2**53 else f"{value:,.6g}"
