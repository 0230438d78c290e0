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

from .frameworks import Recording, attribute, imported, orchestration, recognised, rewritten

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


TITLES = {
    "otlp": "OTLP/JSON export of OpenTelemetry GenAI spans (one document, or JSON Lines)",
    "openinference": "OTLP/JSON export of OpenInference spans (one document, or JSON Lines)",
}


@pytest.mark.parametrize("recorded", ["otlp", "openinference"], indirect=True)
def test_each_export_is_recognised_by_its_spans_whatever_its_scope_is_named(run, recorded):
    """Without --from, the format is told by the spans' attributes (openinference.span.kind,
    gen_ai.operation.name), which every exporter keeps, never by the instrumentation scope's
    name, which a collector or re-exporter may change; trace validate names the importer."""
    recording, fmt = recorded
    original = recognised(run, recording.path, fmt)
    collected = rewritten(recording, "collected.jsonl", scope="otelcol/batch")
    assert recognised(run, collected, fmt) == original
    result = run("trace", "validate", "collected.jsonl", cwd=collected.parent)
    assert (result.exit_code, result.output) == (
        1,
        f"collected.jsonl: is {fmt} input, not an orchestration trace: {TITLES[fmt]}; convert it first: "
        f"paperpool trace import --from {fmt} collected.jsonl -o TRACE.json\n"
        "collected.jsonl: invalid, 1 problem.\n",
    )


# OpenInference's span kinds for the GenAI operations, as a span processor that maps GenAI
# spans for an OpenInference backend adds them (keeping gen_ai.operation.name)
KINDS = {"invoke_agent": "AGENT", "text_completion": "LLM", "execute_tool": "TOOL", "guardrail_check": "GUARDRAIL"}


@pytest.mark.parametrize("recorded", ["otlp"], indirect=True)
def test_genai_spans_given_openinference_kinds_too_are_read_as_genai(run, recorded):
    """Spans carrying both conventions go to the reading that finds more agents, then more
    spans with a role: here both find the same agents, and the GenAI reading the handoff
    span too (agent_handoff has no OpenInference kind), so otlp reads them, as before."""
    recording, fmt = recorded

    def mapped(span: dict) -> None:
        operation = next(a["value"]["stringValue"] for a in span["attributes"] if a["key"] == "gen_ai.operation.name")
        attribute(span, "openinference.span.kind", KINDS.get(operation, "CHAIN"))

    both = rewritten(recording, "both.jsonl", change=mapped)
    assert recognised(run, both, "otlp") == recognised(run, recording.path, "otlp")


@pytest.mark.parametrize("recorded", ["openinference"], indirect=True)
def test_openinference_spans_are_recognised_past_a_long_prompt_that_names_genai_attributes(run, recorded):
    """Detection reads the spans' attribute keys, past the first 64 KiB: a first span whose
    input (100 kB, before its span kind) quotes GenAI attributes is still OpenInference."""
    recording, fmt = recorded
    quoted = json.dumps([{"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}])
    first = []

    def prompted(span: dict) -> None:
        if not first:
            first.append(span)
            span["attributes"].insert(0, {"key": "input.value", "value": {"stringValue": quoted + " " * 100_000}})

    long = rewritten(recording, "long.jsonl", change=prompted)
    assert long.read_text(encoding="utf-8").index("openinference.span.kind") > 100_000
    assert recognised(run, long, fmt)
