"""The critical path of a trace: the longest chain of dependencies, in events and in time.

Dependencies are the ordering edges (which validation guarantees run forward in time and
form no cycle) and every other edge that runs strictly forward in time; together they
form no cycle, so the longest chain is found in one pass over the events in time order.
It needs only the events' times and the edges, so it is also computed beside the links
in the second process (links.py).

A trace that declares no schema may keep an ordering edge that runs backwards, or a cycle
among events of one time: validation warns of them (artifact.py). Such an edge is no
dependency, and a cycle is cut where it closes, so the chain is still found, in the
same time. A trace with no dependency at all has no critical path to speak of: the
number of dependencies is given with the chain, for the metrics to say so.
"""

from __future__ import annotations

import heapq

import numpy as np

from . import schema
from .compiled import loops as _native
from .index import EDGE_CODES


def critical_path(t: np.ndarray, src: np.ndarray, dst: np.ndarray, edge_code: np.ndarray) -> tuple[int, float, int]:
    """(events, seconds, dependencies) along one trace's longest chain of dependencies."""
    if t.size == 0:
        return 0, 0.0, 0
    events, seconds, dependencies = critical_paths(
        t, src, dst, edge_code, np.zeros(t.size, dtype=np.int64), np.zeros(1, dtype=np.int64), 1
    )
    return int(events[0]), float(seconds[0]), int(dependencies[0])


def critical_paths(t, src, dst, edge_code, tr, first, B) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per trace of a batch (`tr`: each event's trace, `first`: each trace's first event):
    (events, seconds, dependencies) along its longest chain of dependencies, every
    trace's edges in one pass in time order. Edges whose ends are not events (negative
    positions) are left out."""
    both = (src >= 0) & (dst >= 0)
    t_src, t_dst = t[np.maximum(src, 0)], t[np.maximum(dst, 0)]
    ordering = np.isin(edge_code, [EDGE_CODES[name] for name in schema.ordering_edge_types()]) & both & (t_src <= t_dst)
    chosen = np.flatnonzero(ordering | (both & (t_src < t_dst)))
    a, b = src[chosen], dst[chosen]
    order = time_order(t, tr)
    rank = _rank(order)
    if np.any(rank[a] >= rank[b]):  # ordering edges between events of one time, listed against the file's order
        rank = _topological_rank(t.size, a, b, order)
        forward = rank[a] < rank[b]  # all but the edges that close a cycle, which is cut there
        a, b = a[forward], b[forward]
    by_target = np.argsort(rank[b], kind="stable")
    length, start = longest_chains(a[by_target], b[by_target], t)
    has_events = np.flatnonzero(np.diff(np.r_[first, t.size]) > 0)
    events, seconds = np.zeros(B, dtype=np.int64), np.zeros(B)
    if has_events.size:
        with np.errstate(over="ignore", invalid="ignore"):  # times not yet validated (links.py) may be -1e308 and 1e308
            # fmax: an inert event (time NaN) is on no chain
            seconds[has_events] = np.fmax.reduceat(t - start, first[has_events])
        events[has_events] = np.maximum.reduceat(length, first[has_events])
    return events, seconds, np.bincount(tr[a], minlength=B)


def time_order(t: np.ndarray, tr: np.ndarray) -> np.ndarray:
    """Event positions by trace, then time, ties in file order: usually the file's own
    order, which is checked in one pass before any sorting is done. NaN (an inert
    event) counts as -1."""
    t = np.where(np.isnan(t), -1.0, t)
    if t.size < 2 or bool(np.all((t[1:] >= t[:-1]) | (tr[1:] != tr[:-1]))):
        return np.arange(t.size)
    return np.lexsort((t, tr))


def longest_chains(sources: np.ndarray, targets: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walking the edges in their targets' time order, so that every chain into an edge's
    source is complete when the edge is met: the events of the longest chain ending at
    each event, and the earliest time such a chain starts (compiled in _columns.pyx)."""
    if _native is not None:
        length, start = np.ones(t.size, dtype=np.int64), t.astype(np.float64, copy=True)
        _native.longest_chains(
            np.ascontiguousarray(sources, dtype=np.int64), np.ascontiguousarray(targets, dtype=np.int64), length, start
        )
        return length, start
    length, begun = [1] * t.size, t.tolist()
    for x, y in zip(sources.tolist(), targets.tolist(), strict=True):
        longer = length[x] + 1
        if longer > length[y]:  # noqa: PLR1730 (max() is a call per edge, in the hottest loop)
            length[y] = longer
        earlier = begun[x]
        if earlier < begun[y]:  # noqa: PLR1730
            begun[y] = earlier
    return np.array(length, dtype=np.int64), np.array(begun, dtype=np.float64)


def _rank(order: np.ndarray) -> np.ndarray:
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size)
    return rank


def _topological_rank(n: int, src: np.ndarray, dst: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Kahn's algorithm, taking ready events in time order: linear, used only when some
    edge joins two events of one time in the order opposite to the file's. When events
    wait on one another in a cycle (a warning, in a trace that declares no schema), the
    earliest of them is taken as if ready, which cuts the cycle there."""
    indegree = np.bincount(dst, minlength=n).tolist()
    outgoing: list[list[int]] = [[] for _ in range(n)]
    for a, b in zip(src.tolist(), dst.tolist(), strict=True):
        outgoing[a].append(b)
    position = _rank(order)
    ready = [(int(position[i]), i) for i in range(n) if indegree[i] == 0]
    heapq.heapify(ready)
    rank = np.full(n, -1, dtype=np.int64)
    done, waiting = 0, iter(order.tolist())
    while done < n:
        if not ready:  # only cycles are left: cut the earliest one open
            node = next(i for i in waiting if rank[i] < 0)
            heapq.heappush(ready, (int(position[node]), node))
        _, node = heapq.heappop(ready)
        if rank[node] >= 0:
            continue
        rank[node] = done
        done += 1
        for nxt in outgoing[node]:
            indegree[nxt] -= 1
            if indegree[nxt] == 0 and rank[nxt] < 0:
                heapq.heappush(ready, (int(position[nxt]), nxt))
    return rank
