"""The claims counted: each claim of the ledger (paperpool.pool.ledger, read with validate)
counted over the pool now, and a published one over the pool at publication too, with
what moved since and why; the outcomes as text and JSON for `paperpool claims`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from paperpool.files.problems import plural
from paperpool.pool.ledger import (
    LISTED,
    OVER,
    Claim,
)
from paperpool.registry.columns import Column
from paperpool.registry.query import parse
from paperpool.registry.satisfiable import columns_read

if TYPE_CHECKING:
    from .frame import Frame


@dataclass
class Count:
    """A claim's query counted over one state of the pool."""

    rows: list[str]
    assessed: int | None = None  # among: assessed, how many records it counted over

    @property
    def value(self) -> int:
        return len(self.rows)


@dataclass
class Outcome:
    claim: Claim
    rows: list[str]  # the rows the claim is checked on: at publication for a published claim, else now
    entered: list[str] = field(default_factory=list)  # match now, not recorded
    left: list[str] = field(default_factory=list)  # recorded, in the pool, no longer match
    gone: list[str] = field(default_factory=list)  # recorded, not in the pool (removed or mistyped)
    assessed: int | None = None  # among: assessed, the records counted over
    now: Count | None = None  # a published claim's query over the pool now
    reread: Count | None = None  # ... over the records of the pool at publication, as tagged now
    since: list[tuple[str, str, str]] = field(default_factory=list)  # (+ or -, key, why) since publication
    at: str = ""  # which pool it was counted over, in words: "as of May 4, 2026 (arXiv 2605.02801v1)"
    now_at: str = "now"  # a published claim's other count: "now", or "as of 2026-04-29" (before: the changes ran the other way)
    before_publication: bool = False
    fields: list[str] = field(default_factory=list)  # the columns its query reads

    @property
    def value(self) -> int:
        return len(self.rows)

    @property
    def changed(self) -> bool:
        """Whether a published claim's value now differs from its value at publication."""
        return self.now is not None and (self.now.value != self.value or self.now.assessed != self.assessed)

    @property
    def holds(self) -> bool:
        return self.claim.satisfied_by(self.value) and not (self.entered or self.left or self.gone) and not self.dispute_moved

    @property
    def dispute_moved(self) -> str:
        """How the published claim's records, as tagged now, differ from what its dispute
        records ("" when they agree)."""
        dispute, now = self.claim.dispute, self.reread
        if dispute is None or now is None:
            return ""
        if dispute.rows is not None and sorted(now.rows) != sorted(dispute.rows):
            entered, left = sorted(set(now.rows) - set(dispute.rows)), sorted(set(dispute.rows) - set(now.rows))
            return "; ".join(
                part
                for part in (
                    f"now matching: {', '.join(entered)}" if entered else "",
                    f"no longer matching: {', '.join(left)}" if left else "",
                )
                if part
            )
        return "" if now.value == dispute.now else f"the dispute records {dispute.now} now, found {now.value}"

    def as_json(self) -> dict:
        c = self.claim
        document = {
            "id": c.id,
            "statement": c.statement,
            "kind": c.kind,
            "value": self.value,
            "expected": c.expected,
            "holds": self.holds,
            "rows": self.rows,
            "where": c.where,
            "over": c.over,
            "among": c.among,
            "boundary": c.boundary,
            "entered": self.entered,
            "left": self.left,
            "gone": self.gone,
        }
        if self.assessed is not None:
            document["assessed"] = self.assessed
        if c.dispute is not None:
            document["dispute"] = {
                "now": c.dispute.now,
                "rows": c.dispute.rows,
                "note": c.dispute.note,
                "evidence": c.dispute.evidence,
                "moved": self.dispute_moved,
            }
        if self.now is not None:
            document["now"] = {
                "value": self.now.value,
                "rows": self.now.rows,
                **({"assessed": self.now.assessed} if self.now.assessed is not None else {}),
            }
            document["since_publication"] = [{"change": sign, "key": key, "why": why} for sign, key, why in self.since]
        return document


def evaluate(
    claims: list[Claim],
    frames: dict[str, Frame],
    published: dict[str, Frame] | None = None,
    since: dict[str, str] | None = None,
    at: tuple[str, str] = ("", "now"),
    before: bool = False,
) -> list[Outcome]:
    """Each claim counted and checked: a published claim over `published` (the frames of the
    pool as of the publication) and, beside it, over `frames` (the pool now), with `since`
    (key -> what happened to it since the publication) naming the records that moved it.
    `at` says in words which pools those are: (the publication's, the one of `frames`);
    `before`, that `frames` are of a day before the publication."""
    outcomes = []
    for claim in claims:
        now = count(claim, frames)
        checked_frames = published if claim.published and published is not None else frames
        checked = count(claim, checked_frames) if checked_frames is not frames else now
        outcome = Outcome(
            claim,
            checked.rows,
            assessed=checked.assessed,
            at=at[checked_frames is frames],
            fields=judged_fields(claim, frames[OVER[claim.over][0]].columns),
        )
        if checked_frames is not frames:
            outcome.now, outcome.now_at, outcome.before_publication = now, at[1], before
            then = set().union(*(checked_frames[kind].keys for kind in OVER[claim.over]))
            outcome.reread = Count([key for key in now.rows if key in then])
            outcome.since = [("+", key, (since or {}).get(key, "")) for key in sorted(set(now.rows) - set(checked.rows))] + [
                ("-", key, (since or {}).get(key, "removed from the pool")) for key in sorted(set(checked.rows) - set(now.rows))
            ]
        if claim.rows is not None:
            in_pool = set().union(*(checked_frames[kind].keys for kind in OVER[claim.over]))
            outcome.entered = sorted(set(checked.rows) - set(claim.rows))
            outcome.left = sorted(set(claim.rows) - set(checked.rows) & in_pool)
            outcome.gone = sorted(set(claim.rows) - in_pool)
        outcomes.append(outcome)
    return outcomes


def judged_fields(claim: Claim, columns: dict[str, Column]) -> list[str]:
    """The fields a claim's query reads on which a record can be unassessed."""
    read = [columns[name] for name in columns_read(parse(claim.where, columns).tree)]
    parts = [columns[part] for column in read for part in (column.parts or [column.name])]
    return list(dict.fromkeys(column.source for column in parts if column.can_be_unassessed))


def count(claim: Claim, frames: dict[str, Frame]) -> Count:
    """The records a claim's query selects (among: assessed, of those assessed on what it reads)."""
    rows, judged = [], 0
    for kind in OVER[claim.over]:
        frame = frames[kind]
        tree = parse(claim.where, frame.columns).tree
        mask = frame.mask(tree) if tree is not None else None
        if claim.among == "assessed":
            among = frame.assessed(columns_read(tree))
            judged += int(among.sum())
            mask = among if mask is None else mask & among
        rows += list(frame.keys) if mask is None else list(frame.keys[mask.to_numpy(dtype=bool)])
    return Count(sorted(rows), judged if claim.among == "assessed" else None)


# ---------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------


def moved(outcome: Outcome) -> str:
    """Which records moved a claim away from its recorded rows."""
    parts = []
    if outcome.entered:
        parts.append(f"now matching: {', '.join(outcome.entered)}")
    if outcome.left:
        parts.append(f"no longer matching: {', '.join(outcome.left)}")
    if outcome.gone:
        parts.append(f"not in the pool: {', '.join(outcome.gone)}")
    return "; ".join(parts)


def failure_line(outcome: Outcome) -> str:
    """One line for a claim that no longer holds: expected, actual, and what moved it."""
    c = outcome.claim
    rows = ", ".join(outcome.rows) if len(outcome.rows) <= 20 else _rows_summary(outcome.rows)
    why = moved(outcome) or "rows: " + (rows or "none")
    if c.published and outcome.dispute_moved and c.satisfied_by(outcome.value) and not moved(outcome):
        return (
            f"{c.source}: the dispute of published claim '{c.id}' no longer matches the pool now: {outcome.dispute_moved}; "
            f"if the records are right, update the dispute's now and rows (and its note and evidence)"
        )
    if c.published:
        return (
            f"{c.source}: published claim '{c.id}' no longer holds {outcome.at}: expected {c.expected_text}, found "
            f"{outcome.value} ({why}); it counts the pool as it stood then, so a record retagged since keeps its earlier "
            f"values in its `changes` (date, was, why); if the claim itself is wrong, correct it"
        )
    return (
        f"{c.source}: claim '{c.id}' no longer holds: expected {c.expected_text}, found {outcome.value} ({why}); "
        f"if the records are right, update the claim's expected value (and its statement and rows)"
    )


def to_text(outcomes: list[Outcome]) -> str:
    lines = []
    for outcome in outcomes:
        c = outcome.claim
        lines += [
            f"[{'holds' if outcome.holds else 'FAILS'}] {c.id}: {c.statement}",
            f"  kind:     {c.kind}, counted over the pool {outcome.at}",
            f"  query:    {c.where or '(every record)'} (over {c.over}{', among the assessed' if c.among == 'assessed' else ''})",
            f"  value:    {counted(outcome.value, outcome.assessed, outcome)}{' at publication' if outcome.now else ''} (expected {c.expected_text})",
        ]
        if c.dispute is not None:
            lines.append(
                f"  disputed: {c.dispute.note} (recorded now: {c.dispute.now}"
                + (f", rows: {', '.join(c.dispute.rows)}" if c.dispute.rows else "")
                + ")"
            )
            lines += [
                f"            evidence: {item.get('about', '')}: {item['note']} ({item['url']})" for item in c.dispute.evidence
            ]
            if outcome.dispute_moved:
                lines.append(f"  moved:    {outcome.dispute_moved} (since the dispute was recorded)")
        if outcome.now is not None:
            label, day = ("now:", "") if outcome.now_at == "now" else ("as of:", outcome.now_at.removeprefix("as of ") + ": ")
            lines.append(f"  {label:<10}{day}{counted(outcome.now.value, outcome.now.assessed, outcome)} ({since_text(outcome)})")
        rows = ", ".join(outcome.rows) if outcome.rows and len(outcome.rows) <= 20 else _rows_summary(outcome.rows)
        lines.append(f"  rows:     {rows}" + (" (at publication)" if outcome.now is not None else ""))
        if moved(outcome):
            lines.append(f"  moved:    {moved(outcome)}")
        if c.boundary:
            lines.append(f"  boundary: {c.boundary}")
        lines.append("")
    lines.append(summary(outcomes))
    return "\n".join(lines) + "\n"


NOUNS = {"entries": ("entry", "entries"), "exclusions": ("exclusion", "exclusions"), "all": ("record", "records")}


def counted(value: int, judged: int | None, outcome: Outcome) -> str:
    """A claim's value, with what it counts over when it counts the assessed records."""
    if judged is None:
        return str(value)
    where = ", ".join(outcome.fields) or "its fields"
    return f"{value} of the {plural(judged, *NOUNS[outcome.claim.over])} assessed on {where}"


def since_text(outcome: Outcome) -> str:
    """What moved a published claim since publication: +1 since publication: agentflow2025 (added 2026-11-23)."""
    relation = "before publication" if outcome.before_publication else "since publication"
    if not outcome.since:
        return f"no change {relation}"
    parts = []
    for sign in "+-":
        moved_here = [(key, why) for s, key, why in outcome.since if s == sign]
        if moved_here:
            shown = ", ".join(f"{key} ({why})" if why else key for key, why in moved_here[:LISTED])
            more = f" and {len(moved_here) - LISTED} more" if len(moved_here) > LISTED else ""
            parts.append(f"{sign}{len(moved_here)} {relation}: {shown}{more}")
    return "; ".join(parts)


def _rows_summary(rows: list[str]) -> str:
    return "none" if not rows else f"{len(rows)} records ({', '.join(rows[:5])}, ...)"


def summary(outcomes: list[Outcome]) -> str:
    """One sentence a reader cannot misread: how many claims hold, over which pool each kind
    is counted, and how many published ones have another value now (holding at publication
    beside a changed value is not a contradiction, but must not read as one)."""
    failing = sum(not o.holds for o in outcomes)
    published = [o for o in outcomes if o.now is not None]
    changed = sum(o.changed for o in outcomes)
    said = f"{plural(len(outcomes), 'claim')}: " + (
        f"{failing} no longer {'holds' if failing == 1 else 'hold'}" if failing else "all hold"
    )
    if published:
        live = len(outcomes) - len(published)
        said += f", {len(published)} published {'one' if len(published) == 1 else 'ones'} counted over the pool {published[0].at}"
        said += f" and {live} live {'one' if live == 1 else 'ones'} counted now" if live else ""
    if changed:
        said += f"; {plural(changed, 'published claim')} {'has' if changed == 1 else 'have'} a different value now"
    return said + "."


def to_json(outcomes: list[Outcome]) -> str:
    return json.dumps([o.as_json() for o in outcomes], ensure_ascii=False, indent=2) + "\n"


FORMATS = {"text": to_text, "json": to_json}
