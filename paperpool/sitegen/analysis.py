"""What the site shows besides the pool's analysis: each entry as readers see it, its
BibTeX, the site settings with their defaults, and the pages of each axis value. Every
number comes from the one analysis (paperpool.analysis.analyse) that stats, gaps and claims use:
the site never holds a copy of a number."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from paperpool.analysis.analyse import Analysis
from paperpool.analysis.audit import Audit, audit_pool
from paperpool.analysis.gaps import Cell, representatives
from paperpool.analysis.since import SincePublication, since_publication
from paperpool.analysis.views import EntryView, entry_view
from paperpool.files.problems import PaperpoolError
from paperpool.formats import coins, csljson, ris
from paperpool.formats.bibtex import writing
from paperpool.pool.history import last_changed

from . import paths
from .section import effective


@dataclass
class SiteAnalysis(Analysis):
    views: dict[str, EntryView] = field(default_factory=dict)  # entry key -> how readers see it
    bibtex: dict[str, str] = field(default_factory=dict)  # entry key -> its BibTeX record
    ris: dict[str, str] = field(default_factory=dict)  # entry key -> its RIS record
    csl: dict[str, dict] = field(default_factory=dict)  # entry key -> its CSL item
    site: dict = field(default_factory=dict)  # the registry's site settings, defaults filled in
    value_paths: dict[str, paths.ValuePaths] = field(default_factory=dict)  # axis -> value pages

    def views_of(self, keys: list[str]) -> list[EntryView]:
        """The entries of these keys, newest first."""
        return sorted((self.views[key] for key in keys), key=newest_first)

    @functools.cached_property
    def audit(self) -> Audit | None:
        """The second reading's agreement with the entries (None: the registry declares none)."""
        try:
            return audit_pool(self.pool)
        except PaperpoolError:
            return None

    @functools.cached_property
    def since(self) -> SincePublication | None:
        """What the pool adds to the published survey (None: no publication declared)."""
        return since_publication(self)

    def citation(self, key: str, fmt: str) -> str:
        """An entry's citation as a file of one format (paths.CITATION_FORMATS)."""
        texts = {"bib": self.bibtex, "ris": self.ris}
        return texts[fmt][key] if fmt in texts else csljson.dumps([self.csl[key]])

    def coins(self, key: str) -> str:
        """The entry's OpenURL ContextObject, for its page's COinS span."""
        return coins.context_object(self.csl[key])

    @functools.cached_property
    def last_changed(self):
        """The day the pool last changed, as its records say (None: they carry no dates)."""
        recent = (self.site.get("recent") or {}).get("field")
        return last_changed(self.pool, {"entries": recent} if recent else None)

    def published_cell(self, table: str, row: str, column: str) -> Cell | None:
        """A gap cell as it stood at the publication (None: no publication, or no such cell then)."""
        if self.published is None:
            return None
        found = next((t for t in self.published.gap_tables if t.id == table), None)
        return found.cells.get(row, {}).get(column) if found else None

    def representatives(self, name: str, value: str) -> list[EntryView]:
        """The entries the survey names as representatives of a value, in its order."""
        return [
            self.views[key] for key in representatives(self.registry, self.frames["entries"], name, value) if key in self.views
        ]


def newest_first(view: EntryView):
    return (-(view.year or 0), view.title.lower(), view.key)


def for_site(analysis: Analysis) -> SiteAnalysis:
    registry = analysis.registry
    site = SiteAnalysis(
        analysis.pool,
        analysis.frames,
        views={record.key: entry_view(registry, record) for record in analysis.entries},
        bibtex={record.key: writing.entry_bibtex(registry, record.data) for record in analysis.entries},
        ris={record.key: ris.entry_ris(registry, record.data) for record in analysis.entries},
        csl={record.key: csljson.entry_item(registry, record.data) for record in analysis.entries},
        site=effective(registry),
    )
    # what the analysis has computed already (its cached properties) is kept, not computed again
    vars(site).update({name: value for name, value in vars(analysis).items() if name not in ("pool", "frames")})
    for name in site.site["axes"]:
        site.value_paths[name] = paths.ValuePaths(name, [v for v, _, _ in site.values(name)])
    return site
