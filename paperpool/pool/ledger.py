"""The claim ledger as the pool holds it: each claim of the survey a query over the records,
with the value it must keep (read and checked here, with validate; counted by
paperpool.analysis.claims).

claims.yaml holds a list under `claims:`. Each claim has an id, a statement, a query
(`where`, the language of paperpool.registry.query; empty selects every record) over the
entries, the exclusions or both (`over`), the expected count (a number, or a bound
such as "<= 2"), optionally the rows it expects, and a boundary note saying what the
number does and does not mean. When rows are recorded they are part of the claim: it
holds only while exactly those records match.

A claim is `published` (the survey's own words: counted over the pool as it stood on the
registry's survey.publication date, so it holds whatever is added later) or `live` (the
maintainers' statement about the pool now). `among: assessed` counts only the records
assessed on every field its query reads, and the value names how many those are.
"""

from __future__ import annotations

import functools
import operator
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from paperpool.files.problems import Problem, plural
from paperpool.files.yamlio import YamlProblem, load_yaml
from paperpool.registry import (
    BIDI_CONTROLS,
    KEY_RE,
    LINKED_FILE,
    MAX_TEXT_CHARS,
    linked_step,
    refused_character_message,
    refused_characters,
)
from paperpool.registry.columns import Column, assessed, columns_for
from paperpool.registry.query import QueryError, parse
from paperpool.registry.satisfiable import columns_read, satisfiable

from .identity import url_problem
from .reading import Pool

OVER = {"entries": ("entries",), "exclusions": ("exclusions",), "all": ("entries", "exclusions")}
CLAIM_FIELDS = {"id", "statement", "kind", "over", "among", "where", "expected", "rows", "boundary", "dispute"}
DISPUTE_FIELDS = ("now", "rows", "note", "evidence")
KINDS = ("live", "published")  # the first is the default
AMONG = ("all", "assessed")
EMPTY_HINT = "start it with `claims:` followed by a list of claims"
BOUND_RE = re.compile(r"^\s*(==|<=|>=|<|>)\s*(\d{1,12})\s*\Z")  # a count, not a number past what a pool can hold
# The most rows a claim may list: as many as the largest pools have entries (a claim's
# rows are read in review; a bigger one is narrowed, or keeps expected without rows).
MAX_ROWS = 10_000
LISTED = 20  # keys named in a message; the rest are counted
BOUNDS = {"==": operator.eq, "<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt}


@dataclass
class Dispute:
    """Where a careful reading contradicts a published claim: the claim's value when the
    records it was counted over (those of the pool at publication) are counted with their
    tags now, and those records, recorded so that the claim stays as published and the
    contradiction is shown, not hidden; checked like a claim's own value. Records added
    later are not part of it, so adding a paper never moves a dispute."""

    now: int
    rows: list[str] | None
    note: str
    evidence: list[dict]


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
    kind: str = "live"
    among: str = "all"
    dispute: Dispute | None = None

    @property
    def published(self) -> bool:
        return self.kind == "published"

    def satisfied_by(self, value: int) -> bool:
        if isinstance(self.expected, int):
            return value == self.expected
        op, bound = BOUND_RE.match(self.expected).groups()
        return BOUNDS[op](value, int(bound))

    @property
    def expected_text(self) -> str:
        return str(self.expected).strip()


def load_claims(pool: Pool) -> tuple[list[Claim], list[Problem]]:
    """Every well-formed claim, and a problem for each one that is not."""
    path = pool.registry.claims_path
    rel = _rel(pool, path)
    linked = linked_step(pool.root, rel)
    if linked:
        return [], [Problem(linked, 1, "", LINKED_FILE.format(what="the claim ledger"))]
    if path.is_dir():
        return [], [
            Problem(
                rel, 1, "", "is a folder, but the claim ledger is a YAML file; move the folder or point pool.claims elsewhere"
            )
        ]
    if not path.is_file():
        if "claims" in pool.registry.pool:
            return [], [
                Problem(
                    rel, 1, "", "the claims file named in registry.yaml (pool.claims) is missing; create it or remove the setting"
                )
            ]
        return [], []
    try:
        doc = load_yaml(path, empty_hint=EMPTY_HINT)
    except YamlProblem as exc:
        return [], [Problem(rel, exc.line, exc.field, exc.message)]
    if doc.data is None:
        return [], [Problem(rel, 1, "", f"the file is empty; {EMPTY_HINT}")]
    refused = [
        Problem(rel, doc.line(*where), _field_name(where), refused_character_message(char))
        for where, char in refused_characters(doc, BIDI_CONTROLS)
    ]
    if refused:  # shown by claims and the site: no claim is read from such a file
        return [], sorted(refused)
    items = doc.data.get("claims") if isinstance(doc.data, dict) else None
    if not isinstance(items, list):
        return [], [Problem(rel, 1, "claims", "the file holds `claims:` followed by a list of claims")]
    columns = {kind: columns_for(pool.registry, kind) for kind in pool.records}
    # the pool at publication, made once for every published claim: at 10,000 entries
    # each making costs about half a second
    published = functools.cache(lambda: pool.as_of(pool.registry.publication.date))
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
        if claim.published and pool.registry.publication is None:
            problem(
                "kind",
                "is published, but registry.yaml declares no survey.publication to count it at; "
                "declare it (date and version) or make the claim live",
            )
            continue
        for message in _says_nothing(claim, published() if claim.published else pool, columns):
            problem("where", message, "warning")
        stated = _stated_counts(claim.statement)
        if stated and isinstance(claim.expected, int) and claim.expected not in stated:
            problem(
                "statement",
                f"says {' and '.join(map(str, sorted(stated)))}, but the claim expects {claim.expected}: a statement says "
                "the number its query counts; correct the statement or the expected value",
                "warning",
            )
        if _disputes_nothing(claim):
            problem(
                "dispute",
                "records the claim's own value and rows, so it disputes nothing; remove it, or record what the reading found",
                "warning",
            )
        claims.append(claim)
    return claims, problems


# The counts a statement gives: numbers standing alone (not O5, K2.5 or 2605.02801) of at
# most 15 digits (int() refuses past 4,300), and "no entry", "none of the records" for 0.
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3}){1,4}|\d{1,15})(?![\w]|\.\d)")  # (a longer run is no count)
# "No retained entry", "none of the records": a count of 0, in a statement or a description
NO_RECORD = re.compile(r"\b(?:no|none of the)\s+(?:\w+\s+){0,2}?(?:entry|entries|record|records|paper|papers)\b", re.IGNORECASE)


def _stated_counts(statement: str) -> set[int]:
    counts = {int(found.replace(",", "")) for found in _NUMBER.findall(statement)}
    return counts | ({0} if NO_RECORD.search(statement) else set())


def _says_nothing(claim: Claim, counted: Pool, columns: dict[str, dict[str, Column]]) -> list[str]:
    """Why a claim can never fail: no record could ever satisfy its query, or none of the
    records it counts (`counted`: the pool as the claim counts it) has been assessed on
    what the query reads."""
    kinds = OVER[claim.over]
    trees = {kind: parse(claim.where, columns[kind]).tree for kind in kinds}
    if not any(satisfiable(trees[kind], columns[kind], claim.among == "assessed") for kind in kinds):
        return [
            (
                "no record could ever satisfy this query (it asks a field for values it cannot hold at once, or for "
                '"not assessed" among assessed records), so the claim can never fail; correct the query'
            )
        ]
    judged = {
        kind: [columns[kind][name] for name in columns_read(trees[kind]) if columns[kind][name].can_be_unassessed]
        for kind in kinds
    }
    if not any(judged.values()):
        return []
    if any(
        all(assessed(record.data, column, columns[kind]) for column in judged[kind])
        for kind in kinds
        for record in counted.records[kind]
    ):
        return []
    names = ", ".join(dict.fromkeys(column.name for found in judged.values() for column in found))
    when = f" {counted.registry.publication.label or 'at publication'}" if claim.published else ""
    return [
        (
            f"counts over no assessed record: no record{when} is assessed on {names}, so the claim can never fail; "
            "assess the records on it, or remove the claim"
        )
    ]


def _field_name(path: tuple) -> str:
    """A place in the claims file as messages name it: claims[2].rows[0]."""
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path).lstrip(".")


def _claim_problem(
    problems: list[Problem], doc, rel: str, index: int, field_name: str, message: str, severity: str = "error"
) -> None:
    parts = (index, field_name) if field_name else (index,)
    problems.append(
        Problem(rel, doc.line("claims", *parts), f"claims[{index}]{'.' + field_name if field_name else ''}", message, severity)
    )


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
    kind = item.get("kind", KINDS[0])
    if not isinstance(kind, str) or kind not in KINDS:
        problem(
            "kind",
            "kind is published (the survey's own claim, counted over the pool as of its publication) "
            "or live (the maintainers' claim about the pool now)",
        )
        ok = False
    among = item.get("among", AMONG[0])
    if not isinstance(among, str) or among not in AMONG:
        problem(
            "among",
            "among is all (every record, the default) or assessed (only the records assessed on every field the query reads)",
        )
        ok = False
    where = item.get("where", "")
    if where is None:
        where = ""
    if not isinstance(where, str):
        problem("where", 'write the query as text in quotes, e.g. "credit_unit = message" (empty: every record)')
        return None
    if len(where) > MAX_TEXT_CHARS:  # as a gap table's query in the registry: 37,000 conditions took 23 s a count
        problem("where", f"is {len(where):,} characters long, over {MAX_TEXT_CHARS:,}; shorten the query, or split the claim")
        return None
    for records in OVER[over]:
        try:
            parse(where, columns[records])
        except QueryError as exc:
            both = " (over: all queries the entries and the exclusions, so use fields both have)" if over == "all" else ""
            problem("where", f"{exc}{both}")
            ok = False
            break
    expected = item.get("expected")
    if isinstance(expected, bool) or not (
        isinstance(expected, int) and expected >= 0 or isinstance(expected, str) and BOUND_RE.match(expected)
    ):
        problem("expected", 'give the expected count (e.g. 2) or a bound in quotes (e.g. "<= 2")')
        ok = False
    # A recorded row that is no longer in the pool is not a problem here: claims --check
    # reports it as a record that moved the claim, which is what a reviewer needs to see.
    rows = item.get("rows")
    if rows is not None:
        if not isinstance(rows, list) or not all(isinstance(key, str) for key in rows):
            problem("rows", "list the keys of the records the claim expects, e.g. [c3, debate-as-reward]")
            ok = False
        elif len(rows) > MAX_ROWS:
            problem(
                "rows",
                f"lists {len(rows):,} keys, over the limit of {MAX_ROWS:,}; rows are for a reviewer to read: "
                "narrow the claim, or leave rows out and keep expected",
            )
            ok = False
        elif len(set(rows)) != len(rows):
            twice = sorted(key for key, times in Counter(rows).items() if times > 1)
            more = f" and {plural(len(twice) - LISTED, 'other key')}" if len(twice) > LISTED else ""
            problem("rows", f"lists {', '.join(twice[:LISTED])}{more} more than once; list each record once")
            ok = False
        elif ok and not Claim("", "", "", expected).satisfied_by(len(rows)):
            problem(
                "rows",
                f"lists {len(rows)} records, which cannot satisfy expected {str(expected).strip()}; make rows and expected agree",
            )
            ok = False
    boundary = item.get("boundary") or ""
    if not isinstance(boundary, str):
        problem("boundary", "write the boundary note as text")
        ok = False
    dispute = _read_dispute(item.get("dispute"), problem, kind)
    if not ok or dispute is False:
        return None
    return Claim(
        claim_id,
        item["statement"].strip(),
        where,
        expected,
        over,
        sorted(rows) if rows is not None else None,
        boundary.strip(),
        kind=kind,
        among=among,
        dispute=dispute,
    )


def _read_dispute(body, problem, kind: str) -> Dispute | None | bool:
    """A claim's dispute: the value now (and its rows), why, and the evidence; False when malformed."""
    if body is None:
        return None
    example = 'dispute: {now: 1, rows: [KEY], note: "what the reading found", evidence: [{about: KEY, url: ..., note: ...}]}'
    if not isinstance(body, dict):
        problem("dispute", f"write the dispute as a mapping: {example}")
        return False
    for name in sorted(set(body) - set(DISPUTE_FIELDS), key=str):
        problem(f"dispute.{name}", f"unknown field; a dispute has {', '.join(DISPUTE_FIELDS)}")
    if kind != "published":
        problem(
            "dispute",
            "only a published claim is disputed (a live claim is corrected instead); remove the dispute or make the claim published",
        )
        return False
    now, rows, note, evidence = body.get("now"), body.get("rows"), body.get("note"), body.get("evidence")
    if isinstance(now, bool) or not isinstance(now, int) or now < 0:
        problem("dispute.now", "give the claim's value on the pool now, a whole number")
        return False
    if rows is not None and (not isinstance(rows, list) or not all(isinstance(key, str) for key in rows) or len(rows) != now):
        problem("dispute.rows", f"list the keys of the {now} records the query selects now")
        return False
    if not isinstance(note, str) or not note.strip():
        problem("dispute.note", "say in one sentence what the reading found that the published claim does not")
        return False
    if (
        not isinstance(evidence, list)
        or not evidence
        or not all(
            isinstance(item, dict)
            and isinstance(item.get("url"), str)
            and isinstance(item.get("note"), str)
            and isinstance(item.get("about", ""), str)
            and url_problem(item["url"]) is None
            for item in evidence
        )
    ):
        problem("dispute.evidence", "list the evidence: items with about (a record's key), url (an http(s) page) and note")
        return False
    return Dispute(now, sorted(rows) if rows is not None else None, note.strip(), evidence)


def _disputes_nothing(claim: Claim) -> bool:
    """A dispute that records what the claim itself says: nothing is disputed."""
    d = claim.dispute
    return d is not None and claim.satisfied_by(d.now) and (d.rows is None or claim.rows is None or d.rows == claim.rows)


def _rel(pool: Pool, path: Path) -> str:
    try:
        return str(path.relative_to(pool.root))
    except ValueError:
        return str(path)
