"""The charts the registry's `site.charts` asks for, and the screening diagram, fed
with the numbers of paperpool.analysis.stats (the figures never count anything themselves, but
for counting the dates of a date axis per period)."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import quote

from paperpool.analysis.gaps import cell_values, sparse_at_most
from paperpool.analysis.stats import count, crosstab

from ..registry.columns import NONE
from . import charts, periods
from .analysis import SiteAnalysis

ENTRIES = "Entries"
# The screening diagram's words when the registry gives no title: neither says PRISMA,
# nor any name of a method the survey has not claimed.
SEQUENTIAL_TITLE = "Screening flow"
STAGES_TITLE = "Exclusions by screening stage"
NO_STAGE = "No stage recorded"
STAGES_NOTE = (
    "The log records the stage at which each record was excluded, not how many records each "
    "stage assessed, so the stages are not drawn as a sequence."
)


@dataclass
class Link:
    text: str  # e.g. "Abstract screening"
    count: int  # the records behind the link
    state: str  # the faceted browser's state on the same page: "stage=abstract_screen"


@dataclass
class Figure:
    chart: charts.Chart
    note: str = ""  # what the chart leaves out, said under it
    table: tuple[list[str], list[list[str]]] | None = None  # the chart's numbers: headers, rows
    links: list[Link] = field(default_factory=list)  # the exclusion log, filtered to each part
    sequential: bool = False  # a screening flow that chains its stages


@dataclass
class Figures:
    statistics: list[Figure]
    flow: Figure | None

    @property
    def charts(self) -> list[charts.Chart]:
        return [figure.chart for figure in self.statistics + ([self.flow] if self.flow else [])]


def draw(analysis: SiteAnalysis) -> Figures:
    """The charts of the statistics page and the screening flow."""
    drawn = [DRAW[spec["type"]](analysis, spec) for spec in analysis.site.get("charts") or []]
    return Figures(drawn, _flow(analysis))


def _bars(analysis: SiteAnalysis, spec: dict) -> Figure:
    """Entries per value; like the gap tables, only values that are cells of the
    taxonomy get a bar, and the entries outside them are counted in the note."""
    name = spec["field"]
    frame = analysis.frames["entries"]
    counts = count(frame, name)
    shown = cell_values(analysis.registry, frame, name, list(counts))
    values = [(analysis.label(name, value), counts[value]) for value in shown]
    long = frame.long(name)
    outside = len(frame) - long[long["value"].isin(shown)]["key"].nunique()
    note = (
        f"{outside} of {len(frame)} entries have no value here, or one outside the axis (such as not applicable)."
        if outside
        else ""
    )
    return Figure(charts.bars(spec["id"], _title(spec, name), values, ENTRIES), note)


def _stacked_bars(analysis: SiteAnalysis, spec: dict) -> Figure:
    """Entries per value of x, stacked by another field's values; with `cumulative`,
    each bar counts the entries up to its x value. A date x is counted per period."""
    x, stack = spec["x"], spec["stack"]
    frame = analysis.frames["entries"]
    if frame.columns[x].kind == "date":
        return _over_time(analysis, spec)
    table = crosstab(frame, x, stack)
    x_values = [value for value in table if value != NONE]
    stacks = [value for value in next(iter(table.values()), {}) if any(table[v][value] for v in x_values)]
    series = [(analysis.label(stack, value), _counted(spec, [table[v][value] for v in x_values])) for value in stacks]
    return Figure(
        charts.stacked_bars(
            spec["id"],
            _title(spec, f"{x} by {stack}"),
            [analysis.label(x, v) for v in x_values],
            series,
            analysis.column_label(x),
            ENTRIES,
            bool(spec.get("cumulative")),
        )
    )


def _over_time(analysis: SiteAnalysis, spec: dict) -> Figure:
    """Entries per period of a date field (see periods), stacked; every period from the
    first date to the last is a bar. The chart's numbers are given in a table under it."""
    x, stack = spec["x"], spec["stack"]
    frame = analysis.frames["entries"]
    dates = frame.long(x)
    dated = {
        key: dt.date.fromisoformat(str(value)) for key, value in zip(dates["key"], dates["value"], strict=True) if value != NONE
    }
    spans = periods.periods(sorted(set(dated.values())))
    stacked = frame.long(stack)
    pairs = Counter(
        (spans.index(dated[key]), value) for key, value in zip(stacked["key"], stacked["value"], strict=True) if key in dated
    )
    values = frame.values_in_order(stack, [value for _, value in pairs])
    series = [
        (analysis.label(stack, value), _counted(spec, [pairs[(index, value)] for index in range(len(spans))]))
        for value in values
        if any(pairs[(index, value)] for index in range(len(spans)))
    ]
    x_label = f"{analysis.column_label(x)} (by {spans.unit})"
    chart = charts.stacked_bars(
        spec["id"], _title(spec, f"{x} by {stack}"), spans.labels, series, x_label, ENTRIES, bool(spec.get("cumulative"))
    )
    totals = [sum(counts[index] for _, counts in series) for index in range(len(spans))]
    headers = [x_label] + [name for name, _ in series] + ["Total"]
    rows = [
        [label] + [str(counts[index]) for _, counts in series] + [str(totals[index])] for index, label in enumerate(spans.labels)
    ]
    undated = len(frame) - len(dated)
    note = (
        f"{undated} of {len(frame)} entries have no value for {analysis.column_label(x)} and are not counted." if undated else ""
    )
    return Figure(chart, note, (headers, rows) if rows else None)


def _counted(spec: dict, counts: list[int]) -> list[int]:
    return periods.running(counts) if spec.get("cumulative") else counts


def _heatmap(analysis: SiteAnalysis, spec: dict) -> Figure:
    rows, columns = spec["rows"], spec["columns"]
    frame = analysis.frames["entries"]
    table = crosstab(frame, rows, columns)
    # the same cells as the gap tables: "not applicable" and missing values are no cell
    row_values = cell_values(analysis.registry, frame, rows, list(table))
    column_values = cell_values(analysis.registry, frame, columns, list(next(iter(table.values()), {})))
    return Figure(
        charts.heatmap(
            spec["id"],
            _title(spec, f"{rows} x {columns}"),
            [analysis.label(rows, r) for r in row_values],
            [analysis.label(columns, c) for c in column_values],
            [[table[r][c] for c in column_values] for r in row_values],
            analysis.column_label(rows),
            analysis.column_label(columns),
            sparse_at_most(analysis.registry),
        )
    )


def _flow(analysis: SiteAnalysis) -> Figure | None:
    """The screening diagram. By default what the log records: the records audited,
    retained and excluded, and the excluded per stage (in vocabulary order) with their
    reasons. A chain of stages, each assessing what the ones before it kept, only when
    the registry declares the stages sequential."""
    log = analysis.site.get("exclusion_log") or {}
    settings = log.get("flow")
    if not settings:
        return None
    stage, reason = settings["stage"], settings["reason"]
    frame = analysis.frames["exclusions"]
    table = crosstab(frame, stage, reason)
    excluded = count(frame, stage)
    totals = analysis.totals
    if settings.get("sequential"):
        return _sequential(analysis, settings, table, excluded)
    stages, links = [], []
    for value, n in excluded.items():
        label = NO_STAGE if value == NONE else analysis.label(stage, value, "exclusions")
        reasons = [(analysis.label(reason, r, "exclusions"), k) for r, k in table.get(value, {}).items() if k]
        stages.append(charts.StageExclusions(label, n, reasons))
        links += _stage_link(log, stage, value, label, n)
    chart = charts.stages(
        "screening-flow",
        str(settings.get("title") or STAGES_TITLE),
        totals["audited"],
        totals["retained"],
        totals["excluded"],
        stages,
        note=STAGES_NOTE,
    )
    return Figure(chart, links=links)


def _sequential(analysis: SiteAnalysis, settings: dict, table: dict, excluded: dict[str, int]) -> Figure:
    """Records audited, then at each stage those assessed (the audited less those the
    stages before excluded) and those excluded with their reasons, then those retained."""
    stage, reason = settings["stage"], settings["reason"]
    log = analysis.site.get("exclusion_log") or {}
    remaining = analysis.totals["audited"]
    stages, links = [], []
    for value, cells in table.items():
        if value == NONE:
            continue
        reasons = [(analysis.label(reason, r, "exclusions"), n) for r, n in cells.items() if n]
        label = analysis.label(stage, value, "exclusions")
        stages.append(charts.FlowStage(label, remaining, excluded[value], reasons))
        links += _stage_link(log, stage, value, label, excluded[value])
        remaining -= excluded[value]
    title = str(settings.get("title") or SEQUENTIAL_TITLE)
    return Figure(
        charts.flow("screening-flow", title, analysis.totals["audited"], stages, analysis.totals["retained"]),
        links=links,
        sequential=True,
    )


def _stage_link(log: dict, stage: str, value: str, label: str, excluded: int) -> list[Link]:
    """The exclusion log filtered to a stage, when the log's browser filters by stage
    and the stage has exclusions to show."""
    if excluded and value != NONE and stage in (log.get("facets") or []):
        return [Link(label, excluded, f"{stage}={quote(str(value), safe='')}")]
    return []


def _title(spec: dict, fallback: str) -> str:
    return str(spec.get("title") or fallback)


DRAW = {"bars": _bars, "stacked_bars": _stacked_bars, "heatmap": _heatmap}
