"""The registry's `site` section: which fields get axis pages, what the faceted browsers
filter on, which charts the statistics page draws. The site registers it with the
registry (SECTION; its schema is registry-site.schema.json beside this module), which
checks it when the registry is read, so a typo is a validation problem with its line,
not a failed build.

Each setting is described by a small shape: the record kind whose field it names and
what that field must be (a controlled field for pages and filters, a number for a
range, a date for "recently added").
"""

from __future__ import annotations

from dataclasses import dataclass

from paperpool.files.problems import Problem

from ..registry import KEY_RE, Registry, Section, registry_problem
from ..registry.columns import columns_for
from ..registry.tables import (
    Table,
    distinct_values,
    unbounded_axis,
    unknown_field,
    unknown_keys,
)
from . import documentation, paths

NAME = "site"


@dataclass(frozen=True)
class FieldShape:
    kind: str  # "entries" or "exclusions"
    want: str  # "any", "controlled" (has a vocabulary), "number" or "date"
    many: bool = False


@dataclass(frozen=True)
class Count:
    pass


def _entries(want: str, many: bool = False) -> FieldShape:
    return FieldShape("entries", want, many)


def _exclusions(want: str, many: bool = False) -> FieldShape:
    return FieldShape("exclusions", want, many)


# The settings that name fields (the schema checks the others, such as the flow's
# `sequential` and `title`).
SHAPE = {
    "axes": _entries("controlled", many=True),
    "home_axes": _entries("controlled", many=True),
    "browser": {"facets": _entries("controlled", many=True), "range": _entries("number"), "columns": _entries("any", many=True)},
    "exclusion_log": {
        "facets": _exclusions("controlled", many=True),
        "columns": _exclusions("any", many=True),
        "flow": {"stage": _exclusions("controlled"), "reason": _exclusions("controlled")},
    },
    "recent": {"field": _entries("date"), "limit": Count()},
}
CHART_SHAPES = {
    "bars": {"field": _entries("controlled")},
    "stacked_bars": {"x": _entries("any"), "stack": _entries("controlled")},
    "heatmap": {"rows": _entries("controlled"), "columns": _entries("controlled")},
}
# A chart with a date as x counts it per period (sitegen/periods.py): at most this many
# bars, whatever the dates, which is what the limits on tables count it as.
MAX_PERIODS = 36
MAX_AXIS_PAGES = 1_000  # the values of all the site's axes together, each a page
CHART_KEYS = {"id", "type", "title"}
CHART_OPTIONS = {"stacked_bars": {"cumulative"}}  # settings of a type that name no field
WANTED = {"controlled": "a field with a vocabulary", "number": "a number field", "date": "a date field"}


def check_site(registry: Registry) -> list[Problem]:
    """The fields the `site` section names, on a section of the schema's shape."""
    site = registry.section(NAME)
    problems = []
    columns = {kind: columns_for(registry, kind) for kind in registry.fields}
    checker = _Checker(registry, columns, problems)
    for key, shape in SHAPE.items():
        if key in site:
            checker.check((NAME, key), site[key], shape)
    checker.check_charts(site.get("charts", []))
    axes = site.get("axes") or []
    for index, name in enumerate(site.get("home_axes") or []):
        if name not in axes:
            problems.append(
                registry_problem(
                    registry.document,
                    (NAME, "home_axes", index),
                    f"'{name}' is not one of site.axes; add it there or remove it here",
                )
            )
    tables = [table["id"] for table in registry.gaps.get("tables", [])]
    problems += _one_page_each(registry, ("gaps", "tables"), tables, paths.gap_table, ("id",), "table")
    problems += _one_page_each(registry, (NAME, "axes"), axes, paths.axis, (), "axis")
    return problems + _axis_pages(registry, site) + documentation.problems(registry)


def _axis_pages(registry: Registry, site: dict) -> list[Problem]:
    """Each value of each axis is a page: at most MAX_AXIS_PAGES in all (150 vocabularies
    of 200 values, a 1 MB registry, made a site of 30,300 pages, 1.7 GB and three minutes).
    Without site.axes, every controlled field of the entries is an axis."""
    axes = [name for name in effective(registry)["axes"] if name in columns_for(registry, "entries")]
    pages = sum(distinct_values(registry, "entries", name) or 0 for name in axes)
    if pages <= MAX_AXIS_PAGES:
        return []
    where = (NAME, "axes") if "axes" in site else ("entry_fields",)
    return [
        registry_problem(
            registry.document,
            where,
            f"the site's axes ({', '.join(axes[:5])}{', ...' if len(axes) > 5 else ''}) "
            f"hold {pages:,} values, a page each, over {MAX_AXIS_PAGES:,}; "
            "name fewer axes in site.axes",
        )
    ]


def _one_page_each(registry: Registry, where: tuple, names: list, page, inside: tuple, what: str) -> list[Problem]:
    """Each of `names` gets a page of its own: two whose names give the same file (`page`:
    name -> path) would have one page silently replace the other, and the links to the
    first lead to the second."""
    problems, taken = [], {}
    for index, name in enumerate(names):
        path = page(str(name))
        if path in taken and taken[path][1] != name:
            first, other = taken[path]
            problems.append(
                registry_problem(
                    registry.document,
                    where + (index, *inside),
                    f"'{name}' would have the page {path}, as {what} '{other}' ({'.'.join(map(str, where))}[{first}]) "
                    f"has; give it a name that differs in its letters or digits",
                )
            )
        taken.setdefault(path, (index, name))
    return problems


class _Checker:
    def __init__(self, registry: Registry, columns: dict, problems: list[Problem]):
        self.registry, self.columns, self.problems = registry, columns, problems

    def problem(self, path: tuple, message: str) -> None:
        self.problems.append(registry_problem(self.registry.document, path, message))

    def check(self, path: tuple, value, shape) -> None:
        if isinstance(shape, dict):
            for key, inner in shape.items():
                if key in value:
                    self.check(path + (key,), value[key], inner)
        elif isinstance(shape, Count):
            return  # a whole number of 1 or more, as the schema says
        elif shape.many:
            for index, name in enumerate(value):
                self.check_field(path + (index,), name, shape)
        else:
            self.check_field(path, value, shape)

    def check_field(self, path: tuple, name: str, shape: FieldShape) -> None:
        columns = self.columns[shape.kind]
        unknown = unknown_field(self.registry, path, name, columns, shape.kind)
        if unknown:
            self.problems += unknown
            return
        column = columns[name]
        fits = {
            "any": True,
            "controlled": column.vocabulary_name is not None,
            "number": column.kind == "number",
            "date": column.kind == "date",
        }[shape.want]
        if not fits:
            self.problem(path, f"'{name}' is not {WANTED[shape.want]}; name {WANTED[shape.want]}")

    def check_charts(self, charts: list) -> None:
        seen = set()
        for index, chart in enumerate(charts):
            path = (NAME, "charts", index)
            kind = chart["type"]
            if kind not in CHART_SHAPES or not KEY_RE.match(chart["id"]):
                self.problem(
                    path,
                    f"a chart needs an id (lower-case letters, digits and dashes: it names the chart's file) and a type ({', '.join(CHART_SHAPES)})",
                )
                continue
            if chart["id"] in seen:
                self.problem(path + ("id",), f"a second chart with id '{chart['id']}'; give each chart its own id")
            seen.add(chart["id"])
            shape = CHART_SHAPES[kind]
            self.problems += unknown_keys(self.registry, path, chart, CHART_KEYS | set(shape) | CHART_OPTIONS.get(kind, set()))
            missing = [key for key in shape if key not in chart]
            for key in missing:
                self.problem(path, f"a {kind} chart needs `{key}`")
            before = len(self.problems)
            for key, inner in shape.items():
                if key in chart:
                    self.check(path + (key,), chart[key], inner)
            if kind == "stacked_bars" and not missing and len(self.problems) == before:
                self.check_x(path, chart)

    def check_x(self, path: tuple, chart: dict) -> None:
        """A stacked bar chart's x: a field whose values the registry fixes, or a date
        (counted per period); counted up (cumulative) only along dates or numbers."""
        column = self.columns["entries"][chart["x"]]
        if column.kind != "date" and distinct_values(self.registry, "entries", chart["x"]) is None:
            self.problem(path + ("x",), unbounded_axis(self.registry, "entries", chart["x"], "chart") + ", or a date field")
        elif chart.get("cumulative") and column.kind not in ("date", "number"):
            self.problem(
                path + ("cumulative",),
                f"counts up along x, but '{chart['x']}' is neither a date nor a number "
                "field; remove `cumulative`, or use such a field as x",
            )


def effective(registry: Registry) -> dict:
    """The `site` section with a default for each setting it leaves out, so that a
    registry without one still gets a complete site: an axis page, a filter and a bar
    chart for each declared controlled field, a year range if there is a number field,
    "recently added" by the first date field."""
    site = dict(registry.section(NAME))
    entries = columns_for(registry, "entries")
    exclusions = columns_for(registry, "exclusions")
    declared = registry.fields["entries"]
    controlled = [name for name, column in entries.items() if column.vocabulary_name and name in declared]
    site.setdefault("axes", controlled)
    site.setdefault("home_axes", site["axes"][:3])
    numbers = [name for name, column in entries.items() if column.kind == "number" and name in declared]
    browser = dict(site.get("browser") or {})
    browser.setdefault("facets", site["axes"])
    browser.setdefault("columns", site["axes"][:4])
    if numbers:
        browser.setdefault("range", numbers[0])
    site["browser"] = browser
    log = dict(site.get("exclusion_log") or {})
    excluded_controlled = [
        name for name, column in exclusions.items() if column.vocabulary_name and name in registry.fields["exclusions"]
    ]
    log.setdefault("facets", excluded_controlled)
    log.setdefault("columns", excluded_controlled)
    site["exclusion_log"] = log
    dates = [name for name, column in entries.items() if column.kind == "date" and name in declared]
    if dates:
        site.setdefault("recent", {"field": dates[0]})
    site.setdefault(
        "charts",
        [
            {
                "id": f"per-{name.replace('_', '-').replace('.', '-')}",
                "type": "bars",
                "field": name,
                "title": f"Entries per {entries[name].label.lower()}",
            }
            for name in site["home_axes"]
        ],
    )
    return site


# The charts that are tables: their rows' and columns' settings.
CHART_AXES = {"heatmap": ("rows", "columns"), "stacked_bars": ("x", "stack")}


def tables(registry: Registry) -> list[Table]:
    """The site's tables, within the registry's limits on cells: the heatmaps, stacked
    bars and the exclusion log's screening flow."""
    site = registry.section(NAME)
    found = []
    entries = columns_for(registry, "entries")
    for index, chart in enumerate(site.get("charts", [])):
        axes = CHART_AXES.get(chart.get("type"))
        if axes:
            # a date axis has a bar per period, at most MAX_PERIODS of them
            found.append(
                (
                    (NAME, "charts", index),
                    "chart",
                    [MAX_PERIODS if entries[chart[axis]].kind == "date" else ("entries", chart[axis]) for axis in axes],
                )
            )
    flow = (site.get("exclusion_log") or {}).get("flow")
    if flow:
        found.append(
            ((NAME, "exclusion_log", "flow"), "screening flow", [("exclusions", flow["stage"]), ("exclusions", flow["reason"])])
        )
    return found


SECTION = Section(NAME, __package__, "registry-site.schema.json", check=check_site, tables=tables)
