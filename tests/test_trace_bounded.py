"""Traces that made the trace commands work out of proportion to their size (issue 39, the
hostile review's findings): each is generated here, small enough to run in a second or
two now, and the test asserts on what is said and counted, never on time."""

from __future__ import annotations

import difflib
import json
import random
from pathlib import Path

from paperpool.problems import SUGGEST_AMONG, SUGGEST_LONGEST, suggest
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


# ---- F2: guessing at unknown names ---------------------------------------------------

def _ab(generator: random.Random, length: int) -> str:
    return "".join(generator.choice("ab") for _ in range(length))


def test_long_unknown_ids_are_not_guessed_at(run, tmp_path):
    """101 edges from unknown 199-character ids, against 3,000 events of such ids (776 kB):
    difflib took seconds a guess, and never finished; a name past SUGGEST_LONGEST is not guessed at."""
    generator = random.Random(39)
    ids = [_ab(generator, 199) for _ in range(3000)]
    edges = [{"src": _ab(generator, 199), "dst": ids[0], "type": "message"} for _ in range(101)]
    path = _write(tmp_path / "long-ids.json", [{"id": i, "t": 0, "type": "message", "agent": "a"} for i in ids], edges)
    result = run("trace", "validate", str(path), cwd=tmp_path)
    lines = result.output.splitlines()
    assert result.exit_code == 1 and len(lines) == schema.MOST_PROBLEMS + 1
    assert [line.split(": ")[1] for line in lines[:-1]] == [f"/edges/{k}/src" for k in range(100)]
    assert all(line.endswith(f"no event has id '{edge['src']}'; name an event of this trace, or add the event")
               for line, edge in zip(lines[:-1], edges))


def test_suggest_gives_difflibs_answer_for_ordinary_names():
    """Short names among a few hundred: the closest by difflib, or the one that differs only in case, as before the bounds."""
    generator = random.Random(39)
    for _ in range(2000):
        letters = "abcdefghijklmnopqrstuvwxyz_"[:generator.randint(2, 27)]
        words = ["".join(generator.choice(letters) for _ in range(generator.randint(1, 20)))
                 for _ in range(generator.randint(1, 300))]
        name = words.pop()
        same = [word for word in words if word.casefold() == name.casefold()]
        close = same or difflib.get_close_matches(name, words, n=1)
        assert suggest(name, words, "none") == (f"did you mean '{close[0]}'?" if close else "none")


def test_suggest_past_its_bounds():
    long = "x" * (SUGGEST_LONGEST + 1)
    assert suggest(long + "1", [long + "2"], "none") == "none"
    assert suggest(long.upper(), [long], "none") == f"did you mean '{long}'?"  # a case apart is still said
    many = [f"name-{k}" for k in range(SUGGEST_AMONG + 1)]
    assert suggest("name-1x", many, "none") == "none"
    assert suggest("name-1x", iter(many[:SUGGEST_AMONG]), "none") == "did you mean 'name-1'?"
    # 10,000 ids of 64 to 149 characters past SUGGEST_WORK: difflib ranks rapidfuzz's shortlist
    generator = random.Random(39)
    ids = [_ab(generator, generator.randint(64, 149)) for _ in range(SUGGEST_AMONG)]
    name = _ab(generator, 64)
    guess = suggest(name, ids, "none").removeprefix("did you mean '").removesuffix("'?")
    assert guess in ids and difflib.SequenceMatcher(None, guess, name).ratio() >= 0.6


# ---- F3: a spawn tree deeper than numpy's passes --------------------------------------

def _spawn_chain(length: int, loop: bool = False) -> list[dict]:
    """Agent i spawns agent i+1 at t=i, written latest first; with `loop`, the last spawns the first."""
    events = [{"id": f"s{i}", "t": i, "type": "spawn", "agent": str(i), "to": str(i + 1)} for i in range(length)]
    if loop:
        events[-1]["to"] = "0"
    return events[::-1]


def test_a_spawn_chain_of_thousands_has_its_depth_alone_and_in_a_corpus(run, tmp_path):
    """A chain of 5,000 spawns, deeper than the 64 passes of numpy, is walked once per
    agent (60,000 took 18 s: each step searched the chain walked so far)."""
    path = _write(tmp_path / "deep.json", _spawn_chain(5000), [])
    result = run("trace", "metrics", str(path), "--format", "json", cwd=tmp_path)
    assert result.exit_code == 0 and json.loads(result.output)["depth"] == 5000
    lines = tmp_path / "deep.jsonl"
    lines.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    result = run("trace", "metrics", str(lines), "--format", "jsonl", cwd=tmp_path)
    assert result.exit_code == 0 and json.loads(result.output.splitlines()[0])["depth"] == 5000


def test_a_spawn_loop_counts_each_agent_once(tmp_path):
    from paperpool.traces import metrics
    from paperpool.traces.mapping import default

    checked = validation.check_file(_write(tmp_path / "loop.json", _spawn_chain(101, loop=True), []))
    assert metrics.compute(checked.index, checked.top, default())["depth"] == 101
