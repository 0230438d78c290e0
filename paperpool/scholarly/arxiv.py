"""arXiv's API (export.arxiv.org/api/query?id_list=ID): an Atom feed with one entry per
paper, read as the BibTeX record arXiv's own "Export BibTeX citation" would give, so that
import-bib's code makes the stub. Also what `refresh` needs: the latest version, the
journal reference and DOI a published preprint gains, and the comment of a withdrawn one."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from xml.etree import ElementTree

from paperpool.formats.bibtex.reading import BibRecord, person
from paperpool.pool import identity
from paperpool.pool.adding import suggested_key

from .client import Client, malformed
from .services import ARXIV

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV_NS = "{http://arxiv.org/schemas/atom}"
_VERSION = re.compile(r"v([0-9]+)\Z")
MAX_VERSION_DIGITS = 6  # arXiv's versions are a few digits; int() refuses a run past 4,300
# arXiv marks a withdrawn version by its comment ("This paper has been withdrawn by the author...")
_WITHDRAWN = re.compile(r"\bwithdrawn\b", re.IGNORECASE)


@dataclass
class ArxivPaper:
    arxiv_id: str  # without its version
    version: int
    title: str
    authors: list[str]  # 'Last, First'
    year: str
    journal_ref: str | None = None
    doi: str | None = None
    comment: str | None = None
    categories: list[str] = field(default_factory=list)

    @property
    def withdrawn(self) -> bool:
        return bool(self.comment and _WITHDRAWN.search(self.comment))

    def record(self, line: int = 1, elsewhere=None) -> BibRecord:
        """The paper as a BibTeX record: a preprint as the pool keeps arXiv's own
        (`journal = {arXiv preprint arXiv:ID}`), or its journal reference once published.
        `elsewhere` (openalex.Published) is the version of record OpenAlex knows of, used
        where arXiv has no journal reference or DOI."""
        venue = self.journal_ref or (elsewhere.venue if elsewhere else None)
        fields = {
            "title": self.title,
            "year": self.year,
            "eprint": self.arxiv_id,
            "archiveprefix": "arXiv",
            "journal": venue or f"arXiv preprint arXiv:{self.arxiv_id}",
            "url": f"https://arxiv.org/abs/{self.arxiv_id}",
        }
        doi = self.doi or (elsewhere.doi if elsewhere else None)
        if doi:
            fields["doi"] = doi
        entry_type = "article"
        if not self.journal_ref and elsewhere and elsewhere.kind == "conference":
            entry_type, fields["booktitle"] = "inproceedings", fields.pop("journal")
        key = suggested_key({"authors": self.authors, "year": self.year, "title": self.title})
        return BibRecord(key, entry_type, line, fields, list(self.authors))


def fetch(client: Client, arxiv_id: str) -> ArxivPaper | None:
    """The paper arXiv has under this id (any version's id gives the latest), or None."""
    answer = client.get(ARXIV, "", {"id_list": identity.arxiv_id(arxiv_id)})
    if answer is None:
        return None
    return parse(answer.text, answer.url)


BATCH = 50  # ids asked in one request by fetch_many: arXiv's own examples ask for tens at once


def fetch_many(client: Client, arxiv_ids: list[str]) -> dict[str, ArxivPaper]:
    """The papers arXiv has under these ids, by id: one request per BATCH ids, not one
    each, so that `refresh` of a pool of hundreds waits seconds between a few requests."""
    wanted = sorted({identity.arxiv_id(one) for one in arxiv_ids})
    found = {}
    for start in range(0, len(wanted), BATCH):
        chunk = wanted[start : start + BATCH]
        answer = client.get(ARXIV, "", {"id_list": ",".join(chunk), "max_results": str(len(chunk))})
        if answer is not None:
            found.update((paper.arxiv_id, paper) for paper in parse_all(answer.text, answer.url))
    return found


def parse(text: str, url: str) -> ArxivPaper | None:
    """The feed's first paper; None for a feed without entries (no such id)."""
    papers = parse_all(text, url)
    return papers[0] if papers else None


def parse_all(text: str, url: str) -> list[ArxivPaper]:
    """Every paper of the feed."""
    if "<!DOCTYPE" in text or "<!ENTITY" in text:  # an Atom feed declares no entities: refuse their expansion
        raise malformed(ARXIV, url, "the XML declares a document type")
    try:
        feed = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise malformed(ARXIV, url, f"not XML: {exc}") from None
    if feed.tag != f"{ATOM}feed":
        raise malformed(ARXIV, url, "not an Atom feed")
    return [_paper(entry, url) for entry in feed.findall(f"{ATOM}entry")]


def _paper(entry, url: str) -> ArxivPaper:
    entry_id = _text(entry, f"{ATOM}id")
    if "/api/errors" in entry_id:  # arXiv answers a bad query with 200 and an entry titled Error
        raise malformed(ARXIV, url, f"arXiv says: {_text(entry, f'{ATOM}summary') or 'error'}")
    found = re.search(r"arxiv\.org/abs/(.+)$", entry_id)
    title = _text(entry, f"{ATOM}title")
    published = _text(entry, f"{ATOM}published")
    if not found or not title or not re.match(r"\d{4}-", published):
        raise malformed(ARXIV, url, "an entry without its id, title or date")
    versioned = found.group(1)
    version = _VERSION.search(versioned)
    if version and len(version.group(1)) > MAX_VERSION_DIGITS:
        raise malformed(ARXIV, url, f"an entry's id with a version {len(version.group(1)):,} digits long")
    authors = [person(name.text) for name in entry.iter(f"{ATOM}name") if name.text and name.text.strip()]
    return ArxivPaper(
        arxiv_id=identity.arxiv_id(versioned),
        version=int(version.group(1)) if version else 1,
        title=title,
        authors=authors,
        year=published[:4],
        journal_ref=_text(entry, f"{ARXIV_NS}journal_ref") or None,
        doi=_text(entry, f"{ARXIV_NS}doi") or None,
        comment=_text(entry, f"{ARXIV_NS}comment") or None,
        categories=[c.get("term", "") for c in entry.findall(f"{ATOM}category")],
    )


def _text(element, tag: str) -> str:
    found = element.find(tag)
    return " ".join((found.text or "").split()) if found is not None else ""
