"""Crossref's works API (api.crossref.org/works/DOI): a work's metadata as JSON, read as
the CSL item it nearly is and then as the BibTeX record import-csljson reads, so that
import-bib's code makes the stub. Also what `refresh` needs: the notices that update a
work (`updated-by`: a retraction, a withdrawal) and its relations (`is-preprint-of`,
`has-preprint`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import quote

from paperpool.formats.bibtex.reading import BibRecord
from paperpool.formats.csljson import item_problems, item_record
from paperpool.pool import identity

from .client import Client, malformed, parsed_json
from .services import CROSSREF

# Crossref's work types -> CSL types (Crossref's own list; what is not here is CSL's "article")
CSL_TYPES = {
    "journal-article": "article-journal",
    "proceedings-article": "paper-conference",
    "book-chapter": "chapter",
    "book": "book",
    "monograph": "book",
    "edited-book": "book",
    "report": "report",
    "dissertation": "thesis",
    "posted-content": "article",
}
# The kinds of `updated-by` notice that mean the work should no longer be relied on
RETRACTIONS = {"retraction", "withdrawal", "removal", "expression_of_concern"}


@dataclass
class CrossrefWork:
    doi: str
    item: dict  # the work as a CSL item
    notices: list[dict] = field(default_factory=list)  # updated-by: {"type", "DOI", "updated"}
    published_as: list[str] = field(default_factory=list)  # DOIs of the published version (is-preprint-of)

    def record(self, line: int = 1) -> BibRecord:
        return item_record(self.item, line)

    @property
    def retraction(self) -> dict | None:
        # a notice's type is text; any other is no notice paperpool knows (a list would not hash)
        return next(
            (notice for notice in self.notices if isinstance(notice.get("type"), str) and notice["type"] in RETRACTIONS), None
        )


def fetch(client: Client, doi: str) -> CrossrefWork | None:
    """The work Crossref registers under this DOI, or None (Crossref knows only its own
    DOIs: arXiv's and Zenodo's are DataCite's)."""
    doi = identity.doi(doi)
    answer = client.get(CROSSREF, f"/works/{quote(doi, safe='/()')}")
    if answer is None:
        return None
    return parse(answer.text, answer.url, doi)


def parse(text: str, url: str, doi: str) -> CrossrefWork:
    body = parsed_json(CROSSREF, url, text)
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, dict):
        raise malformed(CROSSREF, url, "no `message` object")
    item = as_csl(message, doi)
    problems, _ = item_problems(item, 1)
    if problems:
        raise malformed(CROSSREF, url, problems[0])
    notices = [notice for notice in _listed(message.get("updated-by")) if isinstance(notice, dict)]
    relation = message.get("relation") if isinstance(message.get("relation"), dict) else {}
    published_as = [
        str(related.get("id"))
        for related in _listed(relation.get("is-preprint-of"))
        if isinstance(related, dict) and related.get("id-type") == "doi" and related.get("id")
    ]
    return CrossrefWork(identity.doi(str(message.get("DOI") or doi)), item, notices, published_as)


def _listed(value) -> list:
    """A value Crossref gives as a list; anything else (a hostile or broken answer) as none."""
    return value if isinstance(value, list) else []


def as_csl(message: dict, doi: str) -> dict:
    """A Crossref work as a CSL item: its titles are lists there (the first is the title),
    organisations are `name`d authors, and its date is the first of published, issued."""
    item = {
        "type": CSL_TYPES.get(str(message.get("type")), "article"),
        "title": _first(message.get("title")),
        "DOI": str(message.get("DOI") or doi),
        "URL": f"https://doi.org/{message.get('DOI') or doi}",
    }
    container = _first(message.get("container-title"))
    if container:
        item["container-title"] = container
    for variable in ("publisher", "volume", "issue", "page"):
        if isinstance(message.get(variable), str):
            item[variable] = message[variable]
    authors = message.get("author")
    if isinstance(authors, list):
        item["author"] = [
            {"literal": name["name"]} if isinstance(name, dict) and isinstance(name.get("name"), str) else name
            for name in authors
        ]
    for date in ("published", "issued", "published-print", "published-online"):
        if isinstance(message.get(date), dict) and message[date].get("date-parts") not in (None, [[None]]):
            item["issued"] = message[date]
            break
    return item


def _first(value):
    if isinstance(value, list):
        return value[0] if value else None
    return value
