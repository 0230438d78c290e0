"""Where each page of the site lives, and links between pages.

Pages are markdown files in the build's docs folder; links between them are relative
`.md` links, so that mkdocs (or Zensical) checks every one of them in strict mode and
writes the right URL whatever `use_directory_urls` says.
"""

from __future__ import annotations

import re

_NOT_SLUG = re.compile(r"[^a-z0-9]+")

HOME = "index.md"
BROWSE = "browse.md"
STATISTICS = "statistics.md"
GAPS = "gaps.md"
CLAIMS = "claims.md"
EXCLUSIONS = "exclusions.md"
RECENT = "recent.md"
DOWNLOADS = "downloads.md"
CONTRIBUTING = "contributing.md"
REGISTRY_REFERENCE = "registry.md"  # registry.yaml's sections and settings, from its schema
FEED = "feed.xml"
NOT_FOUND = "404.html"  # the engine's page for an address the site does not have
ASSETS = "assets/paperpool"
DATA = "assets/paperpool/data"
CHARTS = "assets/paperpool/charts"
# the pages and files of the site's top level the build always writes (index.md is the
# pool's own introduction, which the home page shows)
TOP_LEVEL = (
    BROWSE,
    STATISTICS,
    GAPS,
    CLAIMS,
    EXCLUSIONS,
    RECENT,
    DOWNLOADS,
    CONTRIBUTING,
    REGISTRY_REFERENCE,
    FEED,
)
ENTRY_PAGES = "entries"  # an entry's page: entries/KEY.md
AXIS_PAGES = "axes"  # an axis and its values: axes/AXIS.md, axes/AXIS/VALUE.md
GAP_PAGES = "gaps"  # a gap table's page: gaps/TABLE.md
DOWNLOAD_FILES = "downloads"
DOCUMENTATION = "documentation"  # the pool's own documentation folder (registry site.documentation)
# The citation formats of the downloads and the Cite blocks: format (as `export --format`
# names it, and the files' extension) -> the name readers know it by
CITATION_FORMATS = {"bib": "BibTeX", "ris": "RIS", "csljson": "CSL-JSON"}
# Folders whose every file the build generates (an entry's page appears when the entry
# does), and what the engine and the search index (pagefind/) write themselves: a
# hand-written file there is refused, never silently replaced nor left to replace a
# generated one.
# The site's parts (sitegen/parts.py) add their own (the trace pages: traces/, trace-corpora/).
GENERATED_FOLDERS = (ENTRY_PAGES, AXIS_PAGES, GAP_PAGES, DOWNLOAD_FILES, DOCUMENTATION, ASSETS)
ENGINE_WRITES = (
    "search",
    "search.json",
    "pagefind",
    "assets/javascripts",
    "assets/stylesheets",
    "assets/images",
    "sitemap.xml",
    "sitemap.xml.gz",
    NOT_FOUND,
)


def slug(value) -> str:
    return _NOT_SLUG.sub("-", str(value).lower()).strip("-") or "value"


def entry(key: str) -> str:
    # keys are validated slugs (registry KEY_RE), safe as file names
    return f"{ENTRY_PAGES}/{key}.md"


def pool_download(fmt: str) -> str:
    """The whole pool in one format: downloads/pool.bib, pool.ris, pool.csljson, pool.json."""
    return f"{DOWNLOAD_FILES}/pool.{fmt}"


def schema_download(name: str) -> str:
    """A JSON Schema of the pool's files: downloads/schemas/entries.schema.json, ..."""
    return f"{DOWNLOAD_FILES}/schemas/{name}"


def entry_download(key: str, fmt: str) -> str:
    """One entry's citation in one format: downloads/entries/KEY.bib, KEY.ris, KEY.csljson."""
    return f"{DOWNLOAD_FILES}/{ENTRY_PAGES}/{key}.{fmt}"


def axis(name: str) -> str:
    return f"{AXIS_PAGES}/{slug(name)}.md"


def gap_table(table_id: str) -> str:
    return f"{GAP_PAGES}/{slug(table_id)}.md"


def cell_anchor(row, column) -> str:
    return f"cell-{slug(row)}-{slug(column)}"


def unique_slugs(values: list, longest: int | None = None) -> list[str]:
    """A slug for each value, at most `longest` characters, numbered (-2, -3, ...) where
    two values would share one: `Plan`, `plan` and `PLAN` are plan, plan-2, plan-3."""
    slugs, taken = [], set()
    following: dict[str, int] = {}  # per base, the number its next copy may take: counting from 2 each time was quadratic
    for value in values:
        base = candidate = slug(value)[:longest].rstrip("-") or "value"
        number = following.get(base, 2)
        while candidate in taken:
            candidate, number = f"{base}-{number}", number + 1
        following[base] = number
        taken.add(candidate)
        slugs.append(candidate)
    return slugs


class ValuePaths:
    """The page of each value of an axis: one slug per value, unique within the axis even
    when two ids differ only in case or punctuation."""

    def __init__(self, name: str, values: list):
        self._paths = {
            value: f"{AXIS_PAGES}/{slug(name)}/{unique}.md" for value, unique in zip(values, unique_slugs(values), strict=True)
        }

    def __getitem__(self, value) -> str:
        return self._paths[value]

    def __contains__(self, value) -> bool:
        return value in self._paths


def reserved(path: str, generated=()) -> bool:
    """Whether a hand-written file at `path` would clash with the build's own files
    (`generated`: the paths this build writes, beyond those every build writes)."""
    if path.endswith(".md") and html(path) in ENGINE_WRITES:  # 404.md would be written over the engine's 404.html
        return True
    if path.endswith(".html"):  # the engine writes each page X.md as X.html
        path = path.removesuffix(".html") + ".md"
        if path == HOME:
            return True
    from .parts import reserved_folders, reserved_top_level  # the parts' entry points, read once it is asked

    return (
        path in generated
        or path in TOP_LEVEL + reserved_top_level()
        or any(
            path == folder or path.startswith(f"{folder}/") for folder in GENERATED_FOLDERS + reserved_folders() + ENGINE_WRITES
        )
    )


def html(page: str) -> str:
    """Where a page is in the built site (the build sets use_directory_urls: false)."""
    return page.removesuffix(".md") + ".html"


def root_of(here: str) -> str:
    """The relative path from page `here` to the site root ("" or "../", ...), as the
    faceted browser needs it to resolve its data's links."""
    depth = here.count("/")
    return "../" * depth
