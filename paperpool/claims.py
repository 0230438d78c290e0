"""The claim ledger: each claim of the survey as a query over the records, with the
value it must keep, checked on every change.

claims.yaml holds a list under `claims:`. Each claim has an id, a statement, a query
(`where`, the language of paperpool.query; empty selects every record) over the
entries, the exclusions or both (`over`), the expected count (a number, or a bound
such as "<= 2"), optionally the rows it expects, and a boundary note saying what the
number does and does not mean. When rows are recorded they are part of the claim: it
holds only while exactly those records match.
"""

from __future__ import annotations

import functools
import json
import operator
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .pool import Pool
from .problems import Problem, plural
from .registry import (
    BIDI_CONTROLS,
    KEY_RE,
    linked_step,
    refused_character_message,
    refused_characters,
)
from .registry.columns import Column, columns_for
from .registry.query import QueryError, parse
from .yamlio import YamlProblem, load_yaml

if TYPE_CHECKING:
    from .frame import Frame

OVER = {"entries": ("entries",), "exclusions": ("exclusions",), "all": ("entries", "exclusions")}
CLAIM_FIELDS = {"id", "statement", "over", "where", "expected", "rows", "boundary"}
EMPTY_HINT = "start it with `claims:` followed by a list of claims"
BOUND_RE = re.compile(r"^\s*(==|<=|>=|<|>)\s*(\d+)\s*$")
# The most rows a claim may list: as many as the largest pools have entries (a claim's
# rows are read in review; a bigger one is narrowed, or keeps expected without rows).
MAX_ROWS = 10_000
LISTED = 20  # keys named in a message; the rest are counted
BOUNDS = {"==": operator.eq, "<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt}


@dataclass
class Claim:
    id: str
    statement: str
    where: str
    expected: int | str
    over: str = "entries"
    rows: list[str] | None = None
    boundary: str = ""
    source: str = ""  # file:line where the claim is written, for messages

    def satisfied_by(self, value: int) -> bool:
        if isinstance(self.expected, int):
            return value == self.expected
        op, bound = BOUND_RE.match(self.expected).groups()
        return BOUNDS[op](value, int(bound))

    @property
    def expected_text(self) -> str:
        return str(self.expected).strip()


@dataclass
class Outcome:
    claim: Claim
    rows: list[str]
    entered: list[str] = field(default_factory=list)  # match now, not recorded
    left: list[str] = field(default_factory=list)  # recorded, in the pool, no longer match
    gone: list[str] = field(default_factory=list)  # recorded, not in the pool (removed or mistyped)

    @property
    def value(self) -> int:
        return len(self.rows)

    @property
    def holds(self) -> bool:
        return self.claim.satisfied_by(self.value) and not (self.entered or self.left or self.gone)

    def as_json(self) -> dict:
        c = self.claim
        return {"id": c.id, "statement": c.statement, "value": self.value, "expected": c.expected,
                "holds": self.holds, "rows": self.rows, "where": c.where, "over": c.over,
                "boundary": c.boundary, "entered": self.entered, "left": self.left, "gone": self.gone}


def load_claims(pool: Pool) -> tuple[list[Claim], list[Problem]]:
    """Every well-formed claim, and a problem for each one that is not."""
    path = pool.registry.claims_path
    rel = _rel(pool, path)
    linked = linked_step(pool.root, rel)
    if linked:
        return [], [Problem(linked, 1, "", "is a symbolic link; the claim ledger is a plain file of the pool: "
                                           "replace the link with the file itself")]
    if path.is_dir():
        return [], [Problem(rel, 1, "", "is a folder, but the claim ledger is a YAML file; move the folder or point pool.claims elsewhere")]
    if not path.is_file():
        if "claims" in pool.registry.pool:
            return [], [Problem(rel, 1, "", "the claims file named in registry.yaml (pool.claims) is missing; create it or remove the setting")]
        return [], []
    try:
        doc = load_yaml(path, empty_hint=EMPTY_HINT)
    except YamlProblem as exc:
        return [], [Problem(rel, exc.line, exc.field, exc.message)]
    if doc.data is None:
        return [], [Problem(rel, 1, "", f"the file is empty; {EMPTY_HINT}")]
    refused = [Problem(rel, doc.line(*where), _field_name(where), refused_character_message(char))
               for where, char in refused_characters(doc, BIDI_CONTROLS)]
    if refused:  # shown by claims and the site: no claim is read from such a file
        return [], sorted(refused)
    items = doc.data.get("claims") if isinstance(doc.data, dict) else None
    if not isinstance(items, list):
        return [], [Problem(rel, 1, "claims", "the file holds `claims:` followed by a list of claims")]
    columns = {kind: columns_for(pool.registry, kind) for kind in pool.records}
    claims, problems, seen = [], [], set()
    for index, item in enumerate(items):
        problem = functools.partial(_claim_problem, problems, doc, rel, index)
        claim = _read_claim(item, problem, columns)
        if claim is None:
            continue
        if claim.id in seen:
            problem("id", f"duplicate claim id '{claim.id}'; ids must be unique")
            continue
        seen.add(claim.id)
        claim.source = f"{rel}:{doc.line('claims', index)}"
        claims.append(claim)
    return claims, problems


def _field_name(path: tuple) -> str:
    """A place in the claims file as messages name it: claims[2].rows[0]."""
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path).lstrip(".")


def _claim_problem(problems: list[Problem], doc, rel: str, index: int, field_name: str, message: str) -> None:
    parts = (index, field_name) if field_name else (index,)
    problems.append(Problem(rel, doc.line("claims", *parts), f"claims[{index}]{'.' + field_name if field_name else ''}", message))


def _read_claim(item, problem, columns: dict[str, dict[str, Column]]) -> Claim | None:
    if not isinstance(item, dict):
        problem("", "a claim is a mapping with id, statement, where, expected and boundary")
        return None
    for name in sorted(set(item) - CLAIM_FIELDS):
        problem(name, f"unknown field; a claim has {', '.join(sorted(CLAIM_FIELDS))}")
    ok = True
    claim_id = item.get("id")
    if not isinstance(claim_id, str) or not KEY_RE.match(claim_id):
        problem("id", "give an id of lower-case letters, digits and hyphens, e.g. message-credit-broad")
        ok = False
    if not isinstance(item.get("statement"), str) or not item["statement"].strip():
        problem("statement", "state the claim in one sentence")
        ok = False
    over = item.get("over", "entries")
    if not isinstance(over, str) or over not in OVER:
        problem("over", f"over is one of {', '.join(OVER)}")
        return None
    where = item.get("where", "")
    if where is None:
        where = ""
    if not isinstance(where, str):
        problem("where", "write the query as text in quotes, e.g. \"credit_unit = message\" (empty: every record)")
        return None
    for kind in OVER[over]:
        try:
            parse(where, columns[kind])
        except QueryError as exc:
            both = " (over: all queries the entries and the exclusions, so use fields both have)" if over == "all" else ""
            problem("where", f"{exc}{both}")
            ok = False
            break
    expected = item.get("expected")
    if isinstance(expected, bool) or not (isinstance(expected, int) and expected >= 0 or isinstance(expected, str) and BOUND_RE.match(expected)):
        problem("expected", "give the expected count (e.g. 2) or a bound in quotes (e.g. \"<= 2\")")
        ok = False
    # A recorded row that is no longer in the pool is not a problem here: claims --check
    # reports it as a record that moved the claim, which is what a reviewer needs to see.
    rows = item.get("rows")
    if rows is not None:
        if not isinstance(rows, list) or not all(isinstance(key, str) for key in rows):
            problem("rows", "list the keys of the records the claim expects, e.g. [c3, debate-as-reward]")
            ok = False
        elif len(rows) > MAX_ROWS:
            problem("rows", f"lists {len(rows):,} keys, over the limit of {MAX_ROWS:,}; rows are for a reviewer to read: "
                            "narrow the claim, or leave rows out and keep expected")
            ok = False
        elif len(set(rows)) != len(rows):
            twice = sorted(key for key, times in Counter(rows).items() if times > 1)
            more = f" and {plural(len(twice) - LISTED, 'other key')}" if len(twice) > LISTED else ""
            problem("rows", f"lists {', '.join(twice[:LISTED])}{more} more than once; list each record once")
            ok = False
        elif ok and not Claim("", "", "", expected).satisfied_by(len(rows)):
            problem("rows", f"lists {len(rows)} records, which cannot satisfy expected {str(expected).strip()}; "
                            "make rows and expected agree")
            ok = False
    boundary = item.get("boundary") or ""
    if not isinstance(boundary, str):
        problem("boundary", "write the boundary note as text")
        ok = False
    if not ok:
        return None
    return Claim(claim_id, item["statement"].strip(), where, expected, over, sorted(rows) if rows is not None else None, boundary.strip())


def evaluate(claims: list[Claim], frames: dict[str, Frame]) -> list[Outcome]:
    outcomes = []
    for claim in claims:
        rows = sorted(key for kind in OVER[claim.over] for key in frames[kind].select(parse(claim.where, frames[kind].columns).tree))
        outcome = Outcome(claim, rows)
        if claim.rows is not None:
            in_pool = set().union(*(frames[kind].keys for kind in OVER[claim.over]))
            outcome.entered = sorted(set(rows) - set(claim.rows))
            outcome.left = sorted(set(claim.rows) - set(rows) & in_pool)
            outcome.gone = sorted(set(claim.rows) - in_pool)
        outcomes.append(outcome)
    return outcomes


def _rel(pool: Pool, path: Path) -> str:
    try:
        return str(path.relative_to(pool.root))
    except ValueError:
        return str(path)


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
    return (f"{c.source}: claim '{c.id}' no longer holds: expected {c.expected_text}, found {outcome.value} ({why}); "
            f"if the records are right, update the claim's expected value (and its statement and rows)")


def to_text(outcomes: list[Outcome]) -> str:
    lines = []
    for outcome in outcomes:
        c = outcome.claim
        lines += [
            f"[{'holds' if outcome.holds else 'FAILS'}] {c.id}: {c.statement}",
            f"  query:    {c.where or '(every record)'} (over {c.over})",
            f"  value:    {outcome.value} (expected {c.expected_text})",
            f"  rows:     {', '.join(outcome.rows) if outcome.rows and len(outcome.rows) <= 20 else _rows_summary(outcome.rows)}",
        ]
        if moved(outcome):
            lines.append(f"  moved:    {moved(outcome)}")
        if c.boundary:
            lines.append(f"  boundary: {c.boundary}")
        lines.append("")
    lines.append(summary(outcomes))
    return "\n".join(lines) + "\n"


def _rows_summary(rows: list[str]) -> str:
    return "none" if not rows else f"{len(rows)} records ({', '.join(rows[:5])}, ...)"


def summary(outcomes: list[Outcome]) -> str:
    failing = sum(not o.holds for o in outcomes)
    if not failing:
        return f"{plural(len(outcomes), 'claim')}: all hold."
    return f"{plural(len(outcomes), 'claim')}: {failing} no longer {'holds' if failing == 1 else 'hold'}."


def to_json(outcomes: list[Outcome]) -> str:
    return json.dumps([o.as_json() for o in outcomes], ensure_ascii=False, indent=2) + "\n"


FORMATS = {"text": to_text, "json": to_json}
