"""`paperpool trace import-otlp` on OTLP/JSON written by the real OpenTelemetry SDK: its
JSON encoder (hex ids), and protobuf's JSON mapping of its protobuf encoder (base64 ids)."""

from __future__ import annotations

import json
import os

import orjson
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

from paperpool.traces import otlp, otlp_events
from paperpool.traces.loading import dump_trace
from paperpool.traces.validation import check_trace

from ..conftest import REPO
from .artifact_traces import ARTIFACT_ASKS
from .fixtures import example


@pytest.fixture
def sdk_spans():
    return example.record()


def convert(text: str, **options) -> dict:
    return otlp_events.to_trace(*otlp.read_spans(json.loads(text), options.pop("trace_id", None)), **options)


def test_the_sdk_json_export_converts_to_a_valid_trace(sdk_spans):
    converted = convert(example.otlp_json(sdk_spans))
    assert check_trace(converted).valid
    assert [(e["type"], e["agent"], e["t"]) for e in converted["events"]] == [
        ("orchestrator_decision", "lead", 1.9),  # the lead's first model call ends: its plan
        ("spawn", "lead", 2.0),
        ("spawn", "lead", 2.1),
        ("tool_call", "searcher_1", 2.3),
        ("tool_call", "searcher_2", 2.4),
        ("tool_result", "paper_index", 3.9),
        ("tool_result", "web_search", 4.8),
        ("return", "searcher_2", 5.8),
        ("return", "searcher_1", 7.0),
        ("aggregate", "lead", 8.8),  # its next model call, after both returned
        ("spawn", "lead", 9.0),
        ("return", "writer", 13.5),
        ("aggregate", "lead", 15.0),
        ("stop", "lead", 15.2),
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
    base = {
        "traceId": "0123456789abcdef0123456789abcdef",
        "spanId": "0123456789abcdef",
        "name": "invoke_agent solo",
        "startTimeUnixNano": "1000",
        "endTimeUnixNano": "2000",
        "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}],
    }
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {}, "spans": [base | span]}]}]}


@pytest.mark.parametrize(
    ("document", "line"),
    [
        (
            {"trace_id": "x", "events": [], "edges": []},
            "Error: FILE: no resourceSpans list: this is not an OTLP/JSON trace export; export the spans with an OTLP JSON exporter",
        ),
        (
            _one_span_export(spanId="xyz"),
            (
                "Error: FILE: /resourceSpans/0/scopeSpans/0/spans/0/spanId: 'xyz' is not a 8-byte id in hex (16 digits) or base64; "
                "export the spans with an OTLP JSON exporter"
            ),
        ),
        (
            _one_span_export(startTimeUnixNano="soon"),
            (
                "Error: FILE: /resourceSpans/0/scopeSpans/0/spans/0/startTimeUnixNano: 'soon' is not a time in nanoseconds; "
                "write a whole number, as a string or not"
            ),
        ),
        ({"resourceSpans": []}, "Error: FILE: the export holds no spans; record a run first"),
    ],
)
def test_bad_exports_are_one_clear_line(run, tmp_path, document, line):
    path = tmp_path / "FILE"
    path.write_text(json.dumps(document), encoding="utf-8")
    result = run("trace", "import-otlp", "FILE", cwd=tmp_path)
    assert (result.exit_code, result.output) == (1, line + "\n")


OPERATION = {"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}
SPAN = "/resourceSpans/0/scopeSpans/0/spans/0"
FIX = "correct it, or export the spans with an OTLP JSON exporter"


def _with_attribute(key: str, value) -> dict:
    return _one_span_export(attributes=[OPERATION, {"key": key, "value": value}])


@pytest.mark.parametrize(
    ("document", "line"),
    [
        # every AnyValue that OTLP/JSON does not allow: was an internal error (ValueError, OverflowError), or silently read
        (
            _with_attribute("gen_ai.usage.input_tokens", {"intValue": "1e999"}),
            (
                f"{SPAN}/attributes/1/value/intValue: '1e999' is not a 64-bit integer; write a whole number from "
                "-9223372036854775808 to 9223372036854775807, as a string or not"
            ),
        ),
        (
            _with_attribute("x", {"intValue": "9223372036854775808"}),
            (
                f"{SPAN}/attributes/1/value/intValue: '9223372036854775808' is not a 64-bit integer; write a whole number from "
                "-9223372036854775808 to 9223372036854775807, as a string or not"
            ),
        ),
        (
            _with_attribute("x", {"intValue": 1.5}),
            (
                f"{SPAN}/attributes/1/value/intValue: 1.5 is not a 64-bit integer; write a whole number from "
                "-9223372036854775808 to 9223372036854775807, as a string or not"
            ),
        ),
        (
            _with_attribute("x", {"doubleValue": "lots"}),
            (
                f"{SPAN}/attributes/1/value/doubleValue: 'lots' is not a number; write a number or, as protobuf's JSON mapping does, "
                '"NaN", "Infinity" or "-Infinity"'
            ),
        ),
        (
            _with_attribute("x", {"doubleValue": True}),
            (
                f"{SPAN}/attributes/1/value/doubleValue: true is not a number; write a number or, as protobuf's JSON mapping does, "
                '"NaN", "Infinity" or "-Infinity"'
            ),
        ),
        (
            _with_attribute("x", {"boolValue": "true"}),
            f"{SPAN}/attributes/1/value/boolValue: boolValue is the text 'true', where OTLP/JSON has true or false; {FIX}",
        ),
        (
            _with_attribute("x", {"stringValue": 5}),
            f"{SPAN}/attributes/1/value/stringValue: stringValue is the number 5, where OTLP/JSON has text; {FIX}",
        ),
        (
            _with_attribute("x", {"bytesValue": "a!b"}),
            f"{SPAN}/attributes/1/value/bytesValue: 'a!b' is not base64; write the bytes in base64",
        ),
        (
            _with_attribute("x", {"arrayValue": {"values": "ab"}}),
            f"{SPAN}/attributes/1/value/arrayValue/values: values is the text 'ab', where OTLP/JSON has a list of AnyValues; {FIX}",
        ),
        (
            _with_attribute("x", {"arrayValue": {"values": [{"intValue": "x"}]}}),
            (
                f"{SPAN}/attributes/1/value/arrayValue/values/0/intValue: 'x' is not a 64-bit integer; write a whole number from "
                "-9223372036854775808 to 9223372036854775807, as a string or not"
            ),
        ),
        (
            _with_attribute("x", {"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "a"}}, {"key": "k"}]}}),
            (
                f"{SPAN}/attributes/1/value/kvlistValue/values/1/key: attribute 'k' is given again (first at "
                f"{SPAN}/attributes/1/value/kvlistValue/values/0); an attribute has one value: keep one of them"
            ),
        ),
        (
            _with_attribute("x", {"stringValue": "a", "intValue": 1}),
            f"{SPAN}/attributes/1/value: the value holds stringValue and intValue; an AnyValue holds one of them: keep one",
        ),
        (
            _with_attribute("x", {"intvalue": 1}),
            (f"{SPAN}/attributes/1/value/intvalue: 'intvalue' is no field of an AnyValue; did you mean 'intValue'?"),
        ),
        (
            _with_attribute("x", "plain"),
            f"{SPAN}/attributes/1/value: value is the text 'plain', where OTLP/JSON has an AnyValue such as "
            '{"stringValue": "..."}; ' + FIX,
        ),
        # the attributes the conversion reads, as the GenAI conventions say they are
        (
            _with_attribute("gen_ai.usage.output_tokens", {"doubleValue": "Infinity"}),
            (
                f"{SPAN}/attributes/1/value: gen_ai.usage.output_tokens is the number Infinity, which counts no tokens; "
                "record a whole number of tokens, 0 or more, as an intValue"
            ),
        ),
        (
            _with_attribute("gen_ai.usage.input_tokens", {"intValue": "-3"}),
            (
                f"{SPAN}/attributes/1/value: gen_ai.usage.input_tokens is the number -3, which counts no tokens; "
                "record a whole number of tokens, 0 or more, as an intValue"
            ),
        ),
        (
            _with_attribute("gen_ai.usage.input_tokens", {"stringValue": "12"}),
            (
                f"{SPAN}/attributes/1/value: gen_ai.usage.input_tokens is the text '12', which counts no tokens; "
                "record a whole number of tokens, 0 or more, as an intValue"
            ),
        ),
        (
            _with_attribute("gen_ai.usage.input_tokens", {"boolValue": True}),
            (
                f"{SPAN}/attributes/1/value: gen_ai.usage.input_tokens is true, which counts no tokens; "
                "record a whole number of tokens, 0 or more, as an intValue"
            ),
        ),
        (
            _with_attribute("gen_ai.agent.name", {"arrayValue": {"values": [{"stringValue": "a"}]}}),
            f"{SPAN}/attributes/1/value: gen_ai.agent.name is a list; the GenAI conventions make it text: record it as a stringValue",
        ),
        (
            _with_attribute("gen_ai.operation.name", {"stringValue": "chat"}),
            (
                f"{SPAN}/attributes/1/key: attribute 'gen_ai.operation.name' is given again (first at {SPAN}/attributes/0); "
                "an attribute has one value: keep one of them"
            ),
        ),
        # times, which are converted to seconds
        (
            _one_span_export(endTimeUnixNano="1" + "0" * 400),
            (
                f"{SPAN}/endTimeUnixNano: '10000000000000000000000000000000000... is past the latest time OTLP can hold "
                "(2^64 - 1 ns, in 2554); write the time in nanoseconds since 1970"
            ),
        ),
        (
            _one_span_export(startTimeUnixNano="\u00b2"),
            f"{SPAN}/startTimeUnixNano: '\u00b2' is not a time in nanoseconds; write a whole number, as a string or not",
        ),
    ],
)
def test_a_value_otlp_json_does_not_allow_is_one_line(run, tmp_path, document, line):
    path = tmp_path / "FILE"
    path.write_text(json.dumps(document), encoding="utf-8")
    result = run("trace", "import-otlp", "FILE", "-o", "out.json", cwd=tmp_path)
    assert (result.exit_code, result.output) == (1, f"Error: FILE: {line}\n")
    assert not (tmp_path / "out.json").exists()


def _broken(where: str, value) -> dict:
    """The one-span export with the field at `where` (a JSON pointer) set to `value`."""
    document = _one_span_export()
    *parents, last = [int(part) if part.isdigit() else part for part in where.split("/")[1:]]
    node = document
    for part in parents:
        node = node[part]
    node[last] = value
    return document


@pytest.mark.slow
@pytest.mark.parametrize(
    ("where", "value", "line"),
    [
        ("/resourceSpans/0", 5, ": resourceSpans[0] is the number 5, where OTLP/JSON has an object {resource, scopeSpans}"),
        ("/resourceSpans/0", None, ": resourceSpans[0] is null, where OTLP/JSON has an object {resource, scopeSpans}"),
        ("/resourceSpans/0/resource", [], ": resource is a list, where OTLP/JSON has an object {attributes}"),
        (
            "/resourceSpans/0/resource/attributes",
            {},
            ": attributes is an object, where OTLP/JSON has a list of attributes {key, value}",
        ),
        ("/resourceSpans/0/scopeSpans", "x", ": scopeSpans is the text 'x', where OTLP/JSON has a list"),
        ("/resourceSpans/0/scopeSpans/0", [], ": scopeSpans[0] is a list, where OTLP/JSON has an object {scope, spans}"),
        ("/resourceSpans/0/scopeSpans/0/scope", "s", ": scope is the text 's', where OTLP/JSON has an object {name, version}"),
        ("/resourceSpans/0/scopeSpans/0/spans", {"a": 1}, ": spans is an object, where OTLP/JSON has a list"),
        (
            SPAN,
            "span",
            ": spans[0] is the text 'span', where OTLP/JSON has an object {traceId, spanId, name, startTimeUnixNano, ...}",
        ),
        (
            f"{SPAN}/attributes",
            "notalist",
            ": attributes is the text 'notalist', where OTLP/JSON has a list of attributes {key, value}",
        ),
        (f"{SPAN}/attributes", 5, ": attributes is the number 5, where OTLP/JSON has a list of attributes {key, value}"),
        (
            f"{SPAN}/attributes",
            {"gen_ai.operation.name": "chat"},
            ": attributes is an object, where OTLP/JSON has a list of attributes {key, value}",
        ),
        (f"{SPAN}/attributes", [["gen_ai.operation.name", "chat"]], "/0: an attribute is {key, value}, its key text; correct it"),
        (f"{SPAN}/name", 5, ": name is the number 5, where OTLP/JSON has text"),
        (f"{SPAN}/kind", [1], ": kind is a list, where OTLP/JSON has a number or a name such as SPAN_KIND_INTERNAL"),
        (f"{SPAN}/events", "x", ": events is the text 'x', where OTLP/JSON has a list of objects {timeUnixNano, name}"),
        (f"{SPAN}/events", [7], "/0: events[0] is the number 7, where OTLP/JSON has an object {timeUnixNano, name}"),
        (
            f"{SPAN}/events",
            [{"timeUnixNano": "soon"}],
            "/0/timeUnixNano: 'soon' is not a time in nanoseconds; write a whole number, as a string or not",
        ),
        (
            f"{SPAN}/events",
            [{"name": "e", "attributes": "x"}],
            "/0/attributes: attributes is the text 'x', where OTLP/JSON has a list of attributes {key, value}",
        ),
        (f"{SPAN}/links", {"a": 1}, ": links is an object, where OTLP/JSON has a list of objects {traceId, spanId}"),
        (
            f"{SPAN}/links",
            [{"traceId": 5, "spanId": "0123456789abcdef"}],
            "/0/traceId: 5 is not a 16-byte id in hex (32 digits) or base64; export the spans with an OTLP JSON exporter",
        ),
        (f"{SPAN}/status", [1], ": status is a list, where OTLP/JSON has an object {code, message}"),
        (f"{SPAN}/status", {"code": [2]}, "/code: code is a list, where OTLP/JSON has a number or a name such as STATUS_CODE_OK"),
        (
            f"{SPAN}/droppedAttributesCount",
            -1,
            ": droppedAttributesCount is the number -1, where OTLP/JSON has a whole number, 0 or more",
        ),
        (
            f"{SPAN}/parentSpanId",
            0,
            ": 0 is not a 8-byte id in hex (16 digits) or base64; export the spans with an OTLP JSON exporter",
        ),
        (
            f"{SPAN}/traceId",
            7,
            ": 7 is not a 16-byte id in hex (32 digits) or base64; export the spans with an OTLP JSON exporter",
        ),
        (f"{SPAN}/startTimeUnixNano", [], ": [] is not a time in nanoseconds; write a whole number, as a string or not"),
    ],
)
def test_an_otlp_field_of_the_wrong_json_type_is_one_line(run, tmp_path, where, value, line):
    """Each was silently ignored (attributes dropped, events, links and status skipped, a
    falsy parent read as none): OTLP/JSON's structure is checked field by field."""
    (tmp_path / "FILE").write_text(json.dumps(_broken(where, value)), encoding="utf-8")
    result = run("trace", "import-otlp", "FILE", "-o", "out.json", cwd=tmp_path)
    fix = "" if line.endswith(("exporter", "or not", "correct it")) else f"; {FIX}"
    assert (result.exit_code, result.output) == (1, f"Error: FILE: {where}{line}{fix}\n")
    assert not (tmp_path / "out.json").exists()


def test_a_span_missing_a_field_it_needs_is_one_line(run, tmp_path):
    document = _one_span_export()
    del document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["endTimeUnixNano"]
    (tmp_path / "FILE").write_text(json.dumps(document), encoding="utf-8")
    assert run("trace", "import-otlp", "FILE", cwd=tmp_path).output == (
        f"Error: FILE: {SPAN}: the span has no endTimeUnixNano, which every span needs; {FIX}\n"
    )


def test_what_otlp_json_allows_is_read():
    """Protobuf's JSON mapping: 64-bit integers as strings or numbers, doubles also as
    "NaN" or "Infinity", bytes in base64 of either alphabet, padded or not, null fields
    and protobuf's own snake_case names; a whole double counts tokens too."""
    assert otlp.any_value({"intValue": "-9223372036854775808"}) == -(2**63)
    assert otlp.any_value({"intValue": 9223372036854775807}) == 2**63 - 1
    assert otlp.any_value({"doubleValue": "Infinity"}) == float("inf")
    assert otlp.any_value({"doubleValue": "2.5e3"}) == 2500.0
    assert otlp.any_value({"bytesValue": "_-8"}) == b"\xff\xef"
    assert otlp.any_value({"bytesValue": "aGk"}) == b"hi"
    assert otlp.any_value({"string_value": "snake"}) == "snake"
    assert otlp.any_value({"arrayValue": {}}) == [] and otlp.any_value({}) is None
    assert otlp.any_value({"stringValue": None, "intValue": "3"}) == 3
    document = _one_span_export(
        attributes=[
            OPERATION,
            {"key": "gen_ai.usage.input_tokens", "value": {"doubleValue": 12.0}},
            {"key": "note", "value": {"doubleValue": "NaN"}},
        ],
        parent_span_id="",
        events=None,
        status={"code": "STATUS_CODE_OK"},
        kind=2,
    )
    _, spans, _ = otlp.read_spans(document)
    assert spans[0].tokens == 12 and spans[0].parent_id is None


def test_any_value_nested_as_deep_as_json_allows_is_read():
    """340 arrays in one another reach JSON's 1,024 levels: read with a stack of its own."""
    text = '{"stringValue": "deep"}'
    for _ in range(340):
        text = '{"arrayValue": {"values": [' + text + "]}}"
    value = otlp.any_value(orjson.loads(text))
    for _ in range(340):
        value = value[0]
    assert value == "deep"


def test_an_export_of_several_traces_needs_a_trace_id(run, tmp_path):
    document = _one_span_export()
    second = dict(document["resourceSpans"][0]["scopeSpans"][0]["spans"][0], traceId="f" * 32)
    document["resourceSpans"][0]["scopeSpans"][0]["spans"].append(second)
    (tmp_path / "two.json").write_text(json.dumps(document), encoding="utf-8")
    result = run("trace", "import-otlp", "two.json", cwd=tmp_path)
    assert (result.exit_code, result.output) == (1, "Error: the inputs hold 2 traces; give -o FOLDER to write one file each\n")
    chosen = run("trace", "import-otlp", "two.json", "--trace-id", "f" * 32, cwd=tmp_path)
    assert chosen.exit_code == 0 and json.loads(chosen.output)["trace_id"] == "f" * 32
    # all of them, one file each, named by the root span and made unique
    every = run("trace", "import", "two.json", "-o", "out", cwd=tmp_path)
    assert every.exit_code == 0
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["invoke_agent-solo-2.json", "invoke_agent-solo.json"]


def test_spans_out_of_order_make_an_invalid_trace(run, tmp_path):
    provider = TracerProvider(resource=Resource({"service.name": "skewed"}))
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    lead = tracer.start_span(
        "invoke_agent lead",
        start_time=5_000_000_000,
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "lead"},
    )
    helper = tracer.start_span(
        "invoke_agent helper",
        context=otel_trace.set_span_in_context(lead),
        start_time=6_000_000_000,
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"},
    )
    # the helper's tool call is stamped before the helper was invoked (a skewed clock)
    tracer.start_span(
        "execute_tool clock",
        context=otel_trace.set_span_in_context(helper),
        start_time=4_000_000_000,
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "clock"},
    ).end(end_time=4_500_000_000)
    helper.end(end_time=7_000_000_000)
    lead.end(end_time=8_000_000_000)
    path = tmp_path / "skewed.json"
    path.write_text(example.otlp_json(exporter.get_finished_spans()), encoding="utf-8")
    result = run("trace", "import-otlp", "skewed.json", cwd=tmp_path)
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[-1] == (
        f"Error: the trace converted from skewed.json is not a valid trace ({len(lines) - 1} "
        f"problem{'s' if len(lines) > 2 else ''} above); the export's spans make a trace that breaks the rules "
        "above; check the spans they name in the export"
    )
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
        span = {
            "traceId": "0123456789abcdef0123456789abcdef",
            "spanId": f"{level:016x}",
            "name": f"invoke_agent a{level}",
            "startTimeUnixNano": str(level),
            "endTimeUnixNano": str(3 * depth - level),
            "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}},
                {"key": "gen_ai.agent.name", "value": {"stringValue": f"a{level}"}},
            ],
        }
        if level > 1:
            span["parentSpanId"] = f"{level - 1:016x}"
        spans.append(span)
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {}, "spans": spans}]}]}


@pytest.mark.slow
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


def test_an_export_converting_to_no_events_is_an_error_naming_what_it_holds(run, tmp_path, snapshot):
    """Spans of other conventions (OpenInference's span kinds, no gen_ai.operation.name)
    gave an empty trace and exit 0; now: exit 1, nothing written, and what was found."""
    document = _one_span_export(
        name="Agent.run", attributes=[{"key": "openinference.span.kind", "value": {"stringValue": "AGENT"}}]
    )
    (tmp_path / "oi.json").write_text(json.dumps(document), encoding="utf-8")
    before = snapshot(tmp_path)
    result = run("trace", "import", "--from", "otlp", "oi.json", "-o", "out.json", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        (
            "Error: oi.json: converted to a trace with no events, so nothing was written; --from otlp expects OpenTelemetry "
            "spans following the GenAI semantic conventions (gen_ai.operation.name create_agent, invoke_agent, execute_tool, "
            "chat); the input holds 1 spans named Agent.run (1); no span has gen_ai.operation.name (spans with "
            "openinference.span.kind follow OpenInference's conventions: --from openinference)\n"
        ),
    )
    assert snapshot(tmp_path) == before


def test_json_lines_from_the_file_exporter_give_one_trace_per_run(run, tmp_path):
    """The OpenTelemetry file exporter writes one OTLP document per line; a run's spans
    may be spread over several lines, and several runs over one file."""
    first = _one_span_export()
    second = _one_span_export(traceId="f" * 32, name="invoke_agent other")
    lines = [json.dumps(first), json.dumps(second)]
    (tmp_path / "spans.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run("trace", "import", "spans.jsonl", "-o", "runs", "--name", "{index}-{name}", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert sorted(path.name for path in (tmp_path / "runs").iterdir()) == [
        "1-invoke_agent-solo.json",
        "2-invoke_agent-other.json",
    ]
    broken = run("trace", "import", "spans.jsonl", "--from", "otlp", cwd=tmp_path.parent / tmp_path.name)
    assert broken.exit_code == 1  # two runs, no -o folder
    (tmp_path / "bad.jsonl").write_text(lines[0] + '\n{"resourceSpans": [\n', encoding="utf-8")
    bad = run("trace", "import", "bad.jsonl", cwd=tmp_path)
    assert bad.output == (
        "Error: bad.jsonl:2: the JSON stops in the middle (column 20): the file is truncated; export or copy it again\n"
    )


def _snake(node):
    if isinstance(node, dict):
        return {"".join("_" + c.lower() if c.isupper() else c for c in key): _snake(value) for key, value in node.items()}
    return [_snake(item) for item in node] if isinstance(node, list) else node


def test_json_lines_in_protobuf_s_snake_case_import_as_the_document_does(run, tmp_path):
    """Issue 39's eighteenth review: an OTLP/JSON Lines file in protobuf's field names
    (resource_spans, a span a line) was refused as "no export request", while the same
    spans as one document imported."""
    whole = _snake(json.loads((REPO / "traces" / "otlp" / "research-team.otlp.json").read_text(encoding="utf-8")))
    resource = whole["resource_spans"][0]
    lines = [
        json.dumps(
            {
                "resource_spans": [
                    {"resource": resource["resource"], "scope_spans": [{"scope": scope.get("scope"), "spans": [span]}]}
                ]
            }
        )
        for scope in resource["scope_spans"]
        for span in scope["spans"]
    ]
    (tmp_path / "snake.json").write_text(json.dumps(whole), encoding="utf-8")
    (tmp_path / "snake.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for name in ("snake.json", "snake.jsonl"):
        result = run("trace", "import", name, "-o", f"{name}.out.json", cwd=tmp_path)
        assert result.exit_code == 0, result.output
    assert (tmp_path / "snake.json.out.json").read_text(encoding="utf-8") == (tmp_path / "snake.jsonl.out.json").read_text(
        encoding="utf-8"
    )


def test_an_unknown_format_is_named(run, tmp_path):
    (tmp_path / "x.json").write_text("{}", encoding="utf-8")
    result = run("trace", "import", "x.json", "--from", "pdf", cwd=tmp_path)
    start = "Error: --from pdf: not a format paperpool reads; use one of "
    assert result.output.startswith(start) and {"otlp", "openinference"} <= set(result.output[len(start) : -1].split(", "))
    result = run("trace", "import", "x.json", cwd=tmp_path)
    start = "Error: x.json: not a trace export paperpool recognises; name its format with --from ("
    assert result.output.startswith(start) and {"otlp", "openinference"} <= set(result.output[len(start) : -2].split(", "))


def test_trace_import_reads_only_plain_files_and_writes_only_new_ones(run, tmp_path):
    (tmp_path / "one.json").write_text(json.dumps(_one_span_export()), encoding="utf-8")
    os.mkfifo(tmp_path / "fifo")  # a pipe would block the reader forever
    result = run("trace", "import", "fifo", "-o", "o.json", cwd=tmp_path)
    assert (result.exit_code, result.output.startswith("Error: fifo: not a plain file")) == (1, True)
    same = run("trace", "import", "one.json", "-o", "one.json", cwd=tmp_path)
    assert same.output == "Error: -o one.json: one.json is one of the inputs; write the traces elsewhere (nothing was written)\n"
    (tmp_path / "two.jsonl").write_text(
        json.dumps(_one_span_export()) + "\n" + json.dumps(_one_span_export(traceId="f" * 32)) + "\n", encoding="utf-8"
    )
    for pattern in ("{name[x]}", "{name.__class__}", "{name:>3000000000}"):
        bad = run("trace", "import", "two.jsonl", "-o", "out", "--name", pattern, cwd=tmp_path)
        assert bad.exit_code == 1 and bad.output.startswith(f"Error: --name '{pattern}': "), pattern


def test_validate_names_the_importer_of_an_otlp_export(run, tmp_path, sdk_spans):
    export = tmp_path / "run.otlp.json"
    export.write_text(example.otlp_json(sdk_spans), encoding="utf-8")
    lines = example.otlp_json(sdk_spans).replace("\n", " ")
    (tmp_path / "run.otlp.jsonl").write_text(lines + "\n" + lines + "\n", encoding="utf-8")  # JSON Lines: no JSON as a whole
    result = run("trace", "validate", "run.otlp.json", "run.otlp.jsonl", cwd=tmp_path)
    said = (
        "is otlp input, not an orchestration trace: OTLP/JSON export of OpenTelemetry GenAI spans (one document, or JSON "
        "Lines); convert it first: paperpool trace import --from otlp {} -o TRACE.json"
    )
    assert (result.exit_code, result.output.splitlines()) == (
        1,
        [
            "run.otlp.json: " + said.format("run.otlp.json"),
            "run.otlp.json: invalid, 1 problem.",
            "run.otlp.jsonl: " + said.format("run.otlp.jsonl"),
            "run.otlp.jsonl: invalid, 1 problem.",
            "2 files: 0 valid, 2 invalid.",
        ],
    )


def test_a_broken_trace_is_not_taken_for_an_importers_input(run, tmp_path):
    """Only a file with no trace's lists of events and edges is matched against the importers' formats."""
    (tmp_path / "t.json").write_text(
        json.dumps({"trace_id": "t", "x_resourceSpans": [], "events": [{"id": "a"}], "edges": []} | ARTIFACT_ASKS),
        encoding="utf-8",
    )
    result = run("trace", "validate", "t.json", cwd=tmp_path)
    assert (result.exit_code, result.output.splitlines()[0]) == (
        1,
        (
            "t.json: /events/0/agent: missing: add `agent` (the agent "
            "that acts (for a tool_result, the tool or the agent that called it))"
        ),
    )


@pytest.mark.parametrize("output", ["traces", "traces/invoke_agent-lead.json"])
def test_an_import_never_replaces_a_file(tmp_path, run, output):
    """A maintainer's trace whose name is the run's root span: refused for one run as for
    several (issue 39: one run's trace silently replaced it), and nothing is written."""
    (tmp_path / "traces").mkdir()
    theirs = tmp_path / "traces" / "invoke_agent-lead.json"
    theirs.write_text('{"mine": true}\n', encoding="utf-8")
    result = run("trace", "import", str(REPO / "traces" / "otlp" / "research-team.otlp.json"), "-o", output, cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        (
            f"Error: -o {output}: traces/invoke_agent-lead.json exists; an import writes new files only: remove it, or choose "
            "another name (nothing was written)\n"
        ),
    )
    assert theirs.read_text(encoding="utf-8") == '{"mine": true}\n' and os.listdir(tmp_path / "traces") == [
        "invoke_agent-lead.json"
    ]


def _array_value(depth: int, members: list) -> dict:
    value = {"arrayValue": {"values": members}}
    for _ in range(depth):
        value = {"arrayValue": {"values": [value]}}
    return value


def test_many_broken_values_deep_in_an_attribute_give_the_first_hundred(run, tmp_path):
    """Each member of an arrayValue was queued with a copy of its path, every finding was
    built and every one printed (45,000 values 300 levels down: 15 s, 5 GB, 45,001 lines);
    now a member links to its array's place and the reading stops past 100 findings."""
    document = _one_span_export(attributes=[{"key": "a", "value": _array_value(300, [1] * 3000)}])
    (tmp_path / "deep.json").write_text(json.dumps(document), encoding="utf-8")
    result = run("trace", "import", "deep.json", "--from", "otlp", "-o", "out.json", cwd=tmp_path)
    lines = result.output.splitlines()
    deep = "/resourceSpans/0/scopeSpans/0/spans/0/attributes/0/value" + "/arrayValue/values/0" * 300 + "/arrayValue/values"
    assert result.exit_code == 1 and len(lines) == 101 and not (tmp_path / "out.json").exists()
    assert lines[:100] == [
        f"deep.json: {deep}/{k}: values[{k}] is the number 1, where OTLP/JSON has an AnyValue such as "
        '{"stringValue": "..."}; correct it, or export the spans with an OTLP JSON exporter'
        for k in range(100)
    ]
    assert lines[-1] == (
        "Error: deep.json: more than 100 problems (the first 100 above; past them problems are not looked for: "
        "fix these, often one mistake repeated, and import it again)"
    )


def test_unknown_fields_of_many_values_give_the_first_hundred(run, tmp_path):
    attributes = [{"key": f"a{k}", "value": {"q": 1, "r": 2}} for k in range(3000)]
    (tmp_path / "flat.json").write_text(json.dumps(_one_span_export(attributes=attributes)), encoding="utf-8")
    result = run("trace", "import", "flat.json", "--from", "otlp", cwd=tmp_path)
    lines = result.output.splitlines()
    assert result.exit_code == 1 and len(lines) == 101
    assert lines[0].startswith("flat.json: /resourceSpans/0/scopeSpans/0/spans/0/attributes/0/value/q: 'q' is no field")
    assert lines[99].startswith("flat.json: /resourceSpans/0/scopeSpans/0/spans/0/attributes/49/value/r: 'r' is no field")
    assert lines[-1].startswith("Error: flat.json: more than 100 problems")


def test_a_wide_and_deep_value_is_read_whole(tmp_path):
    value = _array_value(300, [{}] * 3000 + [{"intValue": "7"}])
    decoded = otlp.any_value(value)
    for _ in range(300):
        decoded = decoded[0]
    assert decoded == [None] * 3000 + [7]


def test_a_problem_in_json_lines_names_its_line(run, tmp_path):
    """Documents were numbered by their place among the non-blank lines, and the number
    written into the pointer (/line 2/resourceSpans/...); now FILE:LINE: /pointer."""
    good = json.dumps(_one_span_export())
    other = _one_span_export(traceId="f" * 32, spanId="1" * 16)
    other["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"][0]["value"] = {"stringValue": 5}
    (tmp_path / "spans.jsonl").write_text(f"{good}\n\n\n{json.dumps(other)}\n", encoding="utf-8")
    result = run("trace", "import", "spans.jsonl", "--from", "otlp", "-o", "runs", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        (
            "Error: spans.jsonl:4: /resourceSpans/0/scopeSpans/0/spans/0/attributes/0/"
            "value/stringValue: stringValue is the number 5, where OTLP/JSON has text; "
            "correct it, or export the spans with an OTLP JSON exporter\n"
        ),
    )
    twice = good.replace('"name"', '"name": "x", "name"')
    (tmp_path / "twice.jsonl").write_text(f"{good}\n\n{twice}\n", encoding="utf-8")
    result = run("trace", "import", "twice.jsonl", "--from", "otlp", "-o", "runs", cwd=tmp_path)
    assert result.output.startswith("Error: twice.jsonl:3: /resourceSpans/0/scopeSpans/0/spans/0/name: 'name' is given twice")
    (tmp_path / "again.jsonl").write_text(f"{good}\n\n{good}\n", encoding="utf-8")
    result = run("trace", "import", "again.jsonl", "--from", "otlp", "-o", "runs", cwd=tmp_path)
    assert result.output == (
        "Error: again.jsonl:3: /resourceSpans/0/scopeSpans/0/spans/0/spanId: span id 0123456789abcdef is "
        "also the id of /resourceSpans/0/scopeSpans/0/spans/0 on line 1; every span of a trace needs its "
        "own id: export the spans again\n"
    )


def _export_of_traces(count: int) -> dict:
    spans = [
        _one_span_export(traceId=f"{k + 1:032x}", name="x")["resourceSpans"][0]["scopeSpans"][0]["spans"][0] for k in range(count)
    ]
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


def test_an_import_writes_at_most_a_thousand_files(run, tmp_path):
    """An export whose every span is a trace of its own made a file each (5,000 in 1 MB);
    past 1,000 it is refused before any is converted or written."""
    (tmp_path / "many.json").write_text(json.dumps(_export_of_traces(1001)), encoding="utf-8")
    result = run("trace", "import", "many.json", "-o", "runs", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        (
            "Error: many.json: the inputs hold 1,001 traces, more than the 1,000 "
            "files one import writes; choose one with --trace-id, or split the input "
            "and import each part (nothing was written)\n"
        ),
    )
    assert not (tmp_path / "runs").exists()
    chosen = run("trace", "import", "many.json", "--trace-id", f"{7:032x}", "-o", "one.json", cwd=tmp_path)
    assert chosen.exit_code == 0 and (tmp_path / "one.json").exists()


def test_traces_of_one_name_are_numbered_in_turn(tmp_path):
    """Each name's copies were numbered by trying 2, 3, ... again for each (quadratic);
    now each name remembers the number its next copy may take, and the names are as before."""
    from paperpool.traces.importing import Imported, plan_outputs

    names = ["x"] * 400 + ["x-3", "y", "x"] + ["y"] * 3
    planned = plan_outputs([Imported(name, {}, tmp_path) for name in names], tmp_path / "out", "{name}")
    expected = ["x"] + [f"x-{k}" for k in range(2, 401)] + ["x-3-2", "y", "x-401", "y-2", "y-3", "y-4"]
    assert [path.name for path, _ in planned] == [f"{name}.json" for name in expected]


def test_many_broken_resource_spans_give_the_first_hundred(run, tmp_path):
    (tmp_path / "nulls.json").write_text(json.dumps({"resourceSpans": [None] * 3000}), encoding="utf-8")
    result = run("trace", "import", "nulls.json", "--from", "otlp", cwd=tmp_path)
    lines = result.output.splitlines()
    assert result.exit_code == 1 and len(lines) == 101
    assert lines[99].startswith("nulls.json: /resourceSpans/99: resourceSpans[99] is null, where OTLP/JSON has an object")
    assert lines[-1].startswith("Error: nulls.json: more than 100 problems")


@pytest.mark.slow
def test_a_json_lines_export_is_read_a_line_at_a_time_and_stops_at_its_first_bad_line(run, tmp_path):
    """Issue 39's sixth review: past its first line a file read as JSON Lines was split
    whole and every line parsed and kept before any was checked (60 MB took 3.5 GB)."""
    import tracemalloc

    path = tmp_path / "lines.json"
    path.write_bytes(b'{"resourceSpans": []}\n' + b"a\n" * 5_000_000)
    tracemalloc.start()
    try:
        result = run("trace", "import", "--from", "otlp", str(path), "-o", str(tmp_path / "out.json"), cwd=tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.exit_code == 1 and result.output.startswith(f"Error: {path}:2: ")
    assert peak < 20 * path.stat().st_size, f"{peak:,} bytes at the peak"  # it was 57 times, and grew with the lines
    objects = tmp_path / "objects.json"
    objects.write_bytes(b"{}\n" * 1_000_000)
    result = run("trace", "import", "--from", "otlp", str(objects), "-o", str(tmp_path / "out.json"), cwd=tmp_path)
    assert result.output == (
        f"Error: {objects}:1: the line is no OTLP/JSON export request (an object with resourceSpans, or resource_spans, a list); an "
        "OTLP/JSON Lines file holds one on each line\n"
    )


def test_a_long_loop_of_parents_is_said_by_its_first_and_last_spans(run, tmp_path):
    """Spans whose parents form a loop of 5,000: the line names the first and the last few
    and counts the rest (it named every span, some 19 characters each)."""
    count = 5_000
    spans = [
        {
            "traceId": "5b8efff798038103d269b633813fc60c",
            "spanId": f"{k + 1:016x}",
            "parentSpanId": f"{(k + 1) % count + 1:016x}",
            "name": "invoke_agent lead",
            "startTimeUnixNano": "1700000000000000000",
            "endTimeUnixNano": "1700000009000000000",
        }
        for k in range(count)
    ]
    path = tmp_path / "loop.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}), encoding="utf-8")
    result = run("trace", "import", "--from", "otlp", str(path), "-o", str(tmp_path / "t.json"), cwd=tmp_path)
    assert result.exit_code == 1 and len(result.output) < 600, result.output[:600]
    shown = " -> ".join(f"{k:016x}" for k in (1, 2, 3, 4, 5, 6, 7))
    assert (
        f"form a loop {shown} -> (4,991 more spans) -> 0000000000001387 -> 0000000000001388 -> 0000000000000001;" in result.output
    )
    assert not (tmp_path / "t.json").exists()


def test_a_guardrails_long_reason_is_cut_as_a_failed_spans_is(run, tmp_path):
    """A guardrail's verdict reason of 2,500 characters (an LLM judge's explanation) made the
    import fail on the converted trace's own limit, naming a pointer into a file never
    written; it is cut to the schema's 2,000 characters, as a failed span's message is."""

    def attribute(key, value):
        return {"key": key, "value": {"stringValue": value}}

    def span(number, parent, name, attributes):
        made = {
            "traceId": "0" * 31 + "1",
            "spanId": f"{number:016x}",
            "name": name,
            "startTimeUnixNano": str(100 * number),
            "endTimeUnixNano": str(100 * number + 50 if parent else 10_000),
            "attributes": [attribute(key, value) for key, value in attributes.items()],
        }
        return made | ({"parentSpanId": f"{parent:016x}"} if parent else {})

    reason = "The response was blocked because " + "it quoted personal data of a third party; " * 60
    spans = [
        span(1, None, "invoke_agent planner", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"}),
        span(
            2,
            1,
            "apply_guardrail",
            {
                "gen_ai.operation.name": "apply_guardrail",
                "gen_ai.guardrail.name": "pii",
                "gen_ai.guardrail.verdict.type": "deny",
                "gen_ai.guardrail.verdict.reason": reason,
            },
        ),
    ]
    path = tmp_path / "guard.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}), encoding="utf-8")
    result = run("trace", "import", str(path), "-o", str(tmp_path / "t.json"), cwd=tmp_path)
    assert result.exit_code == 0, result.output
    events = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))["events"]
    [safety] = [event for event in events if event["type"] == "safety_event"]
    assert len(reason) > 2_000 and len(safety["reason"]) == 2_000
    assert safety["reason"].startswith("guardrail pii deny")
