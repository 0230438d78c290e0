"""Reading BibTeX with bibtexparser: records with LaTeX decoded and authors split."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import bibtexparser
from bibtexparser import middlewares

from . import identity
from .problems import PaperpoolError

_ARXIV_IN_TEXT = re.compile(r"arxiv[:\s/]*(?:abs/)?(\d{4}\.\d{4,5})(?:v\d+)?", re.IGNORECASE)
_URL_IN_TEXT = re.compile(r"https?://[^\s;{}]+")


@dataclass
class BibRecord:
    key: str
    type: str
    line: int
    fields: dict[str, str]
    authors: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        return " ".join(self.fields.get("title", "").split())

    @property
    def urls(self) -> list[str]:
        found = []
        for name in ("url", "howpublished"):
            for url in _URL_IN_TEXT.findall(self.fields.get(name, "")):
                if url not in found:
                    found.append(url)
        return found

    @property
    def arxiv_id(self) -> str | None:
        if self.fields.get("eprint") and self.fields.get("archiveprefix", "arxiv").lower() == "arxiv":
            return identity.arxiv_id(self.fields["eprint"])
        for name in ("journal", "note", "url", "howpublished"):
            match = _ARXIV_IN_TEXT.search(self.fields.get(name, ""))
            if match:
                return identity.arxiv_id(match.group(1))
        return None

    @property
    def doi(self) -> str | None:
        value = self.fields.get("doi", "").strip()
        return value.removeprefix("https://doi.org/").removeprefix("doi:") or None


def parse_bib(text: str, name: str) -> list[BibRecord]:
    """Parse BibTeX text; a block bibtexparser cannot read is an error with its line."""
    library = bibtexparser.parse_string(
        text, append_middleware=[middlewares.LatexDecodingMiddleware(), middlewares.SeparateCoAuthors()]
    )
    if library.failed_blocks:
        block = library.failed_blocks[0]
        reason = str(getattr(block, "error", "") or "unreadable block").split("\n")[0]
        raise PaperpoolError(f"{name}:{block.start_line + 1}: BibTeX cannot be read ({reason}); check the braces and commas of that record")
    records = []
    for entry in library.entries:
        fields = {}
        authors = []
        for item in entry.fields:
            if item.key.lower() == "author":
                authors = [" ".join(str(a).split()) for a in item.value] if isinstance(item.value, list) else [str(item.value)]
            else:
                fields[item.key.lower()] = " ".join(str(item.value).split())
        records.append(BibRecord(entry.key, entry.entry_type.lower(), entry.start_line + 1, fields, authors))
    return records
