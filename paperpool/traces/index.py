"""A trace as arrays: every event's time, type and agent, every edge's two ends, so that
the graph rules and the metrics run in time linear in events plus edges, mostly inside
numpy.

Reading a parsed trace is bound by memory, not by arithmetic: its objects are scattered
over hundreds of megabytes, and each pass over the events pays a cache miss per event.
So the events are read in one Python pass that takes every field the rules and metrics
need, each name turned into a code while its event is still in cache.

Events and edges that broke the schema are kept in place (pointers stay the file's
positions) but made inert: their time is NaN, which no comparison holds for, and their
type and agent are unknown, so no graph rule reports again on what the schema said.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from itertools import repeat

import numpy as np

from . import schema
from .compiled import loops as _native

MISSING = -1  # an edge end that names no event
BROKEN = -2  # an edge the schema refused: not judged again


@dataclass
class TraceIndex:
    source: object  # where single events and edges are read from, for messages
    n: int
    n_edges: int
    ids: list  # each event's id (an unusable one stands for a broken event's)
    unique: bool  # whether every event has its own id
    t: np.ndarray  # float64, NaN for an inert event
    type_code: np.ndarray  # int8 position in schema.event_types(), -1 when inert
    agent_code: np.ndarray  # int64 position in agent_names, -1 when inert
    agent_names: list  # each name in `agent` or `to`, in order of first appearance
    tool_names: list  # each name in `tool`, in the same way
    src: np.ndarray  # int64 event position, MISSING or BROKEN
    dst: np.ndarray
    edge_code: np.ndarray  # int8 position in schema.edge_types(), -1 when broken
    fields: dict  # to, tool, call, decision: (positions of the events that have it, values)
    named_calls: np.ndarray  # for each `call` in fields: the position of the event it names, or MISSING
    tokens: np.ndarray  # per event with a cost (positions in fields["cost"])
    seconds: np.ndarray
    rewards: Rewards  # every reward attached to an event
    broken_events: set = field(default_factory=set)
    calls: dict = field(default_factory=dict)  # tool_result position -> tool_call position it answers
    actor_code: np.ndarray | None = None  # agent_code, with each answered tool_result given to its caller
    chain: tuple | None = None  # (events, seconds, dependencies) of the critical path, when found beside the links
    _cache: dict = field(default_factory=dict)

    @property
    def index(self) -> dict:
        """Event id -> the position of the first event with it."""
        if "index" not in self._cache:
            self._cache["index"] = id_index(self.ids)
        return self._cache["index"]

    def event(self, position: int) -> dict:
        return self.source.item("events", position)

    def edge(self, position: int) -> dict:
        return self.source.item("edges", position)

    def code(self, event_type: str) -> int:
        return EVENT_CODES[event_type]

    def positions(self, event_type: str) -> np.ndarray:
        return np.flatnonzero(self.type_code == EVENT_CODES[event_type])

    def edge_mask(self, edge_types) -> np.ndarray:
        codes = [EDGE_CODES[name] for name in edge_types]
        return np.isin(self.edge_code, codes) & (self.src >= 0) & (self.dst >= 0)

    def coded(self, key: str) -> np.ndarray:
        """`to` (a position in agent_names) or `tool` (in tool_names) of every event, -1
        where the event has none."""
        if ("coded", key) not in self._cache:
            column = np.full(self.n, -1, dtype=np.int64)
            positions, codes = self.fields[key]
            column[positions] = codes
            self._cache["coded", key] = column
        return self._cache["coded", key]

    def cost_columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(positions, tokens, seconds) of the events that declare a cost; 0 where a cost
        leaves one of them out."""
        return self.fields["cost"][0], self.tokens, self.seconds


@dataclass
class Rewards:
    """The rewards attached to events, in file order: each one's event, credit unit and
    channel (codes in `units` and `channels`) and value."""

    at: np.ndarray
    unit: np.ndarray
    channel: np.ndarray
    value: np.ndarray
    units: list
    channels: list


class RewardsRead:
    """The rewards of a trace as its events are read: each one's event position, credit
    unit and channel (coded in order of first appearance) and value."""

    def __init__(self):
        self.at, self.unit, self.channel, self.value = [], [], [], []
        self.units: dict = {}
        self.channels: dict = {}

    def add(self, position: int, unit, channel, value) -> None:
        self.at.append(position)
        self.unit.append(self.units.setdefault(unit, len(self.units)))
        self.channel.append(self.channels.setdefault(channel, len(self.channels)))
        self.value.append(value)

    def columns(self) -> Rewards:
        return Rewards(
            np.array(self.at, dtype=np.int64),
            np.array(self.unit, dtype=np.int64),
            np.array(self.channel, dtype=np.int64),
            np.array(self.value, dtype=np.float64),
            list(self.units),
            list(self.channels),
        )


# The tool of a tool_call or tool_result that names none (the artifact's format allows it):
# such calls and results are paired among themselves, by time.
NO_TOOL = ""
# Vocabulary codes; None, the type of an inert event or edge, is -1.
EVENT_CODES = {name: code for code, name in enumerate(schema.event_types())} | {None: -1}
EDGE_CODES = {name: code for code, name in enumerate(schema.edge_types())} | {None: -1}
# What the compiled reader is told of the vocabulary (as _read_events finds it for itself).
_CODES_READ = (
    EVENT_CODES,
    EVENT_CODES["tool_call"],
    EVENT_CODES["tool_result"],
    frozenset(EVENT_CODES[name] for name in ("spawn", "return", "message")),
    NO_TOOL,
)
# The optional event fields read: `to` of spawns, returns and messages, `tool` of tool
# calls and results, `call` of results, cost, rewards and decision of any event.
OPTIONAL = ("to", "tool", "call", "cost", "decision")


class Builder:
    """Reads events, then edges, a chunk at a time, into a TraceIndex. Each chunk's
    columns become arrays as soon as it is read.

    The edges' ends and the tool results' calls, which name events by id, are resolved
    here from the edges read (add_edges), or come resolved from another process
    (add_links, see links.py)."""

    def __init__(self):
        self.columns: dict[str, list] = {name: [] for name in ("t", "type", "agent", "tokens", "seconds")}
        self.optional = {key: ([], []) for key in OPTIONAL}
        # names become codes while each event is in cache: new ones are numbered
        # len - 1 (0, 1, ...); None, an inert event's agent, is -1
        self.agent_codes, self.tool_codes = {None: -1}, {None: -1}
        self.rewards = RewardsRead()
        self.broken_events: set[int] = set()
        self.edge_parts: list[tuple] = []
        self.broken_edges: list[int] = []
        self.ids: list = []
        self.links = None
        self._index: dict | None = None
        self.n = 0
        self.keys = {"events": 0, "edges": 0}  # the keys of the objects read, for duplicates.py

    def add_events(self, events: list, offset: int, broken: set[int], read_as: dict | None = None) -> None:
        """Index a chunk of events from position `offset` on: those at the positions
        `broken` as inert, and those `read_as` holds (a trace that declares no schema:
        artifact.py) as it gives them, without the fields paperpool cannot read."""
        if broken or read_as:
            given = events
            read_as = read_as or {}
            events = [
                _inert_event(e, offset + i) if offset + i in broken else read_as.get(offset + i, e) for i, e in enumerate(events)
            ]
            self.broken_events |= broken
            # each event's keys are counted as it is read; a refused one's are its own, not its stand-in's
            self.keys["events"] += sum(_keys(given[k - offset]) - len(events[k - offset]) for k in broken)
            self.keys["events"] += sum(_counted(given[k - offset]) - _counted(read_as[k]) for k in read_as)
        chunk = _Chunk()
        done = _native.read_events(self, chunk, events, offset, *_CODES_READ) if _native is not None else 0
        if done < len(events):  # no compiled reader, or an event it leaves to Python
            _read_events(self, chunk, events[done:], offset + done)
        for name, values, kind in (
            ("t", chunk.times, np.float64),
            ("type", chunk.types, np.int8),
            ("agent", chunk.agents, np.int64),
            ("tokens", chunk.tokens, np.float64),
            ("seconds", chunk.seconds, np.float64),
        ):
            self.columns[name].append(np.array(values, dtype=kind))
        self.ids += chunk.ids
        self.n += len(events)

    def count_edge_keys(self, edges: list, broken: set[int]) -> None:
        """Add the keys of `edges` (the events' are counted as they are read). An edge the
        schema refused may be no object: only objects count."""
        self.keys["edges"] += sum(map(len, edges)) if not broken else sum(map(_keys, edges))

    @property
    def index(self) -> dict:
        if self._index is None:
            self._index = id_index(self.ids)
        return self._index

    def add_edges(self, edges: list, offset: int, broken: set[int]) -> None:
        if broken:
            edges = [_INERT_EDGE if offset + i in broken else e for i, e in enumerate(edges)]
            self.broken_edges += sorted(broken)
        count = len(edges)
        self.edge_parts.append(
            (
                positions(self.index, list(map(_SRC, edges))),
                positions(self.index, list(map(_DST, edges))),
                np.fromiter(map(EDGE_CODES.__getitem__, map(_TYPE, edges)), dtype=np.int8, count=count),
            )
        )

    def add_links(self, links) -> None:
        """Edges and calls resolved elsewhere, from a trace whose every event and edge
        passed the schema."""
        self.links = links
        self.edge_parts = [(links.src, links.dst, links.edge_code)]

    def build(self, source) -> TraceIndex:
        parts = self.edge_parts or [(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int8))]
        src, dst, edge_code = (np.concatenate([part[column] for part in parts]) for column in range(3))
        if self.broken_edges:
            src[self.broken_edges] = BROKEN
            dst[self.broken_edges] = BROKEN
        columns = {name: np.concatenate(arrays) if arrays else np.zeros(0) for name, arrays in self.columns.items()}
        fields = {key: (np.array(positions, dtype=np.int64), values) for key, (positions, values) in self.optional.items()}
        for key in ("to", "tool"):
            fields[key] = fields[key][0], np.array(fields[key][1], dtype=np.int64)
        del self.agent_codes[None], self.tool_codes[None]
        if self.links is not None:
            unique, named_calls = self.links.unique, self.links.call[fields["call"][0]]
        else:
            unique = len(self.index) == self.n
            named_calls = positions(self.index, fields["call"][1])
        ix = TraceIndex(
            source,
            self.n,
            src.size,
            self.ids,
            unique,
            columns["t"].astype(np.float64),
            columns["type"].astype(np.int8),
            columns["agent"].astype(np.int64),
            list(self.agent_codes),
            list(self.tool_codes),
            src,
            dst,
            edge_code,
            fields,
            named_calls,
            columns["tokens"].astype(np.float64),
            columns["seconds"].astype(np.float64),
            self.rewards.columns(),
            self.broken_events,
            chain=None if self.links is None else self.links.chain,
        )
        if self._index is not None:
            ix._cache["index"] = self._index
        return ix


class _Chunk:
    """The per-event columns of one chunk, while it is read."""

    def __init__(self):
        self.ids, self.times, self.types, self.agents, self.tokens, self.seconds = [], [], [], [], [], []


def _read_events(builder: Builder, chunk: _Chunk, events: list, offset: int) -> None:
    """One pass over the events for everything the rules and metrics read. Written out
    field by field, with the appends bound beforehand and each optional field looked for
    only in the event types that use it: this loop is most of the time validation takes
    beyond parsing and the schema."""
    (to_at, to), (tool_at, tool), (call_at, call), (cost_at, _), (decision_at, decision) = (
        (positions.append, values.append) for positions, values in builder.optional.values()
    )
    add_id, add_t, add_type, add_agent, add_tokens, add_seconds = (
        chunk.ids.append,
        chunk.times.append,
        chunk.types.append,
        chunk.agents.append,
        chunk.tokens.append,
        chunk.seconds.append,
    )
    agent_codes, tool_codes, add_reward = builder.agent_codes, builder.tool_codes, builder.rewards.add
    type_codes, agent_code, tool_code = EVENT_CODES, agent_codes.get, tool_codes.get
    calls_tool, answers_tool = EVENT_CODES["tool_call"], EVENT_CODES["tool_result"]
    names_agent = {EVENT_CODES[name] for name in ("spawn", "return", "message")}
    keys = 0  # of each event, its cost and rewards, for duplicates.py
    i = offset - 1
    for e in events:
        i += 1
        keys += len(e)
        add_id(e["id"])
        add_t(e["t"])
        kind = type_codes[e["type"]]
        add_type(kind)
        name = e["agent"]
        if (code := agent_code(name)) is None:
            code = agent_codes[name] = len(agent_codes) - 1
        add_agent(code)
        if kind == calls_tool or kind == answers_tool:
            name = e.get("tool", NO_TOOL)  # a trace in the artifact's format may leave it out
            if (code := tool_code(name)) is None:
                code = tool_codes[name] = len(tool_codes) - 1
            tool_at(i)
            tool(code)
            if kind == answers_tool and "call" in e:
                call_at(i)
                call(e["call"])
        elif kind in names_agent and "to" in e:
            name = e["to"]
            if (code := agent_code(name)) is None:
                code = agent_codes[name] = len(agent_codes) - 1
            to_at(i)
            to(code)
        if "cost" in e:
            cost_at(i)
            spent = e["cost"]
            keys += len(spent)
            add_tokens(spent.get("tokens", 0))
            add_seconds(spent.get("seconds", 0))
        if "rewards" in e:
            for reward in e["rewards"]:
                keys += len(reward)
                add_reward(i, reward["unit"], reward["channel"], reward["value"])
        if "decision" in e:
            decision_at(i)
            decision(e["decision"])
    builder.keys["events"] += keys


def _keys(item) -> int:
    return len(item) if isinstance(item, dict) else 0


def _counted(event: dict) -> int:
    """The keys _read_events counts in an event: its own, its cost's and its rewards'."""
    rewards = event.get("rewards")
    return len(event) + _keys(event.get("cost")) + (sum(map(_keys, rewards)) if isinstance(rewards, list) else 0)


def id_index(ids: list) -> dict:
    """Event id -> the position of the first event with it (the ids made compact first: a
    trace whose edges are resolved in another process never builds it, links.py)."""
    ids = compact(ids)
    index = dict(zip(ids, range(len(ids)), strict=True))
    if len(index) < len(ids):  # a repeated id keeps its first event
        index = dict(zip(reversed(ids), range(len(ids) - 1, -1, -1), strict=True))
    return index


def broken_positions(findings, section: str) -> set[int]:
    """The positions in `section` (events or edges) that some finding points into."""
    prefix = f"/{section}/"
    broken = set()
    for finding in findings:
        if finding.pointer.startswith(prefix):
            head = finding.pointer[len(prefix) :].split("/", 1)[0]
            if head.isascii() and head.isdigit():
                broken.add(int(head))
    return broken


def compact(strings: list) -> list:
    """The same strings as new objects side by side in memory. A dict keyed by them is
    built and searched twice as fast: a lookup's cost is mostly the cache miss of reading
    a key scattered among the parsed events. Unchanged when they are not all text."""
    try:
        parts = _SEPARATOR.join(strings).split(_SEPARATOR)
    except TypeError:
        return strings
    return parts if len(parts) == len(strings) else strings  # a name with the separator in it


_SEPARATOR = "\x00"
_TYPE, _SRC, _DST = operator.itemgetter("type"), operator.itemgetter("src"), operator.itemgetter("dst")


def positions(index: dict, names: list) -> np.ndarray:
    """The position of the event each name names, MISSING for a name no event has."""
    try:
        return np.fromiter(map(index.__getitem__, names), dtype=np.int64, count=len(names))
    except KeyError:  # some name is no event's id: the slower lookup that marks it
        return np.fromiter(map(index.get, names, repeat(MISSING)), dtype=np.int64, count=len(names))


_INERT_EDGE = {"src": None, "dst": None, "type": None}


def _inert_event(event, position: int) -> dict:
    identifier = event.get("id") if isinstance(event, dict) else None
    if not isinstance(identifier, str) or not identifier:
        identifier = ("unusable id", position)  # matches no edge end, collides with nothing
    return {"id": identifier, "t": math.nan, "type": None, "agent": None}
