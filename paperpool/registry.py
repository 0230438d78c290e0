"""The registry: a survey's vocabularies, record formats, rules and CSV layouts.

Everything taxonomy-specific lives in registry.yaml; this module only reads it and
checks that it is coherent, collecting every problem with its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .problems import PaperpoolError, Problem, suggest
from .yamlio import Document, YamlProblem, load_yaml

REGISTRY_FILE = "registry.yaml"
# A record's key: a lower-case slug, also its file name, so never a path.
KEY_RE = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,78}[a-z0-9])?$")

FIELD_TYPES = {
    "key", "text", "text_list", "bool", "integer", "date", "url", "url_list",
    "identifier", "choice", "choice_list", "choice_map", "key_list", "mapping",
}
IDENTIFIER_SCHEMES = {"arxiv", "doi", "openreview", "prefixed"}
SPEC_KEYS = {
    "type", "required", "label", "help", "vocabulary", "keys", "scheme", "max_length",
    "min", "max", "derived_from", "fields", "unique", "not_before_field",
}
RECORD_KINDS = {"entries": "entry_fields", "exclusions": "exclusion_fields"}
SECTIONS_HINT = "write its sections (survey:, pool:, vocabularies:, entry_fields:, ...) as in the shipped registry.yaml"
SECTIONS = ("survey", "pool", "vocabularies", "entry_fields", "exclusion_fields", "rules",
            "statistics", "gaps", "display", "site", "bibtex_export", "bibtex_import", "csv", "traces")


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


@dataclass
class Rule:
    id: str
    applies_to: str
    when_field: str
    when_in: list
    forbid_field: str
    forbid_in: list
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
    """Read and check the registry; returns (None, problems) when it is unusable."""
    path = root / REGISTRY_FILE
    try:
        doc = load_yaml(path, empty_hint=SECTIONS_HINT)
    except YamlProblem as exc:
        return None, [Problem(REGISTRY_FILE, exc.line, exc.field, exc.message)]
    except OSError as exc:
        return None, [Problem(REGISTRY_FILE, 1, "", f"cannot read: {exc.strerror}; check the file exists and is readable")]
    registry, problems = _RegistryReader(root, doc).read()
    if registry is not None:
        problems = _analysis_problems(registry)
    return (None if problems else registry), problems


def _analysis_problems(registry: Registry) -> list[Problem]:
    """The statistics and gaps sections name columns that exist only once the fields are
    read, so they are checked against a Registry (imported here: settings needs this module)."""
    from .settings import check_settings

    return check_settings(registry)


class _RegistryReader:
    def __init__(self, root: Path, doc: Document):
        self.root = root
        self.doc = doc
        self.problems: list[Problem] = []

    def problem(self, path: tuple, message: str) -> None:
        self.problems.append(registry_problem(self.doc, path, message))

    def section(self, name: str, kind=dict, required=True):
        data = self.doc.data if isinstance(self.doc.data, dict) else {}
        value = data.get(name)
        if value is None:
            if required:
                self.problem((name,), f"missing section '{name}'; add it (see the shipped registry.yaml)")
            return kind()
        if not isinstance(value, kind):
            self.problem((name,), f"must be a {'mapping' if kind is dict else 'list'}")
            return kind()
        return value

    def read(self) -> tuple[Registry | None, list[Problem]]:
        if not isinstance(self.doc.data, dict):
            return None, [Problem(REGISTRY_FILE, 1, "", f"the registry must be a mapping of sections; {SECTIONS_HINT}")]
        survey = self.section("survey")
        pool = self.section("pool")
        for kind in RECORD_KINDS:
            if not isinstance(pool.get(kind), str) or not pool.get(kind):
                self.problem(("pool", kind), f"name the folder that holds the {kind}, e.g. `{kind}: {kind}`")
        self.check_pool_settings(pool)
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
        statistics = self.section("statistics", required=False)
        gaps = self.section("gaps", required=False)
        display = self.read_display(fields["entries"])
        site = self.section("site", required=False)
        bibtex_export = self.section("bibtex_export", required=False)
        bibtex_import = self.section("bibtex_import", required=False)
        traces = self.section("traces", required=False)
        self.check_sections()
        if self.problems:
            return None, self.problems
        registry = Registry(self.root, self.doc, survey, pool, vocabularies, fields, rules, csv, statistics, gaps, display, site, bibtex_export,
                            bibtex_import=bibtex_import, traces=traces)
        return registry, []

    def check_sections(self) -> None:
        for name in self.doc.data:
            if name not in SECTIONS:
                self.problem((name,), f"unknown section '{name}'; {suggest(str(name), SECTIONS, 'sections are: ' + ', '.join(SECTIONS))}")

    def check_pool_settings(self, pool: dict) -> None:
        if "claims" in pool and (not isinstance(pool["claims"], str) or not pool["claims"].strip()):
            self.problem(("pool", "claims"), "name the claim ledger's file, e.g. `claims: claims.yaml` (or remove the setting)")
        if "unknown_marker" in pool and not isinstance(pool["unknown_marker"], str):
            self.problem(("pool", "unknown_marker"), "give the word that marks an unknown value, e.g. `unknown_marker: TODO`")
        similarity = pool.get("title_similarity", 93)
        if isinstance(similarity, bool) or not isinstance(similarity, (int, float)) or not 0 < similarity <= 100:
            self.problem(("pool", "title_similarity"), "give a number from 1 to 100, e.g. `title_similarity: 93`")

    def read_vocabularies(self) -> dict[str, Vocabulary]:
        vocabularies = {}
        for name, body in self.section("vocabularies").items():
            path = ("vocabularies", name)
            if not isinstance(body, dict) or not isinstance(body.get("values"), list) or not body["values"]:
                self.problem(path, "a vocabulary needs a non-empty `values:` list of {id, label}")
                continue
            values, seen = [], set()
            for index, item in enumerate(body["values"]):
                item_path = path + ("values", index)
                if not isinstance(item, dict) or "id" not in item:
                    self.problem(item_path, "each value needs an `id`")
                    continue
                value_id = item["id"]
                if not isinstance(value_id, str) or not value_id:
                    self.problem(item_path + ("id",), f"id {value_id!r} must be text; quote it")
                    continue
                if value_id in seen:
                    self.problem(item_path + ("id",), f"duplicate id '{value_id}' in vocabulary '{name}'; ids must be unique")
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
            if not isinstance(body, dict):
                self.problem(spec_path, "a field needs a mapping like {type: text}")
                continue
            unknown = set(body) - SPEC_KEYS
            if unknown:
                self.problem(spec_path, f"unknown setting(s) {', '.join(sorted(unknown))}; allowed: {', '.join(sorted(SPEC_KEYS))}")
            kind = body.get("type")
            if kind not in FIELD_TYPES:
                self.problem(spec_path + ("type",), f"unknown type {kind!r}; use one of {', '.join(sorted(FIELD_TYPES))}")
                continue
            spec = FieldSpec(name, kind, **{k: v for k, v in body.items() if k in SPEC_KEYS and k not in ("type", "fields")})
            for setting in ("vocabulary", "keys"):
                vocab = getattr(spec, setting)
                if vocab is not None and vocab not in vocabularies:
                    self.problem(spec_path + (setting,), f"no vocabulary named '{vocab}'; declare it under vocabularies")
            if kind in ("choice", "choice_list", "choice_map") and spec.vocabulary is None:
                self.problem(spec_path, f"a {kind} field needs `vocabulary:`")
            if kind == "choice_map" and spec.keys is None:
                self.problem(spec_path, "a choice_map field needs `keys:` naming the vocabulary of its keys")
            if kind == "identifier" and spec.scheme not in IDENTIFIER_SCHEMES:
                self.problem(spec_path + ("scheme",), f"identifier scheme must be one of {', '.join(sorted(IDENTIFIER_SCHEMES))}")
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

    def read_rules(self, fields: dict) -> list[Rule]:
        rules = []
        for index, body in enumerate(self.section("rules", list, required=False)):
            path = ("rules", index)
            try:
                kind = body.get("applies_to", "entries")
                rule = Rule(
                    id=str(body["id"]), applies_to=kind,
                    when_field=body["when"]["field"], when_in=list(body["when"]["in"]),
                    forbid_field=body["forbid"]["field"], forbid_in=list(body["forbid"]["in"]),
                    problem=str(body["problem"]), fix=str(body["fix"]), line=self.doc.line(*path),
                )
            except (KeyError, TypeError, AttributeError):
                self.problem(path, "a rule needs id, when {field, in}, forbid {field, in}, problem and fix")
                continue
            if kind not in fields:
                self.problem(path + ("applies_to",), "applies_to must be entries or exclusions")
                continue
            for part, field_path in (("when", rule.when_field), ("forbid", rule.forbid_field)):
                if resolve_spec(fields[kind], field_path) is None:
                    hint = suggest(field_path, fields[kind], f"use a field declared under {RECORD_KINDS[kind]}")
                    self.problem(path + (part, "field"), f"rule '{rule.id}' names unknown field '{field_path}'; {hint}")
            rules.append(rule)
        return rules

    def read_display(self, specs: dict[str, FieldSpec]) -> dict:
        display = self.section("display", required=False)
        group_by = display.get("group_by")
        if group_by is not None and (not isinstance(group_by, str) or group_by not in specs or specs[group_by].type != "choice"):
            self.problem(("display", "group_by"), f"'{group_by}' is not a choice field of the entries; group by one, e.g. category")
        tags = display.get("tags", [])
        if not isinstance(tags, list) or not all(isinstance(name, str) for name in tags):
            self.problem(("display", "tags"), "list the fields shown as tags, e.g. [reward_family, credit_unit]")
            return display
        for index, name in enumerate(tags):
            if name not in specs or specs[name].type not in ("choice", "choice_list", "choice_map"):
                self.problem(("display", "tags", index), f"'{name}' is not a choice field of the entries; tags show choice fields")
        return display

    def read_csv(self, fields: dict) -> dict:
        from .convert import CONVERTERS  # the table of named conversions

        layouts = {}
        for kind, body in self.section("csv", required=False).items():
            if kind not in fields:
                self.problem(("csv", kind), "csv layouts are named entries or exclusions")
                continue
            layouts[kind] = {}
            for part in ("source_columns", "extra_columns"):
                columns = []
                for index, item in enumerate((body or {}).get(part) or []):
                    path = ("csv", kind, part, index)
                    column = CsvColumn(item.get("column"), item.get("field"), item.get("convert"))
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
