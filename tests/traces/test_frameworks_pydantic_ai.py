"""pydantic-ai, recorded by its own OpenTelemetry instrumentation (native GenAI spans:
invoke_agent, chat, execute_tool), with scripted models (FunctionModel: no network, no
key), imported by `paperpool trace import --from otlp`.

The program: a lead agent calls a tool that runs three searcher agents side by side (a
fan-out of three invocations of one agent), then hands the task to a writer through a
transfer_to_agent tool (a delegation), then answers (the run stops)."""

from __future__ import annotations

import asyncio

from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings

from .frameworks import Recording, imported, orchestration


def lead_model(messages: list, info: AgentInfo) -> ModelResponse:
    """Plan three searches, then hand the writing over, then answer."""
    turn = (len(messages) - 1) // 2
    if turn == 0:
        return ModelResponse(parts=[ToolCallPart("search_all", {"topics": ["rewards", "credit", "routing"]})])
    if turn == 1:
        return ModelResponse(parts=[ToolCallPart("transfer_to_agent", {"agent_name": "writer"})])
    return ModelResponse(parts=[TextPart("the survey's answer")])


def answer(messages: list, info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart(f"notes on {messages[0].parts[-1].content}")])


def run_program(settings: InstrumentationSettings) -> int:
    """Run the team; the tokens its model calls used, as pydantic-ai counts them."""
    searcher = Agent(FunctionModel(answer), name="searcher")
    writer = Agent(FunctionModel(answer), name="writer")
    lead = Agent(FunctionModel(lead_model), name="lead")
    runs = []

    @lead.tool
    async def search_all(ctx: RunContext, topics: list[str]) -> list[str]:
        results = await asyncio.gather(*(searcher.run(topic) for topic in topics))
        runs.extend(results)
        return [result.output for result in results]

    @lead.tool
    async def transfer_to_agent(ctx: RunContext, agent_name: str) -> str:
        result = await writer.run("write it up")
        runs.append(result)
        return result.output

    for agent in (searcher, writer, lead):
        agent.instrument = settings
    result = asyncio.run(lead.run("What do surveys say about credit assignment?"))
    assert result.output == "the survey's answer"
    return sum(run.usage.input_tokens + run.usage.output_tokens for run in [result, *runs])


def test_a_pydantic_ai_team_imports_with_its_fan_out_handoff_and_stop(run, tmp_path):
    recording = Recording(tmp_path / "spans.jsonl", "pydantic-ai-team")
    tokens = run_program(InstrumentationSettings(tracer_provider=recording.provider))
    recording.close()
    trace, metrics = imported(run, recording, "otlp")
    assert orchestration(trace, metrics) == {
        "agents": ["lead", "searcher#1", "searcher#2", "searcher#3", "writer"],
        "roles": {"lead": 1, "searcher": 3, "writer": 1},
        "spawns": [("lead", "searcher#1"), ("lead", "searcher#2"), ("lead", "searcher#3")],
        "delegations": [("lead", "spawn", "writer")],
        "max_fanout": 3,
        "stops": [("lead", "the outermost agent's span ended")],
        "tool_calls": [("search_all", 1)],
        "safety_events": [],
        "tokens": {"events": tokens, "declared": tokens},
        "subdecisions": {"O1": 3, "O2": 2, "O3": 0, "O4": 2, "O5": 1},
    }
    assert [e["type"] for e in trace["events"] if e["agent"] == "lead"] == [
        "orchestrator_decision",
        "tool_call",
        "spawn",
        "spawn",
        "spawn",
        "aggregate",
        "spawn",
        "aggregate",
        "stop",
    ]
