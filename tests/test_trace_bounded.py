"""Traces that made the trace commands work out of proportion to their size (issue 39, the
hostile review's findings): each is generated here, small enough to run in a second or
two now, and the test asserts on what is said and counted, never on time."""

from __future__ import annotations

import json
import random
from pathlib import Path

from paperpool.traces import rules, schema, validation


def _write(path: Path, events: list, edges: list) -> Path:
    path.write_text(json.dumps({"trace_id": "t", "schema": schema.schema_id(), "events": events, "edges": edges}),
                    encoding="utf-8")
    return path


def _closed_chain(path: Path, events: int, closing: int) -> Path:
    """Events 0..events-1 at one time, a causal chain through them, closed `closing` times by the same edge back to 0."""
    chain = [{"src": str(i), "dst": str(i + 1), "type": "causal"} for i in range(events - 1)]
    back = [{"src": str(events - 1), "dst": "0", "type": "causal"}] * closing
    return _write(path, [{"id": str(i), "t": 0, "type": "message", "agent": "a"} for i in range(events)], chain + back)


# ---- F1: many edges closing one long cycle ------------------------------------------

def test_many_edges_closing_a_long_cycle_give_the_first_hundred_each_shortened(run, tmp_path):
    """3,000 copies of one edge close a cycle of 3,000 events: each was a copy of the
    search's path (20,000 x 20,000 took 3 GB); now the first hundred cycles are built,
    each line naming its first and last events and how many between."""
    path = _closed_chain(tmp_path / "closed.json", 3000, 3000)
    result = run("trace", "validate", str(path), cwd=tmp_path)
    lines = result.output.splitlines()
    assert result.exit_code == 1 and len(lines) == schema.MOST_PROBLEMS + 1
    assert [line.split(": ")[1] for line in lines[:-1]] == [f"/edges/{k}" for k in range(2999, 3099)]
    assert lines[0] == (f"{path}: /edges/2999: causal, spawn, return and aggregate edges form a cycle 0 -> 1 -> 2 -> 3 -> "
                        "4 -> 5 -> 6 -> (2,991 more events) -> 2998 -> 2999 -> 0; an event cannot wait on itself: "
                        "remove or reverse one of these edges")
    assert lines[-1].startswith(f"{path}: invalid, more than 100 problems")


def test_a_cycle_of_ten_events_is_named_whole(tmp_path):
    checked = validation.check_file(_closed_chain(tmp_path / "ten.json", 10, 1))
    assert [f.message.split("cycle ")[1].split(";")[0] for f in checked.findings] == [" -> ".join("0123456789") + " -> 0"]


def test_find_cycles_gives_each_closing_edges_cycle_in_order_of_the_edge():
    """On random graphs: each cycle is a closed walk of edges of the graph that ends with
    the edge closing it, the cycles come in the order of those edges, and `most` keeps
    the first of them."""
    generator = random.Random(39)
    for _ in range(200):
        nodes, count = generator.randint(1, 12), generator.randint(0, 30)
        sources = [generator.randrange(nodes) for _ in range(count)]
        targets = [generator.randrange(nodes) for _ in range(count)]
        ids = generator.sample(range(1000), count)
        ends = {k: (a, b) for a, b, k in zip(sources, targets, ids)}
        cycles = rules.find_cycles(sources, targets, ids)
        for cycle in cycles:
            walk = [ends[k] for k in cycle]
            assert all(walk[i][1] == walk[i + 1][0] for i in range(len(walk) - 1)) and walk[-1][1] == walk[0][0]
        assert [cycle[-1] for cycle in cycles] == sorted(cycle[-1] for cycle in cycles)
        assert rules.find_cycles(sources, targets, ids, 2) == cycles[:2]
