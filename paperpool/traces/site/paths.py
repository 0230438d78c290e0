"""Where the trace pages live in the site (sitegen/paths.py holds the rest of the site's)."""

from __future__ import annotations

from paperpool.sitegen.paths import slug

TRACES = "traces.md"  # the gallery
TRACE_SCHEMA = "trace-schema.md"
TRACE_FILES = "traces"  # the gallery's drawings and JSON files
CORPUS_PAGES = "trace-corpora"  # a trace corpus's page: trace-corpora/NAME.md


def corpus(name: str) -> str:
    # names are validated slugs (registry traces.corpora), slugged again all the same
    return f"{CORPUS_PAGES}/{slug(name)}.md"
