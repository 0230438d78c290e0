"""The `openinference` format of `paperpool trace import`: OpenTelemetry spans following
OpenInference's conventions (Arize Phoenix; the OpenInference instrumentations of the
OpenAI Agents SDK, LangChain and LangGraph, LlamaIndex, smolagents, ...), exported as
OTLP/JSON, one document or JSON Lines, read exactly as the `otlp` format reads them.

The attribute openinference.span.kind says what a span is; the orchestration is then
built as for GenAI spans (otlp_events.Converter):
- AGENT (named by agent.name, else graph.node.id, else the span's name): one agent
  instance per span; a CHAIN span that is a LangGraph node (its metadata's langgraph_node
  is its name) is one too, a node being an actor of the graph;
- LLM and EMBEDDING: model calls, their tokens llm.token_count.prompt + completion (else
  llm.token_count.total);
- TOOL, RETRIEVER and RERANKER: tool calls (tool.name, else the span's name), except a
  handoff: the OpenAI Agents instrumentation's "handoff to AGENT" spans, and the transfer
  tools otlp_events names (transfer_to_agent and handoff_to_agent with the agent's name in
  the arguments, input.value; transfer_to_AGENT);
- GUARDRAIL: a safety_event; a span whose status is an error: a safety_event too;
- CHAIN and the rest only nest; a root that encloses the run is its orchestrator.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from . import otlp_format
from .importing import Imported, ImportOptions, TraceFormat
from .otlp import Span
from .otlp_events import (
    AGENT,
    GUARDRAIL,
    HANDOFF,
    MODEL,
    NESTS,
    TOOL,
    Convention,
    Step,
    genai_step,
    json_in_text,
    transfer_target,
)

KIND = "openinference.span.kind"
EXPECTS = "OpenTelemetry spans following OpenInference's conventions (openinference.span.kind AGENT, LLM, TOOL, CHAIN, ...)"
HANDOFF_NAME = "handoff to "  # the OpenAI Agents instrumentation names a handoff's span so
TOOL_KINDS = ("TOOL", "RETRIEVER", "RERANKER")
MODEL_KINDS = ("LLM", "EMBEDDING")


def step(span: Span) -> Step:
    attributes = span.attributes
    kind = str(attributes.get(KIND) or "").upper()
    if kind == "AGENT":
        return Step(AGENT, str(attributes.get("agent.name") or attributes.get("graph.node.id") or span.name))
    if kind == "CHAIN" and span.name and _langgraph_node(attributes) == span.name:
        return Step(AGENT, span.name)
    if kind in MODEL_KINDS:
        counted = [attributes.get(key) for key in ("llm.token_count.prompt", "llm.token_count.completion")]
        tokens = (
            sum(n for n in counted if isinstance(n, int))
            if any(isinstance(n, int) for n in counted)
            else int(attributes.get("llm.token_count.total") or 0)
        )
        return Step(MODEL, tokens=tokens)
    if kind in TOOL_KINDS:
        tool = str(attributes.get("tool.name") or span.name)
        if span.name.startswith(HANDOFF_NAME) and len(span.name) > len(HANDOFF_NAME):
            return Step(HANDOFF, tool, target=span.name[len(HANDOFF_NAME) :])
        target = transfer_target(tool, None, attributes.get("input.value"))
        return Step(HANDOFF, tool, target=target) if target else Step(TOOL, tool)
    if kind == "GUARDRAIL":
        return Step(GUARDRAIL, span.name)
    return Step(NESTS)


def _langgraph_node(attributes: dict) -> str | None:
    """The LangGraph node a span runs in, from the metadata LangChain's instrumentation
    records (a JSON object as text); None when there is none."""
    metadata = attributes.get("metadata")
    if not isinstance(metadata, str) or "langgraph_node" not in metadata:
        return None
    parsed = json_in_text(metadata)
    node = parsed.get("langgraph_node") if isinstance(parsed, dict) else None
    return node if isinstance(node, str) else None


CONVENTION = Convention("OpenInference", step)


# How far detection reads an export for spans: the first span to end (a model call's,
# with its prompt) may run to megabytes before any attribute that says what it is.
SCANNED_BYTES = 8 * 1024 * 1024
SCANNED_SPANS = 1_000
_SPANS = re.compile(r'"spans"\s*:\s*\[')  # a key: inside a JSON string its quotes would be escaped


def detect(path: Path, head: str) -> bool:
    """OTLP/JSON whose first spans (SCANNED_SPANS) carry OpenInference's attributes, read
    from the spans, never from the instrumentation scope's name, which collectors and
    re-exporters rewrite. Spans that carry gen_ai.operation.name too (one framework's GenAI
    spans beside another instrumentation's OpenInference ones, or spans mapped from one
    convention to the other) are claimed when OpenInference's reading finds more agents in
    them than the GenAI conventions' does, then more spans with a role (a model call, a
    tool call, ...): the agents are what the orchestration is made of. A tie is left to
    otlp, the OpenTelemetry conventions."""
    from .otlp import OPERATION

    if not otlp_format.is_export(head):
        return False
    raw = first_spans(path)
    keys = [_attribute_keys(span) for span in raw]
    if not any(KIND in found for found in keys):
        return False
    if not any(OPERATION in found for found in keys):
        return True
    spans = _read(raw)  # as the importers read them: only when both conventions are there (1,000 spans: 0.3 s)

    def found(classify) -> tuple[int, int]:
        kinds = [classify(span).kind for span in spans]
        return kinds.count(AGENT), len(kinds) - kinds.count(NESTS)

    return found(step) > found(genai_step)


def first_spans(path: Path) -> list:
    """The spans, as parsed JSON, that begin within the first SCANNED_BYTES of an OTLP/JSON
    file (one document or JSON Lines), at most SCANNED_SPANS; a span cut off by the end of
    what was read is left out. Each part of the text is decoded at most once: a `"spans"`
    key inside a span already decoded, or inside text a failed decode went through, is
    passed over (nested keys around one long value were decoded once per key: 7 MB took
    3.3 GB), and a list nested past what the decoder follows ends the scan."""
    from .loading import TraceUnreadable, read_start

    try:
        text = read_start(path, SCANNED_BYTES).decode("utf-8", "replace")
    except TraceUnreadable:
        return []
    decoder = json.JSONDecoder(parse_int=_number_as_orjson_reads_it)
    raw: list = []
    reached = 0  # the furthest any decode has gone
    for match in _SPANS.finditer(text):
        if len(raw) >= SCANNED_SPANS:
            break
        if match.start() < reached:
            continue
        at = match.end()
        while len(raw) < SCANNED_SPANS:
            try:
                span, at = decoder.raw_decode(text, _past_space(text, at))
            except RecursionError:  # no span is nested that deep
                return raw
            except json.JSONDecodeError as exc:  # the list's end, or the end of what was read
                reached = max(reached, exc.pos)
                break
            raw.append(span)
            reached = at
            at = _past_space(text, at)
            if not text.startswith(",", at):
                break
            at += 1
    return raw


def _number_as_orjson_reads_it(text: str) -> int | float:
    """A whole number as the importers' reader (orjson) gives it: an int within 64 bits, a
    double past them. Python's json would make any int (a 400-digit one the OTLP reader
    cannot take as a double), and refuses one of more than 4,300 digits."""
    if len(text) <= 20:
        value = int(text)
        if -(2**63) <= value < 2**64:
            return value
    return float(text)


def _past_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _attribute_keys(span) -> set[str]:
    attributes = span.get("attributes") if isinstance(span, dict) else None
    listed = attributes if isinstance(attributes, list) else []
    return {item["key"] for item in listed if isinstance(item, dict) and isinstance(item.get("key"), str)}


def _read(raw: list) -> list[Span]:
    """The spans OTLP/JSON allows among `raw`, each read as the importers read it."""
    from .otlp import OtlpProblem, read_traces

    spans = []
    for span in raw:
        try:
            read = read_traces([(None, {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})])
        except OtlpProblem:
            continue
        spans += [found for listed, _ in read.values() for found in listed]
    return spans


def convert(paths: list[Path], options: ImportOptions) -> list[Imported]:
    return otlp_format.convert(paths, options, CONVENTION)


def describe(paths: list[Path]) -> str:
    """The spans an input holds, by name, and their span kinds."""
    from paperpool.files.problems import PaperpoolError

    from .otlp import OtlpProblem, read_traces

    try:
        spans = [span for path in paths for found, _ in read_traces(otlp_format.documents(path)).values() for span in found]
    except (OtlpProblem, PaperpoolError):
        return ""
    names = Counter(span.name for span in spans)
    kinds = sorted({str(span.attributes[KIND]) for span in spans if KIND in span.attributes})
    shown = ", ".join(f"{name} ({n})" for name, n in names.most_common(6))
    said = f"; {KIND} values: {', '.join(kinds)}" if kinds else f"; no span has {KIND}"
    hint = (
        " (spans with gen_ai.operation.name follow the GenAI conventions: --from otlp)"
        if any("gen_ai.operation.name" in span.attributes for span in spans)
        else ""
    )
    return f"{len(spans)} spans named {shown}{said}{hint}"


FORMAT = TraceFormat(
    "openinference", "OTLP/JSON export of OpenInference spans (one document, or JSON Lines)", EXPECTS, detect, convert, describe
)
