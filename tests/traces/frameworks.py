"""What the framework tests share: a real OpenTelemetry SDK whose spans go, as each one
ends, to the SDK's OTLP JSON file exporter (one OTLP/JSON document per line, the file
format the OpenTelemetry collector's file exporter also writes), then `paperpool trace
import` on that file and `paperpool trace metrics` on what it wrote."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor


class Recording:
    """A tracer provider of its own (never the global one), writing spans to `path`."""

    def __init__(self, path: Path, service: str):
        self.path = path
        self.exporter = FileSpanExporter(path=str(path))
        self.provider = TracerProvider(resource=Resource({"service.name": service}))
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    def close(self) -> None:
        self.provider.shutdown()


def imported(run, recording: Recording, fmt: str) -> tuple[dict, dict]:
    """(the trace, its metrics) that `paperpool trace import --from FMT` makes of the recording."""
    folder = recording.path.parent
    result = run("trace", "import", "--from", fmt, recording.path.name, "-o", "run.json", cwd=folder)
    assert result.exit_code == 0, result.output
    return measured(run, folder / "run.json")


def imported_each(run, recording: Recording, fmt: str) -> list[tuple[dict, dict]]:
    """(trace, metrics) of every trace of a recording that holds several, in the order of
    their first spans: `paperpool trace import -o FOLDER` writes one file each."""
    folder = recording.path.parent
    (folder / "runs").mkdir()
    result = run("trace", "import", "--from", fmt, recording.path.name, "-o", "runs", "--name", "{index}", cwd=folder)
    assert result.exit_code == 0, result.output
    return [measured(run, path) for path in sorted((folder / "runs").glob("*.json"), key=lambda p: int(p.stem))]


def measured(run, path: Path) -> tuple[dict, dict]:
    """(the trace in `path`, its metrics), once `paperpool trace validate` passes it."""
    assert run("trace", "validate", path.name, cwd=path.parent).exit_code == 0
    metrics = run("trace", "metrics", path.name, "--format", "json", cwd=path.parent)
    assert metrics.exit_code == 0, metrics.output
    return json.loads(path.read_text(encoding="utf-8")), json.loads(metrics.output)


def orchestration(trace: dict, metrics: dict) -> dict:
    """What a framework test checks against its program, independent of timing: who acts
    (and in which role), who starts whom, the delegations, the stop and the tokens."""
    events = trace["events"]
    return {
        "agents": sorted(metrics["agent_share"]),
        "roles": dict(sorted(Counter(e["role"] for e in events if e["type"] in ("return", "stop") and "role" in e).items())),
        "spawns": sorted((e["agent"], e["to"]) for e in events if e["type"] == "spawn" and "decision" not in e),
        "delegations": sorted((e["agent"], e["type"], e["to"]) for e in events if e.get("decision") == "O2"),
        "max_fanout": metrics["max_fanout"],
        "stops": [(e["agent"], e["reason"]) for e in events if e["type"] == "stop"],
        "tool_calls": sorted(Counter(e["tool"] for e in events if e["type"] == "tool_call").items()),
        "safety_events": sorted((e["agent"], e["reason"]) for e in events if e["type"] == "safety_event"),
        "tokens": metrics["costs"]["tokens"],
        "subdecisions": metrics["subdecisions"],
    }


def rewritten(recording: Recording, name: str, scope: str | None = None, change=None) -> Path:
    """A copy of the recording, as a collector or re-exporter passes it on: every
    instrumentation scope renamed `scope`, every span given to `change` (which edits it
    in place); beside the recording, named `name`."""
    lines = []
    for line in recording.path.read_text(encoding="utf-8").splitlines():
        document = json.loads(line)
        for resource in document["resourceSpans"]:
            for scoped in resource["scopeSpans"]:
                if scope is not None:
                    scoped["scope"] = {"name": scope}
                for span in scoped["spans"]:
                    if change is not None:
                        change(span)
        lines.append(json.dumps(document))
    path = recording.path.parent / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def recognised(run, path: Path, fmt: str) -> str:
    """The trace `paperpool trace import` makes of `path` without --from, once it is the
    one --from FMT makes: the format was recognised by the spans alone."""
    found = run("trace", "import", path.name, "-o", "recognised.json", cwd=path.parent)
    assert found.exit_code == 0, found.output
    named = run("trace", "import", "--from", fmt, path.name, "-o", "named.json", cwd=path.parent)
    assert named.exit_code == 0, named.output
    made = (path.parent / "recognised.json").read_text(encoding="utf-8")
    assert made == (path.parent / "named.json").read_text(encoding="utf-8")
    (path.parent / "recognised.json").unlink()
    (path.parent / "named.json").unlink()
    return made


def attribute(span: dict, key: str, value: str) -> None:
    """Give a span of OTLP/JSON one more string attribute."""
    span.setdefault("attributes", []).append({"key": key, "value": {"stringValue": value}})
