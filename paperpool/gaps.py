"""Gap tables: the empty and sparse cells of the taxonomy, each cell with its entries.

The tables are declared in the registry's `gaps` section. A table's rows are the
values of one field. Its columns are either the values of another field (a cross-tab)
or a list of named columns, each counting the records whose FIELD (default: the rows'
field) holds the row's value and that match an optional `where` query.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from . import markdown
from .frame import Frame
from .registry import Registry
from .registry.columns import NONE
from .registry.query import parse
from .registry.tables import sparse_at_most
from .stats import crosstab_frame


@dataclass
class Cell:
    keys: list[str]
    mark: str  # "empty", "sparse" or ""

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
        _, keys = crosstab_frame(frame, rows, body["columns"])
        # a record with no value on an axis, or one that is not a cell of the taxonomy
        # (in_gaps: false, such as "not applicable"), is in no cell
        keys = keys.loc[cell_values(registry, frame, rows, keys.index), cell_values(registry, frame, body["columns"], keys.columns)]
        table.columns = [(str(c), _label(registry, frame, body["columns"], c)) for c in keys.columns]
        cells = {r: {str(c): keys.at[r, c] for c in keys.columns} for r in keys.index}
    else:
        columns = [_column(item) for item in body["columns"]]
        table.columns = [(c.id, c.label) for c in columns]
        row_values = cell_values(registry, frame, rows, frame.values_in_order(rows, []))
        cells = {r: {} for r in row_values}
        for column in columns:
            selected = set(frame.select(parse(column.where, frame.columns).tree))
            long = frame.long(column.field or rows)
            long = long[long["key"].isin(selected)]
            by_value = long.groupby("value")["key"].agg(lambda keys: sorted(set(keys)))
            for r in row_values:
                cells[r][column.id] = by_value.get(r, [])
    for r, row in cells.items():
        table.row_labels[str(r)] = _label(registry, frame, rows, r)
        table.cells[str(r)] = {c: Cell(list(keys), _mark(len(keys), limit)) for c, keys in row.items()}
    return table


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
    document = {"sparse_at_most": limit, "tables": [{
        "id": t.id, "title": t.title, "note": t.note, "rows": t.rows, "row_labels": t.row_labels,
        "columns": [{"id": c, "label": label} for c, label in t.columns],
        "cells": {r: {c: {"count": cell.count, "mark": cell.mark, "keys": cell.keys} for c, cell in row.items()}
                  for r, row in t.cells.items()},
        "empty": len(t.marked("empty")), "sparse": len(t.marked("sparse")),
    } for t in tables]}
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def to_markdown(tables: list[GapTable], limit: int) -> str:
    parts = [f"Cells with no entry are marked empty; with {sparse_range(limit)}, sparse (the registry's gaps.sparse_at_most)."]
    for t in tables:
        parts += ["", f"## {markdown.text(t.title)}", ""]
        if t.note:
            parts += [markdown.text(t.note), ""]
        header = [markdown.text(t.rows)] + [markdown.text(c) for c, _ in t.columns]
        rows = [[markdown.text(r)] + [_cell_text(cell) for cell in row.values()] for r, row in t.cells.items()]
        parts.append(markdown.table(header, rows, ["l"] + ["r"] * len(t.columns)))
        counted = f"{len(t.marked('empty'))} empty and {len(t.marked('sparse'))} sparse of {len(t.cells) * len(t.columns)} cells."
        parts += ["", f"{counted} Entries per cell:", ""]
        for r, row in t.cells.items():
            for c, cell in row.items():
                if cell.count:
                    parts.append(f"- {markdown.text(r)} x {markdown.text(c)} ({cell.count}): {', '.join(cell.keys)}")
    return "\n".join(parts) + "\n"


def _cell_text(cell: Cell) -> str:
    return f"{cell.count} {cell.mark}".strip()


FORMATS = {"markdown": to_markdown, "json": to_json}
