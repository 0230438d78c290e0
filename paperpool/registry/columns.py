"""The columns of a record kind, as statistics, gaps and claims name them.

Every column is named as in the export's CSV. Besides the declared fields there are
columns derived from them:
- a choice_map field F (sub-decision -> trained/designed) gives F, the keys it has
  (the sub-decisions an entry touches), and F.VALUE for each value of its value
  vocabulary (F.trained: the sub-decisions it trains);
- a mapping field's fields appear dotted (second_reading.agreement);
- the registry's `statistics.combined` joins fields into one multi-valued column (the
  primary and further reward families).
This module knows the columns only, not the records, so that checking the registry and
the claims does not need pandas.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from paperpool.files.problems import Problem

from .model import RECORD_KINDS, FieldSpec, Registry, lookup, registry_problem

NONE = "(none)"  # how a missing value is counted
SINGLE = {"key", "text", "bool", "integer", "date", "url", "identifier", "choice"}
MULTI = {"text_list", "url_list", "key_list", "choice_list"}


@dataclass
class Column:
    name: str
    label: str
    multi: bool
    vocabulary: list[str] | None = None  # the possible values in display order; None: open
    kind: str = "text"  # "number", "date" (ISO text) or "bool" ("true"/"false") compare as such
    vocabulary_name: str | None = None  # the registry vocabulary its values and labels come from
    map_field: str | None = None  # a choice_map column reads this field's keys
    map_mode: str | None = None  # ... only the keys whose value is this
    parts: list[str] = field(default_factory=list)  # a combined column joins these columns
    # When a record counts as not judged on the column: the field it reads is missing and
    # declared `missing_means: not_assessed`, or holds a value marked `not_assessed: true`.
    # Only such columns can leave a record unassessed; the others always judge it.
    source: str = ""  # the dotted field the column reads
    missing_unassessed: bool = False
    evidence: str = ""  # the evidence field whose items say a record was assessed even when the field is empty
    unassessed_values: frozenset = frozenset()

    @property
    def can_be_unassessed(self) -> bool:
        return self.missing_unassessed or bool(self.unassessed_values)

    @functools.cached_property
    def vocabulary_set(self) -> frozenset:
        return frozenset(self.vocabulary or ())

    @functools.cached_property
    def judged_values(self) -> int:
        """How many values of the vocabulary judge a record (are not marked not_assessed)."""
        return len(self.vocabulary_set - self.unassessed_values)


def columns_for(registry: Registry, kind: str) -> dict[str, Column]:
    """Every column of a kind's frame, declared fields first, then the combined ones:
    made once per registry and kind (a command asks some fifty times), a copy given."""
    made = registry.__dict__.setdefault("_columns", {})
    if kind not in made:
        made[kind] = _columns_for(registry, kind)
    return dict(made[kind])


def _columns_for(registry: Registry, kind: str) -> dict[str, Column]:
    columns = _columns(registry, registry.fields[kind])
    for name, body in _combined_settings(registry, kind).items():
        parts = [part for part in body.get("fields") or [] if part in columns]
        first = columns[parts[0]] if parts else Column(name, name, True)
        columns[name] = Column(
            name,
            str(body.get("label") or name),
            True,
            first.vocabulary,
            vocabulary_name=first.vocabulary_name,
            parts=parts,
            missing_unassessed=any(columns[part].can_be_unassessed for part in parts),
        )
    return columns


def assessed(data: dict, column: Column, columns: dict[str, Column]) -> bool:
    """Whether a record has been judged on a column (a combined one: on all its parts)."""
    if column.parts:
        return all(assessed(data, columns[part], columns) for part in column.parts)
    if not column.can_be_unassessed:
        return True
    value = lookup(data, column.source)
    if value is None or value in ("", [], {}):
        # an empty map with evidence (an item saying it touches none) was assessed; tags
        # without evidence count as assessed, as the survey's own first tags did, and
        # validate warns about them (CI's --strict fails)
        return not column.missing_unassessed or bool(
            column.evidence and isinstance(data.get(column.evidence), list) and data[column.evidence]
        )
    values = value if isinstance(value, (list, tuple)) else [value]
    return not any(isinstance(item, str) and item in column.unassessed_values for item in values)


# Columns a kind's frame may have, a choice_map's one per value of its vocabulary: a real
# survey's registry makes some hundred. 5,000 choice_maps over 200-value vocabularies (a
# registry of 322 kB) made a million, and every command that reads the pool took 8 s.
MOST_COLUMNS = 20_000


def check_columns(registry: Registry) -> list[Problem]:
    """Each kind's fields make at most MOST_COLUMNS columns."""
    problems = []
    for kind, section in RECORD_KINDS.items():
        made = _column_count(registry, registry.fields[kind])
        if made > MOST_COLUMNS:
            problems.append(
                registry_problem(
                    registry.document,
                    (section,),
                    f"the fields make {made:,} columns (a choice_map one per value of its vocabulary, and one more), over "
                    f"the {MOST_COLUMNS:,} paperpool reads; declare fewer fields, or choice_maps over smaller vocabularies",
                )
            )
    return problems


def _column_count(registry: Registry, specs: dict[str, FieldSpec]) -> int:
    made = 0
    for spec in specs.values():
        if spec.type == "mapping":
            made += _column_count(registry, spec.fields)
        elif spec.type == "choice_map":
            made += 1 + len(registry.vocabularies[spec.vocabulary].values)
        else:
            made += 1
    return made


def check_combined(registry: Registry) -> list[Problem]:
    """Problems in `statistics.combined`: each joins declared choice fields of one kind."""
    problems = []
    combined = registry.statistics.get("combined") or {}
    if not isinstance(combined, dict):
        return [
            registry_problem(registry.document, ("statistics", "combined"), "give a mapping: NAME: {label, fields: [FIELD, ...]}")
        ]
    for name, body in combined.items():
        path = ("statistics", "combined", name)
        if not isinstance(body, dict) or not is_name_list(body.get("fields")) or not body["fields"]:
            problems.append(
                registry_problem(registry.document, path, "give `fields: [FIELD, ...]`, the fields whose values it joins")
            )
            continue
        kind = body.get("applies_to", "entries")
        if not isinstance(kind, str) or kind not in registry.fields:
            problems.append(
                registry_problem(registry.document, path + ("applies_to",), "applies_to must be entries or exclusions")
            )
            continue
        declared = _columns(registry, registry.fields[kind])
        if name in declared:
            problems.append(registry_problem(registry.document, path, f"'{name}' is already a field; choose another name"))
        for part in body["fields"]:
            if part not in declared or declared[part].vocabulary_name is None:
                problems.append(
                    registry_problem(
                        registry.document,
                        path + ("fields",),
                        f"'{part}' is not a choice field of the {kind}; join fields that have a vocabulary",
                    )
                )
        vocabularies = {declared[part].vocabulary_name for part in body["fields"] if part in declared}
        if len(vocabularies) > 1:
            problems.append(
                registry_problem(
                    registry.document,
                    path + ("fields",),
                    f"joins fields of different vocabularies ({', '.join(sorted(map(str, vocabularies)))}); join fields of one vocabulary",
                )
            )
        if len(set(body["fields"])) != len(body["fields"]):
            problems.append(registry_problem(registry.document, path + ("fields",), "names a field twice; name each once"))
    return problems


def is_name_list(value) -> bool:
    """Whether a setting is a list of field names."""
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _combined_settings(registry: Registry, kind: str) -> dict:
    combined = registry.statistics.get("combined")
    if not isinstance(combined, dict):
        return {}
    return {name: body for name, body in combined.items() if isinstance(body, dict) and body.get("applies_to", "entries") == kind}


KINDS = {"integer": "number", "date": "date", "bool": "bool"}
BOOL_VALUES = ["true", "false"]


def _columns(registry: Registry, specs: dict[str, FieldSpec], prefix: str = "", parent: str = "") -> dict[str, Column]:
    columns = {}
    # each field's evidence field (evidence_of), found in one pass rather than one per field
    evidence = {}
    for other, spec in specs.items():
        if spec.type == "evidence" and spec.targets and len(spec.targets) == 1:
            evidence.setdefault(spec.targets[0], other)
    for spec in specs.values():
        name, label = prefix + spec.name, f"{parent}{spec.title}"
        vocabulary = registry.vocabularies[spec.vocabulary].ids if spec.vocabulary else None
        judged = {
            "source": name,
            "missing_unassessed": spec.missing_means == "not_assessed",
            "unassessed_values": _unassessed_values(registry, spec),
            "evidence": evidence.get(spec.name, ""),
        }
        if spec.type == "mapping":
            columns.update(_columns(registry, spec.fields, name + ".", f"{label}: "))
        elif spec.type == "choice_map":
            keys = registry.vocabularies[spec.keys].ids
            columns[name] = Column(name, label, True, keys, vocabulary_name=spec.keys, map_field=name, **judged)
            for mode in vocabulary:
                mode_label = registry.vocabularies[spec.vocabulary].get(mode).label
                columns[f"{name}.{mode}"] = Column(
                    f"{name}.{mode}",
                    f"{label}: {mode_label}",
                    True,
                    keys,
                    vocabulary_name=spec.keys,
                    map_field=name,
                    map_mode=mode,
                    **judged,
                )
        elif spec.type in SINGLE | MULTI:
            kind = KINDS.get(spec.type, "text")
            columns[name] = Column(
                name, label, spec.type in MULTI, BOOL_VALUES if kind == "bool" else vocabulary, kind, spec.vocabulary, **judged
            )
    return columns


def _unassessed_values(registry: Registry, spec: FieldSpec) -> frozenset:
    vocabulary = registry.vocabularies.get(spec.vocabulary or "")
    return frozenset(value.id for value in vocabulary.values if value.extra.get("not_assessed")) if vocabulary else frozenset()
