"""The OpenAI Agents SDK with a scripted Model (no network, no key), recorded by either of
its OpenTelemetry instrumentations: OpenTelemetry's own (GenAI spans, imported with
--from otlp) and OpenInference's (imported with --from openinference). Both must give
the same orchestration.

The program: a lead agent, behind an input guardrail, calls three searcher agents as
tools in one turn (the SDK runs them side by side), then hands off to a writer (a
handoff), whose answer ends the run."""

from __future__ import annotations

import asyncio
import json

import pytest
from agents import (
    Agent,
    GuardrailFunctionOutput,
    Runner,
    Usage,
    input_guardrail,
    set_trace_processors,
)
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.tracing import generation_span
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from .frameworks import Recording, imported, orchestration

INPUT_TOKENS, OUTPUT_TOKENS = 120, 30


def said(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id="msg",
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )


def called(tool: str, arguments: dict, number: int) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        id=f"fc{number}", call_id=f"call{number}", type="function_call", name=tool, arguments=json.dumps(arguments)
    )


class Scripted(Model):
    """A Model that answers from a script, recording its call as a model implementation
    does (a generation span with its usage); `calls` counts the calls of every instance."""

    calls = 0

    def __init__(self, script):
        self.script, self.turn = script, 0

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, **options):
        usage = {"input_tokens": INPUT_TOKENS, "output_tokens": OUTPUT_TOKENS}
        with generation_span(model="scripted", model_config={}, usage=usage):
            output = self.script(self.turn)
        self.turn += 1
        Scripted.calls += 1
        return ModelResponse(
            output=output,
            usage=Usage(
                requests=1, input_tokens=INPUT_TOKENS, output_tokens=OUTPUT_TOKENS, total_tokens=INPUT_TOKENS + OUTPUT_TOKENS
            ),
            response_id=None,
        )

    def stream_response(self, *args, **options):
        raise NotImplementedError("the program does not stream")


@input_guardrail
async def on_topic(context, agent, given) -> GuardrailFunctionOutput:
    return GuardrailFunctionOutput(output_info="on topic", tripwire_triggered=False)


def lead_script(turn: int) -> list:
    if turn == 0:
        return [called("search", {"input": topic}, k) for k, topic in enumerate(["rewards", "credit", "routing"])]
    return [called("transfer_to_writer", {}, 9)]


def run_program() -> str:
    searcher = Agent(name="searcher", instructions="search", model=Scripted(lambda turn: [said("notes")]))
    writer = Agent(name="writer", instructions="write", model=Scripted(lambda turn: [said("the survey's answer")]))
    lead = Agent(
        name="lead",
        instructions="lead",
        model=Scripted(lead_script),
        input_guardrails=[on_topic],
        tools=[searcher.as_tool(tool_name="search", tool_description="search the literature")],
        handoffs=[writer],
    )
    return asyncio.run(Runner.run(lead, "What do surveys say about credit assignment?")).final_output


@pytest.fixture
def recorded(request, tmp_path):
    """The program's spans, recorded by the instrumentation the test names."""
    if request.param == "otlp":
        from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor
    else:
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
    recording = Recording(tmp_path / "spans.jsonl", "openai-agents-team")
    set_trace_processors([])  # the SDK's own exporter would send the spans to OpenAI's servers
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=recording.provider)
    Scripted.calls = 0
    try:
        assert run_program() == "the survey's answer"
    finally:
        instrumentor.uninstrument()
        set_trace_processors([])
        recording.close()
    return recording, request.param


@pytest.mark.parametrize("recorded", ["otlp", "openinference"], indirect=True)
def test_an_openai_agents_team_imports_with_its_fan_out_handoff_and_stop(run, recorded):
    recording, fmt = recorded
    trace, metrics = imported(run, recording, fmt)
    tokens = Scripted.calls * (INPUT_TOKENS + OUTPUT_TOKENS)
    assert Scripted.calls == 6  # the lead twice, each searcher once, the writer once
    assert orchestration(trace, metrics) == {
        "agents": ["Agent workflow", "lead", "searcher#1", "searcher#2", "searcher#3", "writer"],
        "roles": {"Agent workflow": 1, "lead": 1, "searcher": 3, "writer": 1},
        "spawns": [("Agent workflow", "lead"), ("lead", "searcher#1"), ("lead", "searcher#2"), ("lead", "searcher#3")],
        "delegations": [("lead", "spawn", "writer")],
        "max_fanout": 3,
        "stops": [("Agent workflow", "the outermost agent's span ended")],
        "tool_calls": [("search", 3)],
        "safety_events": [("lead", "guardrail on_topic")],
        "tokens": {"events": tokens, "declared": tokens},
        "subdecisions": {"O1": 4, "O2": 4, "O3": 0, "O4": 1, "O5": 1},
    }
