"""The registry's BibTeX sections: `bibtex_export` (how an entry is cited) and
`bibtex_import` (how a BibTeX record becomes a stub). Registered with the registry
(EXPORT_SECTION, IMPORT_SECTION; their schemas are the registry-bibtex_*.schema.json
files beside this module), which checks them when it reads the registry. Light on
purpose: the BibTeX reader and writer are imported only by the commands that use them."""

from __future__ import annotations

import re

from paperpool.files.problems import Problem
from paperpool.registry import (
    RECORD_KINDS,
    Registry,
    Section,
    registry_problem,
    resolve_spec,
)
from paperpool.registry.tables import unknown_keys

EXPORT, IMPORT = "bibtex_export", "bibtex_import"
EXPORT_SETTINGS = {"key", "type", "authors_complete", "fields"}
IMPORT_SETTINGS = {"fields", "keep", "authors_complete"}  # per record kind
# The field types a BibTeX value can fill (bibtex.importing.READERS reads each).
READABLE_TYPES = ("text", "integer", "text_list", "identifier", "url_list", "url")


# a BibTeX type or field name, as paperpool writes one: anything else could end the
# record it is written into and start one of its own making
BIBTEX_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")


def check_export(registry: Registry) -> list[Problem]:
    """Every field `bibtex_export` names must be a declared entry field."""
    settings = registry.section(EXPORT)
    problems = []
    specs = registry.fields["entries"]

    def problem(path: tuple, message: str) -> None:
        problems.append(registry_problem(registry.document, (EXPORT,) + path, message))

    problems += unknown_keys(registry, (EXPORT,), settings, EXPORT_SETTINGS)
    sources = {"key": settings.get("key", []), "type": settings.get("type", [])}
    fields = settings.get("fields", {})
    if not isinstance(fields, dict):
        problem(("fields",), "give a mapping: BIBTEX_FIELD: [ENTRY_FIELD, ...]")
        fields = {}
    listed = [((name,), value) for name, value in sources.items()]
    for name, value in fields.items():
        if not isinstance(name, str) or not BIBTEX_NAME.fullmatch(name):
            # written after its record's `  ` as it is: `note = {x},\n  url = {...},\n  z` would add fields
            problem(
                ("fields", name), "a BibTeX field's name is a letter and then letters, digits, - or _ (at most 64); rename it"
            )
            continue
        # {from: [...], types: [...]}: the field written only for these BibTeX types
        if isinstance(value, dict):
            listed.append((("fields", name, "from"), value.get("from")))
            types = value.get("types")
            if not isinstance(types, list) or not types or not all(isinstance(kind, str) for kind in types):
                problem(("fields", name, "types"), "list the BibTeX types this field is written for, e.g. [article]")
        else:
            listed.append((("fields", name), value))
    for path, names in listed:
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            problem(path, "list the entry fields to take the value from, first set wins: [FIELD, ...]")
            continue
        for index, name in enumerate(names):
            if resolve_spec(specs, name) is None:
                problem(
                    path + (index,), f"'{name}' is not a field of the entries; name one declared in {RECORD_KINDS['entries']}"
                )
    complete = settings.get("authors_complete")
    if complete is not None and (not isinstance(complete, str) or resolve_spec(specs, complete) is None):
        problem(("authors_complete",), "name the bool field that says whether the author list is complete, e.g. authors_complete")
    return problems


def check_import(registry: Registry) -> list[Problem]:
    """The bibtex_import section names declared fields of types it can fill."""
    section = registry.section(IMPORT)
    problems = unknown_keys(registry, (IMPORT,), section, set(registry.fields))

    def problem(path: tuple, message: str) -> None:
        problems.append(registry_problem(registry.document, (IMPORT,) + path, message))

    for kind in (k for k in registry.fields if isinstance(section.get(k), dict)):
        settings, specs = section[kind], registry.fields[kind]
        problems.extend(unknown_keys(registry, (IMPORT, kind), settings, IMPORT_SETTINGS))
        fields = settings.get("fields", {})
        if not isinstance(fields, dict):
            problem((kind, "fields"), "give a mapping: RECORD_FIELD: [BIBTEX_FIELD, ...]")
            fields = {}
        for name, sources in fields.items():
            spec = specs.get(name)
            if spec is None:
                problem(
                    (kind, "fields", name), f"'{name}' is not a field of the {kind}; name one declared in {RECORD_KINDS[kind]}"
                )
            elif spec.type not in READABLE_TYPES:
                problem(
                    (kind, "fields", name),
                    f"a BibTeX value cannot fill a {spec.type} field; map it to one of type {', '.join(READABLE_TYPES)}",
                )
            if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
                problem((kind, "fields", name), "list the BibTeX fields to read, first set wins: [journal, booktitle]")
        for setting, wanted in (("keep", "mapping"), ("authors_complete", "bool")):
            name = settings.get(setting)
            if name is not None and getattr(specs.get(str(name)), "type", None) != wanted:
                problem((kind, setting), f"name a {wanted} field of the {kind}")
    return problems


EXPORT_SECTION = Section(EXPORT, __package__, f"registry-{EXPORT}.schema.json", check=check_export)
IMPORT_SECTION = Section(IMPORT, __package__, f"registry-{IMPORT}.schema.json", check=check_import)
