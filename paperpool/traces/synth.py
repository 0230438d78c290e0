"""Synthetic orchestration traces of any size, for benchmarks and tests: deterministic for
a seed, valid by construction, in one of the five topologies.

    python -m paperpool.traces.synth --events 200000 --topology hierarchical -o big.json
    python -m paperpool.traces.synth --events 200000 --dialect artifact -o artifact.json

Each round the orchestrator decides, spawns its sub-agents (in a hierarchy, they spawn
theirs, down to --depth levels), the sub-agents call tools, message and return, and the
spawner aggregates; the run ends with a stop event once --events events are written.
Events are generated in causal order, so cutting a round short keeps every edge and
call valid; they are written in time order, as telemetry exporters write them.

`--dialect artifact` writes the same run as the survey artifact's format allows and an
exporter of it might: no `schema` declared, topology `mixed`, no stop event (the format
has none), tool calls that name no tool (their results do, and name their call), and a
field paperpool does not read on every event (`latency_ms`). paperpool reads such a
trace with a warning for each of these, counted together (see artifact.py).
"""

from __future__ import annotations

import contextlib
import itertools
import random
from pathlib import Path

import click
import orjson

from paperpool.cli.context import Command
from paperpool.files.yamlio import write_atomic

TOPOLOGIES = ("centralized", "planner_executor_critic", "debate", "swarm", "hierarchical")
DIALECTS = ("paperpool", "artifact")
TOOLS = ("search", "fetch", "python", "shell", "retrieve")
# A hierarchy's levels: each is a call of fan_out within the one above, and Python allows
# some 1,000 (--depth 2,000 ended in a RecursionError); no real one is a tenth as deep.
MAX_DEPTH = 500


class _Full(Exception):
    """The event budget is spent: the run stops where it is."""


class _Run:
    def __init__(self, events: int, fanout: int, depth: int, seed: int):
        self.rng = random.Random(seed)
        self.limit, self.fanout, self.depth = events - 1, fanout, depth  # one event is kept for the stop
        self.events: list[dict] = []
        self.edges: list[dict] = []
        self.agents = 0
        self.roles = {"orchestrator": "lead"}

    def event(self, t: float, kind: str, agent: str, after: str | None = None, edge: str = "causal", **fields) -> str:
        if len(self.events) >= self.limit:
            raise _Full
        identifier = f"e{len(self.events)}"
        if agent in self.roles and "role" not in fields:
            fields["role"] = self.roles[agent]
        # as in the source format, each event refers to its content by a hash
        fields.setdefault("content_ref", f"sha256:{self.rng.getrandbits(64):016x}")
        self.events.append({"id": identifier, "t": round(t, 3), "type": kind, "agent": agent, **fields})
        if after is not None:
            self.link(after, identifier, edge)
        return identifier

    def link(self, src: str, dst: str, kind: str) -> None:
        self.edges.append({"src": src, "dst": dst, "type": kind})

    def cost(self, low: int, high: int) -> dict:
        tokens = self.rng.randint(low, high)
        return {"tokens": tokens, "seconds": round(tokens / 400, 3)}

    def new_agent(self, role: str) -> str:
        self.agents += 1
        name = f"agent_{self.agents}"
        self.roles[name] = role
        return name

    def work(self, agent: str, parent: str, t: float, start: str, edge: str = "spawn") -> tuple[str, float]:
        """A sub-agent's turn: tool calls, perhaps a message, then a return to `parent`."""
        previous = start
        for _ in range(self.rng.randint(1, 3)):
            tool = self.rng.choice(TOOLS)
            t += self.rng.uniform(0.2, 2.0)
            call = self.event(t, "tool_call", agent, previous, edge, tool=tool, cost=self.cost(50, 400))
            t += self.rng.uniform(0.1, 3.0)
            result = self.event(t, "tool_result", tool, call, "tool_dependency", tool=tool, call=call, trusted=False)
            edge, previous = "causal", result
        if self.rng.random() < 0.3:
            t += self.rng.uniform(0.1, 1.0)
            previous = self.event(t, "message", agent, previous, "causal", to=parent, cost=self.cost(20, 200), trusted=True)
        t += self.rng.uniform(0.1, 1.0)
        credit = [{"channel": "agent", "unit": "agent", "value": round(self.rng.random(), 3)}]
        return self.event(t, "return", agent, previous, "causal", to=parent, cost=self.cost(100, 800), rewards=credit), t

    def fan_out(self, agent: str, level: int, t: float, previous: str | None, role: str = "worker") -> tuple[str, float]:
        """`agent` decides, spawns its sub-agents in parallel, and aggregates their returns."""
        decision = self.event(t, "orchestrator_decision", agent, previous, "causal", decision="O1", cost=self.cost(100, 600))
        ends = []
        for index in range(self.fanout):
            child, t_spawn = self.new_agent(role), t + 0.05 * (index + 1)
            spawn = self.event(t_spawn, "spawn", agent, decision, "spawn", to=child, role=role)
            if level < self.depth:
                inner, t_inner = self.fan_out(child, level + 1, t_spawn + 0.01, spawn)
                t_end = t_inner + 0.1
                ends.append((self.event(t_end, "return", child, inner, "causal", to=agent, cost=self.cost(100, 800)), t_end))
            else:
                ends.append(self.work(child, agent, t_spawn, spawn))
        t = max(end for _, end in ends) + self.rng.uniform(0.1, 1.0)
        aggregate = self.event(t, "aggregate", agent, ends[0][0], "return", cost=self.cost(200, 1200))
        for returned, _ in ends[1:]:
            self.link(returned, aggregate, "return")
        return aggregate, t

    def pipeline(self, t: float, previous: str | None, roles: list[str]) -> tuple[str, float]:
        """Planner, executor, critic in turn, each handing over to the next by message."""
        decision = self.event(
            t, "orchestrator_decision", "orchestrator", previous, "causal", decision="O2", cost=self.cost(100, 400)
        )
        previous = decision
        for role in roles:
            agent = self.new_agent(role)
            t += 0.1
            spawn = self.event(t, "spawn", "orchestrator", previous, "causal", to=agent, role=role)
            previous, t = self.work(agent, "orchestrator", t, spawn)
        t += self.rng.uniform(0.1, 1.0)
        return self.event(t, "aggregate", "orchestrator", previous, "return", cost=self.cost(200, 800)), t

    def debate(self, t: float, previous: str | None) -> tuple[str, float]:
        """Debaters answer one another for a few rounds; the orchestrator judges."""
        debaters = []
        decision = self.event(t, "orchestrator_decision", "orchestrator", previous, "causal", decision="O1")
        for index in range(self.fanout):
            name = self.new_agent("debater")
            debaters.append(
                (name, self.event(t + 0.01 * (index + 1), "spawn", "orchestrator", decision, "spawn", to=name, role="debater"))
            )
        latest = dict(debaters)
        for _ in range(self.depth):
            t += self.rng.uniform(1.0, 3.0)
            said = {}
            for index, (name, _) in enumerate(debaters):
                other = debaters[(index + 1) % len(debaters)][0]
                said[name] = self.event(
                    t + 0.01 * index, "message", name, latest[name], "causal", to=other, cost=self.cost(200, 900), trusted=True
                )
            for (before, _), (name, _) in itertools.pairwise(debaters):
                self.link(said[before], said[name], "message")  # each answers the one who spoke before
            latest = said
        t += 1.0
        aggregate = self.event(t, "aggregate", "orchestrator", latest[debaters[0][0]], "message", cost=self.cost(300, 900))
        for name, _ in debaters[1:]:
            self.link(latest[name], aggregate, "message")
        return aggregate, t


def generate(
    events: int = 1000, topology: str = "hierarchical", fanout: int = 3, depth: int = 2, seed: int = 0, dialect: str = "paperpool"
) -> dict:
    """A valid trace of exactly `events` events (at least 2), in paperpool's format or as
    the survey artifact's allows (see the module's docstring)."""
    if topology not in TOPOLOGIES or events < 2 or fanout < 1 or depth < 1 or dialect not in DIALECTS:
        raise ValueError("need a known topology and dialect, events >= 2, fanout >= 1 and depth >= 1")
    if topology == "hierarchical" and depth > MAX_DEPTH:
        raise ValueError(_too_deep(depth))
    if dialect == "artifact":
        events += 1  # its stop event is left out
    run = _Run(events, fanout, depth, seed)
    t, previous = 0.0, None
    try:
        while True:
            if topology == "debate":
                previous, t = run.debate(t, previous)
            elif topology == "planner_executor_critic":
                previous, t = run.pipeline(t, previous, ["planner", "executor", "critic"])
            else:
                levels = 1 if topology in ("centralized", "swarm") else depth
                run.depth = levels
                previous, t = run.fan_out("orchestrator", 1, t, previous, "worker" if topology == "swarm" else "searcher")
            t += 0.5
    except _Full:
        pass
    run.limit += 1
    last = max(run.events, key=lambda event: event["t"])
    run.event(
        last["t"] + 0.5,
        "stop",
        "orchestrator",
        last["id"],
        "causal",
        reason="event budget reached",
        rewards=[{"channel": "team", "unit": "team", "value": 1.0}],
    )
    run.events.sort(key=lambda event: event["t"])  # stable: ties keep their causal order
    position = {event["id"]: index for index, event in enumerate(run.events)}
    run.edges.sort(key=lambda edge: position[edge["dst"]])  # each edge written when its target happens
    trace = _finish(run, topology, seed)
    return _as_artifact(trace) if dialect == "artifact" else trace


def _too_deep(depth: int) -> str:
    return f"a hierarchy of {depth:,} levels is deeper than the {MAX_DEPTH} synth builds; give --depth {MAX_DEPTH} or fewer"


def _as_artifact(trace: dict) -> dict:
    """The trace as the artifact's format allows it: see the module's docstring."""
    stop = trace["events"].pop()  # the last in time
    trace["edges"] = [edge for edge in trace["edges"] if edge["dst"] != stop["id"]]
    for event in trace["events"]:
        if event["type"] == "tool_call":
            del event["tool"]
        event["latency_ms"] = round(event.get("cost", {}).get("seconds", 0) * 1000)
    del trace["schema"]
    del trace["time_unit"]
    trace["topology"] = "mixed"
    trace["trace_id"] = trace["trace_id"].replace("synthetic-", "synthetic-artifact-")
    trace["costs"]["wall_clock_s"] = trace["events"][-1]["t"]
    return trace


def _finish(run: _Run, topology: str, seed: int) -> dict:
    tokens = sum(event.get("cost", {}).get("tokens", 0) for event in run.events)
    seconds = sum(event.get("cost", {}).get("seconds", 0) for event in run.events)
    count = {kind: sum(1 for event in run.events if event["type"] == kind) for kind in ("tool_call", "message")}
    return {
        "schema": "urn:paperpool:schema:orchestration-trace:1.0.0",
        "trace_id": f"synthetic-{topology}-{len(run.events)}-seed{seed}",
        "task_id": "synthetic",
        "system": "paperpool.traces.synth",
        "topology": topology,
        "time_unit": "seconds",
        "events": run.events,
        "edges": run.edges,
        "rewards": {"team": 1.0},
        "costs": {
            "tokens": tokens,
            "wall_clock_s": run.events[-1]["t"],
            "compute_s": round(seconds + 1, 3),
            "tool_calls": count["tool_call"],
            "messages": count["message"],
        },
    }


CORPUS_TOPOLOGIES = ("hierarchical", "centralized", "swarm", "planner_executor_critic", "debate")
DISTINCT = 500  # traces a corpus draws from: a million rollouts are their runs, steps and groups over these shapes


def corpus(traces: int, events: int = 50, group_size: int = 8, seed: int = 0, dialect: str = "paperpool"):
    """Rollouts as an RL run dumps them, one trace at a time: `traces` traces of `events`
    events each (topologies in turn), in groups of `group_size` rollouts of one task,
    numbered by step, each with its own trace_id and team reward. The shapes repeat
    (there are DISTINCT of them); ids, steps, groups and rewards do not. In the artifact's
    dialect, each trace is as `generate` writes one (no schema declared; warnings)."""
    shapes = [
        generate(events, CORPUS_TOPOLOGIES[n % len(CORPUS_TOPOLOGIES)], seed=seed + n, dialect=dialect)
        for n in range(min(DISTINCT, traces))
    ]
    per_step = group_size * 64
    for n in range(traces):
        trace = dict(shapes[n % len(shapes)])
        group = n // group_size
        trace.update(
            trace_id=f"rollout-{n}",
            task_id=f"task-{group % 1000}",
            run=f"run-{seed}",
            step=n // per_step,
            group=f"group-{group}",
            rewards={"team": round(((n * 7919) % 1000) / 1000, 3)},
        )
        yield trace


def write(trace: dict, path: Path) -> None:
    write_atomic(path, orjson.dumps(trace).decode("utf-8"))


def write_corpus(traces, path: Path) -> None:
    """JSON Lines, compressed by the name's .gz or .zst."""
    with path.open("wb") as raw, _compressed(raw, path.suffix) as handle:
        for trace in traces:
            handle.write(orjson.dumps(trace) + b"\n")


def _compressed(raw, suffix: str):
    if suffix == ".gz":
        import gzip

        return gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1)
    if suffix == ".zst":
        import zstandard

        return zstandard.ZstdCompressor().stream_writer(raw, closefd=False)
    return contextlib.nullcontext(raw)


@click.command(cls=Command)
@click.option("--events", type=click.IntRange(2), default=1000, show_default=True, help="How many events the trace has.")
@click.option("--topology", type=click.Choice(TOPOLOGIES), default="hierarchical", show_default=True)
@click.option(
    "--fanout",
    type=click.IntRange(1),
    default=3,
    show_default=True,
    help="Sub-agents each spawner creates (debaters, in a debate).",
)
@click.option(
    "--depth",
    type=click.IntRange(1),
    default=2,
    show_default=True,
    help=f"Levels of spawning, at most {MAX_DEPTH} (rounds, in a debate).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--dialect",
    type=click.Choice(DIALECTS),
    default="paperpool",
    show_default=True,
    help="paperpool's format, or as the survey artifact's format allows (no schema declared; warnings).",
)
@click.option(
    "--traces",
    type=click.IntRange(1),
    help="Write a corpus: this many rollouts of --events events each, one "
    "per line (JSON Lines; .gz or .zst compresses it), in groups of 8 with runs and steps (topologies in turn).",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True)
def main(events: int, topology: str, fanout: int, depth: int, seed: int, dialect: str, traces: int | None, output: Path) -> None:
    """Write a synthetic orchestration trace, or a corpus of them: the same file for the
    same options."""
    if traces is not None:
        write_corpus(corpus(traces, events, seed=seed, dialect=dialect), output)
        click.echo(f"wrote {output}: {traces:,} traces of {events:,} events", err=True)
        return
    if topology == "hierarchical" and depth > MAX_DEPTH:
        raise click.BadParameter(_too_deep(depth), param_hint="'--depth'")
    trace = generate(events, topology, fanout, depth, seed, dialect)
    write(trace, output)
    click.echo(f"wrote {output}: {len(trace['events']):,} events, {len(trace['edges']):,} edges", err=True)


if __name__ == "__main__":
    main()
