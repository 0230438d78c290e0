"""Records as readers see them: names, links and tags ready for a template.

What counts as a tag, and how the paper list is grouped, is the registry's `display`
section; this module only formats.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from paperpool.pool.identity import DOI_RE, url_problem
from paperpool.pool.reading import Pool, Record
from paperpool.registry import Registry
from paperpool.rendering.markdown import visible
from paperpool.rendering.tex import readable

DEFAULT_TAGS: list[str] = []


@dataclass
class Link:
    label: str
    url: str


@dataclass
class EntryView:
    key: str
    title: str
    year: int | None
    authors: str  # "Zhang et al.", "Zhang and Li", or "" when unknown
    venue: str
    summary: str
    tags: list[str] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    record: dict = field(default_factory=dict)
    names: list[str] = field(default_factory=list)  # every author, as the record lists them


def entry_view(registry: Registry, record: Record) -> EntryView:
    data = record.data
    # text for people: without bidirectional controls, which would reorder it on screen
    return EntryView(
        key=record.key,
        title=visible(readable(str(data.get("title") or record.key))),  # its TeX math as text
        year=_year(data.get("year")),
        authors=visible(short_authors(_names(data.get("authors")), data.get("authors_complete", True))),
        venue=visible(data.get("venue") or ""),
        summary=visible(data.get("summary") or ""),
        tags=tags(registry, data),
        links=links(data),
        record=data,
        names=[visible(name) for name in _names(data.get("authors"))],
    )


def _year(value) -> int | None:
    """A record's year as the pages sort and show it: a whole number. A registry may type
    `year` otherwise (text, a list); such a value is not shown as the year, nor sorted by
    (round fourteen: a text year crashed the build, and would have been written unescaped)."""
    return value if type(value) is int else None


def _names(value) -> list[str]:
    """A record's authors as the pages list them: the names among its values."""
    return [name for name in value if isinstance(name, str)] if isinstance(value, list) else []


def short_authors(authors: list[str], complete: bool) -> str:
    surnames = [author.split(",")[0].strip() for author in authors if author]
    if not surnames:
        return ""
    if len(surnames) == 1:
        return surnames[0] + ("" if complete else " et al.")
    if len(surnames) == 2 and complete:
        return f"{surnames[0]} and {surnames[1]}"
    return f"{surnames[0]} et al."


def tags(registry: Registry, data: dict) -> list[str]:
    """The values of the registry's display.tags fields; a sub-decision map shows its mode."""
    shown = []
    for name in registry.display.get("tags", DEFAULT_TAGS):
        value = data.get(name)
        if isinstance(value, dict):
            shown += [f"{k} {v}" for k, v in value.items()]
        elif isinstance(value, list):
            shown += [str(v) for v in value]
        elif value not in (None, "") and _in_taxonomy(registry, name, value):
            shown.append(str(value))
    return list(dict.fromkeys(shown))


def _in_taxonomy(registry: Registry, name: str, value) -> bool:
    """Whether a value is a cell of the taxonomy: not one the registry keeps out of the
    gap tables (in_gaps: false, such as "not applicable"), which is no tag either."""
    spec = registry.fields["entries"].get(name)
    vocabulary = registry.vocabularies.get(spec.vocabulary) if spec is not None and spec.vocabulary else None
    found = vocabulary.get(value) if vocabulary is not None else None
    return found is None or found.extra.get("in_gaps", True)


def links(data: dict) -> list[Link]:
    """The record's links, each labelled by its site, the DOI's resolver added when missing.
    Only web links validate accepts: a registry may type these fields otherwise (text, a
    number), and a `javascript:` text went live on the entry's page, an IPv6 link of one
    `[` ended the build."""
    given = data.get("urls") if data.get("urls") else data.get("url")
    urls = [url for url in (given if isinstance(given, list) else [given]) if isinstance(url, str) and not url_problem(url)]
    doi = data.get("doi")
    if isinstance(doi, str) and DOI_RE.match(doi) and not any(doi in url for url in urls):
        urls.append(f"https://doi.org/{doi}")
    return [Link(_site(url), url) for url in urls]


def _site(url: str) -> str:
    host = urlsplit(url).hostname or url
    return host.removeprefix("www.")


def grouped(pool: Pool) -> list[tuple[str, str, list[EntryView]]]:
    """(value, label, entries) per value of the registry's display.group_by field, in
    vocabulary order, newest entries first; empty groups are left out."""
    registry = pool.registry
    name = registry.display.get("group_by")
    views = sorted(
        (entry_view(registry, record) for record in pool.entries), key=lambda view: (-(view.year or 0), view.title.lower())
    )
    if not name:
        return [("", "Entries", views)]
    vocabulary = registry.vocabularies[registry.fields["entries"][name].vocabulary]
    groups = []
    for value in vocabulary.values:
        members = [view for view in views if view.record.get(name) == value.id]
        if members:
            groups.append((value.id, value.label, members))
    return groups
