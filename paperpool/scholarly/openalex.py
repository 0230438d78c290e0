"""OpenAlex's works API (api.openalex.org/works/doi:DOI): where Crossref has no record
(DataCite DOIs such as arXiv's and Zenodo's) or is short of one, OpenAlex has the work
with its full author list and the venue of its published version. Read as a BibTeX
record, so that import-bib's code makes the stub."""

from __future__ import annotations

from urllib.parse import quote

from .. import identity
from ..adding import suggested_key
from ..bibtex import BibRecord, person
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
    people = [person(authorship["author"]["display_name"]) for authorship in _list(work.get("authorships"))
              if isinstance(authorship.get("author"), dict) and isinstance(authorship["author"].get("display_name"), str)]
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
    location = work.get("primary_location")
    source = location.get("source") if isinstance(location, dict) else None
    name = source.get("display_name") if isinstance(source, dict) else None
    return " ".join(name.split()) if isinstance(name, str) and name.strip() else None


def _list(value) -> list[dict]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
