"""What the pool adds to the published survey: the records added and retagged since the
publication, the published claims whose value now differs, and the gap cells that
changed state (filled, emptied, assessed). Computed from two analyses of one pool, the
pool as of the publication date and the pool now, so every line is a difference in the
data."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from paperpool.pool import history
from paperpool.registry import Publication

from .analyse import Analysis
from .claims import Outcome


@dataclass
class CellChange:
    table: str  # the gap table's id
    title: str
    row: str
    column: str
    row_label: str
    column_label: str
    before: tuple[int, str]  # (count, mark) at publication
    now: tuple[int, str]
    entered: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)


@dataclass
class SincePublication:
    publication: Publication
    added: dict[str, list[tuple[str, dt.date]]]  # kind -> (key, date) of the records added since, oldest first
    retagged: list[tuple[str, str]]  # (key, what changed) of the records that existed and changed since
    claims: list[Outcome]  # the published claims whose value now differs from their value at publication
    cells: list[CellChange]  # gap cells whose count or state changed
    why: dict[str, str] = field(default_factory=dict)  # key -> what happened to it since, in a few words

    @property
    def nothing(self) -> bool:
        return not (any(self.added.values()) or self.retagged or self.claims or self.cells)


def since_publication(analysis: Analysis) -> SincePublication | None:
    """The differences between the pool now and as it stood at the publication (None when
    the registry declares no publication)."""
    published = analysis.published
    if published is None:
        return None
    publication = analysis.registry.publication
    dated_by = analysis.registry.pool.get("dated_by") or {}
    added = {
        kind: sorted(
            (
                (record.key, record.data.get(dated_by.get(kind, "")))
                for record in records
                if _after(record.data.get(dated_by.get(kind, "")), publication.date)
            ),
            key=lambda item: (item[1], item[0]),
        )
        for kind, records in analysis.pool.records.items()
    }
    fresh = {key for items in added.values() for key, _ in items}
    why = history.since(analysis.pool, publication.date)
    retagged = sorted((key, what) for key, what in why.items() if key not in fresh and history.RETAGGED in what)
    moved = [o for o in analysis.outcomes if o.changed]
    return SincePublication(publication, added, retagged, moved, _cells(published, analysis), why)


def _cells(published: Analysis, now: Analysis) -> list[CellChange]:
    changes = []
    before = {table.id: table for table in published.gap_tables}
    for table in now.gap_tables:
        old = before.get(table.id)
        if old is None:
            continue
        labels = dict(table.columns)
        for r, row in table.cells.items():
            for c, cell in row.items():
                was = old.cells.get(r, {}).get(c)
                if was is None or (was.count, was.mark) == (cell.count, cell.mark):
                    continue
                changes.append(
                    CellChange(
                        table.id,
                        table.title,
                        r,
                        c,
                        table.row_labels[r],
                        labels[c],
                        (was.count, was.mark),
                        (cell.count, cell.mark),
                        sorted(set(cell.keys) - set(was.keys)),
                        sorted(set(was.keys) - set(cell.keys)),
                    )
                )
    return changes


def _after(value, day: dt.date) -> bool:
    found = history.as_date(value)
    return found is not None and found > day
