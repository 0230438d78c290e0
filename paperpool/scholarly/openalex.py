"""OpenAlex's works API (api.openalex.org/works/doi:DOI): where Crossref has no record
(DataCite DOIs such as arXiv's and Zenodo's) or is short of one, OpenAlex has the work
with its full author list and the venue of its published version. Read as a BibTeX
record, so that import-bib's code makes the stub.

OpenAlex also joins a preprint to its published version as locations of one work, which
arXiv often does not know (no journal reference, no DOI): `published` finds that version,
for `add --arxiv` and `refresh`."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from paperpool.files.problems import PaperpoolError
from paperpool.formats.bibtex.reading import BibRecord, person
from paperpool.pool import identity
from paperpool.pool.adding import suggested_key

from .client import Client, malformed, parsed_json
from .services import OPENALEX


def fetch(client: Client, doi: str, line: int = 1) -> BibRecord | None:
    """The work OpenAlex has under this DOI, or None."""
    doi = identity.doi(doi)
    answer = client.get(OPENALEX, f"/works/doi:{quote(doi, safe='/()')}")
    if answer is None:
        return None
    return parse(answer.text, answer.url, doi, line)


def parse(text: str, url: str, doi: str, line: int = 1) -> BibRecord:
    work = parsed_json(OPENALEX, url, text)
    title = work.get("title") or work.get("display_name") if isinstance(work, dict) else None
    if not isinstance(title, str) or not title.strip():
        raise malformed(OPENALEX, url, "a work without a title")
    people = [
        person(authorship["author"]["display_name"])
        for authorship in _list(work.get("authorships"))
        if isinstance(authorship.get("author"), dict) and isinstance(authorship["author"].get("display_name"), str)
    ]
    fields = {"title": " ".join(title.split()), "doi": doi, "url": f"https://doi.org/{doi}"}
    year = work.get("publication_year")
    if isinstance(year, int) and not isinstance(year, bool):
        fields["year"] = str(year)
    venue = venue_of(work)
    if venue:
        fields["journal"] = venue
    for location in _list(work.get("locations")):  # the arXiv copy, whose id the pool records too
        found = identity.ids_in_url(str(location.get("landing_page_url") or ""))
        if "arxiv" in found:
            fields["eprint"], fields["archiveprefix"] = found["arxiv"], "arXiv"
            break
    key = suggested_key({"authors": people, "year": fields.get("year"), "title": fields["title"]})
    return BibRecord(key, "article", line, fields, people)


def venue_of(work: dict) -> str | None:
    """The venue of the work's primary location: its source's name."""
    return _source(work.get("primary_location"))[1]


def _source(location) -> tuple[str | None, str | None]:
    """(type, name) of the source hosting a location (journal, conference, repository...),
    each None where OpenAlex gives none or not as text."""
    source = location.get("source") if isinstance(location, dict) else None
    if not isinstance(source, dict):
        return None, None
    kind, name = source.get("type"), source.get("display_name")
    return (kind if isinstance(kind, str) else None, " ".join(name.split()) if isinstance(name, str) and name.strip() else None)


# Where a version of record is published; a `repository` (arXiv, a university's) holds copies
PUBLISHING_SOURCES = ("journal", "conference")
BATCH = 50  # DOIs asked in one filter (OpenAlex takes up to 100 values joined by |)


@dataclass
class Published:
    venue: str
    kind: str  # journal or conference, as OpenAlex types the source
    doi: str | None  # the published version's DOI, when its location names one


def published(work) -> Published | None:
    """The work's version of record, when OpenAlex has one: its first location (the
    primary first) that OpenAlex marks as the published version (not a submitted or
    accepted copy) and that a journal or conference hosts. Its DOI is the one its own
    link names, never the work's: that may be another copy's (a preprint server's)."""
    if not isinstance(work, dict):
        return None
    for location in [work.get("primary_location"), *_list(work.get("locations"))]:
        if not isinstance(location, dict):
            continue
        if location.get("version") != "publishedVersion" and location.get("is_published") is not True:
            continue
        kind, name = _source(location)
        if kind in PUBLISHING_SOURCES and name:
            doi = identity.ids_in_url(str(location.get("landing_page_url") or "")).get("doi")
            return Published(name, kind, doi if doi and not _is_arxiv_doi(doi) else None)
    return None


def versions_of_record(client: Client, arxiv_ids: list[str]) -> dict[str, Published]:
    """The versions of record OpenAlex lists for these arXiv papers, by arXiv id. OpenAlex
    only adds to what arXiv says: when it cannot be asked (down, rate-limited, a malformed
    answer), the papers stay as arXiv has them and a note says so (client.notes)."""
    if not arxiv_ids:
        return {}
    try:
        works = fetch_by_arxiv(client, arxiv_ids)
    except PaperpoolError as exc:
        client.notes.append(
            f"note: {str(exc).split(';')[0]}; the venues OpenAlex lists for arXiv papers were not "
            "checked, and arXiv's record was kept"
        )
        return {}
    return {arxiv_id: found for arxiv_id, work in works.items() if (found := published(work))}


def fetch_by_arxiv(client: Client, arxiv_ids: list[str]) -> dict[str, dict]:
    """The works OpenAlex has for these arXiv papers (asked by their arXiv DOIs, 10.48550/
    arXiv.ID, BATCH at a time), by arXiv id; a paper OpenAlex does not hold is left out."""
    wanted = sorted({identity.arxiv_id(one) for one in arxiv_ids})
    found: dict[str, dict] = {}
    for start in range(0, len(wanted), BATCH):
        chunk = wanted[start : start + BATCH]
        asked = {one.lower(): one for one in chunk}  # DOIs are case-blind: an old id's archive (math.GT) comes back lower-cased
        dois = "|".join(f"10.48550/arxiv.{one}" for one in chunk)
        answer = client.get(OPENALEX, "/works", {"filter": f"doi:{dois}", "per-page": str(len(chunk))})
        if answer is None:
            continue
        body = parsed_json(OPENALEX, answer.url, answer.text)
        results = body.get("results") if isinstance(body, dict) else None
        if not isinstance(results, list):
            raise malformed(OPENALEX, answer.url, "no `results` list")
        for work in _list(results):
            arxiv_id = _arxiv_id_of(work)
            if arxiv_id is not None and arxiv_id.lower() in asked:
                found[asked[arxiv_id.lower()]] = work
    return found


def _arxiv_id_of(work: dict) -> str | None:
    """The arXiv id a work carries: in its DOI (arXiv's DataCite DOI) or a location's link."""
    doi = work.get("doi")
    if isinstance(doi, str) and _is_arxiv_doi(doi):
        return identity.arxiv_id(identity.doi(doi).split("arxiv.", 1)[1])
    for location in _list(work.get("locations")):
        carried = identity.ids_in_url(str(location.get("landing_page_url") or ""))
        if "arxiv" in carried:
            return carried["arxiv"]
    return None


def _is_arxiv_doi(doi: str) -> bool:
    return identity.doi(doi).lower().startswith("10.48550/arxiv.")


def _list(value) -> list[dict]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
