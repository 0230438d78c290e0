"""Parts of the site that other wings bring: pages the site builds from files of the pool
that only they can read (the trace gallery and the corpora's pages are one, brought by
paperpool.traces).

A part is found through the package's entry points (group `paperpool.site_parts` in
pyproject.toml), as the registry finds its sections, so the site names none of them and
imports none of them itself; another package adds a part the same way. A part's module
must stay light: it is imported whenever a site is built or a hand-written page checked.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from paperpool.files import entrypoints

from ..registry import Registry

ENTRY_POINTS = "paperpool.site_parts"


@dataclass
class Made:
    """What a part adds to one build."""

    pages: list = field(default_factory=list)  # sitegen.pages.Page: those in_nav go before Contributing, in order
    files: dict[str, str | bytes] = field(default_factory=dict)  # other files of the site: path -> content


@dataclass(frozen=True)
class SitePart:
    name: str  # the build's stage that makes it, as `paperpool build` reports it
    make: Callable[[Registry], Made]  # read, check and measure what the pages show; PaperpoolError for a bad file
    top_level: tuple[str, ...] = ()  # pages and files of the site's top level it may write
    folders: tuple[str, ...] = ()  # folders of the site whose every file it writes
    templates: str | None = None  # the package whose templates/ folder holds its pages' templates


@functools.cache
def registered() -> tuple[SitePart, ...]:
    """Every installed part, in the order of their names."""
    return tuple(entrypoints.registered(ENTRY_POINTS, _named_part, "a SitePart of that name").values())


def _named_part(name: str, found: object) -> bool:
    return isinstance(found, SitePart) and found.name == name


def reserved_top_level() -> tuple[str, ...]:
    return tuple(path for part in registered() for path in part.top_level)


def reserved_folders() -> tuple[str, ...]:
    return tuple(folder for part in registered() for folder in part.folders)


def template_packages() -> tuple[str, ...]:
    return tuple(part.templates for part in registered() if part.templates)
