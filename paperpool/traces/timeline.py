"""A trace drawn as a timeline, for the site's gallery: one lane per agent along time, its
events as marks on it, arrows for spawns (spawner to new agent) and returns (agent to
receiver), and a failure labelled by people (`x_failure`, as the who-and-when import keeps
Who&When's labels) ringed on its agent's lane, a line across the lanes at its time.
Hand-written SVG, the same bytes for the same trace: text, axes and arrows
are drawn in currentColor, so they follow the page's light or dark theme, and the marks
use mid-tone fills that read on both. Every piece of text from the trace is escaped.

Time runs from 0, the start of the run (a trace's times count from there), however late
its first event comes; the axis names the trace's time_unit. The drawing is titled with
the trace's readable name (readable_name).
"""

from __future__ import annotations

import hashlib
import math
import re
from html import escape as _escape

import numpy as np

from paperpool.files.problems import NAME_SHOWN, PaperpoolError, plural, shown_name
from paperpool.rendering.markdown import visible

from . import measures
from .schema import printable
from .validation import check_trace

WIDTH, LABELS, RIGHT, TOP, LANE, AXIS = 760, 150, 20, 46, 26, 34
MAX_LANES = 40  # more agents than this are summed up in a note, not drawn
MAX_MARKS = 3_000  # marks (events of a type on one pixel of a lane), and arrows, drawn at most
# Mid-tone fills (readable on white and on near-black) and a shape for each event type.
MARKS = {
    "orchestrator_decision": ("#4c78a8", "diamond"),
    "spawn": ("#54a24b", "triangle"),
    "despawn": ("#9d755d", "triangle"),
    "message": ("#72b7b2", "circle"),
    "tool_call": ("#f58518", "circle"),
    "tool_result": ("#eeca3b", "circle"),
    "return": ("#b279a2", "circle"),
    "aggregate": ("#4c78a8", "square"),
    "human_intervention": ("#ff9da6", "diamond"),
    "safety_event": ("#e45756", "diamond"),
    "stop": ("#e45756", "square"),
}
FAILURE = "#e45756"  # the ring and line of a labelled failure


def escape(text: str) -> str:
    """Text from the trace, inert in SVG, without the bidirectional controls that would
    reorder a label on screen, and with other control characters shown as messages show
    them (\\x1b): XML does not allow them, and one would leave the drawing unreadable."""
    return _escape(printable(visible(text)))


# A trace id that says nothing to a reader: a hex code (OpenTelemetry's 32 digits) or a UUID.
OPAQUE_ID = re.compile(r"[0-9a-fA-F]{16,}|[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")


def readable_name(trace: dict, fallback: str) -> str:
    """What a person calls the trace: its `title`, else its trace_id unless that is an
    opaque code, else `fallback` (the gallery gives the trace's file name)."""
    title, trace_id = trace.get("title"), trace.get("trace_id")
    if isinstance(title, str) and title.strip():
        return title
    if isinstance(trace_id, str) and trace_id.strip() and not OPAQUE_ID.fullmatch(trace_id.strip()):
        return trace_id
    return fallback


def draw(trace: dict, name: str | None = None) -> str:
    """The timeline of a valid trace as an SVG document, titled `name` (by default its
    readable name, else its trace_id)."""
    checked = check_trace(trace)
    if not checked.valid:
        raise PaperpoolError(
            f"trace {trace.get('trace_id')!r} is not valid ({plural(len(checked.findings), 'problem')}); "
            "validate it before drawing it"
        )
    ix = checked.index
    m = measures.of_index(ix)
    names = [ix.agent_names[code] for code in m.lanes.name.tolist()]
    starts = dict(zip(names, m.lanes.start.tolist(), strict=True))
    ends = dict(zip(names, m.lanes.end.tolist(), strict=True))
    actors = actor_names(m, ix.agent_names)
    shown = names[:MAX_LANES]
    lane_of = {name: position for position, name in enumerate(shown)}
    t0, t1 = 0.0, (float(np.nanmax(ix.t)) if ix.n else 1.0)  # from the start of the run
    span = (t1 - t0) or 1.0
    plot = WIDTH - LABELS - RIGHT

    def x(t: float) -> float:
        return round(LABELS + (t - t0) / span * plot, 1)

    def y(name: str) -> float:
        return TOP + lane_of[name] * LANE + LANE / 2

    # ids unique to the trace: a gallery page holds many drawings, and ids are page-wide
    key = "tl-" + hashlib.sha1(str(trace.get("trace_id", "")).encode("utf-8")).hexdigest()[:10]
    marks, undrawn = _marks(ix, actors, lane_of, x, y)
    arrows, arrows_undrawn = _arrows(ix, actors, lane_of, x, y, f"{key}-arrow")
    left_out = [plural(len(names) - len(shown), "more agent")] if len(names) > len(shown) else []
    left_out += [plural(undrawn, "more event")] if undrawn else []
    left_out += [plural(arrows_undrawn, "more spawn or return arrow")] if arrows_undrawn else []
    bottom = TOP + len(shown) * LANE + AXIS + (18 if left_out else 0)
    failure = labelled_failure(trace)
    legend, legend_height = _legend(ix, bottom + 8, failure is not None)
    height = bottom + 8 + legend_height
    name = name if name is not None else readable_name(trace, str(trace.get("trace_id", "")))
    title = shown_name(name) + (f" ({trace['topology']})" if trace.get("topology") else "")
    parts = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" '
            f'role="img" aria-labelledby="{key}-title {key}-desc" font-family="sans-serif" font-size="11" fill="currentColor">'
        ),
        f'<title id="{key}-title">Timeline of trace {escape(title)}</title>',
        f'<desc id="{key}-desc">{escape(_description(ix.n, len(names), t0, t1) + _failure_said(failure))}</desc>',
        (
            f'<defs><marker id="{key}-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="6" markerHeight="6" orient="auto">'
            '<path d="M0,0 L8,4 L0,8 z" fill="currentColor"/></marker></defs>'
        ),
        f'<text x="{LABELS}" y="18" font-size="13" font-weight="bold">{escape(title)}</text>',
    ]
    for name in shown:
        row = y(name)
        label = name if len(name) <= 22 else name[:21] + "\u2026"
        parts.append(
            f'<text x="{LABELS - 8}" y="{row + 4}" text-anchor="end"><title>{escape(shown_name(name))}</title>{escape(label)}</text>'
        )
        parts.append(
            f'<line x1="{LABELS}" y1="{row}" x2="{WIDTH - RIGHT}" y2="{row}" stroke="currentColor" stroke-opacity="0.15"/>'
        )
        start, end = x(starts[name]), x(ends[name])
        parts.append(
            f'<rect x="{start}" y="{row - 5}" width="{max(end - start, 1.0)}" height="10" rx="3" '
            f'fill="currentColor" fill-opacity="0.12"/>'
        )
    parts += arrows
    parts += _failure_marks(failure, ix, actors, lane_of, x, y, TOP + len(shown) * LANE)  # under the marks
    parts += marks
    parts += _axis(t0 + span, x, TOP + len(shown) * LANE, trace.get("time_unit"))
    if left_out:
        parts.append(f'<text x="{LABELS}" y="{bottom - 14}">and {" and ".join(left_out)} not drawn</text>')
    parts += legend
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _description(events: int, agents: int, t0: float, t1: float) -> str:
    return f"{plural(events, 'event')} of {plural(agents, 'agent')} from t={_num(t0)} to t={_num(t1)}; one lane per agent."


def labelled_failure(trace: dict) -> dict | None:
    """The trace's `x_failure` when it names one of its events: {event, agent, step,
    reason}, each kept only when it is text (step: a whole number or text); else None.
    An extension is the trace's own business, so a malformed one is not drawn, not refused."""
    given = trace.get("x_failure")
    if not isinstance(given, dict) or not isinstance(given.get("event"), str):
        return None
    if not any(isinstance(event, dict) and event.get("id") == given["event"] for event in trace.get("events", ())):
        return None
    # the texts cut (a reason of 15 MB was drawn six times over): a drawing and a page quote a
    # few lines (the event's id is kept whole, to find the event; failure_sentence cuts it)
    return {
        key: shown_name(value, REASON_SHOWN if key == "reason" else NAME_SHOWN)
        if isinstance(value, str) and key != "event"
        else value
        for key, value in given.items()
        if key in ("event", "agent", "step", "reason")
        and (isinstance(value, str) or key == "step" and isinstance(value, int) and not isinstance(value, bool))
    }


REASON_SHOWN = 500


def failure_sentence(failure: dict) -> str:
    """A labelled failure in words: step, agent and reason, as far as it gives them."""
    step = f"step {failure['step']}" if "step" in failure else "event"
    said = f"{step} ({shown_name(failure['event'])})" + (f", by {failure['agent']}" if "agent" in failure else "")
    return said + (f": {failure['reason']}" if "reason" in failure else "")


def _failure_said(failure: dict | None) -> str:
    return f" Labelled failing {failure_sentence(failure)}" if failure else ""


def _failure_marks(failure: dict | None, ix, actors: list, lane_of, x, y, bottom: float) -> list[str]:
    """A ring around the failing event on its agent's lane, and a dashed line across the
    lanes at its time, labelled at the top."""
    if failure is None:
        return []
    position = ix.index.get(failure["event"])
    actor = actors[position] if position is not None else None
    if actor not in lane_of:
        return []
    at, row = x(float(ix.t[position])), y(actor)
    title = escape("labelled failing " + failure_sentence(failure))
    label = escape(f"failing step {failure['step']}" if "step" in failure else "failing step")
    anchor = "end" if at > WIDTH - RIGHT - 60 else "start" if at < LABELS + 60 else "middle"
    return [
        (
            f'<line x1="{at}" y1="{TOP - 2}" x2="{at}" y2="{bottom}" stroke="{FAILURE}" stroke-width="1.2" '
            f'stroke-dasharray="4 3"><title>{title}</title></line>'
        ),
        f'<circle cx="{at}" cy="{row}" r="9" fill="none" stroke="{FAILURE}" stroke-width="2"><title>{title}</title></circle>',
        f'<text x="{at}" y="{TOP - 6}" text-anchor="{anchor}" fill="{FAILURE}" font-weight="bold">{label}</text>',
    ]


def actor_names(m: measures.Measures, names: list) -> list:
    """Whose work each event of a batch of one is (a tool_result's: its caller's); None
    for an inert event."""
    codes = (m.actors.keys % m.batch.span).tolist()
    return [names[codes[at]] if at >= 0 else None for at in m.actors.of_event.tolist()]


def _arrows(ix, actors, lane_of, x, y, marker: str) -> tuple[list[str], int]:
    """Spawn arrows from the spawner's lane to the new agent's; return arrows from the
    returning agent's lane to its receiver's. Those of a kind between the same two lanes
    on one pixel are one arrow that says how many; at most MAX_MARKS. The arrows, and how
    many were left undrawn."""
    groups: dict = {}  # (pixel, source, target, kind) -> [x, count]
    to = ix.coded("to")
    for kind in ("spawn", "return"):
        for position in ix.positions(kind).tolist():
            if to[position] < 0:  # the artifact's format lets a spawn or return leave out whom it concerns
                continue
            source, target = actors[position], ix.agent_names[to[position]]
            if source not in lane_of or target not in lane_of or source == target:
                continue
            at = x(float(ix.t[position]))
            groups.setdefault((round(at), source, target, kind), [at, 0])[1] += 1
    arrows, undrawn = [], 0
    for (_, source, target, kind), (at, count) in groups.items():
        if len(arrows) == MAX_MARKS:
            undrawn += count
            continue
        y1, y2 = y(source), y(target)
        shift = 4 if y2 > y1 else -4
        dash = "" if kind == "spawn" else ' stroke-dasharray="3 2"'
        title = kind if count == 1 else f"{count:,} {kind}s"
        arrows.append(
            f'<line x1="{at}" y1="{y1 + shift}" x2="{at}" y2="{y2 - shift}" stroke="currentColor" '
            f'stroke-opacity="0.7"{dash} marker-end="url(#{marker})"><title>{title}</title></line>'
        )
    return arrows, undrawn


def _marks(ix, actors: list, lane_of, x, y) -> tuple[list[str], int]:
    """A mark per event on its actor's lane, events of one type that fall on the same
    pixel drawn as one mark that says how many; at most MAX_MARKS, the earliest (a trace
    may hold 100,000 events: the drawing stays the size of what a reader can see). The
    marks, and how many events were left undrawn."""
    types = list(MARKS)
    groups: dict = {}  # (pixel, actor, kind) -> [x, first t, last t, count]
    for position in np.argsort(ix.t, kind="stable").tolist():
        actor, code = actors[position], int(ix.type_code[position])
        if actor not in lane_of or code < 0:
            continue
        t, at = float(ix.t[position]), x(float(ix.t[position]))
        group = groups.get((round(at), actor, code))
        if group is None:
            groups[(round(at), actor, code)] = [at, t, t, 1]
        else:
            group[2], group[3] = t, group[3] + 1
    marks, undrawn = [], 0
    for (_, actor, code), (at, first, last, count) in groups.items():
        if len(marks) == MAX_MARKS:
            undrawn += count
            continue
        kind, who = types[code], shown_name(actor)
        when = f"t={_num(first)}" if first == last else f"t={_num(first)} to {_num(last)}"
        label = f"{kind} by {who} at {when}" if count == 1 else f"{count:,} {kind} events by {who} at {when}"
        marks.append(_shape(MARKS[kind], at, y(actor), escape(label)))
    return marks, undrawn


def _shape(mark: tuple[str, str], cx: float, cy: float, label: str, size: float = 5.0) -> str:
    fill, shape = mark
    style = f'fill="{fill}" stroke="currentColor" stroke-width="0.8"'
    if shape == "circle":
        body = f'<circle cx="{cx}" cy="{cy}" r="{size - 1}" {style}>'
        return f"{body}<title>{label}</title></circle>"
    if shape == "square":
        return f'<rect x="{cx - size + 1}" y="{cy - size + 1}" width="{2 * size - 2}" height="{2 * size - 2}" {style}><title>{label}</title></rect>'
    if shape == "triangle":
        points = f"{cx},{cy - size} {cx + size},{cy + size - 1} {cx - size},{cy + size - 1}"
    else:  # diamond
        points = f"{cx},{cy - size} {cx + size},{cy} {cx},{cy + size} {cx - size},{cy}"
    return f'<polygon points="{points}" {style}><title>{label}</title></polygon>'


def _axis(end: float, x, top: float, unit: str | None) -> list[str]:
    """The time axis from 0 to `end`, ticked at round numbers (1, 2, 2.5 or 5 times a power of ten)."""
    parts = [f'<line x1="{LABELS}" y1="{top + 6}" x2="{WIDTH - RIGHT}" y2="{top + 6}" stroke="currentColor"/>']
    step = _round_step(end / 5)
    for k in range(int(end / step * (1 + 1e-9)) + 1):
        t = float(f"{k * step:.12g}")  # 0.3, not 0.30000000000000004
        at = x(t)
        parts.append(f'<line x1="{at}" y1="{top + 6}" x2="{at}" y2="{top + 10}" stroke="currentColor"/>')
        parts.append(f'<text x="{at}" y="{top + 22}" text-anchor="middle">{_num(t)}</text>')
    label = {"seconds": "t (s)", "steps": "t (steps)"}.get(unit, "t")  # no unit drawn that the trace does not declare
    parts.append(f'<text x="{LABELS - 8}" y="{top + 22}" text-anchor="end">{label}</text>')
    return parts


def _legend(ix, top: float, failure: bool = False) -> tuple[list[str], float]:
    """The marks of the event types the trace has, in rows (and the ring of a labelled
    failure, when it has one); and the height they take."""
    counts = np.bincount(ix.type_code[ix.type_code >= 0], minlength=len(MARKS)).tolist()
    entries = [kind for kind, count in zip(MARKS, counts, strict=True) if count] + (["labelled failing step"] if failure else [])
    parts, at, row = [], float(LABELS), top + 6
    for kind in entries:
        label = kind.replace("_", " ")
        width = 22 + 6.2 * len(label)
        if at + width > WIDTH - RIGHT:
            at, row = float(LABELS), row + 16
        if kind in MARKS:
            parts.append(_shape(MARKS[kind], round(at + 5, 1), row, escape(label)))
        else:
            parts.append(f'<circle cx="{round(at + 5, 1)}" cy="{row}" r="5" fill="none" stroke="{FAILURE}" stroke-width="2"/>')
        parts.append(f'<text x="{round(at + 14, 1)}" y="{row + 4}">{escape(label)}</text>')
        at += width
    return parts, row - top + 14


def _round_step(rough: float) -> float:
    if not math.isfinite(rough) or rough <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(rough))  # 0.0 for a subnormal rough (1e-324): no step fits it
    return next((m * power for m in (1, 2, 2.5, 5, 10) if m * power >= rough * (1 - 1e-9)), rough)


def _num(value: float) -> str:
    return f"{value:.6g}"
