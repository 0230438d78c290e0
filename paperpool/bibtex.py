"""Reading BibTeX with bibtexparser: records with LaTeX decoded and authors split."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

import bibtexparser
from bibtexparser import middlewares
from bibtexparser.middlewares.names import NameParts
from bibtexparser.model import DuplicateBlockKeyBlock
from pylatexenc.latex2text import LatexNodes2Text

from . import identity
from .problems import PaperpoolError

ARXIV_IN_TEXT = re.compile(r"arxiv[:\s/]*(?:abs/)?(\d{4}\.\d{4,5})(?:v\d+)?", re.IGNORECASE)
URL_IN_TEXT = re.compile(r"https?://[^\s;{}]+")
_LATEX = LatexNodes2Text()
# The library logs each unreadable block as well; the command reports them itself.
logging.getLogger("bibtexparser").setLevel(logging.CRITICAL)


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
            for url in URL_IN_TEXT.findall(self.fields.get(name, "")):
                if url not in found:
                    found.append(url)
        return found

    @property
    def arxiv_id(self) -> str | None:
        if self.fields.get("eprint") and self.fields.get("archiveprefix", "arxiv").lower() == "arxiv":
            return identity.arxiv_id(self.fields["eprint"])
        for name in ("journal", "note", "url", "howpublished"):
            match = ARXIV_IN_TEXT.search(self.fields.get(name, ""))
            if match:
                return identity.arxiv_id(match.group(1))
        return None

    @property
    def doi(self) -> str | None:
        value = self.fields.get("doi", "").strip()
        return value.removeprefix("https://doi.org/").removeprefix("doi:") or None


def parse_bib(text: str, name: str) -> list[BibRecord]:
    """Parse BibTeX text. Every block bibtexparser cannot read (unbalanced braces, a
    missing comma, a citation key used twice) is an error with its line; all of them
    are listed in one PaperpoolError."""
    library = bibtexparser.parse_string(text, append_middleware=[
        middlewares.SeparateCoAuthors(), middlewares.SplitNameParts(), middlewares.LatexDecodingMiddleware()])
    problems = [_failed_block(block, library, text, name) for block in library.failed_blocks]
    if problems:
        raise PaperpoolError(problems[0] if len(problems) == 1 else f"{name}: {len(problems)} unreadable records:\n" + "\n".join(problems))
    records = []
    for entry in library.entries:
        fields = {}
        authors = []
        for item in entry.fields:
            if item.key.lower() == "author":
                authors = [_name(parts) for parts in item.value] if isinstance(item.value, list) else [_decode(str(item.value))]
            else:
                fields[item.key.lower()] = " ".join(str(item.value).split())
        records.append(BibRecord(entry.key, entry.entry_type.lower(), entry.start_line + 1, fields, [a for a in authors if a]))
    return records


def _failed_block(block, library, text: str, name: str) -> str:
    line = block.start_line + 1  # bibtexparser counts from 0
    if isinstance(block, DuplicateBlockKeyBlock):
        first = next((e.start_line + 1 for e in library.entries if e.key == block.key), None)
        where = f" (first on line {first})" if first else ""
        return f"{name}:{line}: citation key '{block.key}' is used twice{where}; give each record its own key"
    error = getattr(block, "error", None)
    reason = " ".join(str(getattr(error, "abort_reason", "") or "").split()).rstrip(".")
    end = getattr(error, "end_index", None)
    stopped = f", noticed on line {text.count(chr(10), 0, end) + 1}" if isinstance(end, int) else ""
    detail = f" ({reason}{stopped})" if reason else ""
    return f"{name}:{line}: this record cannot be read{detail}; check its braces, quotes and commas"


def _name(parts: NameParts) -> str:
    """One author as 'von Last, Jr., First', the pool's form, whatever form the .bib used."""
    last = _decode(" ".join(parts.von + parts.last))
    rest = [_decode(" ".join(part)) for part in (parts.jr, parts.first) if part]
    return ", ".join([last, *rest]) if last else ", ".join(rest)


def _decode(text: str) -> str:
    return " ".join(_LATEX.latex_to_text(text).split())
