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
from .index import EDGE_CODES


def time_order(t: np.ndarray) -> np.ndarray:
    """Event positions by time, ties in file order: usually the file's own order, which is
    checked in one pass before any sorting is done. NaN (an inert event) counts as -1."""
    t = np.nan_to_num(t, nan=-1.0)
    if t.size < 2 or bool(np.all(t[1:] >= t[:-1])):
        return np.arange(t.size)
    return np.argsort(t, kind="stable")


def critical_path(t: np.ndarray, src: np.ndarray, dst: np.ndarray, edge_code: np.ndarray) -> tuple[int, float, int]:
    """(events, seconds, dependencies) along the longest chain of dependencies; edges
    whose ends are not events (negative positions) are left out."""
    n = t.size
    if n == 0:
        return 0, 0.0, 0
    both = (src >= 0) & (dst >= 0)
    t_src, t_dst = t[np.maximum(src, 0)], t[np.maximum(dst, 0)]
    ordering = np.isin(edge_code, [EDGE_CODES[name] for name in schema.ordering_edge_types()]) & both & (t_src <= t_dst)
    forward = both & (t_src < t_dst)
    chosen = np.flatnonzero(ordering | forward)
    src, dst = src[chosen], dst[chosen]
    order = time_order(t)
    in_file_order = bool(np.all(order[1:] > order[:-1])) if order.size > 1 else True
    rank = dst if in_file_order else _rank(order)[dst]
    if np.any((src if in_file_order else _rank(order)[src]) >= rank):
        # ordering edges between events of one time, listed against the file's order
        rank = _topological_rank(n, src, dst, order)[dst]
    by_target = np.argsort(rank, kind="stable")
    length = [1] * n
    start = t.tolist()  # the earliest time a chain ending at each event starts
    for a, b in zip(src[by_target].tolist(), dst[by_target].tolist(), strict=True):
        # edges come in the order of their targets, so every chain into `a` is complete
        longer = length[a] + 1
        if longer > length[b]:  # noqa: PLR1730 (max() is a call per edge, in the hottest loop)
            length[b] = longer
        earlier = start[a]
        if earlier < start[b]:  # noqa: PLR1730
            start[b] = earlier
    with np.errstate(over="ignore"):  # times not yet validated (the second process) may be -1e308 and 1e308
        return max(length), float(np.max(t - np.array(start))), int(chosen.size)


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
