"""Validation: every problem in a pool, each naming its file, line and field and how
to fix it. Problems are collected and returned; nothing here raises or writes."""

from __future__ import annotations

import contextlib
import gc
from pathlib import Path

from paperpool.files.problems import PaperpoolError, Problem, errors, suggest
from paperpool.registry import (
    REGISTRY_FILE,
)

from . import identity
from .checked import CheckedRead
from .ledger import NO_RECORD, load_claims
from .reading import Pool, Record
from .recordchecks import (
    record_facts,
    record_problems,
)


def validate(root: Path, cache: bool = True) -> tuple[Pool | None, list[Problem]]:
    """Load the pool at `root`; return it (None if the registry is unusable) and every
    problem, sorted by file and line. Each record is checked where it is parsed (in
    worker processes for a large pool); with `cache`, records unchanged since an earlier
    run are taken from paperpool's cache of checked records (paperpool.pool.cache), which never
    changes the result. The checks across records run on every call."""
    read = CheckedRead(root, cache)
    with _collector_paused():
        pool, problems = read.load()
        if pool is not None:
            problems += check_across(pool, read.title_pairs)
            read.save()
    return pool, sorted(set(problems))


@contextlib.contextmanager
def _collector_paused():
    """Reading a large pool makes a few hundred thousand objects, none of them in a
    reference cycle; the cyclic garbage collector, left on, would walk them all again and
    again (a quarter of a warm validate's time at 10,000 records). Nothing is kept out of
    its reach for good: a later full collection walks them as usual."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            # the objects made meanwhile join the oldest generation untraversed (freeze, then
            # unfreeze): enabled as they were, the next young collection would walk them all
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def validate_pool(pool: Pool) -> list[Problem]:
    """Every problem of a pool read by load_pool, whose records were not checked yet."""
    problems = [problem for record in pool.all_records() for problem in record_problems(pool.registry, record)]
    return problems + check_across(pool)


def check_across(pool: Pool, title_pairs=identity.similar_key_pairs) -> list[Problem]:
    """The checks that compare records with each other, from each record's facts;
    `title_pairs` finds the pairs of near-identical titles (see check_similar_titles)."""
    for record in pool.all_records():
        if record.facts is None:
            record.facts = record_facts(pool.registry, record)
    problems = check_unique_keys(pool)
    problems += check_unique_fields(pool)
    problems += check_same_paper(pool)
    problems += check_similar_titles(pool, title_pairs)
    problems += check_registry_references(pool)
    pool.claims, ledger_problems = load_claims(pool)  # read once: the analysis evaluates what validate checked
    return problems + ledger_problems


def require_valid_pool(root: Path, cache: bool = True) -> Pool:
    """The pool at `root` if it has no errors; otherwise a PaperpoolError naming the first."""
    return require_valid(*validate(root, cache))


def require_valid(pool: Pool | None, problems: list[Problem]) -> Pool:
    """The validated pool if its problems hold no error; otherwise a PaperpoolError naming the first."""
    problems = errors(problems)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise PaperpoolError(f"the pool is not valid: {problems[0]}{more}; run paperpool validate")
    return pool


# ---------------------------------------------------------------------------------
# Checks across records
# ---------------------------------------------------------------------------------


def check_unique_keys(pool: Pool) -> list[Problem]:
    """Keys name files and pages, so they must differ even on a case-blind file system."""
    problems, seen = [], {}
    for record in pool.all_records():
        folded = record.key.casefold()
        if folded in seen:
            other = seen[folded]
            same = "the same key as" if other.key == record.key else "a key differing only in case from"
            problems.append(
                Problem(record.rel, record.line("key"), "key", f"{same} {other.rel}; keys must be unique, rename one")
            )
        else:
            seen[folded] = record
    return problems


def check_unique_fields(pool: Pool) -> list[Problem]:
    problems = []
    for kind, specs in pool.registry.fields.items():
        for spec in specs.values():
            if not spec.unique:
                continue
            seen = {}
            for record in pool.records[kind]:
                value = record.facts.unique.get(spec.name)
                if not isinstance(value, (str, int)):
                    continue  # missing, of the wrong type or not filled in: the field check reports it
                if value in seen:
                    problems.append(
                        Problem(
                            record.rel,
                            record.line(spec.name),
                            spec.name,
                            f"'{value}' is also used by {seen[value].rel}; it must be unique",
                        )
                    )
                else:
                    seen[value] = record
    return problems


def check_same_paper(pool: Pool) -> list[Problem]:
    """The same arXiv id, DOI, OpenReview id or link on two records."""
    problems, owners = [], {}
    for record in pool.all_records():
        allowed = record.facts.distinct_from
        parts = iter(record.facts.tokens)
        for kind, value, field_name in zip(parts, parts, parts, strict=True):
            token = (kind, value)
            other = owners.get(token)
            if other is None:
                owners[token] = record
            elif other.key not in allowed:
                what = identity.TOKEN_NAMES.get(kind, kind)
                problems.append(
                    Problem(
                        record.rel,
                        record.line(field_name),
                        field_name,
                        f"{what} {value} is also on {other.rel}; a paper is recorded once: merge the two or remove one",
                    )
                )
    return problems


def check_similar_titles(pool: Pool, title_pairs=identity.similar_key_pairs) -> list[Problem]:
    """Near-identical titles, entry against entry and entry against exclusion. Titles are
    compared as keys (identity.title_key), each distinct key once: `title_pairs(keys,
    threshold)` gives the pairs of keys at least the threshold alike (a cache may supply
    those it knows); records sharing a key are alike too. Each record whose title is like
    an earlier record's (by file) gets one problem, naming the earliest: a title shared by
    3,000 records is 2,999 lines, not the 4.5 million pairs among them."""
    holders: dict[str, list[Record]] = {}
    for record in sorted(pool.all_records(), key=lambda r: r.rel):
        if record.facts.title is not None:
            holders.setdefault(record.facts.title, []).append(record)
    threshold = pool.registry.title_similarity
    alike: dict[str, list[tuple[str, float]]] = {}
    for key_a, key_b, score in title_pairs(sorted(holders), threshold):
        alike.setdefault(key_a, []).append((key_b, score))
        alike.setdefault(key_b, []).append((key_a, score))
    for key, records in holders.items():
        score = _same_key_score(key, threshold) if len(records) > 1 else 0
        if score:
            alike.setdefault(key, []).append((key, score))
    entries = {key: [r for r in records if r.kind == "entries"] for key, records in holders.items()}
    problems = []
    for key, records in holders.items():
        for record in records:
            earliest = _earliest_alike(record, alike.get(key, ()), holders, entries)
            if earliest is not None:
                first, score = earliest
                problems.append(
                    Problem(
                        record.rel,
                        record.line("title"),
                        "title",
                        f"nearly the same title as {first.rel} ({score:.0f}% alike); keep one record if they are the same paper, "
                        f"or add `distinct_from: [{first.key}]` if they differ",
                    )
                )
    return problems


def _earliest_alike(record: Record, alike, holders: dict, entries: dict) -> tuple[Record, float] | None:
    """The first record by file, before `record`, whose title key is alike: an exclusion
    is compared with entries only (the exclusion log may record one paper screened twice),
    and a pair either record declares distinct_from, or whose arXiv ids or DOIs differ (two
    works), is passed over."""
    best = None
    for other_key, score in alike:
        # records of each key are in file order: the first one that counts, or none before `record`
        for other in (holders if record.kind == "entries" else entries)[other_key]:
            if other.rel >= record.rel or (best is not None and other.rel >= best[0].rel):
                break
            if (
                record.key not in other.facts.distinct_from
                and other.key not in record.facts.distinct_from
                and not identity.ids_differ(_token_pairs(record), _token_pairs(other))
            ):
                best = (other, score)
                break
    return best


def _token_pairs(record: Record) -> list[tuple[str, str]]:
    """The record's (scheme, id) tokens (facts.tokens holds scheme, id and field in a row)."""
    parts = iter(record.facts.tokens)
    return [(kind, value) for kind, value, _ in zip(parts, parts, parts, strict=True)]


def _same_key_score(key: str, threshold: float) -> float:
    from rapidfuzz import fuzz

    return fuzz.ratio(key, key, score_cutoff=threshold)


SUGGESTED = 5  # unknown keys of one record given a did-you-mean


def _descriptions_denying_the_data(pool: Pool) -> list[Problem]:
    """A vocabulary value whose description says no record holds it while some entry does
    (a warning): a description states what a value means, and the pages count it from the
    records (issue 37: "No retained entry learns this decision" stood over a list of nine)."""
    doc = pool.registry.document
    problems = []
    held: dict | None = None  # vocabulary -> value -> the entries holding it, found once, when first needed
    for name, body in (doc.data.get("vocabularies") or {}).items():
        values = body.get("values") if isinstance(body, dict) else None
        for index, value in enumerate(values if isinstance(values, list) else []):
            said = value.get("description") if isinstance(value, dict) else None
            denying = (
                NO_RECORD.search(said) if isinstance(said, str) else None
            )  # what a value means does not change; its count does
            if denying is None:
                continue
            held = _held(pool) if held is None else held
            identifier = value.get("id")
            holding = held.get(name, {}).get(identifier, []) if isinstance(identifier, str) else []
            if holding:
                shown = ", ".join(holding[:5]) + (f" and {len(holding) - 5} more" if len(holding) > 5 else "")
                problems.append(
                    Problem(
                        REGISTRY_FILE,
                        doc.line("vocabularies", name, "values", index, "description"),
                        f"vocabularies.{name}.{value.get('id')}.description",
                        f"says '{denying.group()}', but {len(holding)} entries hold {identifier} "
                        f"({shown}); say what the value means, and let the pages count it from the records",
                        "warning",
                    )
                )
    return problems


def _held(pool: Pool) -> dict[str, dict[str, list[str]]]:
    """{vocabulary: {value: the entries holding it}}, in one pass over the entries: a choice,
    a list's items, a map's keys and values (a value asked of every entry and field in turn
    made 19,000 described values over 1,000 entries a minute a command)."""
    held: dict[str, dict[str, list[str]]] = {}
    specs = list(pool.registry.fields["entries"].values())
    for record in pool.entries:
        for spec in specs:
            given = record.data.get(spec.name)
            found: list[tuple[str | None, object]] = []
            if isinstance(given, dict):
                found += [(spec.keys, key) for key in given] + [(spec.vocabulary, item) for item in given.values()]
            elif isinstance(given, list):
                found += [(spec.vocabulary, item) for item in given]
            else:
                found.append((spec.vocabulary, given))
            for vocabulary, value in found:
                if vocabulary and isinstance(value, str):
                    keys = held.setdefault(vocabulary, {}).setdefault(value, [])
                    if not keys or keys[-1] != record.key:
                        keys.append(record.key)
    return held


def check_registry_references(pool: Pool) -> list[Problem]:
    """Keys the registry or a record names must exist."""
    problems = []
    keys = {record.key for record in pool.all_records()}
    entry_keys = {record.key for record in pool.entries}
    doc = pool.registry.document
    for name, body in (doc.data.get("vocabularies") or {}).items():
        for index, value in enumerate(body.get("values") or []):
            for key in (value.get("representatives") or []) if isinstance(value, dict) else []:
                if key not in entry_keys and key not in pool.unreadable:
                    problems.append(
                        Problem(
                            REGISTRY_FILE,
                            doc.line("vocabularies", name, "values", index, "representatives"),
                            f"vocabularies.{name}.{value.get('id')}.representatives",
                            f"'{key}' is not a retained entry; correct the key or add the entry to {pool.registry.pool['entries']}/",
                        )
                    )
    problems += _descriptions_denying_the_data(pool)
    url = (
        (doc.data.get("survey") or {}).get("publication", {}).get("url")
        if isinstance((doc.data.get("survey") or {}).get("publication"), dict)
        else None
    )
    if isinstance(url, str) and identity.url_problem(url):
        problems.append(
            Problem(
                REGISTRY_FILE,
                doc.line("survey", "publication", "url"),
                "survey.publication.url",
                f"'{url}' {identity.url_problem(url)}; give the published version's http(s) page",
            )
        )
    known = sorted(keys)
    for record in pool.all_records():
        unknown = [key for key in record.facts.distinct_from if key not in keys and key not in pool.unreadable]
        # a did-you-mean compares with every key of the pool: for the first few only, so
        # that a record listing thousands of unknown keys stays linear
        for key in unknown[:SUGGESTED]:
            hint = suggest(key, known, "correct or remove it")
            problems.append(
                Problem(record.rel, record.line("distinct_from"), "distinct_from", f"'{key}' is not a record in the pool; {hint}")
            )
        if len(unknown) > SUGGESTED:
            problems.append(
                Problem(
                    record.rel,
                    record.line("distinct_from"),
                    "distinct_from",
                    f"{len(unknown) - SUGGESTED:,} more keys are not records in the pool; remove them",
                )
            )
    return problems
