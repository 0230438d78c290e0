"""The registry's analysis settings: which fields `stats` counts by default, which gap
tables `gaps` draws. Checked when the registry is read, against the columns each
setting names, so that a typo is a validation problem with its line.
"""

from __future__ import annotations

from .columns import check_combined, columns_for, is_name_list
from .problems import Problem
from .query import QueryError, parse
from .registry import REGISTRY_FILE, Registry

DEFAULT_SPARSE = 2


def check_settings(registry: Registry) -> list[Problem]:
    problems = check_combined(registry)
    return problems or check_statistics(registry) + check_gaps(registry)


def standard_set(registry: Registry) -> dict:
    """{"counts": [(kind, column)], "crosstabs": [(kind, rows, columns)]}, from the registry;
    without a statistics section, every controlled field of each kind is counted."""
    plan = {"counts": [], "crosstabs": []}
    for kind in registry.fields:
        settings = registry.statistics.get(kind) or {}
        columns = columns_for(registry, kind)
        default = [name for name, c in columns.items() if (c.vocabulary or c.numeric) and "." not in name]
        plan["counts"] += [(kind, name) for name in settings.get("counts", default)]
        plan["crosstabs"] += [(kind, *pair) for pair in settings.get("crosstabs", [])]
    return plan


def sparse_at_most(registry: Registry) -> int:
    return int(registry.gaps.get("sparse_at_most", DEFAULT_SPARSE))


def check_statistics(registry: Registry) -> list[Problem]:
    """Problems in the registry's statistics section: every field it names must exist."""
    problems = []
    for kind in registry.fields:
        settings = registry.statistics.get(kind)
        if settings is None:
            continue
        path = ("statistics", kind)
        if not isinstance(settings, dict):
            problems.append(_problem(registry, path, "give `counts: [FIELD, ...]` and `crosstabs: [[ROWS, COLUMNS], ...]`"))
            continue
        columns = columns_for(registry, kind)
        counts, crosstabs = settings.get("counts", []), settings.get("crosstabs", [])
        if not is_name_list(counts):
            problems.append(_problem(registry, path + ("counts",), "list the fields to count: [FIELD, ...]"))
            counts = []
        if not isinstance(crosstabs, list):
            problems.append(_problem(registry, path + ("crosstabs",), "list the cross-tabs: [[ROWS, COLUMNS], ...]"))
            crosstabs = []
        for index, name in enumerate(counts):
            if name not in columns:
                problems.append(_problem(registry, path + ("counts", index), f"unknown field '{name}' of the {kind}"))
        for index, pair in enumerate(crosstabs):
            if not (is_name_list(pair) and len(pair) == 2):
                problems.append(_problem(registry, path + ("crosstabs", index), "a cross-tab is a pair: [ROWS, COLUMNS]"))
                continue
            for name in pair:
                if name not in columns:
                    problems.append(_problem(registry, path + ("crosstabs", index), f"unknown field '{name}' of the {kind}"))
    return problems


def check_gaps(registry: Registry) -> list[Problem]:
    """Problems in the registry's gaps section: fields, columns and where-queries."""
    problems = []
    columns = columns_for(registry, "entries")
    limit = registry.gaps.get("sparse_at_most", DEFAULT_SPARSE)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        problems.append(_problem(registry, ("gaps", "sparse_at_most"), "give a whole number of 0 or more, e.g. `sparse_at_most: 2`"))
    tables = registry.gaps.get("tables") or []
    if not isinstance(tables, list):
        return problems + [_problem(registry, ("gaps", "tables"), "list the gap tables: - {id, title, rows, columns}")]
    for index, body in enumerate(tables):
        path = ("gaps", "tables", index)
        if not isinstance(body, dict) or "id" not in body or "rows" not in body or "columns" not in body:
            problems.append(_problem(registry, path, "a gap table needs id, rows (a field) and columns (a field or a list)"))
            continue
        if not isinstance(body["rows"], str) or not isinstance(body["columns"], (str, list)):
            problems.append(_problem(registry, path, "rows names a field; columns names a field or lists columns"))
            continue
        if body["rows"] not in columns:
            problems.append(_problem(registry, path + ("rows",), f"unknown field '{body['rows']}' of the entries"))
            continue
        if isinstance(body["columns"], str):
            if body["columns"] not in columns:
                problems.append(_problem(registry, path + ("columns",), f"unknown field '{body['columns']}' of the entries"))
            continue
        for position, item in enumerate(body["columns"] if isinstance(body["columns"], list) else [None]):
            item_path = path + ("columns", position)
            if (not isinstance(item, dict) or not isinstance(item.get("label"), str)
                    or not isinstance(item.get("field") or "", str) or not isinstance(item.get("where") or "", str)):
                problems.append(_problem(registry, item_path, "a column needs a label, and may name a field and a where query, all text"))
                continue
            name = item.get("field") or body["rows"]
            if name not in columns or columns[name].vocabulary != columns[body["rows"]].vocabulary:
                problems.append(_problem(registry, item_path + ("field",),
                                         f"'{name}' must be a field with the same values as the rows' field '{body['rows']}'"))
            try:
                parse(item.get("where") or "", columns)
            except QueryError as exc:
                problems.append(_problem(registry, item_path + ("where",), str(exc)))
    return problems


def _problem(registry: Registry, path: tuple, message: str) -> Problem:
    return Problem(REGISTRY_FILE, registry.document.line(*path), ".".join(map(str, path)), message)
