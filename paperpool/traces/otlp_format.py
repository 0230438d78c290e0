"""The `otlp` format of `paperpool trace import`: OTLP/JSON exports of OpenTelemetry GenAI
spans, one document or one per line (JSON Lines, the OpenTelemetry file exporter's
format), each trace of the export converted to its own orchestration trace."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from pathlib import Path

from paperpool.files.problems import PaperpoolError

from .importing import Imported, ImportOptions, TraceFormat, Unreadable, refuse_too_many, registered
from .otlp import field
from .schema import Finding

EXPECTS = (
    "OpenTelemetry spans following the GenAI semantic conventions (gen_ai.operation.name create_agent, "
    "invoke_agent, execute_tool, chat)"
)


def detect(path: Path, head: str) -> bool:
    """OTLP/JSON, unless the openinference format claims it (its spans carry OpenInference's
    attributes: openinference.detect). That format is asked through the registry, as
    `trace import` asks it: the two modules never import each other."""
    if not is_export(head):
        return False
    openinference = registered("openinference")
    return openinference is None or not openinference.detect(path, head)


def is_export(head: str) -> bool:
    """Whether a file's first 64 KiB are those of an OTLP/JSON export."""
    return head.lstrip().startswith("{") and ("resourceSpans" in head or "resource_spans" in head)


def documents(path: Path) -> list[tuple[int | None, object]]:
    """The OTLP/JSON documents of a file, each with its line: the whole file (None), or one
    per non-empty line (JSON Lines, recognised when the whole is no JSON but its first line is)."""
    from .duplicates import exact
    from .loading import TraceUnreadable, parse_trace, read_bytes
    from .otlp import OtlpProblem

    def parsed_once(data: bytes):
        """JSON in which no object gives a key twice (readers differ on which they keep)."""
        document = parse_trace(data)
        repeated = exact(data, document)
        if repeated:
            raise OtlpProblem(repeated)
        return document

    try:
        data = read_bytes(path)
        return [(None, parsed_once(data))]
    except TraceUnreadable as whole:
        if "data" not in locals():
            raise OtlpProblem(whole.findings) from None
        lines = _lines(data)  # one at a time: a file of 30 million short lines was split whole, 3.5 GB for 60 MB
        first = next(lines, None)
        second = next(lines, None)
        if first is None or second is None or not _is_json(first[1]):
            raise OtlpProblem(whole.findings) from None
        parsed = []
        for number, line in itertools.chain((first, second), lines):  # the first bad line stops the reading
            try:
                document = parsed_once(line)
            except (TraceUnreadable, OtlpProblem) as exc:
                raise OtlpProblem([_in_a_line(f) for f in exc.findings], [number] * len(exc.findings)) from None
            if not isinstance(field(document, "resourceSpans")[1], list):  # lowerCamelCase or protobuf's snake_case
                # each line of an OTLP/JSON Lines file is an export request: what is not one stops here, not
                # after every line of the file is read and kept
                raise OtlpProblem([Finding("", _NOT_A_REQUEST)], [number]) from None
            parsed.append((number, document))
        return parsed


_NOT_A_REQUEST = (
    "the line is no OTLP/JSON export request (an object with resourceSpans, or resource_spans, a list); "
    "an OTLP/JSON Lines file holds one on each line"
)


def _lines(data: bytes):
    """(line number, bytes) of each line that is not blank, found one at a time."""
    start, number = 0, 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        number += 1
        line = data[start:end]
        if line.strip():
            yield number, line
        start = end + 1


def _is_json(line: bytes) -> bool:
    from .loading import TraceUnreadable, parse_trace

    try:
        parse_trace(line)
    except TraceUnreadable:
        return False
    return True


def _in_a_line(finding: Finding) -> Finding:
    """A problem the loader found in a line of JSON Lines, where its "line 1" is the line's own."""
    return Finding(finding.pointer, re.sub(r"\bline 1, column", "column", finding.message))


def convert(paths: list[Path], options: ImportOptions, convention=None) -> list[Imported]:
    """Every trace of the inputs (or the one --trace-id names), read by a convention of
    otlp_events (the GenAI semantic conventions unless another format passes its own)."""
    from .otlp import OtlpProblem, read_traces
    from .otlp_events import NOT_CONVERTED, to_trace
    from .validation import InvalidTrace, check_trace

    imported = []
    for path in paths:
        try:
            traces = read_traces(documents(path))
        except OtlpProblem as exc:
            raise Unreadable.capped(exc.said(str(path)), str(path)) from None
        chosen = [options.trace_id] if options.trace_id else sorted(traces, key=lambda t: min(s.start for s in traces[t][0]))
        refuse_too_many(len(imported) + len(chosen), str(path))  # before converting them
        for trace_id in chosen:
            if trace_id not in traces:
                raise PaperpoolError(f"{path}: no trace {trace_id} in the export; it holds {', '.join(sorted(traces))}")
            spans, resource = traces[trace_id]
            trace = to_trace(trace_id, spans, resource, options.topology, convention)
            checked = check_trace(trace)
            if not checked.valid:
                raise InvalidTrace(
                    f"the trace converted from {path}",
                    checked.findings,
                    NOT_CONVERTED,
                )
            imported.append(Imported(_root_name(spans) or trace_id, trace, path, trace_id))
    return imported


def describe(paths: list[Path]) -> str:
    """The spans an input holds, by name, for the message when they give no events."""
    from .otlp import OPERATION, OtlpProblem, read_traces

    try:
        spans = [span for path in paths for found, _ in read_traces(documents(path)).values() for span in found]
    except (OtlpProblem, PaperpoolError):
        return ""
    names = Counter(span.name for span in spans)
    operations = sorted({str(span.attributes[OPERATION]) for span in spans if OPERATION in span.attributes})
    shown = ", ".join(f"{name} ({n})" for name, n in names.most_common(6))
    said = f"; gen_ai.operation.name values: {', '.join(operations)}" if operations else "; no span has gen_ai.operation.name"
    hint = (
        " (spans with openinference.span.kind follow OpenInference's conventions: --from openinference)"
        if any("openinference.span.kind" in span.attributes for span in spans)
        else ""
    )
    return f"{len(spans)} spans named {shown}{said}{hint}"


def _root_name(spans) -> str:
    ids = {span.span_id for span in spans}
    roots = sorted((span for span in spans if span.parent_id not in ids), key=lambda span: (span.start, span.order))
    return roots[0].name if roots else ""


FORMAT = TraceFormat(
    "otlp", "OTLP/JSON export of OpenTelemetry GenAI spans (one document, or JSON Lines)", EXPECTS, detect, convert, describe
)
