"""The site's pages: which exist, where, and what each template is given.

Every page is a markdown file rendered from a template found by name (the pool's own
templates/site/ first, then paperpool's), so a survey restyles any page by adding a file
of the same name. Entry pages and axis-value pages stay out of the navigation: its size
must not grow with the pool (mkdocs-material renders the whole navigation into each page).
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass, field
from urllib.parse import quote

from paperpool.analysis.gaps import sparse_at_most, sparse_range
from paperpool.analysis.stats import crosstab
from paperpool.analysis.views import EntryView
from paperpool.pool import fileschemas
from paperpool.rendering import markdown, registrydoc

from . import entrypage, paths
from .analysis import SiteAnalysis
from .fieldguide import field_guide
from .figures import Figures

BACKTICKS = re.compile(r"`+")


@dataclass
class Page:
    path: str
    template: str
    title: str  # for the navigation
    context: dict = field(default_factory=dict)
    in_nav: bool = False
    wide: bool = False  # a table that needs the room the table of contents would take


@dataclass
class Group:
    label: str  # "" when the entries are not divided
    entries: list[EntryView]  # the newest LIST_LIMIT of them
    total: int = 0


# A page lists at most this many entries of one group; the browser, filtered to the same
# value, has them all. Keeps a page's size (and the search index's share of it: Zensical
# refuses a page with more than 32,768 words) independent of the pool's.
LIST_LIMIT = 200
# ... and shows the first this many of a long list (a claim's records, a gap cell's
# entries), the rest folded away one click further.
LIST_PREVIEW = 10


def plan(analysis: SiteAnalysis, figures: Figures, intro: str, parts: list[Page]) -> list[Page]:
    """Every generated page, those in the navigation in its order (`parts`: the pages the
    site's parts made, sitegen/parts.py, whose navigation pages come before Contributing)."""
    site = analysis.site
    excluded, dated = shows_exclusions(analysis), bool(recent(analysis))
    pages = [
        Page(
            paths.HOME,
            "site/home.md.j2",
            "Home",
            {
                "intro": intro,
                "axes": [_axis(analysis, name) for name in site.get("home_axes") or []],
                "gaps_summary": _gaps_summary(analysis),
                "about": _about(analysis),
                "exclusion_log": excluded,
                "recent": dated,
            },
            True,
        ),
        Page(paths.BROWSE, "site/browse.md.j2", "Browse", {"dataset": "entries"}, True, wide=True),
    ]
    for name in site.get("axes") or []:
        pages.append(
            Page(paths.axis(name), "site/axis.md.j2", analysis.column_label(name), {"axis": _axis(analysis, name)}, True)
        )
        pages += _value_pages(analysis, name)
    pages += [
        Page(paths.STATISTICS, "site/statistics.md.j2", "Statistics", {"charts": figures.statistics}, True),
        Page(
            paths.GAPS,
            "site/gaps.md.j2",
            "Gaps",
            {"sparse_range": sparse_range(sparse_at_most(analysis.registry))},
            True,
            wide=True,
        ),
        Page(paths.CLAIMS, "site/claims.md.j2", "Claims", {"failing": [o for o in analysis.outcomes if not o.holds]}, True),
    ]
    if excluded:
        pages.append(
            Page(
                paths.EXCLUSIONS,
                "site/exclusions.md.j2",
                "Exclusion log",
                {"dataset": "exclusions", "flow": figures.flow, "breakdown": _exclusion_breakdown(analysis)},
                True,
                wide=True,
            )
        )
    if dated:
        pages.append(Page(paths.RECENT, "site/recent.md.j2", "Recently added", {"recent": recent(analysis)}, True))
    pages.append(
        Page(
            paths.DOWNLOADS,
            "site/downloads.md.j2",
            "Downloads",
            {"csv": [kind for kind in analysis.registry.fields if kind in analysis.registry.csv], "feed": dated},
            True,
        )
    )
    pages += [page for page in parts if page.in_nav]
    pages += [
        Page(paths.CONTRIBUTING, "site/contributing.md.j2", "Contributing", {"guide": field_guide(analysis)}, True),
        Page(
            paths.REGISTRY_REFERENCE,
            "site/registry.md.j2",
            "Registry reference",
            {"reference": registrydoc.markdown(), "schemas": fileschemas.FILES},
            True,
        ),
    ]
    pages += [page for page in parts if not page.in_nav]
    pages += [
        Page(paths.gap_table(table.id), "site/gap_table.md.j2", table.title, {"table": table}, wide=True)
        for table in analysis.gap_tables
    ]
    pages += [
        Page(paths.entry(record.key), "site/entry.md.j2", analysis.views[record.key].title, {"key": record.key})
        for record in analysis.entries
    ]
    return pages


def shows_exclusions(analysis: SiteAnalysis) -> bool:
    """Whether the site has an exclusion log: not for a pool that excludes nothing (a
    paper list kept without screening), whose log would be an empty table and a flow of
    no records."""
    return analysis.totals["excluded"] > 0


def page_context(analysis: SiteAnalysis, page: Page) -> dict:
    """What every template gets besides its own context."""
    context = {
        "a": analysis,
        "survey": analysis.registry.survey,
        "totals": analysis.totals,
        "here": page.path,
        "root": paths.root_of(page.path),
        "paths": paths,
        "list_limit": LIST_LIMIT,
        "list_preview": LIST_PREVIEW,
    }
    if page.template == "site/entry.md.j2":
        key = page.context["key"]
        rows, sections = entrypage.metadata(analysis, analysis.views[key].record, page.path)
        cite = [
            Cite(fmt, name, analysis.citation(key, fmt), paths.entry_download(key, fmt), f"{key}.{fmt}")
            for fmt, name in paths.CITATION_FORMATS.items()
        ]
        context.update(entry=analysis.views[key], rows=rows, sections=sections, cite=cite, coins=analysis.coins(key))
    return context | page.context


@dataclass
class Cite:
    """One citation format of an entry's Cite block."""

    fmt: str  # bib, ris, csljson
    name: str  # BibTeX, RIS, CSL-JSON
    text: str
    download: str  # the file's path in the site
    file_name: str

    @property
    def fence(self) -> str:
        return fence_for(self.text)

    @property
    def language(self) -> str:  # the code block's highlighting
        return {"bib": "bibtex", "csljson": "json"}.get(self.fmt, "text")


@dataclass
class Axis:
    name: str
    label: str
    description: str
    values: list[tuple[str, str, str, int]]  # (id, label, description, entries)
    parent: Axis | None = None  # the level above, in a taxonomy of several (the field's parent_field)
    parents: dict[str, str] = field(default_factory=dict)  # value -> its parent value


def _axis(analysis: SiteAnalysis, name: str, with_parent: bool = True) -> Axis:
    members = analysis.members(name)
    column = analysis.frames["entries"].columns[name]
    vocabulary = analysis.registry.vocabularies[column.vocabulary_name]
    values = [(v, label, description, len(members.get(v, []))) for v, label, description in analysis.values(name)]
    axis = Axis(name, column.label, vocabulary.description, values)
    spec = analysis.registry.fields["entries"].get(name)
    upper = spec.parent_field if spec is not None else None
    if with_parent and upper in analysis.value_paths:  # the level above is an axis of the site: its pages are linked
        axis.parent = _axis(analysis, upper, with_parent=False)
        axis.parents = {value: vocabulary.parent(value) for value, *_ in values}
    return axis


def _value_pages(analysis: SiteAnalysis, name: str) -> list[Page]:
    axis = _axis(analysis, name)
    members = analysis.members(name)
    pages = []
    for value, label, description, _ in axis.values:
        groups = _groups(analysis, name, value, members.get(value, []))
        for group in groups:
            group.total, group.entries = len(group.entries), group.entries[:LIST_LIMIT]
        # the browser's state, not an anchor: written as a plain link the engines do not check
        browse = f"{name}={quote(str(value), safe='')}" if name in analysis.site["browser"]["facets"] else None
        pages.append(
            Page(
                analysis.value_paths[name][value],
                "site/axis_value.md.j2",
                label,
                {"axis": axis, "value": value, "label": label, "description": description, "groups": groups, "browse": browse},
            )
        )
    return pages


def _groups(analysis: SiteAnalysis, name: str, value: str, keys: list[str]) -> list[Group]:
    """The entries holding a value, divided where the column says how they hold it: a
    combined column by the field that holds the value (primary or further family), a
    sub-decision map by its mode (trained or designed)."""
    column = analysis.frames["entries"].columns[name]
    views = analysis.views_of(keys)
    if column.parts:
        return [
            Group(analysis.column_label(part), [v for v in views if value in _as_list(v.record.get(part))])
            for part in column.parts
            if any(value in _as_list(v.record.get(part)) for v in views)
        ]
    if column.map_field and not column.map_mode:
        spec = analysis.registry.fields["entries"][column.map_field]
        modes = analysis.registry.vocabularies[spec.vocabulary].values
        return [
            Group(mode.label, [v for v in views if (v.record.get(column.map_field) or {}).get(value) == mode.id])
            for mode in modes
            if any((v.record.get(column.map_field) or {}).get(value) == mode.id for v in views)
        ]
    return [Group("", views)] if views else []


def _as_list(value) -> list:
    return value if isinstance(value, list) else [value]


def recent(analysis: SiteAnalysis) -> list[EntryView]:
    """The newest entries by the site's `recent.field` (a date): the recently added page
    and the Atom feed, which a pool without such dates does not get."""
    settings = analysis.site.get("recent") or {}
    name = settings.get("field")
    if not name:
        return []
    dated = [view for view in analysis.views.values() if view.record.get(name)]
    dated.sort(key=lambda view: (str(view.record[name]), view.key), reverse=True)
    return dated[: settings.get("limit", 30)]


@dataclass
class About:
    """What the home page says about the survey itself: `links`, markdown (where the
    survey is, its repository and suggestion form, when the pool last changed), and how
    to cite the survey."""

    links: list[str]
    citation: Cite | None


def _about(analysis: SiteAnalysis) -> About:
    registry = analysis.registry
    survey, publication = registry.survey, registry.publication
    arxiv = survey.get("arxiv_id")
    links = []
    if publication and publication.url:
        links.append("The survey: " + markdown.link(publication.version, publication.url))
    elif arxiv:
        links.append(
            "The survey: " + markdown.link(f"arXiv {arxiv}", "https://arxiv.org/abs/" + urllib.parse.quote(arxiv, safe="/"))
        )
    for name, label in (("repository", "repository"), ("suggest_url", "suggest a paper")):
        if survey.get(name):
            links.append(markdown.link(label, survey[name]))
    if analysis.last_changed:
        links.append(
            f"Pool last changed: {analysis.last_changed} (the latest day a record entered the pool or was changed, "
            "as the records say)"
        )
    text = publication.citation.strip() if publication and publication.citation else ""
    # a citation written as BibTeX is shown as BibTeX, any other as the text it is
    cite = Cite("bib" if text.startswith("@") else "text", "", text + "\n", "", "") if text else None
    return About(links, cite)


def _gaps_summary(analysis: SiteAnalysis) -> list[tuple]:
    return [
        (
            table,
            len(table.marked("empty")),
            len(table.marked("not assessed")),
            len(table.marked("sparse")),
            len(table.cells) * len(table.columns),
        )
        for table in analysis.gap_tables
    ]


def _exclusion_breakdown(analysis: SiteAnalysis) -> dict | None:
    flow = (analysis.site.get("exclusion_log") or {}).get("flow")
    if not flow:
        return None
    frame = analysis.frames["exclusions"]
    # reasons down, stages across: there are fewer stages than reasons, and the table fits
    table = crosstab(frame, flow["reason"], flow["stage"])
    return {"rows": flow["reason"], "columns": flow["stage"], "table": table}


def fence_for(text: str) -> str:
    """A code fence longer than any run of backticks in the text, so the text cannot end it."""
    longest = max((len(run) for run in BACKTICKS.findall(text)), default=0)
    return "`" * max(3, longest + 1)
