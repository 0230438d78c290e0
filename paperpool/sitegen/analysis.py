"""Everything the site shows, computed once from the pool by the same functions as
`paperpool stats`, `gaps` and `claims`: the site never holds a copy of a number."""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import bibwrite, claims, gaps, stats
from ..frame import Frame, build_frames
from ..pool import Pool, Record
from ..registry import Registry
from ..views import EntryView, entry_view
from . import paths
from .section import effective


@dataclass
class Analysis:
    pool: Pool
    frames: dict[str, Frame]
    stats: stats.Stats
    gap_tables: list[gaps.GapTable]
    outcomes: list[claims.Outcome]
    views: dict[str, EntryView]  # entry key -> how readers see it
    bibtex: dict[str, str]  # entry key -> its BibTeX record
    site: dict = field(default_factory=dict)  # the registry's site settings, defaults filled in
    value_paths: dict[str, paths.ValuePaths] = field(default_factory=dict)  # axis -> value pages

    @property
    def registry(self) -> Registry:
        return self.pool.registry

    @property
    def entries(self) -> list[Record]:
        return self.pool.entries

    @property
    def totals(self) -> dict[str, int]:
        return self.stats.totals

    def views_of(self, keys: list[str]) -> list[EntryView]:
        """The entries of these keys, newest first."""
        return sorted((self.views[key] for key in keys), key=newest_first)

    def members(self, name: str, kind: str = "entries") -> dict[str, list[str]]:
        """Value -> keys of the records that hold it, for one column, in vocabulary order."""
        frame = self.frames[kind]
        long = frame.long(name)
        grouped = long.groupby("value")["key"].agg(list)
        return {str(value): list(grouped.get(value, [])) for value in frame.values_in_order(name, grouped.index)}

    def values(self, name: str, kind: str = "entries") -> list[tuple[str, str, str]]:
        """(id, label, description) of a controlled column's values, in vocabulary order."""
        column = self.frames[kind].columns[name]
        vocabulary = self.registry.vocabularies[column.vocabulary_name]
        return [(str(v.id), v.label, v.description) for v in vocabulary.values]

    def label(self, name: str, value, kind: str = "entries") -> str:
        column = self.frames[kind].columns[name]
        vocabulary = self.registry.vocabularies.get(column.vocabulary_name or "")
        found = vocabulary.get(value) if vocabulary else None
        return found.label if found else str(value)

    def column_label(self, name: str, kind: str = "entries") -> str:
        return self.frames[kind].columns[name].label


def newest_first(view: EntryView):
    return (-(view.year or 0), view.title.lower(), view.key)


def analyse(pool: Pool) -> Analysis:
    registry = pool.registry
    frames = build_frames(pool)
    ledger, _ = claims.load_claims(pool)  # a valid pool has a well-formed ledger
    analysis = Analysis(
        pool=pool,
        frames=frames,
        stats=stats.compute(registry, frames),
        gap_tables=gaps.compute(registry, frames),
        outcomes=claims.evaluate(ledger, frames),
        views={record.key: entry_view(registry, record) for record in pool.entries},
        bibtex={record.key: bibwrite.entry_bibtex(registry, record.data) for record in pool.entries},
    )
    analysis.site = effective(registry)
    for name in analysis.site["axes"]:
        analysis.value_paths[name] = paths.ValuePaths(name, [v for v, _, _ in analysis.values(name)])
    return analysis
