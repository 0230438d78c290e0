"""The rows of many traces at once: how `trace metrics` measures a corpus at the speed
of parsing it.

Measured one at a time (rows.measure), a trace of 50 events costs some 750 us, nearly
all of it the fixed cost of a few hundred small numpy calls and of Python reading each
event field by field. Here a batch of traces is read into one set of columns, each
trace's events and edges at their own offsets (a disjoint union of the traces' graphs),
and every graph rule and measure is one numpy reduction over the whole batch, grouped by
trace. The loops left (reading each trace into the columns, the critical path's walk
over the edges in time order, the per-trace sums) are compiled (_columns.pyx), each
with its Python version here for an install without a C compiler.

This path vouches only for what it can check in full: a trace that declares the schema,
passes it, gives no key twice, and keeps every graph rule. Everything else (an invalid
trace, one in the artifact's format, one whose edges join events of one time against
the file's order, one whose tool results must be paired by tool name, a number past a
double's range) is measured by rows.measure, which says what is wrong exactly as
`trace validate` does. The two give the same row for every trace they both measure:
tests/traces/test_trace_batch.py compares them over synthetic, imported and hand-written traces.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from itertools import chain, compress, pairwise, repeat
from operator import is_not, itemgetter

import numpy as np
import orjson

from . import duplicates, metrics, rows, rules, schema, validation
from .compiled import loops as _native
from .corpus import Record
from .index import EDGE_CODES, EVENT_CODES, NO_TOOL
from .limits import Limits
from .limits import default as default_limits
from .loading import no_gc_pauses
from .mapping import Subdecisions

MAX_BYTES = 1024 * 1024  # a larger trace is measured on its own (source.py reads it in its own way)
SIZE = 200  # traces measured together: their objects still in the cache when the columns are made
_ID, _T, _TYPE, _AGENT = (itemgetter(key) for key in ("id", "t", "type", "agent"))
_SRC, _DST = itemgetter("src"), itemgetter("dst")
_OPTIONAL = ("to", "tool", "call", "cost", "decision", "rewards")


@dataclass
class Rows:
    table: dict[str, list]  # column name -> one value per record, in order
    problems: list[str]  # the problem line of each invalid trace, in order
    here: int  # how many were measured here, the rest by rows.measure


def measure(records: list[Record], mapping: Subdecisions, limits: Limits | None = None) -> Rows:
    """The rows of the records, SIZE at a time."""
    limits = limits or default_limits()
    parts = [_measure_some(records[start : start + SIZE], mapping, limits) for start in range(0, max(len(records), 1), SIZE)]
    if len(parts) == 1:
        return parts[0]
    table = {name: [value for part in parts for value in part.table[name]] for name in parts[0].table}
    return Rows(table, [line for part in parts for line in part.problems], sum(part.here for part in parts))


def _measure_some(batch: list[Record], mapping: Subdecisions, limits: Limits) -> Rows:
    names = [column.name for column in rows.columns(mapping)]
    with no_gc_pauses():  # a batch's parsed traces hold no cycles: nothing for the collector
        columns = _Columns(limits.trace_events)
        taken = [columns.take(record) for record in batch]
        measured, ok = _measure(columns, mapping) if columns.traces else ({}, [])
    if len(ok) == len(batch) and all(ok):  # the common case: every trace measured here
        return Rows({name: measured.get(name) or [None] * len(batch) for name in names}, [], len(batch))
    table = {name: [None] * len(batch) for name in names}
    problems = []
    k = 0
    for i, (record, took) in enumerate(zip(batch, taken, strict=True)):
        if took and ok[k]:
            row = {name: values[k] for name, values in measured.items()}
        else:
            found = rows.measure(record, mapping, limits)
            row = found.row
            if found.problem:
                problems.append(found.problem)
        for name in names:
            table[name][i] = row.get(name)
        k += took
    return Rows(table, problems, sum(ok))


def _column(typecode: str) -> array | list:
    """A column of a batch: an array.array the compiled reader writes into, else a list."""
    return array(typecode) if _native is not None else []


class _Columns:
    """The events and edges of the traces taken so far, side by side, each name already a
    code: read while a trace's objects are still in the cache, not in a later pass."""

    def __init__(self, max_events: int):
        self.max_events = max_events  # a trace with more is left to rows.measure, which says so
        self.records: list[Record] = []
        self.tops: list[dict] = []  # each trace's fields but its events and edges
        self.n: list[int] = []
        self.n_edges: list[int] = []
        self.t = _column("d")
        self.kind = _column("b")  # position in schema.event_types()
        self.agent = _column("q")  # a code in `names`, for `agent`
        self.to = _column("q")  # ... for `to`, -1 where there is none
        self.tool = _column("q")  # a code in `tools` (0: no tool named)
        self.call_given = _column("b")  # whether an event has `call`,
        self.named_call = _column("q")  # and the position it names (-2: no event)
        self.cost_at = _column("q")  # the events that declare a cost, and its tokens and seconds
        self.tokens = _column("d")
        self.seconds = _column("d")
        self.decided: list[tuple[int, str]] = []  # (position, `decision`)
        self.reward_at = _column("q")  # each reward's event, its credit unit and channel (codes in `units`,
        self.reward_unit = _column("q")  # `channels`), and its value, in file order
        self.reward_channel = _column("q")
        self.reward_value = _column("d")
        self.src = _column("q")
        self.dst = _column("q")
        self.edge_kind = _column("b")
        self.names: dict = {}  # every agent name of the batch: its code
        self.tools: dict = {NO_TOOL: 0, None: 0}
        self.units: dict = {}
        self.channels: dict = {}

    @property
    def traces(self) -> int:
        return len(self.n)

    def take(self, record: Record) -> bool:
        """Add the record's trace when this path can vouch for it; False leaves it to rows.measure."""
        data = record.data
        if data is None or len(data) > MAX_BYTES:
            return False
        try:
            trace = orjson.loads(data)
        except orjson.JSONDecodeError:
            return False
        if not (isinstance(trace, dict) and validation.declares_schema(trace)):
            return False
        events, edges = trace.get("events"), trace.get("edges")
        if not (
            isinstance(events, list) and isinstance(edges, list) and 0 < len(events) <= self.max_events and schema.valid(trace)
        ):
            return False
        if not (_read if _native is None else _read_natively)(self, data, trace, events, edges):
            return False
        self.n.append(len(events))
        self.n_edges.append(len(edges))
        self.records.append(record)
        del trace["events"], trace["edges"]  # they go now, while in the cache, not with the batch
        self.tops.append(trace)
        return True


def _read_natively(c: _Columns, data: bytes, trace: dict, events: list, edges: list) -> bool:
    """_read, compiled (_columns.pyx)."""
    found = _native.read(trace, events, edges, c, EVENT_CODES, EDGE_CODES, duplicates.at_most(data))
    if found == _native.KEYS_DIFFER and not duplicates.exact(data, trace):  # objects left uncounted, none twice
        found = _native.read(trace, events, edges, c, EVENT_CODES, EDGE_CODES, -1)
    return found == _native.OK


def _read(c: _Columns, data: bytes, trace: dict, events: list, edges: list) -> bool:
    """Add a trace's events and edges to the columns; False (nothing added) when an id is
    given twice, an edge names no event, or a key may be given twice."""
    base, count = len(c.t), len(events)
    index = dict(zip(map(_ID, events), range(base, base + count), strict=True))
    if len(index) != count:  # an id given twice
        return False
    src = list(map(index.get, map(_SRC, edges)))
    dst = list(map(index.get, map(_DST, edges)))
    if None in src or None in dst:  # an edge that names no event
        return False
    optional = {name: list(map(dict.get, events, repeat(name))) for name in _OPTIONAL}
    if not _keys_once(data, trace, events, edges, optional):
        return False
    agents, to, tool = list(map(_AGENT, events)), optional["to"], optional["tool"]
    names, tools = c.names, c.tools
    fresh = set(agents).union(to).difference(names)
    fresh.discard(None)
    for name in fresh:
        names[name] = len(names)
    for name in set(tool).difference(tools):
        tools[name] = len(tools) - 1  # NO_TOOL and None share 0
    c.agent += map(names.__getitem__, agents)
    c.to += map(names.get, to, repeat(-1))
    c.tool += map(tools.__getitem__, tool)
    c.call_given += map(is_not, optional["call"], repeat(None))
    c.named_call += map(index.get, optional["call"], repeat(-2))
    c.t += map(_T, events)
    c.kind += map(EVENT_CODES.__getitem__, map(_TYPE, events))
    positions = range(base, base + count)
    costed = list(map(is_not, optional["cost"], repeat(None)))
    spent = list(compress(optional["cost"], costed))
    c.cost_at += compress(positions, costed)
    c.tokens += map(dict.get, spent, repeat("tokens"), repeat(0))
    c.seconds += map(dict.get, spent, repeat("seconds"), repeat(0))
    c.decided += zip(compress(positions, optional["decision"]), filter(None, optional["decision"]), strict=True)
    for position, given in zip(compress(positions, optional["rewards"]), filter(None, optional["rewards"]), strict=True):
        for reward in given:
            c.reward_at.append(position)
            c.reward_unit.append(c.units.setdefault(reward["unit"], len(c.units)))
            c.reward_channel.append(c.channels.setdefault(reward["channel"], len(c.channels)))
            c.reward_value.append(reward["value"])
    c.src += src
    c.dst += dst
    c.edge_kind += map(EDGE_CODES.__getitem__, map(_TYPE, edges))
    return True


def _keys_once(data: bytes, trace: dict, events: list, edges: list, optional: dict) -> bool:
    """Whether no object of the trace gives a key twice: the keys of the objects counted
    here are as many as its text can hold at most (duplicates.at_most), or, when some
    object is left uncounted (one nested deeper), duplicates.py's exact count says so."""
    counted = len(trace) + sum(len(value) for value in trace.values() if isinstance(value, dict))
    counted += sum(map(len, events)) + sum(map(len, edges))
    counted += sum(map(len, filter(None, optional["cost"])))
    counted += sum(map(len, chain.from_iterable(filter(None, optional["rewards"]))))
    return counted == duplicates.at_most(data) or not duplicates.exact(data, trace)


def _measure(c: _Columns, mapping: Subdecisions) -> tuple[dict[str, list], list[bool]]:
    """The columns of the traces taken, and whether each keeps every rule and has every
    measure finite (the others' values are left to rows.measure)."""
    graph = _Graph(c)
    for rule in (graph.times, graph.edges, graph.results, graph.agents, graph.costs):
        rule()
    table = graph.table(mapping)  # which also leaves out the traces with a measure that is not finite
    return table, graph.ok.tolist()


class _Graph:
    """The batch's traces as one graph, the disjoint union of theirs: each event is a
    position in the batch, each trace a segment of positions, and each agent a key,
    trace * span + name. Each rule sets the arrays the measures read and clears `ok` for
    the traces it cannot vouch for."""

    def __init__(self, c: _Columns):
        self.c = c
        self.B = B = c.traces
        self.n = np.array(c.n, dtype=np.int64)
        self.first = np.r_[0, np.cumsum(self.n)[:-1]]  # each trace's first event
        self.N = int(self.n.sum())
        self.tr = np.repeat(np.arange(B), self.n)  # each event's trace
        self.t = np.array(c.t, dtype=np.float64)  # copies, never views: the compiled reader grows its arrays unchecked
        self.kind = kind = np.array(c.kind, dtype=np.int8)
        self.agent = np.array(c.agent, dtype=np.int64)
        self.to = np.where(np.isin(kind, _NAMES_AGENT), np.array(c.to, dtype=np.int64), -1)
        self.span = max(len(c.names), 1)
        uses_tool = (kind == EVENT_CODES["tool_call"]) | (kind == EVENT_CODES["tool_result"])
        self.tool = np.where(uses_tool, np.array(c.tool, dtype=np.int64), -1)
        self.src, self.dst = np.array(c.src, dtype=np.int64), np.array(c.dst, dtype=np.int64)
        self.ok = np.ones(B, dtype=bool)

    def flag(self, owner: np.ndarray, broken: np.ndarray) -> None:
        """Leave to rows.measure the traces (`owner`: each item's trace) with a broken item."""
        self.ok &= np.bincount(owner[broken], minlength=self.B) == 0

    def times(self) -> None:
        """Each event's rank in its trace's time order (ties in file order), which is the
        batch's order; a time past a double's range is infinite."""
        t, tr = self.t, self.tr
        self.flag(tr, ~np.isfinite(t))
        pos = np.arange(self.N)
        if ((t[1:] >= t[:-1]) | (tr[1:] != tr[:-1])).all():  # as traces are mostly written: in time order
            self.rank = pos
            return
        self.rank = np.empty(self.N, dtype=np.int64)
        self.rank[np.lexsort((t, tr))] = pos  # lexsort is stable: ties stay in file order

    def edges(self) -> None:
        """Ordering edges forward in time; the dependencies the critical path follows."""
        t, src, dst = self.t, self.src, self.dst
        edge_tr = self.tr[src]
        ordering = np.isin(np.array(self.c.edge_kind, dtype=np.int8), [EDGE_CODES[name] for name in schema.ordering_edge_types()])
        self.flag(edge_tr, ordering & (t[src] > t[dst]))
        self.chosen = (ordering & (t[src] <= t[dst])) | (t[src] < t[dst])
        # an edge between events of one time against the file's order (a cycle needs one): rows.measure sorts it out
        self.flag(edge_tr, self.chosen & (self.rank[src] >= self.rank[dst]))

    def results(self) -> None:
        """Each tool_result's call: the one `call` names, else the first tool_call with an
        edge into it; a wrong one, or a result to pair by tool name, is rows.measure's.
        The actor of a result is then its caller."""
        kind, t, tool, src, dst = self.kind, self.t, self.tool, self.src, self.dst
        results = np.flatnonzero(kind == EVENT_CODES["tool_result"])
        calls = np.where(np.array(self.c.call_given, dtype=bool), np.array(self.c.named_call, dtype=np.int64), -1)[results]
        into = np.flatnonzero((kind[src] == EVENT_CODES["tool_call"]) & (kind[dst] == EVENT_CODES["tool_result"]))
        linked = np.full(self.N, -1, dtype=np.int64)
        if into.size:
            targets, earliest = np.unique(dst[into], return_index=True)  # the first edge in the file
            linked[targets] = src[into[earliest]]
        calls = np.where(calls == -1, linked[results], calls)
        safe = np.maximum(calls, 0)
        answered = (calls >= 0) & (kind[safe] == EVENT_CODES["tool_call"]) & (t[safe] <= t[results])
        answered &= (tool[safe] == tool[results]) | (tool[safe] == self.c.tools[NO_TOOL])
        self.flag(self.tr[results], ~answered)
        self.actor = self.agent.copy()
        self.actor[results[answered]] = self.agent[calls[answered]]

    def agents(self) -> None:
        """Who acts (first and last time, earliest event) and who is spawned (first spawn);
        an agent acting before its spawn, or a return to no agent, is rows.measure's."""
        t, tr, span = self.t, self.tr, self.span
        self.actors, self.actor_of = np.unique(tr * span + self.actor, return_inverse=True)
        self.first_t, self.last_t = np.full(self.actors.size, np.inf), np.full(self.actors.size, -np.inf)
        np.minimum.at(self.first_t, self.actor_of, t)
        np.maximum.at(self.last_t, self.actor_of, t)
        self.earliest_event = np.full(self.actors.size, self.N, dtype=np.int64)
        at_first = np.flatnonzero(t == self.first_t[self.actor_of])
        np.minimum.at(self.earliest_event, self.actor_of[at_first], at_first)
        spawns = np.flatnonzero((self.kind == EVENT_CODES["spawn"]) & (self.to >= 0))
        in_time = spawns[np.lexsort((spawns, t[spawns]))]
        self.spawned, first_spawn = np.unique(tr[in_time] * span + self.to[in_time], return_index=True)
        self.spawn_at = in_time[first_spawn]
        where = np.minimum(np.searchsorted(self.actors, self.spawned), self.actors.size - 1)
        acts = self.actors[where] == self.spawned
        self.flag(self.spawned // span, acts & (self.first_t[where] < t[self.spawn_at]))
        self.spawned_actor, self.spawned_at = where[acts], self.spawn_at[acts]  # the spawned agents that act
        self.everyone = np.union1d(self.actors, self.spawned)
        returns = np.flatnonzero((self.kind == EVENT_CODES["return"]) & (self.to >= 0))
        self.flag(tr[returns], ~np.isin(tr[returns] * span + self.to[returns], self.everyone))

    def costs(self) -> None:
        """The events' costs summed per trace; more than a trace declares is rows.measure's."""
        c, B = self.c, self.B
        cost_at = np.array(c.cost_at, dtype=np.int64)
        owner = self.tr[cost_at]
        tokens, seconds = np.array(c.tokens, dtype=np.float64), np.array(c.seconds, dtype=np.float64)
        self.costed = np.bincount(owner, minlength=B) > 0
        longest = np.full(B, -np.inf)
        np.maximum.at(longest, owner, seconds)
        self.tokens, self.seconds = _sums(tokens, owner, B), _sums(seconds, owner, B)
        self.declared = [top.get("costs") or {} for top in c.tops]
        self.ok &= ~np.array(
            [_over(given, self.tokens[k], self.seconds[k], longest[k]) for k, given in enumerate(self.declared)], dtype=bool
        )

    def table(self, mapping: Subdecisions) -> dict[str, list]:
        """The measures, as rows.flatten names them; a trace with one that is not a finite
        number is left to rows.measure, which says why in a note."""
        c, B, n, t, tr = self.c, self.B, self.n, self.t, self.tr
        types = schema.event_types()
        by_type = np.bincount(tr * len(types) + self.kind, minlength=B * len(types)).reshape(B, len(types))
        stops = np.flatnonzero(self.kind == EVENT_CODES["stop"])
        stop_t = np.full(B, np.inf)
        np.minimum.at(stop_t, tr[stops], t[stops])
        chain_events, chain_s, dependencies = _critical_paths(t, self.src, self.dst, self.chosen, self.rank, tr, self.first, B)
        total_s = _busy(
            t, self.actors, self.first_t, self.last_t, self.earliest_event, self.spawned_actor, self.spawned_at, self.span, B
        )
        depth, looping = _depths(self.everyone, self.spawned, self.agent[self.spawn_at], tr[self.spawn_at], self.span, B)
        self.flag(self.everyone // self.span, looping)
        rewards, rewards_not_finite = _rewards(c, tr, B)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            speedup = total_s / chain_s
            finite = np.isfinite(total_s) & np.isfinite(chain_s) & np.isfinite(self.tokens) & np.isfinite(self.seconds)
            finite &= np.isfinite(np.where(chain_s != 0, speedup, 0.0))
        finite &= ~rewards_not_finite
        declared_rewards = [rows.declared_reward(top.get("rewards") or {}) for top in c.tops]
        finite &= np.array([why is None for _, why in declared_rewards], dtype=bool)  # a note: rows.measure says it
        self.ok &= finite

        count = dict(zip(types, by_type.T, strict=True))
        chain_known = (dependencies > 0) | (n <= 1)  # else every event would be a chain of one: a speedup of n, made up
        stopped = np.isfinite(stop_t)
        table = rows.identities(c.tops)
        table |= {
            "file": [record.file for record in c.records],
            "line": [record.line for record in c.records],
            "valid": [True] * B,
            "problem": [None] * B,
            "problems": [0] * B,
            "warnings": [0] * B,
            "events": n.tolist(),
            "edges": c.n_edges,
            "agents": np.bincount(self.everyone // self.span, minlength=B).tolist(),
            "spawns": count["spawn"].tolist(),
            "max_fanout": _fanouts(self.kind, tr, self.actor_of, t, B).tolist(),
            "depth": depth.tolist(),
            "stopped": stopped.tolist(),
            "stop_t": _rounded(stop_t, stopped),
            "total_work_events": n.tolist(),
            "critical_path_events": _kept(chain_events.tolist(), chain_known),
            "parallelism_speedup_events": _rounded(n / np.maximum(chain_events, 1), chain_known),
            "total_work_s": _rounded(total_s),
            "critical_path_s": _rounded(chain_s, chain_known),
            "parallelism_speedup": _rounded(speedup, chain_known & (chain_s != 0)),
            "protocol_overhead": _rounded(count["message"] / np.maximum(count["tool_call"], 1), count["tool_call"] > 0),
            "tokens": _rounded(self.tokens, self.costed),
            "compute_s": _rounded(self.seconds, self.costed),
            "tokens_declared": [rows.number(given.get("tokens")) for given in self.declared],
            "compute_s_declared": [rows.number(given.get("compute_s")) for given in self.declared],
            "wall_clock_s_declared": [rows.number(given.get("wall_clock_s")) for given in self.declared],
            "tool_calls_declared": [rows.number(given.get("tool_calls")) for given in self.declared],
            "messages_declared": [rows.number(given.get("messages")) for given in self.declared],
            "reward_declared": [reward for reward, _ in declared_rewards],
            "notes": _notes(self.costed, chain_known),
        }
        table |= {f"n_{name}": counts.tolist() for name, counts in count.items()}
        decisions = _subdecisions(by_type, self.kind, tr, c.decided, mapping)
        table |= {f"subdecision_{key}": counts.tolist() for key, counts in zip(mapping.events, decisions.T, strict=True)}
        table |= {f"reward_{unit}": sums for unit, sums in rewards.items()}
        return table


def _sums(values: np.ndarray, owner: np.ndarray, B: int) -> np.ndarray:
    """Per trace, the sum of its values (`owner` sorted): each added up as metrics adds it,
    by ndarray.sum, whose pairwise order np.add.reduceat does not keep (the last bit of a
    float differs, and so may a rounded measure); 0 for a trace without any (_columns.pyx
    compiles it)."""
    bounds = np.searchsorted(owner, np.arange(B + 1))
    if _native is not None:
        return np.frombuffer(_native.segment_sums(np.ascontiguousarray(values, dtype=np.float64), bounds))
    with np.errstate(over="ignore", invalid="ignore"):
        return np.array([float(values[a:b].sum()) for a, b in pairwise(bounds.tolist())])


def _rounded(values: np.ndarray, known: np.ndarray | None = None) -> list:
    """Each value rounded as metrics rounds a measure (Python's round, to 6 places), or
    None where it is not known."""
    rounded = list(map(round, values.tolist(), repeat(6)))
    if known is None or known.all():
        return rounded
    return [value if keep else None for value, keep in zip(rounded, known.tolist(), strict=True)]


def _kept(values: list, known: np.ndarray) -> list:
    return [value if keep else None for value, keep in zip(values, known.tolist(), strict=True)]


def _notes(costed: np.ndarray, chain_known: np.ndarray) -> list:
    """Why a trace's measures are null, as metrics says it."""
    costs = "; ".join(f"{schema.pointer(['costs', key, 'events'])}: {metrics.NO_COSTS}" for key in ("tokens", "seconds"))
    chain = "; ".join(f"{schema.pointer([key])}: {metrics.no_dependencies()}" for key in metrics.CHAIN_KEYS)
    said = {(True, True): None, (False, True): costs, (True, False): chain, (False, False): f"{costs}; {chain}"}
    return [said[pair] for pair in zip(costed.tolist(), chain_known.tolist(), strict=True)]


def _over(declared: dict, tokens: float, seconds: float, longest: float) -> bool:
    """Whether a trace's events cost more than it declares (rules.costs_within_totals)."""
    return bool(
        ("tokens" in declared and rules.exceeds(tokens, declared["tokens"]))
        or ("compute_s" in declared and rules.exceeds(seconds, declared["compute_s"]))
        or ("wall_clock_s" in declared and longest > declared["wall_clock_s"])
    )


_NAMES_AGENT = [EVENT_CODES[name] for name in ("spawn", "return", "message")]  # events whose `to` names an agent


def _critical_paths(t, src, dst, chosen, rank, tr, first, B) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per trace: (events, seconds, dependencies) along its longest chain of dependencies,
    as paths.critical_path finds it, every trace's edges in one pass in time order."""
    picked = np.flatnonzero(chosen)
    a, b = src[picked], dst[picked]
    by_target = np.argsort(rank[b], kind="stable")
    if _native is not None:
        length, start = np.ones(t.size, dtype=np.int64), t.copy()
        _native.longest_chains(a[by_target], b[by_target], length, start)
    else:
        length, start = _longest_chains(a[by_target].tolist(), b[by_target].tolist(), t)
    with np.errstate(over="ignore", invalid="ignore"):
        seconds = np.maximum.reduceat(t - np.array(start), first)
    events = np.maximum.reduceat(np.array(length, dtype=np.int64), first)
    return events, seconds, np.bincount(tr[a], minlength=B)


def _longest_chains(sources: list, targets: list, t: np.ndarray) -> tuple[list, list]:
    """The events of the longest chain ending at each event, and the earliest time such a
    chain starts, walking the edges in their targets' time order (_columns.pyx compiles it)."""
    length = [1] * t.size
    start = t.tolist()
    for x, y in zip(sources, targets, strict=True):
        longer = length[x] + 1
        if longer > length[y]:  # noqa: PLR1730 (as in paths.py: a call per edge costs)
            length[y] = longer
        earlier = start[x]
        if earlier < start[y]:  # noqa: PLR1730
            start[y] = earlier
    return length, start


def _busy(t, actors, first_t, last_t, earliest_event, spawned_actor, spawned_at, span, B) -> np.ndarray:
    """Per trace: the agents' busy time, summed in the order metrics.agent_lanes gives
    them (an agent is busy from its spawn, or its first event, to its last event)."""
    start = first_t.copy()
    np.minimum.at(start, spawned_actor, t[spawned_at])
    owner = actors // span
    appearance = np.lexsort((earliest_event, start, owner))
    return _sums((last_t - start)[appearance], owner[appearance], B)


def _depths(agents, spawned, spawner, spawn_tr, span, B) -> tuple[np.ndarray, np.ndarray]:
    """Per trace: the depth of its spawn tree (an agent's parent is the agent of its
    earliest spawn); and the agents whose depth never settles (a spawn loop: rows.measure
    walks it)."""
    parent = np.full(agents.size, -1, dtype=np.int64)
    parent[np.searchsorted(agents, spawned)] = np.searchsorted(agents, spawn_tr * span + spawner)
    has_parent = parent >= 0
    depth = np.zeros(agents.size, dtype=np.int64)
    for _ in range(64):
        deeper = np.where(has_parent, depth[np.maximum(parent, 0)] + 1, 0)
        changing = deeper != depth
        depth = deeper
        if not changing.any():
            break
    most = np.zeros(B, dtype=np.int64)
    np.maximum.at(most, agents // span, depth)
    return most, changing


def _fanouts(kind, tr, actor_of, t, B) -> np.ndarray:
    """Per trace: the most spawns one agent makes in one wave (a wave ends when that agent
    aggregates), as metrics.spawn_tree counts them."""
    chosen = np.flatnonzero((kind == EVENT_CODES["spawn"]) | (kind == EVENT_CODES["aggregate"]))
    most = np.zeros(B, dtype=np.int64)
    if not chosen.size:
        return most
    chosen = chosen[np.lexsort((chosen, t[chosen], actor_of[chosen]))]
    ends_wave = kind[chosen] == EVENT_CODES["aggregate"]
    spawner = actor_of[chosen]
    wave = np.cumsum(ends_wave | np.r_[True, spawner[1:] != spawner[:-1]])
    counts = np.bincount(wave[~ends_wave], minlength=wave[-1] + 1)
    owner = np.zeros(counts.size, dtype=np.int64)
    owner[wave] = tr[chosen]
    np.maximum.at(most, owner, counts)
    return most


def _subdecisions(by_type, kind, tr, decisions: list[tuple[int, str]], mapping: Subdecisions) -> np.ndarray:
    """Per trace, events per sub-decision, as metrics.subdecision_counts counts them: by
    type, except an event whose `decision` names a sub-decision of the mapping."""
    types = schema.event_types()
    ids = list(mapping.events)
    counted = np.zeros((len(types), len(ids)), dtype=np.int64)
    for k, decision in enumerate(ids):
        for name in mapping.events[decision]:
            if name in EVENT_CODES and name is not None:
                counted[EVENT_CODES[name], k] += 1
    counts = by_type @ counted
    code = {decision: k for k, decision in enumerate(ids)}
    known = [(i, code[value]) for i, value in decisions if value in code]
    if known:
        at, named = np.array(known, dtype=np.int64).T
        moved = np.zeros_like(by_type)
        np.add.at(moved, (tr[at], kind[at]), 1)
        counts -= moved @ (counted > 0).astype(np.int64)
        np.add.at(counts, (tr[at], named), 1)
    return counts


def _rewards(c: _Columns, tr, B) -> tuple[dict[str, list], np.ndarray]:
    """Per credit unit, each trace's rewards summed as the single-trace path sums them:
    the rewards of each (unit, channel) added up in file order (index.py) and rounded,
    then a unit's channels added in their alphabetical order and rounded
    (metrics.rewards_by_unit, rows.flatten); None for a trace with none of that unit.
    And which traces have a sum that is not finite (rows.measure says why in a note)."""
    span_u, span_c = max(len(c.units), 1), max(len(c.channels), 1)
    owner = tr[np.array(c.reward_at, dtype=np.int64)]
    unit, channel = np.array(c.reward_unit, dtype=np.int64), np.array(c.reward_channel, dtype=np.int64)
    keys, group = np.unique((owner * span_u + unit) * span_c + channel, return_inverse=True)
    totals = np.zeros(keys.size)
    with np.errstate(over="ignore", invalid="ignore"):  # past a double's range: not finite, noted below
        np.add.at(totals, group, np.array(c.reward_value, dtype=np.float64))  # one at a time, in the order given
    trace_unit, channel = np.divmod(keys, span_c)
    names = list(c.channels)
    alphabetical = np.empty(span_c, dtype=np.int64)
    alphabetical[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
    order = np.lexsort((alphabetical[channel], trace_unit))
    unit_keys, unit_group = np.unique(trace_unit[order], return_inverse=True)
    summed = np.zeros(unit_keys.size)
    with np.errstate(over="ignore", invalid="ignore"):
        np.add.at(summed, unit_group, np.array([round(total, 6) for total in totals[order].tolist()]))
    sums = [round(total, 6) for total in summed.tolist()]
    not_finite = np.bincount(keys[~np.isfinite(totals)] // (span_u * span_c), minlength=B) > 0
    not_finite |= np.bincount(unit_keys[~np.isfinite(summed)] // span_u, minlength=B) > 0
    owners, codes = np.divmod(unit_keys, span_u)
    columns = {}
    for name in schema.credit_units():
        column = columns[name] = [None] * B
        if name in c.units:
            chosen = codes == c.units[name]
            for k, total in zip(owners[chosen].tolist(), compress(sums, chosen.tolist()), strict=True):
                column[k] = total
    return columns, not_finite
