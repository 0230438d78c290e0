"""Dates counted per period, for a chart whose x axis is a date field (such as the pool's
growth by date added).

The period is the finest of day, month, quarter and year that keeps the chart to
MAX_PERIODS bars; when even the years are too many, runs of 2, 5, 10, ... years. Every
period from the first date to the last is a bar, the empty ones too, so that the axis
keeps time's proportions: two batches a month apart do not stand side by side.
"""

from __future__ import annotations

import bisect
import datetime as dt
import math
from dataclasses import dataclass

from .section import MAX_PERIODS

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
YEAR_RUNS = (2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2500, 5000, 10000)


@dataclass(frozen=True)
class Periods:
    unit: str  # "day", "month", "quarter", "year" or "5 years"
    starts: list[dt.date]  # each period's first day, in order
    labels: list[str]  # each period as readers see it: 2026-04-28, Apr 2026, Q2 2026, 2026, 2020–2024

    def __len__(self) -> int:
        return len(self.starts)

    def index(self, day: dt.date) -> int:
        """The period a day falls in (a day from the first period's start on)."""
        return bisect.bisect_right(self.starts, day) - 1


def periods(days: list[dt.date], limit: int = MAX_PERIODS) -> Periods:
    """The periods from the earliest of `days` to the latest (none without days)."""
    if not days:
        return Periods("day", [], [])
    first, last = min(days), max(days)
    if (last - first).days < limit:
        starts = [first + dt.timedelta(days=n) for n in range((last - first).days + 1)]
        return Periods("day", starts, [day.isoformat() for day in starts])
    for unit, months in (("month", 1), ("quarter", 3)):
        begin = _month_number(first) // months
        count = _month_number(last) // months - begin + 1
        if count <= limit:
            starts = [_from_month_number((begin + n) * months) for n in range(count)]
            return Periods(unit, starts, [_month_label(unit, start) for start in starts])
    run = (
        1
        if last.year - first.year < limit
        else next((size for size in YEAR_RUNS if last.year // size - first.year // size < limit), YEAR_RUNS[-1])
    )
    years = list(range(first.year // run * run, last.year + 1, run))
    starts = [dt.date(max(year, dt.MINYEAR), 1, 1) for year in years]
    labels = [
        str(year) if run == 1 else f"{start.year}–{min(year + run - 1, dt.MAXYEAR)}"
        for year, start in zip(years, starts, strict=True)
    ]
    return Periods("year" if run == 1 else f"{run} years", starts, labels)


def counts(periods: Periods, days: list[dt.date]) -> list[int]:
    """How many of `days` fall in each period."""
    found = [0] * len(periods)
    for day in days:
        found[periods.index(day)] += 1
    return found


def running(values: list[int]) -> list[int]:
    """Each value plus all before it: a count per period as the total up to its end."""
    total, out = 0, []
    for value in values:
        total += value
        out.append(total)
    return out


def _month_number(day: dt.date) -> int:
    return day.year * 12 + day.month - 1


def _from_month_number(number: int) -> dt.date:
    return dt.date(number // 12, number % 12 + 1, 1)


def _month_label(unit: str, start: dt.date) -> str:
    if unit == "month":
        return f"{MONTHS[start.month - 1]} {start.year}"
    return f"Q{math.ceil(start.month / 3)} {start.year}"
