"""Corpus statistics: headline totals, counts per field and cross-tabs, computed with pandas.

Which fields are counted and which cross-tabs make the standard set is the registry's
`statistics` section; without one, every controlled field is counted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pandas as pd

from paperpool.files import csvcells
from paperpool.files.problems import PaperpoolError, suggest
from paperpool.registry import Registry
from paperpool.registry.tables import distinct_values, standard_set, unbounded_axis
from paperpool.rendering import markdown

from .frame import Frame

TOTALS = ("retained", "excluded", "audited")
MULTI_VALUED_NOTE = (
    "Multi-valued fields ({}) count a record once per value, so their counts can add up to more than the number of records."
)


@dataclass
class Stats:
    totals: dict[str, int]
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    crosstabs: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)  # field -> its label
    multi_valued: list[str] = field(default_factory=list)  # fields that count an entry once per value

    def as_json(self) -> dict:
        return {"totals": self.totals, "counts": self.counts, "crosstabs": self.crosstabs, "multi_valued": self.multi_valued}


def totals(frames: dict[str, Frame]) -> dict[str, int]:
    retained, excluded = len(frames["entries"]), len(frames["exclusions"])
    return dict(zip(TOTALS, (retained, excluded, retained + excluded), strict=True))


def count(frame: Frame, name: str) -> dict[str, int]:
    """Records per value of a column, every vocabulary value included (zeros too)."""
    counts = frame.long(name)["value"].value_counts()
    return {str(value): int(counts.get(value, 0)) for value in frame.values_in_order(name, counts.index)}


# Places a cross-tab puts its records in at most: a record is in every cell its values of
# both fields make, so 400 records holding 45 values of each were 810,000 places per table
# (round thirteen: `gaps` wrote 72 MB from 1.6 MB of records, `diff` took minutes). A pool
# of 10,000 entries with a few values of each field makes some 100,000.
MOST_PLACES = 500_000


def crosstab_frame(frame: Frame, rows: str, columns: str, where: str = "") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Counts and cell keys of two columns: one DataFrame of counts, one of key lists,
    both with every vocabulary value as a row or column (`where`: what declares the
    cross-tab, for the error of one past MOST_PLACES)."""
    places = int((frame.long(rows).groupby("key").size() * frame.long(columns).groupby("key").size()).sum())
    if places > MOST_PLACES:
        raise PaperpoolError(
            f"{where or 'the cross-tab'} of {rows} and {columns}: its records fall in {places:,} cells in all (a record is in "
            f"every cell its values of both fields make), more than the {MOST_PLACES:,} a table holds; cross fields whose "
            "records hold fewer values each"
        )
    pairs = frame.long(rows).merge(frame.long(columns), on="key", suffixes=("_row", "_col"))
    row_values = frame.values_in_order(rows, pairs["value_row"])
    col_values = frame.values_in_order(columns, pairs["value_col"])
    cells = pairs.groupby(["value_row", "value_col"])["key"].agg(lambda keys: sorted(set(keys)))
    keys = pd.DataFrame([[cells.get((r, c), []) for c in col_values] for r in row_values], index=row_values, columns=col_values)
    return keys.map(len), keys


def crosstab(frame: Frame, rows: str, columns: str) -> dict[str, dict[str, int]]:
    counts, _ = crosstab_frame(frame, rows, columns)
    return {str(r): {str(c): int(counts.at[r, c]) for c in counts.columns} for r in counts.index}


def compute(registry: Registry, frames: dict[str, Frame], by: str | None = None, vs: str | None = None) -> Stats:
    """The standard set; with `by`, that field's counts; with `by` and `vs`, their cross-tab."""
    stats = Stats(totals(frames))
    if by is None:
        plan = standard_set(registry)
        counts, crosstabs = plan["counts"], plan["crosstabs"]
    elif vs is None:
        counts, crosstabs = [(field_kind(frames, by), by)], []
    else:
        kind = field_kind(frames, by)
        if vs not in frames[kind].columns:
            field_kind(frames, vs)  # unknown anywhere: say so
            raise PaperpoolError(
                f"'{by}' and '{vs}' are fields of different record kinds; cross-tabulate two fields of the entries or two of the exclusions"
            )
        unbounded = [name for name in (by, vs) if distinct_values(registry, kind, name) is None]
        if unbounded:  # as in the registry's cross-tabs: a table of two free-text fields has the pool's size squared
            raise PaperpoolError(unbounded_axis(registry, kind, unbounded[0], "cross-tab"))
        counts, crosstabs = [], [(kind, by, vs)]
    for kind, name in counts:
        label = f"{kind}.{name}" if name in stats.counts else name  # an exclusion field named like an entry field
        stats.counts[label] = count(frames[kind], name)
        _describe(stats, label, frames[kind], name)
    for kind, rows, columns in crosstabs:
        stats.crosstabs[f"{rows} x {columns}"] = crosstab(frames[kind], rows, columns)
        for name in (rows, columns):
            _describe(stats, name, frames[kind], name)
    return stats


def _describe(stats: Stats, label: str, frame: Frame, name: str) -> None:
    column = frame.columns[name]
    stats.labels.setdefault(label, column.label)
    if column.multi and label not in stats.multi_valued:
        stats.multi_valued.append(label)


def field_kind(frames: dict[str, Frame], name: str) -> str:
    """The record kind that has the field (entries first); PaperpoolError naming the fields if none."""
    for kind, frame in frames.items():
        if name in frame.columns:
            return kind
    known = sorted(set().union(*(frame.columns for frame in frames.values())))
    raise PaperpoolError(f"unknown field '{name}'; {suggest(name, known, 'fields are: ' + ', '.join(known))}")


# ---------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------


def to_json(stats: Stats) -> str:
    return json.dumps(stats.as_json(), ensure_ascii=False, indent=2) + "\n"


def to_csv(stats: Stats) -> str:
    """One tidy table: table, row, column, count (column empty for counts and totals)."""
    rows = [["totals", name, "", n] for name, n in stats.totals.items()]
    rows += [[name, value, "", n] for name, counts in stats.counts.items() for value, n in counts.items()]
    rows += [
        [name, row, col, n] for name, table in stats.crosstabs.items() for row, cells in table.items() for col, n in cells.items()
    ]
    return csvcells.table(rows, ["table", "row", "column", "count"])


def to_markdown(stats: Stats) -> str:
    parts = ["## Totals", "", markdown.table(["records", "count"], list(stats.totals.items()), ["l", "r"])]
    if stats.multi_valued:
        parts += ["", MULTI_VALUED_NOTE.format(", ".join(markdown.text(name) for name in stats.multi_valued))]
    for name, counts in stats.counts.items():  # the registry's labels are text, like the records'
        parts += ["", f"## {markdown.text(name)}: {markdown.text(stats.labels[name])}", "", _count_table(name, counts)]
    for name, table in stats.crosstabs.items():
        parts += ["", f"## {markdown.text(name)}", "", _crosstab_table(name, table)]
    return "\n".join(parts) + "\n"


def _count_table(name: str, counts: dict[str, int]) -> str:
    return markdown.table([markdown.text(name), "count"], [[markdown.text(v), n] for v, n in counts.items()], ["l", "r"])


def _crosstab_table(name: str, table: dict[str, dict[str, int]]) -> str:
    columns = list(next(iter(table.values()), {}))
    rows = [[markdown.text(row)] + [cells[c] for c in columns] for row, cells in table.items()]
    return markdown.table([markdown.text(name)] + [markdown.text(c) for c in columns], rows, ["l"] + ["r"] * len(columns))


FORMATS = {"markdown": to_markdown, "json": to_json, "csv": to_csv}
