"""Every measure of a trace, each written once, over a batch of traces side by side.

A batch is the disjoint union of its traces' graphs: each event is a position in the
batch, each trace a run of positions (`Batch.n` of them, in order), each agent a key,
trace * span + the code of its name. A single trace is a batch of one (metrics.py and
rows.measure, from the index validation built); a corpus is measured two hundred
traces at a time (batch.py, from its own reader). Both read the same functions here,
so a trace's measures are the same whichever way it was read.

MEASURES is the table of the measures as a corpus's columns, each with its
description; metrics.py gives the same values nested as `trace metrics` reports them.

What a measure may meet: an event that broke the schema of a trace declaring none is
inert (time NaN, type and agent -1) and counts for nothing; a tool_result's work is its
caller's (`actor`, set by the rules that pair results with calls); a sum past a
double's range is infinite and its measure null, with a note saying why.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise

import numpy as np

from . import paths, schema
from .compiled import loops as _native
from .index import EVENT_CODES, TraceIndex


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # string, int, float or bool: one Arrow and DuckDB type each
    about: str


@dataclass
class Batch:
    """Traces' events and edges as columns. Codes of agent names are below `span`."""

    n: np.ndarray  # events of each trace
    n_edges: np.ndarray  # edges of each trace
    t: np.ndarray  # float64; NaN: an inert event
    kind: np.ndarray  # position in schema.event_types(); -1: inert
    agent: np.ndarray  # the code of `agent`; -1: inert
    actor: np.ndarray  # whose work each event is: `agent`, or a paired tool_result's caller
    to: np.ndarray  # the code of `to` of a spawn, return or message; -1 where there is none
    span: int
    src: np.ndarray  # each edge's ends as event positions (each trace's edges in turn); negative: no event
    dst: np.ndarray
    edge_kind: np.ndarray  # position in schema.edge_types()
    cost_at: np.ndarray  # the events that declare a cost, ascending, and its tokens and seconds
    tokens: np.ndarray
    seconds: np.ndarray
    decided_at: np.ndarray  # the events that name a `decision`, and the names
    decisions: list
    reward_at: np.ndarray  # each reward's event (ascending), credit unit, channel and value, in file order
    reward_unit: np.ndarray  # codes in `units`
    reward_channel: np.ndarray  # codes in `channels`
    reward_value: np.ndarray
    units: list = field(default_factory=list)
    channels: list = field(default_factory=list)
    chain: tuple | None = None  # a trace's critical path when another process found it (links.py)

    @classmethod
    def of(cls, ix: TraceIndex) -> Batch:
        """A validated trace's index (its tool results paired) as a batch of one."""
        positions, values = ix.fields["decision"]
        rewards = ix.rewards
        return cls(
            n=np.array([ix.n]),
            n_edges=np.array([ix.n_edges]),
            t=ix.t,
            kind=ix.type_code,
            agent=ix.agent_code,
            actor=ix.agent_code if ix.actor_code is None else ix.actor_code,
            to=ix.coded("to"),
            span=max(len(ix.agent_names), 1),
            src=ix.src,
            dst=ix.dst,
            edge_kind=ix.edge_code,
            cost_at=ix.fields["cost"][0],
            tokens=ix.tokens,
            seconds=ix.seconds,
            decided_at=positions,
            decisions=values,
            reward_at=rewards.at,
            reward_unit=rewards.unit,
            reward_channel=rewards.channel,
            reward_value=rewards.value,
            units=rewards.units,
            channels=rewards.channels,
            chain=ix.chain,
        )


def of_index(ix: TraceIndex) -> Measures:
    """The measures of a validated trace, once its tool results are paired (the graph
    rules read some of them; the report, the row and the timeline read them all)."""
    if "measures" not in ix._cache:
        ix._cache["measures"] = Measures(Batch.of(ix))
    return ix._cache["measures"]


class Measures:
    """The measures of a batch's traces, each an array with one value per trace (or per
    agent, for the lanes), computed when first read."""

    def __init__(self, batch: Batch):
        self.batch = b = batch
        self.B = b.n.size
        self.N = int(b.n.sum())
        self.tr = np.repeat(np.arange(self.B), b.n)  # each event's trace
        self.first = np.r_[0, np.cumsum(b.n)[:-1]].astype(np.int64)  # each trace's first event

    @cached_property
    def by_type(self) -> np.ndarray:
        """Events of each type, per trace: a (traces, event types) array."""
        b, types = self.batch, len(schema.event_types())
        valid = b.kind >= 0
        counts = np.bincount(self.tr[valid] * types + b.kind[valid], minlength=self.B * types)
        return counts.reshape(self.B, types)

    def count(self, event_type: str) -> np.ndarray:
        return self.by_type[:, EVENT_CODES[event_type]]

    @cached_property
    def actors(self) -> Actors:
        return Actors.of(self)

    @cached_property
    def spawned(self) -> tuple[np.ndarray, np.ndarray]:
        """(key, position of its earliest spawn) of every agent a spawn names: the earliest
        in time, the first in the file among spawns of one time."""
        b = self.batch
        spawns = np.flatnonzero((b.kind == EVENT_CODES["spawn"]) & (b.to >= 0))
        in_time = spawns[np.lexsort((spawns, b.t[spawns]))]
        keys, first = np.unique(self.tr[in_time] * b.span + b.to[in_time], return_index=True)
        return keys, in_time[first]

    @cached_property
    def everyone(self) -> np.ndarray:
        """The keys of the agents: whoever acts, and whoever is spawned."""
        return np.union1d(self.actors.keys, self.spawned[0])

    @cached_property
    def agents(self) -> np.ndarray:
        return np.bincount(self.everyone // self.batch.span, minlength=self.B)

    @cached_property
    def stop_t(self) -> np.ndarray:
        """The time of each trace's first stop event; infinite for a trace that has none."""
        b = self.batch
        stops = np.flatnonzero(b.kind == EVENT_CODES["stop"])
        stop_t = np.full(self.B, np.inf)
        np.minimum.at(stop_t, self.tr[stops], b.t[stops])
        return stop_t

    @cached_property
    def max_fanout(self) -> np.ndarray:
        """The most spawns one agent makes in one wave, a wave ending when that agent aggregates."""
        b, of = self.batch, self.actors.of_event
        chosen = np.flatnonzero((b.kind == EVENT_CODES["spawn"]) | (b.kind == EVENT_CODES["aggregate"]))
        most = np.zeros(self.B, dtype=np.int64)
        if not chosen.size:
            return most
        chosen = chosen[np.lexsort((chosen, b.t[chosen], of[chosen]))]  # by agent, then in time order
        ends_wave = b.kind[chosen] == EVENT_CODES["aggregate"]
        spawner = of[chosen]
        wave = np.cumsum(ends_wave | np.r_[True, spawner[1:] != spawner[:-1]])
        counts = np.bincount(wave[~ends_wave], minlength=wave[-1] + 1)
        owner = np.zeros(counts.size, dtype=np.int64)
        owner[wave] = self.tr[chosen]
        np.maximum.at(most, owner, counts)
        return most

    @cached_property
    def depth(self) -> np.ndarray:
        """The depth of each trace's spawn tree: 0 when nobody is spawned, 1 when only the
        root agents spawn, and so on (an agent's parent is the agent of its earliest spawn)."""
        b, everyone = self.batch, self.everyone
        spawned, spawn_at = self.spawned
        parent = np.full(everyone.size, -1, dtype=np.int64)
        parent[np.searchsorted(everyone, spawned)] = np.searchsorted(everyone, self.tr[spawn_at] * b.span + b.agent[spawn_at])
        has_parent = parent >= 0
        depth = np.zeros(everyone.size, dtype=np.int64)
        for _ in range(64):  # one level per pass: spawn trees are shallow
            deeper = np.where(has_parent, depth[np.maximum(parent, 0)] + 1, 0)
            if np.array_equal(deeper, depth):
                break
            depth = deeper
        else:  # deeper than 64, or a loop of spawns at one time, which never settles: walked instead
            children = np.flatnonzero(has_parent)
            depth = _walked_depths(parent.tolist(), children[np.argsort(self._mentioned(everyone)[children], kind="stable")])
        most = np.zeros(self.B, dtype=np.int64)
        np.maximum.at(most, everyone // b.span, depth)
        return most

    def _mentioned(self, keys: np.ndarray) -> np.ndarray:
        """The first position at which each agent is named (as `agent` or `to`): the order
        the walk of a loop takes, whatever codes a batch gave the names."""
        b = self.batch
        where = np.full(keys.size, self.N, dtype=np.int64)
        for codes in (b.agent, b.to):
            named = np.flatnonzero(codes >= 0)
            at = np.searchsorted(keys, self.tr[named] * b.span + codes[named])
            found = (at < keys.size) & (keys[np.minimum(at, keys.size - 1)] == self.tr[named] * b.span + codes[named])
            np.minimum.at(where, at[found], named[found])
        return where

    @cached_property
    def chain(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(events, seconds, dependencies) of each trace's longest chain of dependencies (paths.py)."""
        b = self.batch
        if b.chain is not None:
            return tuple(np.array([value]) for value in b.chain)
        return paths.critical_paths(b.t, b.src, b.dst, b.edge_kind, self.tr, self.first, self.B)

    @cached_property
    def lanes(self) -> Lanes:
        return Lanes.of(self)

    @cached_property
    def costs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(whether any event declares a cost, tokens summed, seconds summed) per trace."""
        b = self.batch
        owner = self.tr[b.cost_at]
        return np.bincount(owner, minlength=self.B) > 0, sums(b.tokens, owner, self.B), sums(b.seconds, owner, self.B)

    @cached_property
    def longest_cost(self) -> np.ndarray:
        """The most seconds one event of each trace declares (-inf without any)."""
        longest = np.full(self.B, -np.inf)
        np.maximum.at(longest, self.tr[self.batch.cost_at], self.batch.seconds)
        return longest

    def subdecisions(self, mapping) -> np.ndarray:
        """Events per sub-decision, per trace ((traces, sub-decisions)): by type, as the
        mapping counts types, except an event whose `decision` names a sub-decision."""
        b, by_type = self.batch, self.by_type
        ids = list(mapping.events)
        counted = np.zeros((by_type.shape[1], len(ids)), dtype=np.int64)
        for k, decision in enumerate(ids):
            for name in mapping.events[decision]:
                if name in EVENT_CODES and name is not None:
                    counted[EVENT_CODES[name], k] += 1
        counts = by_type @ counted
        code = {decision: k for k, decision in enumerate(ids)}
        known = [(i, code[value]) for i, value in zip(b.decided_at.tolist(), b.decisions, strict=True) if value in code]
        if known:  # a value that is no sub-decision of this mapping leaves the event counted by its type
            at, named = np.array(known, dtype=np.int64).T
            moved = np.zeros_like(by_type)
            np.add.at(moved, (self.tr[at], b.kind[at]), 1)
            counts -= moved @ (counted > 0).astype(np.int64)
            np.add.at(counts, (self.tr[at], named), 1)
        return counts

    @cached_property
    def rewards(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(trace, unit, channel, total) of every credit unit and channel a trace's events
        carry rewards for: each total added up in file order, sorted by trace, then unit in
        the schema's order, then channel in alphabetical order."""
        b = self.batch
        span_u, span_c = max(len(b.units), 1), max(len(b.channels), 1)
        keys, group = np.unique((self.tr[b.reward_at] * span_u + b.reward_unit) * span_c + b.reward_channel, return_inverse=True)
        totals = np.zeros(keys.size)
        with np.errstate(over="ignore", invalid="ignore"):  # past a double's range: not finite, a note says so
            np.add.at(totals, group, b.reward_value)  # one at a time, in the order given
        trace_unit, channel = np.divmod(keys, span_c)
        owner, unit = np.divmod(trace_unit, span_u)
        units = schema.credit_units()
        unit_order = np.array([units.index(name) if name in units else len(units) for name in b.units] or [0])[unit]
        alphabetical = np.empty(span_c, dtype=np.int64)
        alphabetical[sorted(range(len(b.channels)), key=b.channels.__getitem__)] = np.arange(len(b.channels))
        order = np.lexsort((alphabetical[channel], unit_order, owner))
        return owner[order], unit[order], channel[order], totals[order]


@dataclass
class Actors:
    """The agents that do some event's work, by key (sorted), and each event's actor."""

    keys: np.ndarray
    of_event: np.ndarray  # each event's actor, as a position in keys (-1: an inert event)
    first_t: np.ndarray
    last_t: np.ndarray
    earliest: np.ndarray  # the position of each one's earliest event: at its first time, the first in the file
    events: np.ndarray  # how many events each does

    @classmethod
    def of(cls, m: Measures) -> Actors:
        b = m.batch
        acting = np.flatnonzero(b.actor >= 0)
        keys, inverse = np.unique(m.tr[acting] * b.span + b.actor[acting], return_inverse=True)
        of = np.full(m.N, -1, dtype=np.int64)
        of[acting] = inverse
        first_t, last_t = np.full(keys.size, np.inf), np.full(keys.size, -np.inf)
        np.minimum.at(first_t, inverse, b.t[acting])
        np.maximum.at(last_t, inverse, b.t[acting])
        at_first = acting[b.t[acting] == first_t[inverse]]
        earliest = np.full(keys.size, m.N, dtype=np.int64)
        np.minimum.at(earliest, of[at_first], at_first)
        return cls(keys, of, first_t, last_t, earliest, np.bincount(inverse, minlength=keys.size))

    def where(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(position in self.keys, whether that agent acts) of each key."""
        if not self.keys.size:
            return np.zeros(keys.size, dtype=np.int64), np.zeros(keys.size, dtype=bool)
        at = np.minimum(np.searchsorted(self.keys, keys), self.keys.size - 1)
        return at, self.keys[at] == keys


@dataclass
class Lanes:
    """One lane of the timeline per acting agent, in each trace's order of appearance: an
    agent is busy from its spawn (or, when nobody spawns it, its first event) to its last
    event."""

    owner: np.ndarray  # each lane's trace (ascending)
    name: np.ndarray  # the code of its agent's name
    events: np.ndarray
    start: np.ndarray
    end: np.ndarray
    busy: np.ndarray
    total: np.ndarray  # per trace: the busy times added up, in lane order (total_work_s)

    @classmethod
    def of(cls, m: Measures) -> Lanes:
        actors, span = m.actors, m.batch.span
        start = actors.first_t.copy()
        spawned, spawn_at = m.spawned
        at, acts = actors.where(spawned)
        np.minimum.at(start, at[acts], m.batch.t[spawn_at[acts]])
        owner = actors.keys // span
        order = np.lexsort((actors.earliest, start, owner))
        with np.errstate(over="ignore", invalid="ignore"):  # past a double's range: not finite, a note says so
            busy = (actors.last_t - start)[order]
            total = sums(busy, owner[order], m.B)
        return cls(owner[order], actors.keys[order] % span, actors.events[order], start[order], actors.last_t[order], busy, total)


def _walked_depths(parent: list[int], children) -> np.ndarray:
    """Each agent's depth, following each chain of parents once: up to a root, an agent
    already known, or where a loop closes (a set says which agents the chain holds: a
    list, searched at each step, made a chain of 60,000 spawns take 18 s)."""
    known: dict[int, int] = {}
    for start in children.tolist():
        chain, on_chain, node = [], set(), start
        while parent[node] >= 0 and node not in known and node not in on_chain:
            chain.append(node)
            on_chain.add(node)
            node = parent[node]
        base = known.get(node, 0)  # a root, a known depth, or where a loop closes
        for offset, member in enumerate(reversed(chain), start=1):
            known[member] = base + offset
    depth = np.zeros(len(parent), dtype=np.int64)
    if known:
        depth[list(known)] = list(known.values())
    return depth


def sums(values: np.ndarray, owner: np.ndarray, B: int) -> np.ndarray:
    """Per trace, the sum of its values (`owner`: each value's trace, ascending), each
    added up as ndarray.sum adds it (numpy's pairwise order, which np.add.reduceat does
    not keep: the last bit of a float, and so a rounded measure, would differ between a
    trace measured alone and in a batch); 0 for a trace without any (compiled in
    _columns.pyx)."""
    bounds = np.searchsorted(owner, np.arange(B + 1))
    if _native is not None:
        return np.frombuffer(_native.segment_sums(np.ascontiguousarray(values, dtype=np.float64), bounds))
    with np.errstate(over="ignore", invalid="ignore"):
        return np.array([float(values[a:b].sum()) for a, b in pairwise(bounds.tolist())])


def rounded(values: np.ndarray, known: np.ndarray | None = None) -> list:
    """Each value rounded as a measure is (Python's round, to 6 places); None where it is
    not known or not a finite number."""
    values = values.tolist()
    if known is None:
        return [round(value, 6) if math.isfinite(value) else None for value in values]
    return [
        round(value, 6) if keep and math.isfinite(value) else None for value, keep in zip(values, known.tolist(), strict=True)
    ]


# Why a measure is null. Each note's key is the JSON pointer of the measure in
# `trace metrics --format json` (a corpus's `notes` column joins them).
NO_COSTS = "unknown: no event declares a cost (tokens or seconds), so the events' costs cannot be summed"
NOT_FINITE = (
    "not a finite number: the trace's numbers are too large to add up, subtract or divide within a double's range (about 1.8e308)"
)
CHAIN_KEYS = ("critical_path_events", "parallelism_speedup_events", "critical_path_s", "parallelism_speedup")


@functools.cache  # asked for each trace without dependencies in a batch
def no_dependencies() -> str:
    """Why the critical path of a trace without dependencies is unknown (the ordering edge
    types are the schema's)."""
    ordering = [name for name in schema.edge_types() if name in schema.ordering_edge_types()]
    return (
        f"unknown: the trace has no dependencies (no {', '.join(ordering[:-1])} or {ordering[-1]} edge, and no other "
        "edge forward in time), so no chain of dependencies, and no critical path, can be known; add its edges"
    )


class Values:
    """The measures as a corpus's columns (MEASURES) and as the values `trace metrics`
    reports: rounded, None where unknown, and a note for each None that needs one, in
    the order of the report's keys."""

    def __init__(self, m: Measures):
        self.m = m
        b, n = m.batch, m.batch.n
        chain_events, chain_s, dependencies = m.chain
        self.chain_known = (dependencies > 0) | (n <= 1)  # else every event is a chain of one: a speedup of n, made up
        self.costed, tokens, seconds = m.costs
        total_s = m.lanes.total
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            speedup = total_s / chain_s
        messages, tool_calls = m.count("message"), m.count("tool_call")
        stopped = np.isfinite(m.stop_t)
        self.columns = {
            "events": n.tolist(),
            "edges": b.n_edges.tolist(),
            "agents": m.agents.tolist(),
            "spawns": m.count("spawn").tolist(),
            "max_fanout": m.max_fanout.tolist(),
            "depth": m.depth.tolist(),
            "stopped": stopped.tolist(),
            "stop_t": rounded(m.stop_t, stopped),
            "total_work_events": n.tolist(),
            "critical_path_events": rounded(chain_events, self.chain_known),  # whole numbers: round keeps them ints
            "parallelism_speedup_events": rounded(n / np.maximum(chain_events, 1), self.chain_known & (chain_events > 0)),
            "total_work_s": rounded(total_s),
            "critical_path_s": rounded(chain_s, self.chain_known),
            "parallelism_speedup": rounded(speedup, self.chain_known & (chain_s != 0)),
            "protocol_overhead": rounded(messages / np.maximum(tool_calls, 1), tool_calls > 0),
            "tokens": rounded(tokens, self.costed),
            "compute_s": rounded(seconds, self.costed),
        }
        self.not_finite = {  # the report's pointer of each measure that may pass a double's range
            "stop_t": stopped & ~np.isfinite(m.stop_t),
            "total_work_s": ~np.isfinite(total_s),
            "critical_path_s": self.chain_known & ~np.isfinite(chain_s),
            "parallelism_speedup": self.chain_known & (chain_s != 0) & ~np.isfinite(speedup),
            "costs/tokens/events": self.costed & ~np.isfinite(tokens),
            "costs/seconds/events": self.costed & ~np.isfinite(seconds),
        }
        owner, unit, channel, totals = m.rewards
        self.reward_rows = (owner, unit, channel, [round(total, 6) for total in totals.tolist()])

    def by_unit(self, k: int) -> dict[str, dict[str, float | None]]:
        """Trace k's rewards: credit unit -> channel -> total (None: not finite)."""
        return dict(self._by_unit[k])

    @cached_property
    def _by_unit(self) -> list[dict]:
        """Every trace's by_unit, in one pass over the reward rows (a search per trace cost
        a corpus of small traces a fifth of its time)."""
        b = self.m.batch
        owner, unit, channel, totals = self.reward_rows
        found: list[dict] = [{} for _ in range(self.m.B)]
        for k, at_unit, at_channel, total in zip(owner.tolist(), unit.tolist(), channel.tolist(), totals, strict=True):
            found[k].setdefault(b.units[at_unit], {})[b.channels[at_channel]] = total if math.isfinite(total) else None
        return found

    @cached_property
    def _flags(self) -> tuple[list, list, dict]:
        """costed, chain_known and not_finite as lists: read per trace, a numpy scalar each costs more."""
        return self.costed.tolist(), self.chain_known.tolist(), {key: mask.tolist() for key, mask in self.not_finite.items()}

    def notes(self, k: int) -> list[dict]:
        """Why trace k's measures are null, each by the report's JSON pointer."""
        return [{"key": key, "why": why} for key, why in self._notes(k)]

    def said(self, k: int) -> list[str]:
        """The notes as a corpus's `notes` column joins them, `pointer: why` each."""
        fixed = _fixed_lines()
        return [fixed.get(note) or f"{note[0]}: {note[1]}" for note in self._notes(k)]

    def _notes(self, k: int) -> list[tuple[str, str]]:
        costed, chain_known, not_finite = self._flags
        notes = []
        if not costed[k]:
            notes += _NO_COSTS
        if not chain_known[k]:
            notes += _no_chain()
        notes += [(_pointer(key), NOT_FINITE) for key, mask in not_finite.items() if mask[k]]
        for unit, channels in self.by_unit(k).items():
            notes += [
                (schema.pointer(["rewards", "by_unit", unit, name]), NOT_FINITE)
                for name, total in channels.items()
                if total is None
            ]
        return notes


# The notes most traces of a corpus share, made once (a pointer and its line per trace
# were a tenth of a small trace's cost).
_NO_COSTS = [(schema.pointer(["costs", key, "events"]), NO_COSTS) for key in ("tokens", "seconds")]


@functools.cache
def _no_chain() -> list[tuple[str, str]]:
    return [(schema.pointer([key]), no_dependencies()) for key in CHAIN_KEYS]


@functools.cache
def _pointer(key: str) -> str:
    return schema.pointer(key.split("/"))


@functools.cache
def _fixed_lines() -> dict[tuple[str, str], str]:
    """The lines of the notes of fixed wording (a reward channel's is made each time)."""
    fixed = _NO_COSTS + _no_chain()
    return {note: f"{note[0]}: {note[1]}" for note in fixed}


MEASURES = (
    Column("events", "int", "events"),
    Column("edges", "int", "edges"),
    Column("agents", "int", "agents that act or are spawned"),
    Column("spawns", "int", "spawn events"),
    Column("max_fanout", "int", "the most sub-agents one agent spawns in one wave (a wave ends when that agent aggregates)"),
    Column("depth", "int", "the depth of the spawn tree"),
    Column("stopped", "bool", "whether the trace has a stop event"),
    Column("stop_t", "float", "the time of its first stop"),
    Column("total_work_events", "int", "every event is a unit of work"),
    Column("critical_path_events", "int", "the longest chain of dependencies, in events (null without any dependency)"),
    Column("parallelism_speedup_events", "float", "total_work_events / critical_path_events"),
    Column("total_work_s", "float", "the agents' busy time, summed, in the trace's time unit"),
    Column("critical_path_s", "float", "the critical path's length in time"),
    Column("parallelism_speedup", "float", "total_work_s / critical_path_s"),
    Column("protocol_overhead", "float", "messages per tool call"),
    Column("tokens", "float", "tokens, summed over the events' costs"),
    Column("compute_s", "float", "seconds of compute, summed over the events' costs"),
)
