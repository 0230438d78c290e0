"""One analysis of a valid pool, shared by every command that reports on it (stats, gaps,
claims, readme, diff, build): the tables of its records, its statistics, its gap tables
and its claims, each computed once, from the same frames, when first asked for."""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass

from paperpool.pool import history
from paperpool.pool.ledger import load_claims
from paperpool.pool.reading import Pool, Record
from paperpool.registry import Registry

from . import claims, gaps, stats
from .frame import Frame, build_frames


@dataclass
class Analysis:
    pool: Pool
    frames: dict[str, Frame]
    as_of: dt.date | None = None  # the day the pool is seen as it stood on; None: now
    whole: Pool | None = None  # the pool now, when `pool` is how it stood on as_of

    @property
    def registry(self) -> Registry:
        return self.pool.registry

    @property
    def entries(self) -> list[Record]:
        return self.pool.entries

    @functools.cached_property
    def stats(self) -> stats.Stats:
        """The registry's standard set of counts and cross-tabs."""
        return stats.compute(self.registry, self.frames)

    @property
    def totals(self) -> dict[str, int]:
        return stats.totals(self.frames)

    @functools.cached_property
    def gap_tables(self) -> list[gaps.GapTable]:
        return gaps.compute(self.registry, self.frames)

    @property
    def seen_at(self) -> str:
        """Which pool this is, in words: now, or as of a day."""
        return f"as of {self.as_of}" if self.as_of else "now"

    @functools.cached_property
    def published(self) -> Analysis | None:
        """The analysis of the pool as it stood at the survey's publication, if declared."""
        publication = self.registry.publication
        if publication is None:
            return None
        if self.as_of == publication.date:
            return self
        return analyse(self.whole or self.pool, publication.date)

    @property
    def claims_said(self) -> str:
        """The claims in one sentence (claims.summary), as the site's pages say them."""
        return claims.summary(self.outcomes)

    @functools.cached_property
    def outcomes(self) -> list[claims.Outcome]:
        """Every claim of the ledger, recomputed (a published one at publication and now);
        the ledger validate read when it has."""
        ledger = self.pool.claims if self.pool.claims is not None else load_claims(self.pool)[0]
        if self.published is None:
            return claims.evaluate(ledger, self.frames, at=("", self.seen_at))
        publication = self.registry.publication
        earlier = min(publication.date, self.as_of or publication.date)
        at = (f"{publication.label or f'as of {publication.date}'} ({publication.version})", self.seen_at)
        return claims.evaluate(
            ledger,
            self.frames,
            self.published.frames,
            history.since(self.whole or self.pool, earlier),
            at,
            self.as_of is not None and self.as_of < publication.date,
        )

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


def analyse(pool: Pool, as_of: dt.date | None = None) -> Analysis:
    """The analysis of a valid pool (validate it first: a record that breaks its field
    specs has no place in a table); with `as_of`, of the pool as it stood that day."""
    seen = (pool.as_of(as_of) if as_of is not None else pool).known()
    return Analysis(seen, build_frames(seen), as_of, pool)
