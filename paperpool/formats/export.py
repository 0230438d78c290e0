"""The pool in other formats, one function per format: `paperpool export`, `publish` and
the site's downloads all write these."""

from __future__ import annotations

from paperpool.pool.reading import Pool

from . import csljson, csvio, ris
from .bibtex import writing


def _bib(pool: Pool, kind: str) -> str:
    return writing.pool_bibtex(pool.registry, [record.data for record in pool.entries])


def _ris(pool: Pool, kind: str) -> str:
    return ris.pool_ris(pool.registry, [record.data for record in pool.entries])


def _csljson(pool: Pool, kind: str) -> str:
    return csljson.pool_csljson(pool.registry, [record.data for record in pool.entries])


# format -> (pool, record kind) -> text. CSV takes either kind; the others hold the whole
# pool (JSON) or its retained entries (BibTeX, RIS, CSL-JSON).
FORMATS = {
    "csv": csvio.export_csv,
    "json": lambda pool, kind: csvio.export_json(pool),
    "bib": _bib,
    "ris": _ris,
    "csljson": _csljson,
}
