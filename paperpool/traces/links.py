"""A trace's links, resolved in a second process while the first parses and validates.

Every edge names its two events by id, and so may a tool_result's `call`: turning those
names into event positions is a hash lookup per name, whose cost is mostly cache misses
(a fifth of validating a large trace, in one process). It needs only the ids and the
names, which msgspec reads straight from the file's bytes into small typed objects, so a
forked process does it from the same bytes while the first one parses and checks the
schema; the positions come back through a pipe as arrays.

The result is used only for a trace whose events and edges all passed the schema: any
other trace, or a child that could not read the file as typed, is resolved in the first
process, which marks the broken parts (index.py). On a machine without fork, or for a
small file, there is no second process and nothing changes but the time taken.

The same process counts the keys the file's text can hold (duplicates.py), so that the
first can tell that no object gives a key twice without reading the file again.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter
from typing import Self

import msgspec
import numpy as np

from . import duplicates, paths
from .index import EDGE_CODES, MISSING, id_index, positions
from .loading import no_gc_pauses

# Below this size a fork costs about what it saves (measured: 10,000 events, 2.2 MB).
APART_ABOVE_BYTES = 4 * 1024 * 1024


@dataclass
class Links:
    unique: bool  # whether every event has its own id
    src: np.ndarray  # each edge's source, as an event position, or MISSING
    dst: np.ndarray
    edge_code: np.ndarray  # each edge's type, as a position in schema.edge_types(), -1 when it is none
    call: np.ndarray  # per event: the position of the event its `call` names; MISSING without one
    chain: tuple[int, float, int]  # the critical path's events and seconds, and the dependencies (paths.py)


class _Event(msgspec.Struct, gc=False):
    id: str
    t: float
    call: str | None = None


class _Edge(msgspec.Struct, gc=False):
    src: str
    dst: str
    type: str


class _Sections(msgspec.Struct):
    events: msgspec.Raw  # slices of the file's bytes, not yet read
    edges: msgspec.Raw


_sections = msgspec.json.Decoder(_Sections)
_events = msgspec.json.Decoder(list[_Event])
_slices = msgspec.json.Decoder(list[msgspec.Raw])
_edges = msgspec.json.Decoder(list[_Edge])
EDGES_AT_A_TIME = 100_000  # the edges' names are read this many at a time, to keep memory down
EDGES_WHOLE_BELOW_BYTES = 32 * 1024 * 1024  # edges of less text are read at once (some 500,000: about 120 MB as objects)


def resolve(data: bytes) -> Links | None:
    """The links of the trace in `data`, or None when it is not shaped as a trace with
    text ids and edge ends (the schema then says what is wrong)."""
    sections = _read_sections(data)
    return None if sections is None else _resolve(sections)


def resolve_and_count(data: bytes) -> tuple[Links | None, duplicates.Census | None]:
    """What the second process sends back: the links, and the file's census of keys
    (duplicates.py), from one reading of its two lists."""
    sections = _read_sections(data)
    if sections is None:
        return None, None
    return _resolve(sections), duplicates.census(data, {"events": sections.events, "edges": sections.edges})


def _read_sections(data: bytes) -> _Sections | None:
    try:
        return _sections.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None


def _resolve(sections: _Sections) -> Links | None:
    try:
        index, t, call = _read_events(sections.events)
        src, dst, edge_code = _read_edges(index, sections.edges)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    unique = len(index) == t.size
    del index  # the critical path needs only arrays, and a million ids take 150 MB
    return Links(unique, src, dst, edge_code, call, paths.critical_path(t, src, dst, edge_code))


def _read_events(raw: msgspec.Raw) -> tuple[dict, np.ndarray, np.ndarray]:
    """(id -> position, each event's time, the position each event's `call` names)."""
    events = _events.decode(raw)
    index = id_index(list(map(attrgetter("id"), events)))
    t = np.fromiter(map(attrgetter("t"), events), dtype=np.float64, count=len(events))
    has_call = [k for k, event in enumerate(events) if event.call is not None]
    call = np.full(len(events), MISSING, dtype=np.int64)
    call[has_call] = positions(index, [events[k].call for k in has_call])
    return index, t, call


def _read_edges(index: dict, raw: msgspec.Raw) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source positions, target positions, type codes) of the edges: read whole when their
    text is under EDGES_WHOLE_BELOW_BYTES, else a part at a time (each edge's text sliced
    out first, which costs a third more)."""
    if len(raw) < EDGES_WHOLE_BELOW_BYTES:
        parts = [_edge_columns(index, _edges.decode(raw))]
    else:
        slices = _slices.decode(raw)
        parts = [
            _edge_columns(index, _edges.decode(b"[" + b",".join(slices[at : at + EDGES_AT_A_TIME]) + b"]"))
            for at in range(0, len(slices), EDGES_AT_A_TIME)
        ]
    if not parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int8)
    return tuple(np.concatenate([part[k] for part in parts]) for k in range(3))


def _edge_columns(index: dict, edges: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    types = map(EDGE_CODES.get, map(attrgetter("type"), edges), repeat(-1))
    return (
        positions(index, list(map(attrgetter("src"), edges))),
        positions(index, list(map(attrgetter("dst"), edges))),
        np.fromiter(types, dtype=np.int8, count=len(edges)),
    )


class Apart:
    """`resolve_and_count(data)` running in a forked process; `result()` waits for it and
    gives the links, `census` the census once `result()` is. Used as a context manager,
    so that a caller that stops early leaves no process behind."""

    def __init__(self, data: bytes, above: int = APART_ABOVE_BYTES):
        self.pid = None
        self.census = None
        if not hasattr(os, "fork") or sys.platform != "linux" or len(data) <= above:
            return
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: resolve, send, and leave without running the parent's code
            status = 1
            try:
                os.close(read_end)
                with no_gc_pauses():
                    found = resolve_and_count(data)
                with os.fdopen(write_end, "wb") as pipe:
                    pickle.dump(found, pipe, protocol=pickle.HIGHEST_PROTOCOL)
                status = 0
            finally:
                os._exit(status)
        os.close(write_end)
        self.pid, self.pipe = pid, os.fdopen(read_end, "rb")

    @property
    def started(self) -> bool:
        return self.pid is not None

    def result(self) -> Links | None:
        """The child's links; None without a child, or when it failed."""
        if self.pid is None:
            return None
        try:
            with no_gc_pauses():
                links, self.census = pickle.load(self.pipe)
            return links
        except (EOFError, pickle.UnpicklingError, OSError, ValueError, TypeError):
            return None
        finally:
            self.close()

    def close(self) -> None:
        """Stop the child (it is done once its result is read) and reap it."""
        if self.pid is None:
            return
        self.pipe.close()
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        self.pid = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
