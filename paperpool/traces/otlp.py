"""OpenTelemetry GenAI spans (an OTLP/JSON export) to an orchestration trace.

The input is OTLP/JSON: resourceSpans -> scopeSpans -> spans, field names in
lowerCamelCase, span and trace ids in hex (protobuf's own JSON mapping writes them in
base64: both are read), 64-bit times as decimal strings or numbers, attributes as
{key, value: AnyValue}. The spans follow the GenAI semantic conventions: the attribute
gen_ai.operation.name says what a span is (create_agent, invoke_agent, execute_tool, chat
and the other model calls), gen_ai.agent.name (else gen_ai.agent.id) names the agent,
gen_ai.tool.name the tool, gen_ai.usage.input_tokens and output_tokens count tokens, and
parentSpanId nests the spans.

How spans become events (t is seconds from the earliest span's start):
- an agent span (create_agent, invoke_agent) whose agent an enclosing agent span's agent
  has not met yet: a spawn by the enclosing agent at the span's start; met already: a
  message from it to the agent. At the end of an invoke_agent span: a return to the
  enclosing agent. The outermost agent's span ends in a stop event: the run is over.
- execute_tool: a tool_call by the acting agent (the nearest enclosing agent span's) at
  the span's start, a tool_result at its end, costing the span's duration.
- a model call (chat, text_completion, generate_content) by an agent that spawns or
  messages others: an orchestrator_decision at the call's end, or an aggregate when some
  of its sub-agents returned since its previous call; by any other agent: its tokens and
  seconds are added to that agent's next return, the turn the call served.
- other spans only nest: their children act for the nearest enclosing agent.
Edges: each agent's events in turn (causal), a spawn or message to the agent's first
event after it (spawn, message), a call to its result (tool_dependency), a return to its
receiver's next event (return). Tokens are counted on model calls only, since agent spans
may repeat their children's usage.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field

from .schema import Finding, pointer, schema_id

OPERATION = "gen_ai.operation.name"
AGENT_OPERATIONS = ("create_agent", "invoke_agent")
TOOL_OPERATION = "execute_tool"
MODEL_OPERATIONS = ("chat", "text_completion", "generate_content")
_HEX = re.compile(r"^[0-9a-fA-F]+$")


class OtlpProblem(Exception):
    def __init__(self, findings: list[Finding]):
        super().__init__(findings[0].message)
        self.findings = findings


@dataclass
class Span:
    span_id: str
    parent_id: str | None
    name: str
    start: int  # nanoseconds since the epoch
    end: int
    attributes: dict
    order: int  # position in the file: ties are broken by it
    where: str = ""  # its JSON pointer in the export, for messages
    children: list = field(default_factory=list)

    @property
    def operation(self) -> str | None:
        return self.attributes.get(OPERATION)

    @property
    def agent(self) -> str:
        return str(self.attributes.get("gen_ai.agent.name") or self.attributes.get("gen_ai.agent.id") or self.name)

    @property
    def tokens(self) -> int:
        return sum(int(self.attributes.get(key) or 0) for key in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"))


def read_spans(document, trace_id: str | None = None) -> tuple[str, list[Span], dict]:
    """(trace id, spans, resource attributes) of one trace of an OTLP/JSON document."""
    if not isinstance(document, dict) or not isinstance(_get(document, "resourceSpans"), list):
        raise OtlpProblem([Finding("", "no resourceSpans list: this is not an OTLP/JSON trace export; "
                                       "export the spans with an OTLP JSON exporter")])
    spans: dict[str, list[Span]] = {}
    resources: dict = {}
    findings: list[Finding] = []
    for r, resource_spans in enumerate(_get(document, "resourceSpans")):
        resource = _attributes(_get(_get(resource_spans, "resource") or {}, "attributes") or [], ["resourceSpans", r, "resource"], findings)
        for s, scope_spans in enumerate(_get(resource_spans, "scopeSpans") or []):
            for k, raw in enumerate(_get(scope_spans, "spans") or []):
                path = ["resourceSpans", r, "scopeSpans", s, "spans", k]
                span_trace, span = _span(raw, path, sum(len(v) for v in spans.values()), findings)
                if span is not None:
                    spans.setdefault(span_trace, []).append(span)
                    resources.setdefault(span_trace, resource)
    if findings:
        raise OtlpProblem(findings)
    if not spans:
        raise OtlpProblem([Finding("", "the export holds no spans; record a run first")])
    if trace_id is None:
        if len(spans) > 1:
            raise OtlpProblem([Finding("", f"the export holds {len(spans)} traces ({', '.join(sorted(spans))}); "
                                           "choose one with --trace-id")])
        trace_id = next(iter(spans))
    if trace_id not in spans:
        raise OtlpProblem([Finding("", f"no trace {trace_id} in the export; it holds {', '.join(sorted(spans))}")])
    findings = check_tree(spans[trace_id])
    if findings:
        raise OtlpProblem(findings)
    return trace_id, spans[trace_id], resources[trace_id]


def check_tree(spans: list[Span]) -> list[Finding]:
    """Span ids are unique and parents nest: a repeated id or a parent loop would make
    the conversion guess which span is meant, or drop the loop's spans silently."""
    findings: list[Finding] = []
    by_id: dict[str, Span] = {}
    for span in spans:
        first = by_id.setdefault(span.span_id, span)
        if first is not span:
            findings.append(Finding(span.where + "/spanId", f"span id {span.span_id} is also the id of {first.where}; "
                                    "every span of a trace needs its own id: export the spans again"))
    if findings:
        return findings
    settled: set[str] = set()  # span ids whose ancestors were walked already
    for span in spans:
        chain: list[Span] = []
        seen: set[str] = set()
        current: Span | None = span
        while current is not None and current.span_id not in settled:
            if current.span_id in seen:
                loop = chain[[s.span_id for s in chain].index(current.span_id):]
                path = " -> ".join(s.span_id for s in loop + [current])
                findings.append(Finding(current.where + "/parentSpanId",
                                        f"the spans' parents form a loop {path}; a span cannot enclose itself: "
                                        "correct the parentSpanId of one of them"))
                settled.update(seen)
                break
            seen.add(current.span_id)
            chain.append(current)
            current = by_id.get(current.parent_id) if current.parent_id else None
        settled.update(seen)
    return findings


def _get(node, name: str):
    """A field by its OTLP/JSON name, or by protobuf's own field name."""
    if not isinstance(node, dict):
        return None
    if name in node:
        return node[name]
    return node.get(re.sub(r"[A-Z]", lambda m: "_" + m.group(0).lower(), name))


def _span(raw, path: list, order: int, findings: list[Finding]):
    if not isinstance(raw, dict):
        findings.append(Finding(pointer(path), "a span must be an object"))
        return None, None
    trace_id = _identifier(_get(raw, "traceId"), 16, path + ["traceId"], findings)
    span_id = _identifier(_get(raw, "spanId"), 8, path + ["spanId"], findings)
    parent = _get(raw, "parentSpanId")
    parent_id = _identifier(parent, 8, path + ["parentSpanId"], findings) if parent else None
    start = _nanos(_get(raw, "startTimeUnixNano"), path + ["startTimeUnixNano"], findings)
    end = _nanos(_get(raw, "endTimeUnixNano"), path + ["endTimeUnixNano"], findings)
    attributes = _attributes(_get(raw, "attributes") or [], path, findings)
    if None in (trace_id, span_id, start, end):
        return None, None
    if end < start:
        findings.append(Finding(pointer(path + ["endTimeUnixNano"]), "the span ends before it starts; correct the times"))
        return None, None
    return trace_id, Span(span_id, parent_id, str(_get(raw, "name") or ""), start, end, attributes, order, pointer(path))


def _identifier(value, size: int, path: list, findings: list[Finding]) -> str | None:
    """A trace or span id as lower-case hex: OTLP/JSON writes hex, protobuf's mapping base64."""
    if isinstance(value, str) and len(value) == 2 * size and _HEX.match(value):
        return value.lower()
    if isinstance(value, str):
        try:
            decoded = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            decoded = b""
        if len(decoded) == size:
            return decoded.hex()
    findings.append(Finding(pointer(path), f"{value!r} is not a {size}-byte id in hex ({2 * size} digits) or base64; "
                                           "export the spans with an OTLP JSON exporter"))
    return None


def _nanos(value, path: list, findings: list[Finding]) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    findings.append(Finding(pointer(path), f"{value!r} is not a time in nanoseconds; write a whole number, as a string or not"))
    return None


def _attributes(items, path: list, findings: list[Finding]) -> dict:
    attributes = {}
    for index, item in enumerate(items if isinstance(items, list) else []):
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            attributes[item["key"]] = any_value(item.get("value") or {})
        else:
            findings.append(Finding(pointer(path + ["attributes", index]), "an attribute is {key, value}; correct it"))
    return attributes


def any_value(value: dict):
    """The Python value of an OTLP AnyValue."""
    if not isinstance(value, dict):
        return None
    for name, convert in (("stringValue", str), ("boolValue", bool), ("intValue", int), ("doubleValue", float)):
        found = _get(value, name)
        if found is not None:
            return convert(found)
    array = _get(value, "arrayValue")
    if array is not None:
        return [any_value(item) for item in _get(array, "values") or []]
    kvlist = _get(value, "kvlistValue")
    if kvlist is not None:
        return {item.get("key"): any_value(item.get("value") or {}) for item in _get(kvlist, "values") or []}
    found = _get(value, "bytesValue")
    return base64.b64decode(found) if found is not None else None


def to_trace(trace_id: str, spans: list[Span], resource: dict, topology: str | None = None) -> dict:
    """The orchestration trace of one OTLP trace's spans."""
    from .otlp_events import Converter

    return Converter(trace_id, spans, resource, topology).trace(schema_id())


def convert_file(path, trace_id: str | None = None, topology: str | None = None) -> dict:
    """The orchestration trace of an OTLP/JSON file, validated: OtlpProblem when the file
    is no OTLP/JSON export, InvalidTrace when the conversion breaks a rule."""
    from .loading import TraceUnreadable, read_trace
    from .validation import InvalidTrace, check_trace

    try:
        document = read_trace(path)
    except TraceUnreadable as exc:
        raise OtlpProblem(exc.findings) from None
    trace = to_trace(*read_spans(document, trace_id), topology=topology)
    checked = check_trace(trace)
    if not checked.valid:
        raise InvalidTrace(f"the trace converted from {path}", checked.findings,
                           "the spans' times or nesting do not make a consistent run; check the export")
    return trace

