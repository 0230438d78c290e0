"""The site's charts drawn with matplotlib into SVG text (charts.py says what each chart
shows; this module only draws it, and is imported only to draw).

Every chart comes in a light and a dark variant, for mkdocs-material's `#only-light` and
`#only-dark` image suffixes. The module knows nothing about a survey: it receives labels
and numbers, and the labels are untrusted text (matplotlib escapes them in the SVG).

Charts are built on `Figure` objects, never pyplot, inside an `rc_context` that starts
from matplotlib's defaults, so neither the caller's rcParams nor a matplotlibrc change a
byte of the output, and the caller's rcParams are left as they were.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import matplotlib
from matplotlib.collections import PolyCollection
from matplotlib.colors import LinearSegmentedColormap, to_rgb
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.legend_handler import HandlerPatch
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch, Rectangle
from matplotlib.textpath import TextToPath
from matplotlib.ticker import MaxNLocator
from matplotlib.transforms import ScaledTranslation

if TYPE_CHECKING:  # what is drawn, described by charts.py, which asks for the drawing
    from .charts import Chart, FlowStage, StageExclusions

WIDTH = 8.0  # inches; the site's content column shows it at about its natural size
FONT = "DejaVu Sans"  # ships with matplotlib, so wrapping measures the font it lays out with


# ---------------------------------------------------------------------------------
# themes
# ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Theme:
    text: str
    muted: str  # axis labels, arrows, hatches, notes
    grid: str
    hatch: str  # an empty heatmap cell's hatch and outline
    page: str  # the page behind the transparent chart: separates touching shapes
    palette: tuple[str, ...]
    ramp: tuple[str, ...]  # heatmap colours, fewest to most
    sparse: str  # the outline of a sparse heatmap cell
    box: str  # fill of the flow diagram's chain boxes
    side: str  # fill of its exclusion boxes
    done: str  # edge of its last box


# Okabe-Ito, black swapped for grey. Each theme leads with the blue that contrasts best
# with its page (3:1 or more); yellow comes late, it is faint on white.
_OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999")

LIGHT = _Theme(
    text="#212121",  # mkdocs-material's rgba(0, 0, 0, .87) on white, opaque
    muted="#5f6368",
    grid="#dadce0",
    hatch="#a4a9b0",
    page="#ffffff",
    palette=_OKABE_ITO,
    ramp=("#deebf7", "#6baed6", "#2171b5", "#08306b"),
    sparse="#D55E00",
    box="#eaf2f8",
    side="#f6f6f6",
    done="#009E73",
)
DARK = _Theme(
    text="#e2e4e9",  # mkdocs-material slate's text on #1e2129
    muted="#a0a6b5",
    grid="#3a3f4b",
    hatch="#596070",
    page="#1e2129",
    palette=("#56B4E9",) + _OKABE_ITO[1:4] + ("#0072B2",) + _OKABE_ITO[5:],
    # brighter means more, as on any dark page; the dimmest still stands off #1e2129
    ramp=("#2b5a87", "#3f88c5", "#8cc2ec", "#dceefc"),
    sparse="#E69F00",
    box="#1f3140",
    side="#262a33",
    done="#009E73",
)
THEMES = {"light": LIGHT, "dark": DARK}


def _style(theme: _Theme) -> dict:
    return {
        "svg.fonttype": "none",  # labels stay <text>: searchable, small, no embedded glyphs
        "svg.hashsalt": "paperpool",  # stable ids for clip paths and hatches
        "text.parse_math": False,  # a "$" in a label is a dollar sign, never mathtext
        "text.usetex": False,
        "font.family": "sans-serif",
        "font.sans-serif": [FONT, "Helvetica", "Arial"],
        "font.size": 10,
        "text.color": theme.text,
        "axes.edgecolor": theme.muted,
        "axes.labelcolor": theme.text,
        "axes.titlecolor": theme.text,
        "axes.facecolor": "none",
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.axisbelow": True,
        "grid.color": theme.grid,
        "grid.linewidth": 0.8,
        "xtick.color": theme.muted,
        "ytick.color": theme.muted,
        "xtick.labelcolor": theme.text,
        "ytick.labelcolor": theme.text,
        "xtick.labelsize": 9.5,
        "ytick.labelsize": 9.5,
        "legend.frameon": False,
        "legend.fontsize": 9.5,
        "hatch.color": theme.muted,
        "hatch.linewidth": 0.8,
        "figure.facecolor": "none",
        "savefig.facecolor": "none",
        "savefig.edgecolor": "none",
        "savefig.transparent": True,
    }


def svgs(chart: Chart) -> tuple[str, str]:
    """The chart's light and dark SVG."""
    return DRAW[chart.kind](*chart.arguments)


def _draw(title: str, draw) -> tuple[str, str]:
    """Run draw(theme) -> Figure once per theme, each in a clean rc context: (light, dark)."""
    drawn, layout = {}, None
    for name, theme in THEMES.items():
        with matplotlib.rc_context():
            matplotlib.rcdefaults()  # undone when the context exits
            matplotlib.rcParams.update(_style(theme))
            figure = draw(theme)
            if layout:
                _reuse(figure, layout)
            buffer = io.StringIO()
            figure.savefig(buffer, format="svg", metadata={"Date": None, "Title": title})
            layout = layout or _layout(figure)
        drawn[name] = buffer.getvalue()
    return drawn["light"], drawn["dark"]


def _layout(figure: Figure) -> tuple[list, list]:
    """Where constrained layout put the axes and the figure's text (its title)."""
    return [axes.get_position() for axes in figure.axes], [text.get_position() for text in figure.texts]


def _reuse(figure: Figure, layout: tuple[list, list]) -> None:
    """Lay a theme's figure out as the first theme's was: the text is the same size in
    both, and constrained layout takes most of a chart's time."""
    axes_positions, text_positions = layout
    figure.set_layout_engine("none")
    for axes, position in zip(figure.axes, axes_positions, strict=True):
        axes.set_position(position)
    for text, position in zip(figure.texts, text_positions, strict=True):
        text.set_position(position)


# ---------------------------------------------------------------------------------
# text
# ---------------------------------------------------------------------------------

_TEXT_TO_PATH = TextToPath()


@lru_cache(maxsize=4096)
def _text_width(text: str, size: float, weight: str = "normal") -> float:
    """Width in inches of one line of text in the chart font."""
    font = FontProperties(family=FONT, size=size, weight=weight)
    width, _, _ = _TEXT_TO_PATH.get_text_width_height_descent(text, font, ismath=False)
    return width / 72


def _wrap(text: str, width: float, size: float, weight: str = "normal") -> list[str]:
    """Lines of at most `width` inches: words kept whole when they fit, else broken."""
    lines: list[str] = []
    line = ""
    for word in text.split() or [""]:
        candidate = f"{line} {word}" if line else word
        if _text_width(candidate, size, weight) <= width:
            line = candidate
            continue
        if line:
            lines.append(line)
        line = word
        while len(line) > 1 and (cut := _longest_prefix(line, width, size, weight)) < len(line):
            lines.append(line[:cut])
            line = line[cut:]
    lines.append(line)
    return lines


def _longest_prefix(word: str, width: float, size: float, weight: str) -> int:
    """The length of the longest prefix of `word` at most `width` wide: the whole word
    when it fits, else at least one character. Found by doubling, then halving, so that
    only prefixes about a line long are measured (shortening the word a character at a
    time, measuring it whole each time, took a minute for a label of 3,000 characters)."""
    fits, too_long, probe = 1, None, 2
    while probe < len(word):
        if _text_width(word[:probe], size, weight) > width:
            too_long = probe
            break
        fits, probe = probe, probe * 2
    if too_long is None:
        if _text_width(word, size, weight) <= width:
            return len(word)
        too_long = len(word)
    while too_long - fits > 1:
        middle = (fits + too_long) // 2
        if _text_width(word[:middle], size, weight) <= width:
            fits = middle
        else:
            too_long = middle
    return fits


def _wrapped(text: str, width: float, size: float, weight: str = "normal") -> str:
    return "\n".join(_wrap(text, width, size, weight))


def _title(figure: Figure, title: str, width: float = WIDTH) -> None:
    figure.suptitle(_wrapped(title, width - 0.4, 12.5, "bold"), x=0.12 / width, ha="left", fontsize=12.5, fontweight="bold")


def _no_data(title: str, note: str):
    def draw(theme: _Theme) -> Figure:
        figure = Figure(figsize=(WIDTH, 1.4), layout="constrained")
        _title(figure, title)
        axes = figure.add_subplot()
        axes.set_axis_off()
        axes.text(
            0.5, 0.5, note, ha="center", va="center", color=theme.muted, fontsize=11, fontstyle="italic", transform=axes.transAxes
        )
        return figure

    return draw


# ---------------------------------------------------------------------------------
# bars
# ---------------------------------------------------------------------------------


def bars(title: str, values: list[tuple[str, int]], value_label: str) -> tuple[str, str]:
    if not values:
        return _draw(title, _no_data(title, "No data"))

    labels = [_wrap(label, 2.8, 9.5) for label, _ in values]
    # each bar sits in a row tall enough for its wrapped label; y data units are inches
    heights = [max(0.34, 0.16 * len(lines) + 0.14) for lines in labels]
    centres = [sum(heights[:index]) + height / 2 for index, height in enumerate(heights)]
    counts = [count for _, count in values]
    largest = max(counts)

    def draw(theme: _Theme) -> Figure:
        figure = Figure(figsize=(WIDTH, sum(heights) + 1.25), layout="constrained")
        _title(figure, title)
        axes = figure.add_subplot()
        container = axes.barh(centres, counts, height=0.24, color=theme.palette[0])
        axes.bar_label(container, labels=[str(c) for c in counts], padding=4, fontsize=9.5, color=theme.text)
        axes.set_yticks(centres, labels=["\n".join(lines) for lines in labels])
        axes.set_ylim(sum(heights), 0)
        # room at the right for the longest bar's count
        axes.set_xlim(0, largest * 1.1 if largest else 1)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        if not largest:
            axes.set_xticks([0])
            axes.text(
                0.5,
                0.5,
                "All counts are zero",
                ha="center",
                va="center",
                color=theme.muted,
                fontstyle="italic",
                transform=axes.transAxes,
            )
        axes.tick_params(axis="y", length=0, pad=6)
        axes.tick_params(axis="x", length=0, labelcolor=theme.muted)
        axes.spines["left"].set_color(theme.muted)
        axes.spines["bottom"].set_visible(False)
        axes.grid(axis="x")
        axes.set_xlabel(value_label, color=theme.muted)
        return figure

    return _draw(title, draw)


# ---------------------------------------------------------------------------------
# stacked bars
# ---------------------------------------------------------------------------------


def stacked_bars(
    title: str, x_values: list[str], series: list[tuple[str, list[int]]], x_label: str, y_label: str
) -> tuple[str, str]:
    totals = [sum(counts[i] for _, counts in series) for i in range(len(x_values))]
    if not x_values or not series or not any(totals):
        return _draw(title, _no_data(title, "No data"))

    columns = _legend_columns([name for name, _ in series])
    names = [_wrapped(name, (WIDTH - 0.8) / columns - 0.5, 9.5) for name, _ in series]
    legend_rows = math.ceil(len(series) / columns)
    legend_height = legend_rows * 0.2 + 0.16 * sum(name.count("\n") for name in names) / columns
    rotate = max(_text_width(x, 9.5) for x in x_values) > 0.85 * (WIDTH - 1.2) / len(x_values)
    tick_lines = [_wrap(x, 1.6, 9.5) if rotate else [x] for x in x_values]
    ticks = ["\n".join(lines) for lines in tick_lines]
    # a label turned 45 degrees takes about 0.71 of its length in height
    tick_height = 0.71 * max(_text_width(line, 9.5) for lines in tick_lines for line in lines) if rotate else 0.0
    # a total wider than its bar's slot (10000 over one of 36 bars) stands upright, with
    # room above the tallest bar for it (the plot is about 3 inches high)
    widest_total = max(_text_width(str(total), 9) for total in totals)
    upright = widest_total > 0.9 * (WIDTH - 1.2) / max(len(x_values), 5)
    headroom = 1 / (1 - (widest_total + 0.1) / 3.0) if upright else 1.1

    def draw(theme: _Theme) -> Figure:
        figure = Figure(figsize=(WIDTH, 4.2 + legend_height + tick_height), layout="constrained")
        _title(figure, title)
        axes = figure.add_subplot()
        bottoms = [0] * len(x_values)
        handles = []
        for index, (_name, counts) in enumerate(series):
            colour = theme.palette[index % len(theme.palette)]
            # a second round of colours is hatched, so no two series look alike
            hatch = "//" if index >= len(theme.palette) else None
            # one collection per series: hundreds of separate bars make matplotlib slow
            segments = PolyCollection(
                _columns(bottoms, counts),
                facecolors=colour,
                edgecolors=theme.page,
                linewidths=0.6,
                hatch=hatch,
                hatchcolor=theme.page,
            )
            segments.set_in_layout(False)
            axes.add_collection(segments, autolim=False)
            handles.append(
                Patch(
                    facecolor=colour, edgecolor=theme.page, linewidth=0.6, hatch=hatch, hatchcolor=theme.page, label=names[index]
                )
            )
            bottoms = [b + c for b, c in zip(bottoms, counts, strict=True)]
        shift = _offset(figure, 0, 2)
        for position, total in enumerate(totals):
            axes.text(
                position,
                total,
                str(total),
                ha="center",
                va="bottom",
                fontsize=9,
                color=theme.text,
                rotation=90 if upright else 0,
                transform=axes.transData + shift,
                in_layout=False,
            )
        axes.set_xticks(range(len(x_values)), labels=ticks)
        if rotate:
            axes.tick_params(axis="x", labelrotation=45)
            for label in axes.get_xticklabels():
                label.set_horizontalalignment("right")
                label.set_rotation_mode("anchor")
        # fewer than five bars keep a bar's width and stand in the middle
        spare = max(0.0, (5 - len(x_values)) / 2)
        axes.set_xlim(-0.6 - spare, len(x_values) - 0.4 + spare)
        axes.set_ylim(0, max(totals) * headroom)
        axes.yaxis.set_major_locator(MaxNLocator(integer=True))
        axes.tick_params(axis="x", length=0)
        axes.tick_params(axis="y", length=0, labelcolor=theme.muted)
        axes.spines["left"].set_visible(False)
        axes.spines["bottom"].set_color(theme.muted)
        axes.grid(axis="y")
        axes.set_xlabel(x_label, color=theme.muted)
        axes.set_ylabel(y_label, color=theme.muted)
        axes.legend(
            handles=_row_major(handles, columns),
            loc="lower left",
            bbox_to_anchor=(0, 1.03),
            borderaxespad=0,
            ncols=columns,
            handlelength=1.2,
            handleheight=1.0,
            columnspacing=1.4,
        )
        return figure

    return _draw(title, draw)


def _columns(bottoms: list[int], counts: list[int], width: float = 0.72) -> list[list[tuple[float, float]]]:
    """The rectangles of one series' segments, one per x value that has any."""
    half = width / 2
    return [
        [(x - half, bottom), (x - half, bottom + count), (x + half, bottom + count), (x + half, bottom)]
        for x, (bottom, count) in enumerate(zip(bottoms, counts, strict=True))
        if count
    ]


def _row_major(handles: list, columns: int) -> list:
    """Reorder so a legend that fills column by column reads row by row, like the stack."""
    rows = math.ceil(len(handles) / columns)
    return [
        handles[row * columns + column]
        for column in range(columns)
        for row in range(rows)
        if row * columns + column < len(handles)
    ]


def _legend_columns(names: list[str]) -> int:
    widest = max(_text_width(name, 9.5) for name in names) + 0.45
    return max(1, min(len(names), 5, int((WIDTH - 0.3) // widest) or 1))


def _offset(figure: Figure, x_points: float, y_points: float) -> ScaledTranslation:
    return ScaledTranslation(x_points / 72, y_points / 72, figure.dpi_scale_trans)


# ---------------------------------------------------------------------------------
# heatmap
# ---------------------------------------------------------------------------------


def heatmap(
    title: str,
    row_labels: list[str],
    column_labels: list[str],
    counts: list[list[int]],
    row_title: str,
    column_title: str,
    sparse_at_most: int,
) -> tuple[str, str]:
    if not row_labels or not column_labels:
        return _draw(title, _no_data(title, "No data"))

    rows, columns = len(row_labels), len(column_labels)
    row_lines = [_wrap(label, 2.4, 9.5) for label in row_labels]
    row_height = max(0.36, max(0.16 * len(lines) + 0.14 for lines in row_lines))
    # the grid gets the width the row labels leave; a column label wraps within its
    # cell, or, when one does not fit in three lines of whole words, all turn 45 degrees
    row_label_width = max(_text_width(line, 9.5) for lines in row_lines for line in lines)
    # a few columns make a narrower chart rather than cells a hand wide
    width = min(WIDTH, 0.75 + row_label_width + 1.3 * columns)
    cell_width = (width - 0.75 - row_label_width) / columns - 0.08
    rotate = not all(_fits(label, cell_width, 9, lines=3) for label in column_labels)
    column_lines = [_wrap(label, 2.6 if rotate else cell_width, 9) for label in column_labels]
    widest = max(_text_width(line, 9) for lines in column_lines for line in lines)
    header = 0.71 * widest + 0.3 if rotate else 0.15 * max(map(len, column_lines)) + 0.2
    largest = max((c for row in counts for c in row), default=0)

    def draw(theme: _Theme) -> Figure:
        figure = Figure(figsize=(width, rows * row_height + header + 1.35), layout="constrained")
        _title(figure, title, width)
        axes = figure.add_subplot()
        ramp = LinearSegmentedColormap.from_list("counts", theme.ramp)
        for r, row in enumerate(counts):
            for c, count in enumerate(row):
                _cell(axes, theme, ramp, r, c, count, largest, sparse_at_most)
        axes.set_xlim(0, columns)
        axes.set_ylim(rows, 0)
        axes.set_yticks([r + 0.5 for r in range(rows)], labels=["\n".join(lines) for lines in row_lines])
        axes.set_xticks([c + 0.5 for c in range(columns)], labels=["\n".join(lines) for lines in column_lines], fontsize=9)
        axes.xaxis.tick_top()
        axes.xaxis.set_label_position("top")
        if rotate:
            axes.tick_params(axis="x", labelrotation=45)
            for label in axes.get_xticklabels():
                label.set_horizontalalignment("left")
                label.set_rotation_mode("anchor")
        axes.tick_params(length=0)
        for spine in axes.spines.values():
            spine.set_visible(False)
        axes.set_xlabel(column_title, color=theme.muted, labelpad=8)
        axes.set_ylabel(row_title, color=theme.muted, labelpad=8)
        # an axes legend, not a figure legend: constrained layout places only the axes
        axes.legend(
            handles=_heatmap_key(theme, ramp, sparse_at_most),
            loc="upper left",
            bbox_to_anchor=(0, -0.12 / (rows * row_height)),
            borderaxespad=0,
            ncols=2,
            handlelength=2.2,
            handleheight=1.3,
            columnspacing=2.0,
            handler_map={Patch: HandlerPatch(patch_func=_swatch)},
        )
        return figure

    return _draw(title, draw)


def _fits(label: str, width: float, size: float, lines: int) -> bool:
    words_fit = all(_text_width(word, size) <= width for word in label.split())
    return words_fit and len(_wrap(label, width, size)) <= lines


def _cell(axes, theme: _Theme, ramp, r: int, c: int, count: int, largest: int, sparse_at_most: int) -> None:
    inset = 0.04  # a gutter between cells, so the outlines of neighbours never merge
    corner, side = (c + inset, r + inset), 1 - 2 * inset
    if count == 0:
        cell = Rectangle(
            corner,
            side,
            side,
            facecolor="none",
            edgecolor=theme.hatch,
            hatchcolor=theme.hatch,
            hatch="///",
            linewidth=0.8,
            gid=f"empty-{r}-{c}",
        )
        ink, weight = theme.muted, "normal"
    else:
        colour = ramp(math.sqrt((count - 1) / (largest - 1)) if largest > 1 else 0.5)
        sparse = count <= sparse_at_most
        cell = Rectangle(
            corner,
            side,
            side,
            facecolor=colour,
            edgecolor=theme.sparse if sparse else "none",
            linewidth=2.4 if sparse else 0,
            gid=f"sparse-{r}-{c}" if sparse else None,
        )
        ink, weight = _ink(colour), "bold" if sparse else "normal"
    # add_artist, not add_patch: the limits are set, and updating them per cell is slow
    cell.set_in_layout(False)
    axes.add_artist(cell)
    axes.text(c + 0.5, r + 0.5, str(count), ha="center", va="center", fontsize=9.5, fontweight=weight, color=ink, in_layout=False)


def _ink(colour) -> str:
    """Black or white text, whichever contrasts more with the colour: 4.6:1 at least."""

    def linear(channel: float) -> float:
        return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4

    red, green, blue = (linear(channel) for channel in to_rgb(colour))
    luminance = 0.2126 * red + 0.7152 * green + 0.0722 * blue
    # WCAG contrast: (L + 0.05) / 0.05 against black, 1.05 / (L + 0.05) against white
    return "#000000" if (luminance + 0.05) / 0.05 > 1.05 / (luminance + 0.05) else "#ffffff"


def _heatmap_key(theme: _Theme, ramp, sparse_at_most: int) -> list[Patch]:
    key = [Patch(facecolor="none", edgecolor=theme.hatch, hatch="///", hatchcolor=theme.hatch, linewidth=0.8, label="0: empty")]
    if sparse_at_most > 0:
        span = "1" if sparse_at_most == 1 else f"1 to {sparse_at_most}"
        key.append(Patch(facecolor=ramp(0.0), edgecolor=theme.sparse, linewidth=2.4, label=f"{span}: sparse"))
    return key


def _swatch(legend, orig_handle, xdescent, ydescent, width, height, fontsize):
    return Rectangle((-xdescent, -ydescent), width, height)


# ---------------------------------------------------------------------------------
# flow diagram
# ---------------------------------------------------------------------------------

_MAIN = (0.25, 3.45)  # left edge and width of the chain's boxes, in inches
_SIDE = (4.2, 3.55)  # of the exclusion boxes
_PAD = 0.11  # inside a box
_GAP = 0.38  # between two boxes of the chain: room for the arrow
_SIZE, _REASON_SIZE = 10.0, 9.0
_SPACING = 1.3  # line height over font size
_BULLET = "• "


@dataclass
class _Line:
    text: str
    size: float
    weight: str = "normal"
    indent: float = 0.0
    space_before: float = 0.0  # sets one reason off from the one before

    @property
    def height(self) -> float:
        return self.space_before + self.size * _SPACING / 72


@dataclass
class _Box:
    lines: list[_Line]
    centred: bool

    @property
    def height(self) -> float:
        return sum(line.height for line in self.lines) + 2 * _PAD


def flow(
    title: str, audited: int, stages: list[FlowStage], retained: int, audited_label: str, retained_label: str
) -> tuple[str, str]:
    main_width, side_width = _MAIN[1] - 2 * _PAD, _SIDE[1] - 2 * _PAD
    first = _centred(f"{audited_label} (n = {audited})", main_width)
    last = _centred(f"{retained_label} (n = {retained})", main_width)
    rows = [
        (_centred(f"Assessed at {stage.label} (n = {stage.assessed})", main_width), _exclusions(stage, side_width))
        for stage in stages
    ]
    title_lines, title_height = _diagram_title(title)
    height = title_height + first.height + _GAP + sum(max(a.height, b.height) + _GAP for a, b in rows) + last.height + 0.25

    def draw(theme: _Theme) -> Figure:
        figure, axes = _diagram_axes(height, title_lines)
        top = title_height
        above = _place(axes, first, _MAIN, top, theme.palette[0], theme.box)
        top += first.height + _GAP
        for assessed, excluded in rows:
            row = max(assessed.height, excluded.height)
            box_top = top + (row - assessed.height) / 2
            _place(axes, assessed, _MAIN, box_top, theme.palette[0], theme.box)
            _place(axes, excluded, _SIDE, top + (row - excluded.height) / 2, theme.muted, theme.side)
            _arrow(axes, theme, (_centre(_MAIN), above), (_centre(_MAIN), box_top))
            _arrow(axes, theme, (sum(_MAIN), top + row / 2), (_SIDE[0], top + row / 2))
            above = box_top + assessed.height
            top += row + _GAP
        _place(axes, last, _MAIN, top, theme.done, theme.box)
        _arrow(axes, theme, (_centre(_MAIN), above), (_centre(_MAIN), top))
        return figure

    return _draw(title, draw)


def _diagram_title(title: str) -> tuple[list[str], float]:
    """A diagram's title wrapped to its width, and the height it takes (inches)."""
    lines = _wrap(title, WIDTH - 0.5, 12.5, "bold")
    return lines, 0.25 + len(lines) * 12.5 * _SPACING / 72 + 0.2


def _diagram_axes(height: float, title_lines: list[str]):
    """A diagram's figure, drawn in inches from the top down, with its title."""
    figure = Figure(figsize=(WIDTH, height))
    axes = figure.add_axes((0, 0, 1, 1))
    axes.set_axis_off()
    axes.set_xlim(0, WIDTH)
    axes.set_ylim(height, 0)  # data units are inches, top down
    axes.text(0.25, 0.25, "\n".join(title_lines), fontsize=12.5, fontweight="bold", va="top", linespacing=_SPACING)
    return figure, axes


# the stages side by side: audited at the top, forking into retained (left) and excluded
# (right); the excluded record's stages hang from a line below the excluded box
_TOP = (2.2, 3.6)  # the audited box, across the middle
_STAGE = (_SIDE[0] + 0.35, _SIDE[1] - 0.35)  # a stage's box, right of the line it hangs from
_BUS = _SIDE[0] + 0.17  # that line
_FORK = 0.45  # from the audited box down to the two below it
_STACK = 0.2  # between two stages' boxes


def stages(
    title: str,
    audited: int,
    retained: int,
    excluded: int,
    stages: list[StageExclusions],
    audited_label: str,
    retained_label: str,
    excluded_label: str,
    note: str,
) -> tuple[str, str]:
    top_box = _centred(f"{audited_label}: {audited}", _TOP[1] - 2 * _PAD)
    left = _centred(f"{retained_label}: {retained}", _MAIN[1] - 2 * _PAD)
    right = _centred(f"{excluded_label}: {excluded}", _SIDE[1] - 2 * _PAD)
    boxes = [_stage_box(stage, _STAGE[1] - 2 * _PAD) for stage in stages]
    note = _wrap(note, _MAIN[1] - 0.1, _REASON_SIZE) if note else []
    title_lines, title_height = _diagram_title(title)
    split = title_height + top_box.height + _FORK  # where the two boxes below the fork begin
    row = max(left.height, right.height)
    note_height = 0.2 + len(note) * _REASON_SIZE * _SPACING / 72 if note else 0.0
    right_bottom = split + row + sum(box.height + _STACK for box in boxes)
    height = max(split + row + note_height, right_bottom) + 0.25

    def draw(theme: _Theme) -> Figure:
        figure, axes = _diagram_axes(height, title_lines)
        bottom = _place(axes, top_box, _TOP, title_height, theme.palette[0], theme.box)
        _place(axes, left, _MAIN, split + (row - left.height) / 2, theme.done, theme.box)
        right_bottom = _place(axes, right, _SIDE, split + (row - right.height) / 2, theme.muted, theme.side)
        # the fork: down from the audited box, across, and down into each of the two
        middle = bottom + _FORK / 2
        _line(axes, theme, [(_centre(_TOP), bottom), (_centre(_TOP), middle)])
        _line(axes, theme, [(_centre(_MAIN), middle), (_centre(_SIDE), middle)])
        _arrow(axes, theme, (_centre(_MAIN), middle), (_centre(_MAIN), split + (row - left.height) / 2))
        _arrow(axes, theme, (_centre(_SIDE), middle), (_centre(_SIDE), split + (row - right.height) / 2))
        if note:
            axes.text(
                _MAIN[0] + 0.05,
                split + row + 0.2,
                "\n".join(note),
                fontsize=_REASON_SIZE,
                va="top",
                color=theme.muted,
                fontstyle="italic",
                linespacing=_SPACING,
            )
        top = split + row + _STACK
        for box in boxes:
            _place(axes, box, _STAGE, top, theme.muted, theme.side)
            _arrow(axes, theme, (_BUS, top + box.height / 2), (_STAGE[0], top + box.height / 2))
            last = top + box.height / 2
            top += box.height + _STACK
        if boxes:
            _line(axes, theme, [(_BUS, right_bottom), (_BUS, last)])
        return figure

    return _draw(title, draw)


def _stage_box(stage: StageExclusions, width: float) -> _Box:
    box = _Box(
        [_Line(line, _SIZE, "bold") for line in _wrap(f"{stage.label}: {stage.excluded} excluded", width, _SIZE, "bold")],
        centred=False,
    )
    _bullets(box, stage.reasons, width, lambda reason, count: f"{reason}: {count}")
    return box


def _bullets(box: _Box, reasons: list[tuple[str, int]], width: float, text) -> None:
    indent = _text_width(_BULLET, _REASON_SIZE)  # wrapped lines hang past the bullet
    for reason, count in reasons:
        for index, line in enumerate(_wrap(text(reason, count), width - indent, _REASON_SIZE)):
            if index == 0:
                box.lines.append(_Line(_BULLET + line, _REASON_SIZE, space_before=0.04))
            else:
                box.lines.append(_Line(line, _REASON_SIZE, indent=indent))


def _line(axes, theme: _Theme, points: list[tuple[float, float]]) -> None:
    xs, ys = zip(*points, strict=True)
    axes.plot(xs, ys, color=theme.muted, linewidth=1.3, solid_capstyle="butt")


def _centred(text: str, width: float) -> _Box:
    return _Box([_Line(line, _SIZE) for line in _wrap(text, width, _SIZE)], centred=True)


def _exclusions(stage: FlowStage, width: float) -> _Box:
    box = _Box(
        [_Line(line, _SIZE, "bold") for line in _wrap(f"Excluded (n = {stage.excluded})", width, _SIZE, "bold")], centred=False
    )
    _bullets(box, stage.reasons, width, lambda reason, count: f"{reason} (n = {count})")
    return box


def _place(axes, box: _Box, column: tuple[float, float], top: float, edge: str, fill: str) -> float:
    """Draw a box and its lines from `top` down; return its bottom."""
    left, width = column
    frame = FancyBboxPatch(
        (left, top), width, box.height, boxstyle="round,pad=0,rounding_size=0.07", facecolor=fill, edgecolor=edge, linewidth=1.3
    )
    axes.add_artist(frame)
    y = top + _PAD
    for line in box.lines:
        y += line.space_before
        middle = y + (line.height - line.space_before) / 2
        x = left + width / 2 if box.centred else left + _PAD + line.indent
        axes.text(
            x,
            middle,
            line.text,
            fontsize=line.size,
            fontweight=line.weight,
            va="center_baseline",
            ha="center" if box.centred else "left",
        )
        y += line.height - line.space_before
    return top + box.height


def _centre(column: tuple[float, float]) -> float:
    return column[0] + column[1] / 2


def _arrow(axes, theme: _Theme, start: tuple[float, float], end: tuple[float, float]) -> None:
    axes.add_artist(
        FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=14, color=theme.muted, linewidth=1.3, shrinkA=0, shrinkB=1)
    )


DRAW = {"bars": bars, "stacked_bars": stacked_bars, "heatmap": heatmap, "flow": flow, "stages": stages}
