"""The pool over time on the statistics page (issue 18): a stacked bar chart whose x is a
date field counts the entries per day, month, quarter or year (whichever keeps it to 36
bars, every period from the first date to the last), or with `cumulative` the pool's size
at the end of each; its numbers are in a table folded under it."""

from __future__ import annotations

import datetime as dt
import random
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from paperpool.analysis.analyse import analyse
from paperpool.pool.reading import require_pool
from paperpool.sitegen import charts, periods
from paperpool.sitegen.analysis import for_site
from paperpool.sitegen.figures import _stacked_bars
from paperpool.sitegen.section import MAX_PERIODS

from ..conftest import REPO, TINY, edit

D = dt.date


# ---------------------------------------------------------------------------------
# Periods
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "first, last, unit, labels",
    [
        (
            D(2026, 4, 28),
            D(2026, 5, 4),
            "day",
            ["2026-04-28", "2026-04-29", "2026-04-30", "2026-05-01", "2026-05-02", "2026-05-03", "2026-05-04"],
        ),
        (D(2026, 3, 3), D(2026, 3, 3), "day", ["2026-03-03"]),
        (D(2026, 1, 1), D(2026, 2, 5), "day", None),  # 36 days: the most that are days
        (D(2026, 1, 1), D(2026, 2, 6), "month", ["Jan 2026", "Feb 2026"]),
        (D(2024, 1, 31), D(2026, 12, 1), "month", None),  # 36 months
        (
            D(2023, 1, 1),
            D(2026, 5, 4),
            "quarter",
            [f"Q{q} {y}" for y in (2023, 2024, 2025) for q in (1, 2, 3, 4)] + ["Q1 2026", "Q2 2026"],
        ),
        (D(1994, 6, 1), D(2026, 5, 4), "year", [str(year) for year in range(1994, 2027)]),
        (D(1900, 1, 1), D(2026, 5, 4), "5 years", [f"{y}–{y + 4}" for y in range(1900, 2030, 5)]),
    ],
)
def test_the_finest_period_that_keeps_to_36_bars_with_every_period_between(first, last, unit, labels):
    found = periods.periods([last, first])
    assert found.unit == unit
    assert len(found) <= MAX_PERIODS == 36
    if labels is not None:
        assert found.labels == labels
    assert found.starts[0] <= first and found.index(first) == 0 and found.index(last) == len(found) - 1


def test_dates_are_counted_in_their_period_and_counted_up_when_cumulative():
    found = periods.periods([D(2026, 1, 31), D(2026, 4, 1)])
    assert found.labels == ["Jan 2026", "Feb 2026", "Mar 2026", "Apr 2026"]
    assert [found.index(day) for day in (D(2026, 1, 31), D(2026, 2, 1), D(2026, 3, 31), D(2026, 4, 1))] == [0, 1, 2, 3]
    days = [D(2026, 1, 1) + dt.timedelta(days=n) for n in range(0, 120, 7)]
    by_month = periods.periods(days)
    assert (by_month.unit, by_month.labels) == ("month", ["Jan 2026", "Feb 2026", "Mar 2026", "Apr 2026"])
    assert periods.counts(by_month, days) == [5, 4, 4, 5]
    assert periods.running([5, 4, 4, 5]) == [5, 9, 13, 18]
    assert periods.periods([]).labels == []


@pytest.mark.slow
def test_ten_thousand_entries_over_three_years_make_fourteen_quarters_and_a_readable_chart():
    rng = random.Random(18)
    days = [D(2023, 1, 1) + dt.timedelta(days=rng.randrange(1219)) for _ in range(10_000)]
    found = periods.periods(days)
    assert (found.unit, len(found), found.labels[0], found.labels[-1]) == ("quarter", 14, "Q1 2023", "Q2 2026")
    counts = periods.counts(found, days)
    assert sum(counts) == 10_000
    # 36 days of them, each day's pool size a total of up to five digits: printed upright
    daily = [D(2026, 1, 1) + dt.timedelta(days=rng.randrange(36)) for _ in range(10_000)]
    by_day = periods.periods(daily)
    assert (by_day.unit, len(by_day)) == ("day", 36)
    chart = charts.stacked_bars(
        "size",
        "Pool size",
        by_day.labels,
        [("All", periods.running(periods.counts(by_day, daily)))],
        "Date added (by day)",
        "Entries",
        cumulative=True,
    )
    totals = [text for text in ET.fromstring(chart.light).iter("{http://www.w3.org/2000/svg}text") if text.text == "10000"]
    assert len(totals) == 1 and "rotate(-90" in totals[0].get("transform", "")
    assert chart.alt.startswith(
        "Stacked bar chart: Pool size. Entries, a running total along Date added (by day), "
        "stacked by 1 series. At 2026-02-05, by series: All 10000. Totals: 2026-01-01 "
    )


# ---------------------------------------------------------------------------------
# The shipped pool: 73 entries of 2026-04-28, 11 added on 2026-05-04
# ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shipped():
    analysis = for_site(analyse(require_pool(REPO)))
    return {spec["id"]: _stacked_bars(analysis, spec) for spec in analysis.site["charts"] if spec["type"] == "stacked_bars"}


DAYS = ["2026-04-28", "2026-04-29", "2026-04-30", "2026-05-01", "2026-05-02", "2026-05-03", "2026-05-04"]
HEADERS = ["Date added (by day)", "RL method", "Survey", "Benchmark", "Framework", "Industry", "Classical MARL", "Total"]


def test_entries_by_date_added_per_day_and_category(shipped):
    figure = shipped["entries-by-date-added"]
    assert figure.chart.arguments == (
        "Entries by date added, by category",
        DAYS,
        [
            ("RL method", [30, 0, 0, 0, 0, 0, 11]),
            ("Survey", [5, 0, 0, 0, 0, 0, 0]),
            ("Benchmark", [18, 0, 0, 0, 0, 0, 0]),
            ("Framework", [4, 0, 0, 0, 0, 0, 0]),
            ("Industry", [6, 0, 0, 0, 0, 0, 0]),
            ("Classical MARL", [10, 0, 0, 0, 0, 0, 0]),
        ],
        "Date added (by day)",
        "Entries",
    )
    assert figure.chart.alt == (
        "Stacked bar chart: Entries by date added, by category. Entries by Date added (by day), stacked by 6 series. "
        "By series: RL method 41, Survey 5, Benchmark 18, Framework 4, Industry 6, Classical MARL 10. Totals: "
        "2026-04-28 73, 2026-04-29 0, 2026-04-30 0, 2026-05-01 0, 2026-05-02 0, 2026-05-03 0, 2026-05-04 11."
    )
    assert figure.table == (
        HEADERS,
        [["2026-04-28", "30", "5", "18", "4", "6", "10", "73"]]
        + [[day, "0", "0", "0", "0", "0", "0", "0"] for day in DAYS[1:-1]]
        + [["2026-05-04", "11", "0", "0", "0", "0", "0", "11"]],
    )
    assert figure.note == ""


def test_the_pool_s_size_over_time(shipped):
    figure = shipped["pool-size"]
    title, x_values, series, *_ = figure.chart.arguments
    assert (title, x_values) == ("Pool size over time, by category", DAYS)
    # categories as the entries hold them now (react2023 has been a framework since the 2026-11-23 reading)
    assert series[0] == ("RL method", [30, 30, 30, 30, 30, 30, 41])
    assert [counts for _, counts in series[1:]] == [[n] * 7 for n in (5, 18, 4, 6, 10)]
    assert figure.chart.alt == (
        "Stacked bar chart: Pool size over time, by category. Entries, a running total along Date added (by day), "
        "stacked by 6 series. At 2026-05-04, by series: RL method 41, Survey 5, Benchmark 18, Framework 4, Industry 6, "
        "Classical MARL 10. Totals: 2026-04-28 73, 2026-04-29 73, 2026-04-30 73, 2026-05-01 73, 2026-05-02 73, "
        "2026-05-03 73, 2026-05-04 84."
    )
    assert [row[-1] for row in figure.table[1]] == ["73"] * 6 + ["84"]


def test_entries_per_year_are_unchanged(shipped):
    _, x_values, _, x_label, _ = shipped["entries-per-year"].chart.arguments
    assert (x_values[0], x_values[-1], x_label) == ("1994", "2026", "Year")
    assert shipped["entries-per-year"].table is None


# ---------------------------------------------------------------------------------
# Another pool's dates, and the page
# ---------------------------------------------------------------------------------


def dated_pool(root: Path, chart: str) -> Path:
    """The tiny pool with a date added on four of its five entries, a month apart or more."""
    shutil.copytree(TINY, root)
    edit(
        root / "registry.yaml",
        "  summary: {type: text, required: true}\n",
        '  summary: {type: text, required: true}\n  added: {type: date, label: "Added"}\n',
    )
    edit(root / "registry.yaml", "display:\n", f"site:\n  charts:\n    - {chart}\ndisplay:\n")
    for key, day in (("alpha", "2026-01-15"), ("beta", "2026-01-20"), ("gamma", "2026-03-02"), ("delta", "2026-03-31")):
        with open(root / "papers" / f"{key}.yaml", "a", encoding="utf-8") as record:
            record.write(f"added: {day}\n")
    return root


@pytest.mark.slow
def test_months_when_the_days_are_too_many_and_the_undated_entries_said(tmp_path, run):
    root = dated_pool(tmp_path / "pool", "{id: growth, type: stacked_bars, x: added, stack: method, cumulative: true}")
    kept = tmp_path / "pages"
    result = run("build", "--out", str(tmp_path / "site"), "--keep-pages", str(kept), cwd=root)
    assert result.exit_code == 0, result.output
    page = (kept / "statistics.md").read_text(encoding="utf-8")
    start = page.index("![Stacked bar chart")
    assert page[start : page.index("## Counts per field")] == (
        "![{alt}](assets/paperpool/charts/growth-light.svg#only-light){{ .pp-chart }}\n"
        "![{alt}](assets/paperpool/charts/growth-dark.svg#only-dark){{ .pp-chart }}\n\n"
        "1 of 5 entries have no value for Added and are not counted.\n\n"
        '<details class="pp-numbers"><summary>The chart\'s numbers</summary>\n<table>\n'
        '<thead><tr><th>Added (by month)</th><th class="pp-num">Reinforcement learning</th>'
        '<th class="pp-num">Prompting</th><th class="pp-num">Total</th></tr></thead>\n<tbody>\n'
        '<tr><td>Jan 2026</td><td class="pp-num">2</td><td class="pp-num">0</td><td class="pp-num">2</td></tr>\n'
        '<tr><td>Feb 2026</td><td class="pp-num">2</td><td class="pp-num">0</td><td class="pp-num">2</td></tr>\n'
        '<tr><td>Mar 2026</td><td class="pp-num">3</td><td class="pp-num">1</td><td class="pp-num">4</td></tr>\n'
        "</tbody>\n</table>\n</details>\n\n\n"
    ).format(
        alt="Stacked bar chart: added by method. Entries, a running total along Added (by month), stacked by 2 "
        "series. At Mar 2026, by series: Reinforcement learning 3, Prompting 1. Totals: Jan 2026 2, Feb 2026 2, "
        "Mar 2026 4."
    )
