"""Gap tables: the empty and sparse cells of the taxonomy, each cell with its entries.

The tables are declared in the registry's `gaps` section. A table's rows are the
values of one field. Its columns are either the values of another field (a cross-tab)
or a list of named columns, each counting the records whose FIELD (default: the rows'
field) holds the row's value and that match an optional `where` query.

A cell with no entry is one of two things. It is empty when every entry has been
assessed on what the cell asks and none lands in it: a gap of the taxonomy. It is not
assessed when some entry could still land in it once judged (its sub-decisions are
not tagged, its strict credit is unassessed): no gap is shown there, only missing
data. A cell marks the entries the survey names as representatives of its row's or its
column's value (the registry's `representatives`): the survey's own placement.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from paperpool.registry import REGISTRY_FILE, Registry
from paperpool.registry.columns import NONE
from paperpool.registry.query import parse
from paperpool.registry.tables import sparse_at_most
from paperpool.rendering import markdown

from .frame import Frame
from .stats import crosstab_frame


@dataclass
class Cell:
    keys: list[str]
    mark: str  # "empty", "not assessed", "sparse" or ""
    unassessed: list[str] = field(default_factory=list)  # entries that could land here once assessed
    representatives: list[str] = field(default_factory=list)  # its entries the survey names as representatives of its values

    @property
    def count(self) -> int:
        return len(self.keys)


@dataclass
class GapColumn:
    id: str
    label: str
    field: str | None = None
    where: str = ""


@dataclass
class GapTable:
    id: str
    title: str
    note: str
    rows: str  # the field whose values are the rows
    columns: list[tuple[str, str]]  # (id, label)
    cells: dict[str, dict[str, Cell]] = field(default_factory=dict)
    row_labels: dict[str, str] = field(default_factory=dict)
    across: str | None = None  # a cross-tab's column field; None for a list of columns

    def marked(self, mark: str) -> list[tuple[str, str]]:
        return [(r, c) for r, cells in self.cells.items() for c, cell in cells.items() if cell.mark == mark]


def sparse_range(limit: int) -> str:
    if limit == 0:
        return "no cell is sparse"
    return "1 entry" if limit == 1 else f"1 to {limit} entries"


def compute(registry: Registry, frames: dict[str, Frame]) -> list[GapTable]:
    limit = sparse_at_most(registry)
    frame = frames["entries"]
    return [_table(registry, frame, body, limit) for body in registry.gaps.get("tables") or []]


def _table(registry: Registry, frame: Frame, body: dict, limit: int) -> GapTable:
    rows = body["rows"]
    table = GapTable(str(body["id"]), str(body.get("title") or body["id"]), str(body.get("note") or ""), rows, [])
    if isinstance(body["columns"], str):
        across = table.across = body["columns"]
        _, keys = crosstab_frame(frame, rows, across, f"{REGISTRY_FILE}: gaps table '{table.id}'")
        # a record with no value on an axis, or one that is not a cell of the taxonomy
        # (in_gaps: false, such as "not applicable"), is in no cell
        keys = keys.loc[cell_values(registry, frame, rows, keys.index), cell_values(registry, frame, across, keys.columns)]
        table.columns = [(str(c), _label(registry, frame, across, c)) for c in keys.columns]
        cells = {r: {str(c): keys.at[r, c] for c in keys.columns} for r in keys.index}
        open_row, open_column = _unassessed(frame, rows), _unassessed(frame, across)
        # each row's and column's candidates once, not once per cell
        row_could = {r: _holding(frame, rows, r) | open_row for r in keys.index}
        column_could = {c: _holding(frame, across, c) | open_column for c in keys.columns}
        could = {r: {str(c): row_could[r] & column_could[c] for c in keys.columns} for r in keys.index}
        placed = {
            r: {
                str(c): set(representatives(registry, frame, rows, r) + representatives(registry, frame, across, c))
                & set(keys.at[r, c])
                for c in keys.columns
            }
            for r in keys.index
        }
    else:
        columns = [_column(item) for item in body["columns"]]
        table.columns = [(c.id, c.label) for c in columns]
        row_values = cell_values(registry, frame, rows, frame.values_in_order(rows, []))
        cells, could, placed = {r: {} for r in row_values}, {r: {} for r in row_values}, {r: {} for r in row_values}
        for column in columns:
            tree = parse(column.where, frame.columns).tree
            selected = set(frame.select(tree))
            possible = set(frame.keys[frame.possible(tree).to_numpy(dtype=bool)])
            long = frame.long(column.field or rows)
            long = long[long["key"].isin(selected)]
            by_value = long.groupby("value")["key"].agg(lambda keys: sorted(set(keys)))
            open_field = _unassessed(frame, column.field or rows)
            for r in row_values:
                cells[r][column.id] = by_value.get(r, [])
                could[r][column.id] = (_holding(frame, column.field or rows, r) | open_field) & possible
                placed[r][column.id] = set(representatives(registry, frame, rows, r)) & set(cells[r][column.id])
    for r, row in cells.items():
        table.row_labels[str(r)] = _label(registry, frame, rows, r)
        table.cells[str(r)] = {c: _cell(list(keys), could[r][c], placed[r][c], limit) for c, keys in row.items()}
    return table


def _cell(keys: list[str], could: set, placed: set, limit: int) -> Cell:
    unassessed = sorted(could - set(keys))
    mark = "not assessed" if not keys and unassessed else _mark(len(keys), limit)
    return Cell(keys, mark, unassessed, sorted(placed))


def _holding(frame: Frame, name: str, value) -> set:
    """The keys of the records whose column holds the value."""
    long = frame.long(name)
    return set(long.loc[long["value"] == value, "key"])


def _unassessed(frame: Frame, name: str) -> set:
    """The keys of the records not assessed on a column."""
    return set(frame.keys[~frame.assessed([name]).to_numpy(dtype=bool)])


def representatives(registry: Registry, frame: Frame, name: str, value) -> list[str]:
    """The keys the survey names as representatives of a column's value, in its order."""
    vocabulary = _vocabulary(registry, frame, name)
    found = vocabulary.get(value) if vocabulary else None
    listed = found.extra.get("representatives") if found else None
    return [key for key in listed if isinstance(key, str)] if isinstance(listed, list) else []


def _column(item: dict) -> GapColumn:
    return GapColumn(str(item.get("id") or item["label"]), str(item["label"]), item.get("field"), item.get("where") or "")


def cell_values(registry: Registry, frame: Frame, name: str, values) -> list:
    """The values that are cells of the taxonomy: vocabulary values not marked in_gaps: false."""
    vocabulary = _vocabulary(registry, frame, name)
    if vocabulary is None:
        return [v for v in values if v != NONE]
    return [v for v in values if vocabulary.get(v) is not None and vocabulary.get(v).extra.get("in_gaps", True)]


def _vocabulary(registry: Registry, frame: Frame, name: str):
    return registry.vocabularies.get(frame.columns[name].vocabulary_name or "")


def _mark(count: int, limit: int) -> str:
    return "empty" if count == 0 else "sparse" if count <= limit else ""


def _label(registry: Registry, frame: Frame, name: str, value) -> str:
    """A value's label from the vocabulary that its column's values come from."""
    vocabulary = _vocabulary(registry, frame, name)
    found = vocabulary.get(value) if vocabulary else None
    return found.label if found else str(value)


# ---------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------


def to_json(tables: list[GapTable], limit: int) -> str:
    document = {
        "sparse_at_most": limit,
        "tables": [
            {
                "id": t.id,
                "title": t.title,
                "note": t.note,
                "rows": t.rows,
                "row_labels": t.row_labels,
                "columns": [{"id": c, "label": label} for c, label in t.columns],
                "cells": {
                    r: {
                        c: {
                            "count": cell.count,
                            "mark": cell.mark,
                            "keys": cell.keys,
                            "unassessed": cell.unassessed,
                            "representatives": cell.representatives,
                        }
                        for c, cell in row.items()
                    }
                    for r, row in t.cells.items()
                },
                "empty": len(t.marked("empty")),
                "not_assessed": len(t.marked("not assessed")),
                "sparse": len(t.marked("sparse")),
            }
            for t in tables
        ],
    }
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def to_markdown(tables: list[GapTable], limit: int) -> str:
    parts = [
        (
            f"A cell with no entry is empty when every entry was assessed on what it asks, and not assessed when some "
            f"entry could still land in it once judged; a cell with {sparse_range(limit)} is sparse (the registry's "
            "gaps.sparse_at_most)."
        )
    ]
    if any(cell.representatives for t in tables for row in t.cells.values() for cell in row.values()):
        parts[0] += " An entry marked * is one the survey names as a representative of its row's or column's value."
    for t in tables:
        parts += ["", f"## {markdown.text(t.title)}", ""]
        if t.note:
            parts += [markdown.text(t.note), ""]
        header = [markdown.text(t.rows)] + [markdown.text(c) for c, _ in t.columns]
        rows = [[markdown.text(r)] + [_cell_text(cell) for cell in row.values()] for r, row in t.cells.items()]
        parts.append(markdown.table(header, rows, ["l"] + ["r"] * len(t.columns)))
        counted = (
            f"{len(t.marked('empty'))} empty, {len(t.marked('not assessed'))} not assessed and "
            f"{len(t.marked('sparse'))} sparse of {len(t.cells) * len(t.columns)} cells."
        )
        parts += ["", f"{counted} Entries per cell:", ""]
        for r, row in t.cells.items():
            for c, cell in row.items():
                if cell.count:
                    listed = ", ".join(key + ("*" if key in cell.representatives else "") for key in cell.keys)
                    unjudged = f"; {len(cell.unassessed)} more not assessed" if cell.unassessed else ""
                    parts.append(f"- {markdown.text(r)} x {markdown.text(c)} ({cell.count}{unjudged}): {listed}")
    return "\n".join(parts) + "\n"


def _cell_text(cell: Cell) -> str:
    return f"{cell.count} {cell.mark}".strip()


FORMATS = {"markdown": to_markdown, "json": to_json}
