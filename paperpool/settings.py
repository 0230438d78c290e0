"""The registry's analysis settings: which fields `stats` counts by default, which gap
tables `gaps` draws. Checked when the registry is read, against the columns each
setting names, so that a typo is a validation problem with its line.
"""

from __future__ import annotations

from .columns import check_combined, columns_for, is_name_list
from .problems import Problem, suggest
from .query import QueryError, parse
from .registry import Registry, registry_problem

DEFAULT_SPARSE = 2


def check_settings(registry: Registry) -> list[Problem]:
    problems = check_combined(registry)
    combined = registry.statistics.get("combined")
    for name, body in combined.items() if isinstance(combined, dict) else []:
        if isinstance(body, dict):
            problems += unknown_keys(registry, ("statistics", "combined", name), body, COMBINED_KEYS)
    problems += unknown_keys(registry, ("display",), registry.display, DISPLAY_KEYS)
    return problems or check_statistics(registry) + check_gaps(registry) + check_site(registry) + check_traces(registry)


def check_traces(registry: Registry) -> list[Problem]:
    """The traces section is the trace package's to read and check."""
    from .traces.mapping import check_registry

    return check_registry(registry)


def check_site(registry: Registry) -> list[Problem]:
    from . import bibimport, bibwrite  # all build on this module's helpers
    from .sitegen.settings import check_site

    return check_site(registry) + bibwrite.check_settings(registry) + bibimport.check_settings(registry)


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


STATISTICS_KEYS = {"combined", "entries", "exclusions"}
COMBINED_KEYS = {"label", "fields", "applies_to"}
DISPLAY_KEYS = {"group_by", "tags"}
PLAN_KEYS = {"counts", "crosstabs"}
GAPS_KEYS = {"sparse_at_most", "tables"}
TABLE_KEYS = {"id", "title", "note", "rows", "columns"}
COLUMN_KEYS = {"id", "label", "field", "where"}


def check_statistics(registry: Registry) -> list[Problem]:
    """Problems in the registry's statistics section: every field it names must exist."""
    problems = unknown_keys(registry, ("statistics",), registry.statistics, STATISTICS_KEYS)
    for kind in registry.fields:
        settings = registry.statistics.get(kind)
        if settings is None:
            continue
        path = ("statistics", kind)
        if not isinstance(settings, dict):
            problems.append(registry_problem(registry.document, path, "give `counts: [FIELD, ...]` and `crosstabs: [[ROWS, COLUMNS], ...]`"))
            continue
        problems += unknown_keys(registry, path, settings, PLAN_KEYS)
        columns = columns_for(registry, kind)
        counts, crosstabs = settings.get("counts", []), settings.get("crosstabs", [])
        if not is_name_list(counts):
            problems.append(registry_problem(registry.document, path + ("counts",), "list the fields to count: [FIELD, ...]"))
            counts = []
        if not isinstance(crosstabs, list):
            problems.append(registry_problem(registry.document, path + ("crosstabs",), "list the cross-tabs: [[ROWS, COLUMNS], ...]"))
            crosstabs = []
        for index, name in enumerate(counts):
            problems += unknown_field(registry, path + ("counts", index), name, columns, kind)
        for index, pair in enumerate(crosstabs):
            if not (is_name_list(pair) and len(pair) == 2):
                problems.append(registry_problem(registry.document, path + ("crosstabs", index), "a cross-tab is a pair: [ROWS, COLUMNS]"))
                continue
            for name in pair:
                problems += unknown_field(registry, path + ("crosstabs", index), name, columns, kind)
    return problems


def check_gaps(registry: Registry) -> list[Problem]:
    """Problems in the registry's gaps section: fields, columns and where-queries."""
    problems = unknown_keys(registry, ("gaps",), registry.gaps, GAPS_KEYS)
    columns = columns_for(registry, "entries")
    limit = registry.gaps.get("sparse_at_most", DEFAULT_SPARSE)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        problems.append(registry_problem(registry.document, ("gaps", "sparse_at_most"), "give a whole number of 0 or more, e.g. `sparse_at_most: 2`"))
    tables = registry.gaps.get("tables", [])
    if not isinstance(tables, list):
        return problems + [registry_problem(registry.document, ("gaps", "tables"), "list the gap tables: - {id, title, rows, columns}")]
    seen_ids = set()
    for index, body in enumerate(tables):
        path = ("gaps", "tables", index)
        if not isinstance(body, dict) or "id" not in body or "rows" not in body or "columns" not in body:
            problems.append(registry_problem(registry.document, path, "a gap table needs id, rows (a field) and columns (a field or a list)"))
            continue
        problems += unknown_keys(registry, path, body, TABLE_KEYS)
        if str(body["id"]) in seen_ids:
            problems.append(registry_problem(registry.document, path + ("id",), f"a second table with id '{body['id']}'; give each table its own id"))
        seen_ids.add(str(body["id"]))
        if not isinstance(body["rows"], str) or not isinstance(body["columns"], (str, list)):
            problems.append(registry_problem(registry.document, path, "rows names a field; columns names a field or lists columns"))
            continue
        if unknown_field(registry, path + ("rows",), body["rows"], columns, "entries"):
            problems += unknown_field(registry, path + ("rows",), body["rows"], columns, "entries")
            continue
        if columns[body["rows"]].vocabulary_name is None:
            problems.append(registry_problem(registry.document, path + ("rows",), f"'{body['rows']}' has no vocabulary, so it has no rows to draw; use a choice field"))
            continue
        if isinstance(body["columns"], str):
            unknown = unknown_field(registry, path + ("columns",), body["columns"], columns, "entries")
            if unknown:
                problems += unknown
            elif columns[body["columns"]].vocabulary_name is None:
                problems.append(registry_problem(registry.document, path + ("columns",), f"'{body['columns']}' has no vocabulary; use a choice field"))
            continue
        problems += _check_gap_columns(registry, path, body, columns)
    return problems


def _check_gap_columns(registry: Registry, path: tuple, body: dict, columns: dict) -> list[Problem]:
    problems, seen_ids = [], set()
    for position, item in enumerate(body["columns"]):
        item_path = path + ("columns", position)
        if (not isinstance(item, dict) or not isinstance(item.get("label"), str)
                or not isinstance(item.get("field") or "", str) or not isinstance(item.get("where", ""), (str, type(None)))):
            problems.append(registry_problem(registry.document, item_path, "a column needs a label, and may name a field and a where query, all text"))
            continue
        problems += unknown_keys(registry, item_path, item, COLUMN_KEYS)
        column_id = str(item.get("id") or item["label"])
        if column_id in seen_ids:
            problems.append(registry_problem(registry.document, item_path, f"a second column with id '{column_id}'; give each column its own id"))
        seen_ids.add(column_id)
        name = item.get("field") or body["rows"]
        if name not in columns or columns[name].vocabulary_name != columns[body["rows"]].vocabulary_name:
            problems.append(registry_problem(registry.document, item_path + ("field",),
                                     f"'{name}' must be a field with the same values as the rows' field '{body['rows']}'"))
        try:
            parse(item.get("where") or "", columns)
        except QueryError as exc:
            problems.append(registry_problem(registry.document, item_path + ("where",), str(exc)))
    return problems


def unknown_keys(registry: Registry, path: tuple, body: dict, allowed: set[str]) -> list[Problem]:
    return [registry_problem(registry.document, path + (key,), f"unknown setting '{key}'; {_did_you_mean(str(key), allowed)}")
            for key in body if key not in allowed]


def unknown_field(registry: Registry, path: tuple, name: str, columns: dict, kind: str) -> list[Problem]:
    if name in columns:
        return []
    return [registry_problem(registry.document, path, f"unknown field '{name}' of the {kind}; {_did_you_mean(name, columns)}")]


def _did_you_mean(name: str, known) -> str:
    return suggest(name, known, f"use one of {', '.join(sorted(known))}")
