"""The site's charts: what each shows, its title and its alt text, worked out here
without matplotlib, and its light and dark SVG, drawn by chartdraw when first asked for.

Keeping the drawing apart lets a build render every page while the charts are drawn in
another process (see sitegen/build.py): importing matplotlib and drawing take longer
than all of paperpool's other work on a pool of a hundred entries.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

ALT_LIMIT = 600  # characters of alt text; screen readers read the rest in the table


@dataclass
class Chart:
    id: str  # file names: {id}-light.svg, {id}-dark.svg
    title: str
    alt: str  # what the chart shows, with its numbers, for screen readers
    kind: str  # the chartdraw function that draws it
    arguments: tuple  # what that function is given
    _svgs: tuple[str, str] | None = field(default=None, repr=False, compare=False)

    @property
    def light(self) -> str:
        """SVG text for the light theme."""
        return self.svgs()[0]

    @property
    def dark(self) -> str:
        """SVG text for the dark theme."""
        return self.svgs()[1]

    def svgs(self) -> tuple[str, str]:
        if self._svgs is None:
            from . import chartdraw

            self._svgs = chartdraw.svgs(self)
        return self._svgs


@dataclass
class FlowStage:
    label: str  # e.g. "Abstract screening"
    assessed: int
    excluded: int
    reasons: list[tuple[str, int]]  # (reason, count), in order


@dataclass
class StageExclusions:
    label: str  # e.g. "Abstract screening"
    excluded: int  # the records the log says were excluded at this stage
    reasons: list[tuple[str, int]]  # (reason, count), in order


def bars(id: str, title: str, values: list[tuple[str, int]], value_label: str) -> Chart:
    """Horizontal bars in the given order, top to bottom, each count printed at its end."""
    values = [(str(label), int(count)) for label, count in values]
    prefix = f"Bar chart: {title}. {_upper_first(value_label)}: "
    items = [f"{label} {count}" for label, count in values]
    alt = prefix + (_listing(items, ALT_LIMIT - len(prefix) - 1) if items else "no data") + "."
    return Chart(id, title, _cap(alt), "bars", (title, values, value_label))


def stacked_bars(
    id: str,
    title: str,
    x_values: list[str],
    series: list[tuple[str, list[int]]],
    x_label: str,
    y_label: str,
    cumulative: bool = False,
) -> Chart:
    """Vertical bars, one per x value, stacked by series (the first at the bottom), each
    total printed on top, the legend above the plot. `cumulative`: each count is a
    running total (the alt text then gives each series' last, not its sum)."""
    x_values = [str(x) for x in x_values]
    series = [(str(name), [int(c) for c in counts]) for name, counts in series]
    for name, counts in series:
        if len(counts) != len(x_values):
            raise ValueError(f"series {name!r} has {len(counts)} counts for {len(x_values)} x values")
    totals = [sum(counts[i] for _, counts in series) for i in range(len(x_values))]
    alt = _stacked_alt(title, x_values, series, totals, x_label, y_label, cumulative)
    return Chart(id, title, _cap(alt), "stacked_bars", (title, x_values, series, x_label, y_label))


def heatmap(
    id: str,
    title: str,
    row_labels: list[str],
    column_labels: list[str],
    counts: list[list[int]],
    row_title: str,
    column_title: str,
    sparse_at_most: int,
) -> Chart:
    """A grid of counts. Every cell carries its number; an empty cell is unfilled and
    hatched (SVG group id `empty-R-C`), a sparse one (1..sparse_at_most) has a thick
    outline (group id `sparse-R-C`), so neither depends on telling colours apart."""
    row_labels = [str(r) for r in row_labels]
    column_labels = [str(c) for c in column_labels]
    counts = [[int(c) for c in row] for row in counts]
    if len(counts) != len(row_labels) or any(len(row) != len(column_labels) for row in counts):
        raise ValueError(f"counts must be {len(row_labels)} rows of {len(column_labels)} numbers")
    alt = _heatmap_alt(title, row_labels, column_labels, counts, row_title, column_title, sparse_at_most)
    return Chart(
        id, title, _cap(alt), "heatmap", (title, row_labels, column_labels, counts, row_title, column_title, sparse_at_most)
    )


def flow(
    id: str,
    title: str,
    audited: int,
    stages: list[FlowStage],
    retained: int,
    audited_label: str = "Records audited",
    retained_label: str = "Retained",
) -> Chart:
    """A sequential screening flow (the shape of a PRISMA flow diagram): the records
    audited, each stage's assessed records in a chain down the left, each stage's
    exclusions and their reasons to its right, the records retained at the bottom. Only
    for stages that are sequential: each then assesses what the ones before it kept."""
    alt = _flow_alt(title, audited, stages, retained, audited_label, retained_label)
    return Chart(id, title, _cap(alt), "flow", (title, audited, stages, retained, audited_label, retained_label))


def stages(
    id: str,
    title: str,
    audited: int,
    retained: int,
    excluded: int,
    stages: list[StageExclusions],
    audited_label: str = "Records audited",
    retained_label: str = "Retained",
    excluded_label: str = "Excluded",
    note: str = "",
) -> Chart:
    """The records audited split into those retained and those excluded, and the
    excluded by the stage at which each was excluded, with their reasons: the stages
    side by side, no record counted as passing through one (nothing says how many each
    assessed). `note` is printed under the retained box."""
    alt = _stages_alt(title, audited, retained, excluded, stages, audited_label, retained_label, excluded_label)
    return Chart(
        id,
        title,
        _cap(alt),
        "stages",
        (title, audited, retained, excluded, stages, audited_label, retained_label, excluded_label, note),
    )


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def _listing(items: list[str], budget: int) -> str:
    """Items joined by commas, as many as fit in `budget` characters, the rest counted."""
    if len(", ".join(items)) <= budget:
        return ", ".join(items)
    shown: list[str] = []
    for item in items:
        rest = len(items) - len(shown) - 1
        if shown and len(", ".join(shown + [item]) + f", and {rest} more (full table below)") > budget:
            break
        shown.append(item)
    return ", ".join(shown) + f", and {len(items) - len(shown)} more (full table below)"


def _cap(text: str) -> str:
    if len(text) <= ALT_LIMIT:
        return text
    tail = " … (full table below)"
    return textwrap.shorten(text, ALT_LIMIT - len(tail), placeholder="") + tail


def _stacked_alt(title, x_values, series, totals, x_label, y_label, cumulative=False) -> str:
    if not x_values or not series:
        return f"Stacked bar chart: {title}. No data."
    if cumulative:
        head = f"Stacked bar chart: {title}. {y_label}, a running total along {x_label}, stacked by {len(series)} series. "
        by_series = f"At {x_values[-1]}, by series: " + ", ".join(f"{name} {counts[-1]}" for name, counts in series) + ". "
    else:
        head = f"Stacked bar chart: {title}. {y_label} by {x_label}, stacked by {len(series)} series. "
        by_series = "By series: " + ", ".join(f"{name} {sum(counts)}" for name, counts in series) + ". "
    if len(head) + len(by_series) > ALT_LIMIT // 2:
        by_series = ""
    budget = ALT_LIMIT - len(head) - len(by_series) - len("Totals: .")
    return head + by_series + "Totals: " + _listing([f"{x} {t}" for x, t in zip(x_values, totals, strict=True)], budget) + "."


def _heatmap_alt(title, row_labels, column_labels, counts, row_title, column_title, sparse_at_most) -> str:
    if not row_labels or not column_labels:
        return f"Heatmap: {title}. No data."
    cells = [(count, r, c) for r, row in enumerate(counts) for c, count in enumerate(row)]
    empty = sum(1 for count, _, _ in cells if count == 0)
    sparse = sum(1 for count, _, _ in cells if 0 < count <= sparse_at_most)
    head = (
        f"Heatmap: {title}. Rows: {row_title} ({len(row_labels)}); columns: {column_title} "
        f"({len(column_labels)}); {empty} of {len(cells)} cells empty"
    )
    if sparse_at_most > 0:
        head += f", {sparse} sparse (1 to {sparse_at_most})" if sparse_at_most > 1 else f", {sparse} sparse (1)"
    head += ". "
    filled = sorted((cell for cell in cells if cell[0]), key=lambda cell: (-cell[0], cell[1], cell[2]))
    if not filled:
        return head + "All counts are zero."
    items = [f"{row_labels[r]} × {column_labels[c]} {count}" for count, r, c in filled]
    label = "Counts, largest first: " if len(items) > 1 else "Count: "
    return head + label + _listing(items, ALT_LIMIT - len(head) - len(label) - 1) + "."


def _flow_alt(title, audited, stages, retained, audited_label, retained_label) -> str:
    def stage_text(stage: FlowStage, with_reasons: bool) -> str:
        text = f"{stage.label}: assessed {stage.assessed}, excluded {stage.excluded}"
        if with_reasons and stage.reasons:
            text += " (" + ", ".join(f"{reason} {count}" for reason, count in stage.reasons) + ")"
        return text + ". "

    head = f"Screening flow diagram: {title}. {audited_label} {audited}. "
    tail = f"{retained_label} {retained}."
    full = head + "".join(stage_text(stage, True) for stage in stages) + tail
    if len(full) <= ALT_LIMIT:
        return full
    return head + "".join(stage_text(stage, False) for stage in stages) + tail + " Reasons for exclusion in the full table below."


def _stages_alt(title, audited, retained, excluded, stages, audited_label, retained_label, excluded_label) -> str:
    def stage_text(stage: StageExclusions, with_reasons: bool) -> str:
        text = f"{stage.label} {stage.excluded}"
        if with_reasons and stage.reasons:
            text += " (" + ", ".join(f"{reason} {count}" for reason, count in stage.reasons) + ")"
        return text

    head = (
        f"Diagram: {title}. {audited_label} {audited}: {retained_label.lower()} {retained}, {excluded_label.lower()} {excluded}."
    )
    if not stages:
        return head
    lead = f" {excluded_label}, by the stage at which each was excluded: "
    full = head + lead + "; ".join(stage_text(stage, True) for stage in stages) + "."
    if len(full) <= ALT_LIMIT:
        return full
    return (
        head
        + lead
        + "; ".join(stage_text(stage, False) for stage in stages)
        + "."
        + " Reasons for exclusion in the full table below."
    )
