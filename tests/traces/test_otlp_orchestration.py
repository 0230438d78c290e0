"""How GenAI spans become an orchestration, rule by rule, on spans made by the real
OpenTelemetry SDK with explicit times: an invocation root with no operation name (Google
ADK's), model calls without one (ADK's call_llm), transfers by tool and by
gen_ai.transfer.target.name (the semantic conventions' tool-based transfer, mode
pass_control), a failed tool call and a triggered guardrail."""

from __future__ import annotations

import json

from opentelemetry import trace as otel_trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from paperpool.traces import otlp, otlp_events
from paperpool.traces.validation import check_trace

from .fixtures import example

SECOND = 1_000_000_000


def record() -> list:
    provider = TracerProvider(resource=Resource({"service.name": "adk-like"}))
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")

    def span(name, parent, start, end, status=None, **attributes):
        opened = tracer.start_span(
            name,
            context=otel_trace.set_span_in_context(parent) if parent else None,
            start_time=start * SECOND,
            attributes=attributes,
        )
        if status:
            opened.set_status(Status(StatusCode.ERROR, status))
        if end is not None:
            opened.end(end_time=end * SECOND)
        return opened

    root = span("invocation", None, 10, None)
    coordinator = span(
        "invoke_agent coordinator",
        root,
        11,
        None,
        **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "coordinator"},
    )
    span(
        "call_llm",
        coordinator,
        12,
        13,
        **{"gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 20},
    )
    transfer = span(
        "execute_tool transfer_to_agent",
        coordinator,
        14,
        None,
        **{
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "transfer_to_agent",
            "gen_ai.tool.call.arguments": json.dumps({"agent_name": "helper"}),
        },
    )
    helper = span(
        "invoke_agent helper", transfer, 15, None, **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"}
    )
    span(
        "call_llm",
        helper,
        16,
        17,
        **{"gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 50, "gen_ai.usage.output_tokens": 5},
    )
    span(
        "execute_tool lookup",
        helper,
        17,
        18,
        status="timed out",
        **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"},
    )
    span(
        "apply_guardrail pii",
        helper,
        18,
        19,
        **{"gen_ai.operation.name": "apply_guardrail", "gen_ai.guardrail.name": "pii", "gen_ai.guardrail.triggered": True},
    )
    helper.end(end_time=20 * SECOND)
    transfer.end(end_time=21 * SECOND)
    span(
        "execute_tool transfer_to_weather_agent weather_agent",
        coordinator,
        22,
        23,
        **{
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "transfer_to_weather_agent",
            "gen_ai.transfer.mode": "pass_control",
            "gen_ai.transfer.target.name": "weather_agent",
        },
    )
    coordinator.end(end_time=24 * SECOND)
    weather = span(
        "invoke_agent weather_agent",
        root,
        25,
        None,
        **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather_agent"},
    )
    span(
        "call_llm",
        weather,
        26,
        27,
        **{"gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 30, "gen_ai.usage.output_tokens": 3},
    )
    weather.end(end_time=28 * SECOND)
    root.end(end_time=29 * SECOND)
    provider.shutdown()
    return list(exporter.get_finished_spans())


def test_roots_transfers_unnamed_model_calls_errors_and_guardrails():
    converted = otlp_events.to_trace(*otlp.read_spans(json.loads(example.otlp_json(record()))))
    assert check_trace(converted).valid
    assert [
        (e["t"], e["type"], e["agent"], e.get("to"), e.get("decision"), e.get("reason"), e.get("cost", {}).get("tokens"))
        for e in converted["events"]
    ] == [
        (1.0, "spawn", "invocation", "coordinator", None, None, None),
        (3.0, "orchestrator_decision", "coordinator", None, None, None, 120),  # call_llm: no operation name
        (4.0, "spawn", "coordinator", "helper", "O2", None, None),  # transfer_to_agent(agent_name=helper)
        (7.0, "tool_call", "helper", None, None, None, None),
        (8.0, "tool_result", "lookup", None, None, None, None),
        (8.0, "safety_event", "helper", None, None, "execute_tool lookup failed: timed out", None),
        (9.0, "safety_event", "helper", None, None, "guardrail pii triggered", None),
        (10.0, "return", "helper", "coordinator", None, None, 55),  # its model call's tokens, on its turn's return
        (12.0, "spawn", "coordinator", "weather_agent", "O2", None, None),  # gen_ai.transfer.target.name
        (14.0, "return", "coordinator", "invocation", None, None, None),
        (18.0, "return", "weather_agent", "invocation", None, None, 33),
        (19.0, "stop", "invocation", None, None, "the outermost agent's span ended", None),
    ]


def _span(number: int, parent: int | None, name: str, start: int, end: int, operation: str) -> dict:
    span = {
        "traceId": "0" * 31 + "1",
        "spanId": f"{number + 1:016x}",
        "name": name,
        "startTimeUnixNano": start * SECOND,
        "endTimeUnixNano": end * SECOND,
        "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": operation}}],
    }
    return span | ({"parentSpanId": f"{parent + 1:016x}"} if parent is not None else {})


def test_handoffs_to_one_agent_start_its_invocations_in_turn():
    """Agents are matched to a handoff by their name as it writes it (Zz for transfer_to_zz),
    grouped once (each handoff was matched against every agent's name, 1,700 by 1,200:
    45 s): a handoff starts the first invocation no earlier than itself that no other
    handoff started and that does not enclose it."""
    spans = [
        _span(0, None, "lead", 0, 10_000, "invoke_agent"),
        _span(1, 0, "Zz", 5, 6, "invoke_agent"),
        _span(2, 1, "transfer_to_zz", 5, 6, "execute_tool"),
    ]  # within the invocation of Zz that starts with it
    spans += [_span(3 + k, 0, "transfer_to_zz", 50, 51, "execute_tool") for k in range(300)]
    spans += [_span(303 + k, 0, "Zz", 100 + k, 101 + k, "invoke_agent") for k in range(300)]
    converted = otlp_events.to_trace(*otlp.read_spans({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    handed = [(event["agent"], event["to"]) for event in converted["events"] if event["id"].endswith("-handoff")]
    # the last handoff finds no invocation left: it spawns the agent by the name it gave
    assert handed == [("Zz#1", "Zz#2")] + [("lead", f"Zz#{k}") for k in range(3, 302)] + [("lead", "zz")]
    assert check_trace(converted).valid
