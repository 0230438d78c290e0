"""The site's trace gallery: each trace of the pool's traces folder (registry
`traces.folder`) validated, measured and drawn at build time; and the schema page, read
from the schema file itself so that the page and the format cannot drift apart."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

from paperpool.registry import Registry
from paperpool.sitegen.paths import unique_slugs

from .. import limits, mapping, metrics, section, timeline
from ..loading import parse_trace, read_bytes
from ..schema import printable
from ..validation import require_valid
from . import paths

FOLDER = paths.TRACE_FILES  # in the site: the drawings and the JSON files
# A trace's site name is at most this long: with "-light.svg" it stays far below the 255
# bytes a file name may have, whatever the length of the pool's file name.
MAX_SITE_NAME = 80
SCHEMA_FILE = "orchestration-trace.v1.schema.json"
# (label, metrics key) shown in a trace's table; the JSON file has every measure. {unit}
# is what the trace's time_unit says its times count.
SHOWN = [
    ("Events", "events"),
    ("Agents", "agents"),
    ("Spawns", "spawns"),
    ("Largest fan-out", "max_fanout"),
    ("Spawn depth", "depth"),
    ("Messages", "messages"),
    ("Tool calls", "tool_calls"),
    ("Aggregations", "aggregations"),
    ("Critical path ({unit})", "critical_path_s"),
    ("Total work ({unit})", "total_work_s"),
    ("Parallelism speedup", "parallelism_speedup"),
    ("Protocol overhead (messages per tool call)", "protocol_overhead"),
]
UNITS = {"seconds": "s", "steps": "steps", None: "time unit not declared"}


@dataclass
class TraceCard:
    file: str  # the trace file's path in the pool, as messages show it: text, never part of a link
    site_name: str  # its section anchor and file names in the site (see site_names)
    name: str  # what the page calls it: its title, or a trace_id a person can read, or its file's name
    trace_id: str
    topology: str
    description: str
    rows: list[tuple[str, str]]  # (label, value) of the SHOWN measures
    measures: dict[str, str]  # the same by metrics key
    stopped: str
    subdecisions: list[tuple[str, str, int]]  # (id, label, count)
    rewards: list[tuple[str, str]]  # (unit, channels and values)
    failure: str  # the failure labelled by people (x_failure) in words, which the drawing marks; "" without one
    svg: str  # drawn in currentColor: each variant below sets the colour for its theme
    json: str

    @property
    def site_files(self) -> dict[str, str]:
        return files_of(self.site_name)

    @property
    def svg_light(self) -> str:
        return _coloured(self.svg, "#1f1f1f")

    @property
    def svg_dark(self) -> str:
        return _coloured(self.svg, "#e2e2e2")


def gallery(registry: Registry) -> list[TraceCard]:
    decisions = mapping.for_registry(registry)
    bounds = limits.for_registry(registry)
    cards = []
    found = section.trace_files(registry)
    for path, site_name in zip(found, site_names([path.stem for path in found]), strict=True):
        shown = path.relative_to(registry.root).as_posix()
        checked = require_valid(path, shown, bounds)  # an invalid trace stops the build, its problems listed
        trace = parse_trace(read_bytes(path, bounds.trace_bytes))  # valid: its keys were found given once
        result = metrics.compute(checked.index, checked.top, decisions, len(checked.warnings))
        name = timeline.readable_name(trace, path.stem)
        unit = UNITS.get(result["time_unit"], UNITS[None])
        cards.append(
            TraceCard(
                printable(shown),
                site_name,
                name,
                str(trace.get("trace_id", path.stem)),
                str(trace.get("topology") or ""),
                str(trace.get("description") or ""),
                [(label.format(unit=unit), _shown(result[key])) for label, key in SHOWN],
                {key: _shown(result[key]) for _, key in SHOWN},
                f"yes, at t = {_shown(result['stop_t'])}" if result["stopped"] else "no stop event",
                [(decision, decisions.label(decision), count) for decision, count in result["subdecisions"].items()],
                [
                    (unit, ", ".join(f"{channel} {_shown(value)}" for channel, value in channels.items()))
                    for unit, channels in _by_unit(result["rewards"]).items()
                ],
                _failure(trace),
                timeline.draw(trace, name),
                path.read_text(encoding="utf-8"),
            )
        )
    return cards


def site_names(stems: list[str]) -> list[str]:
    """Each trace's name in the site, from its file's stem: a slug (a-z, 0-9 and -), so
    that no file name can bring markup, a path (`..`, a slash of any script) or a link
    target into a page; shortened; and numbered when two stems make the same slug (Plan
    and plan, a.b and a-b), as sitegen.paths.ValuePaths numbers an axis's values. No two traces
    share a file, and none takes the schema's, whose name has dots."""
    return unique_slugs(stems, MAX_SITE_NAME)


def files_of(site_name: str) -> dict[str, str]:
    """A trace's files in the site, by what they hold: light, dark (an <img> does not
    inherit the page's colour, so each theme gets its own drawing) and json."""
    return {
        kind: f"{FOLDER}/{site_name}{suffix}"
        for kind, suffix in (("light", "-light.svg"), ("dark", "-dark.svg"), ("json", ".json"))
    }


def files(cards: list[TraceCard]) -> dict[str, str]:
    found = {}
    for card in cards:
        where = files_of(card.site_name)
        found |= {where["light"]: card.svg_light, where["dark"]: card.svg_dark, where["json"]: card.json}
    return found | {f"{FOLDER}/{SCHEMA_FILE}": _schema_text()}


def schema_outline() -> dict:
    """What the schema page shows: the top-level fields, event and edge types, and each
    definition's properties, with their descriptions, as the schema file states them."""
    schema = json.loads(_schema_text())
    definitions = schema.get("$defs", {})
    return {
        "id": schema.get("$id", ""),
        "title": schema.get("title", ""),
        "description": schema.get("description", ""),
        "sections": [
            (name, body.get("description", ""), _properties(body))
            for name, body in [("trace", schema)] + sorted(definitions.items())
            if _properties(body)
        ],
        "file": f"{FOLDER}/{SCHEMA_FILE}",
    }


def _properties(body: dict) -> list[tuple[str, str, str, bool]]:
    required = set(body.get("required", []))
    return [
        (name, _type(spec), spec.get("description", ""), name in required)
        for name, spec in (body.get("properties") or {}).items()
    ]


def _type(spec: dict) -> str:
    if "enum" in spec:
        return "one of " + ", ".join(str(value) for value in spec["enum"])
    if "$ref" in spec:
        return spec["$ref"].rsplit("/", 1)[-1]
    kind = spec.get("type", "")
    if kind == "array" and isinstance(spec.get("items"), dict):
        return f"list of {_type(spec['items'])}"
    return " or ".join(kind) if isinstance(kind, list) else str(kind or "any")


def _coloured(svg: str, colour: str) -> str:
    return svg.replace("<svg ", f'<svg color="{colour}" ', 1)


def _schema_text() -> str:
    return resources.files("paperpool.traces").joinpath("schema", SCHEMA_FILE).read_text(encoding="utf-8")


def _failure(trace: dict) -> str:
    failure = timeline.labelled_failure(trace)
    return timeline.failure_sentence(failure) if failure else ""


def _by_unit(rewards) -> dict:
    return rewards.get("by_unit", {}) if isinstance(rewards, dict) else {}


def _shown(value) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)
