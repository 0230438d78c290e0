"""Strands Agents, recorded by its own OpenTelemetry tracing (GenAI spans: invoke_graph,
invoke_swarm, invoke_agent, chat, execute_tool), with a scripted Model (no network, no
key), imported by `paperpool trace import --from otlp`.

The program is a Strands graph: a lead agent, then three searcher agents the graph runs
side by side, then a swarm in which an editor hands the task to a writer with the
swarm's handoff_to_agent tool; the writer's answer ends the swarm and the graph.

Strands records a tool's arguments as a span attribute under the latest GenAI conventions
(OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental, read when its tracer is made),
and traces with the global tracer provider: the test sets it once for the session, and
its spans go to the recording of the test that runs."""

from __future__ import annotations

import asyncio
import json

import pytest
from opentelemetry import trace as trace_api
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider

from .frameworks import Recording, imported, orchestration

USAGE = {"inputTokens": 50, "outputTokens": 5, "totalTokens": 55}


class ToRecording(SpanProcessor):
    """The global provider's one processor: each ended span goes to the current recording."""

    recording: Recording | None = None

    def on_end(self, span) -> None:
        if ToRecording.recording is not None:
            ToRecording.recording.exporter.export([span])


@pytest.fixture
def strands(monkeypatch):
    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    if not isinstance(trace_api.get_tracer_provider(), TracerProvider):
        provider = TracerProvider(resource=Resource({"service.name": "strands-team"}))
        provider.add_span_processor(ToRecording())
        trace_api.set_tracer_provider(provider)
    import strands.telemetry.tracer as tracing

    monkeypatch.setattr(tracing, "_tracer_instance", None)  # made anew, reading the variable above
    import strands

    return strands


def scripted(strands, script, calls: list):
    from strands.models.model import Model

    class Scripted(Model):
        """Answers from a script, streaming as a model provider does, after a short wait."""

        def __init__(self):
            self.turn = 0

        def update_config(self, **config):
            pass

        def get_config(self):
            return {}

        async def structured_output(self, *args, **options):
            raise NotImplementedError("the program asks for no structured output")
            yield

        async def stream(self, messages, tool_specs=None, system_prompt=None, **options):
            reply = script(self.turn)
            self.turn += 1
            calls.append(USAGE["totalTokens"])
            await asyncio.sleep(0.02)
            yield {"messageStart": {"role": "assistant"}}
            if isinstance(reply, dict):
                yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": f"use{len(calls)}", "name": "handoff_to_agent"}}}}
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(reply)}}}}
                yield {"contentBlockStop": {}}
                yield {"messageStop": {"stopReason": "tool_use"}}
            else:
                yield {"contentBlockDelta": {"delta": {"text": reply}}}
                yield {"contentBlockStop": {}}
                yield {"messageStop": {"stopReason": "end_turn"}}
            yield {"metadata": {"usage": USAGE, "metrics": {"latencyMs": 20}}}

    return Scripted()


def run_program(strands, calls: list) -> str:
    from strands.multiagent import GraphBuilder, Swarm

    def agent(name: str, script):
        return strands.Agent(name=name, model=scripted(strands, script, calls), callback_handler=None)

    editor = agent("editor", lambda turn: {"agent_name": "writer", "message": "write it up"} if turn == 0 else "handed over")
    writer = agent("writer", lambda turn: "the survey's answer")
    graph = GraphBuilder()
    graph.add_node(agent("lead", lambda turn: "three searches"), "lead")
    graph.add_node(Swarm([editor, writer]), "team")
    for k in range(3):
        graph.add_node(agent("searcher", lambda turn: "notes"), f"searcher_{k}")
        graph.add_edge("lead", f"searcher_{k}")
        graph.add_edge(f"searcher_{k}", "team")
    graph.set_entry_point("lead")
    graph.set_max_node_executions(10)
    result = graph.build()("What do surveys say about credit assignment?")
    return str(result.results["team"].result.results["writer"].result)


@pytest.mark.slow
def test_a_strands_graph_and_swarm_import_with_their_fan_out_handoff_and_stop(run, tmp_path, strands):
    recording = Recording(tmp_path / "spans.jsonl", "strands-team")
    ToRecording.recording = recording
    calls: list = []
    try:
        answer = run_program(strands, calls)
    finally:
        ToRecording.recording = None
        recording.close()
    assert answer.strip() == "the survey's answer" and len(calls) == 7
    trace, metrics = imported(run, recording, "otlp")
    assert orchestration(trace, metrics) == {
        "agents": ["editor", "invoke_graph", "invoke_swarm", "lead", "searcher#1", "searcher#2", "searcher#3", "writer"],
        "roles": {"editor": 1, "invoke_graph": 1, "invoke_swarm": 1, "lead": 1, "searcher": 3, "writer": 1},
        "spawns": [
            ("invoke_graph", "invoke_swarm"),
            ("invoke_graph", "lead"),
            ("invoke_graph", "searcher#1"),
            ("invoke_graph", "searcher#2"),
            ("invoke_graph", "searcher#3"),
            ("invoke_swarm", "editor"),
        ],
        "delegations": [("editor", "spawn", "writer")],
        "max_fanout": 3,
        "stops": [("invoke_graph", "the outermost agent's span ended")],
        "tool_calls": [],
        "safety_events": [],
        "tokens": {"events": sum(calls), "declared": sum(calls)},
        "subdecisions": {"O1": 6, "O2": 1, "O3": 0, "O4": 2, "O5": 1},
    }
