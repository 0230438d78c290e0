"""The rows of many traces at once: how `trace metrics` measures a corpus at the speed
of parsing it.

Measured one at a time (rows.measure), a trace of 50 events costs some 750 us, nearly
all of it the fixed cost of a few hundred small numpy calls and of Python reading each
event field by field. Here a batch of traces is read into one set of columns (the
loops compiled in _columns.pyx, each with its Python version here for an install
without a C compiler), the rules checked over the whole batch, and the batch measured
by measures.py, which measures a single trace the same way, as a batch of one.

What this path reads and checks is its own, for speed: it vouches only for a trace
that passes the schema (or, declaring none, the survey artifact's reading of it, its
warnings counted as validation counts them: artifact.read_whole), gives no key twice,
and keeps the graph rules it checks, but one: a tool_result that answers no call, which
in the artifact's format is a warning, is counted here as validation counts it.
Everything else (an invalid trace, one that breaks another graph rule, one whose edges
between events of one time run against the file's order, which may close a cycle) is
checked by rows.measure, which says what is wrong exactly as `trace validate` does. So
the two readings and the two checks remain, and tests/traces/test_trace_batch.py holds them to the same rows over
synthetic, imported and hand-written traces; the measures are one.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from functools import cached_property
from itertools import chain, compress, repeat
from operator import is_not, itemgetter

import numpy as np
import orjson

from . import artifact, duplicates, measures, paths, rows, rules, schema, validation
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
    alike: dict[bytes, rows.Measured] = {}  # short lines measured once (a million lines of `{}` in 3 MB)
    k = 0
    for i, (record, took) in enumerate(zip(batch, taken, strict=True)):
        if took and ok[k]:
            row = {name: values[k] for name, values in measured.items()}
        else:
            found = _measured_once(record, mapping, limits, alike)
            row = found.row
            if found.problem:
                problems.append(found.problem)
        for name in names:
            table[name][i] = row.get(name)
        k += took
    return Rows(table, problems, sum(ok))


SHORT = 256  # bytes: a line this short is measured once for all its copies in a batch


def _measured_once(record: Record, mapping: Subdecisions, limits: Limits, alike: dict) -> rows.Measured:
    """rows.measure of a record, or of a short line of a JSON Lines file with the same bytes
    measured before in this batch, named as this one. Only lines: what is said of a file
    holding one trace is worded for a file, and names it in the command that converts it."""
    data = record.data
    if data is None or len(data) > SHORT or record.line is None:
        return rows.measure(record, mapping, limits)
    earlier = alike.get(data)
    if earlier is None:
        alike[data] = found = rows.measure(record, mapping, limits)
        return found
    before = Record(earlier.row["file"], earlier.row["line"], data)
    problem = earlier.problem and record.label + earlier.problem.removeprefix(before.label)
    return rows.Measured(earlier.row | {"file": record.file, "line": record.line}, problem)


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
        self.warnings: list[int] = []  # what validation warns of (a trace that declares no schema)
        self.declared: list[bool] = []  # whether each declares paperpool's schema
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
        if not isinstance(trace, dict) or validation.too_many_channels(trace) is not None:
            return False
        events, edges = trace.get("events"), trace.get("edges")
        if not (isinstance(events, list) and isinstance(edges, list) and 0 < len(events) <= self.max_events):
            return False
        declared = validation.declares_schema(trace)
        if declared:
            if not schema.valid(trace):
                return False
            warnings = 0
        else:  # read as the survey artifact's format allows (artifact.py)
            read = artifact.read_whole(trace)
            if read is None:
                return False
            warnings, events = read
        if not (_read if _native is None else _read_natively)(self, data, trace, events, edges):
            return False
        self.warnings.append(warnings)
        self.declared.append(declared)
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
    """The columns of the traces taken, and whether each keeps every rule (the others'
    rows are left to rows.measure)."""
    graph = _Graph(c)
    for rule in (graph.times, graph.edges, graph.results, graph.agents, graph.costs):
        rule()
    B = c.traces
    table = rows.identities(c.tops) | {
        "file": [record.file for record in c.records],
        "line": [record.line for record in c.records],
        "valid": [True] * B,
        "problem": [None] * B,
        "problems": [0] * B,
        "warnings": c.warnings,
    }
    table |= rows.table(measures.Values(graph.measures), c.tops, mapping)
    return table, graph.ok.tolist()


class _Graph:
    """The rules a batch checks before its traces are measured, each clearing `ok` for
    the traces it cannot vouch for; rows.measure then checks those one at a time and
    says what is wrong (rules.py). The measures are measures.py's, as for one trace."""

    def __init__(self, c: _Columns):
        self.c = c
        self.B = B = c.traces
        n = np.array(c.n, dtype=np.int64)
        self.N = int(n.sum())
        self.tr = np.repeat(np.arange(B), n)  # each event's trace
        self.t = np.array(c.t, dtype=np.float64)  # copies, never views: the compiled reader grows its arrays unchecked
        self.kind = kind = np.array(c.kind, dtype=np.int8)
        self.agent = np.array(c.agent, dtype=np.int64)
        uses_tool = (kind == EVENT_CODES["tool_call"]) | (kind == EVENT_CODES["tool_result"])
        self.tool = np.where(uses_tool, np.array(c.tool, dtype=np.int64), -1)
        self.src, self.dst = np.array(c.src, dtype=np.int64), np.array(c.dst, dtype=np.int64)
        self.ok = np.ones(B, dtype=bool)
        self.batch = measures.Batch(
            n=n,
            n_edges=np.array(c.n_edges, dtype=np.int64),
            t=self.t,
            kind=kind,
            agent=self.agent,
            actor=self.agent,  # until results() pairs them
            to=np.where(np.isin(kind, _NAMES_AGENT), np.array(c.to, dtype=np.int64), -1),
            span=max(len(c.names), 1),
            src=self.src,
            dst=self.dst,
            edge_kind=np.array(c.edge_kind, dtype=np.int8),
            cost_at=np.array(c.cost_at, dtype=np.int64),
            tokens=np.array(c.tokens, dtype=np.float64),
            seconds=np.array(c.seconds, dtype=np.float64),
            decided_at=np.array([at for at, _ in c.decided], dtype=np.int64),
            decisions=[decision for _, decision in c.decided],
            reward_at=np.array(c.reward_at, dtype=np.int64),
            reward_unit=np.array(c.reward_unit, dtype=np.int64),
            reward_channel=np.array(c.reward_channel, dtype=np.int64),
            reward_value=np.array(c.reward_value, dtype=np.float64),
            units=list(c.units),
            channels=list(c.channels),
        )

    @cached_property
    def measures(self) -> measures.Measures:
        """The batch's measures, once results() has said whose work each event is."""
        return measures.Measures(self.batch)

    def flag(self, owner: np.ndarray, broken: np.ndarray) -> None:
        """Leave to rows.measure the traces (`owner`: each item's trace) with a broken item."""
        self.ok &= np.bincount(owner[broken], minlength=self.B) == 0

    def times(self) -> None:
        """A time past a double's range is infinite: the loader's to refuse."""
        self.flag(self.tr, ~np.isfinite(self.t))

    def edges(self) -> None:
        """Ordering edges run forward in time (rules.ordering); one between events of one
        time against the file's order may close a cycle, which rules.ordering searches."""
        t, src, dst = self.t, self.src, self.dst
        edge_tr = self.tr[src]
        ordering = np.isin(self.batch.edge_kind, [EDGE_CODES[name] for name in schema.ordering_edge_types()])
        self.flag(edge_tr, ordering & (t[src] > t[dst]))
        rank = np.empty(self.N, dtype=np.int64)
        rank[paths.time_order(t, self.tr)] = np.arange(self.N)
        self.flag(edge_tr, ordering & (t[src] == t[dst]) & (rank[src] >= rank[dst]))

    def results(self) -> None:
        """Each tool_result's call, as rules.tool_results pairs them: the one `call` names,
        else the first tool_call with an edge into it, else the latest call of the same
        tool made no later. A wrong `call` is rows.measure's to word. The actor of a
        result is then its caller."""
        kind = self.kind
        results = np.flatnonzero(kind == EVENT_CODES["tool_result"])
        given = np.array(self.c.call_given, dtype=bool)[results]
        named = np.array(self.c.named_call, dtype=np.int64)[results]
        calls = np.where(given, named, rules.linked_calls(kind, self.src, self.dst, results))
        checked = np.flatnonzero(calls >= 0)
        wrong = rules.mismatched(kind, self.t, self.tool, results[checked], calls[checked], self.c.tools[NO_TOOL])
        calls[checked[wrong]] = -1  # a wrong call answers nothing
        self.flag(self.tr[results], given & (calls < 0))
        by_tool = np.flatnonzero(~given & (calls < 0))
        calls[by_tool] = self.latest_calls(results[by_tool])
        self.unanswered(results[by_tool[calls[by_tool] < 0]])
        answered = calls >= 0
        actor = self.agent.copy()
        actor[results[answered]] = self.agent[calls[answered]]
        self.batch.actor = actor

    def latest_calls(self, results: np.ndarray) -> np.ndarray:
        """For each result, the latest tool_call of its trace and tool in time order (ties
        in the file's), at or before it, or -1 (rules._pair_by_tool, for a whole batch)."""
        calls = np.flatnonzero(self.kind == EVENT_CODES["tool_call"])
        candidates = np.concatenate([calls, results])
        order = np.lexsort((candidates, self.t[candidates], self.tool[candidates], self.tr[candidates]))
        ordered = candidates[order]
        group = self.tr[ordered] * (len(self.c.tools) + 1) + self.tool[ordered]
        last = np.where(order < calls.size, np.arange(order.size), -1)  # each place's latest call so far
        np.maximum.accumulate(last, out=last)
        found = np.full(order.size, -1, dtype=np.int64)
        seen = last >= 0
        seen[seen] = group[last[seen]] == group[seen]
        found[seen] = ordered[last[seen]]
        place = np.empty_like(order)
        place[order] = np.arange(order.size)
        return found[place[calls.size :]]

    def unanswered(self, results: np.ndarray) -> None:
        """Results answering no call: an error in paperpool's format (rows.measure's to
        say), a warning in the artifact's, counted as validation counts a rule's findings
        (those alike in wording are one; the first MOST_PROBLEMS + 1 in time order are
        worded, as rules.tool_results words them)."""
        if not results.size:
            return
        declared = np.array(self.c.declared, dtype=bool)
        self.flag(self.tr[results], declared[self.tr[results]])
        results = results[~declared[self.tr[results]]]
        owner = self.tr[results]
        results = results[np.lexsort((results, self.t[results], owner))]
        owner = self.tr[results]
        starts = np.searchsorted(owner, owner)  # each result's rank in its trace, in time order
        kept = np.arange(results.size) - starts <= schema.MOST_PROBLEMS
        names = {code: name for name, code in self.c.tools.items() if name is not None}
        said: dict[int, set[str]] = {}
        for k, at in zip(owner[kept].tolist(), results[kept].tolist(), strict=True):
            said.setdefault(k, set()).add(validation.alike(rules.unanswered(names[int(self.tool[at])], self.t[at])))
        for k, shapes in said.items():
            self.c.warnings[k] += len(shapes)

    def agents(self) -> None:
        """An agent acts no earlier than its spawn, and a return goes to an agent of the
        trace (rules.spawned_agents_act_after_spawn, rules.returns_reach_agents)."""
        m = self.measures
        self.ok[rules.acting_before_spawn(m)[0] // self.batch.span] = False
        self.ok[self.tr[rules.stray_returns(m)]] = False

    def costs(self) -> None:
        """The events cost no more than a trace declares (rules.costs_within_totals)."""
        _, tokens, seconds = self.measures.costs
        longest = self.measures.longest_cost
        for k, top in enumerate(self.c.tops):
            if rules.over_declared(top.get("costs") or {}, tokens[k], seconds[k], longest[k]):
                self.ok[k] = False


_NAMES_AGENT = [EVENT_CODES[name] for name in ("spawn", "return", "message")]  # events whose `to` names an agent
