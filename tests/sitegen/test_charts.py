"""charts: SVG that parses in both themes, byte for byte the same on every build, labels
kept as escaped text, numbers said in the alt text, empty inputs drawn rather than raised."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import matplotlib
import pytest

from paperpool.sitegen import chartdraw, charts
from paperpool.sitegen.charts import FlowStage, StageExclusions

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>alert(1)</script> a & b"


def texts(svg: str) -> list[str]:
    """The strings of the SVG's <text> elements, in document order."""
    return [element.text or "" for element in ET.fromstring(svg).iter(f"{SVG}text")]


def words(svg: str) -> str:
    """All the text, one space between words: a wrapped label reads whole again."""
    return " ".join(" ".join(texts(svg)).split())


def group_ids(svg: str, prefix: str) -> set[str]:
    return {element.get("id") for element in ET.fromstring(svg).iter(f"{SVG}g") if (element.get("id") or "").startswith(prefix)}


def themes(chart: charts.Chart) -> list[str]:
    return [chart.light, chart.dark]


# one chart of each kind, every one with `label` among its labels
def a_bar_chart(label: str = "Team") -> charts.Chart:
    return charts.bars("units", "Entries per unit", [(label, 3), ("Role", 12), ("Agent", 0)], "entries")


def a_stacked_chart(label: str = "Prompting") -> charts.Chart:
    return charts.stacked_bars(
        "years", "Entries per year", ["2023", "2024", "2025"], [("Learning", [1, 4, 6]), (label, [2, 0, 5])], "Year", "Entries"
    )


def a_heatmap(label: str = "Outcome") -> charts.Chart:
    return charts.heatmap(
        "gaps",
        "Unit by signal",
        ["Team", "Agent"],
        [label, "Process", "Critic"],
        [[5, 0, 1], [2, 7, 0]],
        "Unit",
        "Signal",
        sparse_at_most=2,
    )


def a_flow(label: str = "Full text") -> charts.Chart:
    stages = [
        FlowStage("Abstract screening", 40, 25, [("Off topic", 20), ("Duplicate", 5)]),
        FlowStage(label, 15, 3, [("No evaluation", 3)]),
    ]
    return charts.flow("prisma", "Screening", 40, stages, 12)


def a_stages_diagram(label: str = "Full text") -> charts.Chart:
    stages = [
        StageExclusions("Abstract screening", 25, [("Off topic", 20), ("Duplicate", 5)]),
        StageExclusions(label, 3, [("No evaluation", 3)]),
    ]
    return charts.stages("stages", "Screening", 40, 12, 28, stages, note="Stages are not sequential.")


KINDS = {"bars": a_bar_chart, "stacked": a_stacked_chart, "heatmap": a_heatmap, "flow": a_flow, "stages": a_stages_diagram}


# ---------------------------------------------------------------------------------
# every kind
# ---------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_light_and_dark_are_svg_documents_of_text_and_shapes(kind):
    chart = KINDS[kind]()
    assert chart.light != chart.dark
    for svg in themes(chart):
        assert ET.fromstring(svg).tag == f"{SVG}svg"
        assert "<text" in svg  # svg.fonttype none: labels are text, not glyph paths
        assert "<image" not in svg and "@font-face" not in svg
        assert len(svg) < 60_000


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_the_same_input_gives_the_same_bytes(kind):
    first, second = KINDS[kind](), KINDS[kind]()
    assert first.light == second.light and first.dark == second.dark


@pytest.mark.parametrize("kind", KINDS)
def test_labels_are_text_elements(kind):
    chart = KINDS[kind]("Distinctive")
    for svg in themes(chart):
        assert any("Distinctive" in text for text in texts(svg))


@pytest.mark.parametrize("kind", KINDS)
def test_hostile_labels_are_escaped_text(kind):
    chart = KINDS[kind](HOSTILE)
    for svg in themes(chart):
        root = ET.fromstring(svg)  # still well-formed XML
        assert not [element for element in root.iter() if element.tag.lower().endswith("script")]
        assert "<script" not in svg
        assert "&lt;script&gt;" in svg and "a &amp; b" in svg
        assert HOSTILE in words(svg)


@pytest.mark.parametrize("kind", KINDS)
def test_dollar_signs_are_shown_literally(kind):
    chart = KINDS[kind]("costs $5 or $x$")
    for svg in themes(chart):
        assert "costs $5 or $x$" in words(svg)


@pytest.mark.parametrize("kind", KINDS)
def test_the_callers_rc_params_neither_change_the_chart_nor_are_changed(kind):
    plain = KINDS[kind]()
    before = dict(matplotlib.rcParams)
    with matplotlib.rc_context(
        {"font.size": 30, "lines.linewidth": 9, "text.color": "red", "svg.fonttype": "path", "text.parse_math": True}
    ):
        styled = KINDS[kind]()
        assert matplotlib.rcParams["font.size"] == 30
    assert dict(matplotlib.rcParams) == before
    assert (styled.light, styled.dark) == (plain.light, plain.dark)


@pytest.mark.parametrize("kind", KINDS)
def test_both_themes_share_one_layout(kind):
    # the dark theme reuses the light one's constrained layout; it must fit it exactly
    def places(svg: str) -> list[tuple[str, str, str]]:
        return [(text.get("x"), text.get("y"), text.text) for text in ET.fromstring(svg).iter(f"{SVG}text")]

    chart = KINDS[kind]("A label long enough to be wrapped onto a second line in every kind of chart")
    assert places(chart.light) == places(chart.dark)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_the_chart_keeps_its_id_and_title(kind):
    chart = KINDS[kind]()
    assert chart.id in {"units", "years", "gaps", "prisma", "stages"}
    assert chart.title in words(chart.light)


# ---------------------------------------------------------------------------------
# empty inputs
# ---------------------------------------------------------------------------------

EMPTY = {
    "no bars": lambda: charts.bars("b", "Nothing", [], "entries"),
    "zero bars": lambda: charts.bars("b", "Zeros", [("Team", 0), ("Role", 0)], "entries"),
    "no x values": lambda: charts.stacked_bars("s", "Nothing", [], [], "Year", "Entries"),
    "no series": lambda: charts.stacked_bars("s", "Nothing", ["2024"], [], "Year", "Entries"),
    "zero series": lambda: charts.stacked_bars("s", "Zeros", ["2024", "2025"], [("A", [0, 0])], "Year", "Entries"),
    "no rows": lambda: charts.heatmap("h", "Nothing", [], ["A"], [], "Rows", "Columns", 2),
    "no columns": lambda: charts.heatmap("h", "Nothing", ["A"], [], [[]], "Rows", "Columns", 2),
    "zero cells": lambda: charts.heatmap("h", "Zeros", ["A"], ["B", "C"], [[0, 0]], "Rows", "Columns", 2),
    "no stages": lambda: charts.flow("f", "Nothing", 0, [], 0),
    "no stages side by side": lambda: charts.stages("f", "Nothing", 0, 0, 0, []),
}


@pytest.mark.parametrize("case", EMPTY)
def test_empty_inputs_draw_a_chart(case):
    chart = EMPTY[case]()
    for svg in themes(chart):
        ET.fromstring(svg)
    assert chart.alt


def test_no_data_is_said_in_the_chart_and_the_alt_text():
    chart = EMPTY["no bars"]()
    assert "No data" in texts(chart.light) and "no data" in chart.alt
    assert "No data" in texts(EMPTY["zero series"]().dark)
    assert "All counts are zero" in texts(EMPTY["zero bars"]().light)


def test_no_stages_leads_from_audited_straight_to_retained():
    svg = EMPTY["no stages"]().light
    assert texts(svg)[-2:] == ["Records audited (n = 0)", "Retained (n = 0)"]


@pytest.mark.slow
def test_stages_side_by_side_draw_every_box_s_words_in_order_and_no_assessed_count():
    svg = a_stages_diagram().light
    assert words(svg) == (
        "Screening Records audited: 40 Retained: 12 Excluded: 28 Stages are not sequential. "
        "Abstract screening: 25 excluded • Off topic: 20 • Duplicate: 5 Full text: 3 excluded • No evaluation: 3"
    )
    assert texts(EMPTY["no stages side by side"]().dark) == ["Nothing", "Records audited: 0", "Retained: 0", "Excluded: 0"]


def test_shapes_that_do_not_match_are_a_programming_error():
    with pytest.raises(ValueError, match="series 'A' has 1 counts for 2 x values"):
        charts.stacked_bars("s", "T", ["2024", "2025"], [("A", [1])], "Year", "Entries")
    with pytest.raises(ValueError, match="2 rows of 1 numbers"):
        charts.heatmap("h", "T", ["A", "B"], ["C"], [[1]], "Rows", "Columns", 2)


# ---------------------------------------------------------------------------------
# alt text
# ---------------------------------------------------------------------------------


def test_alt_texts_give_the_numbers():
    assert a_bar_chart().alt == "Bar chart: Entries per unit. Entries: Team 3, Role 12, Agent 0."
    assert a_stacked_chart().alt == (
        "Stacked bar chart: Entries per year. Entries by Year, stacked by 2 series. "
        "By series: Learning 11, Prompting 7. Totals: 2023 3, 2024 4, 2025 11."
    )
    assert a_heatmap().alt == (
        "Heatmap: Unit by signal. Rows: Unit (2); columns: Signal (3); 2 of 6 cells empty, 2 sparse (1 to 2). "
        "Counts, largest first: Agent × Process 7, Team × Outcome 5, Agent × Outcome 2, Team × Critic 1."
    )
    assert a_flow().alt == (
        "Screening flow diagram: Screening. Records audited 40. "
        "Abstract screening: assessed 40, excluded 25 (Off topic 20, Duplicate 5). "
        "Full text: assessed 15, excluded 3 (No evaluation 3). Retained 12."
    )
    assert a_stages_diagram().alt == (
        "Diagram: Screening. Records audited 40: retained 12, excluded 28. Excluded, by the stage at which each was "
        "excluded: Abstract screening 25 (Off topic 20, Duplicate 5); Full text 3 (No evaluation 3)."
    )


def test_long_alt_texts_are_cut_and_point_to_the_table():
    many = [(f"A rather long label for value number {i}", i) for i in range(40)]
    alt = charts.bars("b", "Many", many, "entries").alt
    assert len(alt) <= charts.ALT_LIMIT
    assert alt.startswith("Bar chart: Many. Entries: A rather long label for value number 0 0, ")
    assert re.search(r", and \d+ more \(full table below\)\.$", alt)

    stages = [
        FlowStage(f"Stage {i}", 100, 10, [(f"A long reason for exclusion number {j}", 1) for j in range(8)]) for i in range(8)
    ]
    alt = charts.flow("f", "Flow", 100, stages, 20).alt
    assert len(alt) <= charts.ALT_LIMIT and "full table below" in alt
    assert "Stage 7: assessed 100, excluded 10." in alt


# ---------------------------------------------------------------------------------
# each kind's particulars
# ---------------------------------------------------------------------------------


def test_bars_print_every_count_zero_included_in_the_given_order():
    values = texts(a_bar_chart().light)
    assert values.index("Team") < values.index("Role") < values.index("Agent")
    assert {"3", "12", "0"} <= set(values)
    assert "entries" in values


@pytest.mark.slow
def test_charts_grow_with_their_rows():
    def height(svg: str) -> float:
        return float(re.search(r'height="([\d.]+)pt"', svg).group(1))

    few = charts.bars("b", "Few", [("a", 1), ("b", 2)], "entries")
    many = charts.bars("b", "Many", [(f"value {i}", i) for i in range(30)], "entries")
    assert height(many.light) > 3 * height(few.light)
    assert re.search(r'width="576pt"', few.light)  # 8 inches


def test_long_bar_labels_wrap_and_keep_every_word():
    label = "Step (token-level credit assignment within an episode, a very long label indeed)"
    svg = charts.bars("b", "Long", [(label, 5)], "entries").light
    assert label in words(svg)
    assert label not in texts(svg)


def test_stacked_bars_print_totals_and_a_legend():
    values = texts(a_stacked_chart().light)
    assert {"3", "4", "11"} <= set(values)  # the totals on top of the stacks
    assert {"Learning", "Prompting", "2023", "2025", "Year", "Entries"} <= set(values)


def test_heatmap_cells_carry_their_counts():
    values = texts(a_heatmap().light)
    assert sorted(v for v in values if v.isdigit()) == sorted(["5", "0", "1", "2", "7", "0"])


def test_heatmap_marks_empty_and_sparse_cells_in_the_svg():
    # each cell is a group: `empty-R-C` for a count of 0 (no fill colour, hatched),
    # `sparse-R-C` for 1..sparse_at_most (a thick outline); others have no id
    chart = charts.heatmap("h", "T", ["r0", "r1", "r2"], ["c0", "c1"], [[0, 1], [2, 3], [9, 0]], "R", "C", 2)
    for svg in themes(chart):
        assert group_ids(svg, "empty-") == {"empty-0-0", "empty-2-1"}
        assert group_ids(svg, "sparse-") == {"sparse-0-1", "sparse-1-0"}
        root = ET.fromstring(svg)
        for group in root.iter(f"{SVG}g"):
            if (group.get("id") or "").startswith("empty-"):
                assert "fill: url(#" in group.find(f"{SVG}path").get("style")  # the hatch pattern
        assert root.find(f".//{SVG}pattern") is not None
    no_sparse = charts.heatmap("h", "T", ["r"], ["c0", "c1"], [[0, 1]], "R", "C", 0)
    assert group_ids(no_sparse.light, "sparse-") == set()
    assert "sparse" not in " ".join(texts(no_sparse.light))


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_heatmap_numbers_contrast_with_their_cells(theme):
    def luminance(colour) -> float:
        def linear(c):
            return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

        r, g, b = (linear(c) for c in matplotlib.colors.to_rgb(colour))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    ramp = matplotlib.colors.LinearSegmentedColormap.from_list("t", chartdraw.THEMES[theme].ramp)
    for step in range(21):
        cell = ramp(step / 20)
        lighter, darker = sorted([luminance(cell), luminance(chartdraw._ink(cell))], reverse=True)
        assert (lighter + 0.05) / (darker + 0.05) >= 4.5  # WCAG AA for text


def test_heatmap_column_labels_turn_when_they_do_not_fit():
    narrow = charts.heatmap("h", "T", ["r"], [f"Counterfactual baseline {i}" for i in range(12)], [[1] * 12], "R", "C", 2)
    assert "rotate(-45" in narrow.light
    assert "rotate(-45" not in a_heatmap().light


def test_flow_shows_every_stage_reason_and_count():
    svg = a_flow().light
    values = texts(svg)
    for expected in [
        "Records audited (n = 40)",
        "Assessed at Abstract screening (n = 40)",
        "Excluded (n = 25)",
        "• Off topic (n = 20)",
        "• Duplicate (n = 5)",
        "Assessed at Full text (n = 15)",
        "Excluded (n = 3)",
        "• No evaluation (n = 3)",
        "Retained (n = 12)",
    ]:
        assert expected in values
    custom = charts.flow("f", "T", 4, [], 4, audited_label="Records found", retained_label="Included")
    assert {"Records found (n = 4)", "Included (n = 4)"} <= set(texts(custom.dark))


def test_flow_wraps_long_labels_inside_their_boxes():
    reason = "Not about credit assignment or reward shaping in any form whatsoever, " * 3
    stage = "A screening stage with a name long enough to need two lines at least"
    svg = charts.flow("f", "T", 9, [FlowStage(stage, 9, 9, [(reason.strip(), 9)])], 0).light
    assert f"{reason.strip()} (n = 9)" in words(svg)
    assert f"Assessed at {stage} (n = 9)" in words(svg)
    # every line, measured in its own size and weight, fits inside the wider of the boxes
    inside = chartdraw._SIDE[1] - 2 * chartdraw._PAD
    lines = list(ET.fromstring(svg).iter(f"{SVG}text"))[1:]
    assert len(lines) > 6
    for line in lines:
        size = float(re.search(r"font-size: ([\d.]+)px", line.get("style")).group(1))
        weight = "bold" if "font-weight: 700" in line.get("style") else "normal"
        assert chartdraw._text_width(line.text, size, weight) <= inside


def test_flow_copes_with_eight_stages_of_eight_reasons():
    stages = [
        FlowStage(f"Stage {i}", 100 - i, 8, [(f"Reason {j} " + "described at length " * 4, 1) for j in range(8)])
        for i in range(8)
    ]
    chart = charts.flow("f", "Eight", 100, stages, 20)
    values = words(chart.light)
    for i in range(8):
        assert f"Assessed at Stage {i} (n = {100 - i})" in values
    assert values.count("Excluded (n = 8)") == 8
    assert len(group_ids(chart.light, "")) > 0


@pytest.mark.slow
def test_stages_side_by_side_wrap_long_labels_and_cope_with_eight_stages_of_eight_reasons():
    name = "with a name long enough to need two lines in its box at least"
    reason = "described at length " * 4
    stages = [StageExclusions(f"Stage {i} {name}", 8, [(f"Reason {j} {reason}".strip(), 1) for j in range(8)]) for i in range(8)]
    chart = charts.stages("s", "Eight", 100, 36, 64, stages)
    values = words(chart.light)
    for i in range(8):
        assert f"Stage {i} {name}: 8 excluded" in values
    assert values.count(f"Reason 7 {reason.strip()}: 1") == 8
    # every line of the stages' boxes, in its own size and weight, fits inside them
    inside = chartdraw._STAGE[1] - 2 * chartdraw._PAD
    for line in list(ET.fromstring(chart.light).iter(f"{SVG}text"))[4:]:
        size = float(re.search(r"font-size: ([\d.]+)px", line.get("style")).group(1))
        weight = "bold" if "font-weight: 700" in line.get("style") else "normal"
        assert chartdraw._text_width(line.text, size, weight) <= inside
    assert len(chart.alt) <= charts.ALT_LIMIT and "full table below" in chart.alt


@pytest.mark.slow
def test_a_long_word_is_broken_as_shortening_it_a_character_at_a_time_breaks_it():
    """The longest prefix that fits is found by doubling and halving (issue 39's fresh
    review: shortening a 3,000-character label one character at a time, measuring it
    whole each time, took a minute of the build); the lines are the same."""
    import random

    from paperpool.sitegen.chartdraw import _text_width, _wrap

    def by_one_character(text: str, width: float, size: float) -> list[str]:
        lines, line = [], ""
        for word in text.split() or [""]:
            candidate = f"{line} {word}" if line else word
            if _text_width(candidate, size, "normal") <= width:
                line = candidate
                continue
            if line:
                lines.append(line)
            line = word
            while _text_width(line, size, "normal") > width and len(line) > 1:
                cut = len(line) - 1
                while cut > 1 and _text_width(line[:cut], size, "normal") > width:
                    cut -= 1
                lines.append(line[:cut])
                line = line[cut:]
        return lines + [line]

    generator = random.Random(39)
    for _ in range(30):
        text = " ".join(
            "".join(generator.choice("Wil.mQ") for _ in range(generator.randint(1, 60))) for _ in range(generator.randint(1, 4))
        )
        width = generator.choice([0.05, 0.4, 1.3, 2.8])
        assert _wrap(text, width, 9.5) == by_one_character(text, width, 9.5), (text, width)
    lines = _wrap("W" * 3000, 2.8, 9.5)
    assert "".join(lines) == "W" * 3000 and all(_text_width(line, 9.5, "normal") <= 2.8 for line in lines)
