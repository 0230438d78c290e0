"""The charts the registry's `site.charts` asks for, and the screening flow diagram,
fed with the numbers of paperpool.stats (the figures never count anything themselves)."""

from __future__ import annotations

from dataclasses import dataclass

from .. import charts
from ..gaps import cell_values, sparse_at_most
from ..registry.columns import NONE
from ..stats import count, crosstab
from .analysis import SiteAnalysis
from .gallery import TraceCard

ENTRIES = "Entries"


@dataclass
class Figure:
    chart: charts.Chart
    note: str = ""  # what the chart leaves out, said under it


@dataclass
class Figures:
    statistics: list[Figure]
    flow: Figure | None
    traces: list[TraceCard]  # the gallery: each of the pool's traces, measured and drawn

    @property
    def charts(self) -> list[charts.Chart]:
        return [figure.chart for figure in self.statistics + ([self.flow] if self.flow else [])]


def draw(analysis: SiteAnalysis, traces: list[TraceCard]) -> Figures:
    """The charts of the statistics page and the screening flow, with the trace gallery's cards."""
    drawn = [DRAW[spec["type"]](analysis, spec) for spec in analysis.site.get("charts") or []]
    return Figures(drawn, _flow(analysis), traces)


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
    note = f"{outside} of {len(frame)} entries have no value here, or one outside the axis (such as not applicable)." if outside else ""
    return Figure(charts.bars(spec["id"], _title(spec, name), values, ENTRIES), note)


def _stacked_bars(analysis: SiteAnalysis, spec: dict) -> Figure:
    x, stack = spec["x"], spec["stack"]
    table = crosstab(analysis.frames["entries"], x, stack)
    x_values = [value for value in table if value != NONE]
    stacks = [value for value in next(iter(table.values()), {}) if any(table[v][value] for v in x_values)]
    series = [(analysis.label(stack, value), [table[v][value] for v in x_values]) for value in stacks]
    return Figure(charts.stacked_bars(spec["id"], _title(spec, f"{x} by {stack}"), [analysis.label(x, v) for v in x_values],
                                      series, analysis.column_label(x), ENTRIES))


def _heatmap(analysis: SiteAnalysis, spec: dict) -> Figure:
    rows, columns = spec["rows"], spec["columns"]
    frame = analysis.frames["entries"]
    table = crosstab(frame, rows, columns)
    # the same cells as the gap tables: "not applicable" and missing values are no cell
    row_values = cell_values(analysis.registry, frame, rows, list(table))
    column_values = cell_values(analysis.registry, frame, columns, list(next(iter(table.values()), {})))
    return Figure(charts.heatmap(
        spec["id"], _title(spec, f"{rows} x {columns}"),
        [analysis.label(rows, r) for r in row_values], [analysis.label(columns, c) for c in column_values],
        [[table[r][c] for c in column_values] for r in row_values],
        analysis.column_label(rows), analysis.column_label(columns), sparse_at_most(analysis.registry),
    ))


def _flow(analysis: SiteAnalysis) -> Figure | None:
    """Records audited, then at each screening stage (in vocabulary order) those assessed
    and those excluded with their reasons, then those retained."""
    settings = (analysis.site.get("exclusion_log") or {}).get("flow")
    if not settings:
        return None
    stage, reason = settings["stage"], settings["reason"]
    table = crosstab(analysis.frames["exclusions"], stage, reason)
    remaining = analysis.totals["audited"]
    stages = []
    for value in table:
        if value == NONE:
            continue
        reasons = [(analysis.label(reason, r, "exclusions"), n) for r, n in table[value].items() if n]
        excluded = sum(n for _, n in reasons)
        stages.append(charts.FlowStage(analysis.label(stage, value, "exclusions"), remaining, excluded, reasons))
        remaining -= excluded
    return Figure(charts.flow("screening-flow", "Screening flow", analysis.totals["audited"], stages, analysis.totals["retained"]))


def _title(spec: dict, fallback: str) -> str:
    return str(spec.get("title") or fallback)


DRAW = {"bars": _bars, "stacked_bars": _stacked_bars, "heatmap": _heatmap}
