"""Reading registry.yaml: its shape checked against the JSON Schema (the core's sections
and those the features registered), then its sections read and checked, each problem
collected with its line."""

from __future__ import annotations

import datetime as dt
import functools
import operator
import os
from pathlib import Path, PurePosixPath, PureWindowsPath

from paperpool.files.problems import PaperpoolError, Problem
from paperpool.files.yamlio import Document, YamlProblem, file_kind, load_yaml

from . import schema, sections
from .characters import BIDI_CONTROLS, refused_character_message, refused_characters
from .columns import check_columns, check_combined
from .model import RECORD_KINDS, REGISTRY_FILE, Registry, lookup, registry_problem
from .reader import RegistryReader
from .tables import check_gaps, check_sizes, check_statistics

# A name, label or text of the registry: the theme writes the survey's title into every
# page several times, and a label is a page's title (a 900,000-character title made a
# site of 920 MB); mkdocs.yml's words have the same limit.
MAX_TEXT_CHARS = 2_000
# A label or a title names something, and is repeated: a value's label in each record's
# row of the Browse data and on each page that shows the value.
MAX_NAME_CHARS = 300
NAMES = {"label", "title", "short_title"}
# a file of the pool that is a link: git keeps it as a link, to whatever it points at on
# each machine (a file outside the pool, a device, a secret)
LINKED_FILE = "is a symbolic link; {what} is a plain file of the pool: replace the link with the file itself"
SECTIONS_HINT = "write its sections (survey:, pool:, vocabularies:, entry_fields:, ...) as in the shipped registry.yaml"


class NoRegistry(PaperpoolError):
    """No folder at or above the current one holds a registry (outside any pool)."""


def find_root(start: Path) -> Path:
    """The nearest folder at or above `start` that holds a registry."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if holds_registry(folder):
            return folder
    raise NoRegistry(f"no {REGISTRY_FILE} in {start} or any folder above it; run inside a pool or pass --root DIR")


def holds_registry(folder: Path) -> bool:
    """Whether `folder` holds a registry: a plain file, or a link (which makes this the
    pool, whose registry load_registry then refuses as a link, whatever it points at).
    Something else of that name (a device, a named pipe, a folder) is an error naming
    what it is, never taken for no registry at all."""
    path = folder / REGISTRY_FILE
    if path.is_file() or path.is_symlink():
        return True
    if not os.path.lexists(path):
        return False
    try:
        what = file_kind(os.stat(path).st_mode)
    except OSError as exc:
        what = f"a file which cannot be read ({exc.strerror.lower()})"
    raise PaperpoolError(f"{path}: is {what}, not a file holding the registry; make {REGISTRY_FILE} a plain file")


def load_registry(root: Path) -> tuple[Registry | None, list[Problem]]:
    """Read and check the registry; returns (None, problems) when it is unusable. Its
    shape (types, sizes, paths, characters) is checked before anything reads it."""
    path = root / REGISTRY_FILE
    if path.is_symlink():
        return None, [Problem(REGISTRY_FILE, 1, "", LINKED_FILE.format(what="the registry"))]
    try:
        doc = load_yaml(path, empty_hint=SECTIONS_HINT)
    except YamlProblem as exc:
        return None, [Problem(REGISTRY_FILE, exc.line, exc.field, exc.message)]
    except OSError as exc:
        return None, [Problem(REGISTRY_FILE, 1, "", f"cannot read: {exc.strerror}; check the file exists and is readable")]
    problems = shape_problems(doc)
    if problems:
        return None, problems
    registry, problems = RegistryReader(root, doc, list(sections.registered())).read()
    if registry is not None:
        problems = section_problems(registry)
    return (None if problems else registry), problems


def shape_problems(doc: Document) -> list[Problem]:
    """What must hold before any of the registry is read: no control characters, the
    schema's types and size limits, and every folder or file it names inside the pool."""
    _dates_as_written(doc)
    problems = [
        registry_problem(doc, where, refused_character_message(char)) for where, char in refused_characters(doc, BIDI_CONTROLS)
    ]
    problems += [
        registry_problem(doc, where, f"is {len(text):,} characters long, over {most:,}; shorten it")
        for where, text in doc.raw.items()
        if isinstance(text, str) and len(text) > (most := MAX_NAME_CHARS if where and where[-1] in NAMES else MAX_TEXT_CHARS)
    ]
    problems += [registry_problem(doc, where, message) for where, message in schema.schema_problems(doc.data)]
    if not problems:
        problems += _path_problems(doc)
    return sorted(problems, key=lambda problem: problem.line)


def _dates_as_written(doc: Document) -> None:
    """A date in the registry is the text it was written as (YAML reads `2026-05-01` as a
    date): no setting is a date, and a JSON Schema has no dates to check."""
    for path, raw in doc.raw.items():
        if raw[:4].isdigit() and raw[4:5] == "-" and path:  # the only scalars YAML reads as dates
            parent = functools.reduce(operator.getitem, path[:-1], doc.data)
            if isinstance(parent[path[-1]], (dt.date, dt.datetime)):
                parent[path[-1]] = raw


def _path_problems(doc: Document) -> list[Problem]:
    """Every folder or file the registry names (the schema's x-path settings) must be a
    place inside the pool, and the two record kinds need folders of their own."""
    problems = []
    for path, setting in schema.path_settings().items():
        value = lookup(doc.data, ".".join(path))
        why = outside_pool(value) if isinstance(value, str) else None
        if why:
            problems.append(registry_problem(doc, path, f"'{value}' {why}; {setting['x-fix']}"))
    folders = [PurePosixPath(doc.data["pool"][kind]) for kind in RECORD_KINDS]
    if not problems and folders[0] == folders[1]:
        problems.append(
            registry_problem(
                doc,
                ("pool", "exclusions"),
                "is the folder of the entries too; give the exclusions a folder of their own, e.g. `exclusions: exclusions`",
            )
        )
    return problems


def outside_pool(rel: str) -> str | None:
    """Why `rel`, a path the registry names, does not lead to a place inside the pool
    (None when it does): an absolute path, one leading up with '..', or the pool's own
    folder, which holds the registry rather than being a folder of the pool."""
    path = PurePosixPath(rel)
    if path.is_absolute() or PureWindowsPath(rel).drive:
        return "is an absolute path, outside the pool"
    if ".." in path.parts:
        return "leads out of the pool ('..')"
    if not path.parts:
        return "is the pool's own folder"
    if any(part.startswith(".") for part in path.parts):  # .git holds the history and CI's token (.git/config)
        return "is or lies in a hidden folder, where a repository keeps its own files (.git, .github)"
    return None


def linked_step(root: Path, rel: str) -> str | None:
    """The first part of `rel` (a path inside the pool) that is a symbolic link, or None.
    A pool's files and folders are never read or written through a link: git keeps a link
    as a link, so it would lead wherever it points on each machine (outside the pool, to a
    device, to a secret)."""
    parts = PurePosixPath(rel).parts
    for step in range(1, len(parts) + 1):
        if root.joinpath(*parts[:step]).is_symlink():
            return "/".join(parts[:step])
    return None


def section_problems(registry: Registry) -> list[Problem]:
    """The checks that need the registry read (the columns a table names, the fields a
    feature's section names): the core's tables, each registered feature's section, then
    the size of every table together."""
    features = sections.registered().values()
    problems = check_columns(registry) or check_combined(registry)
    if not problems:
        problems = check_statistics(registry) + check_gaps(registry)
        problems += [problem for feature in features if feature.check for problem in feature.check(registry)]
    if not problems:
        problems = check_sizes(registry, [table for feature in features if feature.tables for table in feature.tables(registry)])
    return problems
