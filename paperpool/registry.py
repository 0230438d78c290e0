"""The registry: a survey's vocabularies, record formats, rules and CSV layouts.

Everything taxonomy-specific lives in registry.yaml; this module only reads it and
checks that it is coherent, collecting every problem with its line.
"""

from __future__ import annotations

import datetime as dt
import functools
import operator
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath

from . import schema
from .problems import PaperpoolError, Problem, suggest
from .yamlio import Document, YamlProblem, load_yaml

REGISTRY_FILE = "registry.yaml"
# A record's key: a lower-case slug, also its file name, so never a path.
KEY_RE = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,78}[a-z0-9])?$")

FIELD_TYPES = set(schema.enum("$defs", "field", "properties", "type"))
IDENTIFIER_SCHEMES = set(schema.enum("$defs", "field", "properties", "scheme"))
RECORD_KINDS = {"entries": "entry_fields", "exclusions": "exclusion_fields"}
SECTIONS_HINT = "write its sections (survey:, pool:, vocabularies:, entry_fields:, ...) as in the shipped registry.yaml"

# Characters that act on a terminal or are no text at all: the C0 controls but tab and
# line break, DEL and the C1 controls. Refused in every string of the pool's files.
CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Bidirectional controls reorder what is shown around them. A record's text may need one
# (a name in a right-to-left script) and is shown without them; the registry and the
# claims name things and state rules, which never need one, so there they are refused too.
BIDI_CONTROLS = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@dataclass
class Value:
    id: str
    label: str
    description: str = ""
    extra: dict = field(default_factory=dict)


@dataclass
class Vocabulary:
    name: str
    label: str
    description: str
    values: list[Value]

    @property
    def ids(self) -> list[str]:
        return [value.id for value in self.values]

    def get(self, value_id) -> Value | None:
        return next((value for value in self.values if value.id == value_id), None)

    def maps_to(self, value_id):
        value = self.get(value_id)
        return value.extra.get("maps_to") if value else None


@dataclass
class FieldSpec:
    name: str
    type: str
    label: str = ""
    help: str = ""
    required: bool = False
    vocabulary: str | None = None
    keys: str | None = None
    scheme: str | None = None
    max_length: int | None = None
    min: int | None = None
    max: int | str | None = None
    derived_from: str | None = None
    unique: bool = False
    not_before_field: str | None = None
    fields: dict[str, FieldSpec] = field(default_factory=dict)

    @property
    def title(self) -> str:
        return self.label or self.name.replace("_", " ").capitalize()


class ValueSet(frozenset):
    """A rule's values, each looked up in one step however many the rule lists (a list
    was searched value by value, for every value of every record); a list or mapping,
    which a record may hold where a value belongs, is none of them."""

    def __contains__(self, item) -> bool:
        try:
            return super().__contains__(item)
        except TypeError:
            return False


@dataclass
class Rule:
    id: str
    applies_to: str
    when_field: str
    when_in: ValueSet
    forbid_field: str
    forbid_in: ValueSet
    problem: str
    fix: str
    line: int


@dataclass
class CsvColumn:
    column: str
    field: str
    convert: str | None = None


@dataclass
class Registry:
    root: Path
    document: Document
    survey: dict
    pool: dict
    vocabularies: dict[str, Vocabulary]
    fields: dict[str, dict[str, FieldSpec]]  # "entries" / "exclusions" -> name -> spec
    rules: list[Rule]
    csv: dict[str, dict[str, list[CsvColumn]]]
    statistics: dict = field(default_factory=dict)  # checked against the pool's columns in analysis
    gaps: dict = field(default_factory=dict)
    display: dict = field(default_factory=dict)  # group_by and tags of the README's paper list
    site: dict = field(default_factory=dict)  # what `paperpool build` puts on the site
    bibtex_export: dict = field(default_factory=dict)  # how an entry is cited as BibTeX
    bibtex_import: dict = field(default_factory=dict)  # how a BibTeX record becomes a stub
    traces: dict = field(default_factory=dict)  # the pool's orchestration traces (read by paperpool.traces.mapping)

    @property
    def path(self) -> Path:
        return self.root / REGISTRY_FILE

    def folder(self, kind: str) -> Path:
        return self.root / self.pool[kind]

    def derivation_source(self, specs: dict[str, FieldSpec], spec: FieldSpec) -> Vocabulary:
        """The vocabulary whose `maps_to` gives a derived field's value."""
        return self.vocabularies[specs[spec.derived_from].vocabulary]

    @property
    def unknown_marker(self) -> str | None:
        return self.pool.get("unknown_marker")

    @property
    def claims_path(self) -> Path:
        return self.root / self.pool.get("claims", "claims.yaml")

    @property
    def title_similarity(self) -> float:
        return float(self.pool.get("title_similarity", 93))


def registry_problem(document: Document, path: tuple, message: str) -> Problem:
    """A problem in registry.yaml at a path of keys, with that path's line."""
    return Problem(REGISTRY_FILE, document.line(*path), ".".join(str(part) for part in path), message)


def find_root(start: Path) -> Path:
    """The nearest folder at or above `start` that holds a registry."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / REGISTRY_FILE).is_file():
            return folder
    raise PaperpoolError(
        f"no {REGISTRY_FILE} in {start} or any folder above it; run inside a pool or pass --root DIR"
    )


def load_registry(root: Path) -> tuple[Registry | None, list[Problem]]:
    """Read and check the registry; returns (None, problems) when it is unusable. Its
    shape (types, sizes, paths, characters) is checked before anything reads it."""
    path = root / REGISTRY_FILE
    try:
        doc = load_yaml(path, empty_hint=SECTIONS_HINT)
    except YamlProblem as exc:
        return None, [Problem(REGISTRY_FILE, exc.line, exc.field, exc.message)]
    except OSError as exc:
        return None, [Problem(REGISTRY_FILE, 1, "", f"cannot read: {exc.strerror}; check the file exists and is readable")]
    problems = shape_problems(doc)
    if problems:
        return None, problems
    registry, problems = _RegistryReader(root, doc).read()
    if registry is not None:
        problems = _analysis_problems(registry)
    return (None if problems else registry), problems


def shape_problems(doc: Document) -> list[Problem]:
    """What must hold before any of the registry is read: no control characters, the
    schema's types and size limits, and every folder or file it names inside the pool."""
    _dates_as_written(doc)
    problems = [registry_problem(doc, where, refused_character_message(char))
                for where, char in refused_characters(doc, BIDI_CONTROLS)]
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


def refused_characters(doc: Document, also: re.Pattern | None = None) -> Iterator[tuple[tuple, str]]:
    """Each name or text of a parsed YAML file holding a control character (or one that
    `also` matches): (its path, the first such character). Read from the document's
    scalars as written and its field names, so the data is not walked."""
    names = {path: path[-1] for path in doc.lines if path and isinstance(path[-1], str)}
    for found in (names, doc.raw):
        for path, text in found.items():
            match = CONTROL_CHARACTERS.search(text) or (also.search(text) if also else None)
            if match:
                yield path, match.group()


def refused_character_message(char: str) -> str:
    return f"contains the invisible control character U+{ord(char):04X}; remove it"


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
        problems.append(registry_problem(doc, ("pool", "exclusions"), "is the folder of the entries too; give the exclusions "
                                                                      "a folder of their own, e.g. `exclusions: exclusions`"))
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


def _analysis_problems(registry: Registry) -> list[Problem]:
    """The statistics and gaps sections name columns that exist only once the fields are
    read, so they are checked against a Registry (imported here: settings needs this module)."""
    from .settings import check_settings

    return check_settings(registry)


class _RegistryReader:
    """The registry's sections read into their classes, with the checks the schema cannot
    make (names that must exist, ids that must be unique), on data of the schema's shape."""

    def __init__(self, root: Path, doc: Document):
        self.root = root
        self.doc = doc
        self.problems: list[Problem] = []

    def problem(self, path: tuple, message: str) -> None:
        self.problems.append(registry_problem(self.doc, path, message))

    def section(self, name: str, kind=dict):
        return self.doc.data.get(name) or kind()

    def read(self) -> tuple[Registry | None, list[Problem]]:
        survey = self.section("survey")
        pool = self.section("pool")
        vocabularies = self.read_vocabularies()
        fields = {
            kind: self.read_fields(self.section(section), (section,), vocabularies)
            for kind, section in RECORD_KINDS.items()
        }
        for kind, specs in fields.items():
            if "key" not in specs or specs["key"].type != "key":
                self.problem((RECORD_KINDS[kind],), "declare a `key: {type: key, required: true}` field")
            self.check_derivations(specs, (RECORD_KINDS[kind],), vocabularies)
        rules = self.read_rules(fields)
        csv = self.read_csv(fields)
        statistics = self.section("statistics")
        gaps = self.section("gaps")
        display = self.read_display(fields["entries"])
        site = self.section("site")
        bibtex_export = self.section("bibtex_export")
        bibtex_import = self.section("bibtex_import")
        traces = self.section("traces")
        if self.problems:
            return None, self.problems
        registry = Registry(self.root, self.doc, survey, pool, vocabularies, fields, rules, csv, statistics, gaps, display, site, bibtex_export,
                            bibtex_import=bibtex_import, traces=traces)
        return registry, []

    def read_vocabularies(self) -> dict[str, Vocabulary]:
        vocabularies = {}
        for name, body in self.section("vocabularies").items():
            path = ("vocabularies", name)
            values, seen = [], set()
            for index, item in enumerate(body["values"]):
                value_id = item["id"]
                if value_id in seen:
                    self.problem(path + ("values", index, "id"), f"duplicate id '{value_id}' in vocabulary '{name}'; ids must be unique")
                    continue
                seen.add(value_id)
                extra = {k: v for k, v in item.items() if k not in ("id", "label", "description")}
                values.append(Value(value_id, str(item.get("label") or value_id), str(item.get("description") or ""), extra))
            vocabularies[name] = Vocabulary(name, str(body.get("label") or name), str(body.get("description") or ""), values)
        return vocabularies

    def read_fields(self, section: dict, path: tuple, vocabularies: dict) -> dict[str, FieldSpec]:
        specs = {}
        for name, body in section.items():
            spec_path = path + (name,)
            kind = body["type"]
            spec = FieldSpec(name, kind, **{k: v for k, v in body.items() if k not in ("type", "fields")})
            for setting in ("vocabulary", "keys"):
                vocab = getattr(spec, setting)
                if vocab is not None and vocab not in vocabularies:
                    self.problem(spec_path + (setting,), f"no vocabulary named '{vocab}'; declare it under vocabularies")
            if kind in ("choice", "choice_list", "choice_map") and spec.vocabulary is None:
                self.problem(spec_path, f"a {kind} field needs `vocabulary:`")
            if kind == "choice_map" and spec.keys is None:
                self.problem(spec_path, "a choice_map field needs `keys:` naming the vocabulary of its keys")
            if kind == "identifier" and spec.scheme is None:
                self.problem(spec_path, f"an identifier field needs `scheme:`, one of {', '.join(sorted(IDENTIFIER_SCHEMES))}")
            if kind == "mapping":
                spec.fields = self.read_fields(body.get("fields") or {}, spec_path + ("fields",), vocabularies)
            specs[name] = spec
        return specs

    def check_derivations(self, specs: dict, path: tuple, vocabularies: dict) -> None:
        for spec in specs.values():
            for other in (spec.derived_from, spec.not_before_field):
                if other is not None and other not in specs:
                    self.problem(path + (spec.name,), f"refers to field '{other}', which is not declared")
            if spec.derived_from in specs:
                source = specs[spec.derived_from]
                vocab = vocabularies.get(source.vocabulary)
                if vocab and any("maps_to" not in value.extra for value in vocab.values):
                    self.problem(path + (spec.name,), f"derived from '{source.name}', so every value of vocabulary '{vocab.name}' needs `maps_to`")
                elif vocab and spec.vocabulary in vocabularies:
                    self.check_maps_to(vocab, vocabularies[spec.vocabulary])

    def check_maps_to(self, source: Vocabulary, target: Vocabulary) -> None:
        """Each value's maps_to must be a value of the derived field's vocabulary (or null)."""
        for index, value in enumerate(source.values):
            maps_to = value.extra["maps_to"]
            if maps_to is not None and target.get(maps_to) is None:
                self.problem(("vocabularies", source.name, "values", index, "maps_to"),
                             f"'{maps_to}' is not a value of vocabulary '{target.name}'; "
                             + suggest(maps_to, target.ids, f"use one of {', '.join(target.ids)}, or null"))

    def read_rules(self, fields: dict) -> list[Rule]:
        rules = []
        for index, body in enumerate(self.section("rules", list)):
            path = ("rules", index)
            kind = body.get("applies_to", "entries")
            rule = Rule(
                id=body["id"], applies_to=kind,
                when_field=body["when"]["field"], when_in=ValueSet(body["when"]["in"]),
                forbid_field=body["forbid"]["field"], forbid_in=ValueSet(body["forbid"]["in"]),
                problem=body["problem"], fix=body["fix"], line=self.doc.line(*path),
            )
            for part, field_path in (("when", rule.when_field), ("forbid", rule.forbid_field)):
                if resolve_spec(fields[kind], field_path) is None:
                    hint = suggest(field_path, fields[kind], f"use a field declared under {RECORD_KINDS[kind]}")
                    self.problem(path + (part, "field"), f"rule '{rule.id}' names unknown field '{field_path}'; {hint}")
            rules.append(rule)
        return rules

    def read_display(self, specs: dict[str, FieldSpec]) -> dict:
        display = self.section("display")
        group_by = display.get("group_by")
        if group_by is not None and (group_by not in specs or specs[group_by].type != "choice"):
            self.problem(("display", "group_by"), f"'{group_by}' is not a choice field of the entries; group by one, e.g. category")
        for index, name in enumerate(display.get("tags", [])):
            if name not in specs or specs[name].type not in ("choice", "choice_list", "choice_map"):
                self.problem(("display", "tags", index), f"'{name}' is not a choice field of the entries; tags show choice fields")
        return display

    def read_csv(self, fields: dict) -> dict:
        from .convert import CONVERTERS  # the table of named conversions

        layouts = {}
        for kind, body in self.section("csv").items():
            layouts[kind] = {}
            for part in ("source_columns", "extra_columns"):
                columns = []
                for index, item in enumerate(body.get(part) or []):
                    path = ("csv", kind, part, index)
                    column = CsvColumn(item["column"], item["field"], item.get("convert"))
                    if column.field not in fields[kind]:
                        self.problem(path, f"column '{column.column}' maps to unknown field '{column.field}'")
                    if column.convert is not None and column.convert not in CONVERTERS:
                        self.problem(path, f"unknown convert '{column.convert}'; use one of {', '.join(sorted(CONVERTERS))}")
                    columns.append(column)
                layouts[kind][part] = columns
        return layouts


def resolve_spec(specs: dict[str, FieldSpec], dotted: str) -> FieldSpec | None:
    """The spec of a possibly nested field such as `second_reading.credit_granularity`."""
    spec = None
    for part in dotted.split("."):
        spec = specs.get(part)
        if spec is None:
            return None
        specs = spec.fields
    return spec


def lookup(record: dict, dotted: str):
    """The value of a possibly nested field, or None."""
    value = record
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value
