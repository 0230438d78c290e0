"""OpenTelemetry GenAI spans (an OTLP/JSON export) to an orchestration trace.

The input is OTLP/JSON: resourceSpans -> scopeSpans -> spans, field names in
lowerCamelCase, span and trace ids in hex (protobuf's own JSON mapping writes them in
base64: both are read), 64-bit times as decimal strings or numbers, attributes as
{key, value: AnyValue}. The spans follow the GenAI semantic conventions: the attribute
gen_ai.operation.name says what a span is (create_agent, invoke_agent, execute_tool, chat
and the other model calls), gen_ai.agent.name (else gen_ai.agent.id) names the agent,
gen_ai.tool.name the tool, gen_ai.usage.input_tokens and output_tokens count tokens, and
parentSpanId nests the spans.

Every field is checked as OTLP/JSON (protobuf's JSON mapping) allows it, whether the
conversion reads it or not: a list, object, text or number where another JSON type
belongs, an intValue past int64, a doubleValue that is no number, base64 that is not, a
time past 2^64 ns, an attribute given twice, and the attributes read here of another kind
than the GenAI conventions say (a token count of Infinity, an agent's name that is a
list) are each one finding with its JSON pointer, and nothing is converted.

How spans become events (t is seconds from the earliest span's start; otlp_events.py
says what each span is, by the GenAI conventions or OpenInference's, and builds them):
- every agent span is one instance (an agent invoked three times: three instances, named
  agent#1 ... and with the agent's name as their role), spawned by the enclosing instance
  at its start and returning to it at its end; the outermost ends in a stop. Workflows
  (invoke_workflow, invoke_swarm, invoke_graph) are instances too, and so is a root span
  that encloses the run without being an agent (the run's orchestrator, named by the agent
  it names, else by the span). A root that is a tool call, model call or guardrail of its
  own is acted for by the agent it names, else by the service.
- a handoff (agent_handoff spans, gen_ai.transfer.target.name, the transfer tools
  transfer_to_agent, handoff_to_agent and transfer_to_<agent>): a spawn, by the agent that
  hands off, of the next invocation of the agent handed to, marked with the mapping's
  delegation sub-decision (subdecisions.yaml, marks).
- execute_tool: a tool_call by the acting instance at the span's start, a tool_result at
  its end, costing the span's duration.
- a model call (chat, text_completion, generate_content, or a span without an operation
  name that names a model or counts tokens) by an instance that starts or hands off to
  others: an orchestrator_decision at the call's end, or an aggregate when some of its
  sub-agents returned since; by any other instance: its tokens and seconds are added to its
  next return. An orchestrator without model calls aggregates when all it ran have ended
  and it starts more.
- a failed span (status error) and a guardrail: a safety_event (with a guardrail's
  verdict, action and reason when its verdict is no allow).
- an agent or workflow span's own usage counts, on its return or stop, only where no span
  under it reports usage (else the usage would count twice).
- other spans only nest: their children act for the nearest enclosing instance.
Edges: each instance's events in turn (causal), a spawn or message to the instance's first
event after it (spawn, message), a call to its result (tool_dependency), a return to its
receiver's next event (return). A trace in which no span is an orchestration step (an
agent's creation, memory operations) is passed over where the export holds a run.
"""

from __future__ import annotations

import base64
import binascii
import functools
import math
import re
from dataclasses import dataclass, field

from paperpool.files.problems import suggest

from .schema import MOST_PROBLEMS, Finding, pointer, shown_cycle

OPERATION = "gen_ai.operation.name"
TOOL_OPERATION = "execute_tool"
MODEL_OPERATIONS = ("chat", "text_completion", "generate_content")
_HEX = re.compile(r"^[0-9a-fA-F]+\Z")


class OtlpProblem(Exception):
    """An export's problems: its findings (at most MOST_PROBLEMS + 1, so that a caller can
    tell there were more), each with the line of its document in a JSON Lines export
    (`lines`, None for a document that is the whole file)."""

    def __init__(self, findings: list[Finding], lines: list[int | None] | None = None):
        super().__init__(findings[0].message)
        self.findings = findings
        self.lines = lines or [None] * len(findings)

    def said(self, file: str) -> list[str]:
        """Each problem on a line of its own, naming FILE, or FILE:LINE in JSON Lines."""
        return [
            finding.line(file if line is None else f"{file}:{line}")
            for finding, line in zip(self.findings, self.lines, strict=True)
        ]


@dataclass
class Span:
    span_id: str
    parent_id: str | None
    name: str
    start: int  # nanoseconds since the epoch
    end: int
    attributes: dict
    order: int  # position in the export: ties are broken by it
    where: str = ""  # its JSON pointer in its document, for messages
    line: int | None = None  # its document's line, in a JSON Lines export
    children: list = field(default_factory=list)
    status: dict = field(default_factory=dict)  # {code, message}: code 2 (STATUS_CODE_ERROR) when it failed

    @property
    def operation(self) -> str | None:
        return self.attributes.get(OPERATION)

    @property
    def agent(self) -> str:
        return str(self.attributes.get("gen_ai.agent.name") or self.attributes.get("gen_ai.agent.id") or self.name)

    @property
    def tokens(self) -> int:
        return sum(int(self.attributes.get(key) or 0) for key in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"))


def read_traces(documents: list[tuple[int | None, object]]) -> dict[str, tuple[list[Span], dict]]:
    """Every trace of one or more OTLP/JSON documents, each with its line (a JSON Lines
    export holds one per line; None for a document that is the whole file): trace id ->
    (its spans, its resource's attributes). Every field is checked as it is read: one of
    the wrong JSON type, an id, time or attribute value that OTLP/JSON does not allow there,
    is a finding with its JSON pointer and line; past MOST_PROBLEMS of them no more are
    looked for."""
    spans: dict[str, list[Span]] = {}
    resources: dict = {}
    findings: list[Finding] = []
    lines: list[int | None] = []
    order = 0
    for line, document in documents:
        if not isinstance(document, dict) or not isinstance(field(document, "resourceSpans")[1], list):
            raise OtlpProblem(
                [
                    Finding(
                        "",
                        "no resourceSpans list: this is not an OTLP/JSON trace export; "
                        "export the spans with an OTLP JSON exporter",
                    )
                ],
                [line],
            )
        found = len(findings)
        for trace_id, span, resource in _spans(document, findings):
            span.order, span.line = order, line
            spans.setdefault(trace_id, []).append(span)
            resources.setdefault(trace_id, resource)
            order += 1
        lines += [line] * (len(findings) - found)
        if _full(findings):
            break
    if findings:
        _refuse(list(zip(lines, findings, strict=True)))
    if not spans:
        raise OtlpProblem([Finding("", "the export holds no spans; record a run first")])
    for found in spans.values():
        problems = check_tree(found)
        if problems:
            _refuse(problems)
    return {trace_id: (found, resources[trace_id]) for trace_id, found in spans.items()}


def _refuse(placed: list[tuple[int | None, Finding]]) -> None:
    """OtlpProblem with (line, finding) pairs, in order of their lines, then their pointers."""
    placed = sorted(placed, key=lambda pair: (pair[0] or 0, pair[1].sort_key()))
    raise OtlpProblem([finding for _, finding in placed], [line for line, _ in placed])


def _spans(document: dict, findings: list[Finding]):
    """The spans of one OTLP/JSON document, read in turn (each with its trace id and its
    resource's attributes), until more than MOST_PROBLEMS findings."""
    key, listed = field(document, "resourceSpans")
    for r, raw_resource in enumerate(listed):
        if _full(findings):
            return
        path = [key, r]
        resource_spans = _item(raw_resource, "ResourceSpans", path, findings) or {}
        resource = resource_spans.get("resource", {}).get("attributes", {})
        for s, raw_scope in enumerate(resource_spans.get("scopeSpans", [])):
            if _full(findings):
                return
            scope_path = path + [field(raw_resource, "scopeSpans")[0], s]
            scope_spans = _item(raw_scope, "ScopeSpans", scope_path, findings) or {}
            for k, raw_span in enumerate(scope_spans.get("spans", [])):
                if _full(findings):
                    return
                read = _span(raw_span, scope_path + [field(raw_scope, "spans")[0], k], findings)
                if read is not None:
                    yield *read, resource


def read_spans(document, trace_id: str | None = None) -> tuple[str, list[Span], dict]:
    """(trace id, spans, resource attributes) of one trace of an OTLP/JSON document."""
    traces = read_traces([(None, document)])
    if trace_id is None:
        if len(traces) > 1:
            raise OtlpProblem(
                [
                    Finding(
                        "",
                        f"the export holds {len(traces)} traces ({', '.join(sorted(traces))}); "
                        "choose one with --trace-id, or convert them all with paperpool trace import",
                    )
                ]
            )
        trace_id = next(iter(traces))
    if trace_id not in traces:
        raise OtlpProblem([Finding("", f"no trace {trace_id} in the export; it holds {', '.join(sorted(traces))}")])
    return (trace_id, *traces[trace_id])


def check_tree(spans: list[Span]) -> list[tuple[int | None, Finding]]:
    """Span ids are unique and parents nest: a repeated id or a parent loop would make
    the conversion guess which span is meant, or drop the loop's spans silently. Each
    problem with the line of its span's document; at most MOST_PROBLEMS + 1 of them."""
    findings: list[tuple[int | None, Finding]] = []
    by_id: dict[str, Span] = {}
    for span in spans:
        first = by_id.setdefault(span.span_id, span)
        if first is not span and len(findings) <= MOST_PROBLEMS:
            findings.append(
                (
                    span.line,
                    Finding(
                        span.where + "/spanId",
                        f"span id {span.span_id} is also the id of "
                        f"{_place(first, span.line)}; every span of a trace needs its own id: "
                        "export the spans again",
                    ),
                )
            )
    if findings:
        return findings
    settled: set[str] = set()  # span ids whose ancestors were walked already
    for span in spans:
        if len(findings) > MOST_PROBLEMS:
            break
        chain: list[Span] = []
        seen: set[str] = set()
        current: Span | None = span
        while current is not None and current.span_id not in settled:
            if current.span_id in seen:
                loop = chain[[s.span_id for s in chain].index(current.span_id) :]
                path = shown_cycle([s.span_id for s in loop + [current]], "spans")
                findings.append(
                    (
                        current.line,
                        Finding(
                            current.where + "/parentSpanId",
                            f"the spans' parents form a loop {path}; a span cannot enclose "
                            "itself: correct the parentSpanId of one of them",
                        ),
                    )
                )
                settled.update(seen)
                break
            seen.add(current.span_id)
            chain.append(current)
            current = by_id.get(current.parent_id) if current.parent_id else None
        settled.update(seen)
    return findings


def _place(span: Span, line: int | None) -> str:
    """Where a span is, said from a problem on `line`: its pointer, and its line when another."""
    return span.where if span.line == line else f"{span.where} on line {span.line}"


def field(node, name: str) -> tuple[str, object]:
    """(the key it is written under, its value) of a field named in lowerCamelCase, as
    OTLP/JSON writes it, or in snake_case, as protobuf's own field names are. Null is
    absent, as in protobuf's JSON mapping."""
    if not isinstance(node, dict):
        return name, None
    if node.get(name) is not None:
        return name, node[name]
    snake = _snake(name)
    return snake, node.get(snake)


@functools.cache
def _snake(name: str) -> str:
    return re.sub(r"[A-Z]", lambda m: "_" + m.group(0).lower(), name)


# The OTLP/JSON messages of a trace export and the fields checked in them: another message,
# a list of them ("[Span]"), a list read further by read_spans ("list"), or a scalar kind.
# A field of the wrong JSON type is refused, not skipped, also where the conversion does
# not read it (events, links, status): the export is broken, and its spans may be too.
# Fields not listed are skipped, as OTLP receivers skip fields newer than they are.
MESSAGES = {
    "ResourceSpans": {"resource": "Resource", "scopeSpans": "list", "schemaUrl": "text"},
    "Resource": {"attributes": "[KeyValue]", "droppedAttributesCount": "count"},
    "ScopeSpans": {"scope": "InstrumentationScope", "spans": "list", "schemaUrl": "text"},
    "InstrumentationScope": {"name": "text", "version": "text", "attributes": "[KeyValue]", "droppedAttributesCount": "count"},
    "Span": {
        "traceId": "trace id",
        "spanId": "span id",
        "traceState": "text",
        "parentSpanId": "parent id",
        "flags": "count",
        "name": "text",
        "kind": "span kind",
        "startTimeUnixNano": "time",
        "endTimeUnixNano": "time",
        "attributes": "[KeyValue]",
        "droppedAttributesCount": "count",
        "events": "[Event]",
        "droppedEventsCount": "count",
        "links": "[Link]",
        "droppedLinksCount": "count",
        "status": "Status",
    },
    "Event": {"timeUnixNano": "time", "name": "text", "attributes": "[KeyValue]", "droppedAttributesCount": "count"},
    "Link": {
        "traceId": "trace id",
        "spanId": "span id",
        "traceState": "text",
        "attributes": "[KeyValue]",
        "droppedAttributesCount": "count",
        "flags": "count",
    },
    "Status": {"message": "text", "code": "status code"},
}
REQUIRED = {"Span": ("traceId", "spanId", "startTimeUnixNano", "endTimeUnixNano")}
# What each is, as messages name it: a message is an object of these fields (among others).
OBJECTS = {
    "ResourceSpans": "{resource, scopeSpans}",
    "Resource": "{attributes}",
    "ScopeSpans": "{scope, spans}",
    "InstrumentationScope": "{name, version}",
    "Span": "{traceId, spanId, name, startTimeUnixNano, ...}",
    "Event": "{timeUnixNano, name}",
    "Link": "{traceId, spanId}",
    "Status": "{code, message}",
}
WHAT = {kind: f"an object {fields}" for kind, fields in OBJECTS.items()} | {
    "list": "a list",
    "text": "text",
    "count": "a whole number, 0 or more",
    "span kind": "a number or a name such as SPAN_KIND_INTERNAL",
    "status code": "a number or a name such as STATUS_CODE_OK",
}
ANY_VALUES = ("stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue", "bytesValue")
INT64 = (-(2**63), 2**63 - 1)
_FIX = "correct it, or export the spans with an OTLP JSON exporter"
_INTEGER = re.compile(r"-?[0-9]+")
_DOUBLE = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")


def kind_of(value) -> str:
    """What a value is, for messages: one of the file's, or an attribute's as decoded."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {shown(value)}"
    if isinstance(value, str):
        return f"the text {shown(value)}"
    return {list: "a list", dict: "an object", bytes: "bytes"}.get(type(value), "an object")


def shown(value) -> str:
    """A value as a message quotes it: as JSON writes it, text quoted, a long one cut short
    and a list or an object in short."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[...]" if value else "[]"
    if isinstance(value, dict):
        return "{...}" if value else "{}"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("-" if value < 0 else "") + "Infinity"
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 40 else text[:36] + "..."


def _wrong(path, value, expected: str, findings: list[Finding]) -> None:
    path = list(path)  # a Place, spelt out
    name = (
        "the value" if not path else f"{path[-2]}[{path[-1]}]" if isinstance(path[-1], int) and len(path) > 1 else str(path[-1])
    )
    findings.append(Finding(pointer(path), f"{name} is {kind_of(value)}, where OTLP/JSON has {expected}; {_FIX}"))


def _message(node, kind: str, path: list, findings: list[Finding]) -> dict | None:
    """The fields of an OTLP/JSON message that MESSAGES lists, each decoded under its
    lowerCamelCase name (ids as lower-case hex, times as integers, attributes as a dict);
    a wrong one is a finding and left out, as is a missing one that REQUIRED lists. None
    when the message is no object (a finding); absent or null, it has no fields."""
    if node is None:
        return {}
    if not isinstance(node, dict):
        _wrong(path, node, WHAT[kind], findings)
        return None
    fields = {}
    for name, spec in MESSAGES[kind].items():
        key, value = field(node, name)
        if value is not None:
            decoded = _decode(value, spec, path + [key], findings)
            if decoded is not None:
                fields[name] = decoded
        elif name in REQUIRED.get(kind, ()):
            findings.append(Finding(pointer(path), f"the span has no {name}, which every span needs; {_FIX}"))
    return fields


def _item(node, kind: str, path: list, findings: list[Finding]) -> dict | None:
    """A message in a list, where null is no message but a mistake."""
    if node is None:
        _wrong(path, node, WHAT[kind], findings)
        return None
    return _message(node, kind, path, findings)


def _decode(value, spec: str, path: list, findings: list[Finding]):
    """A field's value as MESSAGES' `spec` says it is, or None and a finding."""
    if spec == "[KeyValue]":
        return _attributes(value, path, findings)
    if spec.startswith("[") or spec == "list":
        if not isinstance(value, list):
            _wrong(path, value, f"a list of objects {OBJECTS[spec[1:-1]]}" if spec != "list" else "a list", findings)
            return None
        if spec != "list":
            for k, item in enumerate(value):
                if _full(findings):
                    break
                _item(item, spec[1:-1], path + [k], findings)
        return value
    if spec in MESSAGES:
        return _message(value, spec, path, findings)
    if spec in ("trace id", "span id"):
        return _identifier(value, 16 if spec == "trace id" else 8, path, findings)
    if spec == "parent id":  # empty for a root span
        return _identifier(value, 8, path, findings) if value != "" else None
    if spec == "time":
        return _nanos(value, path, findings)
    if spec == "count":
        whole = _whole(value)
        if whole is not None and whole >= 0:
            return whole
    elif isinstance(value, str) or (spec != "text" and isinstance(value, int) and not isinstance(value, bool)):
        return value
    _wrong(path, value, WHAT[spec], findings)
    return None


def _whole(value) -> int | None:
    """A whole number as protobuf's JSON mapping writes one, a number or a decimal string; else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and len(value) <= 40 and _INTEGER.fullmatch(value):
        return int(value)
    return None


def _span(raw, path: list, findings: list[Finding]) -> tuple[str, Span] | None:
    """(trace id, span) of a span of the export, or None (and findings) when it is broken."""
    found = len(findings)
    span = _item(raw, "Span", path, findings)
    if span is None or len(findings) > found:
        return None
    if span["endTimeUnixNano"] < span["startTimeUnixNano"]:
        findings.append(Finding(pointer(path + ["endTimeUnixNano"]), "the span ends before it starts; correct the times"))
        return None
    return span["traceId"], Span(
        span["spanId"],
        span.get("parentSpanId"),
        span.get("name", ""),
        span["startTimeUnixNano"],
        span["endTimeUnixNano"],
        span.get("attributes", {}),
        0,
        pointer(path),
        status=span.get("status") or {},
    )


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
    findings.append(
        Finding(
            pointer(path),
            f"{shown(value)} is not a {size}-byte id in hex ({2 * size} digits) or base64; "
            "export the spans with an OTLP JSON exporter",
        )
    )
    return None


def _nanos(value, path: list, findings: list[Finding]) -> int | None:
    """A time in nanoseconds since 1970: OTLP's fixed64, a number or a decimal string."""
    nanos = _whole(value)
    if nanos is not None and 0 <= nanos < 2**64:
        return nanos
    if nanos is not None and nanos > 0 or isinstance(value, str) and value.isascii() and value.isdigit():
        findings.append(
            Finding(
                pointer(path),
                f"{shown(value)} is past the latest time OTLP can hold (2^64 - 1 ns, in 2554); "
                "write the time in nanoseconds since 1970",
            )
        )
    else:
        findings.append(
            Finding(pointer(path), f"{shown(value)} is not a time in nanoseconds; write a whole number, as a string or not")
        )
    return None


def _attributes(items, path: list, findings: list[Finding]) -> dict | None:
    """A list of {key, value} attributes as a dict, each value decoded (any_value) and the
    attributes of the GenAI conventions that the conversion reads checked (CONVENTIONS)."""
    pairs = _key_values(items, path, findings)
    if pairs is None:
        return None
    attributes = {}
    for key, value, here in pairs:
        if _full(findings):
            break
        decoded = _any(value, here, findings)
        if key in CONVENTIONS and decoded is not None:
            decoded = CONVENTIONS[key](key, decoded, here, findings)
        attributes[key] = decoded
    return attributes


def _key_values(items, path, findings: list[Finding]) -> list[tuple[str, object, list]] | None:
    """(key, value as written, the value's path) of each {key, value} of a list: a key is
    text, and given once (OTLP: "attribute keys MUST be unique"). `path`: a list, or a Place."""
    if not isinstance(items, list):
        _wrong(path, items, "a list of attributes {key, value}", findings)
        return None
    pairs, first = [], {}
    for index, item in enumerate(items):
        if _full(findings):
            break
        here = path + [index]
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            findings.append(Finding(pointer(here), "an attribute is {key, value}, its key text; correct it"))
        elif item["key"] in first:
            findings.append(
                Finding(
                    pointer(here + ["key"]),
                    f"attribute '{item['key']}' is given again (first at "
                    f"{pointer(first[item['key']])}); an attribute has one value: keep one of them",
                )
            )
        else:
            first[item["key"]] = here
            pairs.append((item["key"], item.get("value"), here + ["value"]))
    return pairs


def any_value(value):
    """The Python value of an OTLP AnyValue; OtlpProblem when it is none."""
    findings: list[Finding] = []
    decoded = _any(value, [], findings)
    if findings:
        raise OtlpProblem(findings)
    return decoded


def _any(value, path: list, findings: list[Finding]):
    """An AnyValue as Python: text, True/False, an int (int64), a float, a list, a dict, or
    bytes; None when it holds nothing. Anything OTLP/JSON does not allow is a finding that
    names the field (an int past int64, a double that is no number, base64 that is not).
    Arrays and maps nest with a stack of their own: JSON's 1,024 levels hold 340 of them,
    a third of Python's recursion limit's worth of frames per level. Past MOST_PROBLEMS
    findings the rest is not looked at."""
    decoded = [None]
    waiting = [(value, Place.of(path), decoded, 0)]
    while waiting and not _full(findings):
        node, here, into, slot = waiting.pop()
        into[slot] = _one_value(node, here, findings, waiting)
    return decoded[0]


class Place:
    """Where a value is in the export: the place it is in and its key. An AnyValue's
    members each link to their array's or map's place instead of copying its path, which
    made each member cost the depth it is at (320,000 members 300 levels down: 2.4 GB);
    a place is spelt out (iterated, as a pointer does) only for a finding."""

    __slots__ = ("key", "parent")

    def __init__(self, parent: Place | None, key):  # None: the start
        self.parent, self.key = parent, key

    @classmethod
    def of(cls, path) -> Place:
        place = cls(None, _START)
        for key in path:
            place = cls(place, key)
        return place

    def __add__(self, keys: list) -> Place:
        place = self
        for key in keys:
            place = Place(place, key)
        return place

    def __iter__(self):
        keys, place = [], self
        while place.key is not _START:
            keys.append(place.key)
            place = place.parent
        return reversed(keys)


_START = object()  # the key of the place a path starts from, which has none


def _full(findings: list[Finding]) -> bool:
    """Whether one past the MOST_PROBLEMS shown was found: the rest is not looked for."""
    return len(findings) > MOST_PROBLEMS


_ANY_KEYS = frozenset(ANY_VALUES) | {_snake(name) for name in ANY_VALUES}


def _one_value(value, path: list, findings: list[Finding], waiting: list):
    """The value of one AnyValue; an array's or map's members are put on `waiting`, each
    with the place in the returned list or dict where its value goes."""
    if value is None:
        return None
    if not isinstance(value, dict):
        _wrong(path, value, 'an AnyValue such as {"stringValue": "..."}', findings)
        return None
    held = []
    for name in ANY_VALUES:
        key, found = field(value, name)
        if found is not None:
            held.append((name, key, found))
    for key in value:
        if key not in _ANY_KEYS and not _full(findings):
            findings.append(
                Finding(
                    pointer(path + [key]),
                    f"'{key}' is no field of an AnyValue; " + suggest(key, ANY_VALUES, "write one of " + ", ".join(ANY_VALUES)),
                )
            )
    if len(held) > 1:
        findings.append(
            Finding(
                pointer(path),
                f"the value holds {' and '.join(key for _, key, _ in held)}; an AnyValue holds one of them: keep one",
            )
        )
    if len(held) != 1:
        return None
    name, key, found = held[0]
    here = path + [key]
    if name == "stringValue" and isinstance(found, str) or name == "boolValue" and isinstance(found, bool):
        return found
    if name == "intValue":
        whole = _whole(found)
        if whole is not None and INT64[0] <= whole <= INT64[1]:
            return whole
        findings.append(
            Finding(
                pointer(here),
                f"{shown(found)} is not a 64-bit integer; write a whole number from {INT64[0]} to {INT64[1]}, as a string or not",
            )
        )
        return None
    if name == "doubleValue":
        if isinstance(found, (int, float)) and not isinstance(found, bool):
            return float(found)
        if isinstance(found, str) and (found in ("NaN", "Infinity", "-Infinity") or _DOUBLE.fullmatch(found)):
            return float(found)
        findings.append(
            Finding(
                pointer(here),
                f"{shown(found)} is not a number; write a number or, as protobuf's JSON "
                'mapping does, "NaN", "Infinity" or "-Infinity"',
            )
        )
        return None
    if name == "bytesValue" and isinstance(found, str):
        return _bytes(found, here, findings)
    if name in ("arrayValue", "kvlistValue") and isinstance(found, dict):
        key, values = field(found, "values")
        if name == "kvlistValue":
            pairs = _key_values(values if values is not None else [], here + [key], findings) or []
            members = {member: None for member, _, _ in pairs}
            waiting.extend((raw, at, members, member) for member, raw, at in reversed(pairs))
            return members
        if not isinstance(values, list | None):
            _wrong(here + [key], values, "a list of AnyValues", findings)
            return None
        items = [None] * len(values or [])
        waiting.extend((item, here + [key, k], items, k) for k, item in reversed(list(enumerate(values or []))))
        return items
    expected = {"stringValue": "text", "boolValue": "true or false", "bytesValue": "base64 text"}.get(name, "an object {values}")
    _wrong(here, found, expected, findings)
    return None


def _bytes(text: str, path: list, findings: list[Finding]) -> bytes | None:
    """bytesValue: base64, standard or URL-safe, padded or not (protobuf's JSON mapping)."""
    altchars = b"-_" if "-" in text or "_" in text else None
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), altchars=altchars, validate=True)
    except (binascii.Error, ValueError):
        findings.append(Finding(pointer(path), f"{shown(text)} is not base64; write the bytes in base64"))
        return None


def _text(key: str, value, path: list, findings: list[Finding]):
    if isinstance(value, str):
        return value
    findings.append(
        Finding(pointer(path), f"{key} is {kind_of(value)}; the GenAI conventions make it text: record it as a stringValue")
    )
    return None


def _tokens(key: str, value, path: list, findings: list[Finding]):
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= INT64[1] and float(value).is_integer():
        return int(value)
    findings.append(
        Finding(
            pointer(path),
            f"{key} is {kind_of(value)}, which counts no tokens; record a whole number of tokens, 0 or more, as an intValue",
        )
    )
    return None


# The attributes the conversion reads, each as its GenAI convention says it is.
CONVENTIONS = dict.fromkeys(
    (
        OPERATION,
        "gen_ai.agent.name",
        "gen_ai.agent.id",
        "gen_ai.tool.name",
        "gen_ai.conversation.id",
        "service.name",
        "gen_ai.workflow.name",
        "gen_ai.transfer.target.name",
        "gen_ai.handoff.to_agent",
        "gen_ai.guardrail.name",
        "openinference.span.kind",
        "agent.name",
        "tool.name",
    ),
    _text,
)
CONVENTIONS |= dict.fromkeys(
    (
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.output_tokens",
        "llm.token_count.prompt",
        "llm.token_count.completion",
        "llm.token_count.total",
    ),
    _tokens,
)
