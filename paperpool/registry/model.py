"""What a registry holds once read: vocabularies, field specs, rules, CSV layouts, and
the sections the features registered, as plain data classes with the few lookups every
reader of a pool needs."""

from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

from paperpool.files.problems import Problem
from paperpool.files.yamlio import Document

REGISTRY_FILE = "registry.yaml"
# A record's key: a lower-case slug, also its file name, so never a path.
KEY_RE = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,78}[a-z0-9])?\Z")

RECORD_KINDS = {"entries": "entry_fields", "exclusions": "exclusion_fields"}
RECORD_SUFFIX = ".yaml"  # a record is KEY.yaml in its kind's folder
CLAIMS_FILE = "claims.yaml"  # the claim ledger, unless pool.claims names another
TEMPLATES_FOLDER = "templates"  # the pool's own templates, which override paperpool's
TITLE_SIMILARITY = 93  # titles this alike (0-100) are one paper, unless pool.title_similarity says otherwise


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
        try:
            return self._by_id.get(value_id)
        except TypeError:  # a list or mapping where a value belongs: none of them
            return None

    @functools.cached_property
    def _by_id(self) -> dict:
        """Each value by its id, the first of any given twice (which validation refuses);
        looked up in one step (a search of 200 values, for each of 200, for each field,
        made a registry of 2,000 fields take a minute to read)."""
        found: dict = {}
        for value in self.values:
            found.setdefault(value.id, value)
        return found

    def maps_to(self, value_id):
        value = self.get(value_id)
        return value.extra.get("maps_to") if value else None

    def parent(self, value_id):
        """The value one level up the taxonomy that this value is part of (its `parent`)."""
        value = self.get(value_id)
        return value.extra.get("parent") if value else None


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
    parent_field: str | None = None  # the choice field one level up a taxonomy: it must hold each value's `parent`
    unique: bool = False
    identifies: bool = True  # a link or identifier field: two records holding the same value are the same paper
    not_before_field: str | None = None
    missing_means: str = "none"  # or "not_assessed": a record without it has not been judged on it
    of: str | list[str] | None = None  # an evidence field: the field(s) it is evidence of
    fields: dict[str, FieldSpec] = field(default_factory=dict)

    @property
    def title(self) -> str:
        return self.label or self.name.replace("_", " ").capitalize()

    @property
    def targets(self) -> list[str]:
        """The fields an evidence field is evidence of."""
        return [self.of] if isinstance(self.of, str) else list(self.of or [])


def evidence_of(specs: dict[str, FieldSpec], name: str) -> str | None:
    """The evidence field that is the evidence of one field (`of: NAME`), if any."""
    return next((other for other, spec in specs.items() if spec.type == "evidence" and spec.targets == [name]), None)


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


@dataclass(frozen=True)
class Publication:
    """The survey as published: its published claims count the pool as of `date`."""

    date: dt.date
    version: str
    label: str  # how the survey dates itself, e.g. "as of May 4, 2026"
    citation: str = ""
    url: str = ""

    @property
    def named(self) -> str:
        """The publication in a few words: arXiv 2605.02801v1, as of May 4, 2026."""
        return f"{self.version}, {self.label}" if self.label else f"{self.version}, {self.date}"


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
    # the sections the features registered (paperpool.registry.sections) read, by name
    sections: dict[str, dict] = field(default_factory=dict)

    def section(self, name: str) -> dict:
        """A feature's section (site, traces, ...) as written; empty when the registry has none."""
        return self.sections.get(name) or {}

    @property
    def path(self) -> Path:
        return self.root / REGISTRY_FILE

    def folder(self, kind: str) -> Path:
        return self.root / self.pool[kind]

    def record_path(self, kind: str, key: str) -> Path:
        """Where the record of this key lives: its file name is its key."""
        return self.folder(kind) / f"{key}{RECORD_SUFFIX}"

    def derivation_source(self, specs: dict[str, FieldSpec], spec: FieldSpec) -> Vocabulary:
        """The vocabulary whose `maps_to` gives a derived field's value."""
        return self.vocabularies[specs[spec.derived_from].vocabulary]

    @property
    def unknown_marker(self) -> str | None:
        return self.pool.get("unknown_marker")

    @property
    def claims_path(self) -> Path:
        return self.root / self.pool.get("claims", CLAIMS_FILE)

    @property
    def publication(self) -> Publication | None:
        """The survey's publication (survey.publication), once the reader has checked it."""
        body = self.survey.get("publication")
        if not isinstance(body, dict):
            return None
        return Publication(
            dt.date.fromisoformat(body["date"]),
            str(body["version"]),
            str(body.get("label") or ""),
            str(body.get("citation") or ""),
            str(body.get("url") or ""),
        )

    @property
    def title_similarity(self) -> float:
        return float(self.pool.get("title_similarity", TITLE_SIMILARITY))


def registry_problem(document: Document, path: tuple, message: str) -> Problem:
    """A problem in registry.yaml at a path of keys, with that path's line."""
    return Problem(REGISTRY_FILE, document.line(*path), ".".join(str(part) for part in path), message)


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
