"""New records on their way into the pool (from a CSV, a .bib file or `paperpool add`):
completed to every declared field, checked, compared with the records already there,
and written without ever replacing a file."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

from rapidfuzz import fuzz, process

from paperpool.files.problems import PaperpoolError, Problem
from paperpool.files.yamlio import (
    MAX_FILE_BYTES,
    NEW_FILE_FIX,
    Document,
    YamlProblem,
    check_output,
    dump_yaml,
    parse_yaml,
    write_new,
)
from paperpool.registry import FieldSpec, Registry

from . import identity
from .reading import Pool, Record
from .recordchecks import RecordChecker, identity_tokens


@dataclass
class Planned:
    path: Path
    record: dict
    header: str = ""  # written above the record: the modeline naming its schema, where the pool has one


def complete(record: dict, specs: dict[str, FieldSpec], registry: Registry, kind: str, added: dt.date) -> dict:
    """Every declared field present, in the registry's order; derived values filled in,
    and what the source cannot know marked with the registry's unknown marker."""
    marker = registry.unknown_marker
    completed = {}
    for name, spec in specs.items():
        value = record.get(name)
        if value is None and spec.type == "history":
            continue  # a new record has no changes yet
        if value is None and spec.type == "evidence":
            if not any(specs[target].missing_means == "not_assessed" for target in spec.targets if target in specs):
                continue  # evidence for tags a record always has is given when they are read, not asked for
            value = marker  # the assessment it records is asked for, like every other unknown
        if value is None and spec.derived_from:
            source = record.get(spec.derived_from)
            # not known until its source is: marked, so that validate says what to write
            value = marker if source in (None, marker) else registry.derivation_source(specs, spec).maps_to(source)
        if value is None and spec.type == "date" and spec.required:
            value = added
        if value is None and spec.type == "choice" and spec.required:
            # the vocabulary's "not judged yet" value, where it has one (not_assessed: true)
            not_assessed = [v.id for v in registry.vocabularies[spec.vocabulary].values if v.extra.get("not_assessed")]
            value = not_assessed[0] if not_assessed else marker
        if value is None and spec.type in ("text_list", "url_list", "choice_list", "key_list"):
            value = marker if spec.required else []
        if value is None and spec.type == "choice_map":
            value = {}
        if value is None and spec.required:
            value = marker
        completed[name] = value
    return completed


def identifiers_from_links(record: dict, specs: dict[str, FieldSpec]) -> None:
    """Fill an empty arXiv / DOI / OpenReview field from a link that carries the id."""
    found_ids = set()
    for spec in specs.values():
        if spec.type == "url_list":
            for url in record.get(spec.name) or []:
                if identity.url_problem(url) is None:
                    found_ids |= set(identity.ids_in_url(url).items())
    for spec in specs.values():
        if spec.type == "identifier" and spec.scheme != "prefixed" and not record.get(spec.name):
            found = sorted(value for scheme, value in found_ids if scheme == spec.scheme)
            if len(found) == 1:
                record[spec.name] = found[0]


def planned_record(record: dict, target: Path, source: str, kind: str) -> Record:
    """A record not yet written, as the validator sees records; `source` names where it
    comes from in messages."""
    return Record(kind, source, Document(target, record))


def check_planned(record: dict, target: Path, line: int, name: str, registry: Registry, kind: str) -> list[Problem]:
    """Check a planned record as validate will check the file written for it: the YAML
    text it will be, within the size limit of a record file, read back by the same
    reader and checked by the same record checks. Errors only (a stub's TODOs are
    warnings), reported at the source's line."""
    text = dump_yaml(record)
    size = len(text.encode("utf-8"))
    if size > MAX_FILE_BYTES:
        return [_too_big(record, size, line, name)]
    try:
        document = parse_yaml(text, target)
    except YamlProblem as exc:
        return [Problem(name, line, exc.field, exc.message)]
    problems = RecordChecker(registry, Record(kind, name, document)).check()
    return [Problem(name, line, p.field, p.message, p.severity) for p in problems if p.severity == "error"]


def _too_big(record: dict, size: int, line: int, name: str) -> Problem:
    """The record's largest field named as the one to shorten."""
    sizes = {field: len(dump_yaml({field: value}).encode("utf-8")) for field, value in record.items()}
    largest = max(sizes, key=sizes.get)
    return Problem(
        name,
        line,
        largest,
        f"is {sizes[largest]:,} bytes as YAML, which makes the record {size:,} bytes, "
        f"over the {MAX_FILE_BYTES:,}-byte limit of a record file; shorten it",
    )


def ids_held(pool: Pool) -> dict[tuple, list[str]]:
    """Each (scheme, id) token of the pool's records (an arXiv id, a DOI, a link), and the
    records holding it, in the order the pool reads them."""
    held: dict[tuple, list[str]] = {}
    for record in pool.all_records():
        for token in identity_tokens(record, pool.registry.fields[record.kind]):
            held.setdefault(token, []).append(record.rel)
    return held


class PoolIndex:
    """What the pool already holds, for telling whether a new record is a paper already
    recorded: the same arXiv id, DOI, OpenReview id or link, or a title at least
    `pool.title_similarity` alike (rapidfuzz's ratio of the lower-cased words, 0-100)."""

    def __init__(self, pool: Pool):
        self.registry = pool.registry
        self.threshold = pool.registry.title_similarity
        self.keys = {record.key.casefold(): record.rel for record in pool.all_records()}
        self.tokens: dict[tuple, str] = {}
        self.ids_of: dict[str, list[tuple]] = {}  # record -> its (scheme, id) tokens
        self.key_of: dict[str, str] = {}  # record (its file, or where a planned one comes from) -> its key
        self.titles: list[str] = []
        self.title_owners: list[str] = []
        self.holders: dict[str, list[int]] = {}  # title key -> positions in titles
        self.alike: dict[str, list[tuple[str, float]]] | None = None  # by prepare()
        for record in pool.all_records():
            self.add(record)

    def prepare(self, titles: list) -> None:
        """The titles about to be asked about (a whole file's): how alike they are to the
        pool's and to each other is found at once, by identity.similar_pairs (numpy rules
        out the pairs whose letters keep them apart, rapidfuzz compares the rest in C),
        where asking one by one compares each with every title before it in Python: 11,000
        long titles took over two minutes."""
        keys = sorted(
            {identity.title_key(title) for title in titles if isinstance(title, str) and title.strip()} | set(self.titles)
        )
        self.alike = {key: [] for key in keys}
        for i, j, score in identity.similar_pairs(keys, self.threshold):
            self.alike[keys[i]].append((keys[j], score))
            self.alike[keys[j]].append((keys[i], score))

    def add(self, record: Record) -> None:
        """Count a record in (a planned one too, so that a file's own repeats are caught)."""
        self.keys[record.key.casefold()] = record.rel
        tokens = identity_tokens(record, self.registry.fields[record.kind])
        for token in tokens:
            self.tokens.setdefault(token, record.rel)
        self.ids_of[record.rel] = list(tokens)
        self.key_of[record.rel] = record.key
        title = record.data.get("title")
        if isinstance(title, str) and title.strip():
            key = identity.title_key(title)
            self.holders.setdefault(key, []).append(len(self.titles))
            self.titles.append(key)
            self.title_owners.append(record.rel)

    def same_paper(self, record: Record) -> str | None:
        """Which record `record` duplicates and why ("papers/x.yaml (same arXiv id
        2412.01928)"), or None."""
        allowed = set(record.data.get("distinct_from") or [])
        for token in sorted(identity_tokens(record, self.registry.fields[record.kind])):
            owner = self.tokens.get(token)
            if owner and self.key_of.get(owner, Path(owner).stem) not in allowed:
                return f"{owner} (same {identity.TOKEN_NAMES.get(token[0], token[0])} {token[1]})"
        twin = self._title_twin(record)
        if twin is not None and self.key_of[twin[0]] not in allowed and not self._ids_differ(record, twin[0]):
            return f"{twin[0]} (title {twin[1]:.0f}% alike)"
        return None

    def title_twin_of_other_ids(self, record: Record) -> tuple[str, str] | None:
        """(where it is, its key) of the record whose title is at least
        pool.title_similarity like this one's while their ids of one scheme differ (two
        arXiv ids, two DOIs): two works, which same_paper does not call duplicates."""
        twin = self._title_twin(record)
        return (twin[0], self.key_of[twin[0]]) if twin is not None and self._ids_differ(record, twin[0]) else None

    def _title_twin(self, record: Record) -> tuple[str, float] | None:
        title = record.data.get("title")
        if not (isinstance(title, str) and title.strip() and self.titles):
            return None
        best = self._most_alike(identity.title_key(title))
        return (self.title_owners[best[1]], best[0]) if best else None

    def _ids_differ(self, record: Record, other: str) -> bool:
        """Whether the two records give ids of one scheme and share none of them."""
        return identity.ids_differ(identity_tokens(record, self.registry.fields[record.kind]), self.ids_of.get(other, ()))

    def _most_alike(self, key: str) -> tuple[float, int] | None:
        """The title most alike to `key` at or past the threshold, the first counted in
        on a tie, as (score, position), or None (rapidfuzz's extractOne, from the pairs
        prepare() found where it knows the key)."""
        if self.alike is None or key not in self.alike:
            best = process.extractOne(key, self.titles, scorer=fuzz.ratio, score_cutoff=self.threshold)
            return (best[1], best[2]) if best else None
        candidates = [(score, self.holders[other][0]) for other, score in self.alike[key] if other in self.holders]
        if key in self.holders:
            candidates.append((fuzz.ratio(key, key), self.holders[key][0]))
        return max(candidates, key=lambda found: (found[0], -found[1]), default=None)

    def key_taken(self, key: str) -> str | None:
        return self.keys.get(key.casefold())


def write_planned(planned: list[Planned]) -> None:
    """Write each new record; refuse (before writing any) when anything is already where
    one goes: a link (even one leading nowhere) or a device as write_new refuses it, a file."""
    for item in planned:
        check_output(item.path, fix=NEW_FILE_FIX)
        if os.path.lexists(item.path):
            raise PaperpoolError(f"{item.path}: already exists; paperpool never overwrites a record: choose another key")
    for item in planned:
        try:
            write_new(item.path, item.header + dump_yaml(item.record))
        except FileExistsError:
            raise PaperpoolError(
                f"{item.path}: appeared while writing; paperpool never overwrites a record: choose another key"
            ) from None
