"""Regenerate the example trace converted from OpenTelemetry: a small research team,
recorded by the real OpenTelemetry SDK with the GenAI attribute names, exported as
OTLP/JSON by the SDK's own JSON encoder, then converted by `paperpool trace import-otlp`.

    /work/venv/bin/python scripts/otlp_example.py     (needs the test extra: pip install -e '.[test]')

It writes traces/otlp/research-team.otlp.json (the export) and traces/research-team-otlp.json
(the orchestration trace). Span ids come from a counter and times are given explicitly,
so that the files come out the same on every run; everything else is the SDK's.
The test suite runs the same scenario (tests/traces/test_otlp.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

from opentelemetry import trace
from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator

REPO = Path(__file__).resolve().parent.parent
EXPORT = REPO / "traces" / "otlp" / "research-team.otlp.json"
CONVERTED = REPO / "traces" / "research-team-otlp.json"
START = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z, in nanoseconds
SECOND = 1_000_000_000


class CountingIds(IdGenerator):
    """Span ids 1, 2, 3, ... and one fixed trace id: the same export on every run."""

    def __init__(self):
        self.count = 0

    def generate_span_id(self) -> int:
        self.count += 1
        return self.count

    def generate_trace_id(self) -> int:
        return 0x7E5EA7C4_0000_0000_0000_0000_0000_0001


def run_team(tracer) -> None:
    """A lead agent plans, runs two searchers side by side, reads their findings, has a
    writer draft the answer, checks it and stops. Times are in seconds from START."""

    def span(name: str, parent, start: float, attributes: dict):
        context = trace.set_span_in_context(parent) if parent is not None else None
        return tracer.start_span(
            name,
            context=context,
            start_time=START + int(start * SECOND),
            attributes={"gen_ai.conversation.id": "task-lit-review-7", **attributes},
        )

    def end(opened, at: float) -> None:
        opened.end(end_time=START + int(at * SECOND))

    def agent(name: str, parent, start: float):
        return span(
            f"invoke_agent {name}",
            parent,
            start,
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name, "gen_ai.provider.name": "example"},
        )

    def chat(parent, start: float, stop: float, tokens_in: int, tokens_out: int) -> None:
        end(
            span(
                "chat example-model",
                parent,
                start,
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "example-model",
                    "gen_ai.usage.input_tokens": tokens_in,
                    "gen_ai.usage.output_tokens": tokens_out,
                },
            ),
            stop,
        )

    def tool(parent, name: str, start: float, stop: float) -> None:
        end(
            span(f"execute_tool {name}", parent, start, {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}), stop
        )

    lead = agent("lead", None, 0.0)
    chat(lead, 0.1, 1.9, 900, 220)  # plan: two searches in parallel
    searchers = [agent("searcher_1", lead, 2.0), agent("searcher_2", lead, 2.1)]
    tool(searchers[0], "web_search", 2.3, 4.8)
    tool(searchers[1], "paper_index", 2.4, 3.9)
    chat(searchers[1], 4.0, 5.6, 1400, 310)
    chat(searchers[0], 4.9, 6.9, 1800, 350)
    end(searchers[1], 5.8)
    end(searchers[0], 7.0)
    chat(lead, 7.2, 8.8, 1300, 180)  # merge the findings
    writer = agent("writer", lead, 9.0)
    chat(writer, 9.1, 13.4, 2100, 900)
    end(writer, 13.5)
    chat(lead, 13.7, 15.0, 1500, 60)  # check the draft, then stop
    end(lead, 15.2)


def record() -> list:
    """The finished spans of one run of the team, from the SDK."""
    provider = TracerProvider(resource=Resource({"service.name": "research-team"}), id_generator=CountingIds())
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    run_team(provider.get_tracer("paperpool.examples.research_team"))
    provider.shutdown()
    return list(exporter.get_finished_spans())


def otlp_json(spans) -> str:
    """OTLP/JSON, written by the SDK's JSON encoder."""
    return encode_spans(spans).to_json() + "\n"


def main() -> None:
    sys.path.insert(0, str(REPO))
    from paperpool.files.yamlio import write_atomic
    from paperpool.traces.loading import dump_trace
    from paperpool.traces.otlp_events import convert_file

    write_atomic(EXPORT, otlp_json(record()))
    converted = convert_file(EXPORT, topology="centralized")
    write_atomic(CONVERTED, dump_trace(converted))
    print(f"wrote {EXPORT.relative_to(REPO)} and {CONVERTED.relative_to(REPO)}: {len(converted['events'])} events")


if __name__ == "__main__":
    main()
