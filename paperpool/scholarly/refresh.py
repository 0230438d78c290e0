"""`paperpool refresh`: what has changed outside the pool since its records were written.

For each record (an entry, or an exclusion naming an arXiv id or DOI): a preprint arXiv
now lists as published (a journal reference, a DOI) or whose version of record OpenAlex
lists (a journal's or conference's location), a newer arXiv version than a versioned link names, a withdrawn arXiv paper, a retraction
or withdrawal notice Crossref holds for its DOI (`updated-by`), the published version
Crossref relates to a preprint DOI (`is-preprint-of`). For every record, entries and
exclusions: links that are dead (see links.py). Only facts are ever updated, and only fields the registry declares as facts
by their type: the venue (the field bibtex_import fills from a journal), the DOI (the
identifier of scheme doi) and the links (the url_list). Taxonomy fields are never
touched. Each update is written atomically and recorded in the record's history."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from paperpool.files.problems import PaperpoolError
from paperpool.files.yamlio import dump_yaml, write_atomic
from paperpool.formats.bibtex.importing import import_settings
from paperpool.pool import identity
from paperpool.pool.history import history_field
from paperpool.pool.reading import Pool, Record
from paperpool.pool.recordchecks import identity_tokens
from paperpool.pool.stubs import check_planned, ids_held, planned_record

from . import arxiv, crossref, links, openalex
from .client import Client

# a link ending in v and a longer run of digits than arXiv's versions have is no versioned link
# (and int() refuses a run past 4,300 digits)
_VERSIONED = re.compile(rf"arxiv\.org/(?:abs|pdf)/([^/?#]+?)v([0-9]{{1,{arxiv.MAX_VERSION_DIGITS}}})(?:\.pdf)?\Z")


@dataclass
class Finding:
    record: Record
    what: str  # published, version, withdrawn, retracted, dead_link
    message: str
    update: dict = field(default_factory=dict)  # field -> new value; empty: for a maintainer to judge

    def line(self) -> str:
        applied = "" if self.update else " (not changed by --write: for a maintainer to judge)"
        return f"{self.record.rel}: {self.what}: {self.message}{applied}"


@dataclass
class Facts:
    """The names of a kind's fields refresh may read or update, found by their type."""

    venue: str | None
    doi: str | None
    urls: str | None  # a list of links
    link: str | None = None  # a single link (an exclusion's): a dead one is reported, never removed
    identifiers: tuple = ()  # (field, scheme) of every identifier field, such as an exclusion's prefixed one

    @classmethod
    def of(cls, pool: Pool, kind: str = "entries") -> Facts:
        specs = pool.registry.fields[kind]
        read = import_settings(pool.registry, kind)["fields"]
        venue = next((name for name, sources in read.items() if "journal" in sources and specs[name].type == "text"), None)
        identifiers = tuple((name, spec.scheme) for name, spec in specs.items() if spec.type == "identifier")
        urls = next((name for name, spec in specs.items() if spec.type == "url_list"), None)
        link = next((name for name, spec in specs.items() if spec.type == "url"), None)
        return cls(venue, {scheme: name for name, scheme in identifiers}.get("doi"), urls, link, identifiers)

    def ids(self, data: dict) -> dict[str, str]:
        """The record's arXiv id and DOI, from whichever identifier fields hold them
        (arxiv_id, doi, or a prefixed identifier such as arXiv:2305.14325)."""
        found: dict[str, str] = {}
        for name, scheme in self.identifiers:
            value = data.get(name)
            if isinstance(value, str) and value.strip():
                for token_scheme, token in sorted(identity.identifier_tokens(scheme, value)):
                    if token_scheme in ("arxiv", "doi"):
                        found.setdefault(token_scheme, token)
        return found

    def links(self, data: dict) -> list[str]:
        """The record's links that are well-formed web addresses."""
        found = list(data.get(self.urls) or []) if self.urls else []
        found += [data.get(self.link)] if self.link else []
        return [url for url in found if isinstance(url, str) and identity.url_problem(url) is None]


def refresh(pool: Pool, client: Client, check_links: bool = True) -> list[Finding]:
    """What changed outside, for every record (entries and exclusions): publications,
    versions, withdrawals and retractions of the papers they name, and dead links."""
    kinds = {kind: Facts.of(pool, kind) for kind in pool.records}
    records = [(record, kinds[kind]) for kind, of_kind in pool.records.items() for record in of_kind]
    ids = {record.rel: facts.ids(record.data) for record, facts in records}
    wanted = [found["arxiv"] for found in ids.values() if "arxiv" in found]
    papers = arxiv.fetch_many(client, wanted) if wanted else {}
    elsewhere = _published_elsewhere(client, records, papers, ids)
    findings: list[Finding] = []
    for record, facts in records:
        found = ids[record.rel]
        paper = papers.get(found.get("arxiv", ""))
        if paper is not None:  # none: arXiv did not list it (arXiv keeps even withdrawn papers), so nothing to say
            findings += _arxiv_findings(paper, record, facts, elsewhere.get(paper.arxiv_id))
        if "doi" in found:
            findings += _crossref_findings(client, record, facts, found["doi"])
    all_links: dict[str, list[tuple[Record, Facts]]] = {}
    for record, facts in records:
        for url in facts.links(record.data):
            all_links.setdefault(url, []).append((record, facts))
    if check_links and all_links:
        for url, failed in links.dead_links(client, list(all_links)).items():
            for record, facts in all_links[url]:
                findings.append(
                    Finding(
                        record,
                        "dead_link",
                        f"{url} failed twice, {links.DEAD_AFTER_DAYS}+ days apart ({failed})",
                        _without(record, facts, url),
                    )
                )
    return findings


def _without(record: Record, facts: Facts, url: str) -> dict:
    """The update that drops a dead link: none when it is the record's only link, or its
    single link field's (a record needs one, and a maintainer finds the new address)."""
    listed = record.data.get(facts.urls) if facts.urls else None
    if not isinstance(listed, list) or url not in listed:
        return {}
    kept = [link for link in listed if link != url]
    return {facts.urls: kept} if kept else {}


def _unpublished(data: dict, facts: Facts) -> bool:
    """Whether a record names no venue but arXiv (or none at all)."""
    return bool(facts.venue) and data.get(facts.venue) in (None, "", "arXiv")


def _published_elsewhere(client: Client, records: list, papers: dict, ids: dict) -> dict[str, openalex.Published]:
    """The versions of record OpenAlex knows of for the preprints whose records name no
    venue and whose arXiv entry gives no journal reference, by arXiv id."""
    asked = [
        paper.arxiv_id
        for record, facts in records
        if (paper := papers.get(ids[record.rel].get("arxiv", ""))) is not None
        and not paper.journal_ref
        and _unpublished(record.data, facts)
    ]
    return openalex.versions_of_record(client, asked)


def _arxiv_findings(
    paper: arxiv.ArxivPaper, record: Record, facts: Facts, elsewhere: openalex.Published | None = None
) -> list[Finding]:
    data = record.data
    found = []
    if paper.withdrawn:
        found.append(Finding(record, "withdrawn", f"arXiv {paper.arxiv_id}v{paper.version} says: {paper.comment}"))
    update = {}
    venue = paper.journal_ref or (elsewhere.venue if elsewhere else None)
    if venue and _unpublished(data, facts):
        update[facts.venue] = venue
    doi = paper.doi or (elsewhere.doi if elsewhere else None)
    if doi and facts.doi and not data.get(facts.doi):
        update[facts.doi] = identity.doi(doi)
    if update:
        said = ""
        if elsewhere and not paper.journal_ref:  # which of the facts OpenAlex gave
            given = [
                name
                for name, value in ((facts.venue, elsewhere.venue), (facts.doi, elsewhere.doi))
                if name in update and value is not None and not (name == facts.doi and paper.doi)
            ]
            said = f" ({' and '.join(given)} of its version of record, as OpenAlex lists it)" if given else ""
        found.append(
            Finding(
                record,
                "published",
                f"arXiv {paper.arxiv_id} is now published{said}: "
                + ", ".join(f"{name} {value}" for name, value in update.items()),
                update,
            )
        )
    for url in data.get(facts.urls) or [] if facts.urls else []:
        versioned = _VERSIONED.search(str(url))
        if versioned and identity.arxiv_id(versioned.group(1)) == paper.arxiv_id and int(versioned.group(2)) < paper.version:
            found.append(Finding(record, "version", f"{url} links version {versioned.group(2)}; arXiv has v{paper.version}"))
    return found


def _crossref_findings(client: Client, record: Record, facts: Facts, doi: str) -> list[Finding]:
    work = crossref.fetch(client, doi)
    if work is None:
        return []
    found = []
    notice = work.retraction
    if notice:
        found.append(
            Finding(
                record,
                "retracted",
                f"Crossref holds a {notice.get('type')} notice for {doi}: {notice.get('DOI', 'no DOI')} ({_day(notice)})",
            )
        )
    if work.published_as and facts.doi:
        published = identity.doi(work.published_as[0])
        found.append(Finding(record, "published", f"{doi} is a preprint of {published}", {facts.doi: published}))
    return found


def _day(notice: dict) -> str:
    """The notice's date (`updated.date-parts`, [[2026, 10, 1]]) as 2026-10-01, or
    "undated": a date of another shape is no reason to hide the notice."""
    updated = notice.get("updated")
    parts = updated.get("date-parts") if isinstance(updated, dict) else None
    first = parts[0] if isinstance(parts, list) and parts else None
    if not isinstance(first, list) or not first or not all(type(part) in (int, str) for part in first):
        return "undated"
    return "-".join(f"{part:02}" if isinstance(part, int) else part for part in first)


def apply(pool: Pool, findings: list[Finding], today: dt.date) -> list[str]:
    """Write each record's updates at once, recording the earlier values in its
    history; returns the files written."""
    by_record: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.update:
            by_record.setdefault(finding.record.rel, []).append(finding)
    planned = []
    held = ids_held(pool)
    for found in by_record.values():
        record = found[0].record
        data = dict(record.data)
        was, whys = {}, []
        for finding in found:
            for name, value in finding.update.items():
                was.setdefault(name, data.get(name))
                data[name] = value
            whys.append(f"refresh: {finding.message}")
        history = history_field(pool.registry, record.kind)
        if history:
            data[history] = [*(data.get(history) or []), {"date": today, "was": was, "why": "; ".join(whys)}]
        # what a service says is a stranger's text: a value validate would refuse (a control
        # character, a record over its size) refuses the whole update, as add refuses it
        _refuse_ids_of_another(pool, record, data, held)
        refused = check_planned(data, record.doc.path, 1, record.rel, pool.registry, record.kind)
        if refused and history and all(problem.field.split(".")[0].split("[")[0] == history for problem in refused):
            raise PaperpoolError(  # not the services' doing: the record's own history has no room
                f"{record.rel}: its {history} cannot take the entry this update records; nothing was written "
                f"(move its older entries out of {history} by hand, then run refresh --write again)",
                [str(problem) for problem in refused],
            )
        if refused:
            raise PaperpoolError(
                f"{record.rel}: the services' answers would make a record validate refuses; nothing was written "
                "(check the paper's page, and correct the record by hand)",
                [str(problem) for problem in refused],
            )
        planned.append((record, _comments_above(record) + dump_yaml(data)))
    for record, text in planned:  # every record's text made before any file is replaced
        write_atomic(record.doc.path, text, record.rel)
    return [record.rel for record, _ in planned]


def _refuse_ids_of_another(pool: Pool, record: Record, data: dict, held: dict) -> None:
    """Refuse an update that gives `record` an arXiv id, DOI, OpenReview id or link another
    record holds (validate could refuse the pool: two records of one paper), whatever
    distinct_from says; else count its new ids as held, so that two records of one run
    are not given one id either."""
    updated = planned_record(data, record.doc.path, record.rel, record.kind)
    tokens = identity_tokens(updated, pool.registry.fields[record.kind])
    # distinct_from is not read here: validate lets two records share an id only in one
    # order of their files, and an update a maintainer did not write must never depend on it
    for token in sorted(tokens):
        others = sorted(owner for owner in held.get(token, ()) if owner != record.rel)
        if others:
            what = identity.TOKEN_NAMES.get(token[0], token[0])
            raise PaperpoolError(
                f"{record.rel}: the services' answers would give it {what} {token[1]}, which {others[0]} holds; nothing "
                "was written (if the two are one paper, merge them by hand; else check the paper's page)"
            )
    for token in tokens:
        held.setdefault(token, []).append(record.rel)


def _comments_above(record: Record) -> str:
    """The comment lines a record file starts with (its schema's modeline), kept above
    the rewritten record: the YAML written again holds the data only."""
    try:
        text = record.doc.path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    kept = []
    for line in text.splitlines(keepends=True):
        if not line.startswith("#"):
            break
        kept.append(line)
    return "".join(kept)
