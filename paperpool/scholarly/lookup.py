"""Papers named by their identifiers (`add --arxiv/--doi/--openreview`, `import-ids FILE`):
each identifier recognised, its metadata fetched from the service that holds it, and the
records planned by import-bib's own code (bibtex.importing.import_records): the same stubs, the
same duplicate checks, the same report. Everything is fetched before anything is
planned, so a service that fails leaves the pool as it was."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

from paperpool.files.inputs import read_input
from paperpool.files.problems import PaperpoolError, plural, printable
from paperpool.formats.bibtex.importing import BibImport, Skipped, import_records
from paperpool.formats.bibtex.reading import BibRecord
from paperpool.pool import identity
from paperpool.pool.reading import Pool
from paperpool.pool.stubs import ids_held

from . import arxiv, crossref, openalex, openreview
from .client import Client
from .services import ARXIV, CROSSREF, OPENALEX, OPENREVIEW

SCHEMES = {"arxiv": "arXiv id", "doi": "DOI", "openreview": "OpenReview id"}
MAX_IDS_BYTES = 1_000_000  # 20,000 identifiers; a list longer than that is not one survey's additions
SHOWN_PROBLEMS = 50
_PREFIX = re.compile(r"^(arxiv|doi|openreview)\s*:\s*(.+)\Z", re.IGNORECASE)
_HINT = "write it as arxiv:2412.01928, doi:10.18653/v1/2024.acl-long.1 or openreview:AbCdEf123, or as a link to its page"


@dataclass
class Wanted:
    scheme: str  # arxiv, doi, openreview
    value: str
    where: str  # "arXiv 2412.01928" on the command line, "ids.txt:3" in a file


def recognise(text: str) -> tuple[str, str] | None:
    """(scheme, identifier) for `arxiv:ID`, `doi:DOI`, `openreview:ID`, a bare id of any
    of the three, or a link to the paper's page on arXiv, doi.org or OpenReview; None otherwise."""
    text = text.strip()
    prefixed = _PREFIX.match(text)
    if prefixed:
        scheme, value = prefixed.group(1).lower(), prefixed.group(2).strip()
        found = _checked(scheme, value)
        return (scheme, found) if found else None
    if text.lower().startswith(("http://", "https://")) and identity.url_problem(text) is None:
        carried = identity.ids_in_url(text)
        return next(((scheme, carried[scheme]) for scheme in SCHEMES if scheme in carried), None)
    for scheme in SCHEMES:
        found = _checked(scheme, text)
        if found:
            return scheme, found
    return None


def _checked(scheme: str, value: str) -> str | None:
    value = {"arxiv": identity.arxiv_id, "doi": identity.doi}.get(scheme, str.strip)(value)
    return value if identity.PATTERNS[scheme][0].match(value) else None


def from_options(scheme: str, values: list[str]) -> list[Wanted]:
    """The identifiers given as --arxiv, --doi or --openreview, each checked."""
    wanted = []
    for value in values:
        found = recognise(f"{scheme}:{value}")
        if found is None:
            raise PaperpoolError(f"--{scheme} {value}: not an {SCHEMES[scheme]}; {_HINT}")
        wanted.append(Wanted(*found, f"{SCHEMES[scheme].split()[0]} {found[1]}"))
    return wanted


def from_file(path: Path) -> list[Wanted]:
    """One identifier a line; blank lines and lines starting with # are skipped. Every
    line that is none of the three is reported with its number, and nothing is fetched."""
    name = path.name
    wanted, problems = [], []
    for number, line in enumerate(read_input(path, MAX_IDS_BYTES).splitlines(), 1):
        text = line.split(" #", 1)[0].strip()
        if not text or text.startswith("#"):
            continue
        found = recognise(text)
        if found is None:
            problems.append(f"{name}:{number}: '{printable(text[:100])}' is not an arXiv id, DOI or OpenReview id; {_HINT}")
        else:
            wanted.append(Wanted(*found, f"{name}:{number}"))
    if len(problems) == 1:
        raise PaperpoolError(f"{problems[0]}; nothing was fetched or written")
    if problems:
        shown = problems[:SHOWN_PROBLEMS]
        raise PaperpoolError(f"{name}: nothing fetched or written, {plural(len(problems), 'problem')}:", shown)
    if not wanted:
        raise PaperpoolError(f"{name}: holds no identifiers; write one a line, such as arxiv:2412.01928")
    return wanted


def fetch_record(client: Client, wanted: Wanted, line: int) -> BibRecord:
    """The paper's metadata from the service that holds it: arXiv for an arXiv id (and
    OpenAlex for the venue of its published version, which arXiv often lacks), OpenReview
    for an OpenReview id, Crossref for a DOI (OpenAlex for the DOIs Crossref does not
    register, such as arXiv's and Zenodo's DataCite DOIs)."""
    if wanted.scheme == "arxiv":
        paper = arxiv.fetch(client, wanted.value)
        record = paper.record(line, _published_elsewhere(client, paper)) if paper else None
    elif wanted.scheme == "openreview":
        record = openreview.fetch(client, wanted.value, line)
    else:
        work = crossref.fetch(client, wanted.value)
        record = work.record(line) if work else openalex.fetch(client, wanted.value, line)
    if record is None:
        nobody = {
            "arxiv": f"arXiv ({ARXIV.base_url}) has no paper",
            "openreview": f"OpenReview ({OPENREVIEW.base_url}) has no paper",
            "doi": f"neither Crossref ({CROSSREF.base_url}) nor OpenAlex ({OPENALEX.base_url}) has a paper",
        }
        raise PaperpoolError(
            f"{wanted.where}: {nobody[wanted.scheme]} {wanted.value}; check the identifier. Nothing was written."
        )
    return record


def _published_elsewhere(client: Client, paper: arxiv.ArxivPaper) -> openalex.Published | None:
    """The version of record OpenAlex joins to an arXiv paper that names none itself."""
    if paper.journal_ref:
        return None
    return openalex.versions_of_record(client, [paper.arxiv_id]).get(paper.arxiv_id)


def import_ids(pool: Pool, wanted: list[Wanted], name: str, kind: str, added: dt.date, client: Client) -> BibImport:
    """The stubs to write for the papers named, planned as import-bib plans a .bib's. An
    identifier the pool already holds is skipped before any service is asked (the pool
    knows it without the network)."""
    held = ids_held(pool)
    known, asked = [], []
    for line, one in enumerate(wanted, 1):
        owner = next(
            (held[token][0] for token in sorted(identity.identifier_tokens(one.scheme, one.value)) if token in held), None
        )
        if owner is not None:
            known.append(Skipped(one.where, f"{owner} (same {identity.TOKEN_NAMES.get(one.scheme, one.scheme)} {one.value})"))
        else:
            asked.append((line, one))
    records = [fetch_record(client, one, line) for line, one in asked]
    places = {line: one.where for line, one in asked}
    result = import_records(pool, records, name, kind, added, lambda record: places[record.line])
    result.skipped = known + result.skipped
    return result
