"""The registry's sections that features read (the site, BibTeX export and import, the
traces): each feature declares its section here, with the section's JSON Schema and the
checks that need the rest of the registry, and the registry calls them while it reads.

Features are found through the package's entry points (group `paperpool.sections` in
pyproject.toml), so the registry names none of them and imports none of them itself;
another package adds a section the same way. A feature's section module must stay light:
it is imported whenever a registry is read.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

from paperpool.files import entrypoints
from paperpool.files.problems import Problem

from .model import Registry
from .tables import Table

ENTRY_POINTS = "paperpool.sections"


@dataclass(frozen=True)
class Section:
    name: str  # the section's key in registry.yaml
    package: str  # the feature's package, which holds the schema file
    schema_file: str  # the section's JSON Schema, a file of that package
    check: Callable[[Registry], list[Problem]] | None = None  # what the schema cannot check
    tables: Callable[[Registry], list[Table]] | None = None  # the tables it declares, for the size limits
    # the files and folders of the pool its settings name, from the section as written
    # (for `diff`, which writes out of a revision only what the pool is read from)
    paths: Callable[[dict], list[str]] | None = None
    # what validate says of the pool's files its settings name, without reading them as the
    # feature does (a trace folder that is a link; the feature's extra not installed)
    file_problems: Callable[[Registry], list[Problem]] | None = None

    def schema(self) -> dict:
        return json.loads(resources.files(self.package).joinpath(self.schema_file).read_text(encoding="utf-8"))


def named_paths(data: dict) -> list[str]:
    """The paths every feature's section of a registry (as written: `data`) names."""
    found = []
    for name, section in registered().items():
        written = data.get(name)
        if section.paths is not None and isinstance(written, dict):
            found += [path for path in section.paths(written) if isinstance(path, str)]
    return found


def file_problems(registry: Registry) -> list[Problem]:
    """What every feature's section says of the pool's files its settings name."""
    return [problem for section in registered().values() if section.file_problems for problem in section.file_problems(registry)]


@functools.cache
def registered() -> dict[str, Section]:
    """Every installed feature's section, by name."""
    return entrypoints.registered(ENTRY_POINTS, _named_section, "a registry Section of that name")


def _named_section(name: str, found: object) -> bool:
    return isinstance(found, Section) and found.name == name
