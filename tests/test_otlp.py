"""`paperpool trace import-otlp` on OTLP/JSON written by the real OpenTelemetry SDK: its
JSON encoder (hex ids), and protobuf's JSON mapping of its protobuf encoder (base64 ids)."""

from __future__ import annotations

import importlib.util
import json

import pytest
from google.protobuf import json_format
from opentelemetry import trace as otel_trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import (
    encode_spans as encode_protobuf,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from paperpool.traces import otlp
from paperpool.traces.loading import dump_trace
from paperpool.traces.validation import check_trace

from .conftest import REPO

# The scenario that regenerates the shipped example: the test runs the very same code.
_spec = importlib.util.spec_from_file_location("otlp_example", REPO / "scripts" / "otlp_example.py")
example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(example)


@pytest.fixture
def sdk_spans():
    return example.record()


def convert(text: str, **options) -> dict:
    return otlp.to_trace(*otlp.read_spans(json.loads(text), options.pop("trace_id", None)), **options)


def test_the_sdk_json_export_converts_to_a_valid_trace(sdk_spans):
    converted = convert(example.otlp_json(sdk_spans))
    assert check_trace(converted).valid
    assert [(e["type"], e["agent"], e["t"]) for e in converted["events"]] == [
        ("orchestrator_decision", "lead", 1.9),  # the lead's first model call ends: its plan
        ("spawn", "lead", 2.0), ("spawn", "lead", 2.1),
        ("tool_call", "searcher_1", 2.3), ("tool_call", "searcher_2", 2.4),
        ("tool_result", "paper_index", 3.9), ("tool_result", "web_search", 4.8),
        ("return", "searcher_2", 5.8), ("return", "searcher_1", 7.0),
        ("aggregate", "lead", 8.8),  # its next model call, after both returned
        ("spawn", "lead", 9.0), ("return", "writer", 13.5),
        ("aggregate", "lead", 15.0), ("stop", "lead", 15.2),
    ]
    # tokens: lead 1120 + 1480 + 1560, searcher_2 1710, searcher_1 2150, writer 3000
    assert converted["costs"] == {"tokens": 11020, "wall_clock_s": 15.2, "compute_s": 16.6, "tool_calls": 2, "messages": 0}
    searcher = next(e for e in converted["events"] if e["type"] == "return" and e["agent"] == "searcher_1")
    assert searcher["cost"] == {"tokens": 2150, "seconds": 2.0}  # its own chat: 1800 + 350 tokens, 4.9 s to 6.9 s
    assert converted["trace_id"] == "7e5ea7c4000000000000000000000001" and converted["task_id"] == "task-lit-review-7"


def test_protobuf_json_with_base64_ids_converts_the_same(sdk_spans):
    text = json_format.MessageToJson(encode_protobuf(sdk_spans))
    assert '"traceId": "fl6nxAAA' in text  # base64, as protobuf writes bytes
    assert convert(text) == convert(example.otlp_json(sdk_spans))


def test_the_shipped_example_is_what_the_script_makes(sdk_spans):
    export = (REPO / "traces" / "otlp" / "research-team.otlp.json").read_text(encoding="utf-8")
    assert export == example.otlp_json(sdk_spans)
    converted = convert(export, topology="centralized")
    assert (REPO / "traces" / "research-team-otlp.json").read_text(encoding="utf-8") == dump_trace(converted)


def test_import_otlp_writes_a_valid_trace(run, tmp_path, sdk_spans):
    export = tmp_path / "run.otlp.json"
    export.write_text(example.otlp_json(sdk_spans), encoding="utf-8")
    result = run("trace", "import-otlp", str(export), "-o", "out.json", "--topology", "centralized", cwd=tmp_path)
    assert (result.exit_code, result.output) == (0, "wrote out.json: 14 events, 16 edges\n")
    assert run("trace", "validate", "out.json", cwd=tmp_path).output == "out.json: valid: 14 events, 16 edges.\n"


def test_import_otlp_to_standard_output(run, tmp_path, sdk_spans):
    export = tmp_path / "run.otlp.json"
    export.write_text(example.otlp_json(sdk_spans), encoding="utf-8")
    result = run("trace", "import-otlp", str(export), cwd=tmp_path)
    assert result.exit_code == 0 and json.loads(result.output)["events"][-1]["type"] == "stop"


def _one_span_export(**span) -> dict:
    base = {"traceId": "0123456789abcdef0123456789abcdef", "spanId": "0123456789abcdef", "name": "invoke_agent solo",
            "startTimeUnixNano": "1000", "endTimeUnixNano": "2000",
            "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}]}
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {}, "spans": [base | span]}]}]}


@pytest.mark.parametrize(("document", "line"), [
    ({"trace_id": "x", "events": [], "edges": []},
     "Error: FILE: no resourceSpans list: this is not an OTLP/JSON trace export; export the spans with an OTLP JSON exporter"),
    (_one_span_export(spanId="xyz"),
     ("Error: FILE: /resourceSpans/0/scopeSpans/0/spans/0/spanId: 'xyz' is not a 8-byte id in hex (16 digits) or base64; "
     "export the spans with an OTLP JSON exporter")),
    (_one_span_export(startTimeUnixNano="soon"),
     ("Error: FILE: /resourceSpans/0/scopeSpans/0/spans/0/startTimeUnixNano: 'soon' is not a time in nanoseconds; "
     "write a whole number, as a string or not")),
    ({"resourceSpans": []}, "Error: FILE: the export holds no spans; record a run first"),
])
def test_bad_exports_are_one_clear_line(run, tmp_path, document, line):
    path = tmp_path / "FILE"
    path.write_text(json.dumps(document), encoding="utf-8")
    result = run("trace", "import-otlp", "FILE", cwd=tmp_path)
    assert (result.exit_code, result.output) == (1, line + "\n")


def test_an_export_of_several_traces_needs_a_trace_id(run, tmp_path):
    document = _one_span_export()
    second = dict(document["resourceSpans"][0]["scopeSpans"][0]["spans"][0], traceId="f" * 32)
    document["resourceSpans"][0]["scopeSpans"][0]["spans"].append(second)
    (tmp_path / "two.json").write_text(json.dumps(document), encoding="utf-8")
    result = run("trace", "import-otlp", "two.json", cwd=tmp_path)
    assert result.output == ("Error: two.json: the export holds 2 traces (0123456789abcdef0123456789abcdef, "
                             "ffffffffffffffffffffffffffffffff); choose one with --trace-id\n")
    chosen = run("trace", "import-otlp", "two.json", "--trace-id", "f" * 32, cwd=tmp_path)
    assert chosen.exit_code == 0 and json.loads(chosen.output)["trace_id"] == "f" * 32


def test_spans_out_of_order_make_an_invalid_trace(run, tmp_path):
    provider = TracerProvider(resource=Resource({"service.name": "skewed"}))
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    lead = tracer.start_span("invoke_agent lead", start_time=5_000_000_000,
                             attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "lead"})
    helper = tracer.start_span("invoke_agent helper", context=otel_trace.set_span_in_context(lead), start_time=6_000_000_000,
                               attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"})
    # the helper's tool call is stamped before the helper was invoked (a skewed clock)
    tracer.start_span("execute_tool clock", context=otel_trace.set_span_in_context(helper), start_time=4_000_000_000,
                      attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "clock"}).end(end_time=4_500_000_000)
    helper.end(end_time=7_000_000_000)
    lead.end(end_time=8_000_000_000)
    path = tmp_path / "skewed.json"
    path.write_text(example.otlp_json(exporter.get_finished_spans()), encoding="utf-8")
    result = run("trace", "import-otlp", "skewed.json", cwd=tmp_path)
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[-1] == (f"Error: the trace converted from skewed.json is not a valid trace ({len(lines) - 1} "
                         f"problem{'s' if len(lines) > 2 else ''} above); the spans' times or nesting do not make a "
                         "consistent run; check the export")
    assert any("acts at t=0, before the spawn that creates it" in line for line in lines)


def test_any_value_reads_every_otlp_shape():
    assert otlp.any_value({"intValue": "42"}) == 42
    assert otlp.any_value({"doubleValue": 0.5}) == 0.5
    assert otlp.any_value({"boolValue": True}) is True
    assert otlp.any_value({"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": 1}]}}) == ["a", 1]
    assert otlp.any_value({"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "v"}}]}}) == {"k": "v"}
    assert otlp.any_value({"bytesValue": "aGk="}) == b"hi"


def _nested_export(depth: int) -> dict:
    """Agents each invoked by the one before, `depth` spans deep: agent a1 spawns a2, ..."""
    spans = []
    for level in range(1, depth + 1):
        span = {"traceId": "0123456789abcdef0123456789abcdef", "spanId": f"{level:016x}", "name": f"invoke_agent a{level}",
                "startTimeUnixNano": str(level), "endTimeUnixNano": str(3 * depth - level),
                "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}},
                               {"key": "gen_ai.agent.name", "value": {"stringValue": f"a{level}"}}]}
        if level > 1:
            span["parentSpanId"] = f"{level - 1:016x}"
        spans.append(span)
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {}, "spans": spans}]}]}


@pytest.mark.parametrize("depth", [500, 5000])
def test_spans_nested_deeper_than_pythons_recursion_limit_convert(run, tmp_path, depth):
    """Each span names its parent, so nesting is limited by the file's size alone: the
    walk keeps its own stack (Python's recursion stops near 1,000)."""
    (tmp_path / "deep.json").write_text(json.dumps(_nested_export(depth)), encoding="utf-8")
    result = run("trace", "import-otlp", "deep.json", "-o", "out.json", cwd=tmp_path)
    # a stop for a1; a spawn and a return for each other agent; causal, spawn and return edges
    assert (result.exit_code, result.output) == (0, f"wrote out.json: {2 * depth - 1:,} events, {3 * depth - 3:,} edges\n")
    measured = json.loads(run("trace", "metrics", "out.json", "--format", "json", cwd=tmp_path).output)
    assert (measured["agents"], measured["depth"], measured["max_fanout"]) == (depth, depth - 1, 1)
