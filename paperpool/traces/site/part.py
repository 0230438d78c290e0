"""The trace pages as a part of the site (sitegen/parts.py), registered in pyproject.toml:
a light module, imported whenever a site is built; the gallery and the corpora are read
only when the pool has traces or corpora, or asks for the pages."""

from __future__ import annotations

from paperpool.files.problems import PaperpoolError
from paperpool.registry import Registry
from paperpool.sitegen.parts import Made, SitePart

from .. import section
from . import paths


def make(registry: Registry) -> Made:
    """The gallery (each trace of the pool validated, measured and drawn), the schema's
    page and a page per corpus; nothing for a pool without traces that does not ask."""
    if not (section.trace_files(registry) or section.corpora(registry) or section.pages_wanted(registry)):
        return Made()
    why = section.extra_needed(registry)
    if why:  # what validate says too
        raise PaperpoolError(why)
    from paperpool.sitegen.pages import Page  # pandas: not for a hand-written page's check, which reads the parts' paths

    from . import corpora, gallery  # they read traces: orjson, pyarrow, duckdb

    cards, corpus_pages = gallery.gallery(registry), corpora.pages(registry)
    context = {"cards": cards, "corpora": corpus_pages, "trace_pages": paths}
    pages = [
        Page(paths.TRACES, "site/traces.md.j2", "Orchestration traces", context, True, wide=True),
        Page(
            paths.TRACE_SCHEMA,
            "site/trace_schema.md.j2",
            "Trace schema",
            {"schema": gallery.schema_outline()},
            True,
        ),
    ]
    pages += [
        Page(page.page, "site/trace_corpus.md.j2", page.corpus.title, {"corpus": page, "trace_pages": paths}, wide=True)
        for page in corpus_pages
    ]
    return Made(pages, gallery.files(cards))


PART = SitePart(
    "traces",
    make,
    top_level=(paths.TRACES, paths.TRACE_SCHEMA),
    folders=(paths.TRACE_FILES, paths.CORPUS_PAGES),
    templates="paperpool.traces.site",
)
