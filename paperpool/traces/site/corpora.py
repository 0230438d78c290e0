"""The site's trace corpora: one page per corpus the registry declares (`traces:
corpora`), linked from the trace gallery. A corpus is exported at build time to a
temporary folder by `trace export`'s own code, and its page shows what `trace summary`
computes over those tables (the distributions of the measures, the events by type),
grouped by the declared `by` fields, with the values of the declared `count` fields.

Every number is computed from the corpus when the site is built, and every table says
what it counts over. Everything a trace holds is text from strangers: the templates show
it through the `md` filter.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from paperpool.files.problems import PaperpoolError, plural
from paperpool.registry import REGISTRY_FILE, Registry

from .. import limits, mapping, rows, summary
from ..section import Corpus, corpora
from ..tables import export_tables
from . import paths

MAX_SHOWN = summary.KEPT_CHARS  # characters of a value or group a table cell shows
MOST_VALUES = 12  # values of a counted field shown per group; the others are summed in one row
MOST_COUNTED_ROWS = 20_000  # rows of the counted fields' tables on one corpus page (some 3 MB)
MOST_PROBLEMS = 10  # the invalid traces' problem lines shown
NONE = "(none)"  # a group or value the trace does not give


@dataclass
class Table:
    over: str  # what it counts over, said above it
    headers: list[str]
    rows: list[list[str]]  # text from the corpus, unescaped: the template escapes every cell
    right: int = 0  # the columns from this one on are numbers, aligned right


@dataclass
class CorpusPage:
    corpus: Corpus
    page: str  # its path in the site
    traces: int
    invalid: int
    problems: list[str]  # the first invalid traces' problem lines, their files named as in the pool
    groups: list[tuple[str, int]]  # (group, its valid traces)
    time_units: list[tuple[str, int]]  # (time unit, valid traces) over the whole corpus
    measures: Table
    left_out: list[str]  # the measures no valid trace has a value for
    events: Table
    counts: list[Table] = field(default_factory=list)  # one per counted field

    @property
    def valid(self) -> int:
        return self.traces - self.invalid


def pages(registry: Registry) -> list[CorpusPage]:
    """Each declared corpus, exported and summarised."""
    return [_page(registry, corpus) for corpus in corpora(registry)]


def _page(registry: Registry, corpus: Corpus) -> CorpusPage:
    decisions = mapping.for_registry(registry)
    bounds = limits.for_registry(registry)
    inputs = [str(registry.root / corpus.path)]
    by, problems = list(corpus.by), []

    def keep(line: str) -> None:  # the page shows the first few; outcome.invalid counts them all
        if len(problems) < MOST_PROBLEMS:
            problems.append(line)

    with tempfile.TemporaryDirectory(prefix="paperpool-corpus-") as scratch:
        folder = Path(scratch, "tables")
        try:
            outcome = export_tables(inputs, folder, decisions, keep, jobs=1, limits=bounds)
        except PaperpoolError as exc:
            said = str(exc.message).removeprefix(f"{registry.root}/")  # the corpus's files named as in the pool
            raise PaperpoolError(f"{REGISTRY_FILE}: traces.corpora: {corpus.name}: {said}") from None
        try:
            result = summary.summarise(folder, by, bounds)
        except PaperpoolError as exc:
            raise PaperpoolError(f"{REGISTRY_FILE}: traces.corpora: {corpus.name}: {exc.message}") from None
        try:
            counted = (
                # time_unit once: the page states it whether or not the corpus counts it
                summary.field_counts(
                    folder, inputs, by, ["time_unit", *(name for name in corpus.count if name != "time_unit")], bounds
                )
                if outcome.traces > outcome.invalid
                else []
            )
        except PaperpoolError as exc:
            raise PaperpoolError(f"{REGISTRY_FILE}: traces.corpora: {corpus.name}: {exc.message}") from None
    valid = outcome.traces - outcome.invalid
    over = f"over the {plural(valid, 'valid trace')} of the corpus ({outcome.traces:,} in all)"
    grouped = f", by {', '.join(by)}" if by else ""
    groups = _groups(result.metrics, by)  # by each group's values, not their joined text, which two groups may share
    about = {column.name: column.about for column in rows.columns(decisions)}
    measures, left_out = _measures(result.metrics, by, about)
    root = f"{registry.root}/"
    return CorpusPage(
        corpus,
        paths.corpus(corpus.name),
        outcome.traces,
        outcome.invalid,
        [line.removeprefix(root) for line in problems],
        [(" · ".join(_labels(group)), traces) for group, traces in groups],
        _totals([row for row in counted if row["field"] == "time_unit"]),
        Table(
            f"Each measure's distribution {over}{grouped}: how many traces have a value for it, their mean, "
            "quantiles (interpolated) and extremes.",
            ["Measure", *by, "Traces", "With a value", "Mean", "Min", "P10", "P25", "Median", "P75", "P90", "Max"],
            measures,
            1 + len(by),
        ),
        left_out,
        Table(
            f"The events of the {plural(valid, 'valid trace')} by type{grouped}, and each type's share of "
            f"{'its group' if by else 'the corpus'}'s events.",
            [*by, "Event type", "Events", "Share"],
            [[*_shown(_cells(row, by)), row["type"], f"{row['events']:,}", _percent(row["share"])] for row in result.event_types],
            len(by) + 1,
        ),
        _counted_tables(corpus, counted, by, groups, over, grouped),
    )


def _counted_tables(corpus, counted: list[dict], by: list[str], groups: list, over: str, grouped: str) -> list[Table]:
    """A table per counted field, refused past MOST_COUNTED_ROWS rows in all: each group
    shows up to MOST_VALUES + 1 rows of each field (500 groups and ten fields made 65,000
    rows, a page of 11 MB, refused by the page limit with no word of which setting)."""
    tables = [_counts(name, [row for row in counted if row["field"] == name], by, groups, over, grouped) for name in corpus.count]
    shown = sum(len(table.rows) for table in tables)
    if shown > MOST_COUNTED_ROWS:
        raise PaperpoolError(
            f"{REGISTRY_FILE}: traces.corpora: {corpus.name}: its {plural(len(corpus.count), 'counted field')} over "
            f"{plural(len(groups), 'group')} make {shown:,} rows, over the {MOST_COUNTED_ROWS:,} a corpus page shows; "
            "count fewer fields (count), or group by a field with fewer values (by)"
        )
    return tables


def _groups(metrics: list[dict], by: list[str]) -> list[tuple[tuple, int]]:
    """Each group (its values) and its valid traces (every measure's rows have them all)."""
    first = metrics[0]["measure"] if metrics else None
    return [(_group(row, by), row["traces"]) for row in metrics if row["measure"] == first]


def _measures(metrics: list[dict], by: list[str], about: dict[str, str]) -> tuple[list[list[str]], list[str]]:
    found, left_out, shown = [], [], set()
    held = {row["measure"] for row in metrics if row["count"]}
    for row in metrics:
        name = row["measure"]
        if name not in held:
            left_out += [] if name in left_out else [name]
            continue
        label = "" if name in shown else f"{name}: {about.get(name, name)}"
        shown.add(name)
        found.append(
            [
                label,
                *_shown(_cells(row, by)),
                f"{row['traces']:,}",
                f"{row['count']:,}",
                *(_number(row[key]) for key in ("mean", "min", "p10", "p25", "p50", "p75", "p90", "max")),
            ]
        )
    return found, left_out


def _counts(name: str, counted: list[dict], by: list[str], groups: list[tuple[tuple, int]], over: str, grouped: str) -> Table:
    """A counted field's values, the MOST_VALUES most frequent of each group, the others
    summed in one row, with each value's share of its group's valid traces."""
    sizes = dict(groups)
    rows: list = []
    shown: dict = {}
    rest: dict = {}  # group -> [its row's place, other values, their traces]: one pass over the rows, whatever the groups
    for row in counted:
        group = _group(row, by)
        shown[group] = shown.get(group, 0) + 1
        if shown[group] <= MOST_VALUES:
            size = sizes.get(group, 0)
            rows.append(
                [
                    *_shown(_labels(group)),
                    _cut(NONE, None) if row["value"] is None else _cut(row["value"], row["chars"]),
                    f"{row['traces']:,}",
                    _percent(row["traces"] / size),
                ]
            )
            continue
        if group not in rest:
            rest[group] = [len(rows), 0, 0]
            rows.append(None)
        rest[group][1] += 1
        rest[group][2] += row["traces"]
    for group, (place, values, traces) in rest.items():
        size = sizes.get(group, 0)
        rows[place] = [
            *_shown(_labels(group)),
            f"{plural(values, 'other value')}, together",
            f"{traces:,}",
            _percent(traces / size),
        ]
    return Table(
        f"The values of `{name}` {over}{grouped}: how many traces hold each (the {MOST_VALUES} most frequent "
        f"{'of each group' if by else 'values'}, the others together), and their share of "
        f"{'the group' if by else 'the valid traces'}. {NONE}: the trace does not have the field.",
        [*by, name, "Traces", "Share"],
        rows,
        len(by) + 1,
    )


def _totals(counted: list[dict]) -> list[tuple[str, int]]:
    totals: dict = {}
    for row in counted:
        value = NONE if row["value"] is None else row["value"]
        totals[value] = totals.get(value, 0) + row["traces"]
    return sorted(totals.items(), key=lambda item: (-item[1], item[0]))


def _cells(row: dict, by: list[str]) -> list[str]:
    """A row's group as shown, each field's value whole."""
    return _labels(_group(row, by))


def _group(row: dict, by: list[str]) -> tuple:
    """A row's group: its fields' values as they are (None for a trace without the
    field), which tell groups apart where their text may not (a value holding the
    separator, or written as NONE)."""
    return tuple(row.get(name) for name in by)


def _labels(group: tuple) -> list[str]:
    return [NONE if value is None else str(value) for value in group]


def _shown(values) -> list[str]:
    """Group values as a table cell shows them: as the summary names them, a long one
    already cut there (summary._group), with the characters left out and a digest that
    tells it from others alike; cut again, its count of characters was wrong."""
    return [str(value) for value in values]


def _cut(text: str, chars: int | None) -> str:
    """`text`, the first characters of a value of `chars` characters (as field_counts
    keeps a long one), cut at MAX_SHOWN."""
    chars = len(text) if chars is None else chars
    return text if chars <= MAX_SHOWN else f"{text[:MAX_SHOWN]}… ({chars - MAX_SHOWN:,} characters more)"


def _number(value) -> str:
    """Three significant digits, or the whole number when it has more; no exponent."""
    if value is None:
        return "n/a"
    if not math.isfinite(value):
        return str(value)
    if float(value).is_integer():
        return f"{int(value):,}"
    digits = max(0, 2 - math.floor(math.log10(abs(value))))
    return f"{value:,.{digits}f}"


def _percent(share: float) -> str:
    return f"{100 * share:.1f} %"
