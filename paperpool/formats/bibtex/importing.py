"""`paperpool import-bib`: one stub record per BibTeX record, papers the pool already
holds reported and skipped, nothing ever overwritten.

Which BibTeX fields fill which record field is the registry's `bibtex_import` section
(or, without one, the conventional names where the registry declares them). How a value
is read depends on the target field's type: the table READERS below.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from paperpool.files.inputs import read_input
from paperpool.files.problems import PaperpoolError, Problem, plural, printable
from paperpool.pool import identity
from paperpool.pool.fileschemas import header
from paperpool.pool.reading import Pool
from paperpool.pool.stubs import (
    Planned,
    PoolIndex,
    check_planned,
    complete,
    planned_record,
)
from paperpool.registry import KEY_RE, FieldSpec, Registry

from . import sections
from .reading import ARXIV_IN_TEXT, BibRecord, read_bib, refuse_unreadable

# A .bib of 10,000 records is about 5 MB; a bigger file is split or is not a .bib.
MAX_BIB_BYTES = 5_000_000
# Without a bibtex_import section: record field -> the BibTeX fields read, first set wins.
DEFAULT_FIELDS = {
    "title": ["title"],
    "authors": ["author"],
    "year": ["year"],
    "venue": ["journal", "booktitle", "publisher"],
    "doi": ["doi", "url"],
    "arxiv_id": ["eprint", "journal", "url", "note", "howpublished"],
    "openreview_id": ["url", "howpublished", "note"],
    "urls": ["url", "howpublished", "note"],
    "url": ["url", "howpublished", "note"],
    "identifier": ["eprint", "doi", "url", "note"],
}
_DOI_IN_TEXT = re.compile(r"\b(10\.\d{4,9}/[^\s,;{}]+)")
_YEAR = re.compile(r"\b(\d{4})\b")
_ARXIV_PREPRINT = re.compile(r"^arxiv(?: e-prints| preprint)?(?:,? *arxiv)?[: ]*\d{4}\.\d{4,5}(?:v\d+)?\Z", re.IGNORECASE)
LINKS = {"arxiv": "https://arxiv.org/abs/{}", "doi": "https://doi.org/{}", "openreview": "https://openreview.net/forum?id={}"}
PREFIXES = {"arxiv": "arXiv:", "doi": "DOI:", "openreview": "OpenReview:"}


# ---------------------------------------------------------------------------------
# Reading one record field from a BibTeX record, by the field's type
# ---------------------------------------------------------------------------------


def _values(bib: BibRecord, sources: list[str]) -> list[str]:
    return [bib.fields[name] for name in sources if bib.fields.get(name)]


def _ids(bib: BibRecord, sources: list[str]) -> dict[str, str]:
    """The paper identifiers the listed fields carry, the first found per scheme."""
    found: dict[str, str] = {}
    for name in sources:
        value = bib.fields.get(name, "")
        if not value:
            continue
        # an id is read as written but for braces, which no id holds (`eprint = "{2102.02278}"`)
        written = value.replace("{", "").replace("}", "")
        if name == "eprint" and bib.fields.get("archiveprefix", "arxiv").lower() == "arxiv":
            found.setdefault("arxiv", identity.arxiv_id(written))
        if name == "doi":
            found.setdefault("doi", identity.doi(written))
        for url in bib.links(name):
            for scheme, carried in identity.ids_in_url(url).items():
                found.setdefault(scheme, carried)
        if match := ARXIV_IN_TEXT.search(value):
            found.setdefault("arxiv", identity.arxiv_id(match.group(1)))
        if name != "eprint" and (match := _DOI_IN_TEXT.search(value)):
            found.setdefault("doi", match.group(1))
    return found


def _read_text(bib, sources, spec):
    values = _values(bib, sources)
    if not values:
        return None
    text = " ".join(values[0].split())
    # arXiv's own BibTeX says journal = {arXiv preprint arXiv:2410.08115}: the venue is arXiv
    return "arXiv" if _ARXIV_PREPRINT.match(text) else text


def _read_integer(bib, sources, spec):
    for value in _values(bib, sources):
        if match := _YEAR.search(value):
            return int(match.group(1))
    return None


def _read_names(bib, sources, spec):
    # bibtexparser splits only `author`; "others" is kept out (authors_complete says it)
    if "author" not in sources:
        return None
    return list(bib.people) or None


def _read_identifier(bib, sources, spec):
    found = _ids(bib, sources)
    if spec.scheme == "prefixed":
        return next((PREFIXES[s] + found[s] for s in PREFIXES if s in found), None)
    return found.get(spec.scheme)


def _read_urls(bib, sources, spec):
    urls = []
    for name in sources:
        # `url` holds links only, so all of it is kept and checked (a javascript: link is
        # an error, not dropped); other fields are prose with links in it
        urls += [url for url in bib.links(name) if url not in urls]
    if not urls:  # a record with an id but no link gets the id's canonical page
        urls = [LINKS[scheme].format(value) for scheme, value in _ids(bib, list(bib.fields)).items() if scheme in LINKS][:1]
    return urls


def _read_url(bib, sources, spec):
    urls = _read_urls(bib, sources, spec)
    return urls[0] if urls else None


READERS: dict[str, Callable[[BibRecord, list[str], FieldSpec], object]] = {
    "text": _read_text,
    "integer": _read_integer,
    "text_list": _read_names,
    "identifier": _read_identifier,
    "url_list": _read_urls,
    "url": _read_url,
}


# ---------------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------------


def import_settings(registry: Registry, kind: str) -> dict:
    """{"fields": {record field: [bib fields]}, "keep": mapping field or None,
    "authors_complete": bool field or None} for one kind of record."""
    section = registry.section(sections.IMPORT).get(kind) if registry.section(sections.IMPORT) else None
    if section:
        return {
            "fields": section.get("fields") or {},
            "keep": section.get("keep"),
            "authors_complete": section.get("authors_complete"),
        }
    specs = registry.fields[kind]
    fields = {name: sources for name, sources in DEFAULT_FIELDS.items() if name in specs and specs[name].type in READERS}
    keep = "bibtex" if kind == "entries" and getattr(specs.get("bibtex"), "type", None) == "mapping" else None
    complete = "authors_complete" if getattr(specs.get("authors_complete"), "type", None) == "bool" else None
    return {"fields": fields, "keep": keep, "authors_complete": complete}


# ---------------------------------------------------------------------------------
# The import
# ---------------------------------------------------------------------------------


@dataclass
class Created:
    planned: Planned
    source: str  # "new.bib:12 (smith2024)"
    renamed_from: str | None = None  # the key the .bib gave, when that one was taken


@dataclass
class Skipped:
    source: str
    duplicate_of: str  # "papers/malt.yaml (same arXiv id 2412.01928)"


@dataclass
class BibImport:
    created: list[Created] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # each record not imported: its place, what is wrong, the fix
    records_refused: int = 0  # the records those lines stand for
    notes: list[str] = field(default_factory=list)  # how a record was read, where the file left a choice
    distinct: list[str] = field(default_factory=list)  # records kept beside one of a title alike, their ids differing


def import_bib(pool: Pool, bib_path: Path, kind: str, added: dt.date, all_or_nothing: bool = False) -> BibImport:
    """The stubs to write for each record of a .bib file, the records skipped as papers
    the pool (or an earlier record of the file) already holds, and each record that
    cannot be imported, with its line and the fix. With `all_or_nothing`, any such record
    is a PaperpoolError listing them all, and nothing is to be written."""
    name = bib_path.name
    read = read_bib(read_input(bib_path, MAX_BIB_BYTES), name)
    if read.refused and (all_or_nothing or not read.records):
        refuse_unreadable(read.refused, name)
    if not read.records:
        raise PaperpoolError(f"{name}: no BibTeX records found; a record starts like @article{{key, ...")
    result = import_records(
        pool,
        read.records,
        name,
        kind,
        added,
        lambda bib: f"{name}:{bib.line}",
        read.refused,
        all_or_nothing,
        read.records_refused,
    )
    result.notes = read.notes
    return result


def import_records(
    pool: Pool,
    records: list[BibRecord],
    name: str,
    kind: str,
    added: dt.date,
    where: Callable[[BibRecord], str],
    unreadable: list[tuple[int, str]] = (),
    all_or_nothing: bool = True,
    unreadable_records: int = 0,
) -> BibImport:
    """import_bib's work on records read from file `name` (a .bib, or another format read
    as BibTeX records), `where` naming each record's place in it ("new.bib:12");
    `unreadable` the file's records that could not be read, (line, message)."""
    registry = pool.registry
    settings = import_settings(registry, kind)
    specs = registry.fields[kind]
    index = PoolIndex(pool)
    index.prepare([bib.title for bib in records])
    numbers: dict[str, int] = {}  # _free_key's
    result, problems = BibImport(), [(line, message.split(": ", 1)[0], message) for line, message in unreadable]
    for bib in records:
        source = f"{where(bib)} ({bib.key})"
        if not bib.title:
            problems.append(
                (
                    bib.line,
                    where(bib),
                    Problem(name, bib.line, "title", f"record '{bib.key}' has no title; add title = {{...}} to it"),
                )
            )
            unreadable_records += 1
            continue
        record = stub(bib, settings, specs, registry)
        key, wanted = _free_key(bib.key, index, lambda key: os.path.lexists(registry.record_path(kind, key)), numbers)
        record["key"] = key
        record = complete(record, specs, registry, kind, added)
        target = registry.record_path(kind, key)
        planned = planned_record(record, target, source, kind)
        duplicate = index.same_paper(planned)
        if duplicate:
            result.skipped.append(Skipped(source, duplicate))
            continue
        twin = index.title_twin_of_other_ids(planned)
        if twin is not None:
            written = ""
            if "distinct_from" in specs:  # the registry's field for "not the same paper"
                record["distinct_from"] = [twin[1]]
                planned = planned_record(record, target, source, kind)
                written = " (distinct_from written)"
            result.distinct.append(f"{source}: its title is like {twin[0]}'s, its ids differ: both kept{written}")
        found = check_planned(record, target, bib.line, name, registry, kind)
        if found:
            problems += [(bib.line, where(bib), problem) for problem in found]
            unreadable_records += 1
            continue
        index.add(planned)
        result.created.append(
            Created(Planned(target, record, header(registry, kind, target)), source, wanted if wanted != key else None)
        )
    lines = [_said(place, problem) for _, place, problem in sorted(problems, key=lambda found: found[0])]
    if lines and (all_or_nothing or not (result.created or result.skipped)):  # nothing imported: as one error
        raise PaperpoolError(f"{name}: nothing imported, {plural(len(lines), 'problem')}:", lines[:50])
    result.refused, result.records_refused = lines, unreadable_records
    return result


def _said(place: str, problem: Problem | str) -> str:
    """A record's problem as one line: a message of the reading names its place itself."""
    if isinstance(problem, str):
        return printable(problem)
    return printable(f"{place}: " + (f"{problem.field}: " if problem.field else "") + problem.message)


def stub(bib: BibRecord, settings: dict, specs: dict[str, FieldSpec], registry: Registry) -> dict:
    """The record fields a BibTeX record fills; the rest is left for `complete`."""
    record = {}
    for name, sources in settings["fields"].items():
        value = READERS[specs[name].type](bib, sources, specs[name])
        if value not in (None, "", []):
            record[name] = value
    if settings["authors_complete"]:
        record[settings["authors_complete"]] = not bib.more_authors
    if settings["keep"]:
        record[settings["keep"]] = _kept(bib, specs[settings["keep"]], registry)
    return record


def _kept(bib: BibRecord, spec: FieldSpec, registry: Registry) -> dict:
    """The BibTeX type, key and the fields the mapping declares, as the .bib gave them."""
    kept = {}
    subfields = spec.fields or {}
    if "type" in subfields:
        vocabulary = registry.vocabularies.get(subfields["type"].vocabulary)
        known = vocabulary.ids if vocabulary else []
        kept["type"] = bib.type if bib.type in known else ("misc" if "misc" in known else registry.unknown_marker)
    if "key" in subfields:
        kept["key"] = bib.key
    for name in subfields:
        if name not in ("type", "key", "year") and bib.fields.get(name):
            kept[name] = bib.fields[name]
    return kept


def _free_key(citation_key: str, index: PoolIndex, occupied: Callable[[str], bool], numbers: dict[str, int]) -> tuple[str, str]:
    """A record key made from the citation key (lower case, hyphens), with -2, -3 ...
    appended while another record holds it, or anything else lies where its file would
    (a link, which is no record). Returns (key, the key first wanted). `numbers` keeps,
    for each key wanted in this import, the number last given (1: the key itself), below
    which every one is taken, as records are only added: 16,000 items of one citation key
    had each try every number before its own (128 million tries)."""
    wanted = re.sub(r"[^a-z0-9]+", "-", citation_key.lower()).strip("-")[:70] or "record"
    number = numbers.get(wanted, 1)
    key = wanted if number == 1 else f"{wanted}-{number}"
    while index.key_taken(key) or not KEY_RE.match(key) or occupied(key):
        number += 1
        key = f"{wanted}-{number}"
    numbers[wanted] = number
    return key, wanted
