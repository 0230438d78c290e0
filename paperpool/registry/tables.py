"""The tables the registry declares: which fields `stats` counts by default and
cross-tabulates, which gap tables `gaps` draws, and the limit on how many cells all the
tables (the features' too: the site's charts) may have. Checked when the registry is
read, against the columns each setting names, so that a typo is a problem with its line.
"""

from __future__ import annotations

import datetime as dt

from paperpool.files.problems import Problem, suggest

from .columns import columns_for
from .model import Registry, registry_problem, resolve_spec
from .query import QueryError, parse

DEFAULT_SPARSE = 2


def standard_set(registry: Registry) -> dict:
    """{"counts": [(kind, column)], "crosstabs": [(kind, rows, columns)]}, from the registry;
    without a statistics section, every controlled field of each kind is counted."""
    plan = {"counts": [], "crosstabs": []}
    for kind in registry.fields:
        settings = registry.statistics.get(kind) or {}
        columns = columns_for(registry, kind)
        default = [name for name, c in columns.items() if (c.vocabulary_name or c.kind == "number") and "." not in name]
        plan["counts"] += [(kind, name) for name in settings.get("counts", default)]
        plan["crosstabs"] += [(kind, *pair) for pair in settings.get("crosstabs", [])]
    return plan


def sparse_at_most(registry: Registry) -> int:
    return int(registry.gaps.get("sparse_at_most", DEFAULT_SPARSE))


# How many cells one gap table, cross-tab or chart may have (50 values by 50), and all
# of them together: every command that shows them, and the site's pages, grow with the
# cells (a build takes about 0.7 ms more per cell), not with the registry's few lines.
MAX_TABLE_CELLS = 2_500
MAX_CELLS = 10_000
# What an axis of a table may be: a field whose values the registry fixes. Any other
# field (a title, the authors, a key, a date) has as many values as the records, and a
# table of two such fields as many cells as records squared. (A count, of one field, has
# a row per value the records hold: any field may be counted.)
BOUNDED_AXES = "fields with a vocabulary, true/false fields or whole numbers with min and max"


def check_statistics(registry: Registry) -> list[Problem]:
    """Problems in the registry's statistics section: every field it names must exist."""
    problems = []
    for kind in registry.fields:
        settings = registry.statistics.get(kind) or {}
        path = ("statistics", kind)
        columns = columns_for(registry, kind)
        for index, name in enumerate(settings.get("counts", [])):
            problems += unknown_field(registry, path + ("counts", index), name, columns, kind)
        for index, pair in enumerate(settings.get("crosstabs", [])):
            for name in pair:
                problems += unknown_field(registry, path + ("crosstabs", index), name, columns, kind)
    return problems


def check_gaps(registry: Registry) -> list[Problem]:
    """Problems in the registry's gaps section: fields, columns and where-queries."""
    problems = []
    columns = columns_for(registry, "entries")
    seen_ids = set()
    for index, body in enumerate(registry.gaps.get("tables", [])):
        path = ("gaps", "tables", index)
        if body["id"] in seen_ids:
            problems.append(
                registry_problem(
                    registry.document, path + ("id",), f"a second table with id '{body['id']}'; give each table its own id"
                )
            )
        seen_ids.add(body["id"])
        if unknown_field(registry, path + ("rows",), body["rows"], columns, "entries"):
            problems += unknown_field(registry, path + ("rows",), body["rows"], columns, "entries")
            continue
        if columns[body["rows"]].vocabulary_name is None:
            problems.append(
                registry_problem(
                    registry.document,
                    path + ("rows",),
                    f"'{body['rows']}' has no vocabulary, so it has no rows to draw; use a choice field",
                )
            )
            continue
        if isinstance(body["columns"], str):
            unknown = unknown_field(registry, path + ("columns",), body["columns"], columns, "entries")
            if unknown:
                problems += unknown
            elif columns[body["columns"]].vocabulary_name is None:
                problems.append(
                    registry_problem(
                        registry.document, path + ("columns",), f"'{body['columns']}' has no vocabulary; use a choice field"
                    )
                )
            continue
        problems += _check_gap_columns(registry, path, body, columns)
    return problems


# A table: (the path of keys declaring it, what it is, [rows, columns]), each axis a
# (kind, field) pair or the number of a gap table's named columns.
Table = tuple[tuple, str, list]


def check_sizes(registry: Registry, more: list[Table] = ()) -> list[Problem]:
    """Each table (gap table, cross-tab, heatmap, stacked bars, screening flow) on fields
    whose values the registry fixes, within MAX_TABLE_CELLS, all of them within MAX_CELLS:
    the registry's one line `columns: FIELD` can ask for a million cells, and a cross-tab
    of two free-text fields for as many as the records squared. `more`: the tables the
    features' sections declare."""
    problems, total = [], 0
    for path, what, axes in _tables(registry) + list(more):
        sizes = [axis if isinstance(axis, int) else distinct_values(registry, *axis) for axis in axes]
        if None in sizes:
            problems.append(registry_problem(registry.document, path, unbounded_axis(registry, *axes[sizes.index(None)], what)))
            continue
        rows, columns = sizes
        cells = rows * columns
        if cells > MAX_TABLE_CELLS:
            problems.append(
                registry_problem(
                    registry.document,
                    path,
                    f"has {rows:,} rows x {columns:,} columns = {cells:,} cells, "
                    f"over the limit of {MAX_TABLE_CELLS:,}; split it, or use fields with fewer values",
                )
            )
        elif total <= MAX_CELLS < total + cells:
            problems.append(
                registry_problem(
                    registry.document,
                    path,
                    f"brings the gap tables, cross-tabs and charts to {total + cells:,} "
                    f"cells, over the limit of {MAX_CELLS:,} together; remove or narrow some of them",
                )
            )
        total += cells
    return problems


def distinct_values(registry: Registry, kind: str, name: str) -> int | None:
    """How many values a column can hold, as the registry fixes them: its vocabulary's
    (true and false for a bool), or a whole number's from min to max; None for any other."""
    column = columns_for(registry, kind)[name]
    if column.vocabulary is not None:
        return len(column.vocabulary)
    spec = resolve_spec(registry.fields[kind], name)
    if column.kind == "number" and spec is not None and spec.min is not None and spec.max is not None:
        top = dt.date.today().year + 1 if spec.max == "next_year" else spec.max
        return max(top - spec.min + 1, 0)
    return None


def unbounded_axis(registry: Registry, kind: str, name: str, what: str = "table") -> str:
    """Why a column cannot be an axis of a table, and what can."""
    number = columns_for(registry, kind)[name].kind == "number"
    reason = f"'{name}' is a whole number without both min and max" if number else f"'{name}' has no vocabulary"
    return (
        f"{reason}, so the {what} would have a row or column for each of its values in the pool, as many as the "
        f"records; use {BOUNDED_AXES}"
    )


def _tables(registry: Registry) -> list[Table]:
    """The gap tables and cross-tabs."""
    found = []
    for index, body in enumerate(registry.gaps.get("tables", [])):
        wide = ("entries", body["columns"]) if isinstance(body["columns"], str) else len(body["columns"])
        found.append((("gaps", "tables", index), "gap table", [("entries", body["rows"]), wide]))
    for kind in registry.fields:
        for index, (rows, wide) in enumerate((registry.statistics.get(kind) or {}).get("crosstabs", [])):
            found.append((("statistics", kind, "crosstabs", index), "cross-tab", [(kind, rows), (kind, wide)]))
    return found


def _check_gap_columns(registry: Registry, path: tuple, body: dict, columns: dict) -> list[Problem]:
    problems, seen_ids = [], set()
    for position, item in enumerate(body["columns"]):
        item_path = path + ("columns", position)
        column_id = str(item.get("id") or item["label"])
        if column_id in seen_ids:
            problems.append(
                registry_problem(
                    registry.document, item_path, f"a second column with id '{column_id}'; give each column its own id"
                )
            )
        seen_ids.add(column_id)
        name = item.get("field") or body["rows"]
        if name not in columns or columns[name].vocabulary_name != columns[body["rows"]].vocabulary_name:
            problems.append(
                registry_problem(
                    registry.document,
                    item_path + ("field",),
                    f"'{name}' must be a field with the same values as the rows' field '{body['rows']}'",
                )
            )
        try:
            parse(item.get("where") or "", columns)
        except QueryError as exc:
            problems.append(registry_problem(registry.document, item_path + ("where",), str(exc)))
    return problems


def unknown_keys(registry: Registry, path: tuple, body: dict, allowed: set[str]) -> list[Problem]:
    return [
        registry_problem(registry.document, path + (key,), f"unknown setting '{key}'; {_did_you_mean(str(key), allowed)}")
        for key in body
        if key not in allowed
    ]


def unknown_field(registry: Registry, path: tuple, name: str, columns: dict, kind: str) -> list[Problem]:
    if name in columns:
        return []
    return [registry_problem(registry.document, path, f"unknown field '{name}' of the {kind}; {_did_you_mean(name, columns)}")]


def _did_you_mean(name: str, known) -> str:
    return suggest(name, known, f"use one of {', '.join(sorted(known))}")
